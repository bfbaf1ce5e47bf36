"""Word-size modular arithmetic for the series engine's kernels (numba): Montgomery
form modulo odd primes below 2^63, with 128- and 192-bit products as LLVM intrinsics.

Every value is kept as ``x R mod p`` (R = 2^64), so a product is one 64x64->128-bit
multiplication and one REDC (Montgomery 1985, "Modular multiplication without trial
division"), and a dot product accumulates in 192 bits and is reduced once. Importing
this module loads numba (about a second)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from llvmlite import ir

from ladders.solver.engines.series.jit import nb

# numba itself only through jit.py, which chooses its cache folder first
types = nb.types
intrinsic = nb.extending.intrinsic

# ----------------------------------------------------------------------------------
# Word-size modular arithmetic (numba, Montgomery form, R = 2^64, odd p < 2^63)
# ----------------------------------------------------------------------------------
# Values live in Montgomery form x R mod p: a product is one 64x64->128-bit
# multiplication plus one REDC, no division. Dot products accumulate lazily in 192
# bits (one multiplication and an add-with-carry chain per term) and are reduced once,
# which is what makes the quadratic loops cheap. numba has no 128-bit integers, so
# mul128 and mac192 are LLVM intrinsics (zext, mul, add, trunc).
#
# Indices: numba lets a signed index count from the end (``a[-1]``), so an index it
# cannot prove nonnegative (``a[start + j]``, ``b[hi - i]``) costs a test and a select
# at every access; an unsigned one costs nothing of the kind. The inner loops that index
# at an offset (the transforms, the dot products, the schoolbook products) count in
# uint64: 8,192-point transforms 104 -> 66 us, a dot product of 77 terms 1.1 -> 0.7 ns
# a term here. numba types an expression that mixes uint64 with int64 as float64, which
# it refuses as an index: such loops take their bounds as ``U64(...)`` and their
# constants as ONE, TWO.

U64 = np.uint64
ONE = np.uint64(1)
TWO = np.uint64(2)
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
def redc(hi, lo, fp):  # pragma: no cover - compiled
    """``(hi 2^64 + lo) R^-1 mod p`` for ``hi < p`` (Montgomery reduction)."""
    p, pneg = fp.p, fp.pneg
    m = lo * pneg
    mh, _ml = mul128(m, p)
    t = hi + mh + (ONE if lo != ZERO else ZERO)
    if t >= p:
        t -= p
    return t


@nb.njit(inline="always", cache=True)
def mmul(a, b, fp):  # pragma: no cover - compiled
    """Montgomery product: ``aR * bR -> abR``."""
    h, l = mul128(a, b)
    return redc(h, l, fp)


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
def fold(top, hi, lo, fp):  # pragma: no cover - compiled
    """``T R^-1 mod p`` for the 192-bit ``T = top 2^128 + hi 2^64 + lo`` (``top < p``).

    For a sum of products of Montgomery numbers that is the Montgomery form of the sum.
    """
    h = redc(top, hi, fp)
    h1, l1 = mul128(h, fp.r2)
    h = redc(h1, l1, fp)
    return redc(h, lo, fp)


class Field(NamedTuple):
    """The field F_p as the kernels carry it, one argument (:func:`mont_field`): the
    prime and its Montgomery constants, every one uint64.

    - ``p``: the odd prime, below 2^63;
    - ``pneg``: ``-p^-1 mod 2^64`` (REDC's factor);
    - ``one``: ``R mod p``, the Montgomery form of 1;
    - ``r2``: ``R^2 mod p``, which takes a plain residue to Montgomery form.

    Built inside the compiled code it is a tuple of four uint64. From Python, make one
    with :func:`field`, which keeps the uint64 type: a tuple of Python ints is typed
    int64 by numba, which compiles the kernels once more and mixes signed and unsigned
    arithmetic.
    """

    p: np.uint64
    pneg: np.uint64
    one: np.uint64
    r2: np.uint64


@nb.njit(cache=True)
def mont_field(p):  # pragma: no cover - compiled
    """The :class:`Field` of the prime ``p`` (uint64): ``-p^-1 mod 2^64``, ``R mod p``
    (Montgomery 1) and ``R^2 mod p``."""
    inv = p  # Newton iteration for p^-1 mod 2^64: correct to 3 bits, doubling each step
    for _ in range(6):
        inv = inv * (U64(2) - p * inv)
    pneg = ZERO - inv
    one = (ZERO - p) % p
    r2 = one
    for _ in range(64):
        r2 = madd(r2, r2, p)
    return Field(p, pneg, one, r2)


def field(p: int) -> Field:
    """The :class:`Field` of the odd prime ``p < 2^63``, for a call of the kernels'
    functions from Python (tests, benchmarks): every member a ``np.uint64``."""
    return Field(*(np.uint64(v) for v in mont_field(np.uint64(p))))


@nb.njit(inline="always", cache=True)
def to_mont(x, fp):  # pragma: no cover - compiled
    return mmul(x % fp.p, fp.r2, fp)


@nb.njit(inline="always", cache=True)
def from_mont(x, fp):  # pragma: no cover - compiled
    return redc(ZERO, x, fp)


@nb.njit(cache=True)
def mpow(a, e, fp):  # pragma: no cover - compiled
    """``a^e`` for Montgomery ``a`` and a plain exponent ``e``."""
    # every operand uint64: numba types uint64 mixed with an int64 literal as float64
    r = U64(fp.one)
    a = U64(a)
    k = U64(e)
    while k != ZERO:
        if (k & ONE) != ZERO:
            r = mmul(r, a, fp)
        a = mmul(a, a, fp)
        k = k >> ONE
    return r


@nb.njit(cache=True)
def minv(a, fp):  # pragma: no cover - compiled
    """Montgomery inverse by Fermat (``a`` nonzero mod the prime ``p``)."""
    return mpow(a, fp.p - U64(2), fp)


@nb.njit(cache=True)
def reduce_limbs(limbs, signs, fp, out):  # pragma: no cover - compiled
    """Montgomery residues of big integers given as little-endian 64-bit limbs.

    Horner from the top limb: ``mont(V 2^64 + l) = mont(V) * mont(2^64) + mont(l)`` and
    ``mont(2^64) = R^2 mod p``.
    """
    p, r2 = fp.p, fp.r2
    count, width = limbs.shape
    for i in range(count):
        acc = ZERO
        for j in range(width - 1, -1, -1):
            acc = madd(mmul(acc, r2, fp), to_mont(limbs[i, j], fp), p)
        out[i] = mneg(acc, p) if signs[i] < 0 else acc


@nb.njit(cache=True)
def mdot(a, a0, b, b0, n, fp):  # pragma: no cover - compiled
    """``sum_{i<n} a[a0+i] b[b0+i]`` (Montgomery in, Montgomery out), lazily reduced;
    ``a0, b0 >= 0``."""
    t = ZERO
    h = ZERO
    l = ZERO
    ua = U64(a0)
    ub = U64(b0)
    for i in range(U64(n)):
        t, h, l = mac192(t, h, l, a[ua + i], b[ub + i])
    return fold(t, h, l, fp)


@nb.njit(cache=True)
def mdot_rev(a, a0, b, b_hi, n, fp):  # pragma: no cover - compiled
    """``sum_{i<n} a[a0+i] b[b_hi-i]`` (a convolution term), lazily reduced;
    ``a0 >= 0``, ``b_hi >= n - 1``."""
    t = ZERO
    h = ZERO
    l = ZERO
    ua = U64(a0)
    ub = U64(b_hi)
    for i in range(U64(n)):
        t, h, l = mac192(t, h, l, a[ua + i], b[ub - i])
    return fold(t, h, l, fp)


@nb.njit(cache=True)
def inverses_upto(m, fp):  # pragma: no cover - compiled
    """Montgomery inverses of 1..m (index 0 unused); needs ``m < p``.

    ``1/i = -(p div i) / (p mod i)``: one division per entry, no exponentiation.
    """
    p, one = fp.p, fp.one
    inv = np.zeros(m + 1, dtype=np.uint64)
    if m >= 1:
        inv[1] = one
    for i in range(2, m + 1):
        q = p // U64(i)
        r = p - q * U64(i)
        inv[i] = mneg(mmul(to_mont(q, fp), inv[r], fp), p)
    return inv
