"""One-player exact answers against SPEC 3 and against their defining equations."""

from __future__ import annotations

from itertools import islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladders.solver.answers import one_player_stats
from ladders.solver.games.board import make_board, preset_board
from ladders.solver.games.chain import (RECURRENCE_AFTER, build_chain, iter_throws, length_decimals,
                                        length_distribution, survival_recurrence, throw_counts)
from ladders.solver.exact import fraction_to_decimal, mpq, mpz, sqrt_to_decimal
from strategies import small_boards


def test_hasbro_first_finishing_throws() -> None:
    dist = length_distribution(build_chain(preset_board("hasbro")), 9)
    assert [f for f, _ in dist[:6]] == [0] * 6
    assert dist[6][0] == mpq(73, 46656)
    assert dist[7][0] == mpq(205, 46656)
    assert dist[8][0] == mpq(70579, 10077696)


def test_milton_bradley_length() -> None:
    chain = build_chain(preset_board("milton-bradley"))
    st = one_player_stats(chain)
    assert fraction_to_decimal(st.expected_length, 4) == "39.2251"
    assert sqrt_to_decimal(st.variance, 2) == "25.22"
    dist = length_distribution(chain, 31)
    assert round(float(dist[6][1]), 7) == 0.0015111
    assert round(float(dist[30][1]), 5) == 0.48004


def test_snakes_2016() -> None:
    st = one_player_stats(build_chain(preset_board("snakes-2016")))
    assert round(float(st.expected_length), 2) == 35.54
    assert st.min_throws[0] == 7


def test_expected_remaining_solves_its_equation_exactly() -> None:
    chain = build_chain(preset_board("hasbro"))
    st = one_player_stats(chain)
    d = chain.die
    for i, s in enumerate(chain.states):
        e = st.expected_remaining[s]
        rhs = 1 + sum((mpq(c, d) * st.expected_remaining[chain.states[j]] for j, c in chain.moves[i]), mpq(0))
        assert e == rhs
        m = st.second_moment[s]
        rhs2 = 1 + sum((mpq(c, d) * (2 * st.expected_remaining[chain.states[j]] + st.second_moment[chain.states[j]])
                        for j, c in chain.moves[i]), mpq(0))
        assert m == rhs2


def test_distribution_is_consistent_with_the_moments() -> None:
    chain = build_chain(preset_board("tiny10"))
    st = one_player_stats(chain)
    dist = length_distribution(chain, 400)
    mean = sum((t * f for t, (f, _) in enumerate(dist, 1)), mpq(0))
    assert 0 < st.expected_length - mean < mpq(1, 10**20)
    assert dist[-1][1] == sum((f for f, _ in dist), mpq(0))


def test_min_throws_on_tiny10() -> None:
    st = one_player_stats(build_chain(preset_board("tiny10")))
    assert st.min_throws[0] == 2 and st.min_throws[8] == 1 and st.min_throws[2] == 2


@settings(max_examples=30, deadline=None)
@given(board=small_boards(), places=st.integers(0, 6), throws=st.integers(1, 80))
def test_printed_decimals_are_those_of_the_exact_fractions(board, places: int, throws: int) -> None:
    chain = build_chain(board)
    exact = [(fraction_to_decimal(f, places), fraction_to_decimal(F, places))
             for f, F in length_distribution(chain, throws)]
    assert list(length_decimals(chain, throws, places)) == exact


def test_decimals_of_a_game_that_must_end() -> None:
    chain = build_chain(make_board("short", 0, 10, 6, "pass", [(4, 7)]))  # every game is over within 7 throws
    exact = [(fraction_to_decimal(f, 3), fraction_to_decimal(F, 3)) for f, F in length_distribution(chain, 9)]
    assert list(length_decimals(chain, 9, 3)) == exact and exact[-1] == ("0.000", "1.000")
    hasbro = build_chain(preset_board("hasbro"))
    assert list(length_decimals(hasbro, 600, 10))[-1] == ("0.0000000000", "0.9999999999")


def _walked(chain, throws: int) -> list[tuple[mpz, mpz]]:
    """``(a_t, s_t)`` by the count-vector walk alone, t = 1..throws."""
    v = [mpz(0)] * len(chain.states)
    v[chain.start_index] = mpz(1)
    out = []
    for _ in range(throws):
        v, absorbed = throw_counts(chain, v)
        out.append((mpz(absorbed), mpz(sum(v, mpz(0)))))
    return out


def test_the_recurrence_goes_on_as_the_walk_on_the_presets() -> None:
    """iter_throws switches from the walk to the characteristic polynomial's recurrence
    after RECURRENCE_AFTER throws: the same integers after the switch."""
    for name in ("hasbro", "milton-bradley", "snakes-2016", "tiny10"):
        chain = build_chain(preset_board(name))
        throws = RECURRENCE_AFTER + 300
        assert list(islice(iter_throws(chain), throws)) == _walked(chain, throws), name


@settings(max_examples=40, deadline=None)
@given(board=small_boards(), throws=st.integers(1, 60))
def test_the_recurrence_from_the_first_throws(board, throws: int) -> None:
    """Switched as early as it may be (after n throws), on boards of every rule,
    nilpotent chains (a one-faced die: every game over within n throws) included."""
    chain = build_chain(board)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("ladders.solver.games.chain.RECURRENCE_AFTER", 0)
        assert list(islice(iter_throws(chain), throws)) == _walked(chain, throws)


def test_survival_recurrence_annihilates_a_and_s() -> None:
    chain = build_chain(preset_board("hasbro"))
    coefs = survival_recurrence(chain)
    assert len(coefs) == 77          # 81 states, the root 0 four times
    seq = _walked(chain, 200)
    for t in range(len(chain.states), 200):
        for which in (0, 1):
            assert seq[t][which] == sum(c * seq[t - i][which] for i, c in enumerate(coefs, start=1))
