"""Benchmark: the first seat's half-gcd alone against the same with helper threads.

A reconstruction attempt's rational reconstruction is one half-gcd of the modulus
(:func:`~ladders.solver.engines.series.reconstruct._wang_pair`); with the attempt's
threads its independent large products are shared with helpers
(:class:`~ladders.solver.engines.series.reconstruct.Helpers`, issue 39's tail). Here a
fraction ``a / b`` of ``BITS / 2 - 8`` bits each (seed 3) modulo an odd random
``BITS``-bit number, its Wang pair timed in a fresh process for each contender, the
pair compared with ``a / b`` reduced (``==``)::

    python scripts/bench_hgcd.py 40000000 160000000 [--baseline COMMIT]

``--baseline COMMIT`` also times that commit's half-gcd with the same helpers (its own
fresh process, the package checked out aside: ``fresh.baseline``), to compare a change
of the half-gcd side by side. Prints a line per size and one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time

from fresh import baseline, fresh_environ


def timed(bits: int, helpers: int) -> float:
    """Seconds of one Wang pair at ``bits`` with ``helpers`` helper threads (0: none)."""
    from concurrent.futures import ThreadPoolExecutor

    import gmpy2

    from ladders.solver.engines.series.reconstruct import Helpers, _wang_pair
    from ladders.solver.exact import release_gil, releasing_gil
    state = gmpy2.random_state(3)
    m = gmpy2.mpz_urandomb(state, bits) | (gmpy2.mpz(1) << (bits - 1)) | 1
    a = gmpy2.mpz_urandomb(state, bits // 2 - 8)
    b = gmpy2.mpz_urandomb(state, bits // 2 - 8) | 1
    while gmpy2.gcd(b, m) != 1:
        m += 2
    x = a * gmpy2.invert(b, m) % m
    g = gmpy2.gcd(a, b)
    _wang_pair(x % (1 << 20000) | 1, m % (1 << 20001) | 1)   # compiled code loaded (or built)
    with releasing_gil(), ThreadPoolExecutor(max(helpers, 1), initializer=release_gil) as pool:
        t0 = time.perf_counter()
        pair = _wang_pair(x, m, Helpers(pool, helpers) if helpers else None)
        seconds = time.perf_counter() - t0
    if pair != (a // g, b // g):
        raise SystemExit(f"the half-gcd at {bits:,} bits missed the fraction")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bits", type=int, nargs="+", help="sizes of the modulus")
    parser.add_argument("--helpers", type=int, default=1, help="helper threads (the driver's "
                        "threads less one)")
    parser.add_argument("--baseline", help="a commit whose half-gcd is timed too, with the "
                        "same helpers")
    parser.add_argument("--phase", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase is not None:          # one contender, in this fresh process
        print(timed(args.bits[0], args.phase))
        return
    rows = []
    with contextlib.ExitStack() as stack:
        base_env = stack.enter_context(baseline(args.baseline))[1] if args.baseline else None

        def phase(bits: int, helpers: int, env: dict[str, str] | None = None) -> float:
            return float(subprocess.run(
                [sys.executable, __file__, str(bits), "--phase", str(helpers)], check=True,
                capture_output=True, text=True, env=fresh_environ(env)).stdout)

        for bits in args.bits:
            alone, shared = phase(bits, 0), phase(bits, args.helpers)
            row = {"bits": bits, "alone": round(alone, 4), "helpers": args.helpers,
                   "shared": round(shared, 4), "ratio": round(alone / shared, 3)}
            line = (f"{bits:,} bits: {alone:.2f} s alone, {shared:.2f} s with {args.helpers} "
                    f"helper(s): {alone / shared:.2f}x")
            if base_env is not None:
                before = phase(bits, args.helpers, base_env)
                row.update(baseline=args.baseline, baseline_shared=round(before, 4),
                           speedup=round(before / shared, 3))
                line += f"; {args.baseline}: {before:.2f} s, {before / shared:.2f}x slower"
            rows.append(row)
            print(line, flush=True)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
