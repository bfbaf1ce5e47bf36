"""Another Game: the coin-and-dice game of SPEC 1.3, solved exactly.

Players A and B hold coins, the pot holds the rest (``a + b + pot = total``). They
alternate, A first, each rolling one die:

- 1: nothing;  2: take the whole pot;  3: take half the pot rounded down (nothing with
  a pot of 0 or 1);  4, 5, 6: put one coin in the pot, and a player who must pay but
  has no coin loses.

A cycle is A's turn then B's; the cycle in which a player loses counts in full, so the
number of cycles is the number of turns A takes. With ``E_A(a, b)`` (A to move) and
``E_B(a, b)`` (B to move) the expected cycles still to come, first-step analysis gives

    6 E_A(s) - sum_{s'} E_B(s') = 6,      6 E_B(s) - sum_{s'} E_A(s') = 0,

summing over the faces that do not end the game. The same matrix with other right-hand
sides gives A's win probability and the probability of each final state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ladders.solver.exact import mpq, mpz
from ladders.solver.system import LinearSystem

FACES = 6
#: Most coins in play (A's, B's and the pot's): 2 x 861 unknowns, `ladders coins` about 6 s
#: (the time grows about as the fifth power of the coins).
MAX_COINS = 40


@dataclass(frozen=True)
class CoinGame:
    """Starting coins of A and B and the pot; the total stays constant."""

    a: int = 4
    b: int = 4
    pot: int = 2

    def __post_init__(self) -> None:
        for name in ("a", "b", "pot"):
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"--{name} {value}: coins cannot be negative")
        if self.total == 0:
            raise ValueError("no coins in play: give A, B or the pot at least one coin")
        if self.total > MAX_COINS:
            raise ValueError(f"{self.total:,} coins in play (--a {self.a} --b {self.b} --pot "
                             f"{self.pot}): the limit is {MAX_COINS} (their system grows as the "
                             "square of the coins, its solve as the fifth power); use fewer coins")

    @property
    def total(self) -> int:
        return self.a + self.b + self.pot


def turn_outcomes(mine: int, other: int, pot: int) -> list[tuple[int, int, int] | None]:
    """For the player to move with ``mine`` coins: the state after each face 1..6.

    States are ``(mine, other, pot)`` after the move; ``None`` means the mover lost.
    """
    out: list[tuple[int, int, int] | None] = []
    for face in range(1, FACES + 1):
        if face == 1:
            out.append((mine, other, pot))
        elif face == 2:
            out.append((mine + pot, other, 0))
        elif face == 3:
            half = pot // 2
            out.append((mine + half, other, pot - half))
        elif mine == 0:
            out.append(None)
        else:
            out.append((mine - 1, other, pot + 1))
    return out


@dataclass(frozen=True)
class CoinAnswers:
    """Exact answers of Another Game; keys of ``by_start`` are ``(a, b)`` with A to move."""

    game: CoinGame
    expected_cycles: dict[tuple[int, int], mpq]
    win_a: dict[tuple[int, int], mpq]
    final_states: dict[str, mpq]
    distribution: list[mpq]

    @property
    def start(self) -> tuple[int, int]:
        return (self.game.a, self.game.b)


def _index(total: int) -> dict[tuple[int, int, int], int]:
    """Unknown index of (mover, a, b): mover 0 = A to move, 1 = B to move."""
    pairs = [(a, b) for a in range(total + 1) for b in range(total + 1 - a)]
    return {(m, a, b): i for i, (m, (a, b)) in enumerate(
        (m, p) for m in (0, 1) for p in pairs)}


def _step(mover: int, a: int, b: int, total: int) -> list[tuple[int, int, int] | str]:
    """Successor (mover, a, b) of each face, or the final-state name when the mover loses."""
    pot = total - a - b
    mine, other = (a, b) if mover == 0 else (b, a)
    out: list[tuple[int, int, int] | str] = []
    for res in turn_outcomes(mine, other, pot):
        if res is None:
            loser = "A" if mover == 0 else "B"
            out.append(f"{loser} loses: A{a}B{b} pot {pot}")
        else:
            m2, o2, _ = res
            na, nb = (m2, o2) if mover == 0 else (o2, m2)
            out.append((1 - mover, na, nb))
    return out


@dataclass(frozen=True)
class CoinSystem:
    """Another Game's first-step equations: ``system`` (every state's expected cycles
    and A's win, two right-hand sides), ``transposed`` (``A^T y = e_start``: the
    expected visits of every state from the start) and the final states' right-hand
    sides (column k of ``final_rhs`` for ``finals[k]``)."""

    labels: list[tuple[int, int, int]]
    system: LinearSystem
    transposed: LinearSystem
    finals: list[str]
    final_rhs: np.ndarray


def coins_system(game: CoinGame) -> CoinSystem:
    """The game's system (``2 (total+1)(total+2)/2`` unknowns, one a state and mover),
    solved by :func:`ladders.solver.answers.solve_coins`."""
    total = game.total
    index = _index(total)
    labels = sorted(index, key=index.get)
    finals: list[str] = []
    for key in labels:
        for res in _step(*key, total):
            if isinstance(res, str) and res not in finals:
                finals.append(res)
    rows = []
    rhs = np.zeros((len(labels), 2 + len(finals)), dtype=np.int64)
    for i, (mover, a, b) in enumerate(labels):
        row = {i: FACES}
        for res in _step(mover, a, b, total):
            if isinstance(res, str):
                rhs[i, 2 + finals.index(res)] += 1
                if res.startswith("B"):
                    rhs[i, 1] += 1  # A wins when B loses
            else:
                j = index[res]
                row[j] = row.get(j, 0) - 1
        if mover == 0:
            rhs[i, 0] = FACES  # each of A's turns starts a cycle
        rows.append(list(row.items()))
    start = index[(0, game.a, game.b)]
    system = LinearSystem.from_rows(rows, rhs[:, :2], labels, target=start,
                                    description=f"Another Game, {total} coins")
    # The final states are wanted from the start only: P(final f) = e_start^T A^-1 r_f
    # = y . r_f with A^T y = e_start, one solve of the transposed system instead of one
    # per final state (there are about total^2 / 2 of them).
    transposed: list[list[tuple[int, int]]] = [[] for _ in rows]
    for i, row in enumerate(rows):
        for j, v in row:
            transposed[j].append((i, v))
    return CoinSystem(labels, system, LinearSystem.from_rows(
        transposed, np.eye(1, len(rows), start, dtype=np.int64).T, labels, target=start,
        description=f"Another Game, {total} coins, transposed"), finals, rhs[:, 2:])


def cycle_distribution(game: CoinGame, cycles: int,
                       progress: Callable[[int, int], None] | None = None) -> list[mpq]:
    """``P(N = n)`` for n = 1..cycles: the game ends in cycle n (exact, integer-scaled);
    ``progress(n, cycles)`` after every cycle."""
    total = game.total
    v: dict[tuple[int, int, int], mpz] = {(0, game.a, game.b): mpz(1)}
    out = []
    scale = mpz(1)  # weights in v are numerators over scale = 6^(turns so far)
    for _ in range(cycles):
        ended = mpz(0)
        for _half in range(2):
            new: dict[tuple[int, int, int], mpz] = {}
            ended *= FACES
            for key, w in v.items():
                for res in _step(*key, total):
                    if isinstance(res, str):
                        ended += w
                    else:
                        new[res] = new.get(res, mpz(0)) + w
            v = new
            scale *= FACES
        out.append(mpq(ended, scale))
        if progress is not None:
            progress(len(out), cycles)
    return out
