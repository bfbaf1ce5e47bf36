"""The half-gcd inverse :func:`poly_invmod_fast` against the quadratic
:func:`poly_invmod`: the same ``(ok, g)``, array for array, for every input; and the
half-gcd resultant :func:`poly_resultant_fast` against the quadratic
:func:`poly_resultant`, residue for residue.

Random inputs of degree 1..5000 with and without transforms, inputs whose Euclidean
remainders drop degree by more than one (built from chosen quotients, or natural
modulo small primes), common factors (ok False), and the odd inputs (a = 0, a
constant, trailing zeros, a longer than the modulus, degree 0 and 1 moduli)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ladders.solver.engines.series.hgcd import (HGCD_BASE, _divmod, poly_invmod_fast,
                                                poly_invmod_resultant, poly_rem_long,
                                                poly_resultant_fast)
from ladders.solver.engines.series.montgomery import field
from ladders.solver.engines.series.polyarith import (cyclic_mul, ntt_tables, poly_invmod, poly_rem,
                                                     poly_resultant)
from ladders.solver.engines.series.reconstruct import ntt_primes, ntt_root

R = 1 << 64
NTT_PRIME = next(ntt_primes(11))


class Field:
    """F_p in Montgomery form with transforms up to ``nmax`` (None: the largest the
    prime has, at most 2^16; 0: none)."""

    def __init__(self, p: int, nmax: int | None = None):
        self.p = p
        self.pu = np.uint64(p)
        self.fp = field(p)
        self.one = self.fp.one
        omega, k = ntt_root(p)
        if nmax is None:
            nmax = 1 << min(k, 16)
        self.nmax = np.int64(nmax)
        self.roots, self.iroots = ntt_tables(np.uint64(omega * R % p), np.int64(k), self.nmax,
                                             self.fp)

    def mont(self, coeffs) -> np.ndarray:
        return np.array([c % self.p * R % self.p for c in coeffs], dtype=np.uint64)

    def random(self, rng: random.Random, length: int, monic: bool = False) -> np.ndarray:
        coeffs = [rng.randrange(self.p) for _ in range(length)]
        if length and (monic or coeffs[-1] == 0):
            coeffs[-1] = 1 if monic else rng.randrange(1, self.p)
        return self.mont(coeffs)

    def mul(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Schoolbook product (no transforms: independent of the code under test)."""
        n = x.size + y.size - 1
        size = 1 << max(n - 1, 0).bit_length()
        z = cyclic_mul(x, x.size, y, y.size, size, self.roots, self.iroots, np.int64(0),
                       self.fp, np.zeros(0, dtype=np.uint64))
        return z[:n]

    def add(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        z = np.zeros(max(x.size, y.size), dtype=np.uint64)
        z[:x.size] = x
        z[:y.size] += y
        return np.where(z >= self.pu, z - self.pu, z)

    def monic_pair(self, m: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(m, a) / lc(m)``: the same quotients, m monic."""
        lc = int(m[-1]) * pow(R, -1, self.p) % self.p
        c = self.mont([pow(lc, -1, self.p)])
        return self.mul(m, c), self.mul(a, c)

    def check(self, a: np.ndarray, m: np.ndarray) -> bool:
        """Both inverses of a mod m agree, and both resultants ``Res(m, a)`` (the half-gcd's
        and the quadratic Euclid's), nonzero exactly where a is invertible; returns ok."""
        ok, g = poly_invmod(a, m, self.fp)
        ok2, g2 = poly_invmod_fast(a, m, self.fp, self.roots, self.iroots, self.nmax)
        assert ok2 == ok
        assert g2.dtype == g.dtype and np.array_equal(g2, g)
        if m.size > 1:
            res = poly_resultant(m, a[:m.size - 1].copy(), self.fp)
            res2 = poly_resultant_fast(a, m, self.fp, self.roots, self.iroots, self.nmax)
            assert int(res2) == int(res)
            assert (res != 0) == bool(ok)
            ok3, g3, res3 = poly_invmod_resultant(a, m, self.fp, self.roots, self.iroots,
                                                  self.nmax)
            assert (ok3, int(res3)) == (ok, int(res)) and np.array_equal(g3, g)
        return bool(ok)


NTT = Field(NTT_PRIME)
SCHOOL = Field(NTT_PRIME, nmax=0)
SMALL_NTT = Field(NTT_PRIME, nmax=64)


def from_quotients(field: Field, rng: random.Random, quotient_degrees: list[int],
                   last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(m, a)`` whose Euclidean remainder sequence ends in ``last`` (then 0), with
    quotients of the given degrees from the top: ``r_(i-1) = q_i r_i + r_(i+1)``."""
    lower, upper = np.zeros(0, dtype=np.uint64), last
    for d in reversed(quotient_degrees):
        lower, upper = upper, field.add(field.mul(field.random(rng, d + 1), upper), lower)
    return field.monic_pair(upper, lower)


DEGREES = [1, 2, 3, 4, 5, 7, 8, 16, 31, 33, 64, 100, 127, 129, HGCD_BASE - 1, HGCD_BASE,
           HGCD_BASE + 1, 2 * HGCD_BASE, 255, 256, 257, 300, 511, 513, 700, 1000, 1024, 1025,
           1500, 2047, 2049, 3007, 4097, 5000]


@pytest.mark.parametrize("dm", DEGREES)
def test_random_inputs(dm):
    rng = random.Random(dm)
    m = NTT.random(rng, dm + 1, monic=True)
    for la in sorted({dm, max(dm - 1, 1), max(dm - 4, 1), rng.randrange(1, dm + 1)}):
        a = NTT.random(rng, la)
        assert NTT.check(a, m)
        if dm <= 1500:
            assert SCHOOL.check(a, m)
        if dm <= 2049:
            assert SMALL_NTT.check(a, m)


def test_odd_inputs():
    rng = random.Random(1)
    for field in (NTT, SCHOOL):
        for dm in (0, 1, 2, 40, 400):
            m = field.random(rng, dm + 1, monic=True)
            cases = [np.zeros(0, dtype=np.uint64), np.zeros(5, dtype=np.uint64),
                     field.mont([7]), field.mont([0, 0, 3]), field.random(rng, dm + 5),
                     np.concatenate([field.random(rng, max(dm - 3, 1)),
                                     np.zeros(9, dtype=np.uint64)]),
                     np.concatenate([np.zeros(dm, dtype=np.uint64), field.random(rng, 4)])]
            for a in cases:
                field.check(a, m)


def test_common_factor_is_not_invertible():
    rng = random.Random(2)
    for dm, dg in [(5, 1), (200, 3), (700, 40), (2500, 1), (2500, 600)]:
        g = NTT.random(rng, dg + 1, monic=True)
        m = NTT.mul(g, NTT.random(rng, dm - dg + 1, monic=True))
        a = NTT.mul(g, NTT.random(rng, dm - dg - 2))
        for field in (NTT, SCHOOL, SMALL_NTT) if dm <= 700 else (NTT,):
            assert not field.check(a, m)


@pytest.mark.parametrize("seed", range(8))
def test_degree_drops(seed):
    """Quotients of every length (Newton division for the long ones) anywhere in the
    sequence, ending in a constant (invertible) or not."""
    rng = random.Random(seed)
    shapes = [1] * 12 + [2, 3, 5, 17, 70, 150, 400]
    for invertible in (True, False):
        degrees = [rng.choice(shapes) for _ in range(rng.randrange(10, 120))]
        if seed % 2:
            degrees[0] = rng.choice([100, 900])           # a of much lower degree than m
        last = NTT.random(rng, 1 if invertible else rng.randrange(2, 30))
        m, a = from_quotients(NTT, rng, degrees, last)
        assert NTT.check(a, m) == invertible
        if m.size < 2000:
            assert SCHOOL.check(a, m) == invertible
            assert SMALL_NTT.check(a, m) == invertible


@pytest.mark.parametrize("p, nmax", [(3, 0), (5, 0), (7, 0), (257, 256), (12289, 4096),
                                     (65537, 1 << 16)])
def test_small_primes(p, nmax):
    """Modulo a small prime the remainders drop degree often, and gcds are often
    nonconstant: no construction needed."""
    field = Field(p, nmax)
    rng = random.Random(p)
    for dm in (1, 2, 3, 10, 100, 400, 1300, 3000) if nmax else (1, 2, 3, 10, 100, 400, 1300):
        for _ in range(6 if dm < 1000 else 2):
            m = field.random(rng, dm + 1, monic=True)
            field.check(field.random(rng, rng.randrange(0, dm + 2)), m)


def test_division():
    """Newton division (long quotient and divisor) against schoolbook division."""
    rng = random.Random(3)
    for lc, ld in [(300, 200), (1000, 100), (1000, 900), (4000, 1000), (2000, 65)]:
        c, d = NTT.random(rng, lc), NTT.random(rng, ld)
        got = _divmod(c, d, NTT.fp, NTT.roots, NTT.iroots, NTT.nmax)
        ref = _divmod(c, d, NTT.fp, NTT.roots, NTT.iroots, np.int64(0))
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
        assert got[0].size == lc - ld + 1 and got[1].size < ld


@pytest.mark.parametrize("la, lm", [(200, 65), (129, 65), (130, 65), (1000, 64), (1000, 65),
                                    (1025, 513), (5000, 300), (20001, 1024), (20000, 1025),
                                    (3000, 1500), (100, 300), (70, 65)])
def test_blocked_remainder(la: int, lm: int) -> None:
    """The remainder by blocks of the quotient against schoolbook (a of la coefficients,
    a monic modulus of lm): exact for every shape, including the last short block, a
    modulus of a power-of-two degree and a dividend shorter than the modulus."""
    rng = random.Random(la * lm)
    a, m = NTT.random(rng, la), NTT.random(rng, lm, monic=True)
    ref = poly_rem(a, m, NTT.fp)
    assert np.array_equal(poly_rem_long(a, m, NTT.fp, NTT.roots, NTT.iroots, NTT.nmax), ref)
    assert np.array_equal(poly_rem_long(a, m, NTT.fp, SMALL_NTT.roots, SMALL_NTT.iroots,
                                        SMALL_NTT.nmax), ref)  # too small a table: schoolbook
