"""Lumping: the coarsest exact bisimulation of a chain that respects its question, and
the quotient chain that answers the question in its place.

A partition of the states is an *ordinary lumping* (Kemeny and Snell, *Finite Markov
Chains*, 1960, section 6.3; a strong probabilistic bisimulation, Larsen and Skou 1991)
when any two states of a block move to every block with the same probability, exactly:
``sum_{j in C} P(s, j) = sum_{j in C} P(t, j)`` for all blocks C and s, t in one
block. If the blocks also agree on what the question reads, every state of a block
has the same answer, and the chain of the blocks (one row a block: its
representative's row, summed per block) gives it. A ring of 13 of Herman's
processes (QVBS ``herman``, 8,192 states, 1.6 million transitions, every state an
initial state) has a few hundred blocks; its system has 8,192 unknowns, dense.

What the question reads (the initial partition), as :func:`~ladders.solver.chains.questions.plan_question`
reads it:

- ``absorb``: whether a state is absorbing, and for an absorbing state the name of its
  answer (:attr:`~ladders.solver.chains.model.Chain.end_names`: two absorbing states
  lump only where they end the chain under one name);
- ``reach``: whether a state is in the target label;
- ``reward``: whether a state is in the target label, and outside it the exact value
  of the question's reward (one a step for ``T=?``).

The states where the question stops (absorbing states; the target's states) are not
refined: their rows are never read (the plan's unknowns exclude them and its searches
do not pass them), and in the quotient each of their blocks is absorbing.

The refinement is the signature one (as in Derisavi, Hermanns and Sanders, *Optimal
state-space lumping in Markov chains*, Information Processing Letters 87(6), 2003,
section 2; their algorithm and Valmari and Franceschinis, *Simple O(m log n) time
Markov chain lumping*, TACAS 2010, reach ``O(m log n)`` by splitting only on the
blocks that changed): each round gives every state the signature (its block, the set
of (block C, exact ``P(s, C)``)), and states of one block with different signatures
go to different blocks, until a round splits nothing. The result is the coarsest
lumping finer than the initial partition. A round is compiled
(:mod:`~ladders.solver.chains.refine`): each row's numerators summed per block over the
row's own denominator, the sum and the denominator divided by their gcd (so that
equal probabilities are equal pairs of integers), each (block, numerator,
denominator) hashed to 64 bits and a row's hashes added. Herman's rings
of 13 and 15 take 6 and 7 rounds. A hash collision could only merge states that are not
equivalent; :func:`lumped_problem` never uses a quotient without the exact check of
:func:`ladders.solver.checks.lumping.check_lumping`, which reads every transition
(and solves the chain whole where the check fails).

The quotient's states are the blocks in the order of their first state, named after
it (its representative); a block carries a label where all its states do; the start
is summed per block; the question's reward is kept (the representative's value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq

#: The ``--lump`` choices: ``auto`` lumps where :func:`worth_lumping` says it pays
#: and the quotient is at most :data:`LUMP_SHARE` of the chain; ``on`` always solves
#: the quotient (where it checks); ``off`` never lumps.
LUMP_MODES = ("auto", "on", "off")
#: ``auto`` solves the quotient only where it has at most this share of the states.
LUMP_SHARE = 0.5
#: ``auto`` tries a lumping only where the dense work of the solve without it (the sum
#: of k^3 over the strongly connected components of the states where the question
#: does not stop, k their sizes) exceeds this many times the transitions: measured
#: (2026-11-28, the shared 2-core machine), the components engine spends about 86 ns
#: a unit of that work (herman 9, 21 million: 1.8 s), a refinement round 25 to 50 ns
#: a transition (herman 13: 6 rounds of 1.6 million in 0.23 to 0.49 s), so below this ratio
#: :data:`AUTO_ROUNDS` rounds could cost more than the solve they would shorten.
#: Nearly acyclic chains (nand, egl, brp: components of one state) are far below it.
LUMP_RATIO = 32
#: Most rounds ``auto`` spends on a refinement before it gives up (every round reads
#: every transition: a chain that needs more is solved whole). The rounds were NumPy
#: sorts when :data:`LUMP_RATIO` was measured; compiled (:mod:`~ladders.solver.chains.refine`)
#: they cost about 14 ns a transition (crowds 6-20: 40 rounds of 38 million in 21 s).
AUTO_ROUNDS = 64


@dataclass(frozen=True)
class Lumping:
    """A chain lumped for one question: the chain it came from (``original``), the
    block of each of its states (``blocks``), the rounds of refinement and the
    seconds it took (the quotient itself is the problem's chain), and the exact check
    of the quotient against the original
    (:func:`~ladders.solver.checks.lumping.check_lumping`)."""

    original: Chain
    blocks: np.ndarray
    rounds: int
    seconds: float
    check: dict[str, object]

    @property
    def states(self) -> int:
        """States of the original chain."""
        return self.original.size

    @property
    def count(self) -> int:
        """Blocks: states of the quotient."""
        return int(self.blocks.max()) + 1 if len(self.blocks) else 0

    def describe(self) -> str:
        """``lumped 8,192 states into 188`` and how long it took."""
        return (f"lumped {self.states:,} states into {self.count:,} ({self.rounds} rounds of "
                f"refinement, {self.seconds:.2f} s; the quotient checked against every "
                "transition)")

    def to_json(self) -> dict[str, object]:
        return {"states": self.states, "blocks": self.count, "rounds": self.rounds,
                "seconds": round(self.seconds, 3), "check": self.check}


class Asked(Protocol):
    """What lumping reads of a problem (a
    :class:`~ladders.solver.chain_problem.ChainProblem`, a dataclass): its chain, its
    question, and whether it is lumped already."""

    chain: Chain
    question: Question
    lumping: Any



def stopping_states(chain: Chain, question: Question) -> np.ndarray:
    """Mask of the states where ``question`` stops (absorbing states for ``absorb``,
    the target's states otherwise): their rows are never read."""
    if question.kind == "absorb":
        return chain.absorbing.copy()
    return chain.label_mask(question.target)  # type: ignore[arg-type]


def initial_classes(chain: Chain, question: Question) -> np.ndarray:
    """The class of every state by what ``question`` reads of it (module docstring),
    numbered ``0 .. k-1``."""
    n = chain.size
    if question.kind == "absorb":
        key = np.zeros(n, dtype=np.int64)
        for g, members in enumerate(chain.end_names.values()):
            key[members] = g + 1
        return key
    target = chain.label_mask(question.target)  # type: ignore[arg-type]
    if question.kind == "reach" or question.reward is None:
        return target.astype(np.int64)
    if question.reward not in chain.rewards:
        known = ", ".join(sorted(chain.rewards)) or "none"
        raise ChainError(f"no reward {question.reward!r} in {chain.name}; its rewards: {known}")
    num, den = (np.asarray(a, dtype=np.int64) for a in chain.rewards[question.reward])
    g = np.gcd(num, den)
    g[g == 0] = 1
    pairs = np.stack([num // g, den // g], axis=1)
    pairs[target] = (-1, 0)
    _, key = np.unique(pairs, axis=0, return_inverse=True)
    return key.reshape(-1).astype(np.int64)


def _renumber(keys: list[np.ndarray], by_first: bool = True) -> tuple[np.ndarray, int]:
    """Block numbers ``0 .. m-1`` for the distinct rows of ``keys`` (arrays of equal
    length, one entry a state), and ``m``: in the order of each block's first state
    (``by_first``), else in the keys' sorted order (so that the blocks of a refinement
    keyed by the old block first are numbered within the old block's place)."""
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    order = np.lexsort(keys[::-1])
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for k in keys:
        ranked = k[order]
        new[1:] |= ranked[1:] != ranked[:-1]
    ids = np.cumsum(new) - 1
    m = int(ids[-1]) + 1
    block = np.empty(n, dtype=np.int64)
    if not by_first:
        block[order] = ids
        return block, m
    first = np.full(m, n, dtype=np.int64)
    np.minimum.at(first, ids, order)
    rank = np.empty(m, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(m, dtype=np.int64)
    block[order] = rank[ids]
    return block, m


@dataclass(frozen=True)
class _Rows:
    """The transitions of the rows a refinement reads (those where the question does
    not stop), as flat arrays: source row, destination and numerator."""

    rows: np.ndarray
    cols: np.ndarray
    nums: np.ndarray

    def sorted_by(self, block: np.ndarray, m: int) -> tuple[_Rows, np.ndarray]:
        """These transitions sorted by (row, block of the destination), and each one's
        key ``row * m + block``. A stable sort: where they were sorted by the blocks
        of the round before, and the new blocks are numbered within the old ones,
        only runs inside each (row, old block) are out of order, which the merge
        sort finds. The rows stay in increasing order (they lead the key), so only
        the destinations and numerators move, and the sorted keys are computed again
        from the destinations (a gather from the small array of blocks) rather than
        gathered (a ring of 15: 14 million transitions a round, memory bound)."""
        base = self.rows * m
        order = np.argsort(base + block[self.cols], kind="stable")
        cols = self.cols[order]
        return _Rows(self.rows, cols, self.nums[order]), base + block[cols]


def _live_rows(chain: Chain, stop: np.ndarray) -> _Rows:
    """The transitions of the rows where the question does not stop (the
    destinations in 32 bits where they fit: every round moves them)."""
    counts = np.diff(chain.indptr)
    rows = np.repeat(np.arange(chain.size, dtype=np.int64), counts)
    live = ~stop[rows]
    width = np.int32 if chain.size < 2 ** 31 else np.int64
    return _Rows(rows[live], np.asarray(chain.indices)[live].astype(width),
                 np.asarray(chain.numerators, dtype=np.int64)[live])


def _per_block(t: _Rows, key: np.ndarray, m: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row's numerators summed per block it reaches (over the row's own
    denominator), from transitions sorted by ``key`` (:meth:`_Rows.sorted_by`): the
    row, the block and the sum of each (row, block) pair, in that order."""
    if len(key) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    sums = np.add.reduceat(t.nums, starts)
    rows, targets = np.divmod(key[starts], m)
    return rows, targets, sums


def bisimulation(chain: Chain, question: Question, max_rounds: int | None = None,
                 max_blocks: int | None = None) -> tuple[np.ndarray, int] | None:
    """The coarsest lumping of ``chain`` that respects ``question`` (module
    docstring): the block of every state, numbered in the order of each block's first
    state, and the rounds it took. None where it is not done within ``max_rounds``
    rounds or already has more than ``max_blocks`` blocks (rounds only split blocks:
    it would end with more)."""
    from ladders.solver.chains.refine import refine_round, table_size
    live = ~stopping_states(chain, question)
    block, m = _renumber([initial_classes(chain, question)], by_first=False)
    arrays = (np.asarray(chain.indptr, dtype=np.int64), np.asarray(chain.indices, dtype=np.int64),
              np.asarray(chain.numerators, dtype=np.int64),
              np.asarray(chain.denominators, dtype=np.int64), live)
    new = np.empty(chain.size, dtype=np.int64)
    scratch = (np.empty(chain.size, dtype=np.uint64),
               np.empty(table_size(chain.size), dtype=np.int32 if chain.size < 1 << 31 else np.int64))
    rounds = 0
    while True:
        if max_blocks is not None and m > max_blocks:
            return None
        if max_rounds is not None and rounds >= max_rounds:
            return None
        rounds += 1
        count = refine_round(*arrays, block, new, *scratch)
        if count == m:
            return _renumber([block])[0], rounds
        block, new, m = new, block, count


class _Representatives(Sequence[str]):
    """The quotient's state names: each block's first state's name, asked of the
    original's names only when a name is asked for (a model's names are written on
    demand, and cost far more than the lumping)."""

    def __init__(self, names: Sequence[str], reps: np.ndarray) -> None:
        self._names, self._reps = names, reps

    def __len__(self) -> int:
        return len(self._reps)

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if isinstance(i, slice):
            return [self._names[int(r)] for r in self._reps[i].tolist()]
        return self._names[int(self._reps[i])]


def quotient(chain: Chain, question: Question, blocks: np.ndarray) -> Chain:
    """The chain of the blocks (module docstring): block b's row is its first state's
    row summed per block (an absorbing row where the question stops)."""
    m = int(blocks.max()) + 1
    n = chain.size
    reps = np.full(m, n, dtype=np.int64)
    np.minimum.at(reps, blocks, np.arange(n, dtype=np.int64))
    stop = stopping_states(chain, question)
    rep_mask = np.zeros(n, dtype=bool)
    rep_mask[reps] = True
    t, key = _live_rows(chain, stop | ~rep_mask).sorted_by(blocks, m)
    rows, targets, sums = _per_block(t, key, m)
    source = blocks[rows]
    stopped = np.flatnonzero(stop[reps])
    source = np.concatenate([source, stopped])
    targets = np.concatenate([targets, stopped])
    sums = np.concatenate([sums, np.ones(len(stopped), dtype=np.int64)])
    order = np.lexsort((targets, source))
    source, targets, sums = source[order], targets[order], sums[order]
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(source, minlength=m), out=indptr[1:])
    dens = np.asarray(chain.denominators, dtype=np.int64)[reps].copy()
    dens[stopped] = 1
    sizes = np.bincount(blocks, minlength=m)
    labels = {}
    for name, members in chain.labels.items():
        inside = np.bincount(blocks[np.asarray(members, dtype=np.int64)], minlength=m)
        labels[name] = np.flatnonzero(inside == sizes).astype(np.int64)
    rewards = {}
    if question.kind == "reward" and question.reward is not None:
        num, den = chain.rewards[question.reward]
        rewards[question.reward] = (np.asarray(num, dtype=np.int64)[reps].copy(),
                                    np.asarray(den, dtype=np.int64)[reps].copy())
    start: dict[int, mpq] = {}
    for i, p in chain.start:
        b = int(blocks[i])
        start[b] = start.get(b, mpq(0)) + p
    return Chain(name=chain.name, states=_Representatives(chain.states, reps),
                 indptr=indptr, indices=targets, numerators=sums, denominators=dens,
                 start=tuple(sorted(start.items())), labels=labels, rewards=rewards,
                 notes=chain.notes)


def worth_lumping(problem: Asked) -> bool:
    """Whether ``auto`` tries a lumping: where the dense work of solving the chain
    whole is more than :data:`LUMP_RATIO` times its transitions (see there), its
    components found on the chain's own transitions between the states where the
    question does not stop (Tarjan's algorithm, one compiled pass)."""
    from ladders.solver.chains.components import strong_components
    chain = problem.chain
    keep = ~stopping_states(chain, problem.question)
    indices = np.asarray(chain.indices, dtype=np.int64)
    rows = np.repeat(np.arange(chain.size, dtype=np.int64), np.diff(chain.indptr))
    inside = keep[rows] & keep[indices]
    indptr = np.zeros(chain.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[inside], minlength=chain.size), out=indptr[1:])
    sizes = strong_components(indptr, indices[inside]).sizes.astype(np.float64)
    return float(np.sum(sizes ** 3)) > LUMP_RATIO * max(chain.nnz, 1)
