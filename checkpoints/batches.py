"""Residue batches, the store format the prime-based engines share (``crt``,
``series``): batch k of a run is a write-once segment ``residues/bKKKKK-<attempt>``,
and the manifest's ``batches`` maps k to it. Only a listed batch counts; a batch run
twice or left by a driver that died is a leftover, removed on resume."""

from __future__ import annotations

from typing import Any

from ladders.checkpoints.segments import SegmentRef
from ladders.checkpoints.store import Manifest, RunStore

RESIDUES = "residues"


def committed_batches(manifest: Manifest) -> dict[int, SegmentRef]:
    """Batch number -> segment, as the manifest lists them."""
    return {int(k): SegmentRef.from_json(v) for k, v in manifest.extra.get("batches", {}).items()}


def with_batch(manifest: Manifest, receipt: dict[str, Any], seconds: float, bits: int) -> Manifest:
    """The manifest after batch ``receipt['k']`` finished (``bits``: the modulus so far)."""
    batches = dict(manifest.extra.get("batches", {}))
    batches[str(receipt["k"])] = receipt["segment"]
    return Manifest(seq=manifest.seq + 1, groups={}, factored={}, done=set(),
                    elapsed=manifest.elapsed + seconds, max_bits=bits,
                    extra={**manifest.extra, "batches": batches})


def clear_leftovers(store: RunStore, manifest: Manifest) -> int:
    """Delete residue segments no committed manifest lists. Returns how many."""
    return store.remove_unlisted(RESIDUES, {ref.path for ref in committed_batches(manifest).values()})
