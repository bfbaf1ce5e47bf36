"""Benchmark: the series engine's kernel, one prime at a time, for 3 to 6 players on the
full hasbro board: this tree against a baseline commit, each in a fresh process.

For each number of players k: the CPU time of one prime (one core, primes of the form
the run uses: ``ntt_primes`` at the plan's two-adicity), the residues of every seat at
those primes (which must be equal, ``==``, between the two kernels), and what
``ladders plan`` predicts for a prime of this tree (``series_figures``: measured on
3-player primes and scaled by the cost model), with the ratio of the prediction to the
measurement. Issue 26's targets: 4 players <= 8 ms, 5 players <= 0.25 s, 6 players
<= 0.5 s a prime; the plan within 1.5x of the measurement for k = 3, 4, 5.

Run: ``python scripts/bench_kernel.py [--baseline COMMIT] [--players 3,4,5,6]
[--scale 1.0]`` (``--scale`` multiplies the number of primes timed). Prints a table and
one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys

from fresh import baseline, run


#: primes timed per contender, by players (about 2-10 s of kernel each, at baseline speed)
COUNTS = {3: 60, 4: 30, 5: 4, 6: 3}

PER_PRIME = r'''
import json, sys, time
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import series
players, count, with_plan = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
chain = build_chain(preset_board("hasbro"))
plan = series.plan_series(chain, players)
primes = series.prime_sequence(7, count + 1, plan.two_adicity)
plan.residues(primes[:1])                              # compile or load the kernel
t0 = time.process_time()
res, valid = plan.residues(primes[1:])
ms = (time.process_time() - t0) / count * 1000
out = {"ms_per_prime": ms, "valid": int(valid.sum()), "split": plan.split,
       "degrees": [plan.degree_a, plan.degree_b], "two_adicity": plan.two_adicity,
       "residues": [[int(v) for v in row] for row in res]}
if with_plan:
    from ladders.solver.estimate import series_figures
    out["plan_ms_per_prime"] = series_figures(chain, players)["ms_per_prime"]
print(json.dumps(out))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="9a86339",
                        help="commit whose kernel is timed alongside this one (default: the "
                             "last one before the blocked remainder)")
    parser.add_argument("--players", default="3,4,5,6", help="comma-separated k to time")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the primes timed")
    args = parser.parse_args()
    ks = [int(k) for k in args.players.split(",")]
    figures: dict[str, dict] = {}
    with baseline(args.baseline) as (tmp, env):
        for k in ks:
            count = max(2, round(COUNTS.get(k, 2) * args.scale))
            for who, extra in (("this", None), ("baseline", env)):
                res = run([sys.executable, "-c", PER_PRIME, str(k), str(count),
                           "1" if who == "this" else "0"], env=extra, cwd=str(tmp))
                figures[f"{k}_{who}"] = {**res, **json.loads(res.pop("stdout")), "primes": count}
            a, b = figures[f"{k}_this"], figures[f"{k}_baseline"]
            assert a["residues"] == b["residues"], f"{k} players: the kernels disagree"
            a["same_residues"] = True
    ratios: dict[str, float] = {}
    print(f"{'players':>7} {'primes':>6} {'this ms':>10} {'baseline ms':>12} {'speed-up':>9} "
          f"{'plan ms':>9} {'plan/this':>9}")
    for k in ks:
        a, b = figures[f"{k}_this"], figures[f"{k}_baseline"]
        ratios[f"baseline_over_this_{k}"] = b["ms_per_prime"] / a["ms_per_prime"]
        ratios[f"plan_over_this_{k}"] = a["plan_ms_per_prime"] / a["ms_per_prime"]
        print(f"{k:7d} {a['primes']:6d} {a['ms_per_prime']:10.2f} {b['ms_per_prime']:12.2f} "
              f"{ratios[f'baseline_over_this_{k}']:9.2f} {a['plan_ms_per_prime']:9.2f} "
              f"{ratios[f'plan_over_this_{k}']:9.2f}")
    for f in figures.values():
        f["residues"] = f["residues"][:2]
    print(json.dumps({"figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
