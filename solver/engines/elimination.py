"""Exact sparse elimination kernels on :class:`~ladders.solver.system.LinearSystem`.

Rows are dicts ``column -> mpz``; columns ``n .. n+m-1`` hold the right-hand sides, so
every row operation updates A and B together.

The big solves follow an :class:`~ladders.solver.engines.elimination_plan.EliminationPlan`: the published trick of
eliminating every unknown except the target, in an order with the target last, and
stopping there: the last row then reads ``a * x_target = b``, so no back-substitution
is needed. Rows are fraction-free: ``row_i <- (p/g) row_i - (q/g) row_piv`` with
``g = gcd(p, q)``, then the row's content (gcd of its entries) is divided out so the
integers stay as small as the exact answer allows. (Measured on ``hasbro`` cut at 60:
skipping the content removal on three updates out of four made the run 4x slower.)

The plan's tasks map onto two functions: :func:`factor_block` (``F(b)``) and
:func:`update_rows` (``U(b, j)``). :func:`eliminate_target` runs them serially in
memory; it is the reference for every other executor.

Pivots are taken on the diagonal in the given order. For the systems built here
``A = d (I -/+ Q')`` with ``Q'`` the substochastic matrix of an absorbing chain, so
every principal submatrix is nonsingular and no diagonal pivot can vanish; a zero pivot
would mean a wrong system and raises ``ArithmeticError``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from ladders.solver.exact import gcd, mpq, mpz
from ladders.solver.engines.elimination_plan import EliminationPlan, make_plan
from ladders.solver.system import LinearSystem, default_order

Row = dict[int, mpz]


def system_rows(system: LinearSystem, ids: Sequence[int] | None = None) -> dict[int, Row]:
    """Rows of ``[A | B]`` as dicts of ``mpz``; right-hand side k sits in column n + k."""
    n = system.size
    rows: dict[int, Row] = {}
    for i in (range(n) if ids is None else ids):
        row = {c: mpz(v) for c, v in system.row(i)}
        for k, v in enumerate(system.rhs[i].tolist()):
            if v:
                row[n + k] = mpz(v)
        rows[i] = row
    return rows


def reduce_row(pivot: Row, piv: int, row: Row) -> Row:
    """``row`` with column ``piv`` eliminated by ``pivot`` (fraction-free), as a new row.

    ``row <- (p/g) row - (q/g) pivot`` with ``p = pivot[piv]``, ``q = row[piv]``,
    ``g = gcd(p, q)``; entries that cancel are dropped; then the content is divided out.
    """
    p = pivot[piv]
    q = row[piv]
    g = gcd(p, q)
    pp, qq = p // g, q // g
    out = {c: v * pp for c, v in row.items()} if pp != 1 else dict(row)
    get = out.get
    for c, v in pivot.items():
        new = get(c, 0) - qq * v
        if new:
            out[c] = new
        else:
            out.pop(c, None)
    out.pop(piv, None)
    remove_content(out)
    return out


def remove_content(row: Row) -> None:
    """Divide the row by the gcd of its entries, in place.

    The content is often large (a third to a half of the entries' bits on ``hasbro``)
    and shared by every entry, so the gcd ``g`` of two entries is nearly always the
    answer, give or take a small spurious factor. Each entry is divided by ``g`` once,
    quotient and remainder together (at 15,000 bits one ``divmod`` costs a third of a
    divisibility test plus an exact division). A nonzero remainder ``r`` shrinks the
    candidate to ``g' = gcd(g, r)`` (which divides ``v``); the quotients already made
    are multiplied by ``g / g'`` instead of being divided again.
    """
    values = list(row.values())
    if not values:
        return
    content = gcd(values[0], values[1]) if len(values) > 1 else abs(values[0])
    if content == 1:
        return
    quotients = []
    for v in values:
        q, r = divmod(v, content)
        if r:
            smaller = gcd(content, r)
            if smaller == 1:
                return
            factor = content // smaller
            quotients = [x * factor for x in quotients]
            content = smaller
            q = v // content
        quotients.append(q)
    for c, q in zip(row, quotients):
        row[c] = q


def apply_block(row: Row, factored: dict[int, Row], lo: int, hi: int,
                plan: EliminationPlan) -> Row:
    """``row`` with every column whose pivot position lies in ``[lo, hi)`` eliminated.

    Pivots apply in order; a pivot row can bring in later columns of the same block
    (fill), so the positions still to do are kept in a heap.
    """
    position, order, n = plan.position, plan.order, len(plan.order)
    todo = [position[c] for c in row if c < n and lo <= position[c] < hi]
    heapq.heapify(todo)
    last = -1
    while todo:
        pos = heapq.heappop(todo)
        if pos == last:
            continue
        last = pos
        col = order[pos]
        if col not in row:  # cancelled by an earlier pivot of the block
            continue
        pivot = factored[col]
        for c in pivot:
            if c not in row and c < n and lo <= position[c] < hi:
                heapq.heappush(todo, position[c])
        row = reduce_row(pivot, col, row)
    return row


def factor_block(rows: dict[int, Row], b: int, plan: EliminationPlan) -> dict[int, Row]:
    """``F(b)``: the pivot rows of block b, each eliminated by the block's earlier pivots.

    ``rows`` holds group b after every earlier block's update; the result maps each
    pivot (= row id) to its factored row, whose entry on its own column is the pivot.
    """
    lo, hi = plan.blocks[b]
    factored: dict[int, Row] = {}
    for pos in range(lo, hi):
        k = plan.order[pos]
        row = apply_block(rows[k], factored, lo, pos, plan)
        if not row.get(k):
            raise ArithmeticError(f"zero pivot at unknown {k} (position {pos})")
        factored[k] = row
    return factored


def update_rows(rows: dict[int, Row], factored: dict[int, Row], b: int,
                plan: EliminationPlan) -> dict[int, Row]:
    """``U(b, j)``: the rows of a later group with block b's columns eliminated."""
    lo, hi = plan.blocks[b]
    return {i: apply_block(row, factored, lo, hi, plan) for i, row in rows.items()}


def target_values(system: LinearSystem, last_row: Row) -> list[mpq]:
    """``x[target]`` for every right-hand side, from the target's fully reduced row."""
    n = system.size
    a = last_row.get(system.target)
    if not a or any(c < n and c != system.target for c in last_row):
        raise ArithmeticError("the target row is not reduced to a single unknown")
    return [mpq(last_row.get(n + k, mpz(0)), a) for k in range(system.columns)]


def eliminate_target(system: LinearSystem, plan: EliminationPlan | None = None,
                     progress: Callable[[int, int], None] | None = None) -> list[mpq]:
    """``x[target]`` for every right-hand side: the plan's tasks run serially in memory.

    ``progress(done, total)`` is called after each task.
    """
    plan = plan or make_plan(system)
    if plan.system_digest != system.digest():
        raise ValueError("this plan was made for another system")
    groups = {j: system_rows(system, plan.group(j)) for j in range(len(plan.blocks))}
    tasks = plan.tasks()
    last = len(plan.blocks) - 1
    for done, (b, j) in enumerate(tasks, start=1):
        if b == j:
            factored = factor_block(groups.pop(b), b, plan)
            if b == last:
                return target_values(system, factored[system.target])
        else:
            groups[j] = update_rows(groups[j], factored, b, plan)
        if progress is not None:
            progress(done, len(tasks))
    raise AssertionError("unreachable: the last task factors the target's block")


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
