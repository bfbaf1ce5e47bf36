"""The series engine's own re-check of a finished answer: every seat against the
engine's residues at fresh random primes.

For races whose linear system is too big for the independent check modulo primes
(:mod:`ladders.solver.checks.residue_check`, up to its ``CHECK_LIMIT`` unknowns), a stored
answer is compared with :func:`~ladders.solver.engines.series.seat_residues` at primes
that did not build it. It shares the engine's algebra, so it catches what happens after
the residues (the Chinese remaindering, the reconstruction, the store), not an error in
the algebra itself: that is why it lives with the engine and not among the checks.
"""

from __future__ import annotations

import math
from typing import Any

from ladders.solver.engines.series import SERIES_FIT, chain_data, expected_digits, seat_residues
from ladders.solver.engines.series.reconstruct import random_primes
from ladders.solver.exact import invert, mpq, mpz


def check_series_residues(chain: Any, players: int, seats: list[mpq], primes: int = 2,
                          seed: int | None = None) -> dict[str, Any]:
    """Every seat against the series engine's residues at ``primes`` fresh random primes
    of ``[2^61, 2^62)``, none of which built the answer.

    A wrong fraction ``x' != x`` passes a prime q only if q divides the numerator of
    ``x' - x``, an integer of at most ``B = bits(x') + 2 bits(bound) + 1`` bits, where
    the bound is the series engine's bound on a seat's denominator
    (:func:`~ladders.solver.engines.series.expected_digits` before its fit); at most
    ``B / 61`` primes of the ~5.3e16 in the range divide it. Over r primes and k seats
    the chance is below ``k (B / (61 * 5.3e16))^r``.
    """
    stream = random_primes(seed)
    used: list[dict[str, Any]] = []
    passed = True
    while len(used) < primes:
        batch = [next(stream) for _ in range(primes - len(used))]
        residues, valid = seat_residues(chain, players, batch)
        for q, row, ok in zip(batch, residues, valid):
            if not ok or any(s.denominator % q == 0 for s in seats):
                continue  # q divides a denominator: another prime
            expected = [int(mpz(s.numerator) * invert(mpz(s.denominator), q) % q) for s in seats]
            agree = [int(v) for v in row] == expected
            passed &= agree
            used.append({"prime": q, "agree": agree})
    bound_bits = expected_digits(chain_data(chain), players) / SERIES_FIT * math.log2(10)
    bits = max(s.numerator.bit_length() + s.denominator.bit_length() for s in seats) + 2 * bound_bits + 1
    odds = min(1.0, players * (bits / (61 * 5.3e16)) ** len(used))
    return {"check": "confirmation", "passed": passed, "primes": used,
            "what": f"every seat agrees with the series engine's residues at {len(used)} fresh "
                    "random primes, none of which built the answer",
            "error_probability_below": odds}
