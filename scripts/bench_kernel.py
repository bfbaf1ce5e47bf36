"""Benchmark: the series engine's kernel, one prime at a time, for 3 to 6 players on the
full hasbro board: this tree against a baseline commit, each in its own process,
measured in alternation.

For each number of players k: the CPU time of one prime (one core, primes of the form
the run uses: ``ntt_primes`` at the plan's two-adicity, 2 mod 3 for three players), the
residues of every seat at those primes (which must be equal, ``==``, between the two
kernels where both ran the same primes), and what
``ladders plan`` predicts for a prime of this tree (``series_figures``: the calibrated
cost model, ``SERIES_UNIT_SECONDS``), with the ratio of the prediction to the
measurement. Issue 26's targets: 4 players <= 8 ms, 5 players <= 0.25 s, 6 players
<= 0.5 s a prime; the plan within 1.5x of the measurement for k = 3, 4, 5.

This machine's speed drifts by 25-50 % within minutes (the same code measured 9.4 and
14 ms a prime at 4 players within the hour), so one run of each contender after the
other compares two moments, not two kernels. Both contenders are started once, compile
or load their kernel, then take turns: ``--rounds`` rounds of the same primes, this
tree then the baseline, and the figures are the minimum over the rounds of each and
the median of the rounds' ratios.

Run: ``python scripts/bench_kernel.py [--baseline COMMIT] [--players 3,4,5,6]
[--scale 1.0] [--rounds 7]`` (``--scale`` multiplies the number of primes timed). Prints
a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from fresh import baseline, fresh_environ


#: primes timed per contender and round, by players (about 0.1-0.6 s of kernel each)
COUNTS = {3: 30, 4: 15, 5: 2, 6: 1}

#: A contender: loads the plan and its kernel, then times the same primes whenever a
#: line arrives on stdin, and answers with one JSON line (the first answer also holds
#: the residues and, for this tree, the plan's figure).
CONTENDER = r'''
import json, sys, time
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import series
players, count, with_plan = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
chain = build_chain(preset_board("hasbro"))
plan = series.plan_series(chain, players)
# the run's own primes: 2 mod 3 where the plan has the denominator multiple
cube = (True,) if getattr(plan, "multiple", False) else ()
primes = series.prime_sequence(7, count + 1, plan.two_adicity, *cube)
plan.residues(primes[:1])                              # compile or load the kernel
first = True
for _line in sys.stdin:
    t0 = time.process_time()
    res, valid = plan.residues(primes[1:])
    out = {"ms_per_prime": (time.process_time() - t0) / count * 1000}
    if first:
        out.update(valid=int(valid.sum()), split=plan.split, two_adicity=plan.two_adicity,
                   degrees=[plan.degree_a, plan.degree_b], primes_timed=primes[1:],
                   residues=[[int(v) for v in row[:players]] for row in res])
        if with_plan:
            from ladders.solver.estimate import series_figures
            out["plan_ms_per_prime"] = series_figures(chain, players)["ms_per_prime"]
        first = False
    print(json.dumps(out), flush=True)
'''


def alternate(k: int, count: int, rounds: int, env: dict[str, str], cwd: str) -> dict[str, dict]:
    """Both contenders for k players, ``rounds`` turns each, this tree first."""
    procs = {who: subprocess.Popen([sys.executable, "-c", CONTENDER, str(k), str(count),
                                    "1" if who == "this" else "0"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   env=fresh_environ(None if who == "this" else env), cwd=cwd)
             for who in ("this", "baseline")}
    figures: dict[str, dict] = {who: {"rounds_ms": []} for who in procs}
    try:
        for _ in range(rounds):
            for who, proc in procs.items():
                proc.stdin.write("go\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                if not line:
                    raise SystemExit(f"the {who} contender for {k} players ended early")
                answer = json.loads(line)
                figures[who]["rounds_ms"].append(answer.pop("ms_per_prime"))
                figures[who].update(answer)
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait()
    for f in figures.values():
        f["ms_per_prime"] = min(f["rounds_ms"])
        f["primes"] = count
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="355b2f5",
                        help="commit whose kernel is timed alongside this one (default: the "
                             "one issue 26's audit measured)")
    parser.add_argument("--players", default="3,4,5,6", help="comma-separated k to time")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies the primes timed")
    parser.add_argument("--rounds", type=int, default=15, help="turns of each contender")
    args = parser.parse_args()
    ks = [int(k) for k in args.players.split(",")]
    figures: dict[str, dict] = {}
    ratios: dict[str, float] = {}
    with baseline(args.baseline) as (tmp, env):
        for k in ks:
            count = max(2, round(COUNTS.get(k, 2) * args.scale))
            pair = alternate(k, count, args.rounds, env, str(tmp))
            a, b = pair["this"], pair["baseline"]
            # the seats' residues must agree where both ran the same primes (a baseline
            # without the multiple of three players runs other primes for k = 3)
            if a.pop("primes_timed") == b.pop("primes_timed"):
                assert a["residues"] == b["residues"], f"{k} players: the kernels disagree"
                a["same_residues"] = True
            figures[f"{k}_this"], figures[f"{k}_baseline"] = a, b
            ratios[f"baseline_over_this_{k}"] = b["ms_per_prime"] / a["ms_per_prime"]
            ratios[f"median_round_ratio_{k}"] = statistics.median(
                y / x for x, y in zip(a["rounds_ms"], b["rounds_ms"]))
            ratios[f"plan_over_this_{k}"] = a["plan_ms_per_prime"] / a["ms_per_prime"]
    print(f"{'players':>7} {'primes':>6} {'this ms':>10} {'baseline ms':>12} {'speed-up':>9} "
          f"{'median':>7} {'plan ms':>9} {'plan/this':>9}")
    for k in ks:
        a, b = figures[f"{k}_this"], figures[f"{k}_baseline"]
        print(f"{k:7d} {a['primes']:6d} {a['ms_per_prime']:10.2f} {b['ms_per_prime']:12.2f} "
              f"{ratios[f'baseline_over_this_{k}']:9.2f} {ratios[f'median_round_ratio_{k}']:7.2f} "
              f"{a['plan_ms_per_prime']:9.2f} {ratios[f'plan_over_this_{k}']:9.2f}")
    for f in figures.values():
        f["residues"] = f["residues"][:2]
    print(json.dumps({"figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
