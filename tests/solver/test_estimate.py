"""Sizing races before solving them: ``ladders.solver.estimate`` (``ladders plan``, which
shows it: ``tests/cluster/commands/test_plan.py``)."""

from __future__ import annotations

from examples import EXAMPLES
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.estimate import race_size, recurrent_states
from ladders.solver.games.race import race_system


def test_recurrent_states_are_the_squares_a_chute_leads_back_over() -> None:
    chain = build_chain(preset_board("tiny10"))
    # chute 9 -> 2: squares 2..8 except the ladder foot 4 can come round again
    assert sorted(chain.states[i] for i in recurrent_states(chain)) == [2, 3, 5, 6, 7, 8]


def test_sizes_match_the_systems_built() -> None:
    chain = build_chain(EXAMPLES["hasbro20-2"].board)
    for k in (2, 3):
        size = race_size(chain, k, sample=4000)
        system = race_system(chain, k)
        assert size.unknowns == system.size
        assert size.columns == system.columns
        if size.nonzeros_exact:
            assert size.nonzeros == system.nnz
        else:
            assert abs(size.nonzeros - system.nnz) < 0.1 * system.nnz


def test_digit_estimate_is_the_series_fit_an_upper_estimate_on_small_boards() -> None:
    # one estimate for every engine (issue 40): the series engine's fit, within 0.2 % on
    # hasbro, above the truth on toy boards whose chutes cancel (tiny10, 3 players: 122
    # for 10 digits)
    for ex in (e for e in EXAMPLES.values() if e.name != "d3-4"):
        chain = build_chain(ex.board)
        value = solve_dixon(race_system(chain, ex.players), seed=0).values[0]
        actual = len(str(value.denominator))
        estimate = race_size(chain, ex.players).digits
        assert actual <= estimate <= 13 * actual, (ex.name, actual, estimate)
    assert race_size(build_chain(preset_board("hasbro")), 2).digits == 4_514  # 4,453 found
