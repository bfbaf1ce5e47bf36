"""Chinese remaindering of millions of primes, without big inverses, split into groups.

The residues ``r_ij = x_j mod m_i`` of ``c`` values at primes ``m_1..m_n`` give each
``x_j mod M``, ``M = prod m_i``, by the linear combination (von zur Gathen and Gerhard,
*Modern Computer Algebra*, Algorithm 10.16)::

    x_j = sum_i c_ij (M / m_i)  (mod M),   c_ij = r_ij ((M / m_i)^-1 mod m_i) mod m_i

Three passes over the subproduct tree of the ``m_i``, each a few multiplications of
equal-size numbers per level, O(M(N) log n) in all: the tree itself (up); the
remainders ``M mod m_i^2`` (down: ``M mod v^2`` at every node v), from which
``(M / m_i) mod m_i = (M mod m_i^2) / m_i``, inverted modulo the word-size ``m_i``;
and the sum (up: ``z_v = z_L v_R + z_R v_L``). No inverse of a big number is ever
taken: the pairwise CRT (:func:`~ladders.solver.engines.series.reconstruct.crt_tree`)
needs one extended gcd per tree node, and GMP's ``gcdext`` costs about 60
multiplications of the same size (23.7 s against 0.38 s at 64 million bits here),
which made the pairwise CRT of a 5-player run about 40 minutes.

The primes come in *groups* (runs of a run's batches). The tree's levels above the
groups are the caller's (:func:`crt_grouped`); everything below a group is one call of
:func:`group_terms`, a function of the group's own residues and of its :class:`Top`
(in the end one number, ``M mod M_g^2``), so that a driver can hand the groups to
workers (its ``mapper``) and keep only the top of the tree: for 10 million primes in 64
groups, 6 of its 23 levels. On a cluster of many workers the remainders go down only
the top two of those here (to :data:`HAND_OVER` nodes, :func:`hand_over`); each group
takes its own path down the rest, from its ancestor's remainder: a division at each of
four levels more for each group (about 5 s at five players' full size, on workers that
are idle while the driver waits), where the driver would take its two threads through
every node of those levels (about 45 s of its 59). With few workers the driver goes
down to the groups itself (each group's path would cost more than the driver's share).
A group's product comes from its batches' products where the caller has them
(:attr:`Group.products`: taken as the batches arrived, not after the last one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ladders.solver.exact import invert, mpz


@dataclass(frozen=True)
class Group:
    """Primes ``(n,)`` and residues ``(n, c)`` (uint64), one row per prime, held as the
    runs of rows they came in (``parts``: an attempt's groups are views of the stream's
    batches, joined only where a group is computed, so an attempt holds no second copy
    of every residue: 9 GB at six players), and where they can be read again
    (``source``: the caller's, opaque here; a mapper that reads them from there is
    given no residues, None in ``parts``: ``ReconstructionStream.let_go_of_residues``)."""

    parts: tuple[tuple[np.ndarray, np.ndarray | None], ...]
    source: tuple[Any, ...] = ()
    #: the residue columns to combine, in this order (None: every one): a race's last
    #: seat is one minus the others, so its column need not be combined
    keep: tuple[int, ...] | None = None
    #: the product of each part's primes where the caller has it (None where not; no
    #: items: none known)
    products: tuple[mpz | None, ...] = ()

    @classmethod
    def of(cls, primes: np.ndarray, residues: np.ndarray, source: tuple[Any, ...] = (),
           keep: tuple[int, ...] | None = None) -> Group:
        """A group of one run of rows."""
        return cls(((primes, residues),), source, keep)

    def product(self) -> mpz:
        """The product of the group's primes (its root in the tree), from its parts'
        products where known."""
        known = self.products or (None,) * len(self.parts)
        return product_tree([group_product(p) if k is None else k
                             for (p, _), k in zip(self.parts, known)])[-1][0]

    @property
    def primes(self) -> np.ndarray:
        """The primes, joined (a new array unless there is one run)."""
        return _joined([p for p, _ in self.parts])

    @property
    def residues(self) -> np.ndarray:
        """The residues of the kept columns, joined (a new array unless there is one run
        and every column is kept)."""
        return kept_columns(_joined([r for _, r in self.parts]), self.keep)

    @property
    def columns(self) -> int:
        """Columns combined."""
        return self.parts[0][1].shape[1] if self.keep is None else len(self.keep)


def kept_columns(residues: np.ndarray, keep: tuple[int, ...] | None) -> np.ndarray:
    """The columns ``keep`` of ``(n, c)`` residues (all of them for None)."""
    return residues if keep is None else residues[:, list(keep)]


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


#: On a cluster of a worker a group or more, the remainders down the tree above the
#: groups stop at the first level of at most this many nodes; each group goes on from
#: there by itself (:class:`Top`). Not fewer: the two nodes below the root would send
#: each group a remainder of the modulus' size (77 MB at five players).
HAND_OVER = 4


def hand_over(groups: int, workers: int, threads: int) -> int:
    """Where the remainders stop (:func:`tops_of`) for ``groups`` groups on ``workers``
    workers, the driver with ``threads`` threads: a level of N nodes costs the driver N /
    threads divisions of its nodes' size, each group one more, and a worker takes
    ``ceil(groups / workers)`` groups one after the other; so the driver keeps the levels
    where ``N <= threads ceil(groups / workers)`` (all of them where workers are few),
    and never fewer than :data:`HAND_OVER` nodes."""
    return max(HAND_OVER, threads * -(-groups // max(workers, 1)))


@dataclass(frozen=True)
class Top:
    """Where a group's remainders start: ``rem = M mod A^2`` for its ancestor A at the
    level where the caller stopped going down (:func:`hand_over`), and the products of
    the nodes from A's child down to the group's parent (``path``; groups under the same
    A share these objects)."""

    rem: mpz
    path: tuple[mpz, ...] = ()

    def at(self, root: mpz) -> mpz:
        """``M mod root^2`` for the group's own product ``root``: down the path."""
        rem = self.rem
        for node in (*self.path, root):
            rem = rem % (node * node)
        return rem


#: ``mapper(groups, tops)``: :func:`group_terms` of each group with its ``top``, in
#: order. This process by default; a cluster's workers where the groups should go there.
Mapper = Callable[[Sequence[Group], Sequence[Top]], list[list[mpz]]]


def local_mapper(groups: Sequence[Group], tops: Sequence[Top]) -> list[list[mpz]]:
    """Every group in this process, one after the other."""
    return [group_terms(g.primes, g.residues, t) for g, t in zip(groups, tops)]


def product_tree(leaves: Sequence[mpz], pool: Executor | None = None) -> list[list[mpz]]:
    """The subproduct tree, leaves first: level ``k+1`` holds the products of pairs of
    level ``k`` (an odd last node goes up as it is); the last level is ``[prod]``. A
    level's products side by side in ``pool`` where there is one."""
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        low = levels[-1]
        up = each_in(pool, _times, low[0:-1:2], low[1::2])
        if len(low) % 2:
            up.append(low[-1])
        levels.append(up)
    return levels


T = TypeVar("T")


def each_in(pool: Executor | None, fn: Callable[..., T], *args: Sequence[Any]) -> list[T]:
    """``fn`` over the arguments, in ``pool``'s threads where there is one."""
    return list(pool.map(fn, *args)) if pool is not None else [fn(*a) for a in zip(*args)]


def _square_rem(value: mpz, node: mpz) -> mpz:
    return value % (node * node)


def remainders_down(value: mpz, tree: list[list[mpz]], pool: Executor | None = None) -> list[mpz]:
    """``value mod leaf^2`` for every leaf: ``value mod v^2`` at each node from the root
    down (``value`` below the root's square); a level's nodes side by side in ``pool``."""
    rems = [value]
    for low in reversed(tree[:-1]):
        rems = each_in(pool, _square_rem, [rems[i // 2] for i in range(len(low))], low)
    return rems


def _times(x: mpz, y: mpz) -> mpz:
    return x * y


def combine_up(terms: Sequence[mpz], tree: list[list[mpz]], pool: Executor | None = None) -> mpz:
    """``sum_i terms_i (root / leaf_i)`` by ``z_v = z_L v_R + z_R v_L`` up the tree; a
    level's products side by side in ``pool`` where there is one (the root's two
    included: the top levels are most of the work)."""
    z = list(terms)
    for low in tree[:-1]:
        pairs = range(0, len(low) - 1, 2)
        if pool is None:
            up = [z[i] * low[i + 1] + z[i + 1] * low[i] for i in pairs]
        else:
            left = each_in(pool, _times, [z[i] for i in pairs], [low[i + 1] for i in pairs])
            right = each_in(pool, _times, [z[i + 1] for i in pairs], [low[i] for i in pairs])
            up = [x + y for x, y in zip(left, right)]
        if len(low) % 2:
            up.append(z[-1])
        z = up
    return z[0]


def group_product(primes: np.ndarray) -> mpz:
    """The product of a group's primes (its root in the tree)."""
    return product_tree([mpz(q) for q in primes.tolist()])[-1][0] if len(primes) else mpz(1)


def group_terms(primes: np.ndarray, residues: np.ndarray, top: Top) -> list[mpz]:
    """A group's part of every value's sum: ``y_j = sum_{i in g} c_ij (M_g / m_i)``, from
    its ``top`` (``M mod M_g^2`` once down its path, M the modulus of all groups): below
    the group, the remainders go down to ``M mod m_i^2``, the weights ``(M/m_i)^-1 mod
    m_i`` are word inverses, and the sum goes back up to the group's root."""
    mods = [mpz(q) for q in primes.tolist()]
    tree = product_tree(mods)
    weights = []
    for m, rem in zip(mods, remainders_down(top.at(tree[-1][0]), tree)):
        weights.append(invert(rem // m, m))
    rows = residues.tolist()
    return [combine_up([r[j] * w % m for r, w, m in zip(rows, weights, mods)], tree)
            for j in range(residues.shape[1])]


def tops_of(tree: list[list[mpz]], pool: Executor | None = None,
            stop_at: int | None = None) -> list[Top]:
    """Each leaf's :class:`Top` in ``tree`` (the groups' products, leaves first): the
    remainders of the root down to the first level of at most ``stop_at`` nodes (None:
    down to the leaves), each leaf's path below it. Leaf i's ancestor at level l is node
    ``i >> l`` (a level's pairs are ``(2j, 2j + 1)``; an odd last node goes up as node
    ``j`` alone)."""
    stop = next(level for level, nodes in enumerate(tree)
                if stop_at is None or len(nodes) <= stop_at)
    rems = remainders_down(tree[-1][0], tree[stop:], pool)
    return [Top(rems[i >> stop], tuple(tree[level][i >> level] for level in range(stop - 1, 0, -1)))
            for i in range(len(tree[0]))]


def crt_grouped(groups: Sequence[Group], mapper: Mapper = local_mapper) -> tuple[list[mpz], mpz]:
    """``([x_0, ..., x_{c-1}], M)``: every column's value modulo the product M of all
    the groups' primes (distinct), ``0 <= x_j < M``. The levels above the groups run
    here; each group's :func:`group_terms` runs through ``mapper``."""
    columns, modulus = crt_columns(groups, mapper)
    return [c.result() for c in columns], modulus


def crt_columns(groups: Sequence[Group], mapper: Mapper = local_mapper,
                pool: Executor | None = None,
                stop_at: int | None = None) -> tuple[list[Future[mpz]], mpz]:
    """:func:`crt_grouped` with the levels above the groups in ``pool``'s threads (a
    level's remainders side by side; the first column's sum with a level's products
    side by side, then each other column's sum as a task of its own): the columns as
    futures, so that a caller can start on the first while the others are summed.
    Without a pool, everything here, the futures done. The threads help where gmpy2 lets
    go of the interpreter lock in its products (``exact.release_gil`` as the pool's
    initializer). The remainders stop at ``stop_at`` nodes (:func:`tops_of`)."""
    if not groups:
        raise ValueError("no primes to combine")
    tree = product_tree(each_in(pool, Group.product, groups), pool)
    modulus = tree[-1][0]
    parts = [list(p) for p in mapper(groups, tops_of(tree, pool, stop_at))]

    def column(j: int, helpers: Executor | None = None) -> mpz:
        terms = [p[j] for p in parts]
        for p in parts:             # the column's terms let go as it is summed
            p[j] = None
        return combine_up(terms, tree, helpers) % modulus

    cols = range(groups[0].columns)
    if pool is not None:
        # the first column is what the caller waits for: its products side by side here,
        # then the others one a thread (in the background of the caller's work on it)
        first: Future[mpz] = Future()
        first.set_result(column(0, pool))
        return [first] + [pool.submit(column, j) for j in cols[1:]], modulus
    done: list[Future[mpz]] = []
    for j in cols:
        done.append(Future())
        done[-1].set_result(column(j))
    return done, modulus
