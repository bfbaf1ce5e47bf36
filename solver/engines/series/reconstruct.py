"""Primes, Chinese remaindering (subproduct tree) and rational reconstruction
(half-gcd), and the stream that reconstructs at growing sizes and confirms every
candidate at held-out primes."""

from __future__ import annotations

import contextlib
import math
from concurrent.futures import Executor, Future, ThreadPoolExecutor
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ladders.solver.engines.series.lehmer import WORD, lehmer_rounds, lehmer_word
from ladders.solver.engines.series.subproducts import (Group, Mapper, crt_columns, crt_grouped,
                                                       each_in, group_product, local_mapper)
from ladders.solver.exact import (coprime_mpq, f_divmod, f_mod_2exp, gcd, invert, is_prime, isqrt,
                                  lowest_terms, mpq, mpz, next_prime, release_gil, releasing_gil)


# ----------------------------------------------------------------------------------
# Primes
# ----------------------------------------------------------------------------------

class Drawn:
    """The primes drawn so far, to draw none twice, in 8 bytes each: a sorted array and
    a set of the latest (merged into the array every :attr:`MERGE` primes). A set of
    Python integers held about 80 bytes a prime: 0.8 GB of a 5-player driver's memory
    at its 10 million primes."""

    MERGE = 1 << 16

    def __init__(self) -> None:
        self.sorted = np.empty(0, dtype=np.uint64)
        self.latest: set[int] = set()

    def __contains__(self, q: int) -> bool:
        if q in self.latest:
            return True
        i = int(np.searchsorted(self.sorted, np.uint64(q)))
        return i < len(self.sorted) and int(self.sorted[i]) == q

    def add(self, q: int) -> None:
        self.latest.add(q)
        if len(self.latest) >= self.MERGE:
            merged = np.concatenate([self.sorted, np.fromiter(self.latest, np.uint64,
                                                              len(self.latest))])
            merged.sort()
            self.sorted, self.latest = merged, set()

    def __len__(self) -> int:
        return len(self.sorted) + len(self.latest)


def random_primes(seed: int | None = None, bits: int = 62) -> Iterator[int]:
    """Endless stream of distinct random primes in ``[2^(bits-1), 2^bits)`` (bits <= 63).

    Random (not consecutive) primes are what makes the confirmation's error bound a
    probability: a wrong candidate survives a prime only if the prime divides a fixed
    nonzero integer, and only a tiny fraction of the ~2^bits/(bits ln 2) primes do.
    """
    if not 20 <= bits <= 63:
        raise ValueError("bits must be in 20..63 (the kernel needs p < 2^63)")
    rng = random.Random(seed)
    seen = Drawn()
    lo = 1 << (bits - 1)
    while True:
        q = int(next_prime(rng.randrange(lo, 1 << bits)))
        if q < (1 << bits) and q not in seen:
            seen.add(q)
            yield q


#: The series engine's primes: p = c 2^NTT_TWO_ADICITY + 1, so that transforms of every
#: size up to 2^16 exist modulo each of them (products of length 8,192 for 4 players).
NTT_TWO_ADICITY = 16


def ntt_primes(seed: int | None = None, two_adicity: int = NTT_TWO_ADICITY,
               cube_roots: bool = False) -> Iterator[int]:
    """Endless stream of distinct random primes ``p = c 2^two_adicity + 1`` in
    ``[2^61, 2^62)``: number-theoretic transforms of size up to ``2^two_adicity`` work
    modulo each. There are about ``2^(62 - two_adicity) / 43`` of them (1.6e12 for
    16): :func:`ntt_pool` is that count, which the confirmation's error bound uses.
    ``cube_roots``: only primes ``p = 2 mod 3`` (half of them), where every residue has
    one cube root (the denominator multiple of three players needs one).
    """
    if not 1 <= two_adicity <= 40:
        raise ValueError("two_adicity must be in 1..40")
    rng = random.Random(seed)
    seen = Drawn()
    lo, hi = (1 << 61) >> two_adicity, (1 << 62) >> two_adicity
    while True:
        q = (rng.randrange(lo, hi) << two_adicity) + 1
        if cube_roots and q % 3 != 2:
            continue
        if is_prime(q) and q not in seen:  # the cheap test first: most q are not prime
            seen.add(q)
            yield q


def ntt_pool(two_adicity: int = NTT_TWO_ADICITY, cube_roots: bool = False) -> float:
    """How many primes :func:`ntt_primes` draws from (prime number theorem in an
    arithmetic progression: ``2^61 / (ln 2^62 phi(2^K))``; half of them 2 mod 3)."""
    return 2.0 ** 61 / (62 * 0.6931471805599453 * 2.0 ** (two_adicity - 1)) / (1 + cube_roots)


def ntt_root(p: int, cap: int = 40) -> tuple[int, int]:
    """``(omega, K)``: ``2^K`` is the largest power of two dividing ``p - 1`` (at most
    ``2^cap``) and omega has order exactly ``2^K`` modulo the odd prime p
    (``g^((p-1)/2^K)`` for the first quadratic non-residue g). Transforms of every
    size up to ``2^K`` then exist mod p."""
    k = 0
    while k < cap and (p - 1) % (1 << (k + 1)) == 0:
        k += 1
    g = 2
    while pow(g, (p - 1) // 2, p) != p - 1:
        g += 1
    return pow(g, (p - 1) >> k, p), k


# ----------------------------------------------------------------------------------
# Chinese remaindering
# ----------------------------------------------------------------------------------

def crt_simple(residues: Sequence[int], primes: Sequence[int]) -> tuple[mpz, mpz]:
    """Reference CRT: ``(x, M)``, ``0 <= x < M = prod primes``, incremental (quadratic)."""
    x, m = mpz(0), mpz(1)
    for r, q in zip(residues, primes):
        q = mpz(q)
        t = ((mpz(r) - x) * invert(m % q, q)) % q
        x += m * t
        m *= q
    return x, m


def crt_tree(residues, primes: Sequence[int]) -> tuple[list[mpz], mpz]:
    """Subproduct-tree CRT of one or more residue vectors sharing the primes.

    ``residues``: shape ``(len(primes),)`` or ``(len(primes), c)`` (ints or uint64).
    Returns ``([x_0, ..., x_{c-1}], M)`` with ``0 <= x_i < M = prod primes`` (a list of
    one for a 1-d input). Bottom-up pairing: ``x = x_L + M_L ((x_R - x_L) M_L^-1 mod
    M_R)``; the inverse ``M_L^-1 mod M_R`` is computed once per tree node and shared by
    all columns. Balanced pairing keeps every step a product of equal-size numbers, so
    the whole costs O(M(N) log N) (GMP's gcdext for the inverses is subquadratic too).
    """
    arr = np.asarray(residues, dtype=object)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    count, cols = arr.shape
    if count != len(primes):
        raise ValueError("residues and primes differ in length")
    if count == 0:
        return [mpz(0)] * cols, mpz(1)
    mods = [mpz(int(q)) for q in primes]
    vals = [[mpz(int(arr[i, j])) % mods[i] for j in range(cols)] for i in range(count)]
    while len(mods) > 1:
        nm, nv = [], []
        for i in range(0, len(mods) - 1, 2):
            ml, mr = mods[i], mods[i + 1]
            inv = invert(ml % mr, mr)
            xs = []
            for xl, xr in zip(vals[i], vals[i + 1]):
                xs.append(xl + ml * (((xr - xl) * inv) % mr))
            nm.append(ml * mr)
            nv.append(xs)
        if len(mods) % 2:
            nm.append(mods[-1])
            nv.append(vals[-1])
        mods, vals = nm, nv
    return vals[0], mods[0]


# ----------------------------------------------------------------------------------
# Rational reconstruction
# ----------------------------------------------------------------------------------

def _finish_rr(r0: mpz, t0: mpz, r1: mpz, t1: mpz, bound: mpz) -> tuple[mpz, mpz] | None:
    """Classical Euclid steps from the pair ``r0 > r1`` (with x-cofactors) to Wang's
    stop: ``(a, b)``, ``b > 0``, or None where the cofactor is 0 or beyond the bound."""
    while r1 > bound:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    if t1 == 0 or abs(t1) > bound:
        return None
    return (r1, t1) if t1 > 0 else (-r1, -t1)


def _as_fraction(pair: tuple[mpz, mpz] | None) -> mpq | None:
    """Wang's fraction from the pair at his stop: None unless ``gcd(a, b) = 1`` (a
    common factor means x has no fraction within the bounds)."""
    if pair is None or gcd(*pair) != 1:
        return None
    return mpq(*pair)


def rational_reconstruct_simple(x: int, m: int) -> mpq | None:
    """Reference: the fraction ``a/b = x mod m`` with ``|a|, 0 < b <= sqrt(m/2)``, else None.

    Plain extended Euclid on ``(m, x)``, stopping at the first remainder ``<= sqrt(m/2)``
    (Wang); the answer is unique because ``2 sqrt(m/2)^2 < m``. Quadratic.
    """
    m = mpz(m)
    if m < 2:
        return None
    x = mpz(x) % m
    bound = isqrt(m // 2)
    return _as_fraction(_finish_rr(m, mpz(0), x, mpz(1), bound))


def _bits(v: mpz) -> int:
    return int(v.bit_length())


def _hgcd(a: mpz, b: mpz, helper: Helpers | None = None
          ) -> tuple[tuple[mpz, mpz, mpz, mpz], mpz, mpz]:
    """Half-gcd reduction (Moller 2008, the subtraction-based 'hgcd' of his Fig. 5).

    For ``a, b > 0`` of at most n bits and ``s = n//2 + 1``: returns ``M = (m00, m01,
    m10, m11)`` (nonnegative, determinant 1) and ``(a', b')`` with ``(a; b) = M (a'; b')``,
    ``a', b' >= 2^s`` (more than s bits) and ``|a' - b'| < 2^s``. The pair (a', b') lies
    on the Euclidean remainder sequence of (a, b) (possibly between two remainders), so
    classical steps can continue from it. Two recursive calls on the top halves make it
    O(M(n) log n).

    With ``helper`` (threads whose gmpy2 lets go of the interpreter lock), the
    independent products of a level of :data:`HELPER_BITS` or more (the matrix's four
    entries, the pair's two halves) are shared between this thread and the helper's:
    the recursion itself stays in order.
    """
    n = max(_bits(a), _bits(b))
    s = n // 2 + 1
    M = (mpz(1), mpz(0), mpz(0), mpz(1))
    if min(_bits(a), _bits(b)) <= s or _bits(abs(a - b)) <= s:
        # nothing to do: already reduced (one more step would fall below 2^s)
        return M, a, b
    if n <= _HGCD_CUTOFF:
        return _hgcd_steps(a, b, s, M)
    q3 = 3 * n // 4
    if n < HELPER_BITS:
        helper = None
    if min(_bits(a), _bits(b)) > q3 + 2:
        p1 = s - 1
        M1, a1, b1 = _hgcd(a >> p1, b >> p1, helper)
        a, b = _apply_top(M1, a1, b1, a, b, p1, helper)
        M = M1
    while max(_bits(a), _bits(b)) > q3 + 1 and _bits(abs(a - b)) > s:
        M, a, b = _sdiv_step(M, a, b, s)
    if min(_bits(a), _bits(b)) > s + 2 and _bits(abs(a - b)) > s:
        n2 = max(_bits(a), _bits(b))
        p2 = 2 * s - n2 + 1
        if p2 < 0:
            p2 = 0
        M2, a2, b2 = _hgcd(a >> p2, b >> p2, helper)
        a, b = _apply_top(M2, a2, b2, a, b, p2, helper)
        M = _mmul(M, M2, helper)
    while _bits(abs(a - b)) > s:
        M, a, b = _sdiv_step(M, a, b, s)
    return M, a, b


#: Inputs of :func:`_hgcd` up to this many bits go to its base case (compiled Lehmer
#: rounds): 4-5 % faster than 2,048 at 20 and 80 million bits, where the recursion
#: below was gmpy2's products of a few thousand bits and the interpreter's overhead.
_HGCD_CUTOFF = 8192

#: Inputs of :func:`_hgcd` from this many bits on share their products with its helper
#: threads (a product then takes milliseconds, a thread's hand-over microseconds).
HELPER_BITS = 1 << 21


@dataclass(frozen=True)
class Helpers:
    """Threads that share a half-gcd's independent products with the thread running it
    (their gmpy2 lets go of the interpreter lock: ``exact.release_gil``)."""

    pool: Executor
    threads: int

    def share(self, jobs: list[Callable[[], mpz]]) -> list[mpz]:
        """Every job's result, in order, the jobs dealt round-robin between the calling
        thread (the first share) and the pool's."""
        ways = min(len(jobs), self.threads + 1)
        shares = [jobs[i::ways] for i in range(ways)]
        futures = [self.pool.submit(lambda share=share: [job() for job in share])
                   for share in shares[1:]]
        done = [[job() for job in shares[0]], *(f.result() for f in futures)]
        return [done[i % ways][i // ways] for i in range(len(jobs))]


def _hgcd_steps(a: mpz, b: mpz, s: int, M):
    """Base case of :func:`_hgcd`: Lehmer rounds (:func:`_lehmer_round`, a machine word
    of quotients at a time) while they stay clear of ``2^s``, then semi-quotient steps
    until ``|a - b| < 2^s``. The rounds run compiled (:func:`.lehmer.lehmer_rounds`)
    until one they leave: that step is taken here, and the compiled rounds go on."""
    while True:
        M, a, b, stuck = lehmer_rounds(M, a, b, s)
        if not stuck:
            return M, a, b
        step = _lehmer_round(M, a, b, s)
        M, a, b = _sdiv_step(M, a, b, s) if step is None else step


def _lehmer_round(M, a: mpz, b: mpz, s: int):
    """The Euclid steps that one :func:`.lehmer.lehmer_word` of the leading bits certifies,
    applied at once: ``(M', a', b')`` in :func:`_hgcd`'s form (``(a; b) = P (a'; b')``,
    ``M' = M P``), or None when the word decides no step or the last remainder would
    not stay above ``2^s``. Every step then has a remainder above ``2^s``, where the
    semi-quotient of :func:`_sdiv_step` is the Euclidean quotient: the same steps it
    would take one by one."""
    swap = a < b
    big, small = (b, a) if swap else (a, b)
    shift = max(_bits(big) - WORD, 0)
    c00, c01, c10, c11, t = lehmer_word(int(big >> shift), int(small >> shift))
    if t == 0:
        return None
    first, second = c00 * big + c01 * small, c10 * big + c11 * small
    if _bits(second) <= s:
        return None
    # (big; small) = C^-1 (first; second), det C = (-1)^t; after an odd number of steps
    # the larger number sits in the smaller one's place
    if t % 2:
        first, second = second, first
        inv = (c01, -c11, -c00, c10)
    else:
        inv = (c11, -c01, -c10, c00)
    if swap:
        return _mmul(M, (inv[3], inv[2], inv[1], inv[0])), second, first
    return _mmul(M, inv), first, second


def _sdiv_step(M, a: mpz, b: mpz, s: int):
    """One reduction step keeping both numbers above 2^s: the largest q with
    ``big - q small >= 2^s`` (one less than the Euclidean quotient when needed)."""
    if a > b:
        q, r = f_divmod(a, b)
        if _bits(r) <= s:
            q -= 1
            r += b
        return (M[0], M[1] + q * M[0], M[2], M[3] + q * M[2]), r, b
    q, r = f_divmod(b, a)
    if _bits(r) <= s:
        q -= 1
        r += a
    return (M[0] + q * M[1], M[1], M[2] + q * M[3], M[3]), a, r


def _apply_inv(M, a: mpz, b: mpz, helper: Helpers | None = None) -> tuple[mpz, mpz]:
    """``M^-1 (a; b)`` for a determinant-1 matrix."""
    m00, m01, m10, m11 = M
    if helper is None:
        return m11 * a - m01 * b, m00 * b - m10 * a
    lo_a, lo_b = helper.share([lambda: m11 * a - m01 * b, lambda: m00 * b - m10 * a])
    return lo_a, lo_b


def _apply_top(M, a_top: mpz, b_top: mpz, a: mpz, b: mpz, shift: int,
               helper: Helpers | None = None) -> tuple[mpz, mpz]:
    """``M^-1 (a; b)`` where ``M^-1 (a >> shift; b >> shift) = (a_top; b_top)`` is known
    (the recursive call's reduced pair): only the low ``shift`` bits are multiplied, a
    product of the matrix's size by ``shift`` bits instead of by all of a and b."""
    lo_a, lo_b = _apply_inv(M, f_mod_2exp(a, shift), f_mod_2exp(b, shift), helper)
    return (a_top << shift) + lo_a, (b_top << shift) + lo_b


def _mmul(M, N, helper: Helpers | None = None):
    if helper is None:
        return (M[0] * N[0] + M[1] * N[2], M[0] * N[1] + M[1] * N[3],
                M[2] * N[0] + M[3] * N[2], M[2] * N[1] + M[3] * N[3])
    return tuple(helper.share([lambda: M[0] * N[0] + M[1] * N[2],
                               lambda: M[0] * N[1] + M[1] * N[3],
                               lambda: M[2] * N[0] + M[3] * N[2],
                               lambda: M[2] * N[1] + M[3] * N[3]]))


def rational_reconstruct_bounded(x: int, m: int, num_bound: int, den_bound: int) -> mpq | None:
    """The fraction ``a/b = x mod m`` with ``|a| <= num_bound``, ``0 < b <= den_bound``.

    Unique when ``2 num_bound den_bound < m``; classical Euclid (:func:`_bounded_pair`),
    cheap when ``num_bound`` is close to m or ``den_bound`` is small.
    """
    return _as_fraction(_bounded_pair(mpz(x), mpz(m), mpz(num_bound), mpz(den_bound)))


def _bounded_pair(x: mpz, m: mpz, num_bound: mpz, den_bound: mpz) -> tuple[mpz, mpz] | None:
    """The pair ``(a, b)``, ``b > 0``, at the first remainder ``<= num_bound`` of the
    Euclidean sequence of ``(m, x)``, where its cofactor ``|b| <= den_bound``; else None.
    The cofactors only grow along the sequence, so it stops as soon as one passes
    ``den_bound``: about ``log2 den_bound`` steps at most, each a division of numbers of
    the full size (an x that is ``a / b`` with a small b has one huge quotient, where
    the remainder falls to a's size)."""
    x %= m
    r0, t0, r1, t1 = m, mpz(0), x, mpz(1)
    while r1 > num_bound:
        if abs(t1) > den_bound:
            return None
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    if t1 == 0 or abs(t1) > den_bound:
        return None
    return (r1, t1) if t1 > 0 else (-r1, -t1)


def rational_reconstruct(x: int, m: int) -> mpq | None:
    """The fraction ``a/b = x mod m`` with ``|a|, 0 < b <= sqrt(m/2)``, else None (fast).

    Same answer as :func:`rational_reconstruct_simple`, in O(M(n) log n): a half-gcd
    (:func:`_hgcd`) takes ``(m, x)`` down to about half its bits, which is where
    Wang's stop ``sqrt(m/2)`` lies; a few classical steps finish. The cofactors of x are
    read off the half-gcd matrix: ``a' = m11 m - m01 x`` and ``b' = m00 x - m10 m``.
    """
    return _as_fraction(_wang_pair(x, m))


def _wang_pair(x: int, m: int, helper: Helpers | None = None) -> tuple[mpz, mpz] | None:
    """The pair ``(a, b)``, ``b > 0``, at Wang's stop of the Euclidean sequence of
    ``(m, x)`` (:func:`rational_reconstruct` before its check ``gcd(a, b) = 1``); the
    half-gcd's large products shared with ``helper``'s threads (:func:`_hgcd`)."""
    m = mpz(m)
    if m < 2:
        return None
    x = mpz(x) % m
    bound = isqrt(m // 2)
    if x <= bound or _bits(m) <= 2 * _HGCD_CUTOFF:
        return _finish_rr(m, mpz(0), x, mpz(1), bound)
    M, a, b = _hgcd(m, x, helper)
    # (a, b) = M^-1 (m, x): a = m11 m - m01 x, b = m00 x - m10 m; x-cofactors -m01, m00
    ta, tb = -M[1], M[0]
    if a < b:
        a, b, ta, tb = b, a, tb, ta
    if b <= bound:
        # cannot happen (b > 2^s > bound), kept for safety: fall back to plain steps
        return _finish_rr(m, mpz(0), x, mpz(1), bound)
    return _finish_rr(a, ta, b, tb, bound)


# ----------------------------------------------------------------------------------
# Early termination: reconstruct at growing sizes, confirm with held-out primes
# ----------------------------------------------------------------------------------

#: Attempts from this many bits of modulus on use :attr:`ReconstructionStream.threads`
#: (below, a thread's start costs more than it saves).
THREAD_BITS = 1 << 22


@dataclass(frozen=True)
class Candidate:
    """What one attempt found: the fractions (None if it failed) and how many wrong
    candidates the held-out primes or the sum refused."""

    values: list[mpq] | None
    rejected: int
    seconds: float
    #: of which the Chinese remaindering
    crt_seconds: float = 0.0
    #: found over the stream's denominator multiple M, without rational reconstruction
    via_multiple: bool = False
    #: ``log2`` of the modulus the attempt was made at (held-out primes included)
    bits: int = 0
    #: of which the CRT's groups (below its top levels: what a cluster's workers take)
    groups_seconds: float = 0.0
    #: of which the first seat's rational reconstruction (after its column's CRT)
    rr_seconds: float = 0.0
    #: of which the confirmed seats' lowest terms
    terms_seconds: float = 0.0


@dataclass
class ReconstructionStream:
    """Reconstruct ``count`` rationals in [0, 1] from residues streamed batch by batch.

    Feed ``add(primes, residues, valid, source)``; it returns True once every value is
    reconstructed *and confirmed*, then ``values`` holds them.

    The residues are held flat: per batch one uint64 array of its valid primes and one
    ``(primes, count)`` array of residues, ``8 (count + 1)`` bytes a prime (48 for five
    seats), and ``source`` (where the batch can be read again, for a mapper that runs
    the groups of an attempt elsewhere). Where the mapper reads them from there,
    :meth:`let_go_of_residues` keeps only the primes and the last batches' residues.

    Attempts come when the bits collected reach ``next_bits``: at ``first_bits``, then
    four times as many each time while below ``near`` of ``expected_bits`` (the size the
    plan expects, 0 if unknown), then at that mark, then ``ratio`` times more each time:
    a few cheap small attempts and a few near the answer, instead of dozens of costly
    ones on the way. :meth:`add` attempts in line; a driver that wants the attempts
    beside its loop asks :meth:`due`, takes a :meth:`snapshot`, runs :meth:`try_snapshot`
    where it likes and hands the :class:`Candidate` to :meth:`record`. Each attempt:

    1. the last ``holdout`` valid primes are kept aside; the others are combined by
       :func:`~ladders.solver.engines.series.subproducts.crt_grouped` (groups of
       batches; their lower trees through ``mapper``) into ``x_j mod M``, for every
       column but a race's last seat (:attr:`derives_last`: ``N_k = D - sum N_j``, one
       column of the CRT fewer; 20 % of it at five players);
    2. value 0 is rationally reconstructed (Wang's pair, :func:`_wang_pair`, without
       the gcd check of :func:`rational_reconstruct`: see :meth:`_reconstruct`) giving a
       denominator ``D``; every other value first tries ``N_j = x_j D mod M`` with
       ``0 <= N_j <= D`` (a probability with a denominator dividing D), else ``D``
       grown by a small factor (:meth:`_grow`), else its own reconstruction (``D``
       becomes the lcm);
    3. the candidate must satisfy ``N_j = x_j(q) D (mod q)`` at every held-out prime q
       (the derived seat included, so its own residues confirm it) and, for seats of a
       race, sum to exactly 1 (so the derived seat must not be negative).

    With ``multiple``, the last of the ``count`` columns is not a value but the residue
    of a positive integer that every value's denominator divides (three players:
    :func:`~.algebra.multiple_exponent`). Once the modulus passes it by 64 bits, its
    remainder is that integer itself, ``D``, and ``N_j = x_j D mod M`` are the
    numerators, all in ``[0, D]``: no rational reconstruction, so about half the primes
    (one fraction's size instead of a numerator's and a denominator's). The held-out
    primes check D too. Where D is not yet small against the modulus, or some
    ``N_j`` is out of range (a denominator beyond D), step 2 runs as above.

    Error probability: a wrong candidate differs from the truth by a nonzero integer
    ``Delta = N_j b - a D`` with ``|Delta| < 2^B``, ``B ~ log2 M + log2(true num*den)``;
    at most ``B/61`` primes of ``[2^61, 2^62)`` divide it, out of the ``pool`` the primes
    are drawn from (~5.3e16 for :func:`random_primes`, :func:`ntt_pool` for
    :func:`ntt_primes`), so a random held-out prime passes it with probability
    ``< B / (61 pool)`` and ``h`` of them with ``< (B / (61 pool))^h``
    (:meth:`error_bound`). Every wrong candidate seen is counted in ``rejected``.
    """

    count: int
    holdout: int = 2
    ratio: float = 1.12
    first_bits: int = 1024
    must_sum_to_one: bool = False
    pool: float = 5.3e16
    expected_bits: int = 0
    near: float = 0.85
    #: the last column is the residue of a multiple of every value's denominator
    multiple: bool = False
    #: groups of an attempt's CRT: the lower trees go through ``mapper`` in about this many
    groups: int = 64
    mapper: Mapper = local_mapper
    #: where the CRT's remainders stop, the groups going on by themselves (None: down to
    #: the groups; a cluster run sets it before each attempt from its workers,
    #: ``subproducts.hand_over``)
    stop_at: int | None = None
    #: threads of this process for an attempt of :data:`THREAD_BITS` or more: the CRT's
    #: levels above the groups, its columns, and the seats over the first one's
    #: denominator, beside the first seat's half-gcd (gmpy2's products let go of the
    #: interpreter lock)
    threads: int = 1
    skipped: list[int] = field(default_factory=list)
    values: list[mpq] | None = None
    attempts: int = 0
    rejected: int = 0
    attempt_seconds: float = 0.0
    next_bits: int = 0
    #: the values were found over the denominator multiple
    via_multiple: bool = False
    #: ``(bits, seconds)`` of every attempt so far
    attempt_log: list[tuple[int, float]] = field(default_factory=list)
    #: every batch's residues are held here (False once :meth:`let_go_of_residues`)
    holds_residues: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        self.next_bits = self.first_bits
        self._chunks: list[tuple[np.ndarray, np.ndarray | None, Any]] = []
        #: each batch's product of primes, by the id of its primes' array (the batches'
        #: arrays stay for the stream's life): the groups' products of an attempt come
        #: from these, taken as the batches arrived, instead of from every prime after
        #: the last one (about 11 s of five players' tail)
        self._products: dict[int, mpz] = {}
        self._count = 0
        self._deferring = False
        self._log2 = 0.0

    def error_bound(self) -> float:
        """An upper bound on the probability that a wrong fraction passed the held-out
        primes in any attempt so far (B taken as twice the bits collected)."""
        bits = max(self.bits, 64) * 2
        per_attempt = (bits / (61 * self.pool)) ** self.holdout
        return min(1.0, max(self.attempts, 1) * per_attempt)

    @property
    def bits(self) -> int:
        """``log2`` of the product of the primes collected (held-out ones included),
        rounded down: the size of the modulus, which is what reconstruction needs (a
        prime of ``[2^61, 2^62)`` adds about 61.5 bits, not its 62 digits)."""
        return int(self._log2)

    @property
    def prime_count(self) -> int:
        """Valid primes collected (held-out ones included)."""
        return self._count

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Add batches without attempting, then attempt once at the size reached: a
        resumed run replays hundreds of stored batches, and the attempts at the sizes
        the first driver passed (failed ones, or it would have finished) cost minutes at
        millions of digits."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
        if self.due():
            self.record(self.try_snapshot(self.snapshot()))

    def add(self, primes: Sequence[int] | np.ndarray, residues: np.ndarray,
            valid: np.ndarray | None = None, source: Any = None, attempt: bool = True) -> bool:
        """Add a batch; attempt a reconstruction in line if ``attempt`` and enough bits
        arrived. True when done."""
        if self.values is not None:
            return True
        primes = np.asarray(primes, dtype=np.uint64).reshape(-1)
        residues = np.asarray(residues, dtype=np.uint64).reshape(len(primes), self.count)
        if valid is not None:
            keep = np.asarray(valid, dtype=bool).reshape(-1)
            self.skipped.extend(int(q) for q in primes[~keep])
            primes, residues = primes[keep], residues[keep]
        if len(primes):
            self._products[id(primes)] = group_product(primes)
            self._chunks.append((primes, np.ascontiguousarray(residues), source))
            self._count += len(primes)
            self._log2 += float(np.log2(primes.astype(np.float64)).sum())
            if not self.holds_residues:
                self._trim()
        if not attempt or self._deferring:
            return False
        if self.due():
            self.record(self.try_snapshot(self.snapshot()))
        return self.values is not None

    def let_go_of_residues(self) -> None:
        """Keep from now on only the residues of the last batches, enough for the
        held-out primes, and of batches without a ``source``: for a ``mapper`` that
        reads each group's residues from where its source says (a cluster's workers
        from the store), so that this process holds 8 bytes a prime instead of ``8
        (count + 1)``: about 9 GB less at six players. The batches' arrays that a
        snapshot already took stay with it."""
        if self.mapper is local_mapper:
            raise ValueError("the stream's own mapper needs every residue: give it one that "
                             "reads the groups from their source first")
        self.holds_residues = False
        self._trim()

    def _trim(self) -> None:
        """Let go of the residues of every batch with a source before the last ones
        that hold :attr:`holdout` primes (newest first: the first batch found without
        them ends the walk, the older ones having gone before)."""
        rows = 0
        for i in range(len(self._chunks) - 1, -1, -1):
            primes, residues, source = self._chunks[i]
            if rows >= self.holdout and source is not None:
                if residues is None:
                    break
                self._chunks[i] = (primes, None, source)
            rows += len(primes)

    def due(self) -> bool:
        """Whether an attempt is due: enough bits since the last one, and primes beyond
        the held-out ones."""
        return (self.values is None and self.bits >= self.next_bits
                and self._count > self.holdout)

    def snapshot(self) -> list[tuple[np.ndarray, np.ndarray, Any]]:
        """The batches so far (their arrays are never changed): what an attempt beside
        the loop works from while batches keep arriving."""
        return list(self._chunks)

    def record(self, candidate: Candidate) -> None:
        """Take an attempt's outcome: the values, or the next size to try."""
        self.attempts += 1
        self.rejected += candidate.rejected
        self.attempt_seconds += candidate.seconds
        self.attempt_log.append((candidate.bits, candidate.seconds))
        if candidate.values is not None:
            self.values = candidate.values
            self.via_multiple = candidate.via_multiple
        else:
            self.next_bits = self._next_target()

    def final_bits(self) -> int:
        """The size of the attempt expected to succeed: the next one, or the size the
        plan expects where that is further."""
        return max(self.next_bits, int(self.near * self.expected_bits))

    def attempt_seconds_at(self, bits: int) -> float | None:
        """An attempt's seconds at ``bits``, from the largest one made so far, where it
        was at least a sixteenth of that size (the small ones are mostly fixed costs):
        the CRT and the half-gcd cost ``O(n log^2 n)``, so its seconds times ``(bits /
        b) (log2 bits / log2 b)^2``; None before such an attempt."""
        made = [(b, t) for b, t in self.attempt_log if 16 * b >= bits and b >= 1024]
        if not made:
            return None
        b, t = max(made)
        return t * (bits / b) * (math.log2(max(bits, 2)) / math.log2(b)) ** 2

    def _next_target(self) -> int:
        b = self.bits
        near = int(self.near * self.expected_bits)
        if b < near:
            return min(max(4 * b, b + 64), near)
        return max(int(b * self.ratio), b + 64)

    @property
    def derives_last(self) -> bool:
        """Whether the last seat is found as one minus the others (a race of two seats or
        more): its column is not combined, and its residues are checked at the held-out
        primes only. A wrong residue of that column at another prime then changes
        nothing, where before it failed the sum."""
        return self.must_sum_to_one and self.count - self.multiple >= 2

    def kept(self) -> tuple[int, ...] | None:
        """The columns an attempt combines (None: every one): all but the last seat's
        where :attr:`derives_last`."""
        if not self.derives_last:
            return None
        last = self.count - self.multiple - 1
        return tuple(j for j in range(self.count) if j != last)

    def _groups(self, chunks: list[tuple[np.ndarray, np.ndarray, Any]],
                build: int) -> list[Group]:
        """The first ``build`` primes in about :attr:`groups` runs of whole batches
        (the last cut at ``build``); each group's ``source`` lists ``(source, rows)``,
        its ``keep`` the columns to combine (:meth:`kept`), and its ``products`` the
        products of its whole batches."""
        keep = self.kept()
        if keep is None and not self.holds_residues:    # (the widths are not at hand)
            keep = tuple(range(self.count))
        target = max(1, -(-build // self.groups))
        groups: list[Group] = []
        parts: list[tuple[np.ndarray, np.ndarray | None, Any, mpz | None]] = []
        size = taken = 0
        for primes, residues, source in chunks:
            rows = min(len(primes), build - taken)
            if rows <= 0:
                break
            parts.append((primes[:rows], None if residues is None else residues[:rows],
                           (source, rows),
                           self._products.get(id(primes)) if rows == len(primes) else None))
            size += rows
            taken += rows
            if size >= target or taken == build:
                groups.append(Group(tuple((p, r) for p, r, _, _ in parts),
                                    tuple(s for _, _, s, _ in parts), keep,
                                    tuple(k for _, _, _, k in parts)))
                parts, size = [], 0
        return groups

    def try_snapshot(self, chunks: list[tuple[np.ndarray, np.ndarray, Any]]) -> Candidate:
        """One attempt at the batches of a :meth:`snapshot` (changes nothing here).
        The checks run on the integers ``N_j`` over the common ``D`` (no gcd of numbers
        of millions of digits); only a confirmed candidate is reduced to lowest terms,
        the seats at once (:func:`~ladders.solver.exact.lowest_terms`: a gcd for each of
        the attempt's threads where they share the denominator, instead of one for each
        seat's ``mpq``; seat 0 needs none where it is Wang's pair: :meth:`_reconstruct`)."""
        t0 = time.perf_counter()
        total = sum(len(p) for p, _, _ in chunks)
        build = total - self.holdout
        threads = self.threads if self.threads > 1 and build * 61 >= THREAD_BITS else 1
        with contextlib.ExitStack() as stack:
            pool = helpers = None
            if threads > 1:
                stack.enter_context(releasing_gil())
                pool = stack.enter_context(ThreadPoolExecutor(
                    threads, thread_name_prefix="ladders-crt", initializer=release_gil))
                helpers = Helpers(stack.enter_context(ThreadPoolExecutor(
                    threads - 1, thread_name_prefix="ladders-hgcd", initializer=release_gil)),
                    threads - 1)
            return self._attempt(chunks, build, t0, pool, helpers)

    def _attempt(self, chunks: list[tuple[np.ndarray, np.ndarray, Any]], build: int, t0: float,
                 pool: Executor | None, helpers: Helpers | None = None) -> Candidate:
        """:meth:`try_snapshot`'s work, its threads (if any) in ``pool``, the first
        seat's half-gcd sharing its products with ``helpers``."""
        spent: list[float] = []

        def timed(groups: Sequence[Group], tops: Sequence[mpz]) -> list[list[mpz]]:
            ta = time.perf_counter()
            parts = self.mapper(groups, tops)
            spent.append(time.perf_counter() - ta)
            return parts

        columns, m = crt_columns(self._groups(chunks, build), timed, pool, self.stop_at)
        finished: list[float] = []
        for column in columns:
            column.add_done_callback(lambda _: finished.append(time.perf_counter()))
        held: list[tuple[int, list[int]]] = []
        for p, res, _ in reversed(chunks):
            if len(held) >= self.holdout:
                break
            held[:0] = zip(p.tolist(), res.tolist())
        held = held[len(held) - self.holdout:]
        seats = self.count - self.multiple
        found, rejected, rr_seconds = self._over_multiple(columns, m), 0, 0.0
        via = found is not None
        if not via:
            found, rejected, rr_seconds = self._reconstruct(
                columns[:seats - self.derives_last], m, held, pool, helpers)
        if found is not None and self.derives_last:
            found[0].append(found[1] - sum(found[0]))   # the last seat: D - sum N_j
        for column in columns:          # the CRT's seconds: until its last column
            column.result()
        # (a column's callback runs just after its result is given: one not run yet
        # finished now)
        t1 = max(finished) if len(finished) == len(columns) else time.perf_counter()
        values, terms_seconds = None, 0.0
        if found is not None:
            nums, den, first = found
            wrong = any((nums[j] - r[j] * (den % q)) % q for q, r in held for j in range(seats))
            wrong = wrong or (self.derives_last and nums[-1] < 0)   # the others past D
            if via:                     # the multiple itself at the held-out primes
                wrong = wrong or any((den - r[seats]) % q for q, r in held)
            if wrong or (self.must_sum_to_one and sum(nums) != den):
                rejected = 1
            else:
                t2 = time.perf_counter()
                # seat 0's own pair is in lowest terms where it is Wang's (of a right
                # value: _reconstruct); the others are proven so, in parts side by side
                terms = lowest_terms(nums[first is not None:], den, sample=0, pool=pool,
                                     ways=self.threads if pool is not None else 1)
                values = [coprime_mpq(n, d) for n, d in zip(*terms)]
                if first is not None:
                    values.insert(0, coprime_mpq(*first) if first[0] else mpq(0))
                terms_seconds = time.perf_counter() - t2
        bits = int(sum(float(np.log2(p.astype(np.float64)).sum()) for p, _, _ in chunks))
        return Candidate(values, rejected, time.perf_counter() - t0, t1 - t0,
                         via and values is not None, bits, sum(spent), rr_seconds, terms_seconds)

    def _over_multiple(self, columns: list[Future[mpz]], m: mpz
                       ) -> tuple[list[mpz], mpz, None] | None:
        """``(N_j, D, None)`` over the denominator multiple ``D`` (the last column), once
        its remainder is 64 bits below the modulus and every ``N_j = x_j D mod m`` lies in
        ``[0, D]``; else None."""
        if not self.multiple:
            return None
        xs = [c.result() for c in columns]
        big = xs[-1]
        if big <= 0 or big.bit_length() + 64 > m.bit_length():
            return None
        nums = [(x * big) % m for x in xs[:-1]]
        return (nums, big, None) if all(nj <= big for nj in nums) else None

    def _reconstruct(self, columns: list[Future[mpz]], m: mpz, held: list[tuple[int, list[int]]],
                     pool: Executor | None = None, helpers: Helpers | None = None
                     ) -> tuple[tuple[list[mpz], mpz, tuple[mpz, mpz]] | None, int, float]:
        """``(N_j, D, (a, b))``: value 0 by rational reconstruction (while ``pool`` sums the other
        columns; its half-gcd's products shared with ``helpers``), checked at the held-out
        primes at once (a modulus too small gives a fraction there, wrong: the other
        values would each need a reconstruction of their own to show it); the others
        through its denominator, side by side in ``pool``.
        Also the number of candidates refused (0 or 1) and the seconds of value 0's
        reconstruction.

        Value 0 is Wang's pair ``(a, b)`` itself (:func:`_wang_pair`), without the check
        ``gcd(a, b) = 1`` and the ``mpq`` of :func:`rational_reconstruct`: two gcds of
        the full size (about 80 s each at 300 million bits here). Neither is what makes a
        candidate right: the held-out primes and the sum are, and they hold for any
        integers ``N_j, D``. A candidate that passes them is then reduced, every other
        seat at once (:func:`~ladders.solver.exact.lowest_terms`). Value 0's pair has no
        common factor where the candidate is right: if ``a/b`` is the value and
        ``a'/b'`` its lowest terms, ``(a', b')`` lies within Wang's
        bounds too, and the pair at his stop is unique up to a factor ``alpha`` with
        ``(a', b') = alpha (a, b)`` (von zur Gathen and Gerhard, *Modern Computer
        Algebra*, Theorem 5.26), so ``alpha = +-1``. So value 0 is ``a/b`` as it stands
        (the third item; ``N_0 = a D / b`` where D grew), and only the other seats are
        reduced: at five players' full size a product of 300 million bits less.
        """
        x0 = columns[0].result()
        t0 = time.perf_counter()
        pair = _wang_pair(x0, m, helpers)
        seconds = time.perf_counter() - t0
        if pair is None:
            return None, 0, seconds
        a, den = pair
        # a value lies in [0, 1]
        if not 0 <= a <= den or any((a - r[0] * den) % q for q, r in held):
            return None, 1, seconds
        xs = [c.result() for c in columns[1:]]
        over = each_in(pool, lambda x: (x * den) % m, xs)
        nums: list[mpz] = [a]
        grown_by = mpz(1)
        for x, nj in zip(xs, over):
            if grown_by != 1:           # a seat before grew the denominator by grown_by:
                nj = nj * grown_by % m  # x (den grown_by) mod m, a small product
            if nj > den:
                grown = self._grow(x, nj, den, m)
                if grown is None:
                    return None, 0, seconds
                nj, factor = grown
                nums = [v * factor for v in nums]
                den *= factor
                grown_by *= factor
            nums.append(nj)
        return (nums, den, pair), 0, seconds

    @staticmethod
    def _grow(x: mpz, nj: mpz, den: mpz, m: mpz) -> tuple[mpz, mpz] | None:
        """A seat ``x`` whose denominator does not divide ``den`` (``nj = x den mod m``
        is no numerator over it): ``(N, h)`` with ``x = N / (h den)`` over the common
        denominator grown h times, or None.

        Where seats' denominators differ, a small factor is the likely difference (the
        5-player benchmark's first seat reduces by ``gcd(n_1, D) = 2``), so first ``nj = N / h``
        with ``h < 2^32`` by a few Euclidean steps (:func:`_bounded_pair`: unique since
        ``2 (h den) h < m``); else the seat's own reconstruction and the lcm, which at 5
        players' full size costs as much as the first seat's (a half-gcd, about 200 s
        here, and its two gcds)."""
        spare = (m.bit_length() - den.bit_length() - 2) // 2
        if spare >= 1:
            h_bound = mpz(1) << min(32, spare)
            pair = _bounded_pair(nj, m, den * h_bound, h_bound)
            if pair is not None and 0 <= pair[0] <= den * pair[1]:
                return pair
        val = rational_reconstruct(x, m)
        if val is None:
            return None
        factor = val.denominator // gcd(den, val.denominator)
        return val.numerator * (den * factor // val.denominator), factor
