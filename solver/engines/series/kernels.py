"""The per-prime kernel of the series engine (numba): every seat modulo a batch of
primes in one compiled call, and the two-player table modulo primes. Importing this
module loads numba (about a second)."""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ladders.solver.engines.series.jit import in_cache, nb
from ladders.solver.engines.series.algebra import (ChainData, Split, _cycle_index, _limbs, chain_data,
                                                 choose_split, derived_seat, make_split,
                                                 multiple_exponent, table_denominator)
from ladders.solver.engines.series.montgomery import (U64, ZERO, fold, from_mont, mac192, madd,
                                                      mdot, mdot_rev, minv, mmul, mneg,
                                                      mont_field, mpow, msub, reduce_limbs,
                                                      to_mont, inverses_upto)
from ladders.solver.engines.series.hgcd import poly_invmod_fast, poly_rem_long
from ladders.solver.engines.series.schur import poly_invmod_reversal
from ladders.solver.engines.series.polyarith import (cyclic_mul, fixed_transform,
                                                     ntt_tables, poly_invmod, poly_rem,
                                                     poly_resultant, series_exp_neg_fast)
from ladders.solver.engines.series.reconstruct import ntt_primes
from ladders.solver.exact import invert, is_prime, lowest_terms, mpz
from ladders.solver.exact_flint import array_to_fmpz_mat, fmpz_mat_to_mpz, ints_to_fmpz_column
from ladders.solver.forked import cores, run_forked

# ----------------------------------------------------------------------------------
# The per-prime kernel
# ----------------------------------------------------------------------------------

class SeatInputs(NamedTuple):
    """What the per-prime kernel needs of one (chain, players, split): the same at every
    prime, built once (:func:`seat_inputs`); numba takes it as one argument.

    In the notation of docs/series.md (one player: ``Q = C/d`` on n transient states,
    u the start, the vector r the one-throw finishing probabilities, ``T(t) = S(t+1)``;
    k players, s survival factors on the a side and the number ``r = k - 1 - s`` on the
    b side, seat j taking ``s_j`` of its s as S and ``s - s_j`` as T); the step of
    the kernel that reads a field is in brackets, as in docs/series.md, "The kernel,
    step by step". Big integers come as little-endian 64-bit limbs (one row each) and
    signs, for the reduction mod p.

    - ``d``: the die, ``Q = C/d`` (uint64). [1]
    - ``n``: transient states, ``deg chi = n``; ``n1``: nonzero eigenvalues of Q,
      ``deg D = n1``; ``z = n - n1``: the multiplicity of the eigenvalue 0. [1]
    - ``dpoly_limbs``, ``dpoly_signs``: ``dpoly_i``, i = 0..n1, with
      ``D(t) = det(I - tQ) = sum_i dpoly_i d^-i t^i``. [1]
    - ``sigma_limbs``, ``sigma_signs``: ``sigma_t = u C^(t-1) 1``, t = 1..n+2, with
      ``S(t) = sigma_t d^-(t-1)``. [1]
    - ``b_parts``, ``b_zden``: the cycle index of the symmetric group on r letters,
      ``h_r = sum_pi p_pi / z_pi``: one row per partition pi of r (its parts, 0-padded)
      and ``z_pi``, for ``P_m = h_r(lambda^m) = sum_pi prod_(c in pi) p_(cm) / z_pi`` of
      ``D_b`` (its largest part: how many power sums). [2], [3]
    - ``a_parts``, ``a_zden``: the same for s + 1 letters, ``h_(s+1)(lambda^m)`` of
      ``D_a``. [2], [4]
    - ``s``: survival factors in a (``s = 0``: ``D_a = D``, ``chi_a = chi``). [2], [4]
    - ``same_d``: ``s > 0`` and ``s + 1 = r``, so ``D_a = D_b`` (one exponential, and
      the inverse by :mod:`.schur`). [2], [4], [5]
    - ``deg_a = deg D_a = C(n1 + s, s + 1)``; ``m = deg chi_a = deg_a + z``. [1]-[6]
    - ``deg_b = deg D_b = C(n1 + r - 1, r)``; ``L = deg_b + z``. [1]-[7]
    - ``atype_S``, ``atype_T``: the kinds of a, ``a_t = f(t) S(t)^s' T(t)^(s-s')`` with
      ``s' = atype_S[x]`` and ``s - s' = atype_T[x]``; seats of one kind share its c and
      W. [6]
    - ``seat_atype``: the kind of a of seat j (the one with ``s' = s_j``);
      ``seat_bS``, ``seat_bT``: seat j's ``b_t = S(t)^(k-j-s_j) T(t)^(j-1-s+s_j)``, the
      two exponents. [7]
    - ``derived_seat``: a seat whose kind of a is its own (the last seat's ``f T^s``
      for 4 to 6 players), or -1: except at every :data:`CHECK_EVERY`-th prime its
      residue is 1 minus the others' and its kind's products are skipped. [6], [7]
    - ``multiple``: also the residue of the denominator multiple M of three players
      (:func:`~.algebra.multiple_exponent`), ``mexp`` its power of d, in the column
      after the seats; primes must be 2 mod 3 (a unique cube root). [5']
    - ``size_c``, ``size_w``, ``nmax``: the transform sizes of step (6) and the largest
      of any step (:attr:`~.algebra.Split.transform_sizes`, where the primes'
      two-adicity comes from too). [3]-[6]
    """

    d: np.uint64
    n: int
    n1: int
    z: int
    dpoly_limbs: np.ndarray
    dpoly_signs: np.ndarray
    sigma_limbs: np.ndarray
    sigma_signs: np.ndarray
    b_parts: np.ndarray
    b_zden: np.ndarray
    a_parts: np.ndarray
    a_zden: np.ndarray
    s: int
    same_d: bool
    deg_a: int
    deg_b: int
    atype_S: np.ndarray
    atype_T: np.ndarray
    seat_atype: np.ndarray
    seat_bS: np.ndarray
    seat_bT: np.ndarray
    derived_seat: int
    multiple: bool
    mexp: int
    size_c: int
    size_w: int
    nmax: int


#: The seats of a race sum to 1, so a seat whose kind of a no other seat shares can be
#: derived from the others, which saves that kind's two products (4 players: 4 of the
#: 8 transforms of 8,192 points of step 6; 5 players: two of 131,072 points and two of
#: 262,144). One prime in this many (the first of each batch's run of them) computes
#: every seat anyway, and :func:`seat_residues` checks that they sum to 1 there.
CHECK_EVERY = 64


def seat_inputs(data: ChainData, split: Split, multiple: bool = False) -> SeatInputs:
    """:class:`SeatInputs` of a chain's data and a split (``multiple``: with the column
    of M, where the split has one)."""
    multiple = multiple and split.multiple
    dpoly_limbs, dpoly_signs = _limbs(list(data.dpoly))
    sigma_limbs, sigma_signs = _limbs(list(data.sigma))
    b_parts, b_zden = _cycle_index(split.r)
    a_parts, a_zden = _cycle_index(split.s + 1)      # a: Sym^(s+1), f and s factors
    atypes = sorted(set(split.seat_sigma))
    exponents = [split.seat_exponents(j) for j in range(1, split.players + 1)]
    size_c, size_w, nmax = split.transform_sizes
    return SeatInputs(
        d=np.uint64(data.d), n=data.n, n1=data.n1, z=data.z,
        dpoly_limbs=dpoly_limbs, dpoly_signs=dpoly_signs, sigma_limbs=sigma_limbs,
        sigma_signs=sigma_signs,
        b_parts=b_parts, b_zden=b_zden, a_parts=a_parts, a_zden=a_zden,
        s=split.s, same_d=split.s > 0 and split.s + 1 == split.r,
        deg_a=split.deg_a, deg_b=split.deg_b,
        atype_S=np.array(atypes, dtype=np.int64),
        atype_T=np.array([split.s - sig for sig in atypes], dtype=np.int64),
        seat_atype=np.array([atypes.index(sig) for sig in split.seat_sigma], dtype=np.int64),
        seat_bS=np.array([e[2] for e in exponents], dtype=np.int64),
        seat_bT=np.array([e[3] for e in exponents], dtype=np.int64),
        derived_seat=derived_seat(split.seat_sigma), multiple=multiple,
        mexp=multiple_exponent(split) if multiple else 0,
        size_c=size_c, size_w=size_w, nmax=nmax)


@nb.njit(cache=True)
def _times_powers(limbs, signs, count, first, ratio, fp):  # pragma: no cover
    """``v_i first ratio^i`` for i < count (Montgomery), the big integers ``v_i`` given as
    limbs and signs; entries from ``count`` on are the plain ``v_i``."""
    out = np.zeros(limbs.shape[0], dtype=np.uint64)
    reduce_limbs(limbs, signs, fp, out)
    pw = first
    for i in range(count):
        out[i] = mmul(out[i], pw, fp)
        pw = mmul(pw, ratio, fp)
    return out


@nb.njit(cache=True)
def _largest_part(parts):  # pragma: no cover - compiled
    """The largest part of the partitions in ``parts`` (at least 1)."""
    top = 1
    for i in range(parts.shape[0]):
        for w in range(parts.shape[1]):
            if parts[i, w] > top:
                top = parts[i, w]
    return top


@nb.njit(cache=True)
def _power_sums(e, n1, b_parts, deg_b, a_parts, deg_a, cmax, inv,
                fp):  # pragma: no cover - compiled
    """``psum[c m] = p_(cm) = tr(Q^(cm))`` for every part c of ``b_parts`` (m <= deg_b)
    and of ``a_parts`` (m <= deg_a; 0: none), and every ``psum[m]``, m <= ``direct =
    max(deg_b, deg_a, cmax n1)``; the other entries are not set.

    Newton's identities give ``p_m = -(m e_m + sum_{i<m} e_i p_(m-i))`` up to ``direct``.
    Beyond, only the multiples of a part c are needed: ``q_m = p_(cm)`` are the power
    sums of the ``lambda^c``, whose own ``det(I - t Q^c) = sum_i e^(c)_i t^i`` (degree n1)
    Newton's identities give from ``q_1 .. q_n1``, and ``q_m = -sum_i e^(c)_i q_(m-i)``
    goes on from there: for 3 players on the b side (5 and 6 players on hasbro) 171,000
    terms instead of the 237,000 of ``p_m`` for every m up to ``3 deg_b``."""
    p = fp.p
    direct = max(deg_b, deg_a, cmax * n1, 1)
    top = direct
    for c in range(2, cmax + 1):
        top = max(top, c * deg_b, c * deg_a)
    psum = np.zeros(top + 1, dtype=np.uint64)
    for m in range(1, direct + 1):
        k = m - 1 if m - 1 < n1 else n1
        acc = mdot_rev(e, 1, psum, m - 1, k, fp)
        if m <= n1:
            acc = madd(acc, mmul(to_mont(U64(m), fp), e[m], fp), p)
        psum[m] = mneg(acc, p)
    for c in range(2, cmax + 1):
        count = 0
        for parts, deg in ((b_parts, deg_b), (a_parts, deg_a)):
            for i in range(parts.shape[0]):
                for w in range(parts.shape[1]):
                    if parts[i, w] == c and deg > count:
                        count = deg
        known = direct // c
        if count <= known:
            continue
        q = np.zeros(count + 1, dtype=np.uint64)
        for m in range(1, known + 1):
            q[m] = psum[c * m]
        ec = np.zeros(n1 + 1, dtype=np.uint64)       # e^(c)_m = -(q_m + sum e^(c)_i q_(m-i)) / m
        for m in range(1, n1 + 1):
            acc = madd(q[m], mdot_rev(ec, 1, q, m - 1, m - 1, fp), p)
            ec[m] = mneg(mmul(acc, inv[m], fp), p)
        for m in range(known + 1, count + 1):
            q[m] = mneg(mdot_rev(ec, 1, q, m - 1, n1, fp), p)
            psum[c * m] = q[m]
    return psum


@nb.njit(cache=True)
def _power_products(psum, parts, zden, count, fp):  # pragma: no cover
    """``P[m] = sum_pi (1/z_pi) prod_{c in pi} psum[c m]`` for m = 1..count."""
    p = fp.p
    out = np.zeros(count + 1, dtype=np.uint64)
    npart, width = parts.shape
    coef = np.zeros(npart, dtype=np.uint64)
    for i in range(npart):
        coef[i] = minv(to_mont(U64(zden[i]), fp), fp)
    for m in range(1, count + 1):
        acc = ZERO
        for i in range(npart):
            term = coef[i]
            for w in range(width):
                c = parts[i, w]
                if c == 0:
                    break
                term = mmul(term, psum[c * m], fp)
            acc = madd(acc, term, p)
        out[m] = acc
    return out


@nb.njit(cache=True)
def _multiple(rem, chi, e, n1, mexp, d, fp):  # pragma: no cover - compiled
    """``M mod p`` (plain) for three players, ``p = 2 mod 3``: ``rem = D_b mod chi``,
    ``e`` the coefficients of D (Montgomery); see step (5') of :func:`_one_prime`.
    One resultant: ``R E23 E3 = Res(chi, rem D(x^2) (1 - x^3) mod chi)``."""
    p = fp.p
    m = chi.size - 1
    dsq = np.zeros(max(2 * n1 + 1, m), dtype=np.uint64)     # D(x^2)
    for i in range(n1 + 1):
        dsq[2 * i] = e[i]
    dsq = poly_rem(dsq, chi, fp)
    prod = np.zeros(2 * m + 2, dtype=np.uint64)             # rem D(x^2) (1 - x^3)
    for k in range(2 * m - 1):
        lo = max(0, k - (m - 1))
        hi = min(k, m - 1)
        prod[k] = mdot_rev(rem, lo, dsq, k - lo, hi - lo + 1, fp)
    for k in range(2 * m + 1, 2, -1):
        prod[k] = msub(prod[k], prod[k - 3], p)
    value = poly_resultant(chi, poly_rem(prod, chi, fp), fp)
    # the cube root: x -> x^3 is a bijection mod p = 2 mod 3, inverted by x^((2p-1)/3)
    value = mpow(value, (U64(2) * p - U64(1)) // U64(3), fp)
    value = mmul(value, to_mont(U64(6), fp), fp)
    value = mmul(value, mpow(to_mont(d, fp), mexp, fp), fp)
    return from_mont(value, fp)


@nb.njit(cache=True)
def _one_prime(p, omega, two_adicity, x, out, full):  # pragma: no cover - compiled
    """Every seat mod one prime p into ``out`` (Montgomery inside, plain residues out);
    returns False if p is unusable (``D_b`` not invertible mod ``chi_a``).

    ``x``: :class:`SeatInputs`. ``omega`` has order ``2^two_adicity`` mod p (0: no
    transforms, schoolbook products). The sections (1)-(7) are the steps of
    docs/series.md, "The kernel, step by step". Unless ``full``, the seat
    ``x.derived_seat`` (if any) is 1 minus the others.
    """
    fp = mont_field(p)
    one = fp.one
    dinv = minv(to_mont(U64(x.d), fp), fp)
    n, n1, z, deg_a, deg_b = x.n, x.n1, x.z, x.deg_a, x.deg_b
    m_a = deg_a + z
    L = deg_b + z
    # transform sizes: the middle product and the correlation of (6), the exponentials
    size_c, size_w, nmax = x.size_c, x.size_w, x.nmax
    if omega == ZERO or nmax > (np.int64(1) << two_adicity):
        nmax = 0
    roots, iroots = ntt_tables(to_mont(omega, fp), two_adicity, nmax, fp)
    # --- (1) D, S and f mod p: e_i = dpoly_i d^-i, S(t) = sigma_t d^-(t-1); beyond
    # t = n, chi = x^z rev(D) annihilates it: S(t) = -sum_{i=1}^{n1} e_i S(t-i); and
    # f(t) = S(t) - S(t+1) (one recurrence, not two)
    e = _times_powers(x.dpoly_limbs, x.dpoly_signs, n1 + 1, one, dinv, fp)
    tmax = max(L + m_a, n + 2)
    S = np.zeros(tmax + 2, dtype=np.uint64)     # 1-based: S[t]
    S[1:n + 2] = _times_powers(x.sigma_limbs, x.sigma_signs, n + 1, one, dinv, fp)[:n + 1]
    erev = np.zeros(n1, dtype=np.uint64)        # erev[i] = e[n1 - i], i < n1
    for i in range(n1):
        erev[i] = e[n1 - i]
    for t in range(n + 2, tmax + 2):
        S[t] = mneg(mdot(erev, 0, S, t - n1, n1, fp), p)
    f = np.zeros(tmax + 1, dtype=np.uint64)     # 1-based: f[t]
    for t in range(1, tmax + 1):
        f[t] = msub(S[t], S[t + 1], p)
    # --- (2) power sums p_m = tr(Q^m), as many as P_m of (3) and (4) read: p_(cm) for
    # every part c of a partition, m <= deg (:func:`_power_sums`)
    need_a = x.s > 0 and not x.same_d
    cmax = _largest_part(x.b_parts)
    if need_a:
        cmax = max(cmax, _largest_part(x.a_parts))
    inv = inverses_upto(max(deg_a, deg_b, n1, 1), fp)
    psum = _power_sums(e, n1, x.b_parts, deg_b, x.a_parts, deg_a if need_a else 0, cmax, inv,
                       fp)
    # --- (3) D_b = det(I - z Sym^r Q) = exp(-sum_m P_m z^m / m), P_m = h_r(lambda^m)
    py = _power_products(psum, x.b_parts, x.b_zden, deg_b, fp)
    db = series_exp_neg_fast(py, deg_b, fp, inv, roots, iroots, nmax)
    # --- (4) chi_a = x^z rev(D_a): D_a = D when s = 0, D_b when s + 1 = r, else the
    # exponential of h_(s+1)(lambda^m)
    if x.s == 0:
        da = e
    elif x.same_d:
        da = db
    else:
        px = _power_products(psum, x.a_parts, x.a_zden, deg_a, fp)
        da = series_exp_neg_fast(px, deg_a, fp, inv, roots, iroots, nmax)
    chi = np.zeros(m_a + 1, dtype=np.uint64)
    for i in range(deg_a + 1):
        chi[z + deg_a - i] = da[i]
    # --- (5) G = D_b^-1 mod chi_a (none: p divides a denominator). Where D_a = D_b,
    # chi_a = x^z D_b* and the Schur-Cohn recursion serves (:mod:`.schur`); where it
    # cannot say (p divides a leading coefficient or a denominator, or a step was
    # singular), the half-gcd
    ok = False
    g = np.zeros(0, dtype=np.uint64)
    if x.same_d and nmax > 0:
        ok, g = poly_invmod_reversal(db, z, fp, roots, iroots, nmax)
    rem = db
    if not ok:
        rem = poly_rem_long(db, chi, fp, roots, iroots, nmax)
        if nmax > 0:
            ok, g = poly_invmod_fast(rem, chi, fp, roots, iroots, nmax)
        else:
            ok, g = poly_invmod(rem, chi, fp)
        if not ok:
            return False
    # --- (5') three players: M = 3! d^mexp prod_(i<=j<=k) (1 - l_i l_j l_k) (the
    # product over Sym^3), whose cube is R E23 E3 with R = Res(chi, D_b) = E1^3 E2^2 E3
    # (each multiset of three distinct roots thrice, of two equal twice), E23 =
    # Res(chi, D(x^2)) = prod_(i,j) (1 - l_i^2 l_j) = E2 E3, E3 = Res(chi, 1 - x^3)
    if x.multiple:
        out[x.seat_atype.size] = _multiple(rem, chi, e, n1, x.mexp, x.d, fp)
    grev = g[::-1].copy()
    # --- (6) per kind of a, a_t = f(t) S(t)^s' T(t)^(s-s'): c_k = L_a(x^k G) =
    # sum_q G_q a_(k+q+1) (k < L, a middle product), W_s = sum_i D_b[i] c_(s+i) (a correlation)
    n_atypes = x.atype_S.size
    derived = -1 if full else x.derived_seat
    skip_kind = x.seat_atype[derived] if derived >= 0 else -1
    W = np.zeros((n_atypes, L), dtype=np.uint64)
    la = L + m_a - 1
    av = np.zeros(la, dtype=np.uint64)
    crev = np.zeros(L, dtype=np.uint64)
    # the transforms of G and D_b serve every kind of a (4 players: 2 kinds)
    fg = fixed_transform(grev, m_a, size_c, roots, nmax, p)
    fdb = fixed_transform(db, deg_b + 1, size_w, roots, nmax, p)
    for xt in range(n_atypes):
        if xt == skip_kind:
            continue
        nS = x.atype_S[xt]
        nT = x.atype_T[xt]
        for j in range(la):                     # av[j] = a_(j+1)
            val = f[j + 1]
            for _ in range(nS):
                val = mmul(val, S[j + 1], fp)
            for _ in range(nT):
                val = mmul(val, S[j + 2], fp)
            av[j] = val
        cc = cyclic_mul(grev, m_a, av, la, size_c, roots, iroots, nmax, fp, fg)
        for k in range(L):
            crev[L - 1 - k] = cc[k + m_a - 1]
        ww = cyclic_mul(db, deg_b + 1, crev, L, size_w, roots, iroots, nmax, fp, fdb)
        for s in range(L):
            W[xt, s] = ww[L - 1 - s]
    # --- (7) per seat, b_t = S(t)^(k-j-s_j) T(t)^(j-1-s+s_j): P_j = sum_(s<L) b_(s+1) W_s
    bv = np.zeros(L + 1, dtype=np.uint64)
    for j in range(x.seat_atype.size):
        if j == derived:
            continue
        nS = x.seat_bS[j]
        nT = x.seat_bT[j]
        for t in range(1, L + 1):               # bv[t] = b_t
            val = one
            for _ in range(nS):
                val = mmul(val, S[t], fp)
            for _ in range(nT):
                val = mmul(val, S[t + 1], fp)
            bv[t] = val
        acc = mdot(bv, 1, W[x.seat_atype[j]], 0, L, fp)
        out[j] = from_mont(acc, fp)
    if derived >= 0:                            # the seats sum to 1
        rest = U64(1)
        for j in range(x.seat_atype.size):
            if j != derived:
                rest = rest - out[j] if rest >= out[j] else rest + (p - out[j])
        out[derived] = rest
    return True


@nb.njit(cache=True)
def _ntt_roots(primes, omegas, adicities):  # pragma: no cover - compiled
    """:func:`~.reconstruct.ntt_root` of each prime, compiled (in Python it was a third
    of a batch's own overhead): ``2^K`` the power of two in ``p - 1`` (K at most 40),
    ``omega = g^((p-1)/2^K)`` for the first quadratic non-residue g (Euler's criterion)."""
    for i in range(primes.size):
        p = primes[i]
        fp = mont_field(p)
        k = 0
        rest = p - U64(1)
        while k < 40 and (rest & U64(1)) == ZERO:
            rest = rest >> U64(1)
            k += 1
        minus = mneg(fp.one, p)
        half = (p - U64(1)) >> U64(1)
        g = U64(2)
        while mpow(to_mont(g, fp), half, fp) != minus:
            g += U64(1)
        omegas[i] = from_mont(mpow(to_mont(g, fp), (p - U64(1)) >> U64(k), fp), fp)
        adicities[i] = k


@nb.njit(cache=True, nogil=True)
def _batch(primes, omegas, adicities, x, res, valid):  # pragma: no cover - compiled
    # without the interpreter lock: a batch is minutes of one core at 5 and 6 players,
    # during which a Dask worker's event loop must go on (its heartbeats; and a local
    # worker whose driver was killed outright ends when it sees the scheduler gone:
    # holding the lock, it went on to the batch's end, 95 s at 5 players)
    for i in range(primes.size):
        valid[i] = _one_prime(primes[i], omegas[i], adicities[i], x, res[i],
                              i % CHECK_EVERY == 0)


def compiled() -> bool:
    """Whether the batch kernel is in numba's cache already (:func:`.jit.in_cache`): if
    not, the first batch compiles every kernel first (about 45 s on a fresh install,
    once), which a driver says before it starts."""
    return in_cache(_batch)


def warm() -> None:
    """Load the batch kernel's compiled code (numba's cache; compiled first if it is not
    there) by a run of ``tiny10`` at one prime: :class:`SeatInputs` has the same types
    for every chain and number of players, so this is the code that every run calls.
    About 0.3 s of CPU that a process otherwise spends at its first batch."""
    from ladders.solver.games.board import preset_board
    from ladders.solver.games.chain import build_chain
    seat_residues(build_chain(preset_board("tiny10")), 3, [next(ntt_primes(0, cube_roots=True))], multiple=True)


# ----------------------------------------------------------------------------------
# Public: every seat modulo a list of primes
# ----------------------------------------------------------------------------------

#: glibc's ``mallopt`` parameters M_TRIM_THRESHOLD and M_MMAP_THRESHOLD (malloc.h).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: Blocks up to this size come from the heap, not from a mapping of their own: the
#: largest mmap threshold glibc takes on 64 bits (its own dynamic threshold's ceiling).
KEPT_BLOCK_BYTES = 32 << 20


@functools.cache
def keep_kernel_memory() -> bool:
    """Let glibc's allocator keep the kernel's arrays between primes; True if it took.

    The kernel allocates the same arrays at every prime (5 players: blocks of 2-4 MB).
    glibc serves a block above its mmap threshold with a mapping of its own, unmapped
    when freed, and raises that threshold as it sees such blocks freed, so that soon
    they come from the heap again. But a process started with ``MALLOC_TRIM_THRESHOLD_``
    set has a fixed threshold of 128 KiB, and every Dask worker started by a nanny has
    it (Dask's ``distributed.nanny.pre-spawn-environ``, 65,536, to give memory back):
    there every such array was mapped afresh at every prime and its pages faulted in
    again, 5 players 96-111 ms a prime against 80 (in a thread, as in a worker), 3
    players 1.97 ms against 1.77. This sets the threshold to :data:`KEPT_BLOCK_BYTES`
    and the trim threshold to twice that, once per process (a no-op where ``mallopt``
    is not glibc's)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, KEPT_BLOCK_BYTES)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, 2 * KEPT_BLOCK_BYTES))


_KERNEL_CACHE: dict[tuple[int, int, int, bool], tuple[ChainData, Split, SeatInputs]] = {}


def kernel_inputs(data: ChainData, players: int, s: int | None = None,
                  multiple: bool = False) -> tuple[Split, SeatInputs]:
    """The split and its cached :class:`SeatInputs`; ``s=None`` picks the split with
    :func:`choose_split`."""
    split = choose_split(data, players) if s is None else make_split(data, players, s)
    key = (id(data), players, split.s, multiple)
    hit = _KERNEL_CACHE.get(key)
    if hit is None or hit[0] is not data:       # ids of dead objects get reused
        hit = (data, split, seat_inputs(data, split, multiple))
        _KERNEL_CACHE[key] = hit
    return hit[1], hit[2]


def seat_residues(chain, players: int, primes: Sequence[int] | np.ndarray,
                  split: int | None = None, check_sum: bool = True,
                  multiple: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every seat's win probability modulo each prime: ``(residues, valid)``.

    ``residues[i, j]`` is ``P_(j+1) mod primes[i]`` (uint64) and ``valid[i]`` is False
    for a prime that cannot be used: it divides d, is not above the degrees (1/m in the
    power-sum exponential), or ``D_b`` is not invertible mod ``chi_a`` there (the
    prime divides a denominator). Rows of invalid primes are zero. All seats share the
    power sums, the denominators, the inverse and the sequences; the whole batch runs
    in one compiled call. ``split`` forces the number of survival factors on the a side.
    The seats' sum checks every :data:`CHECK_EVERY`-th prime (the first of each run of
    them); at the others one seat is derived from it (:class:`SeatInputs`).

    ``multiple`` (three players whose split has f alone on the a side,
    :attr:`~.algebra.Split.multiple`; ignored elsewhere): one more column, the residue
    of the integer M that every seat's denominator divides
    (:func:`~.algebra.multiple_exponent`); a prime that is not 2 mod 3 is then unusable.
    """
    data = chain_data(chain)
    if players < 2:
        raise ValueError(f"a race needs at least 2 players, got {players}")
    sp, inputs = kernel_inputs(data, players, split, multiple)
    pr = np.asarray([int(q) for q in primes], dtype=np.uint64)
    res = np.zeros((pr.size, players + int(inputs.multiple)), dtype=np.uint64)
    valid = np.zeros(pr.size, dtype=np.bool_)
    floor = max(sp.deg_a, sp.deg_b, data.n + 1, math.factorial(max(sp.r, sp.s + 1, 1)))
    # the kernel's field arithmetic needs a prime modulus: anything else is reported
    # unusable (a composite one could make its Euclid loop forever)
    usable = np.array([q % 2 == 1 and q < (1 << 63) and q > floor and data.d % q != 0
                       and (q % 3 == 2 or not inputs.multiple)
                       and bool(is_prime(q)) for q in (int(x) for x in pr)], dtype=np.bool_)
    if usable.any():
        idx = np.nonzero(usable)[0]
        sub_res = np.zeros((idx.size, res.shape[1]), dtype=np.uint64)
        sub_valid = np.zeros(idx.size, dtype=np.bool_)
        omegas = np.zeros(idx.size, dtype=np.uint64)
        adicities = np.zeros(idx.size, dtype=np.int64)
        _ntt_roots(pr[idx], omegas, adicities)
        keep_kernel_memory()
        _batch(pr[idx], omegas, adicities, inputs, sub_res, sub_valid)
        res[idx] = sub_res
        valid[idx] = sub_valid
    # the seats of a race sum to 1: a check where every seat was computed
    for i in (np.nonzero(valid)[0] if check_sum else ()):
        if sum(int(x) for x in res[i, :players]) % int(pr[i]) != 1:
            raise ArithmeticError(f"seats do not sum to 1 mod {int(pr[i])}: a bug")
    res[~valid] = 0
    return res, valid


# ----------------------------------------------------------------------------------
# Two players: the answer and the whole table P(a, b), multimodular
# ----------------------------------------------------------------------------------

@nb.njit(cache=True)
def _table_one_prime(p, d, n, n1, z, dp_l, dp_s, indptr, indices, cvals, fin, lo, hi,
                     out):  # pragma: no cover - compiled
    """Columns ``lo <= b < hi`` of the table: ``out[a, b - lo] = P[a, b]`` mod p
    (Montgomery inside, plain residues out). N and Y are needed only for those b, so a
    share of the columns costs that share of the two heavy n^3 loops.

    ``F[a, j] = (Q^j r)[a]``, ``Sm[b, s] = (Q^s 1)[b]`` (sparse Krylov steps),
    ``N[b, i] = sum_l e_l Sm[b, i-l]``, ``MG[i] = x^i G mod chi``, ``Y = N MG`` and
    ``P = F Y^T``: three n^3 multiply-accumulate loops.
    """
    fp = mont_field(p)
    one = fp.one
    dinv = minv(to_mont(U64(d), fp), fp)
    e = _times_powers(dp_l, dp_s, n1 + 1, one, dinv, fp)
    chi = np.zeros(n + 1, dtype=np.uint64)
    for i in range(n1 + 1):
        chi[z + n1 - i] = e[i]
    ok, g = poly_invmod(poly_rem(e, chi, fp), chi, fp)
    if not ok:
        return False
    qv = np.zeros(cvals.size, dtype=np.uint64)
    for k in range(cvals.size):
        qv[k] = mmul(to_mont(U64(cvals[k]), fp), dinv, fp)
    F = np.zeros((n, n), dtype=np.uint64)     # F[a, j]
    Sm = np.zeros((n, n), dtype=np.uint64)    # Sm[b, s]
    for a in range(n):
        F[a, 0] = mmul(to_mont(U64(fin[a]), fp), dinv, fp)
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
            F[a, j] = fold(t, h, l, fp)
            Sm[a, j] = fold(t2, h2, l2, fp)
    # N[b, i] = sum_{l <= min(i, n1)} e_l Sm[b, i - l]
    N = np.zeros((n, n), dtype=np.uint64)
    for b in range(lo, hi):
        for i in range(n):
            cnt = i + 1 if i < n1 else n1 + 1
            N[b, i] = mdot_rev(e, 0, Sm[b], i, cnt, fp)
    # MGt[j, i] = coefficient j of x^i G mod chi (stored transposed for contiguous dots)
    MGt = np.zeros((n, n), dtype=np.uint64)
    cur = g.copy()
    for i in range(n):
        for j in range(n):
            MGt[j, i] = cur[j]
        top = cur[n - 1]
        for jj in range(n - 1, 0, -1):
            cur[jj] = msub(cur[jj - 1], mmul(top, chi[jj], fp), p)
        cur[0] = mneg(mmul(top, chi[0], fp), p)
    Y = np.zeros((n, n), dtype=np.uint64)     # Y[b, j] = sum_i N[b, i] MG[i, j]
    for b in range(lo, hi):
        for j in range(n):
            Y[b, j] = mdot(N[b], 0, MGt[j], 0, n, fp)
    for a in range(n):
        for b in range(lo, hi):
            out[a, b - lo] = from_mont(mdot(F[a], 0, Y[b], 0, n, fp), fp)
    return True


@nb.njit(cache=True)
def _table_batch(primes, d, n, n1, z, dp_l, dp_s, indptr, indices, cvals, fin, lo, hi,
                 res, valid):  # pragma: no cover - compiled
    for i in range(primes.size):
        valid[i] = _table_one_prime(primes[i], d, n, n1, z, dp_l, dp_s, indptr, indices,
                                    cvals, fin, lo, hi, res[i])


def table_residues(chain, primes: Sequence[int],
                   columns: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The two-player table mod each prime: ``(res[len(primes), n, columns], valid)``,
    the columns ``lo <= b < hi`` of ``columns`` (all by default)."""
    data = chain_data(chain)
    n = data.n
    lo, hi = columns if columns is not None else (0, n)
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
    res = np.zeros((pr.size, n, hi - lo), dtype=np.uint64)
    valid = np.zeros(pr.size, dtype=np.bool_)
    _table_batch(pr, np.uint64(data.d), n, data.n1, data.z, dp_l, dp_s, indptr,
                 np.array(indices, dtype=np.int64), np.array(cvals, dtype=np.int64),
                 data.finish.astype(np.int64), lo, hi, res, valid)
    return res, valid


@nb.njit(cache=True)
def _scale_residues(res, t, primes, out):  # pragma: no cover - compiled
    """``out[j, i] = res[j, i] t[j] mod primes[j]`` (plain residues in and out: the
    Montgomery product of a plain residue with ``t R`` is the plain product)."""
    for j in range(primes.size):
        p = primes[j]
        fp = mont_field(p)
        tm = to_mont(t[j], fp)
        for i in range(res.shape[1]):
            out[j, i] = mmul(res[j, i], tm, fp)


def table_numerators(res: np.ndarray, primes: list[int], m: mpz, den: mpz) -> list[mpz]:
    """``Num = Den P`` for every entry from ``P mod p_j`` (``res[j]``, one array per
    prime), for a common denominator Den of every entry and ``M = prod p_j > 2 Den 2^64``.

    Chinese remaindering without a division by the 15,000-bit modulus M: with
    ``V_j = M / p_j`` and ``w_j = Num V_j^-1 mod p_j``, ``sum_j w_j V_j = Num + k M``
    where ``k = sum_j w_j / p_j - Num / M``; ``0 <= Num <= Den < M 2^-64`` makes ``k`` the
    nearest integer to ``sum_j w_j / p_j``, which double precision gets right (a sum of
    c terms below 1 errs by less than ``c^2 2^-53``, far below 1/2 for any c used here).
    One integer matrix-vector product and one small multiple of M per entry, instead of
    two reductions modulo M. An entry outside ``[0, Den]`` (Den not a common
    denominator, or a wrong residue) raises ``ArithmeticError``.
    """
    count, size = res.shape[0], res[0].size
    pr = np.asarray(primes, dtype=np.uint64)
    cofactors = [m // q for q in primes]
    t = np.asarray([int(den % q * invert(v % q, q) % q) for q, v in zip(primes, cofactors)],
                   dtype=np.uint64)
    w = np.empty_like(res.reshape(count, size))
    _scale_residues(res.reshape(count, size), t, pr, w)
    k = np.rint((w / pr.astype(np.float64)[:, None]).sum(axis=0)).astype(np.int64)
    sums = fmpz_mat_to_mpz(array_to_fmpz_mat(w.T) * ints_to_fmpz_column(cofactors))
    nums = [v - kk * m for v, kk in zip(sums, k.tolist())]
    if any(v < 0 or v > den for v in nums):
        raise ArithmeticError("a table entry is not a fraction in [0, 1] over the common denominator")
    return nums


@dataclass(frozen=True)
class TwoPlayerTable:
    """The two-player table of :func:`two_player_table`, row-major (entry ``a n + b``).

    ``P(a, b) = lowest[i] / lowest_denominators[i]`` in lowest terms, with the decimal
    text of each ``lowest[i]``; ``denominator`` is common to all of them, and
    :attr:`numerators` are the entries over it (what :func:`.algebra.check_table`
    certifies).
    """

    denominator: mpz
    lowest: list[mpz]
    lowest_denominators: list[mpz]
    numerator_texts: list[str]

    @functools.cached_property
    def numerators(self) -> list[mpz]:
        """``p_i (Den / q_i)``: every entry over the common denominator."""
        factor: dict[mpz, mpz] = {}
        out = []
        for p, q in zip(self.lowest, self.lowest_denominators):
            f = factor.get(q)
            if f is None:
                f = factor[q] = self.denominator // q
            out.append(p * f)
        return out


def _table_columns(data: ChainData, primes: list[int], m: mpz, den: mpz,
                   columns: tuple[int, int]) -> tuple[list[mpz], list[mpz], list[str]] | None:
    """Columns ``lo <= b < hi`` of the table (entries ``(a, b)`` in the order of a, then
    b), whole: their residues at every prime of M, the CRT, lowest terms and the
    numerators' decimal texts (what one core does in :func:`two_player_table`); None if
    a prime is unusable for the table."""
    res, valid = table_residues(data, primes, columns)
    if not valid.all():
        return None
    lowest, dens = lowest_terms(table_numerators(res, primes, m, den), den)
    return lowest, dens, [str(v) for v in lowest]


def two_player_table(chain, primes_source: Iterable[int] | int | None = None,
                     processes: int = 2) -> TwoPlayerTable:
    """``P(a, b)``: the player to move, on state a, wins against the opponent on state b,
    for every (a, b): :class:`TwoPlayerTable`.

    ``P(a, b) = sum_t f_a(t) S_b(t) = L_a(N_b D^-1 mod chi)``: per prime the whole table
    is ``F Y^T`` with the Krylov matrix ``F[a, j] = (Q^j r)[a]`` and ``Y = N M_G`` (rows
    ``N_b``, ``M_G`` = multiplication by ``G = D^-1 mod chi``): n^3 work, ~2 ms a prime.

    Denominator first, proved: :func:`.algebra.table_denominator` (one solve over Q).
    Then ``Num = Den P`` needs only ``log2(2 Den)`` bits of primes (half of what
    rational reconstruction would need per entry) and one CRT of all n^2 entries
    (:func:`table_numerators`). The columns (the opponent's square b) split between ``processes``
    forked processes (at most the CPUs: :func:`ladders.solver.forked.run_forked`), each
    with its residues at every prime, CRT, lowest terms
    (:func:`ladders.solver.exact.lowest_terms`) and texts; only the fractions in lowest
    terms come back. The result is not certified here: :func:`check_table` does that.
    """
    data = chain_data(chain)
    if primes_source is None or isinstance(primes_source, int):
        primes_source = ntt_primes(primes_source)
    it = iter(primes_source)
    den = table_denominator(data)
    n = data.n
    parts = max(1, min(processes, cores(), n))
    cuts = [n * i // parts for i in range(parts + 1)]
    spans = list(zip(cuts, cuts[1:]))
    while True:
        primes: list[int] = []
        m = mpz(1)
        while m.bit_length() <= den.bit_length() + 66:          # M > 2 Den 2^64
            primes.append(next(it))
            m *= primes[-1]
        shares = run_forked([functools.partial(_table_columns, data, primes, m, den, span)
                             for span in spans])
        if all(share is not None for share in shares):
            break
        # a prime at which D is not invertible mod chi: it divides their resultant, as
        # at most a few hundred of the pool's ~1.6e12 primes do; draw others
    # row a of the table: row a of each share of columns, in column order
    lowest: list[mpz] = []
    dens: list[mpz] = []
    texts: list[str] = []
    for a in range(n):
        for (values, denominators, decimals), (lo, hi) in zip(shares, spans):
            row = slice(a * (hi - lo), (a + 1) * (hi - lo))
            lowest += values[row]
            dens += denominators[row]
            texts += decimals[row]
    return TwoPlayerTable(den, lowest, dens, texts)
