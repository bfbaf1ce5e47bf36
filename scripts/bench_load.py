"""Benchmark: the series kernel under load, a prime with every core busy against one alone.

Issue 39: at five players a prime cost 1.55x its time alone with 16 processes busy on a
16-core machine (103 ms alone, a median of about 159 ms at 16), where the goal is 1.2x;
the kernel's working set (transforms of up to 2^18 points) is what the cores share.
This measures N processes on N cores (``--processes``, default: this machine's cores):
each process loads the plan and its kernel for k players on hasbro, then, on a signal,
times ``--primes`` primes of the run's kind (CPU seconds of ``plan.residues``); first
the processes one at a time (each alone on the machine), then all at once, for
``--rounds`` rounds. Reported per k: the median of each process's CPU time a prime alone
and busy, and their ratio. Every process computes the same primes, so their residues
must be equal (``==``).

Run: ``python scripts/bench_load.py [--players 4,5] [--processes 2] [--primes 8]
[--rounds 3]``. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from fresh import fresh_environ

#: One process: loads the plan and its kernel, then times the same primes whenever a
#: line arrives on stdin, answering with one JSON line.
CONTENDER = r'''
import json, sys, time
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import series
players, count = int(sys.argv[1]), int(sys.argv[2])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="4,5", help="comma-separated k")
    parser.add_argument("--processes", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--primes", type=int, default=8, help="primes a process times a turn")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for k in (int(p) for p in args.players.split(",")):
        procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(k), str(args.primes)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=fresh_environ()) for _ in range(args.processes)]
        alone: list[float] = []
        busy: list[float] = []
        residues = None
        try:
            for proc in procs:
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
        rows.append({"players": k, "processes": args.processes, "ms_alone": a, "ms_busy": b,
                     "ratio": b / a, "alone": alone, "busy": busy})
        print(f"{k} players, {args.processes} processes: a prime {a:.2f} ms alone, {b:.2f} ms "
              f"with all {args.processes} busy (medians of {len(alone)} and {len(busy)}): "
              f"{b / a:.2f}x")
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
