"""Benchmark: the series engine's targets, side by side, each contender a fresh process.

1. ``ladders solve hasbro`` (series, the default: certified) against the modular engine
   (ratio, target >= 3x), and the solve step alone;
2. ``ladders solve hasbro --table`` (all 6,561 P(a, b), certified, gzip-compressed);
3. ``ladders solve hasbro --players 3`` with 2 local workers, every seat exact and
   verified (wall time and the peak memory of the driver and its workers);
4. the time of one prime for 3 and 4 players on one core, this kernel against the
   kernel of a baseline commit (default: the last one before the transforms), each
   in its own process, on the same primes of the baseline's kind and of this one's.

Run: ``python scripts/bench_series.py [--skip-three] [--baseline COMMIT]``. Prints a
table and one JSON line. The fractions of the 2-player runs must agree (``==``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from fresh import baseline_tree, ladders, remove_baseline, run


PER_PRIME = r'''
import json, sys, time
import numpy as np
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import series
players, count, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
chain = build_chain(preset_board("hasbro"))
source = getattr(series, kind, None)
if source is None:
    print(json.dumps({"skipped": f"{kind} not in this version"})); raise SystemExit
it = source(11)
primes = [next(it) for _ in range(count + 1)]
series.seat_residues(chain, players, primes[:1])           # compile or load the kernel
t0 = time.perf_counter()
res, valid = series.seat_residues(chain, players, primes[1:])
ms = (time.perf_counter() - t0) / count * 1000
print(json.dumps({"ms_per_prime": ms, "valid": int(valid.sum()),
                  "residues": [[int(v) for v in row] for row in res[:2]]}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-three", action="store_true", help="skip the 3-player full board")
    parser.add_argument("--baseline", default="644f1b1",
                        help="commit whose kernel is measured per prime alongside this one")
    parser.add_argument("--primes", type=int, default=40, help="primes timed per kernel run")
    args = parser.parse_args()
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ladders("solve", "tiny10", "-k", "3")                       # kernels compiled and cached
        res, data = ladders("solve", "hasbro")
        exact = data["seats"][0]["exact"]
        figures["series"] = {**res, "solve_seconds": data["details"]["stages"]["solve"]}
        res, data = ladders("solve", "hasbro", "--engine", "modular")
        assert data["seats"][0]["exact"] == exact, "series and modular disagree"
        figures["modular"] = res
        res, data = ladders("solve", "hasbro", "--table", str(tmp / "t.jsonl.gz"))
        assert data["verified"]["passed"]
        figures["table"] = {**res, "file_mb": (tmp / "t.jsonl.gz").stat().st_size / 1e6}
        if not args.skip_three:
            res, data = ladders("solve", "hasbro", "--players", "3", "--checkpoint", str(tmp / "h3"))
            assert data["verified"]["passed"]
            figures["three_players"] = {**res, "details": data["details"],
                                        "digits": [len(s["exact"].split("/")[1]) for s in data["seats"]]}
        env = baseline_tree(tmp, args.baseline)
        try:
            for players, count in ((3, args.primes), (4, max(4, args.primes // 8))):
                for kind in ("random_primes", "ntt_primes"):
                    for who, extra in (("this", None), ("baseline", env)):
                        res = run([sys.executable, "-c", PER_PRIME, str(players), str(count), kind],
                                  env=extra, cwd=str(tmp))
                        figures[f"prime_{players}_{kind}_{who}"] = {**res, **json.loads(res["stdout"])}
                    a, b = (figures[f"prime_{players}_{kind}_{w}"] for w in ("this", "baseline"))
                    if "residues" in a and "residues" in b:
                        assert a["residues"] == b["residues"], "the kernels disagree"
        finally:
            remove_baseline(tmp)
    for f in figures.values():
        f.pop("stdout", None)
    print(f"{'run':58} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}")
    for name in ("series", "modular", "table", "three_players"):
        if name in figures:
            f = figures[name]
            print(f"{name:58} {f['wall']:8.2f} {f['cpu']:8.2f} {f['peak_mb']:8.0f}")
    for key, f in figures.items():
        if key.startswith("prime_"):
            print(f"{key:58} {f.get('ms_per_prime', float('nan')):8.2f} ms a prime")
    ratios = {"modular_over_series_wall": figures["modular"]["wall"] / figures["series"]["wall"]}
    for players in (3, 4):
        a = figures.get(f"prime_{players}_ntt_primes_this", {})
        b = figures.get(f"prime_{players}_random_primes_baseline", {})
        if "ms_per_prime" in a and "ms_per_prime" in b:
            ratios[f"baseline_over_this_per_prime_{players}"] = b["ms_per_prime"] / a["ms_per_prime"]
    print("ratios: " + ", ".join(f"{k} = {v:.2f}" for k, v in ratios.items()))
    print(json.dumps({"figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
