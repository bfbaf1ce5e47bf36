"""Batches of primes for the ``components`` engine with a store: the task a worker
runs, and the residues it writes.

A run of the topological solve (:mod:`ladders.solver.engines.components`) that must
survive a crash, or spread over a Dask cluster, is batches of primes like the ``crt``
engine's (:class:`~ladders.checkpoints.batches.BatchState`). :func:`run_components_batch`
solves the run's system modulo each prime of batch k, one component at a time in
topological order, and writes one write-once segment ``residues/bKKKKK-<attempt>``:

- ``primes``   uint64 ``(B,)``
- ``valid``    uint8 ``(B,)``: 0 where the prime divided a pivot (no residues)
- ``residues`` uint32 ``(B, wanted * columns)``: the wanted unknowns only
  (:func:`wanted_unknowns`), not the whole solution: a batch of nand 60-4's 18.8
  million states is a few hundred bytes.

What the batches read, the system in solve order, is written once when the store is
created (:func:`write_structure`): a worker reads it instead of building the chain.

The driver folds the committed batches into a
:class:`~ladders.solver.engines.components.Reconstruction`.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ladders.checkpoints.batches import batch_store, write_batch
from ladders.checkpoints.errors import SegmentError, StoreError
from ladders.checkpoints.segments import SegmentRef, read_arrays, write_arrays
from ladders.checkpoints.store import RunStore
from ladders.solver.engines.components import Residues, structure

if TYPE_CHECKING:
    from ladders.solver.chain_problem import ChainProblem

#: Per worker process and run: the solve its batches run (:func:`components_solve`).
_SOLVES: dict[tuple[str, str], Residues] = {}


def wanted_unknowns(problem: ChainProblem) -> list[int]:
    """The unknowns whose values a solve of ``problem`` needs: the target, and for a
    question over several start states (``every``) each start state that is unknown."""
    system = problem.system
    wanted = [system.target]
    if problem.every:
        # unknown k is state plan.unknowns[k] (increasing): found by bisection, not by a
        # table of every unknown
        states = problem.plan.unknowns
        starts = np.array([i for i, _ in problem.chain.start], dtype=np.int64)
        at = np.searchsorted(states, starts)
        found = at < len(states)
        found[found] = states[at[found]] == starts[found]
        wanted += sorted(set(at[found].tolist()) - {system.target})
    return wanted


#: What a worker reads of the structure (:meth:`Structure.kernel_arrays`, and ``want``).
ARRAYS = ("indptr", "indices", "data", "rhs", "start", "pivot_of", "pivots", "want")


def write_structure(store: RunStore, problem: ChainProblem) -> None:
    """Keep the arrays the batches read (the system renumbered in solve order, the
    components' bounds, the pivots, the wanted unknowns' rows) as the run's segment
    ``structure``, named in run.json (called while the store is created): a worker reads
    them, about 40 bytes a transition, instead of building the chain again from its
    source (nand 60-4: gigabytes and a minute a worker)."""
    arrays = _structure_arrays(problem)
    store.run["structure"] = write_arrays(store.backend, "structure", arrays,
                                          len(arrays["indptr"]) - 1).to_json()


def _structure_arrays(problem: ChainProblem) -> dict[str, np.ndarray]:
    found = problem.structure or structure(problem.system)
    want = found.position[np.array(wanted_unknowns(problem), dtype=np.int64)]
    return {**found.kernel_arrays(), "want": want}


def restore_structure(store: RunStore, problem: ChainProblem) -> None:
    """Read the run's ``structure`` segment whole; where it is not (a disk error, a file
    changed by hand), write it again from ``problem``: the same system gives the same
    arrays, so the digest run.json holds still names them (a ``StoreError`` where it
    does not: the model file changed since). Said on stderr in one line."""
    ref = SegmentRef.from_json(store.run["structure"])
    try:
        read_arrays(store.backend, ref, ARRAYS)
        return
    except SegmentError as exc:
        reason = exc.reason
    arrays = _structure_arrays(problem)
    store.backend.delete_prefix("structure")
    again = write_arrays(store.backend, "structure", arrays, ref.rows)
    if again.digest != ref.digest:
        raise StoreError(f"{store.url}: {reason}, and the run's problem no longer builds the "
                         "system it was solving (a changed model file?): start a new run")
    print(f"ladders: {store.url}: {reason}: written again from the run's problem",
          file=sys.stderr, flush=True)


def components_solve(store: RunStore, problem: ChainProblem | None = None) -> Residues:
    """The solve the run's batches run, its arrays (see :data:`ARRAYS`) and buffers made
    once per process: from ``problem`` where the driver holds it, else (a Dask worker)
    from the run's ``structure`` segment, checked against the digest run.json gives."""
    key = (store.worker_url, store.run["token"])
    if key not in _SOLVES:
        arrays = (_structure_arrays(problem) if problem is not None else
                  read_arrays(store.backend, SegmentRef.from_json(store.run["structure"]),
                              ARRAYS, f"'ladders resume {store.url}' writes it again from "
                              "the run's problem"))
        _SOLVES[key] = Residues(arrays, arrays["want"])
    return _SOLVES[key]


def run_components_batch(url: str, token: str, k: int, primes: list[int]) -> dict[str, Any]:
    """Solve the run's system modulo every prime of batch k; write its segment; return
    a small receipt (no residues travel through the scheduler)."""
    t0 = time.perf_counter()
    store = batch_store(url, token, "components")
    residues, valid = components_solve(store).solve(np.asarray(primes, dtype=np.int64))
    return write_batch(store, k, {"primes": np.asarray(primes, dtype=np.uint64),
                                  "valid": valid.astype(np.uint8),
                                  "residues": residues.astype(np.uint32)}, t0)


def read_components_batch(store: RunStore, ref: SegmentRef) -> list[tuple[int, list[int]]]:
    """``(p, residues)`` of every valid prime of a committed batch (digest checked)."""
    arrays = read_arrays(store.backend, ref, ("primes", "valid", "residues"))
    return [(int(p), arrays["residues"][i].tolist()) for i, p in enumerate(arrays["primes"].tolist())
            if arrays["valid"][i]]
