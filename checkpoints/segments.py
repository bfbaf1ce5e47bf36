"""Segments: groups of exact sparse rows, written once into the Zarr run store.

A segment is a Zarr v3 group of plain one-chunk arrays (each protected by a crc32c
codec). Rows are one ``uint8`` array ``rows``: an index of ``uint64`` words
``[m, nnz, row_ids (m), row_ptr (m+1), cols (nnz), val_ptr (nnz+1)]`` followed by the
payload, the integers one after another (sign and magnitude, see
:func:`ladders.solver.exact.mpz_to_bytes`), value k at ``payload[val_ptr[k]:val_ptr[k+1]]``.
One array, not two: on a store of small tasks, every Zarr array costs a metadata file
and a chunk file, and that (not the bytes) was most of a segment's write time.

No object or variable-length dtypes: any Zarr reader sees plain arrays. A BLAKE2b
digest over the arrays is returned when writing and checked when reading, so a
segment that was changed or cut short after its manifest was committed is refused.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ladders.checkpoints.errors import SegmentError, damaged_store
from ladders.solver.exact import mpz, mpz_from_bytes, mpz_to_bytes

if TYPE_CHECKING:
    from ladders.checkpoints.backend import Backend

Row = dict[int, mpz]


@dataclass(frozen=True)
class SegmentRef:
    """Where a segment lives (relative to the store root) and what it must hash to."""

    path: str
    digest: str
    rows: int
    nbytes: int

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "digest": self.digest, "rows": self.rows, "nbytes": self.nbytes}

    @classmethod
    def from_json(cls, data: dict) -> SegmentRef:
        return cls(str(data["path"]), str(data["digest"]), int(data["rows"]), int(data["nbytes"]))


def encode_rows(rows: dict[int, Row]) -> np.ndarray:
    """Rows -> one ``uint8`` array: the ``uint64`` index, then the payload.

    Each row keeps its own column order, so that :func:`decode_rows` gives back the
    dicts the kernel made, in the same order: the order decides which entries start a
    row's content gcd (:func:`ladders.solver.engines.elimination.remove_content`), and
    on ``hasbro`` cut at 60 rows re-sorted by column made the elimination 12 % slower.
    """
    ids = sorted(rows)
    row_ptr = [0]
    cols: list[int] = []
    blobs: list[bytes] = []
    for i in ids:
        for c, v in rows[i].items():
            cols.append(c)
            blobs.append(mpz_to_bytes(v))
        row_ptr.append(len(cols))
    val_ptr = np.zeros(len(blobs) + 1, dtype=np.uint64)
    if blobs:
        np.cumsum([len(b) for b in blobs], out=val_ptr[1:])
    index = np.concatenate([
        np.array([len(ids), len(cols)], dtype=np.uint64),
        np.asarray(ids, dtype=np.uint64), np.asarray(row_ptr, dtype=np.uint64),
        np.asarray(cols, dtype=np.uint64), val_ptr,
    ])
    return np.frombuffer(index.tobytes() + b"".join(blobs), dtype=np.uint8)


def decode_rows(data: np.ndarray) -> dict[int, Row]:
    """Inverse of :func:`encode_rows`."""
    raw = data.tobytes()
    if len(raw) < 16:
        raise SegmentError("segment too short for its index")
    m, nnz = (int(v) for v in np.frombuffer(raw[:16], dtype=np.uint64))
    words = 2 * m + 2 * nnz + 4
    if len(raw) < 8 * words:
        raise SegmentError("segment index and payload do not fit together")
    index = np.frombuffer(raw[:8 * words], dtype=np.uint64)
    at = 2
    ids = index[at:at + m].tolist()
    at += m
    row_ptr = index[at:at + m + 1].tolist()
    at += m + 1
    cols = index[at:at + nnz].tolist()
    at += nnz
    val_ptr = index[at:at + nnz + 1].tolist()
    base = 8 * words
    if val_ptr[-1] != len(raw) - base:
        raise SegmentError("segment index and payload do not fit together")
    values = [mpz_from_bytes(raw[base + val_ptr[k]:base + val_ptr[k + 1]]) for k in range(nnz)]
    rows: dict[int, Row] = {}
    for r, i in enumerate(ids):
        lo, hi = row_ptr[r], row_ptr[r + 1]
        rows[i] = dict(zip(cols[lo:hi], values[lo:hi]))
    return rows


def digest_arrays(*arrays: np.ndarray) -> str:
    """BLAKE2b over the arrays' bytes, in order: what a manifest records for a segment."""
    h = hashlib.blake2b(digest_size=20)
    for k, arr in enumerate(arrays):
        if k:
            h.update(b"|")
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def _metadata(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    """The Zarr metadata of a segment: a group of plain one-chunk arrays (crc32c, chunk
    keys ``NAME/0``), made in memory without touching the store."""
    import zarr
    from zarr.codecs import Crc32cCodec
    from zarr.core.group import GroupMetadata
    scratch = zarr.storage.MemoryStore()
    nodes: dict[str, Any] = {"": GroupMetadata(zarr_format=3)}
    for name, data in arrays.items():
        nodes[name] = zarr.create_array(
            scratch, name=name, shape=data.shape, chunks=tuple(max(1, d) for d in data.shape),
            dtype=data.dtype, compressors=[Crc32cCodec()], fill_value=0, zarr_format=3,
            chunk_key_encoding={"name": "v2", "separator": "."}).metadata
    return nodes


def write_arrays(backend: Backend, path: str, arrays: dict[str, np.ndarray], rows: int) -> SegmentRef:
    """Write named plain arrays (one chunk each, crc32c) as a new segment at ``path`` of
    the store (which must not exist yet); ``rows`` is what the reference reports as its
    size. The group and its arrays are created in one step (on object storage their
    metadata go out together, not one request after another), then each chunk."""
    import zarr  # here, not at import: a solve that keeps no store never loads it
    from zarr.storage import StorePath
    target = backend.zarr_store(path, "w-")
    # a store rooted at the segment (folders, buckets), or a path in one (memory://)
    store, base = (target.store, target.path) if isinstance(target, StorePath) else (target, "")
    nodes = {f"{base}/{key}".strip("/"): meta for key, meta in _metadata(arrays).items()}
    made = dict(zarr.create_hierarchy(store=store, nodes=nodes))
    for name, data in arrays.items():
        if data.size:
            made[f"{base}/{name}".strip("/")][...] = data
    return SegmentRef(path, digest_arrays(*arrays.values()), rows,
                      int(sum(a.nbytes for a in arrays.values())))


def read_arrays(backend: Backend, ref: SegmentRef, names: tuple[str, ...],
                way_out: str | None = None) -> dict[str, np.ndarray]:
    """Read and check a segment's arrays; :class:`SegmentError` if it is not what ``ref``
    says, with ``way_out`` (by default: the store is damaged beyond repair)."""
    way_out = damaged_store(backend.url) if way_out is None else way_out
    import zarr
    try:
        group = zarr.open_group(backend.zarr_store(ref.path, "r"), mode="r", zarr_format=3)
        arrays = {name: group[name][...] for name in names}
    except Exception as exc:  # zarr raises many kinds: missing keys, crc32c mismatch, ...
        raise SegmentError(f"segment {ref.path} cannot be read ({type(exc).__name__}: {exc})",
                           way_out) from exc
    if digest_arrays(*arrays.values()) != ref.digest:
        raise SegmentError(f"segment {ref.path} does not match its manifest checksum "
                           "(changed or damaged after it was committed)", way_out)
    return arrays


def adopt_segment(backend: Backend, path: str, names: tuple[str, ...]) -> SegmentRef:
    """The reference of a segment that no manifest lists (every manifest of its store is
    lost), once it is known whole: every array ``names`` holds has its chunk (a missing
    chunk would read back as zeros), each chunk passes its crc32c, and the digest is
    computed afresh. Its rows are the length of the first array. :class:`SegmentError`
    when it is not whole (a task stopped while writing it)."""
    import zarr
    keys = {key[len(path) + 1:] for key in backend.list(path)}
    try:
        group = zarr.open_group(backend.zarr_store(path, "r"), mode="r", zarr_format=3)
        arrays = {}
        for name in names:
            array = group[name]
            chunk = f"{name}/{array.metadata.encode_chunk_key((0,) * array.ndim)}"
            if array.size and chunk not in keys:
                raise FileNotFoundError(chunk)
            arrays[name] = array[...]
    except Exception as exc:  # zarr raises many kinds: missing keys, crc32c mismatch, ...
        raise SegmentError(f"segment {path} is not whole ({type(exc).__name__}: {exc})") from exc
    return SegmentRef(path, digest_arrays(*arrays.values()), int(arrays[names[0]].shape[0]),
                      int(sum(a.nbytes for a in arrays.values())))


def write_segment(backend: Backend, path: str, rows: dict[int, Row]) -> SegmentRef:
    """Write ``rows`` as a new segment at ``path`` of the store (which must not exist yet)."""
    return write_arrays(backend, path, {"rows": encode_rows(rows)}, len(rows))


def read_segment(backend: Backend, ref: SegmentRef) -> dict[int, Row]:
    """Read and check a segment of rows (see :func:`read_arrays`). Where it is damaged,
    the next resume goes back to a manifest whose rows read whole
    (:func:`~ladders.checkpoints.elimination.recovery`), and the error says so."""
    return decode_rows(read_arrays(
        backend, ref, ("rows",),
        f"'ladders resume {backend.url}' goes back to the newest manifest whose rows read "
        "whole and computes again what came after")["rows"])


class RowsCache:
    """Decoded segments of rows one process keeps, by digest, the least recently used
    dropped first once their encoded bytes pass ``limit``: a Dask worker often runs the
    next elimination task on the group it just updated, and every ``U(b, .)`` needs
    ``F(b)``. A segment over half the limit is not kept. The rows are shared, not copied:
    the kernels never change rows in place."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._rows: OrderedDict[str, tuple[dict[int, Row], int]] = OrderedDict()
        self._bytes = 0

    def get(self, ref: SegmentRef) -> dict[int, Row] | None:
        """The rows of ``ref`` if kept (now the most recently used), else None."""
        hit = self._rows.get(ref.digest)
        if hit is None:
            return None
        self._rows.move_to_end(ref.digest)
        return hit[0]

    def put(self, ref: SegmentRef, rows: dict[int, Row]) -> None:
        """Keep ``rows`` under ``ref``'s digest (counted once if kept already)."""
        if ref.nbytes > self.limit // 2:
            return
        old = self._rows.pop(ref.digest, None)
        if old is not None:
            self._bytes -= old[1]
        self._rows[ref.digest] = (rows, ref.nbytes)
        self._bytes += ref.nbytes
        while self._bytes > self.limit:
            _, (_, nbytes) = self._rows.popitem(last=False)
            self._bytes -= nbytes
