"""One player's chain as exact data and the splits of a k-seat sum
(:mod:`ladders.solver.engines.series.algebra`): the split chosen is the cheap one."""

from __future__ import annotations

from ladders.solver.engines import series
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain


def test_split_choice_prefers_cheap_splits():
    chain = build_chain(preset_board("hasbro"))
    data = series.chain_data(chain)
    assert series.choose_split(data, 2).s == 0
    assert series.choose_split(data, 3).s == 0
    assert series.choose_split(data, 4).s == 1
