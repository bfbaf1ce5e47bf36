"""Benchmark: certified Markov bounds on the full board, every seat, to D digits.

Runs ``ladders bounds hasbro --players K --digits D --json`` in a fresh process for each
case (wall time of the whole command, the moves n it needed, the digits it reached) and
checks that lower and upper agree to D digits for every seat and that the seats'
lower bounds sum to at most 1. Run: ``python scripts/bench_bounds.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

CASES = [(2, 16), (2, 1000), (3, 100), (3, 1000), (4, 200), (5, 100), (6, 100)]


def main() -> None:
    sys.set_int_max_str_digits(0)
    from ladders.solver.exact import str_to_fraction
    rows = []
    for players, digits in CASES:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "bounds", "hasbro", "--players",
                               str(players), "--digits", str(digits), "--json"],
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        data = json.loads(proc.stdout)
        seats = data["seats"] if "seats" in data else [data]
        for seat in seats:
            assert seat["lower_decimal"][:digits + 2] == seat["upper_decimal"][:digits + 2]
        lows = sum((str_to_fraction(s["lower"]) for s in seats), str_to_fraction("0"))
        assert lows <= 1
        rows.append({"players": players, "digits": digits, "moves": data["moves"],
                     "seconds": round(wall, 2)})
        print(f"{players} players, {digits:>5} digits: n = {data['moves']:>6}, {wall:7.2f} s", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
