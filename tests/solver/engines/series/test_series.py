"""The series engine against the linear-system engines (exact ``==`` on mpq).

The oracle: the race systems of :mod:`ladders.solver.games.race` solved by exact
fraction-free elimination (an independent route: squares^k unknowns instead of one
player's generating functions). Random boards: every overshoot rule, dice 2..8.
"""

from __future__ import annotations

import math

import itertools
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ladders.solver.engines import series
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import fraction_to_decimal, gcd, invert, isqrt, mpq, mpz, next_prime
from ladders.solver.games.board import make_board, preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.games.race import race_system, seats_from_values, solve_race
from examples import truncated
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


@pytest.mark.parametrize("seed", [1, 7, 66])
def test_table_numerators_equal_the_exact_ones(seed: int) -> None:
    """The division-free CRT of the table == the exact numerators over a common
    denominator (also at the ends of [0, 1]); a denominator that is not common to all
    entries is refused, not rounded into a wrong table."""
    import numpy as np

    from ladders.solver.engines.series.kernels import table_numerators
    rng = random.Random(seed)
    den = mpz(rng.getrandbits(300) | 1) * 6 ** 5
    values = [mpq(rng.randrange(0, int(den) + 1), den) for _ in range(40)]
    values += [mpq(0), mpq(1), mpq(1, 2 * 3)]                # the ends of [0, 1]
    primes, m = [], mpz(1)
    for q in series.random_primes(seed):
        if m.bit_length() > den.bit_length() + 90:
            break
        primes.append(q)
        m *= q

    def residues(vals):
        return np.asarray([[int(v.numerator * invert(v.denominator, q) % q) for v in vals]
                           for q in primes], dtype=np.uint64)

    assert [mpq(n, den) for n in table_numerators(residues(values), primes, m, den)] == values
    with pytest.raises(ArithmeticError):
        table_numerators(residues(values + [mpq(1, int(next_prime(mpz(2) ** 70)))]), primes, m, den)


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


def test_flint_conversions_are_exact() -> None:
    """The crossings of :mod:`ladders.solver.exact_flint`: big and negative values, a
    transposed (strided) uint64 array with entries above 2^63, low-to-high coefficients."""
    import numpy as np

    from ladders.solver import exact_flint as fl
    big = mpz(3) ** 200
    assert fl.fmpq_to_mpq(fl.fmpq(-int(big), int(big) + 2)) == mpq(-big, big + 2)
    values = [big, -big, mpz(0), 7]
    assert fl.fmpz_mat_to_mpz(fl.ints_to_fmpz_column(values)) == values
    array = np.array([[1, 2 ** 64 - 1, 3], [2 ** 63, 5, 6]], dtype=np.uint64)
    assert fl.fmpz_mat_to_mpz(fl.array_to_fmpz_mat(array.T)) == [1, 2 ** 63, 2 ** 64 - 1, 5, 3, 6]
    square = fl.array_to_fmpz_mat(np.array([[1, 2], [3, 4]], dtype=np.int64))
    assert fl.fmpz_poly_to_ints(square.charpoly()) == (-2, -5, 1)     # x^2 - 5x - 2


# ------------------------------------------------------------------ CRT and reconstruction

def test_crt_tree_matches_simple():
    rng = random.Random(7)
    for count in (1, 2, 3, 17, 200):
        primes = [q for q, _ in zip(series.random_primes(count), range(count))]
        res = [[rng.randrange(q) for _ in range(3)] for q in primes]
        xs, m = series.crt_tree(res, primes)
        for j in range(3):
            x, m2 = series.crt_simple([r[j] for r in res], primes)
            assert (xs[j], m) == (x, m2)


moduli = st.one_of(st.integers(1, 50), st.integers(2, 2 ** 64), st.integers(2 ** 4000, 2 ** 9000))


@settings(max_examples=300, deadline=None)
@given(m=moduli, data=st.data())
def test_fast_reconstruction_matches_simple(m, data):
    if data.draw(st.booleans()):
        x = data.draw(st.integers(-3 * m, 3 * m))        # arbitrary, also negative: often no solution
    else:
        bound = int(isqrt(mpz(m) // 2))
        a = data.draw(st.integers(-bound, bound))
        b = data.draw(st.integers(1, max(1, bound)))
        assume(gcd(b, m) == 1)
        x = a * int(invert(b, m)) if m > 1 else 0
    fast = series.rational_reconstruct(x, m)
    assert fast == series.rational_reconstruct_simple(x, m)
    if fast is not None:
        assert (fast.numerator - x * fast.denominator) % m == 0
        assert abs(fast.numerator) <= isqrt(mpz(m) // 2) and fast.denominator <= isqrt(mpz(m) // 2)


def test_reconstruction_edge_cases():
    assert series.rational_reconstruct(0, 1) is None
    assert series.rational_reconstruct_simple(5, 1) is None
    assert series.rational_reconstruct(3, 7) == series.rational_reconstruct_simple(3, 7)
    assert series.rational_reconstruct(5, 10) is None      # stop at remainder 0: gcd(0, 2) != 1
    m = mpz(2) ** 20000
    assert series.rational_reconstruct(mpz(2) ** 12000, m) is None
    assert series.rational_reconstruct_simple(mpz(2) ** 12000, m) is None
    # a random residue usually *has* a Wang fraction (of full size): both agree on it
    m = mpz(2) ** 20000 + 1
    big = (mpz(3) ** 9000) % m
    assert series.rational_reconstruct(big, m) == series.rational_reconstruct_simple(big, m)
    x = (-mpz(12345) * invert(mpz(999), m)) % m
    assert series.rational_reconstruct(x, m) == mpq(-12345, 999)
    assert series.rational_reconstruct_bounded(x, m, 10 ** 6, 10 ** 4) == mpq(-12345, 999)


# ------------------------------------------------------------------ early termination

def _residues_of(values, primes):
    return [[int(v.numerator * invert(v.denominator, q) % q) for v in values] for q in primes]


def test_stream_stops_early_and_confirms():
    values = [mpq(mpz(3) ** 400, mpz(7) ** 300 + 2), mpq(1, 3)]
    stream = series.ReconstructionStream(2, holdout=2)
    it = series.random_primes(5)
    done = False
    fed = 0
    while not done:
        primes = [next(it) for _ in range(8)]
        fed += 8
        done = stream.add(primes, _residues_of(values, primes))
    assert stream.values == values and stream.rejected == 0
    assert fed * 61 < 3 * (values[0].numerator.bit_length() + values[0].denominator.bit_length()) + 2000


def test_a_replay_attempts_once_at_the_end():
    # a resumed run folds every stored batch: one attempt at the size reached, not one
    # at each size the first driver passed
    values = [mpq(mpz(3) ** 400, mpz(7) ** 300 + 2), mpq(1, 3)]
    it = series.random_primes(5)
    batches = [[next(it) for _ in range(8)] for _ in range(12)]
    live, replay = (series.ReconstructionStream(2, holdout=2, first_bits=64) for _ in range(2))
    for primes in batches:
        if live.add(primes, _residues_of(values, primes)):
            break
    with replay.deferred():
        for primes in batches:
            assert not replay.add(primes, _residues_of(values, primes))
        assert replay.attempts == 0
    assert replay.attempts == 1 < live.attempts
    assert replay.values == live.values == values
    # the modulus's size: log2 of the product (a 62-bit prime adds less than 62)
    product = math.prod(q for b in batches for q in b)
    assert replay.bits == product.bit_length() - 1


def test_the_stream_logs_its_attempts_and_scales_them_to_the_final_size():
    """Every attempt's modulus size and seconds are logged; the succeeding attempt's
    seconds are estimated from the largest one, as O(n log^2 n)."""
    values = [mpq(mpz(3) ** 400, mpz(7) ** 300 + 2), mpq(1, 3)]
    stream = series.ReconstructionStream(2, holdout=2, first_bits=64)
    it = series.random_primes(5)
    assert stream.attempt_seconds_at(10_000) is None       # nothing measured yet
    while not stream.add(batch := [next(it) for _ in range(8)], _residues_of(values, batch)):
        pass
    assert len(stream.attempt_log) == stream.attempts >= 2
    sizes = [b for b, _ in stream.attempt_log]
    assert sizes == sorted(sizes) and sizes[-1] <= stream.bits
    big = [(b, t) for b, t in stream.attempt_log if b >= 1024]
    b, t = max(big)
    assert stream.attempt_seconds_at(4 * b) == t * 4 * (math.log2(4 * b) / math.log2(b)) ** 2
    assert stream.attempt_seconds_at(17 * b) is None        # too far from what was measured


def test_wrong_candidate_is_refused_by_held_out_primes():
    # the build primes see one fraction, the held-out primes another: the candidate
    # reconstructed from the build primes is valid-looking but wrong, and is refused
    truth, decoy = mpq(2 ** 61 + 5, 3 ** 40), mpq(2 ** 61 + 7, 3 ** 40)
    primes = [q for q, _ in zip(series.random_primes(8), range(12))]
    res = _residues_of([decoy], primes[:-2]) + _residues_of([truth], primes[-2:])
    stream = series.ReconstructionStream(1, holdout=2, first_bits=64)
    assert not stream.add(primes, res)
    assert stream.rejected >= 1 and stream.values is None


def test_corrupted_residue_never_gives_a_wrong_answer():
    value = mpq(mpz(5) ** 200 + 1, mpz(11) ** 150)
    it = series.random_primes(13)
    stream = series.ReconstructionStream(1, holdout=2, first_bits=64, ratio=1.05)
    primes = [next(it) for _ in range(40)]
    res = _residues_of([value], primes)
    res[3][0] = (res[3][0] + 1) % primes[3]          # one wrong residue, used to build
    for i in range(0, 40, 4):
        stream.add(primes[i:i + 4], res[i:i + 4])
    assert stream.values is None or stream.values == [value]
    assert stream.values is None


def test_split_choice_prefers_cheap_splits():
    chain = build_chain(preset_board("hasbro"))
    data = series.chain_data(chain)
    assert series.choose_split(data, 2).s == 0
    assert series.choose_split(data, 3).s == 0
    assert series.choose_split(data, 4).s == 1


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


@pytest.mark.parametrize("count", [1, 31, 32, 33, 64, 100, 700])
def test_exponential_by_blocks_equals_newtons_identities(count):
    # the divide-and-conquer exponential (transforms, or schoolbook with nmax = 0)
    # against the quadratic recurrence it replaces
    import numpy as np
    from ladders.solver.engines.series import montgomery as mt
    from ladders.solver.engines.series import polyarith as pa
    q = next(series.ntt_primes(count))
    w, k = series.reconstruct.ntt_root(q)
    p = np.uint64(q)
    pneg, one, r2 = (np.uint64(v) for v in mt.mont_setup(p))
    rng = random.Random(count)
    psums = np.array([0] + [rng.randrange(q) for _ in range(count)], dtype=np.uint64)
    inv = mt.inverses_upto(count, p, pneg, one, r2)
    ref = pa.series_exp_neg(psums, count, p, pneg, one, r2, inv)
    nmax = 1 << 12
    omega = np.uint64(mt.to_mont(np.uint64(w), p, pneg, r2))  # numba hands back a Python int
    roots, iroots = pa.ntt_tables(omega, k, nmax, p, pneg, one)
    for size in (nmax, 0):
        got = pa.series_exp_neg_fast(psums, count, p, pneg, one, r2, inv, roots, iroots, size)
        assert (got == ref).all()



@pytest.mark.parametrize("nmax", [2, 4, 8, 1 << 13])
def test_transform_tables_hold_every_stages_powers_of_its_root(nmax):
    # entry len + j of a stage: w^j and w^-j for w of order 2 len, plain and with its
    # Shoup companion floor(x 2^64 / p); the tables derive the lower stages and the
    # inverses from the top stage's powers
    import numpy as np
    from ladders.solver.engines.series import montgomery as mt
    from ladders.solver.engines.series import polyarith as pa
    q = next(series.ntt_primes(nmax))
    w, k = series.reconstruct.ntt_root(q)
    p = np.uint64(q)
    pneg, one, r2 = (np.uint64(v) for v in mt.mont_setup(p))
    omega = np.uint64(mt.to_mont(np.uint64(w), p, pneg, r2))
    roots, iroots = pa.ntt_tables(omega, k, nmax, p, pneg, one)
    length = nmax // 2
    while length >= 1:
        root = pow(w, (1 << k) // (2 * length), q)             # order 2 length
        for j in range(length):
            for table, x in ((roots, pow(root, j, q)), (iroots, pow(root, -j, q))):
                assert int(table[0, length + j]) == x
                assert int(table[1, length + j]) == (x << 64) // q
        length //= 2


# ------------------------------------------------------------------ verify at fresh primes

def test_fresh_primes_confirm_the_answer_and_refuse_a_wrong_one():
    from ladders.solver.engines.series.recheck import check_series_residues
    chain = build_chain(preset_board("tiny10"))
    seats = series.k_player_exact(chain, 3, 5)
    good = check_series_residues(chain, 3, seats, primes=3, seed=1)
    assert good["passed"] and [x["agree"] for x in good["primes"]] == [True] * 3
    assert good["error_probability_below"] < 1e-40
    # the seats of another race, and a fraction one part in 10^40 off
    other = series.k_player_exact(build_chain(make_board("t", 0, 10, 6, "bounce", [(4, 7)])), 3, 5)
    off = [seats[0] + mpq(1, 10 ** 40), seats[1] - mpq(1, 10 ** 40), seats[2]]
    for wrong in (other, off):
        bad = check_series_residues(chain, 3, wrong, primes=2, seed=1)
        assert not bad["passed"] and not any(x["agree"] for x in bad["primes"])


def test_the_primes_drawn_are_kept_in_eight_bytes_and_none_twice() -> None:
    """The record of the primes drawn (a sorted array and a set of the latest) answers
    as a set does, across its merges; the streams it serves draw no prime twice."""
    from ladders.solver.engines.series.reconstruct import Drawn
    drawn, plain = Drawn(), set()
    drawn.MERGE = 64
    rng = random.Random(3)
    for _ in range(1000):
        q = rng.randrange(1 << 62)
        assert (q in drawn) == (q in plain)
        drawn.add(q)
        plain.add(q)
        assert q in drawn
    assert len(drawn) == len(plain) and len(drawn.latest) < 64
    assert all(q in drawn for q in plain)
    assert not any(rng.randrange(1 << 62) in drawn for _ in range(200))
    # a small pool makes draws repeat: each prime comes once
    primes = list(itertools.islice(series.ntt_primes(5, two_adicity=40), 300))
    assert len(set(primes)) == 300
