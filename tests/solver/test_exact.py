"""Exact fractions over one common denominator: :func:`lowest_terms` against gmpy2's
own canonical ``mpq``, on inputs built to exercise its shortcuts and its fallbacks."""

from __future__ import annotations

import contextlib
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from ladders.solver.exact import FractionTable, coprime_mpq, gcd, lowest_terms, mpq, mpz, next_prime


def rough_prime(rng: random.Random, bits: int) -> mpz:
    return next_prime(mpz(rng.getrandbits(bits)) | (mpz(1) << (bits - 1)))


def check(nums: list[mpz], den: mpz, **options: Any) -> None:
    p, q = lowest_terms(nums, den, **options)
    assert [mpq(a, b) for a, b in zip(p, q)] == [mpq(v, den) for v in nums]
    assert all(mpq(a, b).numerator == a and mpq(a, b).denominator == b for a, b in zip(p, q))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32), sample=st.sampled_from([0, 1, 3, 256]),
       rough=st.integers(0, 3), size=st.integers(1, 60), ways=st.sampled_from([0, 1, 2, 3]))
def test_lowest_terms_equals_mpq(seed: int, sample: int, rough: int, size: int,
                                 ways: int) -> None:
    """A denominator of small primes times up to three big ones; numerators that share
    any mix of them, zeros, negatives and the denominator itself. A sample of 0 or 1
    misses most shared divisors, so the classes' proofs fail and the fallback runs.
    With threads (ways > 0), a class is proven in that many parts side by side, each
    failing part falling back on its own."""
    rng = random.Random(seed)
    small = mpz(2) ** rng.randrange(0, 40) * mpz(3) ** rng.randrange(0, 20) * rng.choice([1, 7, 65521])
    big = [rough_prime(rng, rng.choice([70, 300, 900])) for _ in range(rough)]
    den = small
    for b in big:
        den *= b ** rng.randrange(1, 3)
    nums = []
    for _ in range(size):
        kind = rng.random()
        if kind < 0.1:
            v = mpz(0)
        elif kind < 0.15:
            v = den
        else:
            v = mpz(rng.randrange(0, int(den) + 1))
            for b in big:
                if rng.random() < 0.3:
                    v = v - v % b               # share a big factor (then maybe a small one)
            if rng.random() < 0.3:
                v *= rng.choice([2, 3, 6, 7])
        nums.append(-v if rng.random() < 0.1 else v)
    with ThreadPoolExecutor(2) if ways else contextlib.nullcontext() as pool:
        check(nums, den, sample=sample, seed=seed, pool=pool, ways=max(ways, 1))


def test_the_smooth_part_comes_out_whole_at_any_multiplicity() -> None:
    """``den = S R``: S all the primes below 2^16 with their multiplicities (three
    players' multiple of the denominator has 6^e, e in the thousands), R none of them."""
    from ladders.solver.exact import SMOOTH_BOUND, _primorial, _split_smooth
    assert 65521 < SMOOTH_BOUND < 65537         # the largest prime below it, the first above
    rng = random.Random(5)
    big = rough_prime(rng, 300)
    for small in (mpz(6) ** 3000 * 5 ** 7 * 65521, mpz(2) ** 1 * 3 ** 4096, mpz(1)):
        for rough in (mpz(1), big, big ** 2 * 65537):
            smooth_part, rough_part = _split_smooth(small * rough)
            assert (smooth_part, rough_part) == (small, rough)
            assert gcd(rough_part, _primorial()) == 1
    check([mpz(6) ** 2999 * 5, mpz(7) * big, mpz(1)], mpz(6) ** 3000 * 5 ** 7 * big)


def test_lowest_terms_of_small_and_trivial_denominators() -> None:
    check([mpz(v) for v in range(-12, 13)], mpz(12))
    check([mpz(0), mpz(5)], mpz(1))
    check([], mpz(7))


def test_lowest_terms_takes_one_gcd_each_when_the_sample_finds_many_divisors() -> None:
    rng = random.Random(5)
    primes = [rough_prime(rng, 80) for _ in range(12)]
    den = mpz(1)
    for b in primes:
        den *= b
    nums = [den // b * rng.randrange(1, 1000) for b in primes for _ in range(3)]
    check(nums, den)                            # 12 divisors in the sample: over MAX_DIVISORS


def test_fraction_table_is_a_mapping_of_fractions_with_exact_texts() -> None:
    values = {(0, 1): mpq(1, 3), (0, 0): mpq(2, 3), (1, 0): mpq(5), (1, 1): mpq(-7, 3)}
    table = FractionTable.from_values(values)
    assert table == values and len(table) == 4 and table[(0, 1)] == mpq(1, 3)
    assert list(table.texts()) == [((0, 0), "2", "3"), ((0, 1), "1", "3"), ((1, 0), "5", None),
                                   ((1, 1), "-7", "3")]
    given = FractionTable(list(values), [mpz(1), mpz(2), mpz(5), mpz(-7)], [mpz(3), mpz(3), mpz(1), mpz(3)],
                          ["1", "2", "5", "-7"])
    assert list(given.texts()) == list(table.texts())


@settings(max_examples=200, deadline=None)
@given(num=st.integers(-(2 ** 3000), 2 ** 3000), den=st.integers(1, 2 ** 3000))
def test_coprime_mpq_is_the_mpq_of_lowest_terms(num: int, den: int) -> None:
    """A pair in lowest terms becomes the same mpq as gmpy2 makes, sign and all, and it
    compares, hashes and prints as that one does."""
    g = gcd(num, den)
    num, den = num // g, den // g
    made, plain = coprime_mpq(mpz(num), mpz(den)), mpq(num, den)
    assert made == plain and hash(made) == hash(plain) and str(made) == str(plain)
    assert (made.numerator, made.denominator) == (num, den)
    with pytest.raises(ValueError):
        coprime_mpq(num, 0)
