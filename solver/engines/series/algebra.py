"""One player's chain as exact integer data, the splits of a k-seat sum, and two
players over the rationals (flint, through :mod:`ladders.solver.exact_flint`): nothing here
needs numba."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ladders.solver.exact import mpq, mpz

if TYPE_CHECKING:
    from ladders.solver.exact_flint import fmpq, fmpq_poly, fmpz_mat

# flint is imported where it is used: a chain's solve imports this package (its
# reconstruction, and numba's door) and never needs it


# ----------------------------------------------------------------------------------
# The chain as integer data (computed once, shared by every prime)
# ----------------------------------------------------------------------------------

def _limbs(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Little-endian 64-bit limbs and signs of big integers (for reduction mod p in numba)."""
    width = max(1, max((abs(v).bit_length() + 63) // 64 for v in values))
    limbs = np.zeros((len(values), width), dtype=np.uint64)
    signs = np.ones(len(values), dtype=np.int8)
    mask = (1 << 64) - 1
    for i, v in enumerate(values):
        if v < 0:
            signs[i] = -1
            v = -v
        for j in range(width):
            limbs[i, j] = (v >> (64 * j)) & mask
    return limbs, signs


@dataclass(frozen=True)
class ChainData:
    """Integer data of one player's chain: ``Q = C/d``, ``r = e/d``, start ``u``.

    ``charpoly`` is ``det(xI - C)`` (low to high), ``z`` its multiplicity of the root 0
    (a bound for the nilpotency index of Q), ``n1 = n - z``; ``dpoly`` holds the
    coefficients of ``det(I - tC) = sum_i dpoly[i] t^i`` (degree ``n1``), so that
    ``D(t) = det(I - tQ) = sum_i dpoly[i] d^-i t^i``. ``alpha[t-1] = u C^(t-1) e`` and
    ``sigma[t-1] = u C^(t-1) 1`` for t = 1..n+1: ``f(t) = alpha_t / d^t``,
    ``S(t) = sigma_t / d^(t-1)``.
    """

    n: int
    d: int
    start: int
    counts: np.ndarray
    finish: np.ndarray
    charpoly: tuple[int, ...]
    z: int
    n1: int
    dpoly: tuple[int, ...]
    alpha: tuple[int, ...]
    sigma: tuple[int, ...]

    @classmethod
    def from_chain(cls, chain) -> "ChainData":
        """Read a duck-typed chain (``moves``, ``finish``, ``start_index``, ``die``)."""
        n = len(chain.moves)
        d = int(chain.die)
        counts = np.zeros((n, n), dtype=np.int64)
        for i, row in enumerate(chain.moves):
            for j, c in row:
                counts[i, j] += c
        finish = np.array([int(x) for x in chain.finish], dtype=np.int64)
        from ladders.solver.exact_flint import array_to_fmpz_mat, fmpz_poly_to_ints
        charpoly = fmpz_poly_to_ints(array_to_fmpz_mat(counts).charpoly())
        assert len(charpoly) == n + 1 and charpoly[n] == 1
        z = 0
        while z < n and charpoly[z] == 0:
            z += 1
        n1 = n - z
        dpoly = tuple(charpoly[n - i] for i in range(n1 + 1))
        start = int(chain.start_index)
        # Krylov sequences from the start, in exact integers (u C^(t-1) is a count vector)
        alpha, sigma = [], []
        vec = [0] * n
        vec[start] = 1
        for _ in range(n + 2):
            alpha.append(sum(v * int(finish[i]) for i, v in enumerate(vec) if v))
            sigma.append(sum(vec))
            new = [0] * n
            for i, v in enumerate(vec):
                if v:
                    for j, c in chain.moves[i]:
                        new[j] += v * c
            vec = new
        return cls(n, d, start, counts, finish, charpoly, z, n1, dpoly, tuple(alpha), tuple(sigma))


_DATA_CACHE: dict[int, tuple[object, ChainData]] = {}


def chain_data(chain) -> ChainData:
    """:class:`ChainData` of a chain (cached per chain object; a ChainData passes through)."""
    if isinstance(chain, ChainData):
        return chain
    hit = _DATA_CACHE.get(id(chain))
    if hit is not None and hit[0] is chain:
        return hit[1]
    data = ChainData.from_chain(chain)
    _DATA_CACHE[id(chain)] = (chain, data)
    return data


# ----------------------------------------------------------------------------------
# Splits: which survival factors go with f (the "a" side) and which form "b"
# ----------------------------------------------------------------------------------

def _partitions(r: int) -> list[tuple[int, ...]]:
    """Partitions of r as non-increasing tuples (r = 0: the empty partition)."""
    if r == 0:
        return [()]
    out = []

    def rec(rest: int, cap: int, acc: tuple[int, ...]) -> None:
        if rest == 0:
            out.append(acc)
            return
        for part in range(min(rest, cap), 0, -1):
            rec(rest - part, part, acc + (part,))

    rec(r, r, ())
    return out


def _cycle_index(r: int) -> tuple[np.ndarray, np.ndarray]:
    """``h_r = sum_pi p_pi / z_pi`` (cycle index of the symmetric group S_r).

    Returns ``parts`` (rows: the parts of each partition, 0-padded) and ``zden``
    (``z_pi = prod_i i^{m_i} m_i!``), so that the power sums of the multiset products
    ``P_m = h_r(lambda^m) = sum_pi (1/z_pi) prod_{c in pi} p_{c m}``.
    """
    parts = _partitions(r)
    arr = np.zeros((len(parts), max(r, 1)), dtype=np.int64)
    zden = np.zeros(len(parts), dtype=np.int64)
    for i, pi in enumerate(parts):
        arr[i, :len(pi)] = pi
        zval = 1
        for c in set(pi):
            mult = pi.count(c)
            zval *= c ** mult * math.factorial(mult)
        zden[i] = zval
    return arr, zden


@dataclass(frozen=True)
class Split:
    """How a k-seat sum ``sum_t f(t) S(t+1)^(j-1) S(t)^(k-j)`` is cut into ``a_t b_t``.

    ``s`` survival factors go with f into ``a`` (the side whose annihilator ``chi_a``
    is used as a modulus), the other ``r = k - 1 - s`` form ``b`` (the side whose
    denominator ``D_b`` is inverted mod ``chi_a``). Seat j takes ``sigma_j`` factors
    S(t) and ``s - sigma_j`` factors T(t) = S(t+1) into a.
    """

    players: int
    s: int
    deg_a: int          # degree of D_a (nonzero roots of chi_a): C(n1+s, s+1)
    deg_b: int          # degree of D_b: C(n1+r-1, r)
    m_a: int            # degree of chi_a = deg_a + z
    length: int         # L = deg_b + z terms of b (deg N_b < L)
    seat_sigma: tuple[int, ...]
    n1: int             # nonzero eigenvalues of Q: the order of the recurrences

    @property
    def r(self) -> int:
        return self.players - 1 - self.s

    @property
    def multiple(self) -> bool:
        """Whether the kernel also gives, prime by prime, an integer M that every seat's
        denominator divides (:func:`multiple_exponent`): three players with f alone on
        the a side, where ``D_b`` lives on Sym^2 and ``chi_a = chi``."""
        return self.players == 3 and self.s == 0

    @property
    def transform_sizes(self) -> tuple[int, int, int]:
        """``(size_c, size_w, nmax)``: the kernel's transforms at step (6), the middle
        product of G and a (``L + m_a - 1`` terms) and the correlation with D_b (``2L -
        1``), and the largest any step takes (the exponentials' ``deg + 1`` too). The one
        place they are worked out: the kernel reads them from :class:`~.kernels.SeatInputs`,
        the primes' two-adicity and the cost model from here."""
        size_c = _pow2(max(self.length + self.m_a - 1, self.m_a, 1))
        size_w = _pow2(max(2 * self.length - 1, self.deg_b + 1, 1))
        return size_c, size_w, max(size_c, size_w, _pow2(self.deg_a + 1), _pow2(self.deg_b + 1))

    @property
    def two_adicity(self) -> int:
        """log2 of the largest transform a prime of this split needs (at least 16):
        its primes must be ``c 2^K + 1`` with K at least this (:func:`ntt_primes`)."""
        return max(16, self.transform_sizes[2].bit_length() - 1)

    def seat_exponents(self, j: int) -> tuple[int, int, int, int]:
        """``(S in a, T in a, S in b, T in b)`` for seat j (1-based)."""
        k, sig = self.players, self.seat_sigma[j - 1]
        return sig, self.s - sig, (k - j) - sig, (j - 1) - (self.s - sig)


#: Extra powers of the die in the denominator multiple M beyond ``d^(3 C(n1+2, 3) + 3n)``:
#: a seat's denominator can hold a few more factors of d than the product over the
#: multisets (6^9 for 3 players on hasbro); if it holds more, the run reconstructs the
#: fractions without M, from twice as many primes.
MULTIPLE_SLACK = 64


def multiple_exponent(split: Split) -> int:
    """The power of d in the denominator multiple of three players,

        M = 3! d^e det(I - z Sym^3 Q) at z = 1 = 3! d^e prod_{i<=j<=k} (1 - lambda_i lambda_j lambda_k),

    with ``e = 3 C(n1+2, 3) + 3n + MULTIPLE_SLACK`` (the product runs over the multisets
    of nonzero eigenvalues; ``d^3 lambda`` are algebraic integers, so M is an integer;
    3n covers the first n throws of the three, where the eigenvalue 0's Jordan blocks
    act: a board without chutes ends within n throws, its denominators powers of d).
    Why every seat's denominator divides it (up to the slack): ``P_j`` is a sum over t
    of ``u^(x3) (Q^(x3))^(t-1) v`` with the symmetric left vector ``u^(x3)``, so it lives
    on Sym^3 and equals ``w^T (I - Sym^3 Q)^-1 v'``, ``v'`` the symmetrized right vector
    (denominators dividing 3! and powers of d)."""
    return 3 * _multisets(split.n1, 3) + 3 * split.m_a + MULTIPLE_SLACK     # m_a = n here


def multiple_bits(data: ChainData, split: Split) -> float:
    """``log2 M`` (:func:`multiple_exponent`) in floating point, from the eigenvalues of
    Q: the size the modulus must pass before M is recovered (the product over the
    multisets is within a few bits of 1 on hasbro: 2^-8)."""
    lam = np.linalg.eigvals(data.counts.astype(np.float64) / data.d)
    n = lam.size
    first, second = np.triu_indices(n)
    pairs = lam[first] * lam[second]
    total = 0.0
    for k in range(n):                      # multisets i <= j <= k, by their largest k
        total += float(np.log2(np.abs(1.0 - pairs[second <= k] * lam[k])).sum())
    return math.log2(6) + multiple_exponent(split) * math.log2(data.d) + total


def _multisets(n1: int, r: int) -> int:
    """Multisets of size r from n1 items, ``C(n1+r-1, r)`` (n1 = 0: only the empty one)."""
    if n1 == 0:
        return 1 if r == 0 else 0
    return math.comb(n1 + r - 1, r)


def make_split(data: ChainData, players: int, s: int) -> Split:
    """The split with ``s`` survival factors on the a side (0 <= s <= players - 1)."""
    k = players
    if not 0 <= s <= k - 1:
        raise ValueError(f"split s={s} out of range for {k} players")
    r = k - 1 - s
    n1, z = data.n1, data.z
    # a is a product of s + 1 sequences t -> x Q^(t-1) y: the product is symmetric in
    # its factors, so it lies in Sym^(s+1) of their span and chi_a has one root per
    # multiset of s + 1 nonzero eigenvalues (not per tuple: n1^(s+1) would double
    # the degree for s = 1)
    deg_a = _multisets(n1, s + 1)
    deg_b = _multisets(n1, r)
    sigma = []
    for j in range(1, k + 1):
        # prefer S factors in a; seat j has k - j of them and j - 1 factors T
        sig = min(s, k - j)
        if s - sig > j - 1:
            raise AssertionError("unreachable: s <= k - 1 factors always fit")
        sigma.append(sig)
    return Split(k, s, deg_a, deg_b, deg_a + z, deg_b + z, tuple(sigma), n1)


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


#: The kernel's thresholds, here so that the cost model reads the same numbers the
#: numba code does (:mod:`.polyarith`, :mod:`.hgcd` import them): the exponential's
#: blocks done directly; the degree below which the half-gcd's leaves, and the inverse
#: as a whole, run the quadratic Euclid; the quotient and divisor length from which a
#: division goes by Newton iteration.
EXP_BASE = 32
HGCD_BASE = 160
XGCD_BASE = 160
DIV_NEWTON = 64

#: Model units (one unit ~ 1.7 ns on hasbro, one core, measured by
#: scripts/bench_kernel.py) of one butterfly of a transform, and of one term of a
#: recurrence's dot product (lazily reduced 192-bit sums).
BUTTERFLY = 1.2
RECURRENCE_TERM = 0.6


def _transform(size: int) -> float:
    """Modelled units of one transform of ``size`` points (``size/2 log2 size``
    butterflies)."""
    return BUTTERFLY * size / 2 * max(1, size.bit_length() - 1)


def _transform_cost(size: int) -> float:
    """Modelled units of one product by transforms of ``size`` points (three)."""
    return 3 * _transform(size)


def _exp_cost(deg: int) -> float:
    """The exponential of ``deg`` terms: blocks of :data:`EXP_BASE` directly, then for
    each block size B (32, 64, ... below deg) about ``deg / 2B`` products of size 2B,
    each two transforms (the other factor, ``P[0:2B]``, is transformed once per size)."""
    size = _pow2(deg + 1)
    if size <= 2 * EXP_BASE:
        return deg * deg / 2
    cost, b = EXP_BASE / 2 * deg, EXP_BASE
    while 2 * b <= size:
        cost += (deg / (2 * b)) * 2 * _transform(2 * b) + _transform(2 * b)
        b *= 2
    return cost


def _remainder_cost(length: int, m: int) -> float:
    """``a mod chi_a`` for ``length`` coefficients of a and chi_a of degree m
    (:func:`.hgcd.poly_rem_long`): per block of m quotient coefficients, two transforms
    of ``2m`` points and two of ``m``; schoolbook (``(length - m) m``) for short ones."""
    quotient = length - m
    if quotient <= 0:
        return 0.0
    if m < DIV_NEWTON or quotient < DIV_NEWTON:
        return float(quotient * m)
    blocks = -(-quotient // m)
    return blocks * 2 * (_transform(_pow2(2 * m - 1)) + _transform(_pow2(m)))


def _inverse_cost(m: int) -> float:
    """The inverse mod chi_a of degree m: the quadratic Euclid (~5.5 m^2) below the
    half-gcd's threshold, else about 36 products of ``N = next_pow2(m)`` points in
    all (measured 2026-11-26: 5.2 ms at m = 3,007, 287 ms at 79,083; it grows as
    ``N log N`` between them, the quadratic base cases weighing more at small m)."""
    if m <= XGCD_BASE:
        return 5.5 * m * m
    return 36 * _transform_cost(_pow2(m))


def _reversal_inverse_cost(n: int) -> float:
    """The inverse of D_b modulo ``chi_a = x^z D_b*`` (``D_a = D_b``, degree n) by the
    Schur-Cohn recursion (:func:`.schur.poly_invmod_reversal`): about 20 products of
    ``next_pow2(n)`` points in all (measured 2026-11-26: 3.06 ms at n = 3,003, where
    the half-gcd took 5.2; the 6-player kernel 243 ms a prime against 376)."""
    if n <= XGCD_BASE:
        return _inverse_cost(n)
    return 20 * _transform_cost(_pow2(n))


def power_sum_terms(split: Split) -> int:
    """Terms of the power sums' recurrences in step (2) (``kernels._power_sums``):
    ``p_m`` for m up to ``max(deg_b, deg_a, c n1)``, then for each larger part c of the
    cycle indices the ``p_(cm)`` beyond, by the recurrence of the ``lambda^c``."""
    need_a = split.s > 0 and split.s + 1 != split.r
    cmax = max(split.r, split.s + 1 if need_a else 1)
    direct = max(split.deg_b, split.deg_a if need_a else 0, cmax * split.n1, 1)
    terms = direct
    for c in range(2, cmax + 1):
        count = max(split.deg_b if c <= split.r else 0,
                    split.deg_a if need_a and c <= split.s + 1 else 0)
        terms += max(0, count - direct // c)
    return terms


def split_cost(split: Split) -> float:
    """Model of the per-prime work (multiply-accumulates) of the numba kernel, every
    step of docs/series.md, "The kernel, step by step":

    (1) and (2) the recurrences of order n1: S to ``L + m_a`` terms (f is its
    differences), the power sums (:func:`power_sum_terms`); (3), (4) the exponentials
    for D_b (and D_a when it differs from D and D_b); (5) ``D_b mod chi_a``
    (:func:`_remainder_cost`)
    and the inverse mod chi_a (a half-gcd, :func:`_inverse_cost`; where ``D_a = D_b``
    the Schur-Cohn recursion, :func:`_reversal_inverse_cost`); (6) per a-type two
    products by transforms (the middle product c of size ``L + m_a`` and the
    correlation W of size ``2L``), but for the one of :func:`derived_seat`; (7) a dot
    product per seat. Calibrated on hasbro (one core): 1 unit ~ 1.7 ns.
    """
    types = len(set(split.seat_sigma)) - (derived_seat(split.seat_sigma) >= 0)
    cost = RECURRENCE_TERM * split.n1 * (split.length + split.m_a + power_sum_terms(split))
    cost += _exp_cost(split.deg_b)
    if split.s and split.s + 1 != split.r:
        cost += _exp_cost(split.deg_a)
    if split.s and split.s + 1 == split.r:
        cost += _reversal_inverse_cost(split.deg_b)
    else:
        cost += _remainder_cost(split.deg_b + 1, split.m_a)
        cost += _inverse_cost(split.m_a)
    cost += types * (_transform_cost(_pow2(split.length + split.m_a - 1))
                     + _transform_cost(_pow2(2 * split.length - 1)))
    cost += split.players * split.length
    return cost


def derived_seat(seat_sigma: tuple[int, ...] | list[int]) -> int:
    """The seat (0-based) whose residues the kernel derives from the others' (the seats
    sum to 1), or -1: the last one whose kind of a, its number of S factors in a, no
    other seat shares; -1 where there is one kind only (nothing would be saved). 4 to 6
    players on hasbro: the last seat, ``a = f T^s``."""
    if len(set(seat_sigma)) < 2:
        return -1
    own = [j for j, kind in enumerate(seat_sigma) if list(seat_sigma).count(kind) == 1]
    return own[-1] if own else -1


def choose_split(data: ChainData, players: int) -> Split:
    """The split with the smallest modelled cost (ties: fewer factors in a)."""
    best = None
    for s in range(players):
        sp = make_split(data, players, s)
        c = split_cost(sp)
        if best is None or c < best[0]:
            best = (c, sp)
    return best[1]


# ----------------------------------------------------------------------------------
# Two players exactly over Q (flint fmpq_poly / fmpz_mat)
# ----------------------------------------------------------------------------------

def _q_polys(data: ChainData) -> tuple[fmpq_poly, fmpq_poly, fmpq_poly]:
    """``(chi, D, G)`` over Q: ``chi = det(xI - Q)``, ``D = det(I - tQ)``, ``G = D^-1 mod chi``."""
    from ladders.solver.exact_flint import fmpq, fmpq_poly
    n, d = data.n, data.d
    chi = fmpq_poly([fmpq(c, d ** (n - i)) for i, c in enumerate(data.charpoly)])
    dpol = fmpq_poly([fmpq(c, d ** i) for i, c in enumerate(data.dpoly)])
    g, inv, _ = dpol.xgcd(chi)
    if g != 1:
        raise ArithmeticError("det(I - tQ) and det(xI - Q) share a root: Q has an eigenvalue of modulus 1")
    return chi, dpol, inv


def two_player_exact_fmpq(chain) -> mpq:
    """Reference for :func:`two_player_exact`: the same formula directly over Q (flint).

    ``P = sum_t f(t) S(t) = L(N D^-1 mod chi)`` with ``L(x^j) = f(j+1)``,
    ``N = D * (sum_{s<n} S(s+1) t^s) mod t^n``; all over Q in flint (degree n).
    """
    from ladders.solver.exact_flint import fmpq, fmpq_poly, fmpq_to_mpq
    data = chain_data(chain)
    n, d = data.n, data.d
    chi, dpol, ginv = _q_polys(data)
    f = [fmpq(data.alpha[t], d ** (t + 1)) for t in range(n)]          # f(1..n)
    svals = fmpq_poly([fmpq(data.sigma[t], d ** t) for t in range(n)])
    num = dpol.mul_low(svals, n) if hasattr(dpol, "mul_low") else (dpol * svals).truncate(n)
    y = (num * ginv) % chi
    coeffs = y.coeffs()
    total = fmpq(0)
    for j, c in enumerate(coeffs):
        total += c * f[j]
    return fmpq_to_mpq(total)


@dataclass(frozen=True)
class TwoPlayerSystem:
    """The two-player identity as an n x n integer system ``M y = b`` (flint).

    In the variable ``X = d x`` the ring is ``Z[X]/chi_C`` with ``chi_C = det(XI - C)``
    monic and integer. Scaled to integers, ``D~(X) = d^(2 n1) D(X/d)`` (coefficients
    ``dpoly[i] d^(2(n1-i))``) and ``N~(X) = d^(2(n-1)) N(X/d)`` (coefficients
    ``nu_k d^(2(n-1-k))``, ``nu_k = sum_{i+s=k} dpoly[i] sigma_s``). Column j of M
    holds ``X^j D~ mod chi_C``, so ``M y = b`` (b = N~) says ``y D~ = N~ (mod chi_C)``:
    y is ``N~ D~^-1`` and ``P = scale * sum_k y_k alpha_k`` (``L(X^k) = d^k f(k+1) =
    alpha_k / d``), ``scale = d^(2 n1) / d^(2(n-1)+1)``.
    """

    matrix: fmpz_mat
    rhs: fmpz_mat
    weights: list[int]
    scale: fmpq


def two_player_system(data: ChainData) -> TwoPlayerSystem:
    """Build :class:`TwoPlayerSystem` from the chain's integer data."""
    from ladders.solver.exact_flint import fmpq, fmpz_mat, ints_to_fmpz_column
    n, d, n1 = data.n, data.d, data.n1
    chi = data.charpoly
    col = [data.dpoly[i] * d ** (2 * (n1 - i)) for i in range(n1 + 1)] + [0] * (n - n1)
    if col[n]:          # no eigenvalue 0 (z = 0): D~ has degree n, reduce it mod chi_C
        col = [col[i] - col[n] * chi[i] for i in range(n)]
    col = col[:n]
    entries = [[0] * n for _ in range(n)]
    for j in range(n):
        for i in range(n):
            entries[i][j] = col[i]
        top = col[n - 1]
        col = [0] + col[:n - 1]
        if top:
            col = [col[i] - top * chi[i] for i in range(n)]
    nu = [sum(data.dpoly[i] * data.sigma[k - i] for i in range(min(k, n1) + 1)) for k in range(n)]
    rhs = [nu[k] * d ** (2 * (n - 1 - k)) for k in range(n)]
    return TwoPlayerSystem(fmpz_mat(entries), ints_to_fmpz_column(rhs), list(data.alpha[:n]),
                           fmpq(d ** (2 * n1), d ** (2 * (n - 1) + 1)))


def table_denominator(data: ChainData) -> mpz:
    """A common denominator of the whole two-player table, proved, from one solve over Q.

    With ``G = D~^-1 mod chi_C = g / delta`` (g an integer polynomial: the solution of
    ``M x = e_0`` of :func:`two_player_system`, flint's Dixon solver), every
    ``y_b = N~_b G mod chi_C`` has denominator dividing ``delta`` (chi_C is monic and
    integer, ``N~_b`` integer), and ``P(a, b) = scale sum_k y_b[k] alpha_a[k]`` with
    integer ``alpha_a``; so ``delta q`` (``scale = p/q`` in lowest terms) is a common
    denominator of every ``P(a, b)``. On ``hasbro`` it has 15,716 bits against the
    14,794 of the smallest one: the CRT needs 6 % more primes, and no entry can fall
    outside ``[0, Den]``.
    """
    from ladders.solver.exact_flint import fmpq_mat
    system = two_player_system(data)
    unit = fmpq_mat(data.n, 1, [1] + [0] * (data.n - 1))
    g = fmpq_mat(system.matrix).solve(unit, algorithm="dixon")
    delta = math.lcm(*(int(g[i, 0].q) for i in range(data.n)))
    return mpz(delta) * int(system.scale.q)


def check_table(chain, numerators: list[mpz], den: mpz) -> bool:
    """Exact certificate of the table ``P(a, b) = numerators[a n + b] / den``:
    ``d P(a,b) + sum_a' C[a,a'] P(b,a') = d`` for every (a, b).

    In integers, with ``Num = den P``: ``d Num[a,b] + sum_a' C[a,a'] Num[b,a'] == d den``
    (C sparse: at most d terms a row), no fraction built. The turn system is
    nonsingular (the map ``P -> C P^T / d`` squares to ``Q (x) Q``, of spectral radius
    < 1), so a table that passes is *the* table.
    """
    data = chain_data(chain)
    n, d = data.n, data.d
    if len(numerators) != n * n or den <= 0:
        return False
    num = [numerators[a * n:(a + 1) * n] for a in range(n)]
    rows = [[(j, int(c)) for j, c in enumerate(data.counts[i]) if c] for i in range(n)]
    target = mpz(den) * d
    for a in range(n):
        ra = rows[a]
        for b in range(n):
            nb_row = num[b]
            lhs = d * num[a][b]
            for j, c in ra:
                lhs += c * nb_row[j]
            if lhs != target:
                return False
    return True
