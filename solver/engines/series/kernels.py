"""The per-prime kernel of the series engine (numba): word-size Montgomery arithmetic,
every seat modulo a batch of primes in one compiled call, and the two-player table
modulo primes. Importing this module loads numba (about a second)."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import flint
import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ladders.solver.engines.series.algebra import (ChainData, Split, _cycle_index, _limbs, chain_data,
                                                 choose_split, make_split)
from ladders.solver.engines.series.reconstruct import (ReconstructionStream, random_primes,
                                                     rational_reconstruct_bounded)
from ladders.solver.exact import gcd, invert, is_prime, mpq, mpz


# ----------------------------------------------------------------------------------
# Word-size modular arithmetic (numba, Montgomery form, R = 2^64, odd p < 2^63)
# ----------------------------------------------------------------------------------
# Values live in Montgomery form x R mod p: a product is one 64x64->128-bit
# multiplication plus one REDC, no division. Dot products accumulate lazily in 192
# bits (one multiplication and an add-with-carry chain per term) and are reduced once,
# which is what makes the quadratic loops cheap. numba has no 128-bit integers, so
# mul128 and mac192 are LLVM intrinsics (zext, mul, add, trunc).

U64 = np.uint64
ONE = np.uint64(1)
ZERO = np.uint64(0)


@intrinsic
def mul128(typingctx, a, b):  # pragma: no cover - compiled
    """``(hi, lo)`` of the exact 128-bit product of two uint64."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        i64 = ir.IntType(64)
        prod = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        lo = builder.trunc(prod, i64)
        hi = builder.trunc(builder.lshr(prod, ir.Constant(i128, 64)), i64)
        return context.make_tuple(builder, signature.return_type, (hi, lo))

    return sig, codegen


@intrinsic
def mac192(typingctx, top, hi, lo, a, b):  # pragma: no cover - compiled
    """``(top, hi, lo) + a * b`` as one 192-bit accumulator (no reduction)."""
    sig = types.UniTuple(types.uint64, 3)(types.uint64, types.uint64, types.uint64,
                                          types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i192 = ir.IntType(192)
        i64 = ir.IntType(64)
        t, h, l, x, y = args
        acc = builder.or_(builder.shl(builder.zext(t, i192), ir.Constant(i192, 128)),
                          builder.or_(builder.shl(builder.zext(h, i192), ir.Constant(i192, 64)),
                                      builder.zext(l, i192)))
        s = builder.add(acc, builder.mul(builder.zext(x, i192), builder.zext(y, i192)))
        lo_ = builder.trunc(s, i64)
        hi_ = builder.trunc(builder.lshr(s, ir.Constant(i192, 64)), i64)
        tp_ = builder.trunc(builder.lshr(s, ir.Constant(i192, 128)), i64)
        return context.make_tuple(builder, signature.return_type, (tp_, hi_, lo_))

    return sig, codegen


@nb.njit(inline="always", cache=True)
def redc(hi, lo, p, pneg):  # pragma: no cover - compiled
    """``(hi 2^64 + lo) R^-1 mod p`` for ``hi < p`` (Montgomery reduction)."""
    m = lo * pneg
    mh, _ml = mul128(m, p)
    t = hi + mh + (ONE if lo != ZERO else ZERO)
    if t >= p:
        t -= p
    return t


@nb.njit(inline="always", cache=True)
def mmul(a, b, p, pneg):  # pragma: no cover - compiled
    """Montgomery product: ``aR * bR -> abR``."""
    h, l = mul128(a, b)
    return redc(h, l, p, pneg)


@nb.njit(inline="always", cache=True)
def madd(a, b, p):  # pragma: no cover - compiled
    s = a + b
    return s - p if s >= p else s


@nb.njit(inline="always", cache=True)
def msub(a, b, p):  # pragma: no cover - compiled
    return a - b if a >= b else a + (p - b)


@nb.njit(inline="always", cache=True)
def mneg(a, p):  # pragma: no cover - compiled
    return p - a if a != ZERO else ZERO


@nb.njit(inline="always", cache=True)
def fold(top, hi, lo, p, pneg, r2):  # pragma: no cover - compiled
    """``T R^-1 mod p`` for the 192-bit ``T = top 2^128 + hi 2^64 + lo`` (``top < p``).

    For a sum of products of Montgomery numbers that is the Montgomery form of the sum.
    """
    h = redc(top, hi, p, pneg)
    h1, l1 = mul128(h, r2)
    h = redc(h1, l1, p, pneg)
    return redc(h, lo, p, pneg)


@nb.njit(cache=True)
def mont_setup(p):  # pragma: no cover - compiled
    """``(pneg, one, r2)``: ``-p^-1 mod 2^64``, ``R mod p`` (Montgomery 1), ``R^2 mod p``."""
    inv = p  # Newton iteration for p^-1 mod 2^64: correct to 3 bits, doubling each step
    for _ in range(6):
        inv = inv * (U64(2) - p * inv)
    pneg = ZERO - inv
    one = (ZERO - p) % p
    r2 = one
    for _ in range(64):
        r2 = madd(r2, r2, p)
    return pneg, one, r2


@nb.njit(inline="always", cache=True)
def to_mont(x, p, pneg, r2):  # pragma: no cover - compiled
    return mmul(x % p, r2, p, pneg)


@nb.njit(inline="always", cache=True)
def from_mont(x, p, pneg):  # pragma: no cover - compiled
    return redc(ZERO, x, p, pneg)


@nb.njit(cache=True)
def mpow(a, e, p, pneg, one):  # pragma: no cover - compiled
    """``a^e`` for Montgomery ``a`` and a plain exponent ``e``."""
    r = one
    while e:
        if e & 1:
            r = mmul(r, a, p, pneg)
        a = mmul(a, a, p, pneg)
        e >>= 1
    return r


@nb.njit(cache=True)
def minv(a, p, pneg, one):  # pragma: no cover - compiled
    """Montgomery inverse by Fermat (``a`` nonzero mod the prime ``p``)."""
    return mpow(a, p - U64(2), p, pneg, one)


@nb.njit(cache=True)
def reduce_limbs(limbs, signs, p, pneg, one, r2, out):  # pragma: no cover - compiled
    """Montgomery residues of big integers given as little-endian 64-bit limbs.

    Horner from the top limb: ``mont(V 2^64 + l) = mont(V) * mont(2^64) + mont(l)`` and
    ``mont(2^64) = R^2 mod p``.
    """
    count, width = limbs.shape
    for i in range(count):
        acc = ZERO
        for j in range(width - 1, -1, -1):
            acc = madd(mmul(acc, r2, p, pneg), to_mont(limbs[i, j], p, pneg, r2), p)
        out[i] = mneg(acc, p) if signs[i] < 0 else acc


@nb.njit(cache=True)
def mdot(a, a0, b, b0, n, p, pneg, r2):  # pragma: no cover - compiled
    """``sum_{i<n} a[a0+i] b[b0+i]`` (Montgomery in, Montgomery out), lazily reduced."""
    t = ZERO
    h = ZERO
    l = ZERO
    for i in range(n):
        t, h, l = mac192(t, h, l, a[a0 + i], b[b0 + i])
    return fold(t, h, l, p, pneg, r2)


@nb.njit(cache=True)
def mdot_rev(a, a0, b, b_hi, n, p, pneg, r2):  # pragma: no cover - compiled
    """``sum_{i<n} a[a0+i] b[b_hi-i]`` (a convolution term), lazily reduced."""
    t = ZERO
    h = ZERO
    l = ZERO
    for i in range(n):
        t, h, l = mac192(t, h, l, a[a0 + i], b[b_hi - i])
    return fold(t, h, l, p, pneg, r2)


@nb.njit(cache=True)
def inverses_upto(m, p, pneg, one, r2):  # pragma: no cover - compiled
    """Montgomery inverses of 1..m (index 0 unused); needs ``m < p``.

    ``1/i = -(p div i) / (p mod i)``: one division per entry, no exponentiation.
    """
    inv = np.zeros(m + 1, dtype=np.uint64)
    if m >= 1:
        inv[1] = one
    for i in range(2, m + 1):
        q = p // U64(i)
        r = p - q * U64(i)
        inv[i] = mneg(mmul(to_mont(q, p, pneg, r2), inv[r], p, pneg), p)
    return inv


@nb.njit(cache=True)
def series_exp_neg(psums, count, p, pneg, one, r2, inv):  # pragma: no cover - compiled
    """Coefficients 0..count of ``exp(-sum_{m>=1} psums[m] z^m / m)``.

    Newton's identities ``m c_m = -sum_{i=1}^m psums[i] c_{m-i}``: quadratic, but each
    term is one lazy multiply-accumulate, which beats flint's FFT-free Newton
    iteration (this build has no fft_small) below a few thousand terms.
    """
    c = np.zeros(count + 1, dtype=np.uint64)
    c[0] = one
    for m in range(1, count + 1):
        s = mdot_rev(psums, 1, c, m - 1, m, p, pneg, r2)
        c[m] = mneg(mmul(s, inv[m], p, pneg), p)
    return c


@nb.njit(cache=True)
def poly_rem(a, m_poly, p, pneg, one):  # pragma: no cover - compiled
    """``a mod m_poly`` (``m_poly`` monic, coefficients low to high, Montgomery)."""
    dm = m_poly.size - 1
    r = a.copy()
    for i in range(r.size - 1, dm - 1, -1):
        c = r[i]
        if c != ZERO:
            base = i - dm
            for j in range(dm):
                r[base + j] = msub(r[base + j], mmul(c, m_poly[j], p, pneg), p)
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
def poly_invmod(a, m_poly, p, pneg, one, r2):  # pragma: no cover - compiled
    """``(ok, g)``: ``g = a^-1 mod m_poly`` by the extended Euclidean algorithm.

    ``ok`` is False when ``gcd(a, m_poly) != 1`` mod p (the prime is then unusable).
    Quadratic in the degree: meant for small moduli (the characteristic polynomial).
    """
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
        lead_inv = minv(r1[n1 - 1], p, pneg, one)
        for i in range(n0 - 1, n1 - 2, -1):
            c = r0[i]
            if c == ZERO:
                continue
            q = mmul(c, lead_inv, p, pneg)
            shift = i - (n1 - 1)
            for j in range(n1):
                r0[shift + j] = msub(r0[shift + j], mmul(q, r1[j], p, pneg), p)
            for j in range(dm + 1 - shift):
                if t1[j] != ZERO:
                    t0[shift + j] = msub(t0[shift + j], mmul(q, t1[j], p, pneg), p)
        n0 = _trim(r0)
        r0, r1 = r1, r0
        t0, t1 = t1, t0
        n0, n1 = n1, n0
    if n1 == 0:
        return False, np.zeros(dm, dtype=np.uint64)
    c = minv(r1[0], p, pneg, one)
    g = np.zeros(dm, dtype=np.uint64)
    for j in range(dm):
        g[j] = mmul(t1[j], c, p, pneg)
    return True, g


# ----------------------------------------------------------------------------------
# The per-prime kernel
# ----------------------------------------------------------------------------------

@nb.njit(cache=True)
def _power_products(psum, parts, zden, count, p, pneg, one, r2):  # pragma: no cover
    """``P[m] = sum_pi (1/z_pi) prod_{c in pi} psum[c m]`` for m = 1..count."""
    out = np.zeros(count + 1, dtype=np.uint64)
    npart, width = parts.shape
    coef = np.zeros(npart, dtype=np.uint64)
    for i in range(npart):
        coef[i] = minv(to_mont(U64(zden[i]), p, pneg, r2), p, pneg, one)
    for m in range(1, count + 1):
        acc = ZERO
        for i in range(npart):
            term = coef[i]
            for w in range(width):
                c = parts[i, w]
                if c == 0:
                    break
                term = mmul(term, psum[c * m], p, pneg)
            acc = madd(acc, term, p)
        out[m] = acc
    return out


@nb.njit(cache=True)
def _one_prime(p, d, n, n1, z, dp_l, dp_s, al_l, al_s, sg_l, sg_s,
               ypart, yzden, xpart, xzden, s_a, deg_a, deg_b,
               xt_S, xt_T, seat_xt, seat_yS, seat_yT, out):  # pragma: no cover - compiled
    """Every seat mod one prime p (Montgomery inside); returns False if p is unusable."""
    pneg, one, r2 = mont_setup(p)
    dinv = minv(to_mont(U64(d), p, pneg, r2), p, pneg, one)
    m_a = deg_a + z
    L = deg_b + z
    # --- D(t) = det(I - tQ) = sum e_i t^i, and f, S from the integer Krylov data
    e = np.zeros(n1 + 1, dtype=np.uint64)
    reduce_limbs(dp_l, dp_s, p, pneg, one, r2, e)
    pw = one
    for i in range(n1 + 1):
        e[i] = mmul(e[i], pw, p, pneg)
        pw = mmul(pw, dinv, p, pneg)
    tmax = L + 2 * m_a + 2
    if tmax < n + 2:
        tmax = n + 2
    f = np.zeros(tmax + 1, dtype=np.uint64)     # 1-based: f[t]
    S = np.zeros(tmax + 2, dtype=np.uint64)
    tmp = np.zeros(n + 2, dtype=np.uint64)
    reduce_limbs(al_l, al_s, p, pneg, one, r2, tmp)
    pw = dinv
    for t in range(1, n + 1):
        f[t] = mmul(tmp[t - 1], pw, p, pneg)
        pw = mmul(pw, dinv, p, pneg)
    reduce_limbs(sg_l, sg_s, p, pneg, one, r2, tmp)
    pw = one
    for t in range(1, n + 2):
        S[t] = mmul(tmp[t - 1], pw, p, pneg)
        pw = mmul(pw, dinv, p, pneg)
    # chi_Q(x) = x^z rev(D) annihilates both: g(t) = -sum_{i=1}^{n1} e_i g(t-i) for t > n
    erev = np.zeros(n1, dtype=np.uint64)        # erev[i] = e[n1 - i], i < n1
    for i in range(n1):
        erev[i] = e[n1 - i]
    for t in range(n + 1, tmax + 1):
        f[t] = mneg(mdot(erev, 0, f, t - n1, n1, p, pneg, r2), p)
    for t in range(n + 2, tmax + 2):
        S[t] = mneg(mdot(erev, 0, S, t - n1, n1, p, pneg, r2), p)
    # --- power sums of Q: Newton, m p_m ... ; p_m = -(m e_m + sum_{i<m} e_i p_{m-i})
    rmax = 1
    for i in range(ypart.shape[0]):
        for w in range(ypart.shape[1]):
            if ypart[i, w] > rmax:
                rmax = ypart[i, w]
    xmax = 1 if s_a > 0 else 0
    for i in range(xpart.shape[0]):
        for w in range(xpart.shape[1]):
            if xpart[i, w] > xmax:
                xmax = xpart[i, w]
    pm_count = max(rmax * deg_b, xmax * deg_a, 1)
    psum = np.zeros(pm_count + 1, dtype=np.uint64)
    # e reversed for the dot product: psum[m] needs sum_{i=1}^{min(m-1,n1)} e_i psum[m-i]
    for m in range(1, pm_count + 1):
        k = m - 1 if m - 1 < n1 else n1
        acc = mdot_rev(e, 1, psum, m - 1, k, p, pneg, r2)
        if m <= n1:
            acc = madd(acc, mmul(to_mont(U64(m), p, pneg, r2), e[m], p, pneg), p)
        psum[m] = mneg(acc, p)
    inv = inverses_upto(max(deg_a, deg_b, 1), p, pneg, one, r2)
    # --- D_b: reversed characteristic polynomial of Sym^r(Q)
    py = _power_products(psum, ypart, yzden, deg_b, p, pneg, one, r2)
    db = series_exp_neg(py, deg_b, p, pneg, one, r2, inv)
    # --- chi_a = x^z rev(D_a); D_a = D when s = 0, else exp of p_m h_s(lambda^m)
    if s_a == 0:
        da = e
    else:
        px = _power_products(psum, xpart, xzden, deg_a, p, pneg, one, r2)
        for m in range(1, deg_a + 1):
            px[m] = mmul(px[m], psum[m], p, pneg)
        da = series_exp_neg(px, deg_a, p, pneg, one, r2, inv)
    chi = np.zeros(m_a + 1, dtype=np.uint64)
    for i in range(deg_a + 1):
        chi[z + deg_a - i] = da[i]
    # --- G = D_b^-1 mod chi_a
    ok, g = poly_invmod(poly_rem(db, chi, p, pneg, one), chi, p, pneg, one, r2)
    if not ok:
        return False
    # --- one weight vector w per a-type: sum_t a_t b_t = sum_{s<L} b_{s+1} w_s
    n_xt = xt_S.size
    W = np.zeros((n_xt, L), dtype=np.uint64)
    av = np.zeros(tmax + 1, dtype=np.uint64)
    v = np.zeros(m_a, dtype=np.uint64)
    tv = np.zeros(m_a, dtype=np.uint64)
    for xt in range(n_xt):
        nS = xt_S[xt]
        nT = xt_T[xt]
        top_t = L + 2 * m_a
        for t in range(1, top_t + 1):
            val = f[t]
            for _ in range(nS):
                val = mmul(val, S[t], p, pneg)
            for _ in range(nT):
                val = mmul(val, S[t + 1], p, pneg)
            av[t] = val
        # v_{L+j} = L_a(G x^(L+j)) = sum_q G_q a_{L+j+q+1}
        for j in range(m_a):
            v[j] = mdot(g, 0, av, L + j + 1, m_a, p, pneg, r2)
        # T_r = D_b[r] + x T_{r+1} mod chi_a; tau_{L-r} = <T_r, v>
        tv[:] = ZERO
        for s in range(L):
            W[xt, s] = av[s + 1]
        for r in range(deg_b, 0, -1):
            top = tv[m_a - 1]
            for jj in range(m_a - 1, 0, -1):
                tv[jj] = msub(tv[jj - 1], mmul(top, chi[jj], p, pneg), p)
            tv[0] = mneg(mmul(top, chi[0], p, pneg), p)
            tv[0] = madd(tv[0], db[r], p)
            s = L - r
            W[xt, s] = msub(W[xt, s], mdot(tv, 0, v, 0, m_a, p, pneg, r2), p)
    # --- seats
    bv = np.zeros(L + 1, dtype=np.uint64)
    for j in range(seat_xt.size):
        nS = seat_yS[j]
        nT = seat_yT[j]
        for t in range(1, L + 1):
            val = one
            for _ in range(nS):
                val = mmul(val, S[t], p, pneg)
            for _ in range(nT):
                val = mmul(val, S[t + 1], p, pneg)
            bv[t] = val
        acc = mdot(bv, 1, W[seat_xt[j]], 0, L, p, pneg, r2)
        out[j] = from_mont(acc, p, pneg)
    return True


@nb.njit(cache=True)
def _batch(primes, d, n, n1, z, dp_l, dp_s, al_l, al_s, sg_l, sg_s,
           ypart, yzden, xpart, xzden, s_a, deg_a, deg_b,
           xt_S, xt_T, seat_xt, seat_yS, seat_yT, res, valid):  # pragma: no cover
    for i in range(primes.size):
        valid[i] = _one_prime(primes[i], d, n, n1, z, dp_l, dp_s, al_l, al_s, sg_l, sg_s,
                              ypart, yzden, xpart, xzden, s_a, deg_a, deg_b,
                              xt_S, xt_T, seat_xt, seat_yS, seat_yT, res[i])


# ----------------------------------------------------------------------------------
# Public: every seat modulo a list of primes
# ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelArgs:
    """Everything the numba kernel needs for one (chain, players, split): built once."""

    split: Split
    args: tuple

    @classmethod
    def build(cls, data: ChainData, split: Split) -> "KernelArgs":
        dp_l, dp_s = _limbs(list(data.dpoly))
        al_l, al_s = _limbs(list(data.alpha))
        sg_l, sg_s = _limbs(list(data.sigma))
        ypart, yzden = _cycle_index(split.r)
        xpart, xzden = _cycle_index(split.s)
        xtypes = sorted(set(split.seat_sigma))
        xt_S = np.array([sig for sig in xtypes], dtype=np.int64)
        xt_T = np.array([split.s - sig for sig in xtypes], dtype=np.int64)
        seat_xt = np.array([xtypes.index(sig) for sig in split.seat_sigma], dtype=np.int64)
        ex = [split.seat_exponents(j) for j in range(1, split.players + 1)]
        seat_yS = np.array([e[2] for e in ex], dtype=np.int64)
        seat_yT = np.array([e[3] for e in ex], dtype=np.int64)
        args = (np.uint64(data.d), data.n, data.n1, data.z, dp_l, dp_s, al_l, al_s, sg_l, sg_s,
                ypart, yzden, xpart, xzden, split.s, split.deg_a, split.deg_b,
                xt_S, xt_T, seat_xt, seat_yS, seat_yT)
        return cls(split, args)


_KERNEL_CACHE: dict[tuple[int, int, int], tuple[ChainData, KernelArgs]] = {}


def kernel_args(data: ChainData, players: int, s: int | None = None) -> KernelArgs:
    """Cached :class:`KernelArgs`; ``s=None`` picks the split with :func:`choose_split`."""
    split = choose_split(data, players) if s is None else make_split(data, players, s)
    key = (id(data), players, split.s)
    hit = _KERNEL_CACHE.get(key)
    if hit is None or hit[0] is not data:       # ids of dead objects get reused
        hit = (data, KernelArgs.build(data, split))
        _KERNEL_CACHE[key] = hit
    return hit[1]


def seat_residues(chain, players: int, primes: Sequence[int] | np.ndarray,
                  split: int | None = None, check_sum: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Every seat's win probability modulo each prime: ``(residues, valid)``.

    ``residues[i, j]`` is ``P_(j+1) mod primes[i]`` (uint64) and ``valid[i]`` is False
    for a prime that cannot be used: it divides d, is not above the degrees (1/m in the
    power-sum exponential), or ``D_b`` is not invertible mod ``chi_a`` there (the
    prime divides a denominator). Rows of invalid primes are zero. All seats share the
    power sums, the denominators, the inverse and the sequences; the whole batch runs
    in one compiled call. ``split`` forces the number of survival factors on the a side.
    """
    data = chain_data(chain)
    if players < 2:
        raise ValueError(f"a race needs at least 2 players, got {players}")
    ka = kernel_args(data, players, split)
    sp = ka.split
    pr = np.asarray([int(q) for q in primes], dtype=np.uint64)
    res = np.zeros((pr.size, players), dtype=np.uint64)
    valid = np.zeros(pr.size, dtype=np.bool_)
    floor = max(sp.deg_a, sp.deg_b, data.n + 1, math.factorial(max(sp.r, sp.s, 1)))
    # the kernel's field arithmetic needs a prime modulus: anything else is reported
    # unusable (a composite one could make its Euclid loop forever)
    usable = np.array([q % 2 == 1 and q < (1 << 63) and q > floor and data.d % q != 0
                       and bool(is_prime(q)) for q in (int(x) for x in pr)], dtype=np.bool_)
    if usable.any():
        idx = np.nonzero(usable)[0]
        sub_res = np.zeros((idx.size, players), dtype=np.uint64)
        sub_valid = np.zeros(idx.size, dtype=np.bool_)
        _batch(pr[idx], *ka.args, sub_res, sub_valid)
        res[idx] = sub_res
        valid[idx] = sub_valid
    # the seats of a race sum to 1: a free check of every prime
    for i in (np.nonzero(valid)[0] if check_sum else ()):
        if sum(int(x) for x in res[i]) % int(pr[i]) != 1:
            raise ArithmeticError(f"seats do not sum to 1 mod {int(pr[i])}: a bug")
    res[~valid] = 0
    return res, valid


# ----------------------------------------------------------------------------------
# Two players: the answer and the whole table P(a, b), multimodular
# ----------------------------------------------------------------------------------

@nb.njit(cache=True)
def _table_one_prime(p, d, n, n1, z, dp_l, dp_s, indptr, indices, cvals, fin,
                     out):  # pragma: no cover - compiled
    """The whole table ``P[a, b]`` mod p (Montgomery inside, plain residues out).

    ``F[a, j] = (Q^j r)[a]``, ``Sm[b, s] = (Q^s 1)[b]`` (sparse Krylov steps),
    ``N[b, i] = sum_l e_l Sm[b, i-l]``, ``MG[i] = x^i G mod chi``, ``Y = N MG`` and
    ``P = F Y^T``: three n^3 multiply-accumulate loops.
    """
    pneg, one, r2 = mont_setup(p)
    dinv = minv(to_mont(U64(d), p, pneg, r2), p, pneg, one)
    e = np.zeros(n1 + 1, dtype=np.uint64)
    reduce_limbs(dp_l, dp_s, p, pneg, one, r2, e)
    pw = one
    for i in range(n1 + 1):
        e[i] = mmul(e[i], pw, p, pneg)
        pw = mmul(pw, dinv, p, pneg)
    chi = np.zeros(n + 1, dtype=np.uint64)
    for i in range(n1 + 1):
        chi[z + n1 - i] = e[i]
    ok, g = poly_invmod(poly_rem(e, chi, p, pneg, one), chi, p, pneg, one, r2)
    if not ok:
        return False
    qv = np.zeros(cvals.size, dtype=np.uint64)
    for k in range(cvals.size):
        qv[k] = mmul(to_mont(U64(cvals[k]), p, pneg, r2), dinv, p, pneg)
    F = np.zeros((n, n), dtype=np.uint64)     # F[a, j]
    Sm = np.zeros((n, n), dtype=np.uint64)    # Sm[b, s]
    for a in range(n):
        F[a, 0] = mmul(to_mont(U64(fin[a]), p, pneg, r2), dinv, p, pneg)
        Sm[a, 0] = one
    for j in range(1, n):
        for a in range(n):
            t = ZERO
            h = ZERO
            l = ZERO
            t2 = ZERO
            h2 = ZERO
            l2 = ZERO
            for k in range(indptr[a], indptr[a + 1]):
                t, h, l = mac192(t, h, l, qv[k], F[indices[k], j - 1])
                t2, h2, l2 = mac192(t2, h2, l2, qv[k], Sm[indices[k], j - 1])
            F[a, j] = fold(t, h, l, p, pneg, r2)
            Sm[a, j] = fold(t2, h2, l2, p, pneg, r2)
    # N[b, i] = sum_{l <= min(i, n1)} e_l Sm[b, i - l]
    N = np.zeros((n, n), dtype=np.uint64)
    for b in range(n):
        for i in range(n):
            cnt = i + 1 if i < n1 else n1 + 1
            N[b, i] = mdot_rev(e, 0, Sm[b], i, cnt, p, pneg, r2)
    # MGt[j, i] = coefficient j of x^i G mod chi (stored transposed for contiguous dots)
    MGt = np.zeros((n, n), dtype=np.uint64)
    cur = g.copy()
    for i in range(n):
        for j in range(n):
            MGt[j, i] = cur[j]
        top = cur[n - 1]
        for jj in range(n - 1, 0, -1):
            cur[jj] = msub(cur[jj - 1], mmul(top, chi[jj], p, pneg), p)
        cur[0] = mneg(mmul(top, chi[0], p, pneg), p)
    Y = np.zeros((n, n), dtype=np.uint64)     # Y[b, j] = sum_i N[b, i] MG[i, j]
    for b in range(n):
        for j in range(n):
            Y[b, j] = mdot(N[b], 0, MGt[j], 0, n, p, pneg, r2)
    for a in range(n):
        for b in range(n):
            out[a, b] = from_mont(mdot(F[a], 0, Y[b], 0, n, p, pneg, r2), p, pneg)
    return True


@nb.njit(cache=True)
def _table_batch(primes, d, n, n1, z, dp_l, dp_s, indptr, indices, cvals, fin,
                 res, valid):  # pragma: no cover - compiled
    for i in range(primes.size):
        valid[i] = _table_one_prime(primes[i], d, n, n1, z, dp_l, dp_s, indptr, indices,
                                    cvals, fin, res[i])


def table_residues(chain, primes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The two-player table mod each prime: ``(res[len(primes), n, n], valid)``."""
    data = chain_data(chain)
    n = data.n
    dp_l, dp_s = _limbs(list(data.dpoly))
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices, cvals = [], []
    for a in range(n):
        for b in range(n):
            if data.counts[a, b]:
                indices.append(b)
                cvals.append(int(data.counts[a, b]))
        indptr[a + 1] = len(indices)
    pr = np.asarray([int(q) for q in primes], dtype=np.uint64)
    for q in (int(x) for x in pr):
        if q % 2 == 0 or q >= (1 << 63) or q <= n + 1 or data.d % q == 0 or not is_prime(q):
            raise ValueError(f"unusable prime {q}")
    res = np.zeros((pr.size, n, n), dtype=np.uint64)
    valid = np.zeros(pr.size, dtype=np.bool_)
    _table_batch(pr, np.uint64(data.d), n, data.n1, data.z, dp_l, dp_s, indptr,
                 np.array(indices, dtype=np.int64), np.array(cvals, dtype=np.int64),
                 data.finish.astype(np.int64), res, valid)
    return res, valid


def _random_start_data(data: ChainData, rng: random.Random) -> ChainData:
    """``data`` with f started from a random integer vector c1 and S from c2.

    ``sum_t (c1 Q^(t-1) r)(c2 Q^(t-1) 1) = c1^T P c2`` (P the table): its denominator is
    the lcm of the table's denominators except, rarely, for small primes (which the
    range check in :func:`two_player_table` catches).
    """
    n = data.n
    rows = [[(j, int(c)) for j, c in enumerate(data.counts[i]) if c] for i in range(n)]
    c1 = [rng.randrange(1, 1 << 20) for _ in range(n)]
    c2 = [rng.randrange(1, 1 << 20) for _ in range(n)]
    alpha, sigma = [], []
    v1, v2 = list(c1), list(c2)
    for _ in range(n + 2):
        alpha.append(sum(v * int(data.finish[i]) for i, v in enumerate(v1)))
        sigma.append(sum(v2))
        n1v, n2v = [0] * n, [0] * n
        for i in range(n):
            for j, c in rows[i]:
                n1v[j] += v1[i] * c
                n2v[j] += v2[i] * c
        v1, v2 = n1v, n2v
    return dataclasses.replace(data, alpha=tuple(alpha), sigma=tuple(sigma))


def two_player_table(chain, primes_source: Iterable[int] | int | None = None) -> list[list[mpq]]:
    """``P[a][b]``: the player to move, on state a, wins against the opponent on state b.

    ``P(a, b) = sum_t f_a(t) S_b(t) = L_a(N_b D^-1 mod chi)``: per prime the whole table
    is ``F Y^T`` with the Krylov matrix ``F[a, j] = (Q^j r)[a]`` and ``Y = N M_G`` (rows
    ``N_b``, ``M_G`` = multiplication by ``G = D^-1 mod chi``): n^3 work, ~2 ms a prime.

    Denominator first: the random bilinear combination ``c1^T P c2`` is itself a
    two-player sum (f started from c1, S from c2), reconstructed by the k = 2 engine; its
    denominator ``Den`` is the table's common denominator with high probability. Then
    ``Num = Den P`` needs only ``log2(2 Den)`` bits of primes (half of what rational
    reconstruction would need per entry) and one CRT of all n^2 entries. Entries not in
    ``[0, Den]`` (a missed small factor) are rationally reconstructed and Den grows.
    The result is not certified here: :func:`check_table` does that exactly.
    """
    data = chain_data(chain)
    n = data.n
    if primes_source is None or isinstance(primes_source, int):
        primes_source = random_primes(primes_source)
    it = iter(primes_source)
    rng = random.Random(next(it))
    comb = _random_start_data(data, rng)
    stream = ReconstructionStream(1, holdout=2, ratio=1.4)
    size = 96
    while True:
        primes = [next(it) for _ in range(size)]
        res, valid = seat_residues(comb, 2, primes, split=0, check_sum=False)
        if stream.add(primes, res[:, :1], valid):
            break
        size = min(2 * size, 512)
    den = mpz(stream.values[0].denominator)
    need = den.bit_length() + 66                       # M > 2 Den 2^64
    primes: list[int] = []
    blocks: list[np.ndarray] = []
    m = mpz(1)
    while m.bit_length() <= need:
        # log2 of a 62-bit prime is ~61.5: count with the product, not with bit lengths
        want = max(1, (need - m.bit_length()) // 61 + 1)
        cand = [next(it) for _ in range(want)]
        r1, v1 = table_residues(data, cand)
        for q, row, ok in zip(cand, r1, v1):
            if ok:
                primes.append(q)
                blocks.append(row)
                m *= q
    res = np.stack(blocks)
    # one CRT for all n^2 entries: x = sum_i r_i E_i mod M with E_i = (M/p_i)((M/p_i)^-1 mod p_i)
    ecoef = []
    for q in primes:
        mq = m // q
        ecoef.append(int(mq * invert(mq % q, q)))
    rmat = flint.fmpz_mat(n * n, len(primes), res.reshape(len(primes), n * n).T.ravel().tolist())
    xs = rmat * flint.fmpz_mat(len(primes), 1, ecoef)
    m_f = flint.fmpz(int(m))
    den_f = flint.fmpz(int(den))
    nums = [(xs[i, 0] % m_f) * den_f % m_f for i in range(n * n)]
    bad = [i for i, v in enumerate(nums) if v > den_f]
    if bad:
        # Den missed a small factor g of some entry's denominator (the random form
        # vanished mod g): x Den = N'/g mod M with N' <= Den g, g <= 2^20, unique because
        # M > 2 Den 2^64 > 2 (Den 2^20) 2^20; then Den grows by g and all are redone
        extra = mpz(1)
        for i in bad:
            y = (mpz(int(xs[i, 0] % m_f)) * den) % m
            val = rational_reconstruct_bounded(y, m, den << 20, mpz(1) << 20)
            if val is None:
                raise ArithmeticError("table entry not reconstructible: too few primes")
            extra = extra * val.denominator // gcd(extra, val.denominator)
        den *= extra
        den_f = flint.fmpz(int(den))
        if m <= 2 * den:
            raise ArithmeticError("denominator grew beyond the primes collected")
        nums = [(xs[i, 0] % m_f) * den_f % m_f for i in range(n * n)]
        if any(v > den_f for v in nums):
            raise ArithmeticError("table entries not in [0, 1]: a bug")
    table = []
    for a in range(n):
        table.append([mpq(mpz(int(nums[a * n + b])), den) for b in range(n)])
    return table
