"""Benchmark: the topological solve in exact rationals against residues modulo primes.

Issue 52 asked which arithmetic the component solve should use: exact rationals
(gmpy2 ``mpq``, one pass in topological order, a component of several unknowns by
Gauss-Jordan over Q) where the values stay small, or residues modulo word primes
(compiled), Chinese remaindering and reconstruction of the wanted unknown only
(:mod:`ladders.solver.engines.components`). Both solve the same system in the same
component order (Tarjan's), here in one process, each timed on its own (the best of
``--repeat``), and their answers must be equal (``==``). The rational pass is written
here, for the measurement only: every unknown's value is kept, since later ones need it.

Run: ``python scripts/bench_topological.py [--only "nand 20-1,crowds 4-10"]``. Prints a
table and one JSON line: unknowns, components, the largest, the answer's digits, the
seconds of each arithmetic and their ratio.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench_chains import QVBS, instances

from ladders.solver.chains.formats import load_chain
from ladders.solver.chain_problem import ChainProblem
from ladders.solver.engines.components import Structure, solve_topological
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem


def rational_pass(system: LinearSystem, found: Structure) -> list[mpq]:
    """``x[target]`` for every right-hand side, solving component after component over
    Q: a one-unknown component by its row, a larger one by Gauss-Jordan."""
    indptr, indices, data = system.indptr.tolist(), system.indices.tolist(), system.data.tolist()
    rhs = system.rhs.tolist()
    m = system.columns
    x: list[list[mpq] | None] = [None] * system.size
    order, start = found.components.order.tolist(), found.components.start.tolist()
    for c in range(len(start) - 1):
        rows = order[start[c]:start[c + 1]]
        local = {r: k for k, r in enumerate(rows)}
        block = [[mpq(0)] * (len(rows) + m) for _ in rows]
        for k, r in enumerate(rows):
            right = [mpq(v) for v in rhs[r]]
            for e in range(indptr[r], indptr[r + 1]):
                j, a = indices[e], data[e]
                if j in local:
                    block[k][local[j]] += a
                else:
                    xj = x[j]
                    for col in range(m):
                        right[col] -= a * xj[col]  # type: ignore[index]
            block[k][len(rows):] = right
        size = len(rows)
        for p in range(size):
            pivot = next(r for r in range(p, size) if block[r][p] != 0)
            block[p], block[pivot] = block[pivot], block[p]
            inv = 1 / block[p][p]
            block[p] = [v * inv for v in block[p]]
            for r in range(size):
                if r != p and block[r][p] != 0:
                    f = block[r][p]
                    block[r] = [v - f * w for v, w in zip(block[r], block[p])]
        for k, r in enumerate(rows):
            x[r] = block[k][size:]
    return list(x[system.target])  # type: ignore[arg-type]


def best_of(repeat: int, call) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="nand 20-1,nand 40-1,crowds 4-10,crowds 5-10,"
                        "brp 64-5,egl 5-2,leader_sync 5-4", help="instances, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    rows = []
    print(f"{'instance':18} {'property':12} {'unknowns':>9} {'components':>10} {'largest':>7} "
          f"{'digits':>6} {'mpq s':>8} {'residues s':>10} {'mpq/res':>8}")
    for inst in instances(Path(QVBS), None, float("inf")):
        if inst["name"] not in wanted:
            continue
        loaded = load_chain(inst["model"], constants=inst["constants"] or None,
                            properties=inst["props"])
        for question in loaded.questions:
            problem = ChainProblem(loaded.chain, question)
            if not problem.solvable or not problem.topological:
                continue
            system, found = problem.system, problem.structure
            res_s, res = best_of(args.repeat, lambda: solve_topological(
                system, found, [system.target], seed=1).values[0])
            mpq_s, exact = best_of(args.repeat, lambda: rational_pass(system, found))
            assert exact == res, (inst["name"], question.text)
            digits = max(len(str(v.denominator)) for v in exact)
            name = question.answer_name[:12]
            row = {"instance": inst["name"], "property": name, "unknowns": system.size,
                   "components": found.components.count, "largest": found.largest,
                   "digits": digits, "mpq": mpq_s, "residues": res_s}
            rows.append(row)
            print(f"{inst['name']:18} {name:12} {system.size:9,} {found.components.count:10,} "
                  f"{found.largest:7,} {digits:6,} {mpq_s:8.3f} {res_s:10.3f} "
                  f"{mpq_s / res_s:8.1f}", flush=True)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
