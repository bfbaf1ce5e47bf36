"""Primes, Chinese remaindering and rational reconstruction of the series engine
(:mod:`ladders.solver.engines.series.reconstruct`): the subproduct tree and the half-gcd
against the plain ones, and the stream that stops early, confirms at held-out primes
and never gives a wrong answer."""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ladders.solver.engines import series
from ladders.solver.exact import gcd, invert, isqrt, mpq, mpz, next_prime


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


@settings(max_examples=200, deadline=None)
@given(m=moduli, x=st.integers(0, 2 ** 9000))
def test_wangs_pair_is_the_plain_euclids_also_with_a_common_factor(m, x):
    """The stream takes Wang's pair ``(a, b)`` without its gcd check, so the half-gcd's
    pair must be the plain Euclid's pair itself, not only the same fraction where the
    check passes."""
    from ladders.solver.engines.series.reconstruct import _finish_rr, _wang_pair
    m, x = mpz(m), mpz(x) % max(m, 1)
    plain = _finish_rr(m, mpz(0), x, mpz(1), isqrt(m // 2)) if m >= 2 else None
    assert _wang_pair(x, m) == plain


def test_wangs_pairs_with_a_common_factor_occur_and_the_half_gcd_finds_them():
    from ladders.solver.engines.series.reconstruct import _finish_rr, _wang_pair
    rng = random.Random(13)
    m = mpz(rng.getrandbits(9000)) | 1
    shared = 0
    for _ in range(40):
        x = mpz(rng.getrandbits(9000)) % m
        pair = _wang_pair(x, m)
        assert pair == _finish_rr(m, mpz(0), x, mpz(1), isqrt(m // 2))
        shared += pair is not None and gcd(*pair) != 1
    assert shared > 0       # (about 4 in 10 random pairs share a factor)


def test_a_pair_with_a_common_factor_is_never_a_fraction_within_wangs_bounds():
    """Why the stream needs no gcd check (``ReconstructionStream._reconstruct``): where
    some ``a/b`` in lowest terms, ``|a|, 0 < b <= sqrt(m/2)``, has ``a = b x (mod m)``,
    Wang's pair is ``(a, b)`` itself, so coprime (every ``x`` modulo every ``m`` up to
    300 with ``2 bound^2 < m``, where such a fraction is unique: a run's modulus, a
    product of odd primes, is never twice a square; against a search of all fractions)."""
    from ladders.solver.engines.series.reconstruct import _wang_pair
    for m in range(2, 301):
        bound = int(isqrt(mpz(m) // 2))
        if 2 * bound * bound == m:
            continue
        for x in range(m):
            pair = _wang_pair(x, m)
            fits = {(a, b) for b in range(1, bound + 1) for a in (b * x % m, b * x % m - m)
                    if abs(a) <= bound and gcd(a, b) == 1}
            if fits:
                assert len(fits) == 1 and pair == next(iter(fits))
            if pair is not None and gcd(*pair) != 1:
                assert not fits


def test_half_gcd_keeps_its_contract_through_lehmer_rounds():
    """The half-gcd's base case takes a machine word of quotients at a time (Knuth's
    Algorithm L) and the recursion multiplies only the low bits; its result is still
    Moller's: ``(a; b) = M (a'; b')``, det M = 1, ``a', b' > 2^s``, ``|a' - b'| <
    2^s``, and the pair where the plain semi-quotient steps end."""
    from ladders.solver.engines.series.reconstruct import _hgcd, _hgcd_steps, _sdiv_step
    rng = random.Random(11)
    for bits in (3000, 9000, 40000):
        for _ in range(3):
            a, b = mpz(rng.getrandbits(bits)) | 1, mpz(rng.getrandbits(bits - rng.randrange(3)))
            n = max(a.bit_length(), b.bit_length())
            s = n // 2 + 1
            M, a2, b2 = _hgcd(a, b)
            assert M[0] * M[3] - M[1] * M[2] == 1 and min(M) >= 0
            assert (M[0] * a2 + M[1] * b2, M[2] * a2 + M[3] * b2) == (a, b)
            assert a2.bit_length() > s and b2.bit_length() > s
            assert abs(a2 - b2).bit_length() <= s
            if bits == 3000:    # the base case alone, against single steps
                one = (mpz(1), mpz(0), mpz(0), mpz(1))
                plain = (one, a, b)
                while abs(plain[1] - plain[2]).bit_length() > s:
                    plain = _sdiv_step(*plain, s)
                assert _hgcd_steps(a, b, s, one) == plain


def test_the_compiled_lehmer_rounds_take_the_steps_of_the_plain_ones():
    """The base case's compiled rounds (:mod:`~ladders.solver.engines.series.lehmer`)
    end where the rounds in gmpy2 do, one word or one semi-quotient step at a time:
    random pairs, pairs close together (a long run of quotients 1), pairs with a quotient
    of 40 bits (a word that decides none), across limb and word boundaries."""
    from ladders.solver.engines.series.reconstruct import _hgcd_steps, _lehmer_round, _sdiv_step
    one = (mpz(1), mpz(0), mpz(0), mpz(1))

    def in_gmpy2(a, b, s):
        state = (one, a, b)
        while abs(state[1] - state[2]).bit_length() > s:
            step = _lehmer_round(*state, s)
            state = _sdiv_step(*state, s) if step is None else step
        return state

    rng = random.Random(13)
    for bits in (62, 63, 90, 121, 500, 2048, 3000):
        for kind in ("random", "close", "big quotient"):
            for _ in range(12):
                a = mpz(rng.getrandbits(bits)) | 1
                b = {"random": lambda: mpz(rng.getrandbits(bits - rng.randrange(3))),
                     "close": lambda: a - mpz(rng.getrandbits(bits // 3)),
                     "big quotient": lambda: a // mpz(rng.getrandbits(40) | 1)}[kind]()
                s = max(a.bit_length(), b.bit_length()) // 2 + 1
                if b <= 0 or min(a, b).bit_length() <= s:
                    continue
                assert _hgcd_steps(a, b, s, one) == in_gmpy2(a, b, s), (bits, kind)


def test_fast_reconstruction_agrees_with_the_plain_one_at_many_words():
    """At tens of thousands of bits (many Lehmer rounds and levels of recursion) the
    half-gcd's fraction is the plain extended Euclid's."""
    rng = random.Random(12)
    for bits in (12000, 50000):
        m = mpz(rng.getrandbits(bits)) | (mpz(1) << (bits - 1)) | 1
        bound = isqrt(m // 2)
        for _ in range(3):
            den = mpz(rng.randrange(1, int(bound)))
            num = mpz(rng.randrange(-int(bound), int(bound)))
            if gcd(den, m) != 1:
                continue
            x = num * invert(den, m) % m
            assert series.rational_reconstruct(x, m) == mpq(num, den) == \
                series.rational_reconstruct_simple(x, m)
        x = mpz(rng.getrandbits(bits)) % m     # a random residue: the same as the plain one
        assert series.rational_reconstruct(x, m) == series.rational_reconstruct_simple(x, m)


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


def test_stream_values_are_in_lowest_terms_when_seats_share_factors():
    """The confirmed seats are reduced all at once (one gcd where they share the
    denominator): numerators that share factors with the common denominator (small
    primes and a large one) come out in lowest terms, equal to gmpy2's own mpq."""
    big = next_prime(mpz(10) ** 40)
    den = mpz(2) ** 30 * 3 ** 7 * big * (mpz(7) ** 90 + 4)
    nums = [mpz(6) * big * 1234567, mpz(2) ** 20 * 3, (mpz(7) ** 90 + 4) * 11]
    nums.append(den - sum(nums))
    values = [mpq(n, den) for n in nums]
    stream = series.ReconstructionStream(4, holdout=2, must_sum_to_one=True)
    it = series.random_primes(21)
    while stream.values is None:
        primes = [next(it) for _ in range(8)]
        stream.add(primes, _residues_of(values, primes))
    assert stream.values == values
    for got, want in zip(stream.values, values):
        assert (got.numerator, got.denominator) == (want.numerator, want.denominator)
        assert gcd(got.numerator, got.denominator) == 1


def test_a_threaded_attempt_finds_the_same_seats(monkeypatch) -> None:
    """An attempt with threads (the CRT's top and columns beside the first seat's
    half-gcd, the seats over its denominator side by side) confirms the same fractions,
    and its CRT seconds are within the attempt's."""
    from ladders.solver.engines.series import reconstruct
    monkeypatch.setattr(reconstruct, "THREAD_BITS", 0)
    den = mpz(3) ** 900 * (mpz(10) ** 300 + 37)
    nums = [mpz(2) ** 1500 + 1, mpz(5) ** 600, mpz(7) ** 500 * 11]
    nums.append(den - sum(nums))
    values = [mpq(n, den) for n in nums]
    found = []
    for threads in (1, 3):
        stream = series.ReconstructionStream(4, holdout=2, must_sum_to_one=True, threads=threads,
                                             groups=5)
        it = series.random_primes(8)
        while stream.values is None:
            primes = [next(it) for _ in range(16)]
            stream.add(primes, _residues_of(values, primes))
        found.append(stream.values)
        snapshot = stream.snapshot()
        candidate = stream.try_snapshot(snapshot)
        assert candidate.values == values and 0 < candidate.crt_seconds <= candidate.seconds
    assert found[0] == found[1] == values


def test_a_seat_beyond_the_first_seats_denominator_grows_it_for_the_seats_after():
    """Seat 0's denominator (4 5^30) does not hold seat 1's (12): the common one grows to the
    lcm, and every later seat is taken over the grown one (a 4-player board once hung
    the engine, its seats refused by the sum forever, when the later seats kept the
    first denominator)."""
    values = [mpq(1, 4) + mpq(1, 5 ** 30), mpq(1, 12), mpq(5, 12) - mpq(1, 5 ** 30), mpq(1, 4)]
    assert _race_stream(values, seed=4, batches=20).values == values


def test_two_seats_beyond_the_first_seats_denominator_grow_it_twice():
    """Seat 1 needs a 3 more than seat 0's denominator, seat 2 a 7 more: the common one
    grows twice, and seat 2 is taken over it from its value over the first (its product
    with the factor so far, instead of a new product with the grown denominator)."""
    values = [mpq(1, 4) + mpq(1, 5 ** 30), mpq(1, 12), mpq(1, 7)]
    values.append(1 - sum(values))
    assert values[3] > 0 and values[3].denominator % 21 == 0
    assert _race_stream(values, seed=6, batches=30).values == values


def _race_stream(values: list, seed: int, batches: int) -> series.ReconstructionStream:
    """A race's stream (the seats sum to 1) fed the values' residues, 4 primes a batch,
    until it is done or ``batches`` were fed."""
    stream = series.ReconstructionStream(len(values), holdout=2, must_sum_to_one=True)
    it = series.random_primes(seed)
    for _ in range(batches):
        primes = [next(it) for _ in range(4)]
        if stream.add(primes, _residues_of(values, primes)):
            break
    return stream


@pytest.mark.parametrize("extra", [3, 2 ** 31 - 1, 2 ** 61 - 1])
def test_a_seat_whose_denominator_has_a_factor_more_grows_the_common_one(extra: int) -> None:
    """Seat 0's fraction reduces (its denominator is D / extra): seat 1 is over D, a
    small factor more (found by a few Euclidean steps), or a large one (2^61 - 1: past
    2^32, its own reconstruction); either way the seats come out whole."""
    d = mpz(7) ** 200 * extra
    values = [mpq(mpz(5) ** 150 * extra, d), mpq(mpz(2) ** 200 + 1, d)]
    values.append(1 - values[0] - values[1])
    assert values[0].denominator * extra == values[1].denominator == d and values[2] > 0
    assert _race_stream(values, seed=8, batches=200).values == values


def test_bounded_pair_stops_once_the_cofactor_passes_its_bound() -> None:
    from ladders.solver.engines.series.reconstruct import _bounded_pair
    rng = random.Random(14)
    m = mpz(next_prime(mpz(rng.getrandbits(4000))))
    for h in (1, 2, 12, 2 ** 20 + 7):
        n = mpz(rng.getrandbits(1900))
        x = n * invert(mpz(h), m) % m
        assert _bounded_pair(x, m, mpz(2) ** 1950, mpz(2) ** 32) == (n // gcd(n, h) if h > 1 else n,
                                                                     mpz(h) // gcd(n, h))
    x = mpz(rng.getrandbits(3990))            # no small cofactor: refused after ~50 steps
    assert _bounded_pair(x, m, mpz(2) ** 1950, mpz(2) ** 32) is None
    assert series.rational_reconstruct_bounded(x, m, mpz(2) ** 1950, mpz(2) ** 32) is None


def test_corrupted_residue_never_gives_a_wrong_answer():
    """One wrong residue among the primes the CRT combines: the attempts' candidates are
    refused at the held-out primes until Wang's pair is the fraction times that prime q
    (``q a = q b x`` holds modulo M, as ``a = b x`` does modulo ``M / q``); the pair is
    taken without a gcd check, confirmed, and reduced: the right fraction after all."""
    value = mpq(mpz(5) ** 200 + 1, mpz(11) ** 150)
    it = series.random_primes(13)
    stream = series.ReconstructionStream(1, holdout=2, first_bits=64, ratio=1.05)
    primes = [next(it) for _ in range(40)]
    res = _residues_of([value], primes)
    res[3][0] = (res[3][0] + 1) % primes[3]          # one wrong residue, used to build
    for i in range(0, 40, 4):
        stream.add(primes[i:i + 4], res[i:i + 4])
    assert stream.values == [value] and stream.rejected >= 1


def test_a_races_last_seat_is_one_minus_the_others_and_checked_at_the_held_out_primes():
    """A race's last seat is not combined: garbage in its column at every prime the CRT
    uses changes nothing (the sum used to refuse every attempt), and the seat is still
    confirmed by its own residues at the held-out primes, where a wrong one is refused."""
    values = [mpq(mpz(3) ** 200, mpz(7) ** 160), mpq(1, 3)]
    values.append(1 - sum(values))
    it = series.random_primes(17)
    primes = [next(it) for _ in range(64)]
    res = _residues_of(values, primes)
    for row, q in zip(res, primes):
        row[2] = (row[2] * 5 + 1) % q                      # the last seat's column, wrong
    stream = series.ReconstructionStream(3, holdout=2, must_sum_to_one=True, first_bits=64)
    assert stream.derives_last and stream.kept() == (0, 1)
    stream.add(primes, res)
    candidate = stream.try_snapshot(stream.snapshot())     # held out: the last two primes
    assert (candidate.values, candidate.rejected) == (None, 1)
    fixed = [row[:2] + [_residues_of(values, [q])[0][2]] for row, q in zip(res[-2:], primes[-2:])]
    stream = series.ReconstructionStream(3, holdout=2, must_sum_to_one=True, first_bits=64)
    stream.add(primes, res[:-2] + fixed)
    assert stream.values == values and stream.rejected == 0


def test_a_stream_that_is_not_a_race_combines_every_column():
    stream = series.ReconstructionStream(3, holdout=2)
    assert not stream.derives_last and stream.kept() is None
    assert series.ReconstructionStream(2, must_sum_to_one=True, multiple=True).kept() is None
    assert series.ReconstructionStream(3, must_sum_to_one=True, multiple=True).kept() == (0, 2)


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


def test_a_half_gcd_with_helper_threads_gives_the_same_pair(monkeypatch) -> None:
    """The half-gcd's products shared with helper threads (from a few thousand bits
    here, instead of millions): the same Wang pair, also one with a common factor."""
    from ladders.solver.engines.series import reconstruct
    monkeypatch.setattr(reconstruct, "HELPER_BITS", 4096)
    rng = random.Random(12)
    for a, b in [(mpz(rng.getrandbits(29_000)), mpz(rng.getrandbits(29_000)) | 1),
                 (mpz(3) ** 9000 * 7, mpz(5) ** 8000 * 7)]:
        m = mpz(rng.getrandbits(60_000)) | 1
        while gcd(m, b) != 1:
            m += 2
        x = a * invert(b, m) % m
        alone = reconstruct._wang_pair(x, m)
        for threads in (1, 3):
            with ThreadPoolExecutor(threads) as pool:
                assert reconstruct._wang_pair(x, m, reconstruct.Helpers(pool, threads)) == alone
        g = gcd(a, b)
        assert alone == (a // g, b // g)


def test_a_stream_whose_mapper_reads_the_groups_lets_go_of_their_residues() -> None:
    """With a mapper that reads each group's residues from where its batches came from
    (here a dict; a cluster's workers read the store), the stream keeps only the last
    batch's residues (the held-out primes') and finds the same seats; its own mapper
    refuses to let go of them."""
    from ladders.solver.engines.series.subproducts import group_terms, kept_columns
    values = [mpq(mpz(5) ** 300, mpz(11) ** 260), mpq(1, 7)]
    values.append(1 - sum(values))
    saved: dict[int, tuple] = {}

    def mapper(groups, tops):
        out = []
        for group, top in zip(groups, tops):
            rows = [(saved[k][0][:n], saved[k][1][:n]) for k, n in group.source]
            out.append(group_terms(np.concatenate([p for p, _ in rows]),
                                   kept_columns(np.concatenate([r for _, r in rows]), group.keep),
                                   top))
        return out

    with pytest.raises(ValueError, match="reads the groups"):
        series.ReconstructionStream(3, must_sum_to_one=True).let_go_of_residues()
    stream = series.ReconstructionStream(3, holdout=2, must_sum_to_one=True, mapper=mapper, groups=3)
    stream.let_go_of_residues()
    it = series.random_primes(23)
    for k in range(40):
        primes = np.array([next(it) for _ in range(8)], dtype=np.uint64)
        residues = np.array(_residues_of(values, primes.tolist()), dtype=np.uint64)
        saved[k] = (primes, residues)
        chunks = stream.snapshot()
        if stream.add(primes, residues, source=k):
            break
        assert [r is None for _, r, _ in stream.snapshot()] == [True] * k + [False]
    assert stream.values == values and len(chunks) < 39


def test_the_half_gcd_benchmark_checks_its_pairs_at_a_small_size() -> None:
    """scripts/bench_hgcd.py: both contenders in fresh processes, each pair compared
    with the fraction (the script exits non-zero on a miss)."""
    script = Path(__file__).resolve().parents[4] / "scripts" / "bench_hgcd.py"
    out = subprocess.run([sys.executable, str(script), "100000"], capture_output=True,
                         text=True, timeout=300, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])["rows"][0]
    assert row["bits"] == 100000 and row["alone"] > 0 and row["shared"] > 0
