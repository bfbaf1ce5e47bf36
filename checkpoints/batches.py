"""Residue batches, the store format the prime-based engines share (``crt``,
``series``): batch k of a run is a write-once segment ``residues/bKKKKK-<attempt>``,
and the manifest's payload (:class:`BatchState`) maps k to it. Only a listed batch
counts; a batch run twice or left by a driver that died is a leftover, removed on
resume (:meth:`~ladders.checkpoints.store.RunStore.clear_leftovers`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ladders.checkpoints.segments import SegmentRef

RESIDUES = "residues"


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
