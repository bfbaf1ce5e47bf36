"""The Chinese-remainder engine's mathematics: many independent solves modulo primes,
combined, reconstructed, and certified like the Dixon engine.

Each prime p gives the whole solution ``x mod p`` from its own sparse LU
(:func:`solve_mod`); primes are independent, so batches of them can run anywhere
(``ladders.cluster.engines.crt`` makes them Dask tasks and keeps their residues in the run store).
The driver folds a few linear forms of every residue vector (the target and
``COMBINATIONS`` random combinations, :func:`ladders.solver.engines.modular.combination_weights`) into running Chinese remainders
(:class:`FormAccumulator`); once the rational reconstructions of those forms leave a
safety margin, their common denominator D is certified exactly by the Dixon certificate
(:meth:`ladders.solver.engines.modular.Lifter.certify`: ``A N = D b`` in integers for every unknown).
A prime that divides a pivot of its LU gives no residues and is skipped.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice

import numpy as np

from ladders.solver.engines.modular import candidate_denominator
from ladders.solver.exact import mpz, prev_prime
from ladders.solver.engines.modp import MAX_PRIME, factor_permuted, lu_solve_mod
from ladders.solver.system import LinearSystem


def crt_primes(seed: int) -> Iterator[int]:
    """The primes of a run, in order: descending from a point below
    :data:`~ladders.solver.engines.modp.MAX_PRIME` that ``seed`` picks, all distinct."""
    p = MAX_PRIME - random.Random(seed).randrange(1 << 20)
    while True:
        p = int(prev_prime(p))
        yield p


def prime_sequence(seed: int, count: int) -> list[int]:
    """The first ``count`` primes of :func:`crt_primes`."""
    return list(islice(crt_primes(seed), count))


def solve_mod(system: LinearSystem, order: np.ndarray,
              permuted: tuple[np.ndarray, np.ndarray, np.ndarray], p: int) -> np.ndarray | None:
    """``x mod p`` for every right-hand side, shape ``(columns, n)`` in pivot-order indexing
    (``x[k, pos]`` is unknown ``order[pos]``), or None if p divides a pivot. ``permuted``
    is ``permute_csr`` of the system by ``order``, made once for all the primes."""
    try:
        lu = factor_permuted(permuted, order, p)
    except ZeroDivisionError:
        return None
    return np.stack([lu_solve_mod(lu, system.rhs[:, k])[order] for k in range(system.columns)])


class FormAccumulator:
    """Running Chinese remainders of the linear forms ``x @ weights`` of every column.

    After primes ``p_1..p_t``: ``values[k][f] = (x_k @ w_f) mod M`` with ``M = prod p_i``.
    Incremental Garner step per prime: ``X += M * ((r - X) M^-1 mod p)``.
    """

    def __init__(self, columns: int, weights: np.ndarray) -> None:
        self.weights = weights
        self.modulus = mpz(1)
        self.values = [[mpz(0)] * weights.shape[1] for _ in range(columns)]
        self.primes = 0

    def add(self, p: int, residues: np.ndarray) -> None:
        """Fold in ``residues`` (``(columns, n)``, values in ``[0, p)``) of prime p."""
        inv = int(pow(int(self.modulus % p), -1, p))
        forms = (residues.astype(np.int64) @ self.weights) % p  # < 2^28 * 2^16 * n: exact
        for k, row in enumerate(forms.tolist()):
            vals = self.values[k]
            for f, r in enumerate(row):
                t = (r - int(vals[f] % p)) * inv % p
                vals[f] = vals[f] + self.modulus * t
        self.modulus *= p
        self.primes += 1

    def candidates(self, margin_bits: int) -> list[mpz] | None:
        """A candidate common denominator per column, or None while any is not yet
        reconstructed with ``margin_bits`` to spare."""
        out = []
        for vals in self.values:
            den = candidate_denominator(vals, self.modulus, margin_bits)
            if den is None:
                return None
            out.append(den)
        return out
