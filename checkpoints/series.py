"""Batches of primes for the ``series`` engine: the task a worker runs, and its residues.

Batch k holds primes ``k*B .. (k+1)*B - 1`` of the run's prime sequence (fixed by its
seed). :func:`run_series_batch` computes every seat's win probability modulo each
prime (:meth:`ladders.solver.engines.series.SeriesPlan.residues`: one pass shares the power
sums, the denominators and the sequences between the seats) and writes one write-once
segment ``residues/bKKKKK-<attempt>`` with three plain arrays (crc32c on each chunk):

- ``primes``   uint64 ``(B,)``
- ``valid``    uint8 ``(B,)``: 0 where the prime divides a denominator (skipped)
- ``residues`` uint64 ``(B, columns)``: seat j's probability mod p, and for three
  players a last column, the denominator multiple M mod p
  (:attr:`~ladders.solver.engines.series.SeriesPlan.columns`)

The driver commits a manifest listing the batch with the segment's digest; only then
does the batch count. A batch run twice leaves one unreferenced segment, which
:meth:`~ladders.checkpoints.store.RunStore.clear_leftovers` removes on resume. Nothing here rebuilds a linear system: a
worker needs one player's chain only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ladders.checkpoints.batches import BatchState, batch_store, write_batch
from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.segments import SegmentRef, read_arrays
from ladders.checkpoints.store import RunStore
from ladders.solver.engines.series import SeriesPlan, plan_series
from ladders.solver.problem import Problem

#: One plan per worker process and run (the chain's data and the kernel's arguments).
_PLANS: dict[tuple[str, str], SeriesPlan] = {}


def series_plan(store: RunStore) -> SeriesPlan:
    """The run's series plan, rebuilt from run.json and checked against its digest."""
    key = (store.worker_url, store.run["token"])
    if key not in _PLANS:
        problem = Problem.from_json(store.run["problem"])
        plan = plan_series(problem.pieces, problem.players, store.run.get("split"))
        if plan.digest != store.run["system_digest"]:
            raise StoreError(f"{store.url}: the stored problem no longer gives the series it "
                             "was solving (different ladders version?)")
        _PLANS[key] = plan
    return _PLANS[key]


def run_series_batch(url: str, token: str, k: int, primes: list[int]) -> dict[str, Any]:
    """Every seat modulo every prime of batch k; write its segment; return a small
    receipt (no residues travel through the scheduler)."""
    t0 = time.perf_counter()
    store = batch_store(url, token, "series")
    residues, valid = series_plan(store).residues(primes)
    t1 = time.perf_counter()
    return write_batch(store, k, {"primes": np.asarray(primes, dtype=np.uint64),
                                  "valid": np.asarray(valid, dtype=np.uint8),
                                  "residues": np.asarray(residues, dtype=np.uint64)}, t0,
                       compute_seconds=t1 - t0)


def read_batch(store: RunStore, ref: SegmentRef) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(primes, residues, valid)`` of a committed batch (digest checked)."""
    arrays = read_arrays(store.backend, ref, ("primes", "valid", "residues"))
    return arrays["primes"], arrays["residues"], arrays["valid"].astype(bool)


def series_group_terms(url: str, token: str, source: tuple[tuple[dict[str, Any], int], ...],
                       rem: Any, path: Sequence[Any],
                       keep: tuple[int, ...] | None = None) -> list[Any]:
    """A group's part of a reconstruction attempt's CRT, on a worker: its batches read
    from the store (``(segment, rows)``: the first ``rows`` valid primes of each), then
    :func:`~ladders.solver.engines.series.subproducts.group_terms` from its top
    (``Top(rem, path)``), of the columns ``keep`` (None: all)."""
    from ladders.solver.engines.series.subproducts import Top, group_terms, kept_columns
    store = RunStore.open(url, BatchState)
    if store.run.get("token") != token:
        raise StoreError(f"{url} holds another series run than {token[:12]}")
    primes, residues = [], []
    for ref, rows in source:
        p, r, valid = read_batch(store, SegmentRef.from_json(ref))
        primes.append(p[valid][:rows])
        residues.append(r[valid][:rows])
    return group_terms(np.concatenate(primes), kept_columns(np.concatenate(residues), keep),
                       Top(rem, tuple(path)))
