"""Tier-2 verification: solve the system again modulo random 61-bit primes.

If ``x = u / v`` is the exact target value and ``p`` does not divide ``v``, then
``u * v^-1 mod p`` must equal the target of ``A x = B`` solved in the field ``Z/p``. The
modular solve shares no arithmetic with the exact engines (word-size residues instead
of fraction-free big integers, its own elimination loop and order), so agreement for a
random 61-bit prime leaves a chance of about ``digits / 10^18`` that a wrong fraction
slips through, and it catches logic and storage bugs at once.
"""

from __future__ import annotations

import random
from typing import Any

from ladders.solver.exact import mpq, next_prime
from ladders.solver.system import LinearSystem


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
