"""Sparse LU factorization modulo a word-size prime, and the p-adic lifting loop (numba).

Data structures. The system ``A x = B`` is first permuted symmetrically by the pivot
order (``A'[i, j] = A[order[i], order[j]]``: row and column i of ``A'`` are unknown
``order[i]``), then factored without pivoting, ``A' = L U (mod p)``:

- ``L`` unit lower triangular, CSR by rows, diagonal not stored. Values are kept
  *negated* (``p - l``) so that the forward solve only adds.
- ``U`` upper triangular, CSR by rows, diagonal not stored; ``dinv[i]`` is the inverse
  of the pivot ``U[i, i]``. Values negated like ``L``.

Primes are below ``2^28`` (:data:`MAX_PRIME`): a product of two residues is below
``2^56``, so 127 products add up in an ``int64`` before one reduction is needed. That
delayed reduction is what makes a triangular solve cost about one multiply-add per
nonzero instead of one division per nonzero.

The factorization is row by row (up-looking): row i of ``A'`` is scattered into a dense
work row, and the earlier rows of ``U`` are subtracted in increasing column order. A
pivot that vanishes modulo p makes the factorization fail (``ZeroDivisionError``); the
caller takes another prime. Without pivoting, every leading minor of ``A'`` must be
nonzero: true over the rationals for these systems (``A'`` is an M-matrix up to the
sign of off-diagonal entries for the round form, and diagonally dominant for the turn
form), so only primes dividing one of them fail, which is rare for random primes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ladders.solver.engines.series.jit import in_cache, nb

#: Largest prime used: products of two residues stay below 2^56 (see module docstring).
MAX_PRIME = (1 << 28) - 57
#: Products added before a reduction: 127 * 2^56 < 2^63.
_BATCH = 127
#: Seconds of compiled factorization between two polls of ``should_stop``.
CHUNK_SECONDS = 0.2
#: The work of the first chunk (columns scanned and entries updated, about 10 ms);
#: later chunks' budgets follow the time the chunks before took.
FIRST_BUDGET = 1 << 20


@dataclass(frozen=True)
class LUFactors:
    """``A' = L U (mod p)`` for ``A' = A[order][:, order]`` (see module docstring)."""

    p: int
    order: np.ndarray
    l_indptr: np.ndarray
    l_indices: np.ndarray
    l_data: np.ndarray
    u_indptr: np.ndarray
    u_indices: np.ndarray
    u_data: np.ndarray
    dinv: np.ndarray

    @property
    def nnz(self) -> int:
        """Stored nonzeros of L and U plus the diagonal."""
        return len(self.l_data) + len(self.u_data) + len(self.dinv)


def permute_csr(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of ``A[order][:, order]`` with columns sorted in each row."""
    n = len(order)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n, dtype=np.int64)
    counts = np.diff(indptr)[order]
    new_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_ptr[1:])
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    # entry t of new row r comes from old position indptr[order[r]] + (t - new_ptr[r])
    src = np.repeat(indptr[order] - new_ptr[:-1], counts) + np.arange(new_ptr[-1], dtype=np.int64)
    cols = position[indices[src]]
    vals = data[src]
    key = np.lexsort((cols, rows))
    return new_ptr, cols[key].astype(np.int64), vals[key].astype(np.int64)


@nb.njit(cache=True)
def _inverse(a: int, p: int) -> int:
    """``a^-1 mod p`` by the extended Euclidean algorithm (``0 < a < p``)."""
    r0, r1 = p, a
    s0, s1 = 0, 1
    while r1:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        s0, s1 = s1, s0 - q * s1
    return s0 % p


@nb.njit(cache=True)
def _factor_rows(i0, i1, budget, indptr, indices, data, p, w, mark, upper, l_ptr, u_ptr, l_ind,
                 l_val, u_ind, u_val, dinv, nl, nu):  # pragma: no cover - compiled
    """Rows ``i0 ..`` of the up-looking LU without pivoting, continuing the factor
    arrays of rows ``0 .. i0 - 1`` (``nl``, ``nu`` entries of L and U so far), up to
    row ``i1 - 1`` or the first row after which the work done (one for the row, the
    columns it scans and the entries it updates) reaches ``budget``: a row's cost
    grows with the fill, and a count of rows alone let one call run for seconds. Between two calls ``w`` is zero and
    ``mark`` false, so a factorization can stop after any row. Returns the (possibly
    regrown) L and U arrays, the new ``nl``, ``nu``, the first row whose pivot vanished
    mod p (or -1), and the row the call stopped before."""
    ops = 0
    for i in range(i0, i1):
        lo = i
        nup = 0
        for t in range(indptr[i], indptr[i + 1]):
            c = indices[t]
            w[c] = data[t] % p
            if not mark[c]:
                mark[c] = True
                if c < lo:
                    lo = c
                if c > i:
                    upper[nup] = c
                    nup += 1
        # columns below the diagonal, in increasing order: a dense scan is cheap next
        # to the updates and needs no heap
        ops += 1 + i - lo
        for k in range(lo, i):
            if not mark[k]:
                continue
            mark[k] = False
            wk = w[k]
            w[k] = 0
            if wk == 0:
                continue
            lik = wk * dinv[k] % p
            if nl == len(l_ind):
                l_ind = _grow(l_ind, 2 * nl)
                l_val = _grow(l_val, 2 * nl)
            l_ind[nl] = k
            l_val[nl] = (p - lik) % p
            nl += 1
            ops += u_ptr[k + 1] - u_ptr[k]
            for t in range(u_ptr[k], u_ptr[k + 1]):
                j = u_ind[t]
                if not mark[j]:
                    mark[j] = True
                    if j > i:
                        upper[nup] = j
                        nup += 1
                # u_val holds -u: w[j] - l*u = w[j] + l*(-u)
                w[j] = (w[j] + lik * u_val[t]) % p
        l_ptr[i + 1] = nl
        piv = w[i]
        w[i] = 0
        mark[i] = False
        if piv == 0:
            return l_ind, l_val, u_ind, u_val, nl, nu, i, i
        dinv[i] = _inverse(piv, p)
        cols = np.sort(upper[:nup])
        if nu + nup > len(u_ind):
            cap = max(2 * len(u_ind), nu + nup)
            u_ind = _grow(u_ind, cap)
            u_val = _grow(u_val, cap)
        for t in range(nup):
            j = cols[t]
            mark[j] = False
            v = w[j]
            w[j] = 0
            if v != 0:
                u_ind[nu] = j
                u_val[nu] = p - v
                nu += 1
        u_ptr[i + 1] = nu
        if ops >= budget:
            return l_ind, l_val, u_ind, u_val, nl, nu, -1, i + 1
    return l_ind, l_val, u_ind, u_val, nl, nu, -1, i1


@nb.njit(cache=True)
def _grow(arr, cap):  # pragma: no cover - compiled
    out = np.empty(cap, dtype=arr.dtype)
    out[:len(arr)] = arr
    return out


def lu_factor_mod(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                  order: np.ndarray, p: int) -> LUFactors:
    """Factor ``A[order][:, order] = L U (mod p)``; ``ZeroDivisionError`` if a pivot vanishes."""
    order = np.asarray(order, dtype=np.int64)
    return factor_permuted(permute_csr(indptr, indices, data, order), order, p)


def factor_permuted(permuted: tuple[np.ndarray, np.ndarray, np.ndarray], order: np.ndarray,
                    p: int, should_stop: Callable[[], bool] | None = None,
                    progress: Callable[[int, int], None] | None = None) -> LUFactors:
    """:func:`lu_factor_mod` of a system already permuted by ``order`` (CSR arrays from
    :func:`permute_csr`): for callers that factor one system modulo many primes.

    The rows are factored in chunks of about :data:`CHUNK_SECONDS` each; between two
    chunks ``progress(rows_done, rows)`` is called and ``should_stop()`` polled: when
    it turns true, :class:`FactorizationStopped` is raised (a compiled kernel cannot
    see a signal, so this is how a long factorization honours Ctrl-C within a second).
    """
    if not 2 < p <= MAX_PRIME:
        raise ValueError(f"prime {p} outside (2, {MAX_PRIME}]")
    ptr, ind, val = permuted
    n = len(order)
    cap = max(16, 4 * len(val))
    w = np.zeros(n, dtype=np.int64)
    mark = np.zeros(n, dtype=np.bool_)
    upper = np.empty(n, dtype=np.int64)
    l_ptr = np.zeros(n + 1, dtype=np.int64)
    u_ptr = np.zeros(n + 1, dtype=np.int64)
    l_ind, l_val = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    u_ind, u_val = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    dinv = np.zeros(n, dtype=np.int64)
    nl = nu = done = 0
    budget = FIRST_BUDGET
    while done < n:
        if should_stop is not None and should_stop():
            raise FactorizationStopped(done, n)
        t0 = time.perf_counter()
        l_ind, l_val, u_ind, u_val, nl, nu, bad, stop = _factor_rows(
            done, n, budget, ptr, ind, val, p, w, mark, upper, l_ptr, u_ptr, l_ind, l_val,
            u_ind, u_val, dinv, nl, nu)
        if bad >= 0:
            raise ZeroDivisionError(f"pivot {bad} of the LU vanishes modulo {p}")
        elapsed = time.perf_counter() - t0
        budget = max(FIRST_BUDGET, int(budget * min(2.0, max(0.25, CHUNK_SECONDS / max(elapsed, 1e-6)))))
        done = stop
        if progress is not None:
            progress(done, n)
    # int32 halves the memory the triangular solves stream through (p < 2^28, n < 2^31)
    return LUFactors(p, order, l_ptr, l_ind[:nl].astype(np.int32), l_val[:nl].astype(np.int32),
                     u_ptr, u_ind[:nu].astype(np.int32), u_val[:nu].astype(np.int32), dinv)


class FactorizationStopped(Exception):
    """A factorization stopped on request after ``rows`` of ``total`` rows."""

    def __init__(self, rows: int, total: int) -> None:
        super().__init__(f"factorization stopped after {rows:,} of {total:,} rows")
        self.rows, self.total = rows, total


@nb.njit(cache=True)
def _solve_into(l_ptr, l_ind, l_val, u_ptr, u_ind, u_val, dinv, p, r, y):  # pragma: no cover
    """``y = U^-1 L^-1 r (mod p)`` with delayed reduction (``r`` entries in [0, p))."""
    n = len(dinv)
    for i in range(n):
        s = r[i]
        cnt = 0
        for t in range(l_ptr[i], l_ptr[i + 1]):
            s += l_val[t] * y[l_ind[t]]
            cnt += 1
            if cnt == _BATCH:
                s %= p
                cnt = 0
        y[i] = s % p
    for i in range(n - 1, -1, -1):
        s = y[i]
        cnt = 0
        for t in range(u_ptr[i], u_ptr[i + 1]):
            s += u_val[t] * y[u_ind[t]]
            cnt += 1
            if cnt == _BATCH:
                s %= p
                cnt = 0
        y[i] = (s % p) * dinv[i] % p


def lu_solve_mod(lu: LUFactors, rhs: np.ndarray) -> np.ndarray:
    """``x`` with ``A x = rhs (mod p)``, in the original (unpermuted) indexing."""
    r = np.asarray(rhs, dtype=np.int64)[lu.order] % lu.p
    y = np.empty_like(r)
    _solve_into(lu.l_indptr, lu.l_indices, lu.l_data, lu.u_indptr, lu.u_indices, lu.u_data,
                lu.dinv, lu.p, r, y)
    x = np.empty_like(y)
    x[lu.order] = y
    return x


@nb.njit(cache=True)
def _lift(l_ptr, l_ind, l_val, u_ptr, u_ind, u_val, dinv, p,
          a_ptr, a_ind, a_val, r, digits):  # pragma: no cover - compiled
    """Dixon steps: for each row s of ``digits``, ``digits[s] = A'^-1 r (mod p)`` and
    ``r <- (r - A' digits[s]) / p`` (exact). ``r`` is updated in place and stays small:
    ``|r| <= max row sum of |A'|``, since each step divides by p."""
    n = len(dinv)
    rm = np.empty(n, dtype=np.int64)
    for s in range(digits.shape[0]):
        for i in range(n):
            rm[i] = r[i] % p
        y = digits[s]
        _solve_into(l_ptr, l_ind, l_val, u_ptr, u_ind, u_val, dinv, p, rm, y)
        for i in range(n):
            acc = r[i]
            for t in range(a_ptr[i], a_ptr[i + 1]):
                acc -= a_val[t] * y[a_ind[t]]
            r[i] = acc // p


@nb.njit(cache=True)
def _lift_integer(l_ptr, l_ind, l_val, u_ptr, u_ind, u_val, dinv, p,
                  a_ptr, a_ind, a_val, rhs_digits, out):  # pragma: no cover - compiled
    """Dixon steps with symmetric digits on an integer solution ``A' N = R``.

    ``rhs_digits[t, i]``: base-p digits (any sign) of ``R_i``, low digit first. The
    residual lives in the digits not yet consumed plus a small carry per row. With
    digits in ``(-p/2, p/2]`` the expansion of an integer vector ends: the residual
    becomes exactly zero after about ``log_p max|N|`` steps. Returns the number of
    steps taken (digits in ``out[:steps]``), or -1 if the residual was not zero after
    ``out.shape[0]`` steps (then N is not an integer vector).
    """
    n = len(dinv)
    width = rhs_digits.shape[0]
    carry = np.zeros(n, dtype=np.int64)
    cur = np.empty(n, dtype=np.int64)
    rm = np.empty(n, dtype=np.int64)
    half = p // 2
    for s in range(out.shape[0]):
        for i in range(n):
            c = carry[i]
            if s < width:
                c += rhs_digits[s, i]
            cur[i] = c
            rm[i] = c % p
        y = out[s]
        _solve_into(l_ptr, l_ind, l_val, u_ptr, u_ind, u_val, dinv, p, rm, y)
        zero = True
        for i in range(n):
            if y[i] > half:
                y[i] -= p
        for i in range(n):
            acc = cur[i]
            for t in range(a_ptr[i], a_ptr[i + 1]):
                acc -= a_val[t] * y[a_ind[t]]
            carry[i] = acc // p
            if carry[i] != 0:
                zero = False
        if zero and s + 1 >= width:
            return s + 1
    return -1


@nb.njit(cache=True)
def residual_is_zero(a_ptr, a_ind, a_val, digits, rhs_digits, p):  # pragma: no cover - compiled
    """``A' N == R`` exactly, for ``N`` and ``R`` given as base-p digits (any sign).

    Row by row, digit by digit with carries: ``sum_c A'[i, c] N_c - R_i`` must leave
    every digit divisible by p and no carry at the end. Independent of the lifting
    loop that produced ``N``; this is the certificate's integer check.
    """
    n = a_ptr.shape[0] - 1
    steps = digits.shape[0]
    width = rhs_digits.shape[0]
    for i in range(n):
        carry = 0
        for s in range(max(steps, width)):
            acc = carry
            if s < steps:
                for t in range(a_ptr[i], a_ptr[i + 1]):
                    acc += a_val[t] * digits[s, a_ind[t]]
            if s < width:
                acc -= rhs_digits[s, i]
            if acc % p != 0:
                return False
            carry = acc // p
        if carry != 0:
            return False
    return True


def compiled() -> bool:
    """Whether the factorization kernel is in numba's cache already
    (:func:`~ladders.solver.engines.series.jit.in_cache`): if not, the first solve
    compiles the kernels (about 13 s on a fresh install, once), which a driver says
    before it starts."""
    return in_cache(_factor_rows)
