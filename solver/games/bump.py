"""Pieces that meet: the joint chain of a race under the bump rule (SPEC.md 5.3).

Notation as in :mod:`ladders.solver.games.chain`: ``d`` die faces, ``C[s, s']`` the
faces that take one piece from transient square s to s' (the die, the overshoot rule,
then any jump), ``e[s]`` the faces that finish from s, ``s0`` the start square.

With k players (seats 1..k) a state is ``(s_1, ..., s_k | t)``: seat j's piece on
square ``s_j``, seat t to move. A throw of seat t takes its piece to some s'. If s' is
the end, seat t wins: the absorbing state ``seat t wins``. Otherwise every other piece
on s' goes back to ``s0`` (unless ``s' = s0``), and seat ``t + 1`` (seat 1 after seat
k) moves next. So

    ``P((s | t), (bump(s, t, s') | t + 1)) = C[s_t, s'] / d``,
    ``P((s | t), seat t wins) = e[s_t] / d``:

integer counts over the die, as for one piece. Distinct s' give distinct states (the
mover's square differs), so no two faces' counts need merging beyond ``C``'s. After
any move no two pieces share a square other than ``s0``, so the chain has at most
``n^k k`` transient states for n transient squares, most of them reachable (two
players on ``hasbro``: 13,122 codes, 12,801 of them reachable).

Pieces that meet are not independent: their problem offers no one piece's chain
(``pieces`` is None), so the series engine and the race bounds decline it, and only the
engines that solve a chain's system apply (:mod:`ladders.solver.chains.questions`).

Construction, vectorized: a state is the integer code ``((a_0 n + a_1) n + ... +
a_(k-1)) k + (t - 1)``, with ``a_i`` the square index (one player's transient squares
in increasing order) of the piece that moves i turns from now: the mover's first. A
throw then only rotates the view, ``(a_0, ..., a_(k-1)) -> (a_1', ..., a_(k-1)', a_0')``
(the primes: after the move and the bump), and ``t -> t + 1``. A breadth-first search
from the start expands a whole frontier at once with NumPy, marking the codes seen in
a dense array of ``n^k k`` flags. The reachable codes in increasing order are the
transient states, the winning states follow. The engines' pivot orders eliminate the
largest index first: the mover's piece farthest along first, then the next mover's,
as the race's ``turn`` form in its ``labels`` order. Measured (LU factors of the
modular engine): 2.55 M nonzeros on ``hasbro`` with two players against 3.53 M with
the pieces in seat order (seat 1's square first), 271 K against 440 K with three
players on ``hasbro`` cut at 14.

The rows are made as integer arrays and the :class:`Chain` directly, each row over its
least common denominator as :class:`~ladders.solver.chains.model.ChainBuilder` would
store it (the tests check that both give the same digest): the builder's checks are
for rows read from files, at some 2 us a transition in Python (three players on
``hasbro`` cut at 30, 321,387 transitions: 0.70 s against 0.13 s for the whole chain
here; on the full board 8.9 M transitions, 6 s here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ladders.solver.chains.model import MAX_STATES, Chain
from ladders.solver.exact import mpq
from ladders.solver.games.board import Board
from ladders.solver.games.chain import AbsorbingChain, build_chain

#: Most players of a race (SPEC.md 1.4).
MAX_PLAYERS = 6
#: Codes expanded at once: bounds the NumPy temporaries at about ``CHUNK d k`` words.
CHUNK = 1 << 18


def bump_chain(board: Board, players: int) -> Chain:
    """The joint chain of ``players`` pieces racing on ``board`` under the bump rule
    (the module docstring), whatever ``board.meet`` says: states ``"12,40|2"`` (the
    pieces' squares, the seat to move), absorbing states ``"seat j wins"`` labelled so,
    the start every piece on the start square with seat 1 to move; only the states
    reachable from it. ``ValueError`` for a player count outside 1..6 or a chain over
    :data:`~ladders.solver.chains.model.MAX_STATES` states."""
    return joint_chain(board, players, bump=True)


def joint_chain(board: Board, players: int, bump: bool) -> Chain:
    """The joint chain of ``players`` pieces on ``board``, as :func:`bump_chain` says,
    with the bump (``bump``) or without: pieces that never meet, the race's joint chain
    (:func:`ladders.solver.games.race.race_chain`)."""
    if not 1 <= players <= MAX_PLAYERS:
        raise ValueError(f"a race {'under the bump rule ' if bump else ''}has 1 to "
                         f"{MAX_PLAYERS} players, got {players}")
    one = build_chain(board)
    n, k = len(one.states), players
    if n ** k * k > MAX_STATES:
        raise ValueError(f"{k} players on {n} squares: up to {n ** k * k:,} states "
                         f"({n}^{k} x {k}), more than the {MAX_STATES:,} a chain may have")
    moves = _MoveTable.of(one, bump)
    codes = _reachable(moves, k)
    return _assemble(board, one, moves, k, codes)


@dataclass(frozen=True)
class _MoveTable:
    """One piece's moves as arrays: ``targets[i, c]`` the c-th square index reached from
    index i (-1 past the last), ``counts[i, c]`` its faces ``C``, ``finish[i] = e``;
    ``squares`` = n, ``start`` the index of ``s0``; ``bump``: whether a piece landing
    on others sends them back (else they never meet)."""

    targets: np.ndarray
    counts: np.ndarray
    finish: np.ndarray
    squares: int
    start: int
    bump: bool = True

    @classmethod
    def of(cls, one: AbsorbingChain, bump: bool = True) -> _MoveTable:
        n = len(one.states)
        width = max(1, max(len(row) for row in one.moves))
        targets = np.full((n, width), -1, dtype=np.int64)
        counts = np.zeros((n, width), dtype=np.int64)
        for i, row in enumerate(one.moves):
            for c, (j, count) in enumerate(row):
                targets[i, c], counts[i, c] = j, count
        return cls(targets, counts, np.array(one.finish, dtype=np.int64), n, one.start_index,
                   bump)

    def successors(self, codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each code (rows) and each of its mover's targets (columns): the next
        code (-1 where the column is padding); and each code's mover, its square
        index and seat index ``t - 1``."""
        n, s0 = self.squares, self.start
        t = codes % k
        view = _view(codes, n, k)
        land = self.targets[view[:, 0]]                             # (codes, width)
        # the bump: the others on the landing square go back to the start (nothing
        # happens on the start square), then the view turns to the next mover
        others = np.repeat(view[:, None, 1:], land.shape[1], axis=1)  # (codes, width, k-1)
        if self.bump:
            others[(others == land[:, :, None]) & (land[:, :, None] != s0)] = s0
        out = np.zeros(land.shape, dtype=np.int64)
        for j in range(k - 1):
            out = out * n + others[:, :, j]
        out = (out * n + land) * k + ((t + 1) % k)[:, None]
        out[land < 0] = -1
        return out, view[:, 0], t


def _view(codes: np.ndarray, n: int, k: int) -> np.ndarray:
    """The square indices ``a_0 .. a_(k-1)`` of ``codes`` (the mover's first)."""
    rest = codes // k
    view = np.empty((len(codes), k), dtype=np.int64)
    for j in range(k - 1, -1, -1):
        view[:, j] = rest % n
        rest //= n
    return view


def _reachable(moves: _MoveTable, k: int) -> np.ndarray:
    """The codes reachable from the start, in increasing order (breadth-first, a
    frontier at a time)."""
    seen = np.zeros(moves.squares ** k * k, dtype=bool)
    start = _start_code(moves, k)
    seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    while frontier.size:
        found = []
        for lo in range(0, frontier.size, CHUNK):
            nxt, _, _ = moves.successors(frontier[lo:lo + CHUNK], k)
            nxt = nxt[nxt >= 0]
            found.append(nxt[~seen[nxt]])
        frontier = np.unique(np.concatenate(found))
        seen[frontier] = True
    return np.flatnonzero(seen)


def _start_code(moves: _MoveTable, k: int) -> int:
    """Every piece on the start square, seat 1 to move."""
    code = 0
    for _ in range(k):
        code = code * moves.squares + moves.start
    return code * k


def _assemble(board: Board, one: AbsorbingChain, moves: _MoveTable, k: int,
              codes: np.ndarray) -> Chain:
    """The :class:`Chain` of the reachable ``codes``: transient states in code order,
    then the reachable ``seat j wins``. Each row is ``C / d`` reduced by the gcd of
    its counts and ``d`` (as :class:`~ladders.solver.chains.model.ChainBuilder`
    stores a row: over the least common denominator)."""
    m = len(codes)
    nxt = np.empty((m, moves.targets.shape[1]), dtype=np.int64)
    mover = np.empty(m, dtype=np.int64)
    seat = np.empty(m, dtype=np.int64)
    for lo in range(0, m, CHUNK):
        hi = lo + CHUNK
        nxt[lo:hi], mover[lo:hi], seat[lo:hi] = moves.successors(codes[lo:hi], k)
    counts = moves.counts[mover]
    wins = moves.finish[mover]
    winners = np.unique(seat[wins > 0])            # the seats that can win, in order
    win_state = np.full(k, -1, dtype=np.int64)
    win_state[winners] = m + np.arange(len(winners))
    # columns: the transient successors (found among the codes), then the win
    valid = nxt >= 0
    cols = np.where(valid, np.searchsorted(codes, np.where(valid, nxt, 0)), -1)
    cols = np.concatenate([cols, np.where(wins > 0, win_state[seat], -1)[:, None]], axis=1)
    nums = np.concatenate([counts, wins[:, None]], axis=1)
    order = np.argsort(np.where(cols >= 0, cols, np.iinfo(np.int64).max), axis=1, kind="stable")
    cols = np.take_along_axis(cols, order, axis=1)
    nums = np.take_along_axis(nums, order, axis=1)
    keep = cols >= 0
    g = np.gcd.reduce(np.concatenate([nums, np.full((m, 1), board.die)], axis=1), axis=1)
    total = m + len(winners)
    indptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(np.concatenate([keep.sum(axis=1), np.ones(len(winners), dtype=np.int64)]),
              out=indptr[1:])
    indices = np.concatenate([cols[keep], m + np.arange(len(winners))])
    numerators = np.concatenate([(nums // g[:, None])[keep], np.ones(len(winners), dtype=np.int64)])
    denominators = np.concatenate([board.die // g, np.ones(len(winners), dtype=np.int64)])
    if not np.array_equal(np.add.reduceat(numerators, indptr[:-1]), denominators):
        raise AssertionError("a row of the joint chain does not sum to 1")
    names = _state_names(one, codes, k) + [f"seat {j + 1} wins" for j in winners.tolist()]
    start = int(np.searchsorted(codes, _start_code(moves, k)))
    rule = "bump rule" if moves.bump else "pieces that never meet"
    return Chain(name=f"{board.name}: {k} player{'s' if k > 1 else ''}, {rule}",
                 states=tuple(names), indptr=indptr, indices=indices, numerators=numerators,
                 denominators=denominators, start=((start, mpq(1)),),
                 labels={f"seat {j + 1} wins": np.array([m + c], dtype=np.int64)
                         for c, j in enumerate(winners.tolist())})


def _state_names(one: AbsorbingChain, codes: np.ndarray, k: int) -> list[str]:
    """``"12,40|2"``: the pieces' squares in seat order, then the seat to move."""
    squares = np.array(one.states, dtype=np.int64)
    t = codes % k
    view = _view(codes, len(one.states), k)
    pos = np.empty_like(view)
    rows = np.arange(len(codes))
    for i in range(k):                      # a_i is the square of seat t + i
        pos[rows, (t + i) % k] = squares[view[:, i]]
    return [",".join(map(str, row)) + f"|{s + 1}" for row, s in zip(pos.tolist(), t.tolist())]
