"""The bulk check of a chain's rows (``rows_from_entries``): its 64-bit path gives the
rows that :class:`ChainBuilder`'s transition by transition path gives, and a row it
cannot take (a common denominator past 62 bits) still gets the exact path's message."""

from __future__ import annotations

import numpy as np
import pytest

from ladders.solver.chains.model import ChainBuilder, ChainError, rows_from_entries
from ladders.solver.exact import mpq


def _random_rows(seed: int, n: int) -> list[dict[int, mpq]]:
    """Random rows; an even seed gives some empty ones (made absorbing), an odd one
    none (a built model's rows, the path without a row index a transition)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        k = int(rng.integers(seed % 2, 5))
        targets = sorted(set(rng.integers(0, n, size=k).tolist()))
        dens = [int(d) for d in rng.choice([2, 3, 5, 7, 10, 50, 1000], size=len(targets))]
        weights = [mpq(1, d) for d in dens]
        total = sum(weights, mpq(0))
        rows.append({j: w / total for j, w in zip(targets, weights)})
    return rows


@pytest.mark.parametrize("seed", range(5))
def test_bulk_rows_equal_the_builders(seed: int) -> None:
    rows = _random_rows(seed, 200)
    names = [f"s{i}" for i in range(len(rows))]
    one = ChainBuilder("c", "c")
    one.states(names)
    for i, row in enumerate(rows):
        for j in row:
            one.transition(i, j, row[j])
    one.start_at(0)
    expected = one.build()
    values = sorted({v for row in rows for v in row.values()})
    index = {v: k for k, v in enumerate(values)}
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = np.array([j for r in rows for j in r], dtype=np.int64)
    ids = np.array([index[v] for r in rows for v in r.values()], dtype=np.int64)
    got = rows_from_entries("c", names, indptr, indices, values, ids)
    for a, b in zip(got[:4], (expected.indptr, expected.indices, expected.numerators,
                              expected.denominators)):
        assert a.tolist() == b.tolist()
    assert got[4].tolist() == expected.labels.get("deadlock", np.zeros(0)).tolist()


def test_a_denominator_past_62_bits_is_refused_by_name() -> None:
    big = [mpq(1, 2**40), mpq(1, 3**26)]
    values = [big[0], big[1], 1 - big[0] - big[1]]
    with pytest.raises(ChainError, match=r"the transitions from 'a' need a common denominator "
                                         r"of \d+ bits; the limit is 62 bits"):
        rows_from_entries("c", ["a", "b", "c"], np.array([0, 3, 3, 3]), np.array([0, 1, 2]),
                          values, np.array([0, 1, 2]))
