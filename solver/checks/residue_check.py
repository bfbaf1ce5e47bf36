"""Tier-2 verification: solve the system again modulo random 61-bit primes.

If ``x = u / v`` is the exact target value and ``p`` does not divide ``v``, then
``u * v^-1 mod p`` must equal the target of ``A x = B`` solved in the field ``Z/p``. The
modular solve shares no arithmetic with the exact engines (word-size residues instead
of fraction-free big integers, its own elimination loop and order), so agreement for a
random 61-bit prime leaves a chance of about ``digits / 10^18`` that a wrong fraction
slips through, and it catches logic and storage bugs at once.

That solve needs the race system, which outgrows any machine for more players on big
boards (4 players on ``hasbro``: 1,929,501 unknowns and about 1.9e9 nonzeros). Beyond
:data:`CHECK_LIMIT` unknowns, a stored answer of the series engine is checked instead
against the series residues at fresh random primes (:func:`check_series_residues`): it
shares the engine's algebra, so it catches what happens after the residues (the Chinese
remaindering, the reconstruction, the store), not an error in the algebra itself.
"""

from __future__ import annotations

import random
from typing import Any

from ladders.solver.exact import invert, mpq, mpz, next_prime
from ladders.solver.system import LinearSystem

#: Most unknowns for which ``ladders verify`` solves the race system modulo primes
#: (:func:`check_modular`): a pure-Python elimination in Z/p that takes 10 s on
#: hasbro's 6,561 and grows with the fill; 3 players on the full board (91,881) would
#: take hours, 4 players (1,929,501) more memory than the machine has.
CHECK_LIMIT = 20_000


def random_prime(rng: random.Random, bits: int = 61) -> int:
    """A random prime just above a random ``bits``-bit number."""
    return int(next_prime(rng.getrandbits(bits) | (1 << (bits - 1))))


def solve_target_mod(system: LinearSystem, p: int) -> list[int] | None:
    """``x[target] mod p`` for every right-hand side, by sparse elimination in ``Z/p``.

    Pivots follow the labels from largest to smallest (the published right-to-left
    order), the target last. Returns ``None`` when a pivot vanishes mod p (the caller
    then takes another prime).
    """
    n = system.size
    rows: dict[int, dict[int, int]] = {}
    col_rows: dict[int, set[int]] = {c: set() for c in range(n)}
    for i in range(n):
        row = {c: v % p for c, v in system.row(i) if v % p}
        for k, v in enumerate(system.rhs[i].tolist()):
            if v % p:
                row[n + k] = v % p
        rows[i] = row
        for c in row:
            if c < n:
                col_rows[c].add(i)
    order = sorted(range(n), key=lambda i: system.labels[i], reverse=True)
    order.remove(system.target)
    for piv in order:
        pivot = rows.pop(piv)
        a = pivot.pop(piv, 0)
        if not a:
            return None
        inv = pow(a, -1, p)
        pivot = {c: v * inv % p for c, v in pivot.items()}
        for c in pivot:
            if c < n:
                col_rows[c].discard(piv)
        for i in col_rows.pop(piv) - {piv}:
            row = rows[i]
            q = row.pop(piv)
            for c, v in pivot.items():
                new = (row.get(c, 0) - q * v) % p
                if new:
                    if c not in row and c < n:
                        col_rows[c].add(i)
                    row[c] = new
                elif c in row:
                    del row[c]
                    if c < n:
                        col_rows[c].discard(i)
    last = rows[system.target]
    a = last.get(system.target, 0)
    if not a:
        return None
    inv = pow(a, -1, p)
    return [last.get(n + k, 0) * inv % p for k in range(system.columns)]


def check_modular(system: LinearSystem, values: list[mpq], primes: int = 1,
                  seed: int | None = None) -> dict[str, Any]:
    """Compare exact target values with independent solves modulo ``primes`` random primes."""
    rng = random.Random(seed)
    used = []
    passed = True
    while len(used) < primes:
        p = random_prime(rng)
        if any(int(v.denominator) % p == 0 for v in values):
            continue
        residues = solve_target_mod(system, p)
        if residues is None:
            continue
        expected = [int(v.numerator) * pow(int(v.denominator), -1, p) % p for v in values]
        ok = residues == expected
        passed &= ok
        used.append({"prime": p, "agree": ok})
    return {"check": "modular", "primes": used, "passed": passed}


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
    import math

    from ladders.solver.engines.series import SERIES_FIT, chain_data, expected_digits, seat_residues
    from ladders.solver.engines.series.reconstruct import random_primes
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
