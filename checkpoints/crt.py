"""Batches of primes for the ``crt`` engine: the task a worker runs, and its residues.

A batch is a list of primes. :func:`run_crt_batch` solves the run's system modulo each
(:func:`ladders.solver.engines.crt.solve_mod`) and writes one write-once segment
``residues/bKKKKK-<attempt>`` with three plain arrays (crc32c on each chunk):

- ``primes``   uint64 ``(B,)``
- ``valid``    uint8 ``(B,)``: 0 where the prime divided a pivot (no residues)
- ``residues`` uint32 ``(B, columns, n)``: ``x mod p`` in pivot-order indexing

The driver commits a manifest listing the batch with the segment's digest; only then
does the batch count. Like the elimination tasks, a batch run twice leaves one
unreferenced segment, which :meth:`~ladders.checkpoints.store.RunStore.clear_leftovers` removes on resume.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ladders.checkpoints.batches import batch_store, write_batch
from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.segments import SegmentRef, read_arrays
from ladders.checkpoints.store import RunStore
from ladders.solver.engines.crt import solve_mod
from ladders.solver.engines.modp import permute_csr
from ladders.solver.problem import problem_from_json
from ladders.solver.system import LinearSystem, pivot_order

Permuted = tuple[np.ndarray, np.ndarray, np.ndarray]
_SYSTEMS: dict[tuple[str, str], tuple[LinearSystem, np.ndarray, Permuted]] = {}


def crt_system(store: RunStore) -> tuple[LinearSystem, np.ndarray, Permuted]:
    """The run's system, pivot order (target last) and the system permuted by it, rebuilt
    from run.json and checked against its digest; cached per worker process."""
    key = (store.worker_url, store.run["token"])
    if key not in _SYSTEMS:
        system = problem_from_json(store.run["problem"]).system
        if system.digest() != store.run["system_digest"]:
            raise StoreError(f"{store.url}: the stored problem no longer builds the system it "
                             "was solving (different ladders version?)")
        order = np.asarray(pivot_order(system, "labels"), dtype=np.int64)
        _SYSTEMS[key] = (system, order, permute_csr(system.indptr, system.indices, system.data, order))
    return _SYSTEMS[key]


def run_crt_batch(url: str, token: str, k: int, primes: list[int]) -> dict[str, Any]:
    """Solve the run's system modulo every prime of batch k; write its segment; return
    a small receipt (no residues travel through the scheduler)."""
    t0 = time.perf_counter()
    store = batch_store(url, token, "crt")
    system, order, permuted = crt_system(store)
    residues = np.zeros((len(primes), system.columns, system.size), dtype=np.uint32)
    valid = np.zeros(len(primes), dtype=np.uint8)
    for i, p in enumerate(primes):
        x = solve_mod(system, order, permuted, p)
        if x is not None:
            residues[i] = x
            valid[i] = 1
    return write_batch(store, k, {"primes": np.asarray(primes, dtype=np.uint64), "valid": valid,
                                  "residues": residues}, t0)


def read_batch(store: RunStore, ref: SegmentRef) -> list[tuple[int, np.ndarray]]:
    """``(p, residues)`` of every valid prime of a committed batch (digest checked)."""
    arrays = read_arrays(store.backend, ref, ("primes", "valid", "residues"))
    return [(int(p), arrays["residues"][i]) for i, p in enumerate(arrays["primes"].tolist())
            if arrays["valid"][i]]
