"""Where a chain question's time and memory go, stage by stage, in one process.

The path of ``ladders solve MODEL --properties PROPS --constants C``: ladders' own
build of the chain, then for each property its plan (graph searches), its system
(``build_system``), the components (``structure``), and the session
(:func:`ladders.cluster.runs.solve`: the engine's solve, the Markov bounds in a thread
beside it, the residue tier), each stage timed on its own where it can be (the plan,
the system and the components are cached on the problem, so the session reuses them).
Beside each stage: the process's resident memory when it ended (``VmRSS``) and its
high-water mark then (``ru_maxrss``: where it grew, that stage set the peak), and at the
end the bytes each object kept holds (the chain's arrays, the system's, the labels). The session's parts (the engine's
solve, the bounds, the residue tier) are also run alone before it, each with its own
peak (sampled every 2 ms).

Run: ``python scripts/chain_stages.py MODEL PROPS CONSTANTS``; prints a table and one
JSON line.
"""

from __future__ import annotations

import json
import resource
import sys
import threading
import time
from typing import Any

import numpy as np


def rss_mb() -> float:
    """The resident set now, in MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 1e6


def peak_mb() -> float:
    """The process's high-water mark so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


class Sampler(threading.Thread):
    """The largest resident set seen since the last :meth:`take`, sampled every 2 ms
    (the compiled kernels and NumPy release the interpreter lock, so it samples
    during them too): a stage's own peak, where ``ru_maxrss`` only says the process's."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.most = 0.0

    def run(self) -> None:
        while True:
            self.most = max(self.most, rss_mb())
            time.sleep(0.002)

    def take(self) -> float:
        most, self.most = max(self.most, rss_mb()), 0.0
        return most


def held_mb(obj: Any) -> float:
    """The bytes of the NumPy arrays ``obj``'s fields hold (a dataclass or an object
    with a ``__dict__``), in MB."""
    fields = vars(obj) if hasattr(obj, "__dict__") else {
        name: getattr(obj, name) for name in obj.__dataclass_fields__}
    return sum(v.nbytes for v in fields.values() if isinstance(v, np.ndarray)) / 1e6


def main() -> None:
    model, props, constants = sys.argv[1:4]
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    sampler = Sampler()
    sampler.start()

    def stage(name: str, t0: float) -> None:
        rows.append({"stage": name, "seconds": round(time.perf_counter() - t0, 3),
                     "rss_mb": round(rss_mb()), "stage_peak_mb": round(sampler.take()),
                     "peak_mb": round(peak_mb())})

    t0 = time.perf_counter()
    from ladders.cluster.engines.components import Topological
    from ladders.cluster.runs import solve
    from ladders.solver.checks.residue_check import CHAIN_UPDATES, check_residues
    from ladders.solver.chain_problem import ChainProblem
    from ladders.solver.chains.formats import load_chain
    stage("imports", t0)
    t0 = time.perf_counter()
    loaded = load_chain(model, constants=constants or None, properties=props)
    chain = loaded.chain
    stage("build", t0)
    kept: dict[str, float] = {"chain arrays": held_mb(chain)}
    t0 = time.perf_counter()
    from ladders.solver.chains.components import reach
    reach(np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.bool_),
          np.zeros(1, dtype=np.bool_))
    stage("numba: import, first cached kernel", t0)
    results = []
    for question in loaded.questions:
        problem = ChainProblem(chain, question, loaded.source)
        t0 = time.perf_counter()
        problem.plan
        stage("plan", t0)
        t0 = time.perf_counter()
        system = problem.system
        stage("system", t0)
        t0 = time.perf_counter()
        problem.structure
        stage("components", t0)
        t0 = time.perf_counter()
        work = Topological(problem, None)
        work.compute()
        stage("  alone: the engine's solve", t0)
        t0 = time.perf_counter()
        problem.bounds_within(16, 5.0)
        stage("  alone: the Markov bounds", t0)
        t0 = time.perf_counter()
        check_residues(system, work.result.values[0], budget=CHAIN_UPDATES)
        stage("  alone: the residue tier", t0)
        del work
        t0 = time.perf_counter()
        solution = solve(problem)
        stage("session (solve, bounds, residues)", t0)
        kept["system arrays"] = held_mb(system)
        kept["structure arrays"] = held_mb(problem.structure)
        kept["plan arrays"] = held_mb(problem.plan)
        labels = system.labels
        kept["labels"] = (getattr(labels, "states", np.empty(0)).nbytes / 1e6
                          if not isinstance(labels, tuple)
                          else (sys.getsizeof(labels) + 64 * len(labels)) / 1e6)
        results.append({"question": question.describe(), "passed": solution.passed,
                        "engine": solution.engine,
                        "answers": {k: str(v) for k, v in solution.answers.items()},
                        "stages": solution.details.get("stages", {}),
                        "unknowns": system.size, "nonzeros": system.nnz})
    for row in rows:
        print(f"{row['stage']:38} {row['seconds']:8.3f} s  rss {row['rss_mb']:7,} MB  "
              f"stage peak {row['stage_peak_mb']:7,} MB  process peak {row['peak_mb']:7,} MB")
    for name, mb in kept.items():
        print(f"  held: {name:30} {mb:9,.0f} MB")
    for r in results:
        print(f"  {r['question']}: {r['unknowns']:,} unknowns, {r['nonzeros']:,} nonzeros, "
              f"passed {r['passed']}, engine {r['engine']}, stages {r['stages']}")
    print(json.dumps({"states": chain.size, "transitions": chain.nnz, "rows": rows,
                      "held_mb": kept, "results": results,
                      "seconds": time.perf_counter() - t_start, "peak_mb": peak_mb()}))


if __name__ == "__main__":
    main()
