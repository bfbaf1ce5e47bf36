"""Benchmark: certified Markov bounds on the full board, every seat, to D digits, this
tree against a baseline commit.

Runs ``ladders bounds hasbro --players K --digits D --json`` in a fresh process for each
case and contender, the two contenders in alternation (``--rounds`` times each; this
machine's speed drifts within minutes): the wall time of the whole command (minimum
over the rounds), the moves n it needed, and the check that lower and upper agree to D
digits for every seat, that the seats' lower bounds sum to at most 1 and that both
contenders print the same exact fractions. Issue 26's target: 3 players to 1,000 digits
in at most 3 s.

Run: ``python scripts/bench_bounds.py [--baseline COMMIT] [--rounds 3]``. Prints a table
and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys

from fresh import baseline, run

CASES = [(2, 16), (2, 1000), (3, 100), (3, 1000), (4, 200), (5, 100), (6, 100)]


def bounds(players: int, digits: int, env: dict[str, str] | None, cwd: str) -> tuple[float, dict]:
    """One ``ladders bounds`` in a fresh process: its wall time and its JSON (checked)."""
    from ladders.solver.exact import str_to_fraction
    res = run([sys.executable, "-m", "ladders.cluster.cli", "bounds", "hasbro", "--players",
               str(players), "--digits", str(digits), "--json"], env=env, cwd=cwd)
    data = json.loads(res["stdout"])
    data.pop("seconds", None)
    seats = data["seats"] if "seats" in data else [data]
    for seat in seats:
        assert seat["lower_decimal"][:digits + 2] == seat["upper_decimal"][:digits + 2]
    assert sum((str_to_fraction(s["lower"]) for s in seats), str_to_fraction("0")) <= 1
    return res["wall"], data


def main() -> None:
    sys.set_int_max_str_digits(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="d9919a8",
                        help="commit timed alongside this tree (default: before the walk's "
                             "recurrence)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each contender per case")
    args = parser.parse_args()
    rows = []
    with baseline(args.baseline) as (tmp, env):
        for players, digits in CASES:
            times: dict[str, list[float]] = {"this": [], "baseline": []}
            outputs = {}
            for _ in range(args.rounds):
                for who, extra in (("this", None), ("baseline", env)):
                    wall, outputs[who] = bounds(players, digits, extra, str(tmp))
                    times[who].append(wall)
            assert outputs["this"] == outputs["baseline"], f"{players} players: different bounds"
            this, base = min(times["this"]), min(times["baseline"])
            rows.append({"players": players, "digits": digits, "moves": outputs["this"]["moves"],
                         "this_s": round(this, 2), "baseline_s": round(base, 2),
                         "speed_up": round(base / this, 2)})
            print(f"{players} players, {digits:>5} digits: n = {outputs['this']['moves']:>6}, "
                  f"{this:6.2f} s against {base:6.2f} s ({base / this:.2f}x)", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
