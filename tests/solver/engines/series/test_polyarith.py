"""Polynomial arithmetic modulo a word-size prime
(:mod:`ladders.solver.engines.series.polyarith`): the divide-and-conquer exponential and
the transforms' tables of roots."""

from __future__ import annotations

import random

import pytest

from ladders.solver.engines import series


@pytest.mark.parametrize("count", [1, 31, 32, 33, 64, 100, 700])
def test_exponential_by_blocks_equals_newtons_identities(count):
    # the divide-and-conquer exponential (transforms, or schoolbook with nmax = 0)
    # against the quadratic recurrence it replaces
    import numpy as np
    from ladders.solver.engines.series import montgomery as mt
    from ladders.solver.engines.series import polyarith as pa
    q = next(series.ntt_primes(count))
    w, k = series.reconstruct.ntt_root(q)
    fp = mt.field(q)
    rng = random.Random(count)
    psums = np.array([0] + [rng.randrange(q) for _ in range(count)], dtype=np.uint64)
    inv = mt.inverses_upto(count, fp)
    ref = pa.series_exp_neg(psums, count, fp, inv)
    nmax = 1 << 12
    omega = np.uint64(mt.to_mont(np.uint64(w), fp))  # numba hands back a Python int
    roots, iroots = pa.ntt_tables(omega, k, nmax, fp)
    for size in (nmax, 0):
        got = pa.series_exp_neg_fast(psums, count, fp, inv, roots, iroots, size)
        assert (got == ref).all()


def _field(nmax: int):
    """An NTT prime q with transforms up to ``nmax`` points: ``(q, w, k, fp, roots,
    iroots)``, w of order ``2^k`` mod q, fp its :class:`montgomery.Field`, the tables of
    :func:`polyarith.ntt_tables`."""
    import numpy as np
    from ladders.solver.engines.series import montgomery as mt
    from ladders.solver.engines.series import polyarith as pa
    q = next(series.ntt_primes(nmax))
    w, k = series.reconstruct.ntt_root(q)
    fp = mt.field(q)
    omega = np.uint64(mt.to_mont(np.uint64(w), fp))
    roots, iroots = pa.ntt_tables(omega, k, nmax, fp)
    return q, w, k, fp, roots, iroots


@pytest.mark.parametrize("nmax", [2, 4, 8, 1 << 13])
def test_transform_tables_hold_every_stages_powers_of_its_root(nmax):
    # entry len + j of a stage: w^j and w^-j for w of order 2 len, plain and with its
    # Shoup companion floor(x 2^64 / p); the tables derive the lower stages and the
    # inverses from the top stage's powers
    q, w, k, _fp, roots, iroots = _field(nmax)
    length = nmax // 2
    while length >= 1:
        root = pow(w, (1 << k) // (2 * length), q)             # order 2 length
        for j in range(length):
            for table, x in ((roots, pow(root, j, q)), (iroots, pow(root, -j, q))):
                assert int(table[0, length + j]) == x
                assert int(table[1, length + j]) == (x << 64) // q
        length //= 2


@pytest.mark.parametrize("levels", [12, 13, 14, 15, 16, 17])
def test_depth_first_transforms_multiply_as_schoolbook(levels):
    # transforms above NTT_BLOCK points go depth first (the passes over the whole array,
    # then block by block): a cyclic product through them equals the schoolbook one, for
    # sizes on both sides of the block and both parities of the number of stages; the
    # short factor keeps the schoolbook cheap, the long one fills the transform
    import numpy as np
    from ladders.solver.engines.series import polyarith as pa
    size = 1 << levels
    q, _w, _k, fp, roots, iroots = _field(size)
    rng = np.random.default_rng(levels)
    lx = 37
    x = rng.integers(0, q, lx, dtype=np.uint64)
    y = rng.integers(0, q, size, dtype=np.uint64)         # lx - 1 terms wrap around
    empty = np.zeros(0, dtype=np.uint64)
    fast = pa.cyclic_mul(x, lx, y, y.size, size, roots, iroots, np.int64(size), fp, empty)
    slow = pa.cyclic_mul(x, lx, y, y.size, size, roots, iroots, np.int64(0), fp, empty)
    assert size > pa.NTT_BLOCK or levels <= 13
    assert (fast == slow).all()
