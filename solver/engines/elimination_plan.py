"""EliminationPlan: the pivot order, its column blocks and their task graph, as pure data.

The unknowns are eliminated in ``order`` (the target last). Consecutive pivots form
column blocks; the rows are cut into the same groups (group j = the rows whose pivots
are block j). Two kinds of task then do all the work:

- ``F(b)``     factor block b: eliminate, in order, each pivot row of group b with the
               earlier pivot rows of the same block. Needs group b after every earlier
               block that touches it.
- ``U(b, j)``  update group j (j > b) with the factored pivot rows of block b: needed
               only when some row of group j has a nonzero in block b's columns when
               block b is applied (found by the symbolic elimination below).

This is right-looking block LU without keeping L, or U beyond the current block: the
published trick of solving for the target first and stopping there. ``F(b+1)`` can
start as soon as ``U(b, b+1)`` is done, while the other ``U(b, j)`` still run, so the
work spreads over workers.

The plan carries a ``token`` (SHA-256 of the system digest, order, blocks and kernel
version): task keys and checkpoint stores are tied to it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import cached_property

from ladders.solver.system import ORDERS, LinearSystem, pivot_order

#: Bumped whenever the arithmetic of a task changes, so old checkpoints are refused.
KERNEL_VERSION = 1


@dataclass(frozen=True)
class EliminationPlan:
    """Pivot order (target last), blocks ``[lo, hi)`` of positions, and which groups each
    block updates. ``touches[b]`` lists the groups ``j > b`` that ``U(b, j)`` must update."""

    order: tuple[int, ...]
    blocks: tuple[tuple[int, int], ...]
    touches: tuple[tuple[int, ...], ...]
    system_digest: str
    updates: int  # symbolic count of row-entry updates (the plan's cost in big-number ops)
    fill: int     # entries created by fill-in

    @cached_property
    def token(self) -> str:
        """Hash that identifies this plan on this system."""
        h = hashlib.sha256()
        h.update(json.dumps([KERNEL_VERSION, self.system_digest, self.blocks]).encode())
        h.update(b"|".join(str(i).encode() for i in self.order))
        return h.hexdigest()

    @cached_property
    def position(self) -> list[int]:
        """``position[i]``: where unknown i stands in the pivot order."""
        pos = [0] * len(self.order)
        for p, i in enumerate(self.order):
            pos[i] = p
        return pos

    def group(self, j: int) -> tuple[int, ...]:
        """The unknowns (= row ids) of group j, in pivot order."""
        lo, hi = self.blocks[j]
        return self.order[lo:hi]

    @cached_property
    def last_touch(self) -> dict[tuple[int, int], int]:
        """``(b, j) -> b'``: the block whose update of group j precedes ``U(b, j)``
        (``-1``: the group is still as built). Also keyed ``(j, j)`` for ``F(j)``."""
        prev = {j: -1 for j in range(len(self.blocks))}
        out: dict[tuple[int, int], int] = {}
        for b, groups in enumerate(self.touches):
            out[(b, b)] = prev[b]
            for j in groups:
                out[(b, j)] = prev[j]
                prev[j] = b
        return out

    @cached_property
    def touched_by(self) -> dict[int, tuple[int, ...]]:
        """``j -> (b, ...)``: the blocks whose updates group j receives, in order."""
        out: dict[int, list[int]] = {}
        for b, groups in enumerate(self.touches):
            for j in groups:
                out.setdefault(j, []).append(b)
        return {j: tuple(bs) for j, bs in out.items()}

    def blocks_touching(self, j: int) -> tuple[int, ...]:
        return self.touched_by.get(j, ())

    def fuses(self, b: int, j: int) -> bool:
        """Whether ``U(b, j)`` runs as one task with ``F(j)`` that follows it.

        ``U(b, b+1)`` then ``F(b+1)`` is the chain every block waits for; nothing else
        reads the updated group in between, so one task does both and one segment (the
        factored block) is written, read and committed instead of two. (On ``hasbro``
        cut at 60 the chain crosses 12 blocks; each link costs a segment write, a read
        and a trip through the scheduler.)"""
        return j == b + 1 and j in self.touches[b]

    def tasks(self) -> list[tuple[int, int]]:
        """Every task as ``(b, j)`` in a valid serial order; ``(b, b)`` is ``F(b)``."""
        out = []
        for b, groups in enumerate(self.touches):
            out.append((b, b))
            out.extend((b, j) for j in groups)
        return out

    def describe(self) -> dict[str, int]:
        return {"unknowns": len(self.order), "blocks": len(self.blocks),
                "tasks": len(self.tasks()), "updates": self.updates, "fill": self.fill}


#: Row-entry updates per task the default block count aims at: a task then does
#: 0.5 s or more of big-integer work, against ~30 ms of store round trip (on hasbro cut
#: at 60: 10.3 s with 120 tasks against 12.7 s with 162 at 20,000).
UPDATES_PER_TASK = 150_000
#: Fewest pivots in a block cut by the tail rule of :func:`balanced_blocks`. On hasbro
#: cut at 60 with 2 workers: 16 -> 120 tasks, 9.5 s; 32 -> 93, 9.0 s; 64 -> 69, 7.7 s;
#: 128 -> 41, 7.7 s (2026-11-23). On 2026-11-25, 2 workers simulated from the measured
#: times of the tasks (35 ms more for each): 64 -> 2.60 s, 128 -> 2.28 s, 256 -> 2.56 s
#: (the critical path grows). The full board, 2 workers: 293.5 s with 128 (161 tasks),
#: 295.5 s with 64 (213 tasks), the same within this machine's variation.
MIN_TAIL_BLOCK = 128


def default_block_count(updates: int) -> int:
    """Blocks for a plan of ``updates`` symbolic updates: tasks grow like blocks^2 / 2,
    so ``sqrt(updates / UPDATES_PER_TASK)`` keeps each task's work near the target."""
    return max(4, min(64, round(math.sqrt(updates / UPDATES_PER_TASK))))


def balanced_blocks(costs: list[int], blocks: int) -> tuple[tuple[int, int], ...]:
    """Cut positions into about ``blocks`` runs of equal total cost.

    The cost of a pivot is the number of row entries it updates; it grows steeply
    towards the end of the order, so the last blocks hold few pivots. Small late blocks
    keep each sequential ``F(b)`` short and spread the expensive updates over many
    ``U(b, j)`` tasks that run in parallel.
    """
    n = len(costs)
    total = sum(costs) or 1
    out = []
    lo = 0
    acc = 0
    for pos, c in enumerate(costs):
        acc += c
        due = acc * blocks >= total * (len(out) + 1)
        # near the end every pivot updates every remaining row: a block longer than a
        # quarter of what remains would make its F(b) the bottleneck
        long = pos + 1 - lo >= max(MIN_TAIL_BLOCK, (n - lo) // 4) and acc * blocks * 2 >= total
        if (due or long) and pos + 1 < n:
            out.append((lo, pos + 1))
            lo = pos + 1
    out.append((lo, n))
    return tuple(out)


def symbolic_elimination(system: LinearSystem, order: list[int],
                         budget: int | None = None) -> tuple[list[list[int]], list[int], int]:
    """Follow the nonzero pattern pivot by pivot (sets of columns, no numbers).

    Returns, per position in ``order``: the rows that pivot updates, and its cost (row
    entries it updates); and the number of fill-in entries. With a ``budget``, it stops
    once the costs add up to more (the lists then stop there): whether the elimination
    is cheap, asked at the cost of a cheap one.
    """
    n = system.size
    rows = {i: {c for c, _ in system.row(i)} for i in range(n)}
    col_rows: dict[int, set[int]] = {c: set() for c in range(n)}
    for i, cols in rows.items():
        for c in cols:
            col_rows[c].add(i)
    updated: list[list[int]] = []
    costs: list[int] = []
    fill = 0
    for piv in order[:-1]:
        pivot = rows.pop(piv)
        pivot.discard(piv)
        for c in pivot:
            col_rows[c].discard(piv)
        users = sorted(col_rows.pop(piv) - {piv})
        for i in users:
            row = rows[i]
            row.discard(piv)
            new = pivot - row
            fill += len(new)
            row |= new
            for c in new:
                col_rows[c].add(i)
        updated.append(users)
        costs.append(len(users) * (len(pivot) + 1))
        if budget is not None:
            budget -= costs[-1]
            if budget < 0:
                return updated, costs, fill
    updated.append([])
    costs.append(0)
    return updated, costs, fill


#: One order's symbolic elimination, as :func:`symbolic_elimination` returns it.
Analysis = tuple[list[list[int]], list[int], int]


def make_plan(system: LinearSystem, block_size: int | None = None,
              order: list[int] | str | None = None,
              analysed: tuple[list[int], Analysis] | None = None) -> EliminationPlan:
    """Plan the elimination of ``system``: pivot order, column blocks, task graph.

    ``order`` is a list of unknowns (target last), a name from :data:`ORDERS`, or
    ``None``/``"auto"``: every named order is analysed symbolically and the one with
    the fewest row-entry updates wins (measured on ``hasbro``: cut at 60, ``far`` needs
    1.65 M updates against 1.83 M and runs faster; on the full board ``labels`` needs
    28 M against 53 M and runs faster). Blocks hold ``block_size`` pivots each, or by
    default are balanced by cost (:func:`balanced_blocks`). ``analysed``: an order and
    its complete analysis, done already (a chain question's sparseness test,
    :attr:`~ladders.solver.chain_problem.ChainProblem.symbolic`), not done again.
    """
    n = system.size
    known = {tuple(analysed[0]): analysed[1]} if analysed is not None else {}

    def analyse(o: list[int]) -> Analysis:
        if tuple(o) not in known:
            known[tuple(o)] = symbolic_elimination(system, o)
        return known[tuple(o)]

    if block_size is not None and block_size < 1:
        raise ValueError(f"block size must be at least 1, got {block_size}")
    if order is None or order == "auto":
        # a chain's states have one label each: its named orders are one order
        candidates = [pivot_order(system, name) for name in ORDERS]
        (updated, costs, fill), order = min(((analyse(o), o) for o in candidates),
                                            key=lambda a: sum(a[0][1]))
    else:
        order = pivot_order(system, order) if isinstance(order, str) else list(order)
        if sorted(order) != list(range(n)) or order[-1] != system.target:
            raise ValueError("the pivot order must list every unknown once, the target last")
        updated, costs, fill = analyse(order)
    if block_size is not None:
        blocks = tuple((lo, min(lo + block_size, n)) for lo in range(0, n, block_size))
    else:
        blocks = balanced_blocks(costs, default_block_count(sum(costs)))
    block_of = [0] * n
    for b, (lo, hi) in enumerate(blocks):
        for p in range(lo, hi):
            block_of[p] = b
    position = [0] * n
    for p, i in enumerate(order):
        position[i] = p
    touches: list[set[int]] = [set() for _ in blocks]
    for pos, users in enumerate(updated):
        b = block_of[pos]
        for i in users:
            j = block_of[position[i]]
            if j != b:
                touches[b].add(j)
    return EliminationPlan(order=tuple(order), blocks=blocks,
                           touches=tuple(tuple(sorted(t)) for t in touches),
                           system_digest=system.digest(), updates=sum(costs), fill=fill)
