"""The ``components`` engine's mathematics: ``A x = B`` solved one strongly connected
component at a time, in topological order, modulo word primes; then Chinese
remaindering and rational reconstruction of the wanted unknowns only.

Why. A model checker's chain is nearly acyclic (nand: no cycle at all; crowds 4-10:
19,514 components of at most 30 states), and Storm's exact mode exploits it: its
default solver for DTMCs, ``TopologicalLinearEquationSolver``, solves one component at
a time in topological order, a one-state component in one pass over its row, a larger
one by LU. Here the components come from
:func:`~ladders.solver.chains.components.strong_components` (Tarjan 1972), numbered so
that every unknown is met after those it depends on, and modulo each prime ``p``:

- a one-state component i: ``x_i = (b_i - sum_{j != i} a_ij x_j) a_ii^-1 (mod p)``,
  one multiply-add a nonzero; the inverses of the distinct diagonals are taken at once
  by Montgomery's trick (three products each, one inversion a prime);
- a component of k > 1 states: its k x k block, the right-hand side less the terms of
  the components solved before, by Gauss-Jordan elimination mod p (``k^3`` products;
  the engine declines chains whose blocks make that large: :func:`fits`).

Primes lie in ``(2^29, 2^30)``: a residue times a residue is below ``2^60``, so three
products and a residue add up below ``2^62`` before one reduction, which takes a
float64 quotient estimate and one correction (no division instruction). The primes of
a batch are solved together (the inner loops run over :data:`BATCH` primes, the
pattern is read once a batch). Exact rationals (gmpy2 ``mpq``) in the same order were
measured 11 to 160 times slower on crowds, egl and nand, and even on brp, whose answers
have 1,421 digits (``scripts/bench_topological.py``; docs/benchmarks.md).

Only the wanted unknowns (the target, or the start states a least or greatest is
taken over) are reconstructed: running Chinese remainders (Garner), Wang's rational
reconstruction (the half-gcd of :func:`~ladders.solver.engines.series.reconstruct.rational_reconstruct`)
from every batch but the last, and the candidate must agree with the last batch's
residues (:data:`BATCH` primes it was not built from) before it is taken: a wrong
fraction ``u/v`` passes a prime q only if q divides ``u D - v N``, at most ``bits/29``
of the ~2.6e7 primes in the range, so the chance is below ``(bits / 7.5e8)^8``.
The answer is then checked as every engine's is (bounds, residues), by code that
shares nothing with this.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ladders.solver.engines.series.jit import nb
from ladders.solver.chains.components import Components, strong_components
from ladders.solver.exact import mpq, mpz, next_prime
from ladders.solver.engines.series.reconstruct import rational_reconstruct
from ladders.solver.system import LinearSystem

#: Primes solved together by one call of the kernel.
BATCH = 8
#: The primes lie in ``[PRIME_LOW, PRIME_HIGH)``.
PRIME_LOW, PRIME_HIGH = 1 << 29, 1 << 30
#: Most products of the dense solves of the components of more than one state
#: (``sum k^3``, an upper bound of Gauss-Jordan's) a prime for which the engine takes a
#: system: about a tenth of a second a prime compiled (crowds 4-20: 462 components of
#: up to 60 states, 1.0e8, 39 ms a prime); beyond, where a component is large, a
#: factorization that keeps the sparsity (the modular engine) does better.
DENSE_WORK = 250_000_000
#: ... and where every component is small (at most :data:`SMALL_COMPONENT` unknowns),
#: at most :data:`SMALL_DENSE_WORK` products a prime: the blocks are then many and
#: alike, each solved in cache, and a factorization of the whole system does their
#: work again with worse locality (crowds 6-15: 7,752 components of 45 unknowns,
#: 7.1e8 products a prime, solved in 3.9 s here, where the modular engine took 73 s,
#: 69 s of it factoring; crowds 6-20: 21,252 of 60, 4.6e9).
SMALL_COMPONENT = 100
SMALL_DENSE_WORK = 20_000_000_000
#: Primes tried in vain (each dividing a pivot) before the system is called singular.
MAX_FAILED = 64


@nb.njit(cache=True, nogil=True, inline="always")
def _reduce(v: int, p: int, pinv: float) -> int:
    """``v mod p`` for ``0 <= v < 2^62`` and ``p < 2^30``: a float64 quotient, off by at
    most one, then one correction."""
    r = v - np.int64(np.float64(v) * pinv) * p
    if r < 0:
        r += p
    elif r >= p:
        r -= p
    return r


@nb.njit(cache=True, nogil=True)
def _residue(v: int, p: int, pinv: float) -> int:
    """``v mod p`` in ``[0, p)`` for any ``|v| < 2^62``."""
    if v >= 0:
        return _reduce(v, p, pinv)
    r = _reduce(-v, p, pinv)
    return p - r if r else 0


@nb.njit(cache=True, nogil=True)
def _inverse(a: int, p: int) -> int:
    """``a^-1 mod p`` for ``0 < a < p`` (extended Euclid)."""
    t, new_t, r, new_r = 0, 1, p, a
    while new_r:
        q = r // new_r
        t, new_t = new_t, t - q * new_t
        r, new_r = new_r, r - q * new_r
    return t + p if t < 0 else t


@nb.njit(cache=True, nogil=True)
def _pivot_inverses(pivots: np.ndarray, primes: np.ndarray, pinv: np.ndarray,
                    valid: np.ndarray) -> np.ndarray:
    """``pivots[u]^-1 mod primes[b]`` for every u and b by Montgomery's trick; a prime
    that divides a pivot is marked not ``valid``."""
    count, batch = pivots.shape[0], primes.shape[0]
    inv = np.zeros((count, batch), dtype=np.int64)
    prefix = np.empty(count, dtype=np.int64)
    for b in range(batch):
        p, pi = primes[b], pinv[b]
        running = 1
        for u in range(count):
            running = _reduce(running * _residue(pivots[u], p, pi), p, pi)
            prefix[u] = running
        if count == 0:
            continue
        if running == 0:
            valid[b] = False
            continue
        t = _inverse(running, p)
        for u in range(count - 1, 0, -1):
            inv[u, b] = _reduce(t * prefix[u - 1], p, pi)
            t = _reduce(t * _residue(pivots[u], p, pi), p, pi)
        inv[0, b] = t
    return inv


@nb.njit(cache=True, nogil=True)
def _dense(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rhs: np.ndarray,
           rows: np.ndarray, local: np.ndarray, x: np.ndarray, primes: np.ndarray,
           pinv: np.ndarray, valid: np.ndarray) -> None:
    """One component of several unknowns ``rows``, for every prime: its block and
    right-hand side (less the solved components' terms) by Gauss-Jordan mod p."""
    k, m = rows.shape[0], rhs.shape[1]
    for li in range(k):
        local[rows[li]] = li
    block = np.empty((k, k + m), dtype=np.int64)
    for b in range(primes.shape[0]):
        if not valid[b]:
            continue
        p, pi = primes[b], pinv[b]
        block[:, :] = 0
        for li in range(k):
            r = rows[li]
            for col in range(m):
                block[li, k + col] = _residue(rhs[r, col], p, pi)
            for e in range(indptr[r], indptr[r + 1]):
                j = indices[e]
                a = _residue(data[e], p, pi)
                if local[j] >= 0:
                    block[li, local[j]] = _reduce(block[li, local[j]] + a, p, pi)
                elif a:
                    for col in range(m):
                        block[li, k + col] = _reduce(block[li, k + col] + (p - a) * x[j, col, b],
                                                     p, pi)
        for c in range(k):
            piv = -1
            for r in range(c, k):
                if block[r, c]:
                    piv = r
                    break
            if piv < 0:
                valid[b] = False
                break
            if piv != c:
                for t in range(k + m):
                    block[c, t], block[piv, t] = block[piv, t], block[c, t]
            inv = _inverse(block[c, c], p)
            for t in range(c, k + m):
                block[c, t] = _reduce(block[c, t] * inv, p, pi)
            for r in range(k):
                f = block[r, c]
                if r != c and f:
                    g = p - f
                    for t in range(c, k + m):
                        block[r, t] = _reduce(block[r, t] + g * block[c, t], p, pi)
        if valid[b]:
            for li in range(k):
                for col in range(m):
                    x[rows[li], col, b] = block[li, k + col]
    for li in range(k):
        local[rows[li]] = -1


def _small_batch(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rhs: np.ndarray,
                 start: np.ndarray, pivot_of: np.ndarray, pivots: np.ndarray,
                 primes: np.ndarray, *_: object) -> int | None:
    """:func:`_solve_batch`'s time as Python, in microseconds, for at most 1,000
    unknowns (:class:`~ladders.solver.engines.series.jit.Kernel`): about 6 a
    transition, a prime and a right-hand side, and the cube of each larger
    component's size a prime."""
    if indptr.shape[0] > 1_001:
        return None
    sizes = np.diff(start)
    per_prime = 6 * (indptr.shape[0] + indices.shape[0]) * rhs.shape[1] + \
        int((sizes[sizes > 1] ** 3).sum())
    return per_prime * primes.shape[0]


@nb.njit(cache=True, nogil=True, small=_small_batch)
def _solve_batch(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rhs: np.ndarray,
                 start: np.ndarray, pivot_of: np.ndarray, pivots: np.ndarray,
                 primes: np.ndarray, wanted: np.ndarray, out: np.ndarray,
                 valid: np.ndarray, x: np.ndarray, local: np.ndarray) -> None:
    """``x[wanted] mod primes[b]`` into ``out[b, w, col]`` by the topological solve (see
    the module docstring) of a system numbered in solve order (component c is rows
    ``start[c]:start[c + 1]``); ``valid[b]`` is cleared for a prime that divides a
    pivot. ``x`` (``(n, m, batch)`` residues, int32: every prime is below ``2^30``) and
    ``local`` (n entries, all -1) are the caller's, allocated once for every batch
    (nand 40-4: 232 MB of int64 zeros a batch cost more in page faults than the solve);
    every unknown's residues are written before they are read, in solve order."""
    m, batch = rhs.shape[1], primes.shape[0]
    pinv = 1.0 / primes.astype(np.float64)
    inv = _pivot_inverses(pivots, primes, pinv, valid)
    acc = np.empty((m, batch), dtype=np.int64)
    small = PRIME_LOW
    for c in range(start.shape[0] - 1):
        lo, hi = start[c], start[c + 1]
        if hi - lo > 1:
            _dense(indptr, indices, data, rhs, np.arange(lo, hi), local, x, primes, pinv, valid)
            continue
        r = lo
        for col in range(m):
            v = rhs[r, col]
            for b in range(batch):
                acc[col, b] = _residue(v, primes[b], pinv[b])
        terms = 0
        for e in range(indptr[r], indptr[r + 1]):
            j = indices[e]
            if j == r:
                continue
            a = -np.int64(data[e])
            if 0 <= a < small:             # below every prime: the same residue for all
                for col in range(m):
                    for b in range(batch):
                        acc[col, b] += a * x[j, col, b]
            else:
                for b in range(batch):
                    ab = _residue(a, primes[b], pinv[b])
                    for col in range(m):
                        acc[col, b] += ab * x[j, col, b]
            terms += 1
            if terms == 3:                 # 3 products and a residue stay below 2^62
                terms = 0
                for col in range(m):
                    for b in range(batch):
                        acc[col, b] = _reduce(acc[col, b], primes[b], pinv[b])
        u = pivot_of[r]
        for col in range(m):
            for b in range(batch):
                p, pi = primes[b], pinv[b]
                x[r, col, b] = _reduce(_reduce(acc[col, b], p, pi) * inv[u, b], p, pi)
    for w in range(wanted.shape[0]):
        for col in range(m):
            for b in range(batch):
                out[b, w, col] = x[wanted[w], col, b]


@dataclass(frozen=True)
class Structure:
    """What the topological solve needs of a system, found once: its components
    (:class:`~ladders.solver.chains.components.Components` of ``A``'s pattern), the
    system renumbered in solve order (``indptr``, ``indices``, ``data``, ``rhs``;
    unknown i is row ``position[i]``: the kernel then reads the arrays in order, and
    Tarjan's post-order puts an unknown's successors just before it, so that the
    values it reads were written lately; nand 40-1: 39 -> 20 ms a batch), the distinct
    diagonals of the one-unknown components (``pivots``) and which one each row has
    (``pivot_of``, in solve order; -1 in a larger component), and the dense work a
    prime (``sum k^3`` over the larger components)."""

    components: Components
    pivots: np.ndarray
    pivot_of: np.ndarray
    dense_work: int
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    rhs: np.ndarray
    position: np.ndarray

    @property
    def largest(self) -> int:
        return self.components.largest

    def kernel_arrays(self) -> dict[str, np.ndarray]:
        """What :class:`Residues` reads, by name (a stored run keeps them for its
        workers: :mod:`ladders.checkpoints.components`)."""
        return {"indptr": self.indptr, "indices": self.indices, "data": self.data,
                "rhs": self.rhs, "start": self.components.start, "pivot_of": self.pivot_of,
                "pivots": self.pivots}

    def describe(self) -> str:
        """The structure in one phrase (the plan and the solve's opening line)."""
        comps = self.components
        if comps.count == 1:
            return f"1 strongly connected component of {self.largest:,} unknowns"
        return (f"{comps.count:,} strongly connected components, the largest of "
                f"{self.largest:,} unknown{'s' if self.largest > 1 else ''}")


def structure(system: LinearSystem) -> Structure:
    """The components and pivots of ``system`` (see :class:`Structure`). The copy in
    solve order keeps 32-bit column indices, pivot numbers and positions, and 32-bit
    entries where every entry fits (a chain's are its rows' numerators), where the
    system has fewer than ``2^31`` unknowns and entries: 40 % fewer bytes than int64
    (nand 60-4, 17 million unknowns: about 0.9 GB fewer)."""
    comps = strong_components(system.indptr, system.indices)
    n, nnz = system.size, system.nnz
    index = np.int32 if max(n, nnz) < 1 << 31 else np.int64
    rows = np.repeat(np.arange(n, dtype=index), np.diff(system.indptr))
    diagonal = np.zeros(n, dtype=np.int64)
    on = system.indices == rows
    del rows
    at = np.flatnonzero(on)
    del on
    diagonal[system.indices[at]] = system.data[at]
    del at
    single = comps.sizes[comps.of] == 1
    pivot_of = np.full(n, -1, dtype=index)
    values = diagonal[single]
    del diagonal
    if len(values) and 0 <= values.min() and values.max() < 1 << 20:
        # small diagonals (a chain's row denominators): distinct values by counting
        present = np.zeros(int(values.max()) + 1, dtype=np.int64)
        present[values] = 1
        pivots = np.flatnonzero(present)
        pivot_of[single] = (np.cumsum(present) - 1)[values]
    else:
        pivots, inverse = np.unique(values, return_inverse=True)
        pivot_of[single] = inverse
    del values, single
    sizes = comps.sizes[comps.sizes > 1].astype(object)
    order = comps.order
    position = np.empty(n, dtype=index)
    position[order] = np.arange(n, dtype=index)
    lengths = np.diff(system.indptr)[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    flat = np.repeat((system.indptr[order] - indptr[:-1]).astype(index), lengths)
    del lengths
    flat += np.arange(nnz, dtype=index)
    indices = position[system.indices[flat]]
    entries = np.int32 if nnz == 0 or (
        int(system.data.min()) > -(1 << 31) and int(system.data.max()) < 1 << 31) else np.int64
    data = system.data[flat].astype(entries, copy=False)
    del flat
    return Structure(comps, pivots.astype(np.int64), pivot_of[order], int(sum(sizes ** 3)),
                     indptr, indices, data, system.rhs[order], position)


def fits(found: Structure) -> bool:
    """Whether the component solve takes a system of this structure: its dense solves
    within :data:`DENSE_WORK` products a prime, or within :data:`SMALL_DENSE_WORK` where
    no component has more than :data:`SMALL_COMPONENT` unknowns (pieces that meet and
    herman's rings are one large component: a factorization's)."""
    return found.dense_work <= DENSE_WORK or (found.largest <= SMALL_COMPONENT
                                              and found.dense_work <= SMALL_DENSE_WORK)


def draw_primes(rng: random.Random, count: int, taken: set[int]) -> np.ndarray:
    """``count`` random primes of ``[PRIME_LOW, PRIME_HIGH)`` not in ``taken`` (added)."""
    out: list[int] = []
    while len(out) < count:
        p = int(next_prime(rng.randrange(PRIME_LOW, PRIME_HIGH - (1 << 16))))
        if p not in taken:
            taken.add(p)
            out.append(p)
    return np.array(out, dtype=np.int64)


def prime_sequence(seed: int) -> Iterator[int]:
    """The primes of a stored run (:mod:`ladders.checkpoints.components`) in order, all
    distinct: those :func:`draw_primes` draws from ``random.Random(seed)``, so that
    batch k means the same primes in every session."""
    rng, taken = random.Random(seed), set[int]()
    while True:
        yield int(draw_primes(rng, 1, taken)[0])


@dataclass
class TopologicalResult:
    """The wanted unknowns' values (``values[w][col]``), and the figures: primes used
    (``primes``), batches, and the seconds of each stage."""

    values: list[list[mpq]]
    primes: int
    batches: int
    seconds: dict[str, float] = field(default_factory=dict)


class _Garner:
    """Running Chinese remainders of a fixed list of residues, prime by prime."""

    def __init__(self, count: int) -> None:
        self.modulus = mpz(1)
        self.values = [mpz(0)] * count

    def add(self, p: int, residues: list[int]) -> None:
        q = mpz(p)
        inv = pow(int(self.modulus % q), -1, p)
        for k, r in enumerate(residues):
            t = (r - int(self.values[k] % q)) * inv % p
            self.values[k] += self.modulus * t
        self.modulus *= q


def solve_topological(system: LinearSystem, found: Structure, wanted: list[int],
                      seed: int | None = None) -> TopologicalResult:
    """The exact values of unknowns ``wanted`` for every right-hand side of ``system``,
    by the topological solve modulo batches of primes until a reconstruction from all
    batches but the last agrees with the last (see the module docstring).
    ``ArithmeticError`` where :data:`MAX_FAILED` primes all divide a pivot."""
    t0 = time.perf_counter()
    rng = random.Random(seed)
    taken: set[int] = set()
    rebuilt = Reconstruction(len(wanted), system.columns)
    want = found.position[np.array(wanted, dtype=np.int64)]
    residues = Residues(found.kernel_arrays(), want)
    failed = batches = 0
    seconds = {"residues": 0.0, "reconstruction": 0.0}
    while True:
        primes = draw_primes(rng, BATCH, taken)
        t1 = time.perf_counter()
        out, valid = residues.solve(primes)
        seconds["residues"] += time.perf_counter() - t1
        batches += 1
        failed += int((~valid).sum())
        if failed > MAX_FAILED:
            raise ArithmeticError(f"{failed} random primes all divide a pivot: is the system "
                                  "singular?")
        t1 = time.perf_counter()
        done = rebuilt.add([(int(p), out[b].tolist()) for b, p in enumerate(primes) if valid[b]])
        seconds["reconstruction"] += time.perf_counter() - t1
        if done:
            seconds["total"] = time.perf_counter() - t0
            return TopologicalResult(rebuilt.by_unknown(), len(taken) - failed, batches, seconds)


class Residues:
    """The topological solve modulo primes of one structure (its
    :meth:`Structure.kernel_arrays`) for the unknowns at rows ``want``, with the
    kernel's buffers allocated once for every batch (:func:`_solve_batch`)."""

    def __init__(self, arrays: dict[str, np.ndarray], want: np.ndarray) -> None:
        self.args = [arrays[name] for name in ("indptr", "indices", "data", "rhs", "start",
                                               "pivot_of", "pivots")]
        self.want = want
        n, self.columns = len(arrays["indptr"]) - 1, arrays["rhs"].shape[1]
        self._x = np.empty((n, self.columns, BATCH), dtype=np.int32)
        self._local = np.full(n, -1, dtype=np.int64)

    def solve(self, primes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``x[want] mod p`` for every prime ``p`` of ``primes`` (any number of them,
        solved :data:`BATCH` at a time), as ``(len(primes), len(want) * columns)``
        residues (the columns of an unknown together), with whether each prime was valid
        (one that divides a pivot gives none)."""
        out = np.zeros((len(primes), len(self.want), self.columns), dtype=np.int64)
        valid = np.ones(len(primes), dtype=np.bool_)
        for lo in range(0, len(primes), BATCH):
            _solve_batch(*self.args, np.ascontiguousarray(primes[lo:lo + BATCH]), self.want,
                         out[lo:lo + BATCH], valid[lo:lo + BATCH], self._x, self._local)
        return out.reshape(len(primes), -1), valid


class Reconstruction:
    """The wanted values rebuilt from their residues, batch after batch: a batch is
    first held against the candidate the batches before it give (Wang's rational
    reconstruction of their running Chinese remainders), and taken in only where it
    disagrees. ``values`` (``wanted * columns`` fractions, the columns of an unknown
    together) is set once a candidate agrees with a whole batch of primes it was not
    built from (the chance of a wrong one: see the module docstring)."""

    def __init__(self, wanted: int, columns: int) -> None:
        self._garner = _Garner(wanted * columns)
        self.columns = columns
        self.values: list[mpq] | None = None

    def by_unknown(self) -> list[list[mpq]]:
        """``values[w][col]`` of the wanted unknowns, once found."""
        assert self.values is not None, "no candidate has held yet"
        m = self.columns
        return [self.values[k:k + m] for k in range(0, len(self.values), m)]

    @property
    def bits(self) -> int:
        """Bits of the modulus taken in so far."""
        return int(self._garner.modulus.bit_length())

    def add(self, batch: list[tuple[int, list[int]]]) -> bool:
        """Hold ``batch`` (``(p, residues)`` pairs) against the candidate so far; True
        once the values are found (then ``values``), else the batch is taken in."""
        garner = self._garner
        candidate = _candidate(garner) if garner.modulus > 1 else None
        if candidate is not None and batch and all(_agrees(candidate, p, r) for p, r in batch):
            self.values = candidate
            return True
        for p, r in batch:
            garner.add(p, r)
        return False


def _candidate(garner: _Garner) -> list[mpq] | None:
    """Every value reconstructed from the running remainders, or None."""
    out = []
    for v in garner.values:
        f = rational_reconstruct(v, garner.modulus)
        if f is None:
            return None
        out.append(f)
    return out


def _agrees(values: list[mpq], p: int, residues: list[int]) -> bool:
    """Whether every fraction of ``values`` reduces to its residue modulo p."""
    for f, r in zip(values, residues):
        d = int(f.denominator) % p
        if d == 0 or int(f.numerator) * pow(d, -1, p) % p != r:
            return False
    return True
