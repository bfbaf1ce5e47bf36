"""Files written whole (:mod:`ladders.checkpoints.files`): the parallel gzip is one
gzip stream of its chunks."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

from ladders.checkpoints.files import MEMBER_BYTES, gzip_members


@pytest.mark.parametrize("sizes", [[], [0], [5], [MEMBER_BYTES - 1, 1, 7], [3 * MEMBER_BYTES + 11, 2, MEMBER_BYTES]])
def test_gzip_members_is_one_gzip_stream_of_the_chunks(sizes: list[int]) -> None:
    rng = np.random.default_rng(len(sizes))
    chunks = [rng.integers(48, 58, size, dtype=np.uint8).tobytes() for size in sizes]
    packed = gzip_members(iter(chunks))
    assert gzip.decompress(packed) == b"".join(chunks)
    assert packed == gzip_members(chunks, threads=1)             # the same bytes however run
    members, rest = 0, packed
    while rest:
        reader = zlib.decompressobj(31)
        reader.decompress(rest)
        assert reader.eof
        members, rest = members + 1, reader.unused_data
    assert (members > 1) == (sum(sizes) > MEMBER_BYTES)           # compressed in parallel
