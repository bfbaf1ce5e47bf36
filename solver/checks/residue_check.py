"""Tier-2 verification: solve the race system again modulo random 61-bit primes.

If ``x = u / v`` is the exact target value and ``p`` does not divide ``v``, then
``u * v^-1 mod p`` must equal the target of ``A x = B`` solved in the field ``Z/p``. A
random 61-bit prime leaves a chance of about ``digits / 10^18`` that a wrong fraction
slips through, and the check catches logic and storage bugs at once.

Independent by construction. The exact engines work on rows: the fraction-free
elimination (:mod:`ladders.solver.engines.elimination`) reduces each row by the earlier
pivot rows, the modular engines factor ``A = LU`` row by row modulo primes below 2^28
(:mod:`ladders.solver.engines.modp`), and the published algorithm that
``scripts/bench_elimination.py`` measures them against subtracts a multiple of the
pivot row from every row below it. :func:`solve_target_mod` keeps *columns* instead:
column j of ``[A | B]`` is a dict ``row -> value`` and every row knows the columns it
reaches, so eliminating an unknown is a rank-one update applied column by column
(``column c -= A[k, c] * multipliers``, the multipliers being the pivot's own column
over the pivot), with the fill found as a set difference. Its values are Python
integers of any size reduced modulo p only where they are read (a pivot, a multiplier,
a pivot-row entry): in between they grow to at most ``n p^2``, a few machine words,
and the inner loop saves one reduction per update. It shares no code and no loop with
the engines, only the published right-to-left order of the unknowns with the target
last, whose fill is the smallest we measured on ``hasbro`` for two players (28.3
million updates, against 53.2 million for the other order the engines know, ``far``,
and 164 million for a greedy Markowitz order). The order decides the work and which
rare primes make a pivot vanish, never the answer.

A system whose strongly connected components are small (a model checker's nearly
acyclic chain: nand 40-1's 629,595 unknowns, crowds' components of at most 30) is
solved in its block triangular form instead, compiled (:func:`block_target_mod`,
:mod:`ladders.solver.checks.blocks`):
the components by Kosaraju's two depth-first passes (S. R. Kosaraju, 1978; M. Sharir,
*A strong-connectivity algorithm and its applications in data flow analysis*, 1981),
solved from the sinks up, a component of k unknowns by Gauss-Jordan on its dense block,
modulo two random 31-bit primes for each 61-bit one (a wrong fraction passes both with
about the chance it passes one 61-bit prime). It shares nothing with the component
engine (Tarjan's components and its own kernels, modulo 30-bit primes), only the
system; the column elimination takes a system with a component beyond
:data:`BLOCK_LIMIT` unknowns.

That solve needs the race system, which outgrows any machine for more players on big
boards (4 players on ``hasbro``: 1,929,501 unknowns and about 1.9e9 nonzeros). Beyond
:data:`CHECK_LIMIT` unknowns a stored answer of the series engine is checked instead
against the engine's own residues at fresh primes (its ``recheck`` module), which
catches what happens after the residues (the Chinese remaindering, the
reconstruction, the store), not an error in the engine's algebra.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ladders.solver.exact import mpq, next_prime
from ladders.solver.system import LinearSystem

#: Most unknowns for which ``ladders verify`` solves the race system modulo primes
#: (:func:`check_residues`): a pure-Python elimination in Z/p whose time grows with the
#: fill: on hasbro's 6,561 unknowns 28 million updates, 10 s on a quiet machine for the
#: row-wise loop this one replaced and about two thirds of its time for this one (16 s
#: against 25 s side by side on a busy one); 3 players on the full board (91,881) would
#: take hours, 4 players (1,929,501) more memory than the machine has.
CHECK_LIMIT = 20_000
#: Most entry updates the residue check of a chain question's own system may make
#: (:mod:`ladders.solver.checks.reference`; a few seconds): a chain whose elimination
#: fills in (pieces that meet) is checked by its bounds and its certificate instead.
CHAIN_UPDATES = 3_000_000


def random_prime(rng: random.Random, bits: int = 61) -> int:
    """A random prime just above a random ``bits``-bit number."""
    return int(next_prime(rng.getrandbits(bits) | (1 << (bits - 1))))


def system_columns(system: LinearSystem) -> list[dict[int, int]]:
    """The columns of ``[A | B]`` as dicts ``row -> value`` (Python ints): the n
    unknowns, then one column per right-hand side."""
    n = system.size
    columns: list[dict[int, int]] = [{} for _ in range(n + system.columns)]
    owners = np.repeat(np.arange(n), np.diff(system.indptr)).tolist()
    for i, j, v in zip(owners, system.indices.tolist(), system.data.tolist()):
        columns[j][i] = v
    for k in range(system.columns):
        columns[n + k] = {i: v for i, v in enumerate(system.rhs[:, k].tolist()) if v}
    return columns


class TooMuchFill(Exception):
    """The elimination would pass its budget of updates (:func:`solve_target_mod`)."""


def solve_target_mod(system: LinearSystem, p: int, budget: int | None = None) -> list[int] | None:
    """``x[target] mod p`` for every right-hand side, by column-wise sparse elimination
    in ``Z/p`` (see the module docstring). Returns ``None`` when a pivot vanishes mod p
    (the caller then takes another prime); :class:`TooMuchFill` once more than
    ``budget`` entries would be updated (None: no limit)."""
    n, target = system.size, system.target
    columns: list[dict[int, int] | None] = list(system_columns(system))
    # reach[i]: the columns, other than its own, in which row i (still live) has an entry
    reach: list[set[int]] = [set() for _ in range(n)]
    for j, column in enumerate(columns):
        for i in column:
            if i != j:
                reach[i].add(j)
    unknowns = sorted(range(n), key=system.labels.__getitem__, reverse=True)
    unknowns.remove(target)
    for k in unknowns:
        below, columns[k] = columns[k], None
        pivot = below.pop(k, 0) % p
        if not pivot:
            return None
        inverse = pow(pivot, -1, p)
        multipliers = {i: m for i, v in below.items() if (m := v * inverse % p)}
        rows = set(multipliers)
        if budget is not None:
            budget -= len(rows) * len(reach[k])
            if budget < 0:
                raise TooMuchFill
        for i in below:
            reach[i].discard(k)                     # column k is gone
        for c in reach[k]:
            column = columns[c]
            factor = column.pop(k) % p              # A[k, c]; row k leaves column c
            if not factor:
                continue
            for i in rows.difference(column):       # fill: row i now reaches column c
                reach[i].add(c)
            get = column.get
            column.update({i: get(i, 0) - m * factor for i, m in multipliers.items()})
        reach[k] = set()
    last = columns[target]
    pivot = last.get(target, 0) % p
    if not pivot:
        return None
    inverse = pow(pivot, -1, p)
    return [columns[n + k].get(target, 0) * inverse % p for k in range(system.columns)]


#: Bits of the primes :func:`block_target_mod` works modulo (a product of two is below
#: 2^62, so it stays in 64-bit words).
BLOCK_BITS = 31
#: Most unknowns of one strongly connected component the block solve takes (a dense
#: elimination of its block a prime); beyond, the column elimination.
BLOCK_LIMIT = 200
#: Draws of primes for the block solve before the elimination is asked instead (each
#: dividing a pivot).
BLOCK_TRIES = 8


class BlocksTooLarge(Exception):
    """A strongly connected component of the system is beyond :data:`BLOCK_LIMIT`."""


def block_target_mod(system: LinearSystem, primes: list[int]) -> list[list[int]] | None:
    """``x[target] mod p`` (each ``p < 2^31``) for every right-hand side and each of
    ``primes``, by the block triangular form, compiled; None where a pivot vanishes
    modulo one of them; :class:`BlocksTooLarge` where a component is too large."""
    from ladders.solver.checks.blocks import block_solve
    status, values = block_solve(system.indptr, system.indices, system.data, system.rhs,
                                 system.target, np.array(primes, dtype=np.int64), BLOCK_LIMIT)
    if status == 2:
        raise BlocksTooLarge
    return None if status == 1 else values.tolist()


def check_residues(system: LinearSystem, values: list[mpq], primes: int = 1,
                   seed: int | None = None, budget: int | None = None) -> dict[str, Any]:
    """Compare exact target values with independent solves modulo ``primes`` random
    61-bit primes (or, where the system's strongly connected components are small,
    twice as many 31-bit ones, by its block triangular form in one pass: ``method``
    ``"blocks"``); skipped (and said so) where the elimination would update more than
    ``budget`` entries (None: no limit)."""
    rng = random.Random(seed)

    def draw(bits: int) -> int:
        while True:
            p = random_prime(rng, bits)
            if all(int(v.denominator) % p for v in values):
                return p

    def expected(p: int) -> list[int]:
        return [int(v.numerator) * pow(int(v.denominator), -1, p) % p for v in values]

    try:
        for _ in range(BLOCK_TRIES):
            drawn = [draw(BLOCK_BITS) for _ in range(2 * primes)]
            solved = block_target_mod(system, drawn)
            if solved is not None:
                used = [{"prime": p, "agree": r == expected(p)} for p, r in zip(drawn, solved)]
                return {"check": "residues", "primes": used, "method": "blocks",
                        "passed": all(u["agree"] for u in used)}
    except BlocksTooLarge:
        pass
    used = []
    while len(used) < primes:
        p = draw(61)
        try:
            residues = solve_target_mod(system, p, budget)
        except TooMuchFill:
            return {"check": "residues", "skipped": True, "passed": True,
                    "reason": f"the elimination of {system.size:,} unknowns would update more "
                              f"than {budget:,} entries"}
        if residues is not None:
            used.append({"prime": p, "agree": residues == expected(p)})
    return {"check": "residues", "primes": used, "method": "elimination",
            "passed": all(u["agree"] for u in used)}
