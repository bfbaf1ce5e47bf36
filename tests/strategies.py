"""Hypothesis strategy for random small playable boards (any rule, any die)."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from ladders.solver.games.board import Board, BoardError, make_board


@st.composite
def small_boards(draw: st.DrawFn, max_end: int = 9, dice: tuple[int, int] = (1, 6)) -> Board:
    """A playable board: 3..max_end squares, a die of dice[0]..dice[1] faces, any
    overshoot rule, up to 3 jumps."""
    end = draw(st.integers(3, max_end))
    die = draw(st.integers(*dice))
    rule = draw(st.sampled_from(["stay", "bounce", "pass"]))
    jumps = draw(st.lists(st.tuples(st.integers(1, end - 1), st.integers(0, end)),
                          max_size=3, unique_by=lambda j: j[0]))
    try:
        return make_board("random", 0, end, die, rule, jumps)
    except BoardError:
        assume(False)
        raise
