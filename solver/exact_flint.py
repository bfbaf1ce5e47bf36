"""The one module that imports python-flint, and the crossings between its numbers and
those of the rest of `ladders`.

gmpy2 is the ground type of every exact answer (:mod:`ladders.solver.exact`). python-flint
is a second one, kept for what gmpy2 has not: integer and rational matrices (a
characteristic polynomial, the p-adic Dixon solver, a product of big-integer matrices)
and polynomials over Q with an extended gcd; the series engine's chain data, its two
players over Q and its two-player table use them. Their numbers (``fmpz``, ``fmpq``)
are other types than gmpy2's (``mpz``, ``mpq``), Python's and numpy's. So that the
libraries meet in one place, the flint types are imported from here, the conversions
between them and the others are written here once (``X_to_Y``), and no other module
imports flint (``tests/test_layers.py`` guards it, as it guards gmpy2's one module).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from flint import fmpq, fmpq_mat, fmpq_poly, fmpz_mat, fmpz_poly

from ladders.solver.exact import mpq, mpz

__all__ = [
    "fmpq",
    "fmpq_mat",
    "fmpq_poly",
    "fmpz_mat",
    "fmpq_to_mpq",
    "fmpz_poly_to_ints",
    "array_to_fmpz_mat",
    "ints_to_fmpz_column",
    "fmpz_mat_to_mpz",
]


def fmpq_to_mpq(x: fmpq) -> mpq:
    """A flint rational as gmpy2's."""
    return mpq(mpz(int(x.p)), mpz(int(x.q)))


def fmpz_poly_to_ints(poly: fmpz_poly) -> tuple[int, ...]:
    """The coefficients of an integer polynomial, low to high, as Python ints."""
    return tuple(int(c) for c in poly.coeffs())


def array_to_fmpz_mat(array: np.ndarray) -> fmpz_mat:
    """A 2-D numpy array of integers (any integer dtype, any strides) as a flint matrix."""
    rows, cols = array.shape
    return fmpz_mat(rows, cols, array.ravel().tolist())


def ints_to_fmpz_column(values: Sequence[int | mpz]) -> fmpz_mat:
    """Integers (Python's or gmpy2's) as a flint column vector (``len(values) x 1``)."""
    return fmpz_mat(len(values), 1, [int(v) for v in values])


def fmpz_mat_to_mpz(matrix: fmpz_mat) -> list[mpz]:
    """The entries of a flint integer matrix, row by row, as gmpy2 integers."""
    return [mpz(int(x)) for x in matrix.entries()]
