"""Another Game: exact answers checked by their own equations, an oracle and simulation."""

from __future__ import annotations

import flint
import numpy as np
import pytest

from ladders.solver.answers import solve_coins
from ladders.solver.games.coins import CoinGame, cycle_distribution, turn_outcomes
from ladders.solver.exact import mpq


def test_rules_of_a_turn() -> None:
    outcomes = turn_outcomes(3, 4, 3)
    assert outcomes == [(3, 4, 3), (6, 4, 0), (4, 4, 2), (2, 4, 4), (2, 4, 4), (2, 4, 4)]
    assert turn_outcomes(0, 9, 1)[2] == (0, 9, 1)      # half of 1 coin is nothing
    assert turn_outcomes(0, 9, 1)[3:] == [None] * 3      # must pay with no coin: lose


def test_probabilities_add_up() -> None:
    ans = solve_coins(CoinGame(), cycles=10)
    assert sum(ans.final_states.values(), mpq(0)) == 1
    assert all(0 < p < 1 for p in ans.win_a.values())
    # A wins exactly when the final state says B lost
    assert sum((p for k, p in ans.final_states.items() if k.startswith("B")), mpq(0)) == ans.win_a[(4, 4)]


def test_expected_cycles_match_an_oracle_solve() -> None:
    """Independent dense first-step solve with flint over (a, b, pot, mover)."""
    total = 10
    states = [(m, a, b) for m in (0, 1) for a in range(total + 1) for b in range(total + 1 - a)]
    idx = {s: i for i, s in enumerate(states)}
    n = len(states)
    mat = flint.fmpq_mat(n, n)
    rhs = flint.fmpq_mat(n, 1)
    for i, (m, a, b) in enumerate(states):
        mat[i, i] = 1
        if m == 0:
            rhs[i, 0] = 1
        mine, other = (a, b) if m == 0 else (b, a)
        for res in turn_outcomes(mine, other, total - a - b):
            if res is not None:
                na, nb = (res[0], res[1]) if m == 0 else (res[1], res[0])
                mat[i, idx[(1 - m, na, nb)]] -= flint.fmpq(1, 6)
    x = mat.solve(rhs)
    ans = solve_coins(CoinGame(), cycles=1)
    for (a, b), value in ans.expected_cycles.items():
        got = x[idx[(0, a, b)], 0]
        assert value == mpq(int(got.p), int(got.q))


def test_cycle_distribution_converges_to_the_expectation() -> None:
    game = CoinGame()
    dist = cycle_distribution(game, 1500)
    e = solve_coins(game, cycles=1).expected_cycles[(4, 4)]
    mean = sum((n * p for n, p in enumerate(dist, 1)), mpq(0))
    assert 0 < e - mean < mpq(1, 10**6)
    assert 0 < 1 - sum(dist, mpq(0)) < mpq(1, 10**6)


def test_simulation_agrees_with_the_exact_value() -> None:
    rng = np.random.default_rng(5)
    games = 20_000
    cycles = np.zeros(games)
    for g in range(games):
        coins_, pot, mover, n = [4, 4], 2, 0, 0
        while True:
            if mover == 0:
                n += 1
            res = turn_outcomes(coins_[mover], coins_[1 - mover], pot)[rng.integers(6)]
            if res is None:
                break
            coins_[mover], coins_[1 - mover], pot = res
            mover = 1 - mover
        cycles[g] = n
    exact = float(solve_coins(CoinGame(), cycles=1).expected_cycles[(4, 4)])
    stderr = cycles.std(ddof=1) / games ** 0.5
    assert abs(cycles.mean() - exact) < 5 * stderr
    assert round(exact, 2) == 17.54  # simulation of the published analysis: 17.55


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="negative"):
        CoinGame(-1, 4, 2)
    with pytest.raises(ValueError, match="no coins"):
        CoinGame(0, 0, 0)
