"""Benchmark: the series kernel under load, a prime with every core busy against one alone.

Issue 39: at five players a prime cost 1.55x its time alone with 16 processes busy on a
16-core machine (103 ms alone, a median of about 159 ms at 16), where the goal is 1.2x;
the kernel's working set (transforms of up to 2^18 points) is what the cores share.
This measures N processes on N cores (``--processes``, default: this machine's cores):
each process loads the plan and its kernel for k players on hasbro, then, on a signal,
times ``--primes`` primes of the run's kind (CPU seconds of ``plan.residues``); first
the processes one at a time (each alone on the machine), then all at once, for
``--rounds`` rounds; process i is pinned to core i (a machine's cores differ in speed by
up to 1.5x: one seen here had fast and slow ones). Reported per k: the median of each
process's CPU time a prime alone and busy, their ratio, and the median over cores of a
core's busy time against its alone time. Every process computes the same primes, so their residues
must be equal (``==``). ``--baseline`` measures a second tree the same way after this
one (commits, or folders holding a copy of the package where there is no git: the
many-core machine of ``scripts/device_load.sh``), with the same residues.

Run: ``python scripts/bench_load.py [--players 4,5] [--processes 2] [--primes 8]
[--rounds 3] [--baseline COMMIT|DIR]``. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fresh import baseline_tree, fresh_environ, remove_baseline

#: One process: loads the plan and its kernel, then times the same primes whenever a
#: line arrives on stdin, answering with one JSON line.
CONTENDER = r'''
import json, os, sys, time
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import series
players, count, core = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
os.sched_setaffinity(0, {core})         # alone and busy on the same core
plan = series.plan_series(build_chain(preset_board("hasbro")), players)
primes = series.prime_sequence(11, count + 1, plan.two_adicity, plan.multiple)
plan.residues(primes[:1])                              # compile or load the kernel
print(json.dumps({"ready": True}), flush=True)
for _line in sys.stdin:
    t0 = time.process_time()
    res, valid = plan.residues(primes[1:])
    print(json.dumps({"ms": (time.process_time() - t0) / count * 1000,
                      "residues": [[int(v) for v in row[:players]] for row in res]}), flush=True)
'''


def contender_env(tree: str, tmp: Path) -> dict[str, str]:
    """The environment of a baseline contender: ``tree`` is a folder holding a copy of
    the package (a machine without git: ``git archive``) or a commit (checked out in
    ``tmp`` with :func:`fresh.baseline_tree`), imported instead of this tree with the
    rest of ``PYTHONPATH`` kept (where a machine's gmpy2 and flint may be)."""
    if Path(tree).is_dir():                 # numba caches beside that copy's sources
        shim = tmp / "shim"
        shim.mkdir()
        (shim / "ladders").symlink_to(Path(tree).resolve())
        env = {"PYTHONPATH": str(shim)}
    else:
        env = baseline_tree(tmp, tree)
    rest = os.environ.get("PYTHONPATH")
    if rest:
        env["PYTHONPATH"] += os.pathsep + rest
    return fresh_environ(env)


def measure(k: int, env: dict[str, str], args: argparse.Namespace) -> dict:
    """One contender at k players: ``--processes`` processes, the first started alone
    (it compiles the kernel, or loads it from numba's cache, for the others), then the
    rounds: each process alone in turn, then all at once."""
    cores = sorted(os.sched_getaffinity(0))

    def start(i: int) -> subprocess.Popen:
        cmd = [sys.executable, "-c", CONTENDER, str(k), str(args.primes),
               str(cores[i % len(cores)])]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=env)

    procs = [start(0)]
    alone: list[float] = []
    busy: list[float] = []
    residues = None
    try:
        assert json.loads(procs[0].stdout.readline())["ready"]
        procs += [start(i) for i in range(1, args.processes)]
        for proc in procs[1:]:
            assert json.loads(proc.stdout.readline())["ready"]

        def turn(group: list[subprocess.Popen]) -> list[float]:
            nonlocal residues
            for proc in group:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            out = []
            for proc in group:
                answer = json.loads(proc.stdout.readline())
                assert residues is None or answer["residues"] == residues, "residues differ"
                residues = answer["residues"]
                out.append(answer["ms"])
            return out

        for _ in range(args.rounds):
            for proc in procs:                      # one at a time: alone
                alone += turn([proc])
            busy += turn(procs)                     # all at once
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait()
    a, b = statistics.median(alone), statistics.median(busy)
    n = len(procs)       # each process's busy turns against its alone ones, on its core
    own = [statistics.median(busy[i::n]) / statistics.median(alone[i::n]) for i in range(n)]
    return {"players": k, "processes": args.processes, "ms_alone": a, "ms_busy": b,
            "ratio": b / a, "ratio_per_core": statistics.median(own), "alone": alone,
            "busy": busy, "residues": residues}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="4,5", help="comma-separated k")
    parser.add_argument("--processes", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--primes", type=int, default=8, help="primes a process times a turn")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", action="append", default=[],
                        help="also measure this commit, or this folder holding a copy of the "
                             "package (on a machine without git), after this tree; may be "
                             "given more than once")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        contenders = {"this": fresh_environ()}
        folders = {}
        for tree in args.baseline:
            folders[tree] = tmp / f"tree{len(folders)}"
            folders[tree].mkdir()
            contenders[tree] = contender_env(tree, folders[tree])
        try:
            for k in (int(p) for p in args.players.split(",")):
                residues = None
                for name, env in contenders.items():
                    row = {"tree": name, **measure(k, env, args)}
                    assert residues is None or row["residues"] == residues, "residues differ"
                    residues = row.pop("residues")
                    rows.append(row)
                    print(f"{k} players, {args.processes} processes, {name}: a prime "
                          f"{row['ms_alone']:.2f} ms alone, {row['ms_busy']:.2f} ms with all "
                          f"{args.processes} busy (medians of {len(row['alone'])} and "
                          f"{len(row['busy'])}): {row['ratio']:.2f}x; a core's busy against its "
                          f"alone, median over cores: {row['ratio_per_core']:.2f}x", flush=True)
        finally:
            for tree, folder in folders.items():
                if not Path(tree).is_dir():
                    remove_baseline(folder)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
