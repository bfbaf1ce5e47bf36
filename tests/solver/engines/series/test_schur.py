"""The Schur-Cohn inverse :func:`poly_invmod_reversal` (``P^-1 mod x^z P*``) against the
half-gcd :func:`poly_invmod_fast` on the same modulus: the same array for every input
it accepts, and it accepts every generic one.

Random P of degrees around the recursion's leaves and its powers of two, with and
without the factor x^z; the inputs it must hand back (a leading coefficient 0, P and P*
with a common factor); inputs whose Schur steps are singular (a remainder that loses
more than one degree), which it hands back too."""

from __future__ import annotations

import random

import numpy as np
import pytest

from test_hgcd import NTT_PRIME, Field

from ladders.solver.engines.series.hgcd import poly_invmod_fast
from ladders.solver.engines.series.polyarith import poly_rem
from ladders.solver.engines.series.schur import SCHUR_BASE, poly_invmod_reversal

FIELD = Field(NTT_PRIME, nmax=1 << 14)


def modulus(poly: np.ndarray, z: int) -> np.ndarray:
    """``x^z P*``, monic when ``P(0) = 1``."""
    chi = np.zeros(poly.size + z, dtype=np.uint64)
    chi[z:] = poly[::-1]
    return chi


def expected(poly: np.ndarray, z: int) -> tuple[bool, np.ndarray]:
    chi = modulus(poly, z)
    rem = poly_rem(poly, chi, FIELD.fp)            # P itself unless z = 0
    ok, g = poly_invmod_fast(rem, chi, FIELD.fp, FIELD.roots, FIELD.iroots, FIELD.nmax)
    return bool(ok), g


def schur(poly: np.ndarray, z: int) -> tuple[bool, np.ndarray]:
    ok, g = poly_invmod_reversal(poly, z, FIELD.fp, FIELD.roots, FIELD.iroots, FIELD.nmax)
    return bool(ok), g


def random_poly(rng: random.Random, n: int) -> np.ndarray:
    poly = FIELD.random(rng, n + 1)
    poly[0] = FIELD.one                             # P(0) = 1, as D_b
    return poly


DEGREES = [1, 2, 3, 5, 8, SCHUR_BASE - 1, SCHUR_BASE, SCHUR_BASE + 1, 2 * SCHUR_BASE + 1, 100,
           127, 128, 129, 255, 256, 257, 700, 1024, 1025, 2047, 3003, 4097]


@pytest.mark.parametrize("n", DEGREES)
def test_random_inputs_equal_the_half_gcd(n):
    rng = random.Random(n)
    for z in (0, 1, 4, 11):
        poly = random_poly(rng, n)
        ok, g = schur(poly, z)
        assert ok                                   # generic: no hand-back
        ref_ok, ref = expected(poly, z)
        assert ref_ok and g.dtype == ref.dtype and np.array_equal(g, ref)


def test_a_leading_zero_or_too_few_transforms_hand_back():
    rng = random.Random(1)
    poly = random_poly(rng, 40)
    poly[40] = 0
    ok, g = schur(poly, 2)
    assert not ok and g.size == 42 and not g.any()
    small = Field(NTT_PRIME, nmax=64)               # 2n = 80 > 64 points
    ok, _ = poly_invmod_reversal(random_poly(rng, 40), 0, FIELD.fp, small.roots, small.iroots,
                                 small.nmax)
    assert not ok


@pytest.mark.parametrize("n", [6, 50, 300])
def test_a_common_factor_hands_back(n):
    # a palindromic factor F (F* = F) divides P and P*: no inverse, and the constant
    # c of the recursion is 0
    rng = random.Random(n)
    f = FIELD.mont([1, 3, 1])
    poly = FIELD.mul(f, random_poly(rng, n - 2))
    assert int(poly[0]) == int(FIELD.one)
    assert expected(poly, 3)[0] is False
    assert schur(poly, 3)[0] is False


@pytest.mark.parametrize("n", [5, 40, 200])
def test_singular_steps_hand_back_to_the_half_gcd(n):
    # P(0) = lead(P) = 1: the first step's remainder loses its top coefficient, the
    # division-free steps end in c = 0, and the half-gcd (the kernel's fallback) finds
    # the inverse that exists
    rng = random.Random(n)
    for _ in range(5):
        poly = random_poly(rng, n)
        poly[n] = FIELD.one
        ok, g = schur(poly, 2)
        assert not ok and not g.any()
        assert expected(poly, 2)[0]
