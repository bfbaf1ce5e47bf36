"""Lehmer's rounds of the half-gcd's base case, compiled.

The half-gcd (:func:`~ladders.solver.engines.series.reconstruct._hgcd`) ends its
recursion on numbers of a few thousand bits, where it takes a machine word of Euclid's
quotients at a time (Knuth's Algorithm L, TAOCP 4.5.2: :func:`lehmer_word`) and applies
them to the two numbers and to its cofactor matrix. At five players' full size that
base case ran about half a million times on 2,048 bits, some thirty rounds each; as
gmpy2 calls each round cost a dozen products of a few hundred bits and their
interpreter overhead (92 us a base case at 2,048 bits; 46 us here). Here the rounds
run in numba on 30-bit limbs: a cofactor of a round is below ``2^31``
(:func:`_word_steps`), a limb below ``2^30``, so a limb's share of a linear
combination fits an int64 with its carry.

:func:`lehmer_rounds` takes the rounds the compiled loop can take and hands back the
first it cannot (a cofactor of 31 bits or more, a word that decides no quotient, a
remainder that would fall to ``2^s``) so that its caller takes that step as before: the
same sequence of steps, the same result, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ladders.solver.exact import mpz
from ladders.solver.engines.series.jit import nb

#: Bits of the leading parts a Lehmer round works on: below 2^62, so that the word
#: arithmetic of :func:`lehmer_word` (sums of a part and a cofactor) fits an int64.
WORD = 62

_LIMB = 30
_MASK = (1 << _LIMB) - 1
#: a round's cofactors must stay below this for a limb's products to fit an int64
_COFACTOR = 1 << 31
#: zero limbs past the top, so that a word's window never reads outside the array
_PAD = 4


#: most steps one word can decide (quotients of 1 all along: 62 bits / log2 of the
#: golden ratio)
_MOST_STEPS = 96


@nb.njit(cache=True)
def _word_steps(x: int, y: int, cofactors: np.ndarray) -> int:
    """Knuth's Algorithm L (TAOCP 4.5.2) on the leading words ``x >= y`` of two numbers
    ``u >= v`` (the same shift): the steps t it decides, and in row k of ``cofactors``
    (k <= t) ``(A, B, C, D)`` such that ``A u + B v`` and ``C u + D v`` are the
    remainders ``k`` and ``k + 1`` steps down the Euclidean sequence of ``(u, v)``. A
    quotient is taken only when the two ends of the interval the true ratio lies in,
    ``(x + A)/(y + C)`` and ``(x + B)/(y + D)``, give the same one, so every quotient is
    the true one; the round stops at the first that the word cannot decide. While it
    runs, ``y + C > 0`` and ``|C| y <= x`` keep ``|C|, |D| < 2^31`` for ``x < 2^62``."""
    a0, b0, c0, d0 = 1, 0, 0, 1
    t = 0
    cofactors[0, 0], cofactors[0, 1], cofactors[0, 2], cofactors[0, 3] = 1, 0, 0, 1
    while y + c0 > 0 and y + d0 > 0:
        q = (x + a0) // (y + c0)
        if q != (x + b0) // (y + d0):
            break
        a0, c0 = c0, a0 - q * c0
        b0, d0 = d0, b0 - q * d0
        x, y = y, x - q * y
        t += 1
        cofactors[t, 0], cofactors[t, 1], cofactors[t, 2], cofactors[t, 3] = a0, b0, c0, d0
    return t


@nb.njit(cache=True)
def lehmer_word(x: int, y: int) -> tuple[int, int, int, int, int]:
    """:func:`_word_steps`' whole round: ``(A, B, C, D, t)``."""
    cofactors = np.empty((_MOST_STEPS + 1, 4), dtype=np.int64)
    t = _word_steps(x, y, cofactors)
    return cofactors[t, 0], cofactors[t, 1], cofactors[t, 2], cofactors[t, 3], t


@nb.njit(cache=True)
def _load(data: np.ndarray, out: np.ndarray) -> None:
    """Each row of little-endian bytes into a row of 30-bit limbs."""
    out[:] = 0
    for row in range(data.shape[0]):
        acc = 0
        held = 0
        k = 0
        for byte in data[row]:
            acc |= np.int64(byte) << held
            held += 8
            if held >= _LIMB:
                out[row, k] = acc & _MASK
                acc >>= _LIMB
                held -= _LIMB
                k += 1
        if held and k < out.shape[1]:
            out[row, k] = acc


@nb.njit(cache=True)
def _store(limbs: np.ndarray, out: np.ndarray) -> None:
    """Each row of 30-bit limbs into a row of little-endian bytes (as many as ``out``
    holds)."""
    for row in range(out.shape[0]):
        acc = 0
        held = 0
        k = 0
        for limb in limbs[row]:
            acc |= limb << held
            held += _LIMB
            while held >= 8 and k < out.shape[1]:
                out[row, k] = acc & 255
                acc >>= 8
                held -= 8
                k += 1


@nb.njit(cache=True)
def _nbits(x: np.ndarray, n: int) -> int:
    """Bits of the number whose limbs are ``x[:n]`` (those above are zero)."""
    for i in range(n - 1, -1, -1):
        v = x[i]
        if v:
            b = 0
            while v:
                v >>= 1
                b += 1
            return _LIMB * i + b
    return 0


@nb.njit(cache=True)
def _less(x: np.ndarray, y: np.ndarray, n: int) -> bool:
    for i in range(n - 1, -1, -1):
        if x[i] != y[i]:
            return x[i] < y[i]
    return False


@nb.njit(cache=True)
def _diff_bits(x: np.ndarray, y: np.ndarray, scratch: np.ndarray, n: int) -> int:
    """Bits of ``|x - y|``."""
    if _less(x, y, n):
        x, y = y, x
    borrow = 0
    for i in range(n):
        t = x[i] - y[i] - borrow
        borrow = 1 if t < 0 else 0
        scratch[i] = t + (borrow << _LIMB)
    return _nbits(scratch, n)


@nb.njit(cache=True)
def _window(x: np.ndarray, shift: int) -> int:
    """``x >> shift`` where that is below ``2^62``."""
    i = shift // _LIMB
    r = shift - _LIMB * i
    v = np.uint64(x[i]) >> np.uint64(r)
    v |= np.uint64(x[i + 1]) << np.uint64(_LIMB - r)
    v |= np.uint64(x[i + 2]) << np.uint64(2 * _LIMB - r)
    if 3 * _LIMB - r < WORD:        # limb i + 3 reaches below bit 62 only then
        v |= np.uint64(x[i + 3]) << np.uint64(3 * _LIMB - r)
    return np.int64(v)


@nb.njit(cache=True)
def _combine(out: np.ndarray, c0: int, u: np.ndarray, c1: int, v: np.ndarray, n: int) -> bool:
    """``out[:n] = c0 u + c1 v`` for ``|c0|, |c1| < 2^31`` and a result known to be
    nonnegative and below ``2^(30 n)``; False where it is not (a broken invariant: the
    caller stops)."""
    carry = 0
    for i in range(n):
        t = c0 * u[i] + c1 * v[i] + carry
        out[i] = t & _MASK
        carry = t >> _LIMB
    return carry == 0


@nb.njit(cache=True)
def _rounds(nums: np.ndarray, s: int) -> tuple[int, int]:
    """Lehmer rounds on ``nums`` = limbs of ``a, b, m00, m01, m10, m11`` (then
    scratch rows), in place, while ``|a - b| >= 2^s`` and each round is one the
    compiled loop can take. A round whose last remainder would fall to ``2^s`` takes
    the steps before it (every one a true Euclid step above ``2^s``, as the caller's
    single steps would be). ``(rounds, status)``: status 0 once ``|a - b| < 2^s``, 1
    where the next step is the caller's, 2 where an invariant broke.

    Only the limbs in use are worked on: ``a`` and ``b`` shrink (remainders), the
    matrix's entries grow by at most 32 bits a round (two limbs)."""
    a, b = nums[0], nums[1]
    m = nums[2:6]
    first, second, scratch = nums[6], nums[7], nums[8]
    new = nums[9:13]
    cofactors = np.empty((_MOST_STEPS + 1, 4), dtype=np.int64)
    size = nums.shape[1]
    n_ab = size
    n_m = 1
    for row in range(4):
        n_m = max(n_m, _nbits(m[row], size) // _LIMB + 1)
    done = 0
    while _diff_bits(a, b, scratch, n_ab) > s:
        swap = _less(a, b, n_ab)
        big, small = (b, a) if swap else (a, b)
        top = _nbits(big, n_ab)
        n_ab = min(top // _LIMB + 1, size)
        shift = max(top - WORD, 0)
        t = _word_steps(_window(big, shift), _window(small, shift), cofactors)
        while t > 0:
            if not _combine(second, cofactors[t, 2], big, cofactors[t, 3], small, n_ab):
                return done, 2
            if _nbits(second, n_ab) > s:
                break
            t -= 1
        c00, c01, c10, c11 = cofactors[t, 0], cofactors[t, 1], cofactors[t, 2], cofactors[t, 3]
        if t == 0 or max(abs(c00), abs(c01), abs(c10), abs(c11)) >= _COFACTOR:
            return done, 1
        if not _combine(first, c00, big, c01, small, n_ab):
            return done, 2
        # (big; small) = C^-1 (first; second), det C = (-1)^t; after an odd number of
        # steps the larger number sits in the smaller one's place
        if t % 2:
            first, second = second, first
            p0, p1, p2, p3 = c01, -c11, -c00, c10
        else:
            p0, p1, p2, p3 = c11, -c01, -c10, c00
        if swap:
            p0, p1, p2, p3 = p3, p2, p1, p0
            a[:n_ab] = second[:n_ab]
            b[:n_ab] = first[:n_ab]
        else:
            a[:n_ab] = first[:n_ab]
            b[:n_ab] = second[:n_ab]
        n_m = min(n_m + 2, size)
        ok = (_combine(new[0], p0, m[0], p2, m[1], n_m)
              and _combine(new[1], p1, m[0], p3, m[1], n_m)
              and _combine(new[2], p0, m[2], p2, m[3], n_m)
              and _combine(new[3], p1, m[2], p3, m[3], n_m))
        if not ok:
            return done, 2
        m[:, :n_m] = new[:, :n_m]
        n_m = max(_nbits(m[0], n_m), _nbits(m[1], n_m), _nbits(m[2], n_m),
                  _nbits(m[3], n_m)) // _LIMB + 1
        done += 1
    return done, 0


def lehmer_rounds(M: tuple[mpz, mpz, mpz, mpz], a: mpz, b: mpz, s: int
                  ) -> tuple[tuple[mpz, mpz, mpz, mpz], mpz, mpz, bool]:
    """The Lehmer rounds the half-gcd's base case takes from ``(M, a, b)`` (nonnegative,
    ``(a; b)`` reached by M from the base case's input) while ``|a - b| >= 2^s``:
    ``(M', a', b', stuck)``, ``stuck`` where a step is left to the caller (the one
    :func:`~ladders.solver.engines.series.reconstruct._lehmer_round` or its
    semi-quotient step would take next); else ``|a' - b'| < 2^s``."""
    values = (a, b, *M)
    size = max(int(v.bit_length()) for v in values)
    limbs = -(-size // _LIMB) + _PAD
    width = -(-limbs * _LIMB // 8)
    data = np.frombuffer(b"".join(v.to_bytes(width, "little") for v in values),
                         dtype=np.uint8).reshape(6, width)
    nums = np.empty((13, limbs), dtype=np.int64)
    _load(data, nums[:6])
    _, status = _rounds(nums, s)
    if status == 2:
        raise ArithmeticError("a Lehmer round broke the half-gcd's invariants")
    out = np.zeros((6, width), dtype=np.uint8)
    _store(nums[:6], out)
    a, b, *m = (mpz.from_bytes(out[row].tobytes(), "little") for row in range(6))
    return (m[0], m[1], m[2], m[3]), a, b, status == 1
