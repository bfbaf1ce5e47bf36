"""Benchmark: the plan's wall time against runs, on this machine and on issue 39's 16 cores.

``ladders plan`` and a solve's opening line give the series engine's wall time on W
workers as ``primes x (CPU of a prime alone) x contention(W) / W + tail``
(:func:`~ladders.solver.estimate.series_forecast`). Issue 39 asks that:

- on the 16-core figures it reports (Intel Xeon, 1 thread a core, Python 3.12), the
  planned speed-up from 1 to 16 workers be within 1.2x of the measured one: 9.5x for 4
  players (520,192 primes x 6.04 ms alone, against 331 s on 16 workers), 13.4x for 5
  (103 ms a prime alone, against 123 ms a prime a worker on 16);
- the runs on this 2-core machine stay within 1.25x of the plan.

The first part is the model against those recorded measurements (that machine is not
here). The second runs ``ladders solve hasbro -k K --workers 2 --json`` for each K of
``--players`` in a fresh process, after a warm-up (the kernels compiled), and compares
its wall time with the plan's (``ladders plan hasbro -k K --workers 2 --json``);
``--measured K=SECONDS`` adds a run measured before (4 players take about 22 minutes).

Run: ``python scripts/bench_plan.py [--players 3] [--measured 4=1290]``. Prints a table
and one JSON line.
"""

from __future__ import annotations

import argparse
import json

from fresh import ladders

#: Issue 39's measurements on a 16-core machine: players -> (primes of the run, seconds
#: a prime on one core alone, wall seconds on 16 workers or None, seconds a prime on
#: each of 16 busy workers or None).
SIXTEEN_CORES = {4: (520_192, 6.04e-3, 331.0, None), 5: (10_200_000, 103e-3, None, 123e-3)}


def planned(players: int, workers: int) -> dict:
    _, data = ladders("plan", "hasbro", "-k", str(players), "--workers", str(workers))
    return data["series"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="3", help="comma-separated player counts to run here")
    parser.add_argument("--measured", action="append", default=[],
                        help="K=SECONDS: a 2-worker run of K players measured before")
    args = parser.parse_args()
    rows = []
    print("16 cores (issue 39's measurements): planned against measured speed-up, 1 -> 16 workers")
    for k, (primes, alone, wall16, busy) in SIXTEEN_CORES.items():
        one, sixteen = planned(k, 1), planned(k, 16)
        plan_speedup = one["seconds"] / sixteen["seconds"]
        if wall16 is not None:
            measured = primes * alone / wall16
            how = f"{primes:,} x {alone * 1e3:.2f} ms alone / {wall16:.0f} s"
        else:
            measured = 16 * alone / busy
            how = f"16 x {alone * 1e3:.0f} ms alone / {busy * 1e3:.0f} ms a busy worker"
            # the rate alone: compare the plan's rate too (no tail in this measurement)
            plan_speedup = 16 / sixteen["contention"]
        ratio = max(plan_speedup, measured) / min(plan_speedup, measured)
        rows.append({"where": "16 cores", "players": k, "planned_speedup": plan_speedup,
                     "measured_speedup": measured, "ratio": ratio, "ok": ratio <= 1.2})
        print(f"  {k} players: planned {plan_speedup:.1f}x, measured {measured:.1f}x ({how}): "
              f"{ratio:.2f} {'<=' if ratio <= 1.2 else '>'} 1.2")
    print("this machine, 2 workers: planned against measured wall time")
    measured_here = {int(k): float(v) for k, v in (m.split("=") for m in args.measured)}
    for k in [int(p) for p in args.players.split(",") if p]:
        ladders("solve", "hasbro", "-k", str(k), "--workers", "2")  # warm-up: the kernels
        res, data = ladders("solve", "hasbro", "-k", str(k), "--workers", "2")
        assert data["verified"]["passed"]
        measured_here[k] = res["wall"]
    for k, wall in sorted(measured_here.items()):
        plan = planned(k, 2)["seconds"]
        ratio = max(plan, wall) / min(plan, wall)
        rows.append({"where": "2 cores", "players": k, "planned_seconds": plan,
                     "measured_seconds": wall, "ratio": ratio, "ok": ratio <= 1.25})
        print(f"  {k} players: planned {plan:,.1f} s, measured {wall:,.1f} s: {ratio:.2f} "
              f"{'<=' if ratio <= 1.25 else '>'} 1.25")
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
