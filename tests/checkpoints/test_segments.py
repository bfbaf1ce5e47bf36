"""Segments (:mod:`ladders.checkpoints.segments`): exact sparse rows round-trip, and a
cut one is refused (segments in a run store: ``test_store.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from ladders.checkpoints.errors import SegmentError
from ladders.checkpoints.segments import decode_rows, encode_rows
from ladders.solver.exact import mpz


def test_rows_round_trip_with_huge_and_negative_integers() -> None:
    rows = {3: {7: mpz(10) ** 5000 + 1, 0: mpz(-5), 12: mpz(0) - mpz(2) ** 200}, 9: {}, 11: {1: mpz(1)}}
    data = encode_rows(rows)
    assert data.dtype == np.uint8 and data.ndim == 1
    assert decode_rows(data) == rows
    # each row keeps its column order (the kernel's content gcd starts from it)
    assert [list(row) for row in decode_rows(data).values()] == [[7, 0, 12], [], [1]]
    with pytest.raises(SegmentError):
        decode_rows(data[:-1])


def test_the_rows_cache_keeps_the_most_recent_within_its_bytes() -> None:
    from ladders.checkpoints.segments import RowsCache, SegmentRef
    cache = RowsCache(limit=100)
    refs = [SegmentRef(f"rows/g{i}", f"d{i}", 1, 40) for i in range(3)]
    for i, ref in enumerate(refs[:2]):
        cache.put(ref, {i: {}})
    assert cache.get(refs[0]) == {0: {}}          # now the most recently used
    cache.put(refs[2], {2: {}})                   # 120 bytes: the least recent (1) goes
    assert cache.get(refs[1]) is None and cache.get(refs[0]) == {0: {}}
    cache.put(SegmentRef("rows/big", "big", 1, 51), {9: {}})   # over half the limit
    assert cache.get(SegmentRef("rows/big", "big", 1, 51)) is None
