"""Benchmark: the series and modular engines against python-flint's dense Dixon solver.

Every contender runs in its own fresh process (``os.wait4`` gives each one's own peak
memory and CPU time), one after another on the same machine:

1. ``ladders solve hasbro`` with the series engine (the default: polynomials of one
   player's chain over Q, certified) and with the modular engine (start-up, system,
   factor, lifting, certificate, bounds check, printing), with the compiled kernels
   cached, and the modular one once more with an empty numba cache;
2. ``ladders solve hasbro --table`` with both engines (every P(a, b), certified, written
   gzip-compressed; the two files must be identical);
3. python-flint: ``fmpq_mat.solve(B, algorithm="dixon")`` on the same system
   (dense 6,561 x 6,561), the state-of-the-art library's one-call answer;
4. the 60-square board (``hasbro`` cut at 60): the modular engine against this
   project's elimination engine on 2 local Dask workers.

The fractions must be identical (``==``) or the script fails. Run:
``python scripts/bench_exact.py [--skip-flint]``. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
from pathlib import Path

from fresh import ladders, run

FLINT = r'''
import json, sys, time
sys.set_int_max_str_digits(0)
import flint
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.games.race import race_system
system = race_system(build_chain(preset_board("hasbro")), 2)
t0 = time.perf_counter()
n = system.size
a = flint.fmpq_mat(n, n)
for i in range(n):
    for c, v in system.row(i):
        a[i, c] = v
b = flint.fmpq_mat(n, 1, [int(v) for v in system.rhs[:, 0]])
build = time.perf_counter() - t0
x = a.solve(b, algorithm="dixon")
v = x[system.target, 0]
print(json.dumps({"build_seconds": build, "solve_seconds": time.perf_counter() - t0 - build,
                  "exact": f"{int(v.p)}/{int(v.q)}"}))
'''


def board60(tmp: Path) -> str:
    from ladders.solver.games.board import preset_board
    jumps = [(a, b) for a, b in preset_board("hasbro").jumps if a < 60 and b <= 60]
    path = tmp / "hasbro60.txt"
    path.write_text("0\n60\n6\n" + "".join(f"{a} {b}\n" for a, b in jumps))
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-flint", action="store_true", help="skip the ~3 minute flint run")
    args = parser.parse_args()
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ladders("solve", "tiny10", "--engine", "modular")  # kernels compiled and cached
        ladders("solve", "tiny10", "-k", "3", "--engine", "series")
        ladders("solve", "tiny10", "--table", str(tmp / "warm.jsonl.gz"))  # the table's kernel
        res, data = ladders("solve", "hasbro", "--engine", "series")
        exact = data["seats"][0]["exact"]
        figures["series"] = {**res, "solve_seconds": data["seconds"]}
        res, data = ladders("solve", "hasbro", "--engine", "modular")
        assert data["seats"][0]["exact"] == exact
        figures["modular"] = {**res, "solve_seconds": data["seconds"]}
        res, data = ladders("solve", "hasbro", "--engine", "modular",
                            env={"NUMBA_CACHE_DIR": str(tmp / "numba-cold")})
        assert data["seats"][0]["exact"] == exact
        figures["modular_first_run"] = res
        res, data = ladders("solve", "hasbro", "--engine", "series", "--table", str(tmp / "s.jsonl.gz"))
        assert data["seats"][0]["exact"] == exact
        figures["series_table"] = {**res, "file_mb": (tmp / "s.jsonl.gz").stat().st_size / 1e6}
        res, data = ladders("solve", "hasbro", "--engine", "modular", "--table", str(tmp / "p.jsonl.gz"))
        assert data["seats"][0]["exact"] == exact
        assert gzip.decompress((tmp / "p.jsonl.gz").read_bytes()) == \
            gzip.decompress((tmp / "s.jsonl.gz").read_bytes()), "the two tables differ"
        figures["table"] = {**res, "file_mb": (tmp / "p.jsonl.gz").stat().st_size / 1e6}
        if not args.skip_flint:
            res = run([sys.executable, "-c", FLINT])
            flint = json.loads(res["stdout"])
            assert flint["exact"] == exact, "flint and ladders disagree"
            figures["flint_dixon"] = {**res, "solve_seconds": flint["solve_seconds"]}
        b60 = board60(tmp)
        res, mod60 = ladders("solve", b60, "--engine", "modular")
        figures["modular_60"] = res
        res, eli60 = ladders("solve", b60, "--engine", "elimination", "--executor", "dask",
                             "--workers", "2", "--checkpoint", str(tmp / "run60"))
        assert eli60["seats"] == mod60["seats"]
        figures["elimination_60"] = {**res, "solve_seconds": eli60["seconds"]}
    for f in figures.values():
        f.pop("stdout", None)
    rows = [("ladders solve hasbro (series, the default)", figures["series"]),
            ("ladders solve hasbro --engine modular (cached kernels)", figures["modular"]),
            ("  same, first run (empty numba cache)", figures["modular_first_run"]),
            ("ladders solve hasbro --table (series, 6,561 values)", figures["series_table"]),
            ("ladders solve hasbro --table (modular)", figures["table"])]
    if "flint_dixon" in figures:
        rows.append(('python-flint fmpq_mat.solve(algorithm="dixon")', figures["flint_dixon"]))
    rows += [("hasbro-60: modular engine", figures["modular_60"]),
             ("hasbro-60: elimination engine, 2 Dask workers", figures["elimination_60"])]
    print(f"{'run':52} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}")
    for name, f in rows:
        print(f"{name:52} {f['wall']:8.2f} {f['cpu']:8.2f} {f['peak_mb']:8.0f}")
    ratios = {"elimination_60_over_modular_60": figures["elimination_60"]["wall"] / figures["modular_60"]["wall"],
              "modular_over_series_wall": figures["modular"]["wall"] / figures["series"]["wall"]}
    if "flint_dixon" in figures:
        ratios["flint_over_series_wall"] = figures["flint_dixon"]["wall"] / figures["series"]["wall"]
        # like for like: each computation inside its own process (no start-up, no imports)
        ratios["flint_solve_over_series_solve"] = (figures["flint_dixon"]["solve_seconds"]
                                                   / figures["series"]["solve_seconds"])
        ratios["flint_over_modular_wall"] = figures["flint_dixon"]["wall"] / figures["modular"]["wall"]
        ratios["flint_over_modular_memory"] = figures["flint_dixon"]["peak_mb"] / figures["modular"]["peak_mb"]
    print("ratios: " + ", ".join(f"{k} = {v:.1f}" for k, v in ratios.items()))
    print(json.dumps({"figures": figures, "ratios": ratios}))


if __name__ == "__main__":
    main()
