"""The denominator multiple of three players: an integer M that every seat's
denominator divides, whose residue the kernel gives at each prime, so that the seats
come from one fraction's worth of primes instead of two (no rational reconstruction).

Checked against an independent construction: ``det(I - Sym^3 Q)`` from the matrix of
Q acting on symmetric tensors, built entry by entry and its determinant taken by flint
over the rationals; the resultant against flint's; the seats against the elimination
engine; and the stream's way back to rational reconstruction when M is not a multiple.
"""

from __future__ import annotations

import itertools
import math
import random

from flint import fmpq, fmpq_mat, nmod_poly
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numpy as np
import pytest

from ladders.solver.engines import series
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.engines.series.algebra import (chain_data, choose_split, multiple_bits,
                                                   multiple_exponent)
from ladders.solver.engines.series.montgomery import field
from ladders.solver.engines.series.polyarith import poly_resultant
from ladders.solver.exact import invert, mpq, mpz
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.games.race import race_system, seats_from_values
from examples import truncated
from strategies import small_boards

R = 1 << 64


def sym3_determinant(data) -> mpq:
    """``det(I - Sym^3 Q)``: Q^(x)3 on the symmetric tensors, in the basis of the sums
    of the distinct orderings of ``e_i (x) e_j (x) e_k`` (i <= j <= k)."""
    n, d, counts = data.n, data.d, data.counts
    basis = list(itertools.combinations_with_replacement(range(n), 3))
    size = len(basis)
    entries = [[0] * size for _ in range(size)]
    for col, word in enumerate(basis):
        for a, b, c in set(itertools.permutations(word)):
            for row, (i, j, k) in enumerate(basis):
                entries[row][col] += int(counts[i, a]) * int(counts[j, b]) * int(counts[k, c])
    matrix = fmpq_mat(size, size, [fmpq(int(r == c)) - fmpq(entries[r][c], d ** 3)
                                   for r in range(size) for c in range(size)])
    det = matrix.det()
    return mpq(int(det.p), int(det.q))


def the_multiple(chain) -> mpz:
    data = chain_data(chain)
    value = 6 * mpz(data.d) ** multiple_exponent(choose_split(data, 3)) * sym3_determinant(data)
    assert value.denominator == 1
    return mpz(value.numerator)


def oracle(chain) -> list[mpq]:
    system = race_system(chain, 3)
    return seats_from_values(system, 3, eliminate_target(system))


@pytest.mark.parametrize("board", ["tiny10", "hasbro8"])
def test_the_kernel_gives_the_multiple_at_each_prime(board):
    chain = build_chain(preset_board("tiny10") if board == "tiny10" else truncated("hasbro", 8))
    data = chain_data(chain)
    assert choose_split(data, 3).multiple
    big = the_multiple(chain)
    primes = series.prime_sequence(3, 10, 16, cube_roots=True)
    res, valid = series.seat_residues(chain, 3, primes, multiple=True)
    assert res.shape == (10, 4) and valid.all()
    assert [int(r[3]) for r in res] == [big % q for q in primes]
    # its size, which schedules the run's one attempt, from the eigenvalues
    assert abs(multiple_bits(data, choose_split(data, 3)) - math.log2(big)) < 1
    found = series.k_player_solve(chain, 3, 1)
    assert found.via_multiple and found.seats == oracle(chain)
    assert all(big % s.denominator == 0 for s in found.seats)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=small_boards(max_end=8, dice=(2, 6)), seed=st.integers(0, 2 ** 32))
def test_three_players_over_the_multiple_equal_the_elimination_engine(board, seed):
    chain = build_chain(board)
    found = series.k_player_solve(chain, 3, seed)
    assert found.seats == oracle(chain)
    if choose_split(chain_data(chain), 3).multiple:
        assert found.via_multiple
        big = the_multiple(chain)
        assert all(big % s.denominator == 0 for s in found.seats)


def test_a_prime_that_is_not_2_mod_3_is_unusable_for_the_multiple():
    chain = build_chain(preset_board("tiny10"))
    primes = list(itertools.islice(series.ntt_primes(4), 20))
    res, valid = series.seat_residues(chain, 3, primes, multiple=True)
    assert list(valid) == [q % 3 == 2 for q in primes]
    plain, _ = series.seat_residues(chain, 3, primes)
    assert (res[valid, :3] == plain[valid]).all()


def test_cube_root_primes():
    primes = series.prime_sequence(9, 200, 16, cube_roots=True)
    assert all(q % 3 == 2 and (q - 1) % (1 << 16) == 0 for q in primes)
    assert len(set(primes)) == 200
    assert series.ntt_pool(16, True) == series.ntt_pool(16) / 2


# ------------------------------------------------------------------ the resultant

def _mont(values, p):
    return np.array([v * R % p for v in values], dtype=np.uint64)


@pytest.mark.parametrize("seed", range(6))
def test_resultant_equals_flint(seed):
    rng = random.Random(seed)
    p = series.prime_sequence(seed, 1, 16, cube_roots=True)[0]
    fp = field(p)
    for _ in range(40):
        da, db = rng.randint(0, 30), rng.randint(0, 30)
        a = [rng.randrange(p) for _ in range(da)] + [rng.randrange(1, p)]
        b = [rng.randrange(p) for _ in range(db)] + [rng.randrange(1, p)]
        if rng.random() < 0.3:                      # a common factor
            f = nmod_poly([rng.randrange(p), 1], p)
            a = [int(c) for c in (nmod_poly(a, p) * f).coeffs()]
            b = [int(c) for c in (nmod_poly(b, p) * f).coeffs()]
        if rng.random() < 0.2:                      # trailing zeros: the same polynomial
            b = b + [0, 0]
        got = int(poly_resultant(_mont(a, p), _mont(b, p), fp))
        want = int(nmod_poly(a, p).resultant(nmod_poly(b, p)))
        assert got * invert(R, p) % p == want


# ------------------------------------------------------------------ the stream

def _rows(values, extra, primes):
    return [[int(v.numerator * invert(v.denominator, q) % q) for v in values] + [extra % q]
            for q in primes]


def test_the_stream_uses_the_multiple_and_falls_back_without_one():
    den = mpz(7) ** 90 * 11
    values = [mpq(mpz(5) ** 70, den), mpq(1, 3), 1 - mpq(mpz(5) ** 70, den) - mpq(1, 3)]
    big = den * 3 * 2 ** 20                          # a multiple of every denominator
    primes = list(itertools.islice(series.random_primes(2), 60))
    over = series.ReconstructionStream(4, holdout=2, multiple=True, must_sum_to_one=True,
                                       first_bits=200 + big.bit_length())
    for i in range(0, 60, 4):
        if over.add(primes[i:i + 4], _rows(values, big, primes[i:i + 4])):
            break
    assert over.values == values and over.via_multiple
    used = over.prime_count
    # not a multiple (one factor 7 short): the same fractions, by reconstruction, later
    short = big // 7
    plain = series.ReconstructionStream(4, holdout=2, multiple=True, must_sum_to_one=True,
                                        first_bits=200 + big.bit_length())
    for i in range(0, 60, 4):
        if plain.add(primes[i:i + 4], _rows(values, short, primes[i:i + 4])):
            break
    assert plain.values == values and not plain.via_multiple
    assert plain.prime_count > used


def test_a_wrong_multiple_at_the_held_out_primes_is_refused():
    values = [mpq(2, 7), mpq(5, 7)]
    primes = list(itertools.islice(series.random_primes(3), 12))
    rows = _rows(values, 7 * 3, primes)
    for row, q in zip(rows[-2:], primes[-2:]):      # the held-out primes see another M
        row[2] = 7 * 5 % q
    stream = series.ReconstructionStream(3, holdout=2, multiple=True, must_sum_to_one=True,
                                         first_bits=64)
    stream.add(primes, rows)
    assert stream.rejected >= 1 and not stream.via_multiple


def test_a_three_player_plan_has_the_multiple_in_its_digest():
    chain = build_chain(preset_board("tiny10"))
    three, four = series.plan_series(chain, 3), series.plan_series(chain, 4)
    assert three.multiple and three.columns == 4
    assert not four.multiple and four.columns == 4
    res, valid = three.residues(series.prime_sequence(1, 3, three.two_adicity, True))
    assert res.shape == (3, 4) and valid.all()


def test_compiled_transform_roots_equal_the_reference():
    from ladders.solver.engines.series.kernels import _ntt_roots
    from ladders.solver.engines.series.reconstruct import ntt_root
    primes = (series.prime_sequence(6, 30, 16) + series.prime_sequence(6, 30, 16, True)
              + list(itertools.islice(series.random_primes(6), 30)) + [97, 65537, 7681])
    omegas = np.zeros(len(primes), dtype=np.uint64)
    adicities = np.zeros(len(primes), dtype=np.int64)
    _ntt_roots(np.array(primes, dtype=np.uint64), omegas, adicities)
    assert [(int(w), int(k)) for w, k in zip(omegas, adicities)] == [ntt_root(q) for q in primes]


def test_a_three_player_run_attempts_once_at_the_predicted_size():
    chain = build_chain(preset_board("tiny10"))
    plan = series.plan_series(chain, 3)
    stream = series.engine_stream(plan)
    assert stream.multiple and stream.first_bits == stream.expected_bits
    primes = series.prime_sequence(2, 400, plan.two_adicity, cube_roots=True)
    for i in range(0, 400, 8):
        res, valid = plan.residues(primes[i:i + 8])
        if stream.add(primes[i:i + 8], res, valid):
            break
    assert stream.values == oracle(chain) and stream.via_multiple
    assert stream.attempts == 1 and stream.rejected == 0
    assert stream.expected_bits <= stream.bits < stream.expected_bits + 8 * 62
