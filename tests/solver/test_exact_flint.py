"""The one module that imports python-flint (:mod:`ladders.solver.exact_flint`): its
numbers cross to gmpy2's and back exactly."""

from __future__ import annotations

from ladders.solver.exact import mpq, mpz


def test_flint_conversions_are_exact() -> None:
    """The crossings of :mod:`ladders.solver.exact_flint`: big and negative values, a
    transposed (strided) uint64 array with entries above 2^63, low-to-high coefficients."""
    import numpy as np

    from ladders.solver import exact_flint as fl
    big = mpz(3) ** 200
    assert fl.fmpq_to_mpq(fl.fmpq(-int(big), int(big) + 2)) == mpq(-big, big + 2)
    values = [big, -big, mpz(0), 7]
    assert fl.fmpz_mat_to_mpz(fl.ints_to_fmpz_column(values)) == values
    array = np.array([[1, 2 ** 64 - 1, 3], [2 ** 63, 5, 6]], dtype=np.uint64)
    assert fl.fmpz_mat_to_mpz(fl.array_to_fmpz_mat(array.T)) == [1, 2 ** 63, 2 ** 64 - 1, 5, 3, 6]
    square = fl.array_to_fmpz_mat(np.array([[1, 2], [3, 4]], dtype=np.int64))
    assert fl.fmpz_poly_to_ints(square.charpoly()) == (-2, -5, 1)     # x^2 - 5x - 2
