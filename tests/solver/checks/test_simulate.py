"""Monte Carlo: reproducible, and within 5 standard errors of the exact answers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from ladders.solver.games.board import preset_board
from ladders.solver.checks.bounds import bounds_to_digits
from ladders.solver.answers import one_player_stats
from ladders.solver.games.chain import build_chain
from race_solve import solve_race
from ladders.solver.checks.simulate import (Tally, diagonal_estimate, mean_estimate, race_winners,
                                            seat_estimates, simulate_lengths, simulate_tally)
from strategies import small_boards

HASBRO = build_chain(preset_board("hasbro"))


def test_seeded_runs_repeat() -> None:
    a = simulate_lengths(HASBRO, 5000, np.random.default_rng(7))
    b = simulate_lengths(HASBRO, 5000, np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert a.min() >= 7  # D(0) = 7


def test_mean_length_within_five_standard_errors() -> None:
    lengths = simulate_lengths(HASBRO, 200_000, np.random.default_rng(1))
    est = mean_estimate(lengths)
    exact = float(one_player_stats(HASBRO).expected_length)
    assert abs(est.value - exact) < 5 * est.stderr
    assert est.ci95[0] < est.value < est.ci95[1]


def test_race_and_diagonal_estimators() -> None:
    exact = float(bounds_to_digits(HASBRO, 2, 16).lower[0])
    lengths = simulate_lengths(HASBRO, 2 * 100_000, np.random.default_rng(2))
    seat = seat_estimates(race_winners(lengths.reshape(-1, 2)), 2)
    assert abs(seat[0].value - exact) < 5 * seat[0].stderr
    assert abs(seat[0].value + seat[1].value - 1) < 1e-12
    diag = diagonal_estimate(lengths)
    assert abs(diag.value - exact) < 5 * diag.stderr
    assert diag.stderr < seat[0].stderr / 10  # the point of the diagonal squares


def test_ties_go_to_the_earlier_seat() -> None:
    lengths = np.array([[5, 5, 7], [9, 3, 3], [4, 4, 4]])
    assert race_winners(lengths).tolist() == [0, 1, 0]


@settings(max_examples=15, deadline=None)
@given(board=small_boards(max_end=8))
def test_random_boards_three_players(board) -> None:
    chain = build_chain(board)
    exact = [float(p) for p in solve_race(chain, 3).seats]
    lengths = simulate_lengths(chain, 3 * 20_000, np.random.default_rng(3))
    for est, p in zip(seat_estimates(race_winners(lengths.reshape(-1, 3)), 3), exact):
        assert abs(est.value - p) <= 5 * max(est.stderr, 1e-3)


def test_chunked_tallies_give_the_estimates_of_the_games_they_count() -> None:
    tally, prefixes = simulate_tally(HASBRO, 2, 2500, seed=4, snapshots=[100, 1000, 2500], chunk=700)
    assert tally.races == 2500 and tally.lengths.sum() == 5000
    assert sorted(prefixes) == [100, 1000, 2500] and prefixes[2500].wins.tolist() == tally.wins.tolist()
    again, _ = simulate_tally(HASBRO, 2, 2500, seed=4, chunk=700)
    assert np.array_equal(again.lengths, tally.lengths)  # reproducible, snapshots or not
    # the chunk of 350 races that holds race 1,000 is cut there: same as counting those races
    first = Tally.empty(2)
    for i, lo in enumerate(range(0, 1000, 350)):
        block = simulate_lengths(HASBRO, 700, np.random.default_rng([4, i])).reshape(350, 2)
        first.add(block[:1000 - lo])
    assert np.array_equal(first.wins, prefixes[1000].wins)
    lengths = simulate_lengths(HASBRO, 700, np.random.default_rng([4, 0]))
    one = Tally.empty(2)
    one.add(lengths.reshape(350, 2))
    assert one.diagonal() == diagonal_estimate(lengths)
    assert [e.value for e in one.seats()] == [e.value for e in seat_estimates(race_winners(lengths.reshape(350, 2)), 2)]
    solo = Tally.empty(1)
    solo.add(lengths.reshape(-1, 1))
    assert abs(solo.mean().value - mean_estimate(lengths).value) < 1e-12
    assert abs(solo.mean().stderr - mean_estimate(lengths).stderr) < 1e-12
