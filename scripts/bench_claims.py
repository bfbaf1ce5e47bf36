"""Benchmark: every time the README and docs/guide.md promise, measured again.

Each command runs as a user runs it (``python -m ladders.cluster.cli ...``, a fresh
process, compiled kernels cached: one warm-up run of ``ladders solve hasbro -k 3``
first), one after the other, so run it on a quiet machine. Prints a table (where the
claim is, what it says, the command, wall and CPU seconds of it and of the Dask workers
it waited for, peak memory) and one JSON line, for docs/benchmarks.md.

Run: ``python scripts/bench_claims.py [--only NAME,...] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

from fresh import run

#: (name, where the claim is, what it says, the command's arguments; {tmp} a scratch folder)
CLAIMS = [
    ("headline", "README set-up", "in seconds", ["solve", "hasbro", "--exact"]),
    ("solve-2", "README Use; guide engines", "under a second; 0.3 s end to end",
     ["solve", "hasbro"]),
    ("solve-3", "README Use", "~35 s", ["solve", "hasbro", "--players", "3", "--output",
                                        "{tmp}/h3.json.gz"]),
    ("table", "guide two players", "about 2 s", ["solve", "hasbro", "--table", "{tmp}/p.jsonl.gz"]),
    ("modular", "guide engines", "2-5 s end to end", ["solve", "hasbro", "--engine", "modular"]),
    ("crt", "guide engines", "107 s on 2 local workers",
     ["solve", "hasbro", "--engine", "crt", "--workers", "2", "--checkpoint", "{tmp}/crt"]),
    ("elimination", "guide engines", "about 5 min on 2 local workers",
     ["solve", "hasbro", "--engine", "elimination", "--workers", "2", "--checkpoint",
      "{tmp}/elim"]),
    ("bounds-500", "guide bounds", "about 0.06 s (the sums)", ["bounds", "hasbro", "--moves", "500"]),
    ("bounds-3-1000", "issue 26", "<= 3 s (goal)",
     ["bounds", "hasbro", "--players", "3", "--digits", "1000"]),
    ("bounds-limit", "guide limits", "about 3 min", ["bounds", "hasbro", "--moves", "64254"]),
    ("coins-40", "guide limits; coins --help", "about 6 s",
     ["coins", "--a", "20", "--b", "18", "--pot", "2"]),
    ("coins-10", "guide", "2.4 s", ["coins", "--a", "4", "--b", "4", "--pot", "2"]),
    ("stats-20000", "guide", "0.9 s and 43 MB", ["stats", "hasbro", "--throws", "20000"]),
    ("stats-100000", "guide limits", "4 s", ["stats", "hasbro", "--throws", "100000"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated names of claims to measure")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each (the median is shown)")
    args = parser.parse_args()
    names = [c[0] for c in CLAIMS]
    only = [x for x in args.only.split(",") if x]
    unknown = sorted(set(only) - set(names))
    if unknown:
        raise SystemExit(f"unknown claims {', '.join(unknown)}; the claims are {', '.join(names)}")
    cli = [sys.executable, "-m", "ladders.cluster.cli"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        run([*cli, "solve", "hasbro", "--players", "3"])                # warm: kernels cached
        for name, where, says, argv in CLAIMS:
            if only and name not in only:
                continue
            runs = []
            for r in range(args.rounds):
                scratch = f"{tmp}/{name}-{r}"
                os.makedirs(scratch)
                runs.append(run([*cli, *(a.format(tmp=scratch) for a in argv)]))
            rows.append({"name": name, "where": where, "claim": says,
                         "command": "ladders " + " ".join(argv).replace("{tmp}/", ""),
                         "wall": round(statistics.median(x["wall"] for x in runs), 2),
                         "cpu": round(statistics.median(x["cpu"] for x in runs), 2),
                         "peak_mb": round(max(x["peak_mb"] for x in runs))})
            r = rows[-1]
            print(f"{name:14s} {r['wall']:9.2f} s wall {r['cpu']:9.2f} s cpu {r['peak_mb']:6d} MB"
                  f"   claim: {says} ({where})", flush=True)
    print()
    print("| claim | where | command | measured (wall) | CPU | peak |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['claim']} | {r['where']} | `{r['command']}` | {r['wall']:.2f} s | "
              f"{r['cpu']:.2f} s | {r['peak_mb']} MB |")
    print(json.dumps({"machine": platform.processor() or platform.machine(),
                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows}))


if __name__ == "__main__":
    main()
