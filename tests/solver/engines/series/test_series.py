"""The series engine against the linear-system engines (exact ``==`` on mpq).

The oracle: the race systems of :mod:`ladders.solver.games.race` solved by exact
fraction-free elimination (an independent route: squares^k unknowns instead of one
player's generating functions). Random boards: every overshoot rule, dice 2..8.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ladders.solver.engines import series
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import fraction_to_decimal, invert, mpq, mpz
from ladders.solver.games.board import make_board, preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.games.race import race_system, seats_from_values
from examples import truncated
from race_solve import solve_race
from strategies import small_boards

SLOW = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def boards(max_end: int = 11) -> st.SearchStrategy:
    """Random playable boards: any overshoot rule, dice 2..8, up to 3 jumps."""
    return small_boards(max_end=max_end, dice=(2, 8))


def oracle(chain, players: int) -> list[mpq]:
    system = race_system(chain, players)
    return seats_from_values(system, players, eliminate_target(system))


# ------------------------------------------------------------------ k-player answers

@SLOW
@given(board=boards(), players=st.integers(2, 3), seed=st.integers(0, 2 ** 32))
def test_seats_match_reference(board, players, seed):
    chain = build_chain(board)
    seats = series.k_player_exact(chain, players, seed)
    assert seats == oracle(chain, players)
    assert sum(seats, mpq(0)) == 1


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=boards(max_end=7), seed=st.integers(0, 2 ** 32))
def test_four_players_match_reference(board, seed):
    chain = build_chain(board)
    seats = series.k_player_exact(chain, 4, seed)
    assert seats == oracle(chain, 4)
    assert sum(seats, mpq(0)) == 1


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=boards(max_end=5), players=st.sampled_from([5, 6]), seed=st.integers(0, 2 ** 32))
def test_five_and_six_players_match_reference(board, players, seed):
    chain = build_chain(board)
    seats = series.k_player_exact(chain, players, seed)
    assert seats == oracle(chain, players)


@pytest.mark.parametrize("players", [5, 6])
def test_five_and_six_players_end_to_end_equal_the_elimination_engine(tmp_path, players):
    # the run's whole path (store, batches, the grouped CRT, the stream's attempts,
    # the checks) against the other route: squares^k unknowns eliminated exactly
    from ladders.cluster.runs import solve
    from ladders.solver.problem import Problem
    problem = Problem.build(truncated("hasbro", 6), players)
    series_run = solve(problem, "series", executor="serial", checkpoint=str(tmp_path / "s"),
                       batch_primes=8, seed=players)
    other = solve(problem, "elimination", executor="serial")
    assert series_run.passed and other.passed
    assert series_run.seats == other.seats and sum(series_run.seats, mpq(0)) == 1
    assert series_run.details["batches"] > 1


@pytest.mark.parametrize("rule", ["stay", "bounce", "pass"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_rule_and_player_count(rule, players):
    board = make_board("t", 0, 9, 4, rule, [(2, 6), (8, 1)])
    chain = build_chain(board)
    assert series.k_player_exact(chain, players, 5) == oracle(chain, players)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=boards(max_end=9), players=st.integers(2, 4))
def test_every_split_gives_the_same_residues(board, players):
    chain = build_chain(board)
    primes = [q for q, _ in zip(series.random_primes(3), range(2))]
    primes += [q for q, _ in zip(series.ntt_primes(3), range(2))]
    first = None
    for s in range(players):
        res, valid = series.seat_residues(chain, players, primes, split=s)
        assert valid.all()
        if first is None:
            first = res
        assert (res == first).all()


@pytest.mark.parametrize("players", [4, 5, 6])
def test_a_derived_seat_equals_the_computed_one(players):
    """Where the kernel derives the last seat from the sum (every prime but the first
    of a batch) it is the residue computed in full: each prime twice in one batch, at
    a full position and at a derived one."""
    from ladders.solver.engines.series.algebra import derived_seat
    from ladders.solver.engines.series.kernels import CHECK_EVERY, kernel_inputs
    chain = build_chain(truncated("hasbro", 20))
    s = players // 2 - 1                        # hasbro's own splits: 1, 1, 2
    split, _ = kernel_inputs(series.chain_data(chain), players, s)
    assert derived_seat(split.seat_sigma) == players - 1
    primes = [q for q, _ in zip(series.ntt_primes(5), range(3))]
    batch = [q for q in primes for _ in range(CHECK_EVERY)]       # q at 0 and 1..63
    res, valid = series.seat_residues(chain, players, batch, split=s)
    assert valid.all()
    for i in range(len(primes)):
        rows = res[i * CHECK_EVERY:(i + 1) * CHECK_EVERY]
        assert (rows == rows[0]).all()


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("source", [series.random_primes, series.ntt_primes])
def test_residues_are_the_reduced_answer(players, source):
    # random primes take the schoolbook products, transform primes the transforms
    chain = build_chain(preset_board("tiny10"))
    exact = oracle(chain, players)
    primes = [q for q, _ in zip(source(11), range(5))]
    res, valid = series.seat_residues(chain, players, primes)
    for i, q in enumerate(primes):
        assert valid[i]
        for j in range(players):
            v = exact[j]
            assert int(res[i, j]) == int(v.numerator * invert(v.denominator, q) % q)


def test_unusable_primes_are_reported():
    chain = build_chain(preset_board("tiny10"))
    primes = [3, 7, next(series.random_primes(1))]     # 3 divides d = 6; 7 is below the degrees
    res, valid = series.seat_residues(chain, 3, primes)
    assert list(valid) == [False, False, True]
    assert (res[0] == 0).all() and (res[1] == 0).all()


# ------------------------------------------------------------------ two players, table

@SLOW
@given(board=boards(max_end=12))
def test_two_player_exact_and_table(board):
    chain = build_chain(board)
    p = series.two_player_exact(chain, 1)
    assert p == series.two_player_exact_fmpq(chain)
    assert [p, 1 - p] == oracle(chain, 2)
    table = series.two_player_table(chain, 2, processes=1 + board.end % 2)
    assert series.check_table(chain, table.numerators, table.denominator)
    ref = solve_race(chain, 2, table=True).table
    states = chain.states
    for a, sa in enumerate(states):
        for b, sb in enumerate(states):
            i = a * len(states) + b
            assert mpq(table.numerators[i], table.denominator) == ref[(sa, sb)]
            assert (table.lowest[i], table.lowest_denominators[i]) == (ref[(sa, sb)].numerator,
                                                                       ref[(sa, sb)].denominator)
            assert table.numerator_texts[i] == str(ref[(sa, sb)].numerator)


def test_a_prime_unusable_for_the_table_is_replaced() -> None:
    """233 divides the resultant of tiny10's chi_C and D~ (D is not invertible modulo
    chi there): the run that draws it starts again with fresh primes."""
    chain = build_chain(preset_board("tiny10"))
    from ladders.solver.engines.series.kernels import table_residues
    assert not table_residues(chain, [233])[1].all()
    ref = series.two_player_table(chain, 5)
    for processes in (1, 2):
        table = series.two_player_table(chain, itertools.chain([233], series.random_primes(5)), processes)
        assert (table.lowest, table.lowest_denominators) == (ref.lowest, ref.lowest_denominators)
        assert series.check_table(chain, table.numerators, table.denominator)


def test_check_table_refuses_a_wrong_table():
    chain = build_chain(preset_board("tiny10"))
    table = series.two_player_table(chain, 4)
    nums, den = table.numerators, table.denominator
    assert series.check_table(chain, nums, den)
    assert not series.check_table(chain, nums, den + 1)
    nums[1 * len(chain.states) + 2] += 1
    assert not series.check_table(chain, nums, den)


def test_hasbro_two_players_published_digits():
    chain = build_chain(preset_board("hasbro"))
    p = series.two_player_exact(chain, 9)
    assert len(str(p.numerator)) == 4453 and len(str(p.denominator)) == 4453
    # the published digits are rounded to 50 decimals (the truncation ends in ...941)
    scaled = (2 * p.numerator * mpz(10) ** 50 + p.denominator) // (2 * p.denominator)
    assert str(scaled) == "50780277346091397787392387841954080716542767187942"
    certified = series.two_player_certified(chain)
    assert certified.certified and certified.value == p
    assert fraction_to_decimal(p, 50) == "0.50780277346091397787392387841954080716542767187941"


def test_a_composite_modulus_is_reported_not_run() -> None:
    chain = build_chain(preset_board("tiny10"))
    prime = series.prime_sequence(3, 1)[0]
    res, valid = series.seat_residues(chain, 3, [(1 << 61) + 1, prime])
    assert valid.tolist() == [False, True] and res[0].tolist() == [0, 0, 0]


@pytest.mark.parametrize("players", [3, 4])
def test_transforms_and_schoolbook_give_the_same_fractions(players):
    # hasbro cut at 26: exponentials of a few hundred terms (the divide-and-conquer
    # blocks), products by transforms for transform primes and by schoolbook otherwise
    chain = build_chain(truncated("hasbro", 26))
    fast = series.k_player_solve(chain, players, series.ntt_primes(21))
    slow = series.k_player_solve(chain, players, series.random_primes(21))
    assert list(fast.seats) == slow.seats and sum(fast.seats, mpq(0)) == 1
    sp = series.choose_split(series.chain_data(chain), players)
    assert sp.deg_b > 64                       # the exponential's products were used


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=boards(max_end=12))
def test_two_players_certified_on_random_boards(board):
    # boards without an eigenvalue 0 give D a full degree n, reduced mod chi in the
    # integer system (found by `solve tiny10 --die 1000`, where it was not)
    chain = build_chain(board)
    result = series.two_player_certified(chain)
    assert result.certified and result.value == oracle(chain, 2)[0]


def test_two_players_certified_with_no_zero_eigenvalue():
    chain = build_chain(make_board("d1000", 0, 10, 1000, "stay", [(4, 7), (9, 2)]))
    assert series.chain_data(chain).z == 0
    result = series.two_player_certified(chain)
    assert result.certified and result.value == oracle(chain, 2)[0]
