"""Inverse of a polynomial modulo its own reversal over F_p (numba): the Schur-Cohn
recursion, halving the work of the half-gcd where the kernel's modulus has that shape.

Four and six players on ``hasbro`` split the survival factors so that
``D_a = D_b = P`` (:class:`.kernels.SeatInputs`, ``same_d``): step (5) then inverts
``P`` (degree n, ``P(0) = 1``) modulo ``chi = x^z P*``, ``P* = x^n P(1/x)`` its
reversal. The Euclidean algorithm does not see that shape; the Schur-Cohn recursion
does (I. Schur 1917, A. Cohn 1922; in the form of the Schur algorithm on a pair of
power series, as in the superfast Toeplitz solvers of Brent, Gustavson & Yun 1980 and
Ammar & Gragg 1988). One step, with ``alpha = P_k*(0)`` (the leading coefficient of
``P_k``) and ``beta = P_k(0)``::

    P_(k+1) = (alpha P_k - beta P_k*) / x,        P_(k+1)* = alpha P_k* - beta P_k

lowers the degree by one from both ends, and ``P_(k+1)*`` is again the reversal of
``P_(k+1)`` (formally, at degree ``n - k - 1``), so one polynomial carries the pair. It
has no division, so every step is defined (where one loses more than one degree, a
singular case of probability about n/p, the constant c below comes out 0). In the matrix
form
``x^k (P_k, P_k*) = Theta_k (P, P*)`` the matrix is ``[[a, b], [b#, a#]]``, ``#`` the
reversal at degree k: two polynomials, not the half-gcd's four. After n steps ``P_n``
is a constant c and ``x^n c = a P + b P*``, so if c is not 0 (else the caller falls back
to :func:`.hgcd.poly_invmod_fast`, which also decides a gcd that is not 1)::

    P^-1 = c^-1 a x^-n  (mod P*).

The first k steps read only the first k coefficients of the pair of power series
``(P, P*)`` (each step consumes one: the division by x), where the half-gcd's first k
quotients read 2k coefficients of each remainder. So the recursion :func:`_schur` does
the first half on half the coefficients, brings the pair on by one product with that
half's matrix (a middle product: only the coefficients between the halves are kept,
transforms of ``next_pow2(k)`` points), does the second half, and multiplies the two
matrices' first rows: about ten transforms of that size a level, against the
half-gcd's sixteen to twenty for a level of the same degree, which it must then run
again on the remainder of half the degree. ``x^-n`` mod ``P*`` costs one power series
inverse and two products (:func:`poly_invmod_reversal`); the factor ``x^z`` of chi one
more small Chinese remainder step. Measured at degree 3,003 (4 players on hasbro):
3.06 ms where the half-gcd takes 5.2 ms (one core; docs/benchmarks.md).

Conventions as in :mod:`.hgcd`: Montgomery residues, low degree first, uint64 arrays."""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.hgcd import (_dot2, _fwd, _inv_series, _pointwise2,
                                                _twisted_half)
from ladders.solver.engines.series.jit import nb
from ladders.solver.engines.series.montgomery import (ONE, ZERO, madd, minv, mmul, mneg,
                                                      msub, mul128, redc)
from ladders.solver.engines.series.polyarith import _below, _ntt_inverse, cyclic_mul, next_pow2

#: Steps below which a level runs the quadratic recursion.
SCHUR_BASE = 32


@nb.njit(inline="always", cache=True)
def _lin(alpha, x, nbeta, y, fp):  # pragma: no cover - compiled
    """``alpha x + nbeta y`` (Montgomery, all four below p): one reduction for both
    products (their sum is below ``2 p^2 < p 2^64`` for p < 2^62)."""
    h0, l0 = mul128(alpha, x)
    h1, l1 = mul128(nbeta, y)
    lo = l0 + l1
    hi = h0 + h1 + (ONE if lo < l0 else ZERO)
    return redc(hi, lo, fp)


@nb.njit(cache=True)
def _reversed(x, degree):  # pragma: no cover - compiled
    """``x^degree x(1/x)`` for ``deg x <= degree`` (``degree + 1`` coefficients)."""
    z = np.zeros(degree + 1, dtype=np.uint64)
    for i in range(min(x.size, degree + 1)):
        z[degree - i] = x[i]
    return z


@nb.njit(cache=True)
def _schur_leaf(u, v, k, fp):  # pragma: no cover - compiled
    """:func:`_schur` by the steps themselves: about ``4 k^2`` products."""
    p, one = fp.p, fp.one
    uu = u[:k].copy()
    vv = v[:k].copy()
    a = np.zeros(k + 1, dtype=np.uint64)
    b = np.zeros(k + 1, dtype=np.uint64)
    a[0] = one
    nxt = ZERO
    for j in range(k):
        alpha = vv[0]
        nbeta = mneg(uu[0], p)
        nxt = _lin(alpha, alpha, nbeta, uu[0], fp)     # v_(j+1)(0)
        # (u, v) <- ((alpha u - beta v) / x, alpha v - beta u), k - j - 1 terms on
        for t in range(k - j - 1):
            nv = _lin(alpha, vv[t], nbeta, uu[t], fp)
            uu[t] = _lin(alpha, uu[t + 1], nbeta, vv[t + 1], fp)
            vv[t] = nv
        # (a, b) <- (alpha a - beta b#, alpha b - beta a#), # reversing at degree j
        lo = 0
        hi = j
        while lo <= hi:
            a_lo = a[lo]
            a_hi = a[hi]
            b_lo = b[lo]
            b_hi = b[hi]
            a[lo] = _lin(alpha, a_lo, nbeta, b_hi, fp)
            b[lo] = _lin(alpha, b_lo, nbeta, a_hi, fp)
            if lo != hi:
                a[hi] = _lin(alpha, a_hi, nbeta, b_lo, fp)
                b[hi] = _lin(alpha, b_hi, nbeta, a_lo, fp)
            lo += 1
            hi -= 1
    empty = np.zeros(0, dtype=np.uint64)
    return a[:k].copy(), b[:k].copy(), nxt, empty, empty


@nb.njit(cache=True)
def _transform(x, half_values, size, roots, p):  # pragma: no cover - compiled
    """The transform of ``x`` (degree < size/2) at ``size`` points, given its transform
    at ``size/2`` points if at hand (``half_values``; else empty): that is the first half
    (see :mod:`.hgcd`, "Transforms"), and the second is the transform at size/2 of
    ``x_i w^i``, w of order size (what the first butterflies would have made)."""
    half = size // 2
    if half_values.size != half:
        return _fwd(x, size, roots, p)
    f = np.zeros(size, dtype=np.uint64)
    f[:half] = half_values
    _twisted_half(x, f, half, roots, p)
    return f


@nb.njit(cache=True)
def _reversal_transform(f, size, p):  # pragma: no cover - compiled
    """The transform of ``x^(size/2) x(1/x)`` at ``size`` points from ``f``, x's own
    (``deg x <= size/2``): at a point w, ``w^(size/2) x(1/w)``, and ``w^(size/2) = -1``
    at the odd powers of the root. In the bit-reversed order of the transforms the
    point ``1/w`` of the entry r (``2^j <= r < 2^(j+1)``) is the entry ``3 2^j - 1 - r``,
    and the odd powers are the upper half."""
    twop = p + p
    g = np.empty(size, dtype=np.uint64)
    g[0] = f[0]
    block = 1
    while block < size:
        for r in range(block, 2 * block):
            g[r] = f[3 * block - 1 - r]
        block *= 2
    for r in range(size // 2, size):
        g[r] = _below(twop - g[r], twop)
    return g


@nb.njit(cache=True)
def _coefficients(values, size, iroots, fp):  # pragma: no cover - compiled
    """The inverse transform of a copy of ``values``."""
    z = values.copy()
    _ntt_inverse(z, size, iroots, fp)
    return z


@nb.njit(cache=True)
def _schur(u, v, k, fp, roots, iroots):  # pragma: no cover - compiled
    """k Schur steps of the pair of power series ``(u, v)``, of which the first k
    coefficients are read: ``(a, b, c, fa, fb)`` with ``(a, b)`` (k coefficients each)
    the first row of ``Theta_k``, ``x^k (u_k, v_k) = Theta_k (u, v)``,
    ``Theta_k = [[a, b], [b#, a#]]``, and ``c = v_k(0)``; ``fa``, ``fb`` the transforms
    of a and b at ``next_pow2(k)`` points (empty at a leaf).

    The split is at ``h = N/2``, ``N = next_pow2(k)``: every product of the level is
    cyclic of size N without harm (the middle product's wrap-around stays below h,
    where nothing is kept), the first call's transforms at N/2 are half of those at N
    (:func:`_transform`), and the reversal at degree h is a permutation of the
    transform (:func:`_reversal_transform`). (b is made at the top too, where only a is
    read: a flag to skip it, a literal in the recursive call, made numba compile a second
    specialization whose cached code crashed the process that loaded it.)"""
    p = fp.p
    if k <= SCHUR_BASE:
        return _schur_leaf(u, v, k, fp)
    size = next_pow2(k)
    h = size // 2
    a1, b1, _c, fa1h, fb1h = _schur(u, v, h, fp, roots, iroots)
    fu = _fwd(u[:k], size, roots, p)
    fv = _fwd(v[:k], size, roots, p)
    fa1 = _transform(a1, fa1h, size, roots, p)
    fb1 = _transform(b1, fb1h, size, roots, p)
    fra1 = _reversal_transform(fa1, size, p)
    frb1 = _reversal_transform(fb1, size, p)
    # x^h (u_h, v_h) = Theta_h (u, v): coefficients h .. k-1
    uh = _dot2(fa1, fu, fb1, fv, size, iroots, fp)[h:k].copy()
    vh = _dot2(frb1, fu, fra1, fv, size, iroots, fp)[h:k].copy()
    a2, b2, c, fa2h, fb2h = _schur(uh, vh, k - h, fp, roots, iroots)
    fa2 = _transform(a2, fa2h, size, roots, p)
    fb2 = _transform(b2, fb2h, size, roots, p)
    # the first row of Theta_(k-h) Theta_h
    fa = _pointwise2(fa2, fa1, fb2, frb1, size, fp)
    a = _coefficients(fa, size, iroots, fp)[:k].copy()
    fb = _pointwise2(fa2, fb1, fb2, fra1, size, fp)
    b = _coefficients(fb, size, iroots, fp)[:k].copy()
    return a, b, c, fa, fb


@nb.njit(cache=True)
def poly_invmod_reversal(poly, z, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``(ok, g)``: ``g = poly^-1 mod x^z poly*`` (``poly*`` the reversal of poly at its
    degree n), ``n + z`` coefficients, Montgomery; ``ok`` False (g zero) where the Schur
    recursion cannot say (``poly(0)`` or its leading coefficient 0, or the constant c
    0): the caller asks :func:`.hgcd.poly_invmod_fast` then. Needs transforms of
    ``next_pow2(2n)`` points (``nmax``).

    The steps: a and c of :func:`_schur` for n steps of ``(poly, poly*)``, so that
    ``a poly + b poly* = c x^n``; ``V = c^-1 a x^-n mod poly*`` as ``(a + K poly*) / x^n``
    with ``K = -a poly*^-1 mod x^n`` (a power series inverse), whose coefficients n ..
    2n-1 a cyclic product of ``next_pow2(n + 1)`` points gives, those that wrapped
    around being known: the low n are ``-a``; then ``g = V + poly* w`` with
    ``w = (poly^-1 - V) poly*^-1 mod x^z`` (g = V mod poly*, g = poly^-1 mod x^z)."""
    p = fp.p
    n = poly.size - 1
    g = np.zeros(n + z, dtype=np.uint64)
    if n < 1 or poly[0] == ZERO or poly[n] == ZERO or next_pow2(2 * n) > nmax:
        return False, g
    rev = _reversed(poly, n)
    a, _b, c, _fa, _fb = _schur(poly, rev, n, fp, roots, iroots)
    if c == ZERO:
        return False, g
    cinv = minv(c, fp)
    rinv = _inv_series(rev, max(n, z), fp, roots, iroots)
    # K = -a poly*^-1 mod x^n
    empty = np.zeros(0, dtype=np.uint64)
    big = next_pow2(2 * n - 1)
    fk = cyclic_mul(rinv, n, a, n, big, roots, iroots, nmax, fp, empty)
    k = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        k[i] = mneg(fk[i], p)
    # (K poly*)_(n + i), i < n: entry n + i of the cyclic product of size m > n, or
    # for n + i >= m, entry n + i - m plus a_(n + i - m) (the true entry there is -a)
    m = next_pow2(n + 1)
    prod = cyclic_mul(rev, n + 1, k, n, m, roots, iroots, nmax, fp, empty)
    for i in range(n):
        t = n + i
        val = prod[t] if t < m else madd(prod[t - m], a[t - m], p)
        g[i] = mmul(val, cinv, fp)
    if z > 0:
        # w = (poly^-1 - V) poly*^-1 mod x^z, g += poly* w
        pinv = _inv_series(poly, z, fp, roots, iroots)
        diff = np.zeros(z, dtype=np.uint64)
        for i in range(z):
            diff[i] = msub(pinv[i], g[i], p)
        for i in range(z):
            w = ZERO
            for j in range(i + 1):
                w = madd(w, mmul(diff[j], rinv[i - j], fp), p)
            if w != ZERO:
                for t in range(n + 1):
                    g[i + t] = madd(g[i + t], mmul(w, rev[t], fp), p)
    return True, g
