"""The modular engine's checkpoints: where a long lifting stands, in the run store.

A state (:class:`ladders.solver.engines.modular.LiftState`) is written as one write-once segment
``lift/state-<attempt>`` (arrays ``r`` int64, and ``sums`` as integers in bytes with
``offsets``), and each certified right-hand side once as ``lift/column<K>-<attempt>``
(its base-p digits as int32, its denominator and target numerator in bytes). The
manifest lists the newest state and the columns with their digests; older states are
deleted after the commit. Resuming factors the system again modulo the same prime (the
run's seed fixes it) and continues the lifting from the stored residual.
"""

from __future__ import annotations

import shutil
import uuid
from typing import Any

import numpy as np

from ladders.checkpoints.segments import SegmentRef, read_arrays, write_arrays
from ladders.checkpoints.store import Manifest, RunStore
from ladders.solver.engines.modular import CertifiedColumn, LiftState
from ladders.solver.exact import mpz, mpz_from_bytes, mpz_to_bytes

LIFT = "lift"


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
    columns = dict(manifest.extra.get("columns", {}))
    for k, col in enumerate(state.columns):
        if str(k) not in columns:
            ref = write_arrays(store.root, f"{LIFT}/column{k}-{uuid.uuid4().hex[:12]}",
                               {"digits": col.digits, "order": col.order,
                                **_pack([col.denominator, col.target_numerator]),
                                "steps": np.array([col.lifting_steps, col.certificate_steps],
                                                  dtype=np.int64)},
                               col.digits.shape[0])
            columns[str(k)] = ref.to_json()
    ref = write_arrays(store.root, f"{LIFT}/state-{uuid.uuid4().hex[:12]}",
                       {"r": state.r, **_pack(state.sums)}, state.steps)
    new = Manifest(seq=manifest.seq + 1, groups={}, factored={}, done=set(),
                   elapsed=manifest.elapsed + elapsed, max_bits=int(state.steps * state.prime.bit_length()),
                   extra={"columns": columns, "state": ref.to_json(), "prime": state.prime,
                          "column": state.column, "steps": state.steps})
    store.commit(new)
    old = manifest.extra.get("state")
    if old:
        shutil.rmtree(store.root / old["path"], ignore_errors=True)
    return new


def load_state(store: RunStore, manifest: Manifest) -> LiftState | None:
    """The state the newest manifest lists (digests checked), or None for a fresh run."""
    extra: dict[str, Any] = manifest.extra
    if "state" not in extra:
        return None
    prime = int(extra["prime"])
    columns = []
    for k in sorted(extra.get("columns", {}), key=int):
        arrays = read_arrays(store.root, SegmentRef.from_json(extra["columns"][k]),
                             ("digits", "order", "payload", "offsets", "steps"))
        den, num = _unpack(arrays)
        steps = arrays["steps"].tolist()
        columns.append(CertifiedColumn(den, num, arrays["digits"], arrays["order"], prime,
                                       steps[0], steps[1]))
    arrays = read_arrays(store.root, SegmentRef.from_json(extra["state"]), ("r", "payload", "offsets"))
    return LiftState(prime, columns, int(extra["column"]), int(extra["steps"]), arrays["r"],
                     _unpack(arrays))


def clear_leftovers(store: RunStore, manifest: Manifest) -> int:
    """Delete lifting segments the manifest does not list (written by a driver that died
    before committing them). Returns how many."""
    keep = {ref["path"] for ref in manifest.extra.get("columns", {}).values()}
    if "state" in manifest.extra:
        keep.add(manifest.extra["state"]["path"])
    return store.remove_unlisted(LIFT, keep)
