"""Inverse of a polynomial modulo another over F_p, and their resultant (numba),
subquadratic: the half-gcd, to replace the quadratic extended Euclid
:func:`.polyarith.poly_invmod` and the quadratic :func:`.polyarith.poly_resultant`.

The half-gcd (Knuth 1970, Schoenhage 1971, Moenck 1973) gets the Euclidean quotients
from the top coefficients: the quotients of ``(a, b)``, ``deg a = n``, whose
remainders keep degree >= ``n - k`` are those of ``(a div x^s, b div x^s)`` when
``2k <= n - s`` (von zur Gathen & Gerhard, "Modern Computer Algebra", 3rd ed., Lemma
11.1 and section 11.1). With two recursive calls on top parts (the formulation of
Thull & Yap 1990, "A unified approach to HGCD algorithms for polynomials and
integers"), :func:`_hgcd` returns the 2x2 matrix M of the quotients from ``(a, b)``
down to the consecutive remainders ``(c, d) = M (a, b)``, ``deg c >= ceil(n/2) >
deg d``, in O(M(n) log n) for products costing M(n):

1. ``R = hgcd(a div x^m, b div x^m)``, ``m = ceil(n/2)``: then ``R (a, b)`` is ``x^m``
   times the pair that call returns plus ``R (a mod x^m, b mod x^m)``, and its
   second member has degree < 3n/4 + 1;
2. one Euclidean step ``(c, d) -> (d, e = c mod d)``, ``Q = [[0, 1], [1, -q]]``;
3. ``S = hgcd(d div x^k, e div x^k)`` with ``k = 2m - deg d`` goes on to degree m;
4. the result is ``S Q R`` and ``S (d, e)``, made like step 1.

:func:`poly_invmod_fast` repeats half-gcd and one step, each time on a pair of half
the degree, and carries the row of the last pair back up through the matrices;
:func:`poly_resultant_fast` takes the same way down and multiplies each step's share of
the resultant as it goes (:func:`_step_factor`).

Products are number-theoretic transforms (:mod:`.polyarith`; schoolbook where none
fits ``nmax`` or where that is cheaper). A level of degree n transforms at one size N
> n/2, and nothing twice: R and S (degree <= n/4) once each, starting from the
transforms of size N/2 their recursive call made them with (a twisted half transform
completes them); the pairs they multiply in pieces or wrapped around modulo
``x^N - 1`` (:func:`_pair_product`); ``Q R`` pointwise from R's transforms; ``S Q R``
pointwise, handed up with its transforms. Below degree ``HGCD_BASE`` the quotients
come from the quadratic algorithm, with a linear quotient in one pass.

Measured against poly_invmod (random inputs, a 2^16-transform prime): about the same
below degree 200, 1.8 times as fast at 500, 2.6 at 1000, 5.5 at 3000, 10 at 6000.

Conventions: coefficients are Montgomery residues (:mod:`.montgomery`), low degree
first; a polynomial is a C-contiguous uint64 array without trailing zeros (zero is
empty) unless said otherwise; ``fp`` is the prime's :class:`.montgomery.Field`
(``p`` and its Montgomery constants), ``roots``, ``iroots`` the ``(2, nmax)`` tables
of :func:`.polyarith.ntt_tables` and ``nmax`` (int64) the largest transform (0: none);
sizes are int64 powers of two."""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.algebra import DIV_NEWTON, HGCD_BASE, XGCD_BASE
from ladders.solver.engines.series.jit import nb
from ladders.solver.engines.series.montgomery import (ONE, U64, ZERO, mdot_rev, minv, mmul,
                                                      mneg, mpow, msub, mul128, redc)
from ladders.solver.engines.series.polyarith import (_ntt_forward, _ntt_inverse, _shoup,
                                                     _times_transform, next_pow2, poly_rem)


# ----------------------------------------------------------------------------------
# Plain polynomial helpers (arrays without trailing zeros)
# ----------------------------------------------------------------------------------

@nb.njit(inline="always", cache=True)
def _madd(a, b, p):  # pragma: no cover - compiled
    """``a + b mod p`` without a branch (``a, b < p < 2^62``). :func:`.montgomery.madd`
    compiles to a jump, mispredicted half the time on random residues: loops with it
    ran twice as long here."""
    s = a + b - p
    return s + (p & (ZERO - (s >> U64(63))))


@nb.njit(cache=True)
def _trimmed(x):  # pragma: no cover - compiled
    """A copy of ``x`` without its trailing zeros (uint64 array)."""
    n = x.size
    while n > 0 and x[n - 1] == ZERO:
        n -= 1
    return x[:n].copy()


@nb.njit(cache=True)
def _add_shifted(lo, hi, shift, p):  # pragma: no cover - compiled
    """``lo + x^shift hi`` (polynomials, shift >= 0)."""
    n = max(lo.size, hi.size + shift)
    z = np.zeros(n, dtype=np.uint64)
    z[:lo.size] = lo
    for i in range(hi.size):
        z[shift + i] = _madd(z[shift + i], hi[i], p)
    return _trimmed(z)


@nb.njit(cache=True)
def _add(x, y, p):  # pragma: no cover - compiled
    """``x + y`` (polynomials)."""
    z = np.zeros(max(x.size, y.size), dtype=np.uint64)
    z[:x.size] = x
    for i in range(y.size):
        z[i] = _madd(z[i], y[i], p)
    return _trimmed(z)


@nb.njit(cache=True)
def _sub(x, y, p):  # pragma: no cover - compiled
    """``x - y`` (polynomials)."""
    z = np.zeros(max(x.size, y.size), dtype=np.uint64)
    z[:x.size] = x
    for i in range(y.size):
        z[i] = msub(z[i], y[i], p)
    return _trimmed(z)


@nb.njit(cache=True)
def _scale(x, c, fp):  # pragma: no cover - compiled
    """``c x`` for a nonzero constant c."""
    z = np.empty(x.size, dtype=np.uint64)
    for i in range(x.size):
        z[i] = mmul(x[i], c, fp)
    return z


@nb.njit(cache=True)
def _school(x, y, fp):  # pragma: no cover - compiled
    """``x y`` by schoolbook, each coefficient one lazily reduced 192-bit sum."""
    if x.size == 0 or y.size == 0:
        return np.zeros(0, dtype=np.uint64)
    lz = x.size + y.size - 1
    z = np.empty(lz, dtype=np.uint64)
    for k in range(lz):
        lo_i = k - y.size + 1 if k - y.size + 1 > 0 else 0
        hi_i = k if k < x.size - 1 else x.size - 1
        z[k] = mdot_rev(x, lo_i, y, k - lo_i, hi_i - lo_i + 1, fp)
    return _trimmed(z)


@nb.njit(cache=True)
def _plen(x, y):  # pragma: no cover - compiled
    """Length of ``x y`` (0 when either is zero)."""
    return x.size + y.size - 1 if x.size > 0 and y.size > 0 else 0


@nb.njit(cache=True)
def _log2(size):  # pragma: no cover - compiled
    """``ceil(log2(size))``."""
    k = 0
    while (np.int64(1) << k) < size:
        k += 1
    return k


# ----------------------------------------------------------------------------------
# Transforms (a polynomial folded modulo x^size - 1, then evaluated)
# ----------------------------------------------------------------------------------
# The forward transform (decimation in frequency, natural order in) of size N begins
# with f mod (x^(N/2) - 1) and transforms that by the size-N/2 transform in the first
# half of the array: the first N/2 values of a size-N transform are the size-N/2
# transform of ``f mod (x^(N/2) - 1)``, so a matrix transformed once serves products
# of every smaller size too. Costs: a transform of size N is worth about ``N log2 N``
# schoolbook multiply-adds here (measured), which is what the choices below compare.

@nb.njit(cache=True)
def _folded(x, size, p):  # pragma: no cover - compiled
    """``x mod (x^size - 1)`` as an array of ``size`` coefficients."""
    z = np.zeros(size, dtype=np.uint64)
    if x.size <= size:
        z[:x.size] = x
    else:
        for i in range(x.size):
            z[i % size] = _madd(z[i % size], x[i], p)
    return z


@nb.njit(cache=True)
def _fwd(x, size, roots, p):  # pragma: no cover - compiled
    """Transform of ``x mod (x^size - 1)`` (values in ``[0, 2p)``)."""
    z = _folded(x, size, p)
    _ntt_forward(z, size, roots, p)
    return z


@nb.njit(cache=True)
def _x_values(nmax, roots, fp):  # pragma: no cover - compiled
    """The transform of the polynomial x at ``nmax`` points, in ``[0, p)`` (Montgomery):
    its first ``size`` values are the transform of x at ``size`` points (see above)."""
    p, one = fp.p, fp.one
    z = np.zeros(nmax, dtype=np.uint64)
    if nmax >= 2:
        z[1] = one
        _ntt_forward(z, nmax, roots, p)
        for i in range(nmax):
            z[i] = mmul(z[i], one, fp)     # [0, 2p) -> [0, p): R^-1 R = 1
    return z


@nb.njit(cache=True)
def _fwd_quotient(q, size, xv, roots, fp):  # pragma: no cover - compiled
    """:func:`_fwd` of a quotient: almost always linear, ``q0 + q1 x``, whose transform
    is ``q0 + q1 X`` for X the transform of x (``xv``, :func:`_x_values`), one product
    a point instead of a transform's ``log2(size) / 2``."""
    p = fp.p
    if q.size > 2 or xv.size < size:
        return _fwd(q, size, roots, p)
    z = np.empty(size, dtype=np.uint64)
    q0 = q[0] if q.size > 0 else ZERO
    q1 = q[1] if q.size > 1 else ZERO
    for i in range(size):
        z[i] = _madd(q0, mmul(q1, xv[i], fp), p)
    return z


@nb.njit(cache=True)
def _fwd4(m00, m01, m10, m11, size, roots, p):  # pragma: no cover - compiled
    """The transforms of a 2x2 matrix's entries, rows of a ``(4, size)`` array."""
    f = np.empty((4, size), dtype=np.uint64)
    f[0] = _fwd(m00, size, roots, p)
    f[1] = _fwd(m01, size, roots, p)
    f[2] = _fwd(m10, size, roots, p)
    f[3] = _fwd(m11, size, roots, p)
    return f


@nb.njit(cache=True)
def _fwd4_from(m00, m01, m10, m11, fm, size, roots, p):  # pragma: no cover - compiled
    """:func:`_fwd4` at ``size``, given the matrix's transforms ``fm`` at some size.

    ``fm`` of half the size (a recursive call's, its entries of degree < size/2) is
    the first half; the second half is the size/2 transform of the entries twisted by
    ``w^i`` (w of order size), which is what the first butterflies would have made."""
    if fm.shape[1] == size:
        return fm
    if 2 * fm.shape[1] != size:
        return _fwd4(m00, m01, m10, m11, size, roots, p)
    half = size // 2
    f = np.zeros((4, size), dtype=np.uint64)
    for r, x in enumerate((m00, m01, m10, m11)):
        f[r, :half] = fm[r]
        _twisted_half(x, f[r], half, roots, p)
    return f


@nb.njit(cache=True)
def _twisted_half(x, f, half, roots, p):  # pragma: no cover - compiled
    """In place: the second half of the transform ``f`` at ``2 half`` points of ``x``
    (degree < half; ``f[half:]`` zero on entry), the transform at ``half`` points of
    ``x_i w^i``, w of order ``2 half``: what the first butterflies would have made."""
    for i in range(x.size):
        f[half + i] = _shoup(x[i], roots[0, half + i], roots[1, half + i], p)
    _ntt_forward(f[half:], half, roots, p)


@nb.njit(cache=True)
def _pointwise2(f, g, h, k, size, fp):  # pragma: no cover - compiled
    """The transform of ``f g + h k`` from the factors' transforms: the first ``size``
    values of each (the transforms of size ``size``, see above), point by point
    (values below p)."""
    p = fp.p
    z = np.empty(size, dtype=np.uint64)
    for i in range(size):
        z[i] = _madd(mmul(f[i], g[i], fp), mmul(h[i], k[i], fp), p)
    return z


@nb.njit(cache=True)
def _dot2(f, g, h, k, size, iroots, fp):  # pragma: no cover - compiled
    """Coefficients of ``f g + h k`` from transforms (:func:`_pointwise2`, inverted)."""
    z = _pointwise2(f, g, h, k, size, fp)
    _ntt_inverse(z, size, iroots, fp)
    return z


@nb.njit(cache=True)
def _mul(x, y, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``x y``: three transforms or schoolbook, whichever is cheaper."""
    p = fp.p
    size = next_pow2(_plen(x, y))
    if size > nmax or 3 * size * _log2(size) >= x.size * y.size:
        return _school(x, y, fp)
    fx = _fwd(x, size, roots, p)
    fy = _fwd(y, size, roots, p)
    for i in range(size):
        fx[i] = mmul(fx[i], fy[i], fp)
    _ntt_inverse(fx, size, iroots, fp)
    return _trimmed(fx)


@nb.njit(cache=True)
def _pair_product(m00, m01, m10, m11, fm, x, y, fp, roots, iroots,
                  nmax):  # pragma: no cover - compiled
    """``(m00 x + m01 y, m10 x + m11 y)`` for a 2x2 matrix M and a pair.

    ``fm``: M's transforms (:func:`_fwd4`) at a size exceeding M's degree, or a
    ``(4, 0)`` array. The cheapest of schoolbook and transforms of each size N >= M's
    length is taken, M transformed again only if ``fm`` is smaller than N
    (:func:`_fwd4_from`). At size N either the pair is cut into pieces of
    ``N - len(M) + 1`` coefficients, whose products do not wrap around, or, when the
    products exceed N by ``W <= N/2`` coefficients, they are taken modulo ``x^N - 1``
    whole and the W that wrapped around are subtracted again: they are the top of the
    product of the top W coefficients of each side, which transforms of size ``2W``
    give.
    """
    p = fp.p
    empty = np.zeros(0, dtype=np.uint64)
    lm = max(max(m00.size, m01.size), max(m10.size, m11.size))
    lx = max(x.size, y.size)
    if lm == 0 or lx == 0:
        return empty, empty
    total = lx + lm - 1
    best = np.int64(0)
    best_cost = 4 * lm * lx
    wrap = np.int64(0)
    size = next_pow2(max(lm, 2))
    while size <= nmax:
        mat = 0 if fm.shape[1] >= size else (2 if 2 * fm.shape[1] == size else 4)
        piece = size - lm + 1
        pieces = (lx + piece - 1) // piece
        cost = (4 * pieces + mat) * size * _log2(size)
        if cost < best_cost:
            best, best_cost, wrap = size, cost, 0
        w = total - size
        if 0 < w < min(lm, lx) and 2 * w <= size:
            sw = next_pow2(2 * w - 1)
            cost = (4 + mat) * size * _log2(size) + 8 * sw * _log2(sw)
            if cost < best_cost:
                best, best_cost, wrap = size, cost, w
        if piece >= lx:
            break
        size *= 2
    if best == 0:
        return (_add(_school(m00, x, fp), _school(m01, y, fp), p),
                _add(_school(m10, x, fp), _school(m11, y, fp), p))
    size = best
    f = fm
    if f.shape[1] < size:
        f = _fwd4_from(m00, m01, m10, m11, fm, size, roots, p)
    u = np.zeros(total, dtype=np.uint64)
    v = np.zeros(total, dtype=np.uint64)
    if wrap > 0:
        fx = _fwd(x, size, roots, p)
        fy = _fwd(y, size, roots, p)
        sw = next_pow2(2 * wrap - 1)
        hx = _fwd(x[lx - wrap:], sw, roots, p)
        hy = _fwd(y[lx - wrap:], sw, roots, p)
        for row, out in enumerate((u, v)):
            out[:size] = _dot2(f[2 * row], fx, f[2 * row + 1], fy, size, iroots, fp)
            mi = (m00, m10)[row]
            mj = (m01, m11)[row]
            h = _dot2(_fwd(mi[lm - wrap:], sw, roots, p), hx, _fwd(mj[lm - wrap:], sw, roots, p),
                      hy, sw, iroots, fp)
            for t in range(wrap):
                out[t] = msub(out[t], h[wrap - 1 + t], p)
                out[size + t] = h[wrap - 1 + t]
        return _trimmed(u), _trimmed(v)
    piece = size - lm + 1
    for start in range(0, lx, piece):
        fx = _fwd(x[start:start + piece], size, roots, p)
        fy = _fwd(y[start:start + piece], size, roots, p)
        top = min(size, total - start)
        for row, out in enumerate((u, v)):
            z = _dot2(f[2 * row], fx, f[2 * row + 1], fy, size, iroots, fp)
            for i in range(top):
                out[start + i] = _madd(out[start + i], z[i], p)
    return _trimmed(u), _trimmed(v)


# ----------------------------------------------------------------------------------
# Division with remainder
# ----------------------------------------------------------------------------------

@nb.njit(cache=True)
def _inv_series(f, n, fp, roots, iroots):  # pragma: no cover - compiled
    """``g`` with ``f g = 1 mod x^n`` (``f[0] != 0``; transforms of size up to
    ``next_pow2(n)`` must exist). Newton: ``g <- g - x^k g h`` where ``f g = 1 + x^k h``.
    """
    p = fp.p
    g = np.zeros(n, dtype=np.uint64)
    g[0] = minv(f[0], fp)
    k = 1
    while k < n:
        k2 = min(2 * k, n)
        size = next_pow2(k2)
        fg = _fwd(g[:k], size, roots, p)
        e = _fwd(f[:min(k2, f.size)], size, roots, p)
        for i in range(size):
            e[i] = mmul(e[i], fg[i], fp)
        _ntt_inverse(e, size, iroots, fp)   # f g: wrap-around only below k
        h = _fwd(e[k:k2], size, roots, p)
        for i in range(size):
            h[i] = mmul(h[i], fg[i], fp)
        _ntt_inverse(h, size, iroots, fp)   # g h: length < k2, no wrap
        for i in range(k2 - k):
            g[k + i] = mneg(h[i], p)
        k = k2
    return g


@nb.njit(cache=True)
def _divmod(c, d, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``(q, r)``: ``c = q d + r``, ``deg r < deg d`` (d nonzero).

    Schoolbook (``(deg q + 1) deg d`` multiply-adds) unless quotient and divisor are
    both long (``DIV_NEWTON``) and transforms exist: then ``rev(q) = rev(c) / rev(d)
    mod x^(deg q + 1)`` (Newton inverse, MCA section 9.1) and ``r = (c - q d) mod (x^N -
    1)`` for a transform size ``N >= deg d``, as ``deg r < deg d``.
    """
    p = fp.p
    l0 = c.size - 1
    l1 = d.size - 1
    k = l0 - l1
    if k < 0:
        return np.zeros(0, dtype=np.uint64), c.copy()
    if (k < DIV_NEWTON or l1 < DIV_NEWTON or next_pow2(2 * k + 1) > nmax
            or next_pow2(l1) > nmax):
        r = c.copy()
        q = np.zeros(k + 1, dtype=np.uint64)
        lead_inv = minv(d[l1], fp)
        for i in range(l0, l1 - 1, -1):
            if r[i] == ZERO:
                continue
            cq = mmul(r[i], lead_inv, fp)
            q[i - l1] = cq
            shift = i - l1
            for j in range(l1):
                r[shift + j] = msub(r[shift + j], mmul(cq, d[j], fp), p)
            r[i] = ZERO
        return _trimmed(q), _trimmed(r[:l1])
    f = np.empty(min(k, l1) + 1, dtype=np.uint64)
    for i in range(f.size):
        f[i] = d[l1 - i]
    g = _inv_series(f, k + 1, fp, roots, iroots)
    rc = np.empty(k + 1, dtype=np.uint64)
    for i in range(k + 1):
        rc[i] = c[l0 - i]
    size = next_pow2(2 * k + 1)
    fq = _fwd(rc, size, roots, p)
    fg = _fwd(g, size, roots, p)
    for i in range(size):
        fq[i] = mmul(fq[i], fg[i], fp)
    _ntt_inverse(fq, size, iroots, fp)
    q = np.empty(k + 1, dtype=np.uint64)
    for i in range(k + 1):
        q[i] = fq[k - i]
    size = next_pow2(l1)
    fq = _fwd(q, size, roots, p)
    fd = _fwd(d, size, roots, p)
    for i in range(size):
        fq[i] = mmul(fq[i], fd[i], fp)
    _ntt_inverse(fq, size, iroots, fp)
    cf = _folded(c, size, p)
    r = np.empty(l1, dtype=np.uint64)
    for i in range(l1):
        r[i] = msub(cf[i], fq[i], p)
    return q, _trimmed(r)


@nb.njit(cache=True)
def poly_rem_long(a, m_poly, fp, roots, iroots, nmax):  # pragma: no cover
    """``a mod m_poly`` as :func:`.polyarith.poly_rem` (``m_poly`` monic of degree m;
    the m coefficients, zero-padded), for an ``a`` many times longer than ``m_poly``.

    The quotient is found m coefficients at a time from the top, with one inverse
    ``h = rev(m_poly)^-1 mod x^m`` for all of them (MCA section 9.1, blocked as in
    Moenck 1976): the top ``l <= m`` coefficients of the current dividend, reversed,
    times h mod x^l are ``rev(q)``; then ``q m_poly``, of which only the low m
    coefficients are unknown, is subtracted, folded modulo ``x^N - 1`` for a transform
    size ``N >= m`` (the wrapped-around top part equals the dividend's, which it
    cancels). Each block costs two transforms of size ``next_pow2(2m - 1)`` and two of
    ``next_pow2(m)``, against ``m^2`` multiply-adds in schoolbook; ``h`` and
    ``m_poly`` are transformed once. Schoolbook when m or the quotient is short
    (``DIV_NEWTON``) or those transforms do not exist (``nmax``).
    """
    p = fp.p
    m = m_poly.size - 1
    big = next_pow2(2 * m - 1)
    if m < DIV_NEWTON or a.size - m < DIV_NEWTON or big > nmax:
        return poly_rem(a, m_poly, fp)
    small = next_pow2(m)
    f = np.empty(m, dtype=np.uint64)            # rev(m_poly) mod x^m
    for i in range(m):
        f[i] = m_poly[m - i]
    fh = _fwd(_inv_series(f, m, fp, roots, iroots), big, roots, p)
    fm = _fwd(m_poly, small, roots, p)
    r = a.copy()
    top = a.size                                # the dividend is r[:top]
    t = np.empty(big, dtype=np.uint64)
    z = np.empty(small, dtype=np.uint64)
    while top > m:
        lq = min(top - m, m)                    # clear the top lq coefficients
        base = top - lq - m
        for i in range(lq):                     # rev(q) = rev(top part) h mod x^lq
            t[i] = r[top - 1 - i]
        t[lq:] = ZERO
        _times_transform(t, big, fh, roots, iroots, fp)
        for i in range(lq):                     # q, low degree first
            z[i] = t[lq - 1 - i]
        z[lq:] = ZERO
        _times_transform(z, small, fm, roots, iroots, fp)
        for k in range(m):                      # r[base + k] -= (q m_poly)_k
            v = z[k]
            if k + small < lq + m:              # wrapped around: equals the dividend's
                v = msub(v, r[base + k + small], p)
            r[base + k] = msub(r[base + k], v, p)
        top = base + m
    out = np.zeros(m, dtype=np.uint64)
    n = min(m, a.size)
    out[:n] = r[:n]
    return out


# ----------------------------------------------------------------------------------
# Half-gcd
# ----------------------------------------------------------------------------------

@nb.njit(inline="always", cache=True)
def _sub_linear(dst, src, count, scale, nq0, nq1, fp):  # pragma: no cover - compiled
    """``dst[j] = scale dst[j] + nq0 src[j] + nq1 src[j-1]`` for ``j < count``
    (``src[-1] = 0``): one Montgomery reduction for the three products (their 128-bit
    sum is below ``3 p^2 < p 2^64`` for p < 2^62)."""
    if count > 0:
        h0, l0 = mul128(scale, dst[0])
        h1, l1 = mul128(nq0, src[0])
        lo = l0 + l1
        hi = h0 + h1 + (ONE if lo < l0 else ZERO)
        dst[0] = redc(hi, lo, fp)
    for j in range(1, count):
        h0, l0 = mul128(scale, dst[j])
        h1, l1 = mul128(nq0, src[j])
        h2, l2 = mul128(nq1, src[j - 1])
        lo = l0 + l1
        hi = h0 + h1 + (ONE if lo < l0 else ZERO)
        lo2 = lo + l2
        hi = hi + h2 + (ONE if lo2 < lo else ZERO)
        dst[j] = redc(hi, lo2, fp)


@nb.njit(inline="always", cache=True)
def _step_factor(num, den, par, df, dg, lead_f, lead_g, lam, fp):  # pragma: no cover - compiled
    """The resultant across one Euclidean step ``(f, g) -> (g, h)``, ``h = lam (f mod
    g)``, folded into ``num / den`` and the sign's parity ``par``.

    ``Res(r_(i-1), r_i) = (-1)^(d_(i-1) d_i) lc(r_i)^(d_(i-1) - d_(i+1)) lam_i^-d_i
    Res(r_i, r_(i+1))`` (``Res(g, f) = lc(g)^(df - dr) Res(g, f mod g)``, ``Res(g, lam
    r) = lam^dg Res(g, r)``). The factor ``lc(r_i)^-d_(i+1)`` needs the degree of the
    step's new remainder, which a half-gcd's piece does not know for its last step; it
    is folded one step later instead, as ``lc(f)^-dg``: so a step needs only f and g,
    which every step the half-gcd takes has right, and the sequence's first step folds
    ``lc(r_0)^-d_1`` too much (1 for a monic ``r_0``)."""
    num = mmul(num, mpow(lead_g, U64(df), fp), fp)
    den = mmul(den, mpow(mmul(lead_f, lam, fp), U64(dg), fp), fp)
    return num, den, par ^ ((df * dg) & 1)


@nb.njit(cache=True)
def _euclid(a, b, stop, fp, offset, want):  # pragma: no cover - compiled
    """Quadratic Euclid from ``(a, b)`` (``deg a > deg b``) while the second remainder
    has degree >= stop: ``(m00, m01, m10, m11, c, d, num, den, par)`` with ``(c, d) = M
    (a, b)``; where ``want``, the steps' share of the resultant (:func:`_step_factor`:
    ``Res(a, b) = (-1)^par num / den lc(c)^-deg d Res(c, d)``, up to ``lc(a)^deg b``)
    for the polynomials whose top parts ``(a, b)`` are, of degrees ``offset`` more (the
    half-gcd's pieces: their quotients and leading coefficients are the whole pair's),
    else ``num = den = one``, ``par = 0``.

    A step with a linear quotient (all but a few, for random inputs) is one pass over
    the remainder and each cofactor, without an inverse: the new remainder comes times
    a nonzero constant (so do c, d and M's rows), which changes no degree and keeps
    ``(c, d) = M (a, b)`` exact, all that the half-gcd and the inverse use. Longer
    quotients go coefficient by coefficient. The inverse (Fermat, about 0.23 us) was a
    third of a step at the half-gcd's leaves (degree about 90), which are about half of
    its time at degree 3,007; without it, and with :func:`_fwd_quotient`, the inverse
    modulo a polynomial of that degree went from about 7.0 to 6.0 ms here."""
    p, one = fp.p, fp.one
    n0 = a.size
    n1 = b.size
    r0 = a.copy()
    r1 = b.copy()
    cap = a.size + 1          # cofactors have degree < deg a, and one zero pads them
    s0 = np.zeros(cap, dtype=np.uint64)      # r0 = s0 a + t0 b, r1 = s1 a + t1 b
    t0 = np.zeros(cap, dtype=np.uint64)
    s1 = np.zeros(cap, dtype=np.uint64)
    t1 = np.zeros(cap, dtype=np.uint64)
    s0[0] = one
    t1[0] = one
    ls0, lt0, ls1, lt1 = 1, 0, 0, 1
    num, den, par = one, one, np.int64(0)
    while n1 - 1 >= stop:
        lead_f = r0[n0 - 1]
        top0 = n0
        lam = one
        # r0 <- r0 - q r1, (s0, t0) <- (s0, t0) - q (s1, t1), then swap
        if n0 == n1 + 1:
            # a linear quotient without an inverse: the row times lead^2 (any nonzero
            # multiple of a remainder serves: (c, d) = M (a, b) stays exact, the degrees
            # are the same), lead^2 q = r0_top lead x + (r0_(top-1) lead - r0_top r1_(top-1))
            lead = r1[n1 - 1]
            nq1 = mneg(mmul(r0[n0 - 1], lead, fp), p)
            nq0 = mneg(msub(mmul(r0[n0 - 2], lead, fp), mmul(r0[n0 - 1], r1[n1 - 2], fp), p), p)
            lead2 = mmul(lead, lead, fp)
            lam = lead2
            _sub_linear(r0, r1, n1 - 1, lead2, nq0, nq1, fp)
            r0[n1 - 1] = ZERO
            r0[n1] = ZERO
            _sub_linear(s0, s1, ls1 + 1, lead2, nq0, nq1, fp)
            _sub_linear(t0, t1, lt1 + 1, lead2, nq0, nq1, fp)
            ls0 = max(ls0, ls1 + 1)
            lt0 = max(lt0, lt1 + 1)
        else:
            lead_inv = minv(r1[n1 - 1], fp)
            for i in range(n0 - 1, n1 - 2, -1):
                c = r0[i]
                if c == ZERO:
                    continue
                cq = mmul(c, lead_inv, fp)
                shift = i - (n1 - 1)
                for j in range(n1 - 1):
                    r0[shift + j] = msub(r0[shift + j], mmul(cq, r1[j], fp), p)
                r0[i] = ZERO
                for j in range(ls1):
                    s0[shift + j] = msub(s0[shift + j], mmul(cq, s1[j], fp), p)
                for j in range(lt1):
                    t0[shift + j] = msub(t0[shift + j], mmul(cq, t1[j], fp), p)
                ls0 = max(ls0, shift + ls1)
                lt0 = max(lt0, shift + lt1)
        n0 = n1 - 1
        while n0 > 0 and r0[n0 - 1] == ZERO:
            n0 -= 1
        if want:
            num, den, par = _step_factor(num, den, par, top0 - 1 + offset, n1 - 1 + offset,
                                         lead_f, r1[n1 - 1], lam, fp)
        r0, r1 = r1, r0
        n0, n1 = n1, n0
        s0, s1 = s1, s0
        t0, t1 = t1, t0
        ls0, ls1 = ls1, ls0
        lt0, lt1 = lt1, lt0
    return (_trimmed(s0[:ls0]), _trimmed(t0[:lt0]), _trimmed(s1[:ls1]), _trimmed(t1[:lt1]),
            r0[:n0].copy(), r1[:n1].copy(), num, den, par)


@nb.njit(cache=True)
def _hgcd(a, b, fp, roots, iroots, nmax, xv, offset, want):  # pragma: no cover - compiled
    """Half-gcd of ``(a, b)``, ``deg a = n > deg b``: ``(m00, m01, m10, m11, c, d, fm,
    num, den, par)``, M the product of the Euclidean quotient steps (each row up to a
    nonzero factor, :func:`_euclid`) from ``(a, b)`` to the consecutive remainders
    ``(c, d) = M (a, b)`` with ``deg c >= ceil(n/2) > deg d``; ``fm`` is M's transforms
    (:func:`_fwd4`) when they were at hand, else a ``(4, 0)`` array. ``xv``:
    :func:`_x_values` (at least the top level's size, else the quotients are
    transformed). ``offset``, ``want``, ``num``, ``den``, ``par``: the resultant across
    the steps, as in :func:`_euclid`.

    One size of transform, ``N > n/2``, serves the level: the matrices R and S (degree
    < n/4) are transformed once, the pairs they multiply are cut into pieces that fit,
    and ``S QR`` (degree <= n/2) is made from the transforms of S, R and q."""
    p, one = fp.p, fp.one
    n = a.size - 1
    m = (n + 1) // 2
    if n < HGCD_BASE or b.size - 1 < m:
        r00, r01, r10, r11, c, d, num, den, par = _euclid(a, b, m, fp, offset, want)
        return r00, r01, r10, r11, c, d, np.zeros((4, 0), dtype=np.uint64), num, den, par
    size = next_pow2(n // 2 + 1)
    fast = size <= nmax
    # top halves: quotients down to degree < m + ceil(floor(n/2) / 2)
    r00, r01, r10, r11, c0, d0, fr, num, den, par = _hgcd(a[m:].copy(), b[m:].copy(), fp,
                                                          roots, iroots, nmax, xv, offset + m,
                                                          want)
    if fast:
        fr = _fwd4_from(r00, r01, r10, r11, fr, size, roots, p)
    c, d = _pair_product(r00, r01, r10, r11, fr, _trimmed(a[:m]), _trimmed(b[:m]), fp, roots,
                         iroots, nmax)
    c = _add_shifted(c, c0, m, p)
    d = _add_shifted(d, d0, m, p)
    if d.size - 1 < m:
        return r00, r01, r10, r11, c, d, fr, num, den, par
    # one step: (c, d) -> (d, e), QR = [[0, 1], [1, -q]] R
    q, e = _divmod(c, d, fp, roots, iroots, nmax)
    if want:
        num, den, par = _step_factor(num, den, par, c.size - 1 + offset, d.size - 1 + offset,
                                     c[c.size - 1], d[d.size - 1], one, fp)
    fqr = np.zeros((4, 0), dtype=np.uint64)
    if fast:
        fq = _fwd_quotient(q, size, xv, roots, fp)
        fqr = np.empty((4, size), dtype=np.uint64)
        fqr[0] = fr[2]
        fqr[1] = fr[3]
        for j in range(2):
            for i in range(size):
                x = fr[j, i] - p if fr[j, i] >= p else fr[j, i]
                fqr[2 + j, i] = msub(x, mmul(fq[i], fr[2 + j, i], fp), p)
    if e.size - 1 < m:
        t10 = _sub(r00, _mul(q, r10, fp, roots, iroots, nmax), p)
        t11 = _sub(r01, _mul(q, r11, fp, roots, iroots, nmax), p)
        return r10, r11, t10, t11, d, e, fqr, num, den, par
    # (d, e) has degree l < m + n/4: its top 2(l - m) coefficients give the rest
    k = 2 * m - (d.size - 1)
    s00, s01, s10, s11, d0, e0, fs, num2, den2, par2 = _hgcd(d[k:].copy(), e[k:].copy(), fp,
                                                             roots, iroots, nmax, xv,
                                                             offset + k, want)
    num = mmul(num, num2, fp)
    den = mmul(den, den2, fp)
    par ^= par2
    if fast:
        fs = _fwd4_from(s00, s01, s10, s11, fs, size, roots, p)
    c, d = _pair_product(s00, s01, s10, s11, fs, _trimmed(d[:k]), _trimmed(e[:k]), fp, roots,
                         iroots, nmax)
    c = _add_shifted(c, d0, k, p)
    d = _add_shifted(d, e0, k, p)
    if not fast:
        t10 = _sub(r00, _mul(q, r10, fp, roots, iroots, nmax), p)
        t11 = _sub(r01, _mul(q, r11, fp, roots, iroots, nmax), p)
        w00, w10 = _pair_product(s00, s01, s10, s11, fs, r10, t10, fp, roots, iroots, nmax)
        w01, w11 = _pair_product(s00, s01, s10, s11, fs, r11, t11, fp, roots, iroots, nmax)
        return w00, w01, w10, w11, c, d, np.zeros((4, 0), dtype=np.uint64), num, den, par
    fw = np.empty((4, size), dtype=np.uint64)
    for i in range(2):
        for j in range(2):
            for t in range(size):
                fw[2 * i + j, t] = _madd(mmul(fs[2 * i, t], fqr[j, t], fp),
                                         mmul(fs[2 * i + 1, t], fqr[2 + j, t], fp), p)
    w = fw.copy()
    for i in range(4):
        _ntt_inverse(w[i], size, iroots, fp)
    return (_trimmed(w[0]), _trimmed(w[1]), _trimmed(w[2]), _trimmed(w[3]), c, d, fw, num,
            den, par)


@nb.njit(cache=True)
def _descend(a, m_poly, fp, roots, iroots, nmax, want, keep):  # pragma: no cover - compiled
    """The half-gcd's way down from ``(m_poly, a mod ...)`` to a constant: half-gcd, one
    step, and again on the pair of half the degree. Returns ``(ok, c, d, r10, r11,
    mats, quots, num, den, par)``: ok False where a remainder vanished first (``gcd !=
    1``); else the last pair ``(c, d)``, d constant, and the second row of the last
    level's matrix; ``mats``, ``quots`` the levels' matrices (with their transposes'
    transforms) and quotients where ``keep``; ``num``, ``den``, ``par`` the steps' share
    of the resultant where ``want`` (:func:`_step_factor`)."""
    one = fp.one
    dm = m_poly.size - 1
    r0 = m_poly.copy()
    r1 = _trimmed(a[:min(a.size, dm)])
    mats = []
    quots = []
    num, den, par = one, one, np.int64(0)
    empty = np.zeros(0, dtype=np.uint64)
    if r1.size == 0:
        return False, r0, r1, empty, empty, mats, quots, num, den, par
    # the largest transform a quotient needs is the top half-gcd's (nmax would be 4
    # times that at 4 players, a transform of 8,192 points a prime for nothing)
    xv = _x_values(min(nmax, next_pow2(dm // 2 + 1)), roots, fp)
    while True:
        if r0.size - 1 < XGCD_BASE or r1.size == 1:      # down to a constant, no step after
            r00, r01, r10, r11, c, d, n2, d2, p2 = _euclid(r0, r1, np.int64(1), fp,
                                                           np.int64(0), want)
            fr = np.zeros((4, 0), dtype=np.uint64)
        else:
            r00, r01, r10, r11, c, d, fr, n2, d2, p2 = _hgcd(r0, r1, fp, roots,
                                                             iroots, nmax, xv, np.int64(0),
                                                             want)
        num = mmul(num, n2, fp)
        den = mmul(den, d2, fp)
        par ^= p2
        if d.size == 0:
            return False, c, d, r10, r11, mats, quots, num, den, par
        if d.size == 1:
            return True, c, d, r10, r11, mats, quots, num, den, par
        q, e = _divmod(c, d, fp, roots, iroots, nmax)
        if want:
            num, den, par = _step_factor(num, den, par, c.size - 1, d.size - 1, c[c.size - 1],
                                         d[d.size - 1], one, fp)
        if e.size == 0:
            return False, c, e, r10, r11, mats, quots, num, den, par
        if keep:
            ft = np.empty((4, fr.shape[1]), dtype=np.uint64)    # the transpose's transforms
            ft[0] = fr[0]
            ft[1] = fr[2]
            ft[2] = fr[1]
            ft[3] = fr[3]
            mats.append((r00, r01, r10, r11, ft))
            quots.append(q)
        r0 = d
        r1 = e


@nb.njit(cache=True)
def poly_invmod_fast(a, m_poly, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``(ok, g)``: ``g = a^-1 mod m_poly``, as :func:`.polyarith.poly_invmod` (the same
    array for every input) in O(M(n) log n) for ``n = deg m_poly``.

    ``a``, ``m_poly``: uint64 arrays, Montgomery, low degree first; ``m_poly`` monic of
    degree ``dm >= 0``, ``a`` of any length, of which the first dm coefficients are
    used (as by poly_invmod). ``fp``: the prime's :class:`.montgomery.Field`;
    ``roots``, ``iroots``: the tables of
    :func:`.polyarith.ntt_tables` for ``nmax`` (int64; 0: no transforms, schoolbook
    products, no faster than poly_invmod). ``g``: dm coefficients; ``ok`` is False (g
    zero) when ``gcd(a, m_poly) != 1`` or ``dm = 0``.

    :func:`_descend` keeps the levels' matrices and quotients, and the row ``(x, y)`` of
    the last pair (``x r0 + y r1 = 1``) is carried back up through them, ``(x, y) <- (y,
    x - q y) R``: at the top, y is the inverse.
    """
    ok, g, _res = _invert(a, m_poly, fp, roots, iroots, nmax, False)
    return ok, g


@nb.njit(cache=True)
def poly_invmod_resultant(a, m_poly, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``(ok, g, res)``: :func:`poly_invmod_fast`'s inverse and
    :func:`poly_resultant_fast`'s ``Res(m_poly, a)`` from one descent (the resultant
    costs its steps' factors, about 0.3 ms at degree 3,007, where alone it is as dear
    as the inverse, 4.3 ms here)."""
    return _invert(a, m_poly, fp, roots, iroots, nmax, True)


@nb.njit(cache=True)
def _invert(a, m_poly, fp, roots, iroots, nmax, want):  # pragma: no cover - compiled
    """:func:`poly_invmod_fast`, and where ``want`` the resultant too (else ``one``)."""
    p, one = fp.p, fp.one
    dm = m_poly.size - 1
    g = np.zeros(dm, dtype=np.uint64)
    ok, c, d, r10, r11, mats, quots, num, den, par = _descend(a, m_poly, fp,
                                                             roots, iroots, nmax, want, True)
    if not ok:
        return False, g, ZERO
    res = _resultant_of(c, d, num, den, par, fp) if want else one
    # the last pair ends in the constant d: (x, y) = (r10, r11) / d
    inv = minv(d[0], fp)
    x = _scale(r10, inv, fp)
    y = _scale(r11, inv, fp)
    for level in range(len(mats) - 1, -1, -1):
        r00, r01, r10, r11, ft = mats[level]
        z = _sub(x, _mul(quots[level], y, fp, roots, iroots, nmax), p)
        x, y = _pair_product(r00, r10, r01, r11, ft, y, z, fp, roots, iroots, nmax)
    g[:y.size] = y
    return True, g, res


@nb.njit(cache=True)
def _resultant_of(c, d, num, den, par, fp):  # pragma: no cover - compiled
    """The resultant at the end of :func:`_descend`: the steps' share times ``Res(c, d) =
    d^deg c`` for the constant d."""
    p = fp.p
    res = mmul(mmul(num, minv(den, fp), fp), mpow(d[0], U64(c.size - 1), fp), fp)
    return mneg(res, p) if par else res


@nb.njit(cache=True)
def poly_resultant_fast(a, m_poly, fp, roots, iroots, nmax):  # pragma: no cover - compiled
    """``Res(m_poly, a) = prod_(m_poly(r) = 0) a(r)`` (Montgomery) for ``m_poly`` monic
    of degree dm and ``a`` of degree < dm (the first dm coefficients are used), in
    O(M(n) log n), as :func:`.polyarith.poly_resultant` in O(n^2): the half-gcd's
    descent (:func:`_descend`) with each step's share of the resultant
    (:func:`_step_factor`), which the leaves' Euclid and the levels' middle steps see;
    zero when ``gcd(a, m_poly) != 1``. Arguments as :func:`poly_invmod_fast`.

    For the denominator multiple of 4 and 5 players (docs/series.md): a resultant of
    degree 3,007 a prime beside the inverse of the same degree."""
    one = fp.one
    if m_poly.size == 1:
        return one
    ok, c, d, _r10, _r11, _m, _q, num, den, par = _descend(a, m_poly, fp, roots,
                                                           iroots, nmax, True, False)
    return _resultant_of(c, d, num, den, par, fp) if ok else ZERO
