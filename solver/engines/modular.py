"""The modular exact engine: Dixon p-adic lifting, rational reconstruction, a certificate.

For ``A x = b`` with small integer ``A`` (every system of :mod:`ladders.solver.games.race`):

1. **One factorization.** ``A' = L U (mod p)`` for a random prime ``p < 2^28`` and a
   pivot order with the target last (:mod:`ladders.solver.engines.modp`). On ``hasbro`` the published
   right-to-left order has 0.63 million nonzeros in ``L + U``; SciPy's SuperLU needs
   1.1 million with a fill-reducing order, and the natural order 2.0 million.
2. **Lifting.** ``r_0 = b``; ``y_s = A^-1 r_s (mod p)``; ``r_{s+1} = (r_s - A y_s) / p``.
   Then ``A (sum_{s<k} y_s p^s) = b - p^k r_k`` exactly, so ``X = sum y_s p^s`` is the
   solution modulo ``M = p^k``. Every step is word-size: one triangular solve mod p and
   one sparse product with the small ``A``; ``r_s`` stays below the row sums of ``|A|``.
3. **Rational reconstruction with early termination.** Every ``chunk`` steps the
   target's ``X`` is turned into the fraction ``u/D`` with ``u = D X (mod M)`` and
   ``|u|, D < sqrt(M/2)`` (Wang's half extended Euclid). The fraction is unique when
   ``2 |u| D < M``; one found with ``MARGIN_BITS`` bits to spare, together with random
   combinations of the unknowns (:func:`combination_weights`), gives a *candidate*
   common denominator D. That is a heuristic stop, never an answer: step 4 decides.
4. **Certificate.** If D is a common denominator, ``N = D x`` is an integer vector with
   ``A N = D b``. Lifting that system with digits in ``(-p/2, p/2]`` ends with a residual
   of exactly zero after about ``log_p |N|`` steps (the right-hand side ``D b`` is kept
   as base-p digits, so each step is still word-size); if D is wrong, the residual never
   vanishes and the candidate is rejected, then widened (:meth:`Lifter.settle`). The
   digits of N are then checked once more, independently, as ``A N - D b = 0`` in exact
   integer arithmetic (base-p digits with carries,
   :func:`ladders.solver.engines.modp.residual_is_zero`). ``A`` is nonsingular (its pivots mod
   p are nonzero), so a certified ``N / D`` is *the* solution, whatever the heuristics
   of step 3 did. A target whose denominator is not common to every unknown makes D
   grow to the lcm of all the unknowns' denominators.

Only the target's numerator is turned into a binary integer for the answer; the whole
solution vector (the two-player table P(a, b)) is converted on request, by
:func:`digits_to_integers`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ladders.solver.exact import bits_to_digits, gcd, isqrt, mpq, mpz, next_prime
from ladders.solver.engines.modp import (MAX_PRIME, FactorizationStopped, LUFactors, _lift,
                                         _lift_integer, factor_permuted, permute_csr,
                                         residual_is_zero)
from ladders.solver.system import pivot_order
from ladders.solver.system import LinearSystem

#: Spare bits a reconstructed fraction must leave below the modulus to stop lifting.
MARGIN_BITS = 64
#: Lifting steps between two reconstruction attempts (one attempt costs about as much
#: as ten steps on ``hasbro``).
CHUNK = 64
#: Primes tried before giving up (a prime fails only if it divides a pivot).
MAX_PRIME_TRIES = 20
#: Random combinations reconstructed beside the target to find the common denominator.
COMBINATIONS = 6
#: Steps the certificate's lifting may take beyond the digits of ``D b``: covers
#: ``log_p max|x_j|`` and the last carries.
EXTRA_STEPS = 16


@dataclass
class CertifiedColumn:
    """``x = N / D`` for one right-hand side, with ``A N = D b`` checked exactly.

    ``digits[s, pos]`` are the base-p digits (in ``(-p/2, p/2]``) of ``N`` at position
    ``pos`` of the pivot order ``order``.
    """

    denominator: mpz
    target_numerator: mpz
    digits: np.ndarray
    order: np.ndarray
    prime: int
    lifting_steps: int
    certificate_steps: int

    @property
    def value(self) -> mpq:
        """The target unknown, in lowest terms."""
        return mpq(self.target_numerator, self.denominator)

    @cached_property
    def numerators(self) -> list[mpz]:
        """Every unknown's numerator over :attr:`denominator`, in the system's indexing."""
        perm = digits_to_integers(self.digits, self.prime)
        out = [mpz(0)] * len(perm)
        for pos, i in enumerate(self.order.tolist()):
            out[i] = perm[pos]
        return out

    def solution(self) -> list[mpq]:
        """Every unknown as a fraction in lowest terms."""
        return [mpq(v, self.denominator) for v in self.numerators]


@dataclass
class DixonResult:
    """A certified solution of ``A x = b`` for every right-hand side."""

    columns: list[CertifiedColumn]
    prime: int
    lu_nonzeros: int
    rejected: int  # candidates from step 3 that the certificate refused
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def values(self) -> list[mpq]:
        """``x_k[target]`` for every right-hand side k."""
        return [c.value for c in self.columns]


def random_lifting_prime(rng: random.Random) -> int:
    """A random prime in ``(MAX_PRIME - 2^24, MAX_PRIME]``: 27.9 bits of the answer per step,
    drawn from about 900,000 primes."""
    while True:
        p = int(next_prime(rng.randrange(MAX_PRIME - (1 << 24), MAX_PRIME)))
        if p <= MAX_PRIME:
            return p


def factor_with_random_prime(permuted: tuple[np.ndarray, np.ndarray, np.ndarray],
                             order: np.ndarray, rng: random.Random,
                             should_stop: Callable[[], bool] | None = None,
                             progress: Callable[[int, int], None] | None = None) -> LUFactors:
    """LU of a system permuted by ``order`` (:func:`~ladders.solver.engines.modp.permute_csr`) modulo a
    random prime; a prime that divides a pivot is replaced. ``should_stop`` and
    ``progress``: see :func:`~ladders.solver.engines.modp.factor_permuted`."""
    for _ in range(MAX_PRIME_TRIES):
        p = random_lifting_prime(rng)
        try:
            return factor_permuted(permuted, order, p, should_stop, progress)
        except ZeroDivisionError:
            continue
    raise ArithmeticError(f"{MAX_PRIME_TRIES} random primes all divide a pivot: is the system singular?")


def rational_reconstruction(u: mpz, m: mpz) -> tuple[mpz, mpz] | None:
    """``(a, b)`` with ``a = b u (mod m)``, ``|a|, 0 < b <= sqrt(m/2)``, ``gcd(a, b) = 1``, or None.

    Wang's algorithm: the extended Euclidean algorithm on ``(m, u)`` stopped at the first
    remainder below ``sqrt(m/2)``.
    """
    bound = isqrt(m // 2)
    r0, r1 = mpz(m), mpz(u) % m
    t0, t1 = mpz(0), mpz(1)
    while r1 > bound:
        q, r = divmod(r0, r1)
        r0, r1 = r1, r
        t0, t1 = t1, t0 - q * t1
    if t1 == 0 or abs(t1) > bound or gcd(r1, t1) != 1:
        return None
    return (r1, t1) if t1 > 0 else (-r1, -t1)


def padic_to_integers(digits: np.ndarray, p: int) -> list[mpz]:
    """``X_j = sum_s digits[s, j] p^s`` for every column j (digits in ``[0, p)``).

    Kronecker substitution: the digits of one step, for all n unknowns, are packed as
    little-endian slots of ``w`` bytes into one integer, so adding ``Y_lo + p^m Y_hi``
    updates every unknown at once; no slot overflows because each slot is widened to
    hold ``p^(2m)`` before the pair is combined. Once few blocks are left, the packed
    integers are huge and widening them costs more than finishing each unknown alone.
    """
    k, n = digits.shape
    if k == 0:
        return [mpz(0)] * n
    if k % 2:
        digits = np.vstack([digits, np.zeros((1, n), dtype=digits.dtype)])
    d = digits.astype(np.uint64)
    pairs = d[0::2] + np.uint64(p) * d[1::2]  # < p^2 < 2^56: exact in uint64
    width = 8
    blocks = [mpz.from_bytes(row.astype("<u8").tobytes(), "little") for row in pairs]
    base = mpz(p) ** 2  # every block's slots hold values < base
    while len(blocks) > 4:
        wide = ((base * base).bit_length() + 7) // 8
        nxt = []
        for t in range(0, len(blocks) - 1, 2):
            lo = _widen(blocks[t], n, width, wide)
            hi = _widen(blocks[t + 1], n, width, wide)
            nxt.append(lo + hi * base)
        if len(blocks) % 2:
            nxt.append(_widen(blocks[-1], n, width, wide))
        blocks, width, base = nxt, wide, base * base
    slots = [np.frombuffer(b.to_bytes(n * width, "little"), dtype=np.uint8).reshape(n, width)
             for b in blocks]
    out = []
    for j in range(n):
        acc = mpz(0)
        for raw in reversed(slots):
            acc = acc * base + mpz.from_bytes(raw[j].tobytes(), "little")
        out.append(acc)
    return out


def _widen(packed: mpz, n: int, width: int, wide: int) -> mpz:
    """Re-pack n slots of ``width`` bytes into slots of ``wide`` bytes (same values)."""
    raw = np.frombuffer(packed.to_bytes(n * width, "little"), dtype=np.uint8).reshape(n, width)
    out = np.zeros((n, wide), dtype=np.uint8)
    out[:, :width] = raw
    return mpz.from_bytes(out.tobytes(), "little")


def digits_to_integers(digits: np.ndarray, p: int) -> list[mpz]:
    """``N_j = sum_s digits[s, j] p^s`` for every column j, digits of any sign."""
    pos = padic_to_integers(np.maximum(digits, 0), p)
    neg = padic_to_integers(np.maximum(-digits, 0), p)
    return [a - b for a, b in zip(pos, neg)]


def _horner(digits: Sequence[int], p: int) -> mpz:
    """``sum_s digits[s] p^s`` for the digits of one unknown."""
    acc = mpz(0)
    for v in reversed(digits):
        acc = acc * p + v
    return acc


def _base_p_digits(value: mpz, p: int) -> list[int]:
    """Digits of ``value >= 0`` in base p, low digit first."""
    out = []
    while value:
        value, d = divmod(value, p)
        out.append(int(d))
    return out or [0]


@dataclass
class Lifter:
    """A system factored modulo one prime, in pivot-order indexing: the lifting loop and
    the certificate (module docstring, steps 2 and 4)."""

    lu: LUFactors
    a: tuple[np.ndarray, np.ndarray, np.ndarray]
    #: Candidate denominators the certificate refused so far.
    rejected: int = 0

    @classmethod
    def factor(cls, system: LinearSystem, order: Sequence[int], rng: random.Random,
               should_stop: Callable[[], bool] | None = None,
               progress: Callable[[int, int], None] | None = None) -> Lifter:
        """Factor ``system`` in ``order`` (target last) modulo a random prime
        (``FactorizationStopped`` when ``should_stop()`` turns true meanwhile)."""
        if order[-1] != system.target:
            raise ValueError("the pivot order must end with the target unknown")
        order = np.asarray(order, dtype=np.int64)
        permuted = permute_csr(system.indptr, system.indices, system.data, order)
        return cls(factor_with_random_prime(permuted, order, rng, should_stop, progress), permuted)

    def rhs(self, system: LinearSystem, k: int) -> np.ndarray:
        """Right-hand side k in pivot-order indexing."""
        return np.ascontiguousarray(system.rhs[self.lu.order, k], dtype=np.int64)

    def lift(self, r: np.ndarray, steps: int) -> np.ndarray:
        """``steps`` Dixon digits of ``A' x = r`` (``r`` updated in place)."""
        lu = self.lu
        block = np.zeros((steps, len(r)), dtype=np.int64)
        _lift(lu.l_indptr, lu.l_indices, lu.l_data, lu.u_indptr, lu.u_indices, lu.u_data,
              lu.dinv, lu.p, *self.a, r, block)
        return block

    def certify(self, b: np.ndarray, den: mpz, lifting_steps: int = 0) -> CertifiedColumn | None:
        """``x = N / D`` with ``A' N = D b`` checked exactly, or None if ``den`` is not a
        common denominator of the solution (module docstring, step 4)."""
        lu = self.lu
        ddig = np.asarray(_base_p_digits(den, lu.p), dtype=np.int64)
        rhs_digits = np.outer(ddig, b)  # digits of D b_i: b_i times D's digits
        out = np.zeros((len(ddig) + EXTRA_STEPS, len(b)), dtype=np.int64)
        steps = _lift_integer(lu.l_indptr, lu.l_indices, lu.l_data, lu.u_indptr, lu.u_indices,
                              lu.u_data, lu.dinv, lu.p, *self.a, rhs_digits, out)
        if steps < 0 or not residual_is_zero(*self.a, out[:steps], rhs_digits, lu.p):
            self.rejected += 1
            return None
        digits = out[:steps].astype(np.int32)  # |digit| <= p/2 < 2^27: half the memory
        return CertifiedColumn(den, _horner(digits[:, -1].tolist(), lu.p), digits, lu.order,
                               lu.p, lifting_steps, steps)


    def settle(self, b: np.ndarray, den: mpz, tried: set[mpz], steps: int,
               lifting_steps: int) -> CertifiedColumn | None:
        """Certify the candidate ``den`` for right-hand side ``b`` (once: ``tried`` holds
        the candidates seen). A refused candidate missed a factor of some unknown's
        denominator (the random combinations all cancelled it, probability about
        ``2^-COMBINATIONS`` for the factor 2): then, at this call and at every later one
        with the same candidate, ``steps`` digits are lifted again and the lcm of every
        unknown's reconstructed denominator is certified. Without that second chance the
        same refused candidate would come back for ever (a crt run on ``d3-4`` did).
        ``lifting_steps``: what the certified column reports as the lifting done."""
        if den not in tried:
            tried.add(den)
            found = self.certify(b, den, lifting_steps)
            if found is not None:
                return found
        wide = _common_denominator(self.lift(b.copy(), steps), self.lu.p, den)
        if wide is None or wide in tried:
            return None  # too few digits for some unknown yet: the next call has more
        tried.add(wide)
        return self.certify(b, wide, lifting_steps)


def combination_weights(n: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, 1 + COMBINATIONS)`` weights of the linear forms whose denominators give the
    candidate D: the target (last in pivot order) and random combinations
    ``sum_j c_j x_j``. The lcm of their denominators is the common denominator of every
    unknown (on hasbro 6 times the target's own) unless every combination misses the
    same prime factor q, which happens with probability ``q^-COMBINATIONS``."""
    return np.stack([np.eye(1, n, n - 1, dtype=np.int64)[0]]
                    + [rng.integers(1, 1 << 16, size=n) for _ in range(COMBINATIONS)], axis=1)


@dataclass
class LiftState:
    """Where a modular solve stands, enough to resume it after the process died.

    ``columns``: the certified right-hand sides so far. For the current column
    ``column``: lifting ``steps`` done, the residual ``r`` (pivot-order indexing) and the
    running p-adic values of the linear forms ``sums``. The p-adic digits themselves are
    not kept (only the rare fallback of step 4 needs them, and it lifts them again).
    """

    prime: int
    columns: list[CertifiedColumn]
    column: int
    steps: int
    r: np.ndarray
    sums: list[mpz]


class Interrupted(Exception):
    """A modular solve stopped on request; ``state`` resumes it (None: stopped while
    factoring, before any lifting of this solve: nothing new to keep)."""

    def __init__(self, state: LiftState | None) -> None:
        super().__init__("stopped on request")
        self.state = state


def solve_dixon(system: LinearSystem, *, order: Sequence[int] | None = None, seed: int | None = None,
                chunk: int = CHUNK, margin_bits: int = MARGIN_BITS, max_steps: int | None = None,
                progress: Callable[[int, int], None] | None = None,
                state: LiftState | None = None, save: Callable[[LiftState], None] | None = None,
                should_stop: Callable[[], bool] = lambda: False,
                factor_progress: Callable[[int, int], None] | None = None) -> DixonResult:
    """Certified exact solution of ``system`` for every right-hand side (module docstring).

    ``order``: pivot order with the target last (default: the published right-to-left
    label order). ``margin_bits`` is the early-termination margin of step 3 (a negative
    margin accepts every reconstruction as a candidate: for tests of the certificate).
    ``max_steps`` caps the lifting of one right-hand side (ArithmeticError when reached
    without a certificate). ``progress(column, steps)`` reports lifting steps,
    ``factor_progress(rows, total)`` the factorization before them.

    Long solves: ``save(state)`` is called after every chunk of steps, and a solve
    started with the same ``seed`` and a saved ``state`` continues from it. When
    ``should_stop()`` turns true (polled during the factorization too),
    :class:`Interrupted` carries the state to resume from.
    """
    rng = random.Random(seed)
    t0 = time.perf_counter()
    try:
        lifter = Lifter.factor(system, list(order) if order is not None else pivot_order(system, "labels"),
                               rng, should_stop, factor_progress)
    except FactorizationStopped:
        raise Interrupted(state) from None
    p = lifter.lu.p
    if state is not None and state.prime != p:
        raise ValueError(f"the saved state lifts modulo {state.prime}, this solve modulo {p}: "
                         "resume with the seed the solve started with")
    weights = combination_weights(system.size, np.random.default_rng(rng.getrandbits(64)))
    seconds = {"factor": time.perf_counter() - t0, "lift": 0.0, "reconstruct": 0.0, "certify": 0.0}
    columns = list(state.columns) if state is not None else []
    for k in range(len(columns), system.columns):
        b = lifter.rhs(system, k)
        resuming = state is not None and state.column == k
        r = state.r.copy() if resuming else b.copy()
        sums = list(state.sums) if resuming else [mpz(0)] * weights.shape[1]
        done = state.steps if resuming else 0
        modulus = mpz(p) ** done  # p^done, kept up to date below
        step_scale = mpz(p) ** chunk
        tried: set[mpz] = set()
        while True:
            if max_steps is not None and done >= max_steps:
                raise ArithmeticError(f"no certified solution after {done} lifting steps")
            if should_stop():
                raise Interrupted(LiftState(p, columns, k, done, r, sums))
            t = time.perf_counter()
            block = lifter.lift(r, chunk)
            combined = block @ weights  # < 2^28 * 2^16 * n: exact in int64 for n < 2^19
            sums = [acc + _horner(combined[:, w].tolist(), p) * modulus for w, acc in enumerate(sums)]
            done += chunk
            modulus *= step_scale
            seconds["lift"] += time.perf_counter() - t
            if save is not None:
                save(LiftState(p, columns, k, done, r, sums))
            if progress is not None:
                progress(k, done)
            t = time.perf_counter()
            den = candidate_denominator(sums, modulus, margin_bits)
            seconds["reconstruct"] += time.perf_counter() - t
            if den is None:
                continue
            t = time.perf_counter()
            found = lifter.settle(b, den, tried, done, done)
            seconds["certify"] += time.perf_counter() - t
            if found is not None:
                columns.append(found)
                break
    return DixonResult(columns, p, lifter.lu.nnz, lifter.rejected, seconds)


def candidate_denominator(sums: list[mpz], m: mpz, margin_bits: int) -> mpz | None:
    """lcm of the denominators of ``sums`` reconstructed modulo m, or None unless every
    reconstruction leaves ``margin_bits`` spare bits (module docstring, step 3). The
    target comes first: while it fails, the others cost nothing."""
    den = mpz(1)
    for x in sums:
        rr = rational_reconstruction(x, m)
        if rr is None or rr[0].bit_length() + rr[1].bit_length() + margin_bits > m.bit_length():
            return None
        den = den * rr[1] // gcd(den, rr[1])
    return den


def _common_denominator(digits: np.ndarray, p: int, den: mpz) -> mpz | None:
    """lcm of ``den`` and every unknown's reconstructed denominator, or None when some
    unknown has no reconstruction modulo ``p^steps`` yet."""
    m = mpz(p) ** digits.shape[0]
    for x in padic_to_integers(digits, p):
        nj = den * x % m
        if min(nj, m - nj).bit_length() + MARGIN_BITS <= m.bit_length():
            continue  # D x is a small integer (a wrong D leaves residues as large as m)
        rr = rational_reconstruction(x, m)
        if rr is None:
            return None
        den = den * rr[1] // gcd(den, rr[1])
    return den


def certificate_report(columns: list[CertifiedColumn], rejected: int) -> dict[str, Any]:
    """Tier 3 of the lifting engines (modular, crt): what the certificate checked."""
    return {"check": "certificate", "what": "A N = D b exactly in integers (N/D: every unknown)",
            "passed": True, "prime": columns[0].prime,
            "lifting_steps": [c.lifting_steps for c in columns],
            "certificate_steps": [c.certificate_steps for c in columns],
            "denominator_digits": bits_to_digits(columns[0].denominator.bit_length()),
            "rejected_candidates": rejected}
