"""The "series" exact engine: race win probabilities as sums of products of linearly
recurrent sequences, modulo word-size primes, then CRT and rational reconstruction.

Notation (as in :mod:`ladders.solver.games.chain`): one player's chain has n transient states,
``Q = C/d`` (integer counts C, die size d), ``r = e/d`` (e: faces that finish), u the
start. ``f(t) = u Q^(t-1) r`` (the game ends exactly on throw t), ``F(t) = sum_{s<=t}
f(s)``, ``S(t) = 1 - F(t-1) = u Q^(t-1) 1`` (still playing before throw t), and
``T(t) = S(t+1)``. Two players: ``P(a, b)`` = the player to move, on a, wins against the
opponent on b.

k players, seat j (1-based) wins on throw t if it finishes then, the j-1 seats before it
have not finished within t throws and the k-j after it not within t-1:

    P_j = sum_{t>=1} f(t) S(t+1)^(j-1) S(t)^(k-j),      sum_j P_j = 1 exactly.

The key identity. Let a_t have an annihilating polynomial chi_a of degree m (sum_i
chi_a[i] a_(t+i) = 0 for all t >= 1) and b_t the generating function
B(z) = sum_t b_t z^(t-1) = N_b(z)/D_b(z), D_b(0) = 1. Then

    sum_{t>=1} a_t b_t = L( N_b * D_b^(-1) mod chi_a ),  L linear, L(x^i) = a_(i+1).

Proof: L vanishes on the ideal (chi_a), so a_t = L(x^(t-1) mod chi_a) and
sum_t a_t b_t = L(B(x)) in C[x]/(chi_a) once the series converges there: on each local
factor C[x]/(x - lambda)^e it does when |lambda| < radius of B; all roots of chi_a
and all poles' inverses (eigenvalues of Q's tensor powers) have modulus < 1. In that
ring B(x) = N_b(x)/D_b(x), with D_b(lambda) = prod (1 - mu lambda) != 0 (|mu lambda| < 1;
for lambda = 0, D_b(0) = 1). The identity is polynomial in the data, so it holds over
Q and modulo every prime p at which D_b is invertible mod chi_a (p not dividing the
resultant, d, or 1..deg for the exponential below).

Which sequences. f, S, T are u Q^(t-1) v: annihilated by chi = det(xI - Q), generating
function denominator D(z) = det(I - zQ) = z^n chi(1/z) (degree n1 = n - z, z = the
multiplicity of the eigenvalue 0, a bound for Q's nilpotency index). A product of r
survival factors is (u^(x)r) (Q^(x)r)^(t-1) v with a symmetric left vector, so it lives
in Sym^r: its D_b = det(I - z Sym^r Q) = prod over multisets (1 - lambda_I z), degree
C(n1+r-1, r) (3,003 for r = 2 on hasbro, which has n = 81, n1 = 77), and deg N_b <
deg D_b + z. D_b comes from the power sums: p_m = tr(Q^m) (Newton's identities from D),
the cycle index of the symmetric group gives the power sums of the multiset products,
P_m = h_r(lambda^m) = sum_{partitions pi of r} (1/z_pi) prod_{c in pi} p_(c m)
(r = 2: (p_m^2 + p_2m)/2), and D_b = exp(-sum_m P_m z^m / m). Putting s survival
factors with f (a = f S^s'T^(s-s')) makes a a product of s + 1 such sequences, again
symmetric in its factors: chi_a = x^z rev(D_a) with D_a = det(I - z Sym^(s+1) Q), degree
C(n1+s, s+1) + z (power sums h_(s+1)(lambda^m)); the same chi_a and D_b serve every
seat. The split s is chosen by a cost model (:func:`choose_split`): s = 0 for k = 2, 3
(chi_a = chi, degree 81; D_b degree 77 or 3,003), s = 1 for k = 4 on hasbro (a = fS and
b = S^2 both in Sym^2: D_a = D_b, degree 3,003, one exponential), and for k = 5, 6
(b = S^3, S^4: D_b of degree 79,079 and 1,581,580).

The tail, by products. With L = deg D_b + z and c_k = L_a(x^k G) = sum_q G_q a_(k+q+1)
(k < L; a middle product of G and the first L + m terms of a), and
N_b = D_b B mod z^L (deg N_b < L),

    sum_t a_t b_t = sum_{k<L} N_b[k] c_k = sum_{s<L} b_(s+1) W_s,
    W_s = sum_{i <= L-1-s} D_b[i] c_(s+i)   (a correlation of D_b and c),

so every seat is one dot product of length L with its own b (S^(k-j-s')T^(j-1-s+s'))
after two products per a-type. Products go through number-theoretic transforms
(:mod:`.polyarith`), which is why the engine's primes are p = c 2^16 + 1
(:func:`ntt_primes`); with other primes the same kernel multiplies by schoolbook. So
does D_b's exponential (Newton's identities as an online convolution, divide and
conquer). What stays quadratic is the inverse mod chi_a: nothing for k = 2, 3
(degree 81), the largest part for k = 4 (degree 3,007).

Two players over Q: ``two_player_exact_fmpq`` evaluates the identity with fmpq_poly
(G has ~10,000-digit coefficients); ``two_player_exact`` uses the modular engine
(k = 2), and ``two_player_table`` computes P(a, b) = sum_t f_a(t) S_b(t) =
L_a(N_b G mod chi) for all a, b as F Y^T mod p (F[a, j] = (Q^j r)[a], Y rows N_b G
mod chi) with a common denominator found first; ``check_table`` certifies the table
exactly against the turn equations d P(a,b) + sum_a' C[a,a'] P(b,a') = d.

Reconstruction: ``crt_tree`` (subproduct tree), ``rational_reconstruct`` (Moller's
half-gcd, then Wang's stop at sqrt(m/2)), ``ReconstructionStream`` (attempts at
growing sizes, each candidate confirmed at held-out primes; error bound in its
docstring), ``k_player_solve`` / ``k_player_exact`` tie it together.

The modules: :mod:`.algebra` (the chain's integer data, the splits, two players over
Q), :mod:`.kernels` (every seat modulo a batch of primes, the two-player table; numba),
:mod:`.polyarith` (transforms, products, exponentials and inverses mod p),
:mod:`.montgomery` (Montgomery arithmetic mod word-size primes), :mod:`.hgcd` (the
half-gcd inverse), :mod:`.schur` (the Schur-Cohn inverse), :mod:`.reconstruct` (primes,
CRT, reconstruction and its stream), :mod:`.subproducts` (CRT of millions of primes in
groups), :mod:`.lehmer` (the half-gcd's base case, compiled), :mod:`.recheck` (``ladders verify``'s check at fresh primes), :mod:`.jit`
(numba's cache folder) and :mod:`.warm` (the kernels loaded, for a cluster's workers).

The engine's interface to the rest of `ladders` is at the end of this module:
:func:`plan_series` (what a run computes, with the digest a store records),
:meth:`SeriesPlan.residues` (a batch of primes, the task of a worker),
:func:`prime_sequence` (the run's primes, fixed by its seed), :func:`race_exact` (every
seat in this process) and :func:`two_player_certified` (two players over Q with an
exact certificate of the one solve step).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ladders.solver.engines.series.algebra import (ChainData, Split, chain_data, two_player_system,
                                                 check_table, choose_split, make_split,
                                                 multiple_bits, multiple_exponent,
                                                 split_cost, two_player_exact_fmpq)
from ladders.solver.engines.series.reconstruct import (ReconstructionStream, crt_simple, crt_tree,
                                                     ntt_pool, ntt_primes, random_primes,
                                                     rational_reconstruct,
                                                     rational_reconstruct_bounded,
                                                     rational_reconstruct_simple)
from ladders.solver.exact import mpq

if TYPE_CHECKING:
    from ladders.solver.engines.series.kernels import TwoPlayerTable

#: Held-out primes of the engine's streams: the transform primes come from a pool of
#: ~1.6e12 (not ~5e16), so three of them keep a wrong 4-player candidate (B ~ 70
#: million bits) below 1e-18 per attempt.
HOLDOUT = 3
#: Threads of a run's driver for its large reconstruction attempts, at most (five
#: players: five columns to sum, and a level of the CRT's top has up to 64 nodes).
DRIVER_THREADS = 8


__all__ = [
    "ChainData", "Split", "chain_data", "choose_split", "make_split", "split_cost",
    "check_table", "two_player_exact_fmpq", "crt_simple", "crt_tree", "random_primes",
    "ntt_primes", "ntt_pool", "HOLDOUT", "engine_stream", "run_stream", "SERIES_FIT", "expected_digits",
    "needed_bits",
    "rational_reconstruct", "rational_reconstruct_bounded", "rational_reconstruct_simple",
    "ReconstructionStream", "seat_residues", "two_player_table", "ExactResult",
    "k_player_solve", "k_player_exact", "two_player_exact", "SeriesPlan", "plan_series",
    "prime_sequence", "race_exact", "error_bound", "CertifiedTwoPlayer",
    "two_player_certified",
]


def seat_residues(chain, players: int, primes: Sequence[int] | np.ndarray,
                  split: int | None = None, check_sum: bool = True,
                  multiple: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every seat (and the denominator multiple, if asked) modulo each prime (see
    :func:`.kernels.seat_residues`); the compiled kernels, and numba with them, load at
    the first call, not at import."""
    from ladders.solver.engines.series.kernels import seat_residues as run
    return run(chain, players, primes, split=split, check_sum=check_sum, multiple=multiple)


def two_player_table(chain, primes_source: Iterable[int] | int | None = None,
                     processes: int = 2) -> TwoPlayerTable:
    """The whole table P(a, b) of two players, over one denominator and in lowest terms
    (see :func:`.kernels.two_player_table`)."""
    from ladders.solver.engines.series.kernels import two_player_table as run
    return run(chain, primes_source, processes)


@dataclass(frozen=True)
class ExactResult:
    """Every seat exactly, with how it was obtained."""

    seats: list[mpq]
    primes_used: int
    primes_skipped: list[int]
    attempts: int
    rejected: int
    seconds: float
    residue_seconds: float
    reconstruct_seconds: float
    split: int
    #: found over the denominator multiple of three players (no rational reconstruction)
    via_multiple: bool = False


def k_player_solve(chain, players: int, primes_source: Iterable[int] | int | None = None, *,
                   batch: int = 64, max_batch: int = 512, holdout: int = HOLDOUT,
                   ratio: float = 1.12, split: int | None = None,
                   progress=None) -> ExactResult:
    """Every seat exactly: residues batch by batch into a :class:`ReconstructionStream`.

    ``primes_source``: an iterable of primes (< 2^63; any prime works, transform primes
    fast), or a seed for :func:`ntt_primes` (None: a random seed). Batches grow from
    ``batch`` to ``max_batch`` primes (small answers stop early, big ones amortize the
    call).
    """
    t0 = time.perf_counter()
    pool = 5.3e16
    data = chain_data(chain)
    sp = choose_split(data, players) if split is None else make_split(data, players, split)
    multiple = False
    if primes_source is None or isinstance(primes_source, int):
        # the engine's own primes: 2 mod 3 where the split gives a denominator multiple
        multiple = sp.multiple
        primes_source = ntt_primes(primes_source, sp.two_adicity, multiple)
        pool = ntt_pool(sp.two_adicity, multiple)
    it = iter(primes_source)
    stream = ReconstructionStream(players + multiple, holdout=holdout, ratio=ratio,
                                  must_sum_to_one=True, pool=pool, multiple=multiple)
    t_res = 0.0
    size = batch
    while True:
        primes = [next(it) for _ in range(size)]
        t1 = time.perf_counter()
        res, valid = seat_residues(data, players, primes, split=sp.s, multiple=multiple)
        t_res += time.perf_counter() - t1
        if stream.add(primes, res, valid):
            break
        if progress is not None:
            progress(stream.prime_count, stream.bits)
        # grow batches, but do not run far past the next reconstruction attempt
        ahead = (stream.next_bits - stream.bits) // 61 + 1
        size = max(batch, min(2 * size, max_batch, ahead))
    return ExactResult(stream.values, stream.prime_count, stream.skipped, stream.attempts,
                       stream.rejected, time.perf_counter() - t0, t_res, stream.attempt_seconds, sp.s,
                       stream.via_multiple)


def k_player_exact(chain, players: int, primes_source: Iterable[int] | int | None = None) -> list[mpq]:
    """Every seat's exact win probability (seat 1 moves first); they sum to exactly 1.
    The engine's own primes: with the denominator multiple of three players."""
    return k_player_solve(chain, players, primes_source).seats


def two_player_exact(chain, primes_source: Iterable[int] | int | None = None) -> mpq:
    """P(start, start) for two players (seat 1's win probability), exactly.

    The k-player engine with k = 2 (``sum_t f(t) S(t)`` mod word-size primes, about
    0.2 ms per prime on hasbro), CRT and confirmed rational reconstruction. Computing
    ``D^-1 mod chi`` over Q instead (:func:`two_player_exact_fmpq`) is slower: that
    inverse has ~10,000-digit coefficients (the resultant ``prod (1 - l_i l_j)``), more
    than twice the answer's 4,453 digits.
    """
    return k_player_solve(chain, 2, primes_source, batch=96, ratio=1.4).seats[0]


# ----------------------------------------------------------------------------------
# The engine's interface to the rest of ladders
# ----------------------------------------------------------------------------------

#: Bumped whenever the residues of a (chain, players, split) change, so that a store
#: of an older kernel is refused. (A plan with the denominator multiple of three
#: players has it in its digest as well: its primes and columns differ.)
KERNEL_VERSION = 2      # 2: transform primes (ntt_primes), Sym^(s+1) on the a side


@dataclass(frozen=True)
class SeriesPlan:
    """What a series run computes: one player's chain data, the split, and the degrees
    (``degree_a``: the annihilator chi_a, the modulus of the polynomial arithmetic;
    ``degree_b``: D_b, the common denominator of the b side). ``digest`` ties a store
    to the chain, the players, the split and the kernel. ``multiple``: the residues
    have one more column, the denominator multiple M of three players
    (:func:`~.algebra.multiple_exponent`), and the primes are 2 mod 3."""

    players: int
    split: int
    degree_a: int
    degree_b: int
    digest: str
    data: ChainData = field(compare=False, repr=False)
    two_adicity: int = 16
    multiple: bool = False

    @property
    def columns(self) -> int:
        """Residues a prime: every seat, and M where the plan has it."""
        return self.players + self.multiple

    def residues(self, primes: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Every seat (and M) modulo each prime: ``(residues (B, columns) uint64,
        valid (B,))`` (see :func:`seat_residues`)."""
        return seat_residues(self.data, self.players, primes, split=self.split,
                             multiple=self.multiple)


def plan_series(chain, players: int, split: int | None = None) -> SeriesPlan:
    """The plan of a ``players``-seat race on ``chain`` (``split``: the number of
    survival factors on the a side; default: the cheapest, see :func:`choose_split`)."""
    import hashlib
    import json
    data = chain_data(chain)
    sp = choose_split(data, players) if split is None else make_split(data, players, split)
    fields = {"moves": [list(map(list, m)) for m in chain.moves], "finish": list(chain.finish),
              "start": int(chain.start_index), "die": int(chain.die), "players": players,
              "split": sp.s, "kernel": KERNEL_VERSION}
    if sp.multiple:
        fields["multiple"] = multiple_exponent(sp)
    key = json.dumps(fields)
    return SeriesPlan(players, sp.s, sp.m_a, sp.deg_b, hashlib.sha256(key.encode()).hexdigest(),
                      data, sp.two_adicity, sp.multiple)


def prime_sequence(seed: int, count: int, two_adicity: int = 16,
                   cube_roots: bool = False) -> list[int]:
    """The first ``count`` primes of a run's sequence (random 62-bit transform primes
    of :func:`ntt_primes`, fixed by ``seed``, the plan's ``two_adicity`` and whether it
    has the denominator multiple: batch k of every session means the same primes)."""
    it = ntt_primes(seed, two_adicity, cube_roots)
    return [next(it) for _ in range(count)]


def race_exact(chain, players: int, seed: int | None = None) -> ExactResult:
    """Every seat of a race exactly, in this process (small boards, tests, cross-checks)."""
    return k_player_solve(chain, players, seed)


def error_bound(stream: ReconstructionStream) -> float:
    """An upper bound on the probability that a wrong fraction passed the held-out
    primes in any attempt of ``stream`` (see :class:`ReconstructionStream`)."""
    return stream.error_bound()



#: The series engine's fractions have at most about ``n deg log10(d)`` digits, deg =
#: C(n1+k-2, k-1) (the size of the resultant that bounds their denominators); on
#: hasbro 92-93 % of it for 2 and 3 players (4,453 of 4,852; 175,755 of 189,280).
#: Small boards cancel much more.
SERIES_FIT = 0.93


def expected_digits(data: ChainData, players: int) -> int:
    """Digits expected in each seat's numerator (and denominator): SERIES_FIT of the
    resultant bound (an overestimate on boards that cancel)."""
    deg = math.comb(data.n1 + players - 2, players - 1)
    return round(SERIES_FIT * data.n * deg * math.log10(data.d))


def needed_bits(data: ChainData, players: int) -> int:
    """Bits the modulus of a run must reach, held-out primes included: the
    denominator multiple M and 64 bits more, where the cheapest split gives one (three
    players: :func:`~.algebra.multiple_bits`, within a bit of the truth on hasbro);
    else a numerator and a denominator of :func:`expected_digits` each."""
    sp = choose_split(data, players)
    if sp.multiple:
        return math.ceil(multiple_bits(data, sp) + 64 + 62 * HOLDOUT + 8)
    return int(2 * expected_digits(data, players) * math.log2(10))


def engine_stream(plan: SeriesPlan) -> ReconstructionStream:
    """The reconstruction stream of a run (:func:`run_stream` at :func:`needed_bits`)."""
    return run_stream(plan.players, plan.two_adicity, needed_bits(plan.data, plan.players),
                      plan.multiple)


def run_stream(players: int, two_adicity: int, expected_bits: int,
               multiple: bool = False) -> ReconstructionStream:
    """The reconstruction stream of a series run: every seat (and the denominator
    multiple, where the plan has it), summing to 1, held-out primes from the pool of
    :func:`ntt_primes` for the transform size, attempts scheduled around
    ``expected_bits``: four times more bits each time up to just past it (the fit held
    within 0.1 % at 3 and 4 players on hasbro, so one attempt at full size where it
    holds), then 2 % more each time (an attempt at 5 players costs minutes of the
    driver, 2 % more primes about 14 core-hours). With the multiple, whose size
    ``expected_bits`` is within a bit or two (:func:`needed_bits`), the first attempt
    comes there and none before. Its large attempts use up to :data:`DRIVER_THREADS` of
    this machine's cores (the CRT's top levels and columns beside the half-gcd)."""
    return ReconstructionStream(players + multiple, holdout=HOLDOUT, ratio=1.02,
                                must_sum_to_one=True, pool=ntt_pool(two_adicity, multiple),
                                expected_bits=expected_bits, near=1.0 if multiple else 1.002,
                                first_bits=expected_bits if multiple else 1024,
                                multiple=multiple,
                                threads=min(os.cpu_count() or 1, DRIVER_THREADS))


@dataclass(frozen=True)
class CertifiedTwoPlayer:
    """Two players over Q: ``value`` = P(start, start), and the certificate that the
    one solve step is right: ``Y D = N (mod chi)`` held exactly in rationals."""

    value: mpq
    certified: bool
    seconds: dict[str, float]


def two_player_certified(chain) -> CertifiedTwoPlayer:
    """P(start, start) for two players over Q, with an exact certificate.

    ``P = L(Y)`` with ``Y = N D^-1 mod chi``, found as the solution of the n x n
    integer system ``M y = b`` of :func:`.algebra.two_player_system` (flint's Dixon
    solver: p-adic lifting, then rational reconstruction). The certificate is
    ``M y = b`` checked exactly in rationals, i.e. ``Y D = N (mod chi)``, independent
    of how y was found. (The rest is exact arithmetic of the chain's own data: chi and
    D from the integer characteristic polynomial of C, N and the f(t) by exact
    iteration; the identity itself is proved in the module docstring. ``ladders solve
    --table`` certifies the whole table against the race equations instead.)
    """
    from ladders.solver.exact_flint import fmpq, fmpq_mat, fmpq_to_mpq  # not for a chain's solve
    t0 = time.perf_counter()
    system = two_player_system(chain_data(chain))
    y = fmpq_mat(system.matrix).solve(fmpq_mat(system.rhs), algorithm="dixon")
    t1 = time.perf_counter()
    certified = system.matrix * y == fmpq_mat(system.rhs)
    t2 = time.perf_counter()
    total = fmpq(0)
    for k, w in enumerate(system.weights):
        total += y[k, 0] * w
    return CertifiedTwoPlayer(fmpq_to_mpq(total * system.scale), bool(certified),
                              {"solve": t1 - t0, "certificate": t2 - t1})
