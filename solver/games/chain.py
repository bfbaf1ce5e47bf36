"""One player's absorbing Markov chain, and the exact one-player answers that need no
solve (the moment system is solved in :mod:`ladders.solver.answers`).

Notation (used across `ladders`):

- ``d``        the number of die faces; every transition probability is ``count / d``.
- ``Q``        transient-to-transient transition matrix of one player's chain,
               ``Q[s, s'] = C[s, s'] / d`` with integer counts ``C``.
- ``R``        transient-to-finish probabilities, ``R[s] = e[s] / d`` (``e``: faces that finish).
- ``f(t)``     probability that a game from the start ends exactly on throw t.
- ``F(t)``     ``sum_{u<=t} f(u)``, finished within t throws; ``S(t) = 1 - F(t-1)``.
- ``L``        expected length ``E[T] = sum t f(t)``; ``Var = E[T^2] - L^2``.
- ``D(s)``     fewest throws to finish from square s.
- ``E(s)``     expected remaining throws from square s: ``(I - Q) E = 1``.
- ``P(a, b)``  two players: probability that the player to move wins, on square a with
               the opponent on square b.

Integer scaling: ``f(t) = a_t / d^t`` and ``1 - F(t) = s_t / d^t`` with integers
``a_t``, ``s_t``. Iterating integer count vectors ``v_{t+1} = v_t C`` keeps every step
exact without a single fraction; the bounds of :mod:`ladders.solver.checks.bounds` rely on it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ladders.solver.games.board import Board, reachable_squares
from ladders.solver.exact import mpq, mpz, ratio_to_decimal, xmpz
from ladders.solver.system import LinearSystem


@dataclass(frozen=True)
class AbsorbingChain:
    """One player's chain on a board: transient squares, counts ``C`` and finishing faces ``e``.

    ``moves[i]`` lists ``(j, count)``: from transient state i, ``count`` faces lead to
    transient state j. ``finish[i]`` faces finish the game.
    """

    board: Board
    states: tuple[int, ...]
    moves: tuple[tuple[tuple[int, int], ...], ...]
    finish: tuple[int, ...]

    @property
    def die(self) -> int:
        return self.board.die

    @cached_property
    def index(self) -> dict[int, int]:
        """Square -> state index."""
        return {s: i for i, s in enumerate(self.states)}

    @property
    def start_index(self) -> int:
        return self.index[self.board.start]

    @cached_property
    def next_table(self) -> np.ndarray:
        """``next_table[i, r-1]``: state index after roll r from state i, or -1 (finished)."""
        board = self.board
        table = np.empty((len(self.states), board.die), dtype=np.int64)
        for i, s in enumerate(self.states):
            for r in range(1, board.die + 1):
                t = board.move(s, r)
                table[i, r - 1] = -1 if t == board.end else self.index[t]
        return table


def build_chain(board: Board) -> AbsorbingChain:
    """The chain of one player on ``board`` (transient squares: reachable, not the end)."""
    states = tuple(sorted(s for s in reachable_squares(board) if s != board.end))
    index = {s: i for i, s in enumerate(states)}
    moves = []
    finish = []
    for s in states:
        counts: dict[int, int] = {}
        done = 0
        for r in range(1, board.die + 1):
            t = board.move(s, r)
            if t == board.end:
                done += 1
            else:
                counts[index[t]] = counts.get(index[t], 0) + 1
        moves.append(tuple(sorted(counts.items())))
        finish.append(done)
    return AbsorbingChain(board=board, states=states, moves=tuple(moves), finish=tuple(finish))


def throw_counts(chain: AbsorbingChain, v: list) -> tuple[list[xmpz], xmpz]:
    """One throw of an integer walk: ``(v C, v e)``, the counts on each transient square
    and the finishing ones, for integer (or integer-scaled) ``v``.

    The sums are gmpy2 ``xmpz``, added to in place: a throw is some 500 additions of
    numbers of ``t log2(d)`` bits, and a new ``mpz`` for each (and a product for the
    single faces, almost all of them) made the walk 2.4 times as slow (hasbro, 19,008
    throws)."""
    moves, finish = chain.moves, chain.finish
    new = [xmpz(0) for _ in range(len(v))]
    absorbed = xmpz(0)
    for i, vi in enumerate(v):
        if not vi:
            continue
        for j, c in moves[i]:
            if c == 1:
                new[j] += vi
            else:
                new[j] += vi * c
        if finish[i]:
            absorbed += vi * finish[i]
    return new, absorbed


#: Throws after which :func:`iter_throws` goes on by the recurrence of the
#: characteristic polynomial of C instead of the walk (at least n, the order of C);
#: before, the walk is cheaper than importing flint for that polynomial (about 40 ms).
RECURRENCE_AFTER = 1024
#: Most transient states for which it does: the characteristic polynomial of a larger
#: C (flint) and a recurrence of its order stop paying for themselves.
RECURRENCE_STATES = 200


def survival_recurrence(chain: AbsorbingChain) -> tuple[mpz, ...]:
    """``(c_1, ..., c_n1)`` with ``s_t = sum_i c_i s_(t-i)`` for every ``t >= n``.

    Cayley-Hamilton: with ``det(xI - C) = sum_i h_i x^i = x^z (x^n1 + ...)`` (n states,
    the root 0 z times), ``u C^t h(C) 1 = 0``, so ``sum_i h_i s_(t+i) = 0`` for every
    ``t >= 0``, and ``c_i = -h_(n-i)``. The same polynomial annihilates ``a_t``."""
    from ladders.solver.exact_flint import array_to_fmpz_mat, fmpz_poly_to_ints
    n = len(chain.states)
    counts = np.zeros((n, n), dtype=np.int64)
    for i, row in enumerate(chain.moves):
        for j, c in row:
            counts[i, j] += c
    h = fmpz_poly_to_ints(array_to_fmpz_mat(counts).charpoly())
    z = next(i for i, c in enumerate(h) if c != 0)
    return tuple(mpz(-h[n - i]) for i in range(1, n - z + 1))


def iter_throws(chain: AbsorbingChain) -> Iterator[tuple[mpz, mpz]]:
    """Yield ``(a_t, s_t)`` for t = 1, 2, ...: ``f(t) = a_t/d^t``, ``1 - F(t) = s_t/d^t``.

    The integer vector ``v`` holds ``d^t`` times the probability of being on each
    transient square after t throws (:func:`throw_counts`). After
    :data:`RECURRENCE_AFTER` throws (boards of at most :data:`RECURRENCE_STATES`
    states) ``s_t`` comes from the last n1 values by :func:`survival_recurrence` and
    ``a_t = d s_(t-1) - s_t`` (``f(t) = S(t) - S(t+1)``): on hasbro 77 products by
    one-word integers a throw instead of some 500 additions, and 19,008 throws (the
    bounds of 3 players to 1,000 digits) in 0.7 s instead of 2.3 s.
    """
    n = len(chain.states)
    v: list = [mpz(0)] * n
    v[chain.start_index] = mpz(1)
    zero = mpz(0)
    recent: deque[mpz] = deque(maxlen=n)
    switch = max(RECURRENCE_AFTER, n) if n <= RECURRENCE_STATES else -1
    t = 0
    while t != switch:
        v, absorbed = throw_counts(chain, v)
        s = mpz(sum(v, zero))
        recent.append(s)
        t += 1
        yield mpz(absorbed), s
    coefs = survival_recurrence(chain)[::-1]     # c_n1 .. c_1, against s_(t-n1) .. s_(t-1)
    last = deque(recent, maxlen=len(coefs))       # (n1 = 0: every game is over by now)
    d, prev = chain.die, recent[-1]
    while True:
        acc = xmpz(0)
        for c, x in zip(coefs, last):
            acc += x * c
        s = mpz(acc)
        last.append(s)
        yield d * prev - s, s
        prev = s


#: Most throws ``ladders stats`` lists (a line each: 100,000 take hasbro about 4 s).
MAX_THROWS = 100_000
#: Most characters of exact fractions ``ladders stats --json`` prints: f(t) and F(t) are
#: fractions of about ``t log10(d)`` digits over as many, so t = 1..T come to about
#: ``2 T^2 log10(d)`` characters (a six-sided die: 5,668 throws, about 4 s).
MAX_EXACT_CHARS = 50_000_000


def throws_limit(chain: AbsorbingChain, exact: bool) -> int:
    """Most throws :func:`check_throws` accepts: :data:`MAX_THROWS` lines, or with exact
    fractions :data:`MAX_EXACT_CHARS` characters of them."""
    if not exact:
        return MAX_THROWS
    return min(MAX_THROWS, max(1, math.isqrt(int(MAX_EXACT_CHARS / (2 * math.log10(max(chain.die, 2)))))))


def check_throws(chain: AbsorbingChain, throws: int, exact: bool) -> None:
    """Refuse a distribution of more throws than :func:`throws_limit` (``ValueError``
    naming the value, the limit and why)."""
    limit = throws_limit(chain, exact)
    if throws > limit:
        why = (f"every f(t) and F(t) is printed exactly, about {MAX_EXACT_CHARS // 10**6:,} MB "
               f"at that limit" if exact else "a line each")
        raise ValueError(f"--throws {throws:,}: at most {limit:,} on this board ({why}); "
                         "ask for fewer throws")


def length_distribution(chain: AbsorbingChain, throws: int) -> list[tuple[mpq, mpq]]:
    """``[(f(t), F(t)) for t = 1..throws]``, exact."""
    out = []
    d = chain.die
    total = mpz(0)
    scale = mpz(1)
    for _t, (a, _s) in zip(range(throws), iter_throws(chain)):
        scale *= d
        total = total * d + a
        out.append((mpq(a, scale), mpq(total, scale)))
    return out


def length_decimals(chain: AbsorbingChain, throws: int, places: int) -> Iterator[tuple[str, str]]:
    """``(f(t), F(t))`` as decimals truncated to ``places``, t = 1..throws, with no fraction
    built: what ``ladders stats`` prints. Exact integers (as :func:`iter_throws`) until
    ``1 - F(t) < 10^-places``; from then on every ``f(t)`` truncates to zero and ``F(t)``
    to ``0.99...9`` while a game can still be running (``1.00...0`` once none can), so
    only which squares can still be occupied is followed. ``stats --throws 20000`` on
    hasbro: 19 s and 919 MB of fractions before, the first 470 throws exact now."""
    v = [mpz(0)] * len(chain.states)
    v[chain.start_index] = mpz(1)
    moves, finish = chain.moves, chain.finish
    scale, total, ten = mpz(1), mpz(0), mpz(10) ** places
    t = 0
    while t < throws:
        t += 1
        new = [mpz(0)] * len(v)
        absorbed = mpz(0)
        for i, vi in enumerate(v):
            if vi:
                for j, c in moves[i]:
                    new[j] += vi * c
                absorbed += vi * finish[i]
        v = new
        scale *= chain.die
        total = total * chain.die + absorbed
        yield ratio_to_decimal(absorbed, scale, places), ratio_to_decimal(total, scale, places)
        if (scale - total) * ten < scale:
            break
    alive = {i for i, vi in enumerate(v) if vi}
    zero, one = ratio_to_decimal(0, 1, places), ratio_to_decimal(1, 1, places)
    below_one = "0." + "9" * places if places else "0"
    while t < throws:
        t += 1
        alive = {j for i in alive for j, _ in moves[i]}
        yield zero, below_one if alive else one


def moment_system(chain: AbsorbingChain) -> LinearSystem:
    """``d E(s) - sum_s' C[s,s'] E(s') = d``, the same matrix for the second moment
    (:func:`ladders.solver.answers.one_player_stats` solves both)."""
    n = len(chain.states)
    d = chain.die
    entries: list[list[tuple[int, int]]] = []
    for i in range(n):
        row = {i: d}
        for j, c in chain.moves[i]:
            row[j] = row.get(j, 0) - c
        entries.append(sorted(row.items()))
    return LinearSystem.from_rows(entries, np.full((n, 1), d, dtype=np.int64),
                                  labels=[(s,) for s in chain.states],
                                  target=chain.start_index, description="expected remaining throws")


@dataclass(frozen=True)
class OnePlayerStats:
    """Exact one-player answers: ``E(s)``, ``E[T^2 | s]``, ``D(s)`` for every square."""

    expected_remaining: dict[int, mpq]
    second_moment: dict[int, mpq]
    min_throws: dict[int, int]
    start: int

    @property
    def expected_length(self) -> mpq:
        """``L = E(start)``."""
        return self.expected_remaining[self.start]

    @property
    def variance(self) -> mpq:
        """``Var = E[T^2] - L^2``."""
        return self.second_moment[self.start] - self.expected_length ** 2


def min_throws(chain: AbsorbingChain) -> dict[int, int]:
    """``D(s)``: fewest throws to finish from each transient square (breadth-first search)."""
    n = len(chain.states)
    back: list[list[int]] = [[] for _ in range(n)]
    dist = [-1] * n
    todo: deque[int] = deque()
    for i in range(n):
        for j, _c in chain.moves[i]:
            back[j].append(i)
        if chain.finish[i]:
            dist[i] = 1
            todo.append(i)
    while todo:
        j = todo.popleft()
        for i in back[j]:
            if dist[i] < 0:
                dist[i] = dist[j] + 1
                todo.append(i)
    return {s: dist[i] for i, s in enumerate(chain.states)}
