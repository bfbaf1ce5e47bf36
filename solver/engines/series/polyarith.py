"""Polynomial arithmetic modulo a word-size prime for the series engine (numba):
power series exponentials, remainders, resultants and inverses modulo a polynomial.

All coefficients are in Montgomery form (:mod:`.montgomery`), low degree first."""

from __future__ import annotations

import numpy as np

from ladders.solver.engines.series.algebra import EXP_BASE
from ladders.solver.engines.series.jit import nb
from ladders.solver.engines.series.montgomery import (ONE, TWO, U64, ZERO, from_mont, madd,
                                                      mdot_rev, minv, mmul, mneg, msub, mul128)


@nb.njit(cache=True)
def series_exp_neg(psums, count, fp, inv):  # pragma: no cover - compiled
    """Coefficients 0..count of ``exp(-sum_{m>=1} psums[m] z^m / m)``.

    Newton's identities ``m c_m = -sum_{i=1}^m psums[i] c_{m-i}``: quadratic, but each
    term is one lazy multiply-accumulate, which beats flint's FFT-free Newton
    iteration (this build has no fft_small) below a few thousand terms.
    """
    p, one = fp.p, fp.one
    c = np.zeros(count + 1, dtype=np.uint64)
    c[0] = one
    for m in range(1, count + 1):
        s = mdot_rev(psums, 1, c, m - 1, m, fp)
        c[m] = mneg(mmul(s, inv[m], fp), p)
    return c


@nb.njit(cache=True)
def poly_rem(a, m_poly, fp):  # pragma: no cover - compiled
    """``a mod m_poly`` (``m_poly`` monic, coefficients low to high, Montgomery)."""
    p = fp.p
    dm = m_poly.size - 1
    r = a.copy()
    for i in range(r.size - 1, dm - 1, -1):
        c = r[i]
        if c != ZERO:
            base = i - dm
            for j in range(dm):
                r[base + j] = msub(r[base + j], mmul(c, m_poly[j], fp), p)
            r[i] = ZERO
    out = np.zeros(dm, dtype=np.uint64)
    n = min(dm, r.size)
    out[:n] = r[:n]
    return out


@nb.njit(cache=True)
def _trim(a):  # pragma: no cover - compiled
    n = a.size
    while n > 0 and a[n - 1] == ZERO:
        n -= 1
    return n


@nb.njit(cache=True)
def _euclid_step(r0, n0, r1, n1, t0, t1, fp):  # pragma: no cover - compiled
    """``r0 <- r0 mod r1`` in place (lengths n0 >= n1 >= 2 used), and with each quotient
    term ``q x^shift``, ``t0 <- t0 - q x^shift t1`` (cut at t0's length; empty t0, t1:
    no cofactor)."""
    p = fp.p
    lead_inv = minv(r1[n1 - 1], fp)
    for i in range(n0 - 1, n1 - 2, -1):
        c = r0[i]
        if c == ZERO:
            continue
        q = mmul(c, lead_inv, fp)
        shift = i - (n1 - 1)
        for j in range(n1):
            r0[shift + j] = msub(r0[shift + j], mmul(q, r1[j], fp), p)
        for j in range(t0.size - shift):
            if t1[j] != ZERO:
                t0[shift + j] = msub(t0[shift + j], mmul(q, t1[j], fp), p)


@nb.njit(cache=True)
def poly_resultant(a, b, fp):  # pragma: no cover - compiled
    """``Res(a, b)`` (Montgomery; a, b low to high, a nonzero) by the Euclidean
    algorithm, quadratic: for polynomials of the chain's degree n.

    ``Res(a, b) = (-1)^(deg a deg b) Res(b, a)``, and for ``a = q b + r``,
    ``Res(b, a) = lc(b)^(deg a - deg r) Res(b, r)``; ``Res(a, c) = c^(deg a)`` for a
    constant c, 0 when the remainder vanishes first (a common factor)."""
    p, one = fp.p, fp.one
    r0 = a.copy()
    r1 = b.copy()
    n0 = _trim(r0)
    n1 = _trim(r1)
    if n0 == 0 or n1 == 0:
        return ZERO
    acc = one
    if n0 < n1:
        r0, r1 = r1, r0
        n0, n1 = n1, n0
        if ((n0 - 1) * (n1 - 1)) % 2 == 1:
            acc = mneg(acc, p)
    while n1 > 1:
        _euclid_step(r0, n0, r1, n1, r0[:0], r0[:0], fp)    # r0 <- r0 mod r1
        nr = _trim(r0)
        if nr == 0:
            return ZERO
        for _ in range(n0 - nr):
            acc = mmul(acc, r1[n1 - 1], fp)
        if ((n0 - 1) * (n1 - 1)) % 2 == 1:
            acc = mneg(acc, p)
        r0, r1 = r1, r0
        n0, n1 = n1, nr
    for _ in range(n0 - 1):                     # Res(r0, c) = c^(deg r0)
        acc = mmul(acc, r1[0], fp)
    return acc


@nb.njit(cache=True)
def poly_invmod(a, m_poly, fp):  # pragma: no cover - compiled
    """``(ok, g)``: ``g = a^-1 mod m_poly`` by the extended Euclidean algorithm.

    ``ok`` is False when ``gcd(a, m_poly) != 1`` mod p (the prime is then unusable).
    Quadratic in the degree: meant for small moduli (the characteristic polynomial).
    """
    one = fp.one
    dm = m_poly.size - 1
    r0 = m_poly.copy()
    r1 = np.zeros(dm + 1, dtype=np.uint64)
    r1[:min(a.size, dm)] = a[:min(a.size, dm)]
    t0 = np.zeros(dm + 1, dtype=np.uint64)
    t1 = np.zeros(dm + 1, dtype=np.uint64)
    t1[0] = one
    n0 = _trim(r0)
    n1 = _trim(r1)
    while n1 > 1:
        # r0 <- r0 mod r1, t0 <- t0 - q t1, then swap
        _euclid_step(r0, n0, r1, n1, t0, t1, fp)
        n0 = _trim(r0)
        r0, r1 = r1, r0
        t0, t1 = t1, t0
        n0, n1 = n1, n0
    if n1 == 0:
        return False, np.zeros(dm, dtype=np.uint64)
    c = minv(r1[0], fp)
    g = np.zeros(dm, dtype=np.uint64)
    for j in range(dm):
        g[j] = mmul(t1[j], c, fp)
    return True, g


# ----------------------------------------------------------------------------------
# Products: number-theoretic transforms for primes p = c 2^K + 1, schoolbook otherwise
# ----------------------------------------------------------------------------------
# A product of two polynomials of length ~m costs three transforms of size N >= 2m,
# O(N log N) butterflies (Pollard 1971, "The fast Fourier transform in a finite
# field"), against m^2 multiply-adds for the schoolbook product. The forward
# transform is decimation in frequency (natural order in, bit-reversed out) and the
# inverse decimation in time (bit-reversed in, natural out), so no permutation is
# ever done: a cyclic convolution does not care about the order in between.

@nb.njit(cache=True)
def ntt_tables(omega, two_adicity, nmax, fp):  # pragma: no cover - compiled
    """``(roots, iroots)``: the twiddles of every stage of transforms up to size nmax.

    Row 0 holds the plain values, row 1 their Shoup companions ``floor(w 2^64 / p)``:
    entry ``len + j`` is ``w_(2 len)^j`` (``w_(2 len)^-j`` in ``iroots``) for a
    primitive (2 len)-th root of unity, ``j < len``, len = 1, 2, 4, ..., nmax/2, so each
    stage reads a contiguous slice, whatever the size of the transform. ``omega`` is
    Montgomery, of order ``2^two_adicity``; nmax a power of two dividing that (0: no
    transforms, :func:`cyclic_mul` then multiplies by schoolbook).

    The companion needs no division: ``w 2^64 = w' p + (w 2^64 mod p)``, so
    ``w' = -(w 2^64 mod p) p^-1 mod 2^64`` = the Montgomery form of w times pneg.
    """
    p, pneg, one = fp.p, fp.pneg, fp.one
    roots = np.zeros((2, max(nmax, 1)), dtype=np.uint64)
    iroots = np.zeros((2, max(nmax, 1)), dtype=np.uint64)
    if nmax < 2:
        return roots, iroots
    w = omega
    size = np.int64(1) << two_adicity
    while size > nmax:
        w = mmul(w, w, fp)
        size //= 2
    # the top stage, len = nmax/2: w^j (Montgomery) in four interleaved chains, whose
    # products do not wait for each other; w^-j = -w^(len - j), as w^len = -1
    top = nmax // 2
    pw = np.empty(top, dtype=np.uint64)
    pw[0] = one
    if top > 1:
        pw[1] = w
    if top > 3:
        pw[2] = mmul(w, w, fp)
        pw[3] = mmul(pw[2], w, fp)
        w4 = mmul(pw[2], pw[2], fp)
        for j in range(4, top):
            pw[j] = mmul(pw[j - 4], w4, fp)
    for j in range(top):
        inv = one if j == 0 else p - pw[top - j]
        roots[0, top + j] = from_mont(pw[j], fp)
        roots[1, top + j] = pw[j] * pneg
        iroots[0, top + j] = from_mont(inv, fp)
        iroots[1, top + j] = inv * pneg
    # every lower stage is every other entry of the stage above: w_(2 len)^j =
    # w_(4 len)^(2j) (read from the stage above, not with the stride of the top one:
    # that touched a cache line an entry, 32 MB of memory traffic a prime at 2^18)
    length = top // 2
    while length >= 1:
        for row in range(2):
            for j in range(length):
                roots[row, length + j] = roots[row, 2 * length + 2 * j]
                iroots[row, length + j] = iroots[row, 2 * length + 2 * j]
        length //= 2
    return roots, iroots


@nb.njit(inline="always", cache=True)
def _shoup(a, w, wp, p):  # pragma: no cover - compiled
    """``a w mod p`` in ``[0, 2p)`` for any ``a < 2^64`` and a twiddle ``w < p`` with its
    companion ``wp`` (Shoup 2007; Harvey 2014, "Faster arithmetic for number-theoretic
    transforms"). A Montgomery ``a`` stays Montgomery: w is plain."""
    q, _lo = mul128(a, wp)
    return a * w - q * p


@nb.njit(inline="always", cache=True)
def _below(x, m):  # pragma: no cover - compiled
    """``x - m`` if ``x >= m`` else x, without a branch (``x < 2m``, ``m < 2^63``): the
    butterflies' corrections, which a jump would mispredict half the time on random
    residues (the transforms ran 1.7 times as long with one)."""
    s = x - m
    return s + (m & (ZERO - (s >> U64(63))))


#: Transforms of more points than this are done depth first (Bailey 1990, "FFTs in
#: external or hierarchical memory"; the order of FFTW's and Harvey's large transforms):
#: the forward transform's first passes, whose groups are larger than a block, go over
#: the whole array, and then each block of ``NTT_BLOCK`` points (64 KB, with its
#: twiddles 192 KB: within a core's own cache) takes every remaining stage while it is
#: in cache; the inverse does its blocks first and its last passes over the whole
#: array. A transform of 2^18 points reads and writes its 2 MB from memory 4 times
#: instead of 9, which is what 16 processes on one machine's memory fight over.
NTT_BLOCK = 1 << 13


@nb.njit(cache=True)
def _forward_pass(a, lo, hi, length, w0, w1, p):  # pragma: no cover - compiled
    """Two stages of the forward transform (radix 4) on ``a[lo:hi]``: the stage of half
    length ``length`` and the one of ``length / 2``, in groups of ``2 length``."""
    twop = p + p
    half = length >> ONE
    for start in range(lo, hi, length << ONE):
        for j in range(half):
            i0 = start + j
            i1 = i0 + half
            i2 = i0 + length
            i3 = i2 + half
            x0 = a[i0]
            x1 = a[i1]
            x2 = a[i2]
            x3 = a[i3]
            y0 = _below(x0 + x2, twop)
            y2 = _shoup(x0 - x2 + twop, w0[length + j], w1[length + j], p)
            y1 = _below(x1 + x3, twop)
            y3 = _shoup(x1 - x3 + twop, w0[length + half + j], w1[length + half + j], p)
            w = w0[half + j]
            wp = w1[half + j]
            a[i0] = _below(y0 + y1, twop)
            a[i1] = _shoup(y0 - y1 + twop, w, wp, p)
            a[i2] = _below(y2 + y3, twop)
            a[i3] = _shoup(y2 - y3 + twop, w, wp, p)


@nb.njit(cache=True)
def _radix2(a, lo, hi, p):  # pragma: no cover - compiled
    """The stage of half length 1 on ``a[lo:hi]`` (its twiddles are all 1): the last of
    the forward transform, the first of the inverse, when their number is odd."""
    twop = p + p
    for start in range(lo, hi, TWO):
        u = a[start]
        v = a[start + ONE]
        a[start] = _below(u + v, twop)
        a[start + ONE] = _below(u - v + twop, twop)


@nb.njit(cache=True)
def _ntt_forward(a, size, roots, p):  # pragma: no cover - compiled
    """In place: natural order in, bit-reversed transform out (decimation in frequency).

    Harvey's lazy butterflies: values stay in ``[0, 2p)`` (p < 2^62), one conditional
    subtraction per butterfly. Two stages at a time (radix 4: each element loaded and
    stored once for both), the last one alone when their number is odd; its twiddles
    are all 1. 2,048 points: 46 -> 34 us here; indices unsigned (:mod:`.montgomery`):
    8,192 points 104 -> 66 us. Depth first above :data:`NTT_BLOCK` points: a stage's
    twiddles depend on the position in its group alone, so the stages below a block's
    size are the transform of each block by itself."""
    w0 = roots[0]
    w1 = roots[1]
    usize = U64(size)
    length = usize >> ONE
    while length >= TWO and (length << ONE) > U64(NTT_BLOCK):
        _forward_pass(a, ZERO, usize, length, w0, w1, p)
        length >>= TWO
    group = length << ONE
    if group < TWO:
        return
    for base in range(ZERO, usize, group):
        inner = length
        while inner >= TWO:
            _forward_pass(a, base, base + group, inner, w0, w1, p)
            inner >>= TWO
        if inner == ONE:
            _radix2(a, base, base + group, p)


@nb.njit(cache=True)
def _inverse_pass(a, lo, hi, length, w0, w1, p):  # pragma: no cover - compiled
    """Two stages of the inverse transform (radix 4) on ``a[lo:hi]``: half lengths
    ``length`` and ``2 length``, in groups of ``4 length``."""
    twop = p + p
    for start in range(lo, hi, length << TWO):
        for j in range(length):
            i0 = start + j
            i1 = i0 + length
            i2 = i1 + length
            i3 = i2 + length
            w = w0[length + j]
            wp = w1[length + j]
            u0 = a[i0]
            v0 = _shoup(a[i1], w, wp, p)
            u1 = a[i2]
            v1 = _shoup(a[i3], w, wp, p)
            y0 = _below(u0 + v0, twop)
            y1 = _below(u0 - v0 + twop, twop)
            y2 = _below(u1 + v1, twop)
            y3 = _below(u1 - v1 + twop, twop)
            k2 = (length << ONE) + j
            k3 = k2 + length
            z2 = _shoup(y2, w0[k2], w1[k2], p)
            z3 = _shoup(y3, w0[k3], w1[k3], p)
            a[i0] = _below(y0 + z2, twop)
            a[i2] = _below(y0 - z2 + twop, twop)
            a[i1] = _below(y1 + z3, twop)
            a[i3] = _below(y1 - z3 + twop, twop)


@nb.njit(cache=True)
def _ntt_inverse(a, size, iroots, fp):  # pragma: no cover - compiled
    """In place: bit-reversed in (values in ``[0, 2p)``), natural order out, scaled by
    1/size and reduced to ``[0, p)`` (decimation in time, lazy butterflies, two stages
    at a time after a first one alone when their number is odd; indices unsigned).
    Depth first as :func:`_ntt_forward`: every stage whose groups fit in a block of
    :data:`NTT_BLOCK` points, block by block, then the passes over the whole array."""
    p, r2 = fp.p, fp.r2
    w0 = iroots[0]
    w1 = iroots[1]
    usize = U64(size)
    levels = 0
    while (np.int64(1) << levels) < size:
        levels += 1
    first = TWO if levels % 2 == 1 else ONE       # the half length after the radix-2 stage
    group = first                                 # the blocks: the largest group <= NTT_BLOCK
    while (group << TWO) <= usize and (group << TWO) <= U64(NTT_BLOCK):
        group <<= TWO
    if usize >= TWO:
        for base in range(ZERO, usize, group):
            if first == TWO:
                _radix2(a, base, base + group, p)
            length = first
            while length < group:
                _inverse_pass(a, base, base + group, length, w0, w1, p)
                length <<= TWO
        length = group
        while length < usize:
            _inverse_pass(a, ZERO, usize, length, w0, w1, p)
            length <<= TWO
    scale = minv(mmul(U64(size) % p, r2, fp), fp)
    for i in range(size):
        a[i] = mmul(a[i], scale, fp)


@nb.njit(cache=True)
def _times_transform(z, size, fw, roots, iroots, fp):  # pragma: no cover
    """In place: ``z`` (``size`` coefficients) becomes its cyclic product with the
    polynomial whose transform of ``size`` points is ``fw`` (forward, pointwise,
    inverse): what a product with a fixed factor, transformed once, costs."""
    p = fp.p
    _ntt_forward(z, size, roots, p)
    for i in range(size):
        z[i] = mmul(z[i], fw[i], fp)      # inputs < 2p: REDC still ends < 2p
    _ntt_inverse(z, size, iroots, fp)


@nb.njit(cache=True)
def fixed_transform(x, lx, size, roots, nmax, p):  # pragma: no cover - compiled
    """The transform of ``x[:lx]`` at ``size`` points for :func:`cyclic_mul` (empty
    when ``size > nmax``: no transforms), for a factor that several products share."""
    fx = np.zeros(size if size <= nmax else 0, dtype=np.uint64)
    if fx.size > 0:
        fx[:lx] = x[:lx]
        _ntt_forward(fx, size, roots, p)
    return fx


@nb.njit(cache=True)
def cyclic_mul(x, lx, y, ly, size, roots, iroots, nmax, fp, fx):  # pragma: no cover - compiled
    """``z_k = sum_{i+j = k mod size} x_i y_j`` for ``x[:lx]``, ``y[:ly]`` (``lx, ly <=
    size``, size a power of two): transforms when ``size <= nmax``, else schoolbook
    (lazily reduced 192-bit sums, ``lx ly`` multiply-adds). ``fx``: x's
    :func:`fixed_transform`, or an empty array (it is then made here)."""
    p = fp.p
    z = np.zeros(size, dtype=np.uint64)
    if size <= nmax:
        if fx.size != size:
            fx = fixed_transform(x, lx, size, roots, nmax, p)
        z[:ly] = y[:ly]
        _times_transform(z, size, fx, roots, iroots, fp)
        return z
    for k in range(lx + ly - 1):
        lo_i = k - ly + 1 if k - ly + 1 > 0 else 0
        hi_i = k if k < lx - 1 else lx - 1
        term = mdot_rev(x, lo_i, y, k - lo_i, hi_i - lo_i + 1, fp)
        z[k % size] = madd(z[k % size], term, p)
    return z


@nb.njit(cache=True)
def next_pow2(n):  # pragma: no cover - compiled
    size = np.int64(1)
    while size < n:
        size *= 2
    return size


@nb.njit(cache=True)
def series_exp_neg_fast(psums, count, fp, inv, roots, iroots,
                        nmax):  # pragma: no cover - compiled
    """Coefficients 0..count of ``exp(-sum_{m>=1} psums[m] z^m / m)``, as
    :func:`series_exp_neg` but in O(M(count) log count).

    Newton's identities ``m c_m = -sum_{i=1}^m P_i c_(m-i)`` are an online convolution:
    divide and conquer on aligned blocks (as in van der Hoeven's relaxed
    multiplication). When the block ``[e - B, e)`` is done, with B the lowest set bit of
    e, its contribution to ``[e, e + B)`` is one cyclic product of size 2B of
    ``c[e-B:e]`` with ``P[0:2B]`` (indices ``B..2B-1`` are free of wrap-around). Blocks
    of ``BASE`` coefficients are done directly. ``inv[m]`` = 1/m (Montgomery).

    ``P[0:2B]`` is the same for every block of size B: it is transformed once per size
    (at offset ``2B - 2 BASE`` of one buffer), so that a block costs two transforms.
    """
    p, one = fp.p, fp.one
    base = EXP_BASE
    c = np.zeros(count + 1, dtype=np.uint64)
    acc = np.zeros(count + 1, dtype=np.uint64)
    c[0] = one
    total = count + 1
    ptf = np.zeros(2 * next_pow2(total + 1), dtype=np.uint64)   # transforms of P[0:2B]
    ready = np.zeros(64, dtype=np.bool_)                       # by log2(2B)
    buf = np.zeros(next_pow2(total + 1), dtype=np.uint64)
    for start in range(0, total, base):
        stop = start + base if start + base < total else total
        for m in range(start, stop):
            if m > 0:       # sum_(start <= j < m) c_j P_(m-j)
                s = madd(acc[m], mdot_rev(c, start, psums, m - start, m - start, fp), p)
                c[m] = mneg(mmul(s, inv[m], fp), p)
        e = stop
        if e >= total:
            break
        b = e & (-e)
        if b < base:
            continue
        # c[e-b:e] * P[0:2b] -> acc[e:e+b]
        plen = 2 * b if 2 * b <= count + 1 else count + 1
        size = 2 * b
        if size <= nmax:
            level = 0
            while (np.int64(1) << level) < size:
                level += 1
            fps = ptf[size - 2 * base:2 * size - 2 * base]
            if not ready[level]:
                fps[:plen] = psums[:plen]
                fps[plen:] = ZERO
                _ntt_forward(fps, size, roots, p)
                ready[level] = True
            z = buf[:size]
            z[:b] = c[e - b:e]
            z[b:] = ZERO
            _times_transform(z, size, fps, roots, iroots, fp)
        else:
            z = cyclic_mul(c[e - b:e], b, psums, plen, size, roots, iroots, nmax, fp,
                           np.zeros(0, dtype=np.uint64))
        hi = e + b if e + b < total else total
        for m in range(e, hi):
            acc[m] = madd(acc[m], z[m - e + b], p)
    return c
