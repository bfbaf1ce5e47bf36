"""Exact sparse elimination kernels on :class:`~solver.system.LinearSystem`.

Rows are dicts ``column -> mpz``; columns ``n .. n+m-1`` hold the right-hand sides, so
every row operation updates A and B together. ``col_rows[c]`` is the set of live rows
with a nonzero in column c: it tells which rows a pivot must update, and grows with
fill-in.

:func:`eliminate_target` is the published trick: eliminate every unknown except the
target, in an order with the target last, and stop: the last row then reads
``a * x_target = b``, so no back-substitution is needed. Rows are fraction-free:
``row_i <- (p/g) row_i - (q/g) row_piv`` with ``g = gcd(p, q)``, then the row's
content (gcd of its entries) is divided out so the integers stay as small as the
exact answer allows.

Pivots are taken on the diagonal in the given order. For the systems built here
``A = d (I -/+ Q')`` with ``Q'`` the substochastic matrix of an absorbing chain, so
every principal submatrix is nonsingular and no diagonal pivot can vanish; a zero pivot
would mean a wrong system and raises ``ArithmeticError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce

from solver.exact import gcd, mpq, mpz
from solver.system import LinearSystem

Row = dict[int, mpz]


def default_order(system: LinearSystem) -> list[int]:
    """The published right-to-left order: unknowns by label, largest first, target last."""
    order = sorted(range(system.size), key=lambda i: system.labels[i], reverse=True)
    order.remove(system.target)
    order.append(system.target)
    return order


def system_rows(system: LinearSystem) -> dict[int, Row]:
    """Rows of ``[A | B]`` as dicts of ``mpz``; right-hand side k sits in column n + k."""
    n = system.size
    rows: dict[int, Row] = {}
    for i in range(n):
        row = {c: mpz(v) for c, v in system.row(i)}
        for k, v in enumerate(system.rhs[i].tolist()):
            if v:
                row[n + k] = mpz(v)
        rows[i] = row
    return rows


def reduce_row(pivot: Row, piv: int, row: Row) -> tuple[set[int], set[int]]:
    """Eliminate column ``piv`` from ``row`` in place using ``pivot`` (fraction-free).

    ``row <- (p/g) row - (q/g) pivot`` with ``p = pivot[piv]``, ``q = row[piv]``,
    ``g = gcd(p, q)``; then the row's content is divided out. Returns the columns that
    appeared in (fill) so the caller can index them; vanished entries are dropped.
    """
    p = pivot[piv]
    q = row.pop(piv)
    g = gcd(p, q)
    pp, qq = p // g, q // g
    if pp != 1:
        for c in row:
            row[c] *= pp
    fill = set()
    gone = set()
    for c, v in pivot.items():
        if c == piv:
            continue
        old = row.get(c)
        if old is None:
            row[c] = -qq * v
            fill.add(c)
        else:
            new = old - qq * v
            if new:
                row[c] = new
            else:
                del row[c]
                gone.add(c)
    content = reduce(gcd, row.values(), mpz(0))
    if content > 1:
        for c in row:
            row[c] //= content
    return fill, gone


def eliminate_target(system: LinearSystem, order: Sequence[int] | None = None,
                     progress: Callable[[int, int], None] | None = None) -> list[mpq]:
    """``x[target]`` for every right-hand side, by forward elimination only.

    ``order`` is the pivot order and must end with the target (default: :func:`default_order`).
    ``progress(done, total)`` is called after each pivot.
    """
    n = system.size
    order = list(order) if order is not None else default_order(system)
    if sorted(order) != list(range(n)) or order[-1] != system.target:
        raise ValueError("the pivot order must list every unknown once, the target last")
    rows = system_rows(system)
    col_rows: dict[int, set[int]] = {c: set() for c in range(n)}
    for i, row in rows.items():
        for c in row:
            if c < n:
                col_rows[c].add(i)
    total = n - 1
    for step, piv in enumerate(order[:-1], start=1):
        pivot = rows.pop(piv)
        if not pivot.get(piv):
            raise ArithmeticError(f"zero pivot at unknown {system.labels[piv]}")
        for c in pivot:
            if c < n:
                col_rows[c].discard(piv)
        for i in col_rows.pop(piv):
            fill, gone = reduce_row(pivot, piv, rows[i])
            for c in fill:
                if c < n:
                    col_rows[c].add(i)
            for c in gone:
                if c < n:
                    col_rows[c].discard(i)
        if progress is not None:
            progress(step, total)
    last = rows[system.target]
    a = last.get(system.target)
    if not a:
        raise ArithmeticError("zero pivot at the target unknown")
    return [mpq(last.get(n + k, mpz(0)), a) for k in range(system.columns)]


def solve_all(system: LinearSystem,
              rhs: Sequence[Sequence[mpq]] | None = None) -> list[list[mpq]]:
    """Every unknown, for every right-hand side: ``result[k][i] = x_k[i]``.

    Gaussian elimination in :func:`default_order` then back-substitution, in ``mpq``.
    Meant for small systems (one-player moments, Another Game, tables of small races);
    ``rhs`` replaces the system's own right-hand sides when given.
    """
    n = system.size
    columns = [list(map(mpq, col)) for col in rhs] if rhs is not None else [
        [mpq(int(v)) for v in system.rhs[:, k]] for k in range(system.columns)]
    m = len(columns)
    rows: dict[int, dict[int, mpq]] = {}
    for i in range(n):
        row = {c: mpq(v) for c, v in system.row(i)}
        for k in range(m):
            if columns[k][i]:
                row[n + k] = columns[k][i]
        rows[i] = row
    col_rows: dict[int, set[int]] = {c: set() for c in range(n)}
    for i, row in rows.items():
        for c in row:
            if c < n:
                col_rows[c].add(i)
    order = default_order(system)
    done: list[tuple[int, dict[int, mpq]]] = []
    for piv in order:
        pivot = rows.pop(piv)
        p = pivot.pop(piv, None)
        if not p:
            raise ArithmeticError(f"zero pivot at unknown {system.labels[piv]}")
        pivot = {c: v / p for c, v in pivot.items()}
        for c in pivot:
            if c < n:
                col_rows[c].discard(piv)
        for i in col_rows.pop(piv) - {piv}:
            row = rows[i]
            q = row.pop(piv)
            for c, v in pivot.items():
                new = row.get(c, 0) - q * v
                if new:
                    if c not in row and c < n:
                        col_rows[c].add(i)
                    row[c] = new
                elif c in row:
                    del row[c]
                    if c < n:
                        col_rows[c].discard(i)
        done.append((piv, pivot))
    x = [[mpq(0)] * n for _ in range(m)]
    for piv, pivot in reversed(done):
        for k in range(m):
            value = pivot.get(n + k, mpq(0))
            for c, v in pivot.items():
                if c < n:
                    value -= v * x[k][c]
            x[k][piv] = value
    return x
