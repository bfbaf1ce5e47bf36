"""The modular engine's checkpoints: where a long lifting stands, in the run store.

A state (:class:`ladders.solver.engines.modular.LiftState`) is written as one write-once segment
``lift/state-<attempt>`` (arrays ``r`` int64, and ``sums`` as integers in bytes with
``offsets``), and each certified right-hand side once as ``lift/column<K>-<attempt>``
(its base-p digits as int32, its denominator and target numerator in bytes). The
manifest lists the newest state and the columns with their digests; older states are
deleted after the commit (:class:`ModularState` is the manifest's payload). Resuming factors the system again modulo the same prime (the
run's seed fixes it) and continues the lifting from the stored residual.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ladders.checkpoints.segments import SegmentRef, read_arrays, write_arrays
from ladders.checkpoints.manifests import Manifest
from ladders.checkpoints.store import RunStore
from ladders.solver.engines.modular import CertifiedColumn, LiftState
from ladders.solver.exact import mpz, mpz_from_bytes, mpz_to_bytes

LIFT = "lift"


@dataclass(frozen=True)
class ModularState:
    """Where a lifting stands: the certified right-hand sides' segments (``columns``),
    the newest lifting state's segment (None before the first save), its prime, the
    right-hand side being lifted and its steps."""

    FOLDERS: ClassVar[dict[str, int]] = {LIFT: 2}
    PAGED: ClassVar[str | None] = None
    columns: dict[int, SegmentRef] = field(default_factory=dict)
    state: SegmentRef | None = None
    prime: int = 0
    column: int = 0
    steps: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"columns": {str(k): ref.to_json() for k, ref in sorted(self.columns.items())},
                "state": None if self.state is None else self.state.to_json(),
                "prime": self.prime, "column": self.column, "steps": self.steps}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModularState:
        state = data["state"]
        return cls({int(k): SegmentRef.from_json(v) for k, v in data["columns"].items()},
                   None if state is None else SegmentRef.from_json(state),
                   int(data["prime"]), int(data["column"]), int(data["steps"]))

    def segments(self) -> Iterable[SegmentRef]:
        return list(self.columns.values()) + ([] if self.state is None else [self.state])


def _pack(values: list[mpz]) -> dict[str, np.ndarray]:
    blobs = [mpz_to_bytes(v) for v in values]
    offsets = np.zeros(len(blobs) + 1, dtype=np.uint64)
    np.cumsum([len(b) for b in blobs], out=offsets[1:])
    return {"payload": np.frombuffer(b"".join(blobs), dtype=np.uint8), "offsets": offsets}


def _unpack(arrays: dict[str, np.ndarray]) -> list[mpz]:
    raw = arrays["payload"].tobytes()
    off = arrays["offsets"].tolist()
    return [mpz_from_bytes(raw[off[i]:off[i + 1]]) for i in range(len(off) - 1)]


def save_state(store: RunStore, manifest: Manifest, state: LiftState, elapsed: float) -> Manifest:
    """Write ``state`` (and any newly certified column), commit, drop the old state."""
    before: ModularState = manifest.state  # type: ignore[assignment]
    columns = dict(before.columns)
    for k, col in enumerate(state.columns):
        if k not in columns:
            columns[k] = write_arrays(store.backend, f"{LIFT}/column{k}-{uuid.uuid4().hex[:12]}",
                               {"digits": col.digits, "order": col.order,
                                **_pack([col.denominator, col.target_numerator]),
                                "steps": np.array([col.lifting_steps, col.certificate_steps],
                                                  dtype=np.int64)},
                               col.digits.shape[0])
    ref = write_arrays(store.backend, f"{LIFT}/state-{uuid.uuid4().hex[:12]}",
                       {"r": state.r, **_pack(state.sums)}, state.steps)
    new = manifest.next(ModularState(columns, ref, state.prime, state.column, state.steps),
                        elapsed, int(state.steps * state.prime.bit_length()))
    store.commit(new)
    store.drop_superseded(manifest, new)
    return new


def load_state(store: RunStore, manifest: Manifest) -> LiftState | None:
    """The state the newest manifest lists (digests checked), or None for a fresh run."""
    saved: ModularState = manifest.state  # type: ignore[assignment]
    if saved.state is None:
        return None
    prime = saved.prime
    columns = []
    for k in sorted(saved.columns):
        arrays = read_arrays(store.backend, saved.columns[k],
                             ("digits", "order", "payload", "offsets", "steps"))
        den, num = _unpack(arrays)
        steps = arrays["steps"].tolist()
        columns.append(CertifiedColumn(den, num, arrays["digits"], arrays["order"], prime,
                                       steps[0], steps[1]))
    arrays = read_arrays(store.backend, saved.state, ("r", "payload", "offsets"))
    return LiftState(prime, columns, saved.column, saved.steps, arrays["r"], _unpack(arrays))
