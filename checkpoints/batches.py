"""Residue batches, the store format the prime-based engines share (``crt``,
``series``, ``components`` with a store): batch k of a run is a write-once segment
``residues/bKKKKK-<attempt>``, and the manifest's payload (:class:`BatchState`) maps k
to it. Only a listed batch counts; a batch run twice or left by a driver that died is a
leftover, removed on resume (:meth:`~ladders.checkpoints.store.RunStore.clear_leftovers`).
A worker's task opens the store (:func:`batch_store`) and writes its batch and receipt
(:func:`write_batch`) the same way for every engine."""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ladders.checkpoints.errors import SegmentError, StoreError
from ladders.checkpoints.segments import SegmentRef, adopt_segment

if TYPE_CHECKING:
    from ladders.checkpoints.backend import Backend
    from ladders.checkpoints.store import RunStore

RESIDUES = "residues"
#: The arrays of a batch's segment, in the order their digest covers them.
ARRAYS = ("primes", "valid", "residues")
#: A batch's segment: ``residues/bKKKKK-<attempt>``.
NAME = re.compile(r"b(\d{5,})-[0-9a-f]+")


@dataclass(frozen=True)
class BatchState:
    """What a prime-batch run has done: batch number -> its segment."""

    FOLDERS: ClassVar[dict[str, int]] = {RESIDUES: 2}
    PAGED: ClassVar[str | None] = "batches"
    batches: dict[int, SegmentRef] = field(default_factory=dict)

    def with_batch(self, k: int, ref: SegmentRef) -> BatchState:
        """The state once batch ``k`` is committed with segment ``ref``."""
        return BatchState({**self.batches, k: ref})

    def without(self, ks: set[int]) -> BatchState:
        """The state with batches ``ks`` dropped (computed again by a later task)."""
        return BatchState({k: ref for k, ref in self.batches.items() if k not in ks})

    def to_json(self) -> dict[str, Any]:
        return {"batches": {str(k): ref.to_json() for k, ref in sorted(self.batches.items())}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchState:
        return cls({int(k): SegmentRef.from_json(v) for k, v in data["batches"].items()})

    def segments(self) -> Iterable[SegmentRef]:
        return self.batches.values()

    @classmethod
    def from_segments(cls, backend: Backend) -> tuple[BatchState, list[str]]:
        """The state a store whose every manifest is lost still holds: batch k from a
        segment named ``residues/bKKKKK-<attempt>`` that is whole (see
        :func:`~ladders.checkpoints.segments.adopt_segment`; one per batch). Also the
        segments refused (partial, or a batch's second attempt), which a resume deletes
        as leftovers. A batch is the same work whichever driver ran it, so a whole
        segment is as good as a committed one."""
        batches: dict[int, SegmentRef] = {}
        refused: list[str] = []
        for path in sorted(backend.entries(RESIDUES, 2)):
            match = NAME.fullmatch(path.rsplit("/", 1)[-1])
            if match is None or int(match[1]) in batches:
                refused.append(path)
                continue
            try:
                batches[int(match[1])] = adopt_segment(backend, path, ARRAYS)
            except SegmentError:
                refused.append(path)
        return cls(batches), refused


def batch_store(url: str, token: str, engine: str) -> RunStore:
    """The run store at ``url`` as a worker opens it for a batch of the run ``token``
    (a ``StoreError`` where it holds another run of ``engine``)."""
    from ladders.checkpoints.store import RunStore
    store = RunStore.open(url, BatchState)
    if store.run.get("token") != token:
        raise StoreError(f"{url} holds another {engine} run than {token[:12]}")
    return store


def write_batch(store: RunStore, k: int, arrays: dict[str, np.ndarray], started: float,
                **figures: float) -> dict[str, Any]:
    """Write batch k's segment ``residues/bKKKKK-<attempt>`` (:data:`ARRAYS`, in their
    engine's dtypes) and return the batch's receipt: small, no residues travel through
    the scheduler; with the seconds since ``started`` and the task's other ``figures``."""
    from ladders.checkpoints.segments import write_arrays
    ref = write_arrays(store.backend, f"{RESIDUES}/b{k:05d}-{uuid.uuid4().hex[:12]}",
                       {name: arrays[name] for name in ARRAYS}, len(arrays["primes"]))
    return {"k": k, "segment": ref.to_json(), "valid": int(np.count_nonzero(arrays["valid"])),
            "seconds": time.perf_counter() - started, **figures,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}
