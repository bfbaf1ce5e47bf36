"""Tasks of a stored run, and the bookkeeping that decides what may run next.

:func:`run_task` is what a worker executes for ``F(b)`` or ``U(b, j)``: it reads its
inputs from the store, calls the exact kernel of :mod:`ladders.solver.engines.elimination`, writes one new
segment under a fresh attempt name and returns a small receipt. It never touches a
manifest, so running it twice (Dask may) only leaves an unreferenced segment that the
next garbage collection removes.

:func:`ready_tasks` and :func:`apply_receipt` are the driver's side: pure functions of
the plan and the manifest, shared by every executor (the in-process one below and the
Dask one in ``cluster``), so resuming is simply "continue from the current manifest".
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ladders.checkpoints.backend import Backend
from ladders.checkpoints.errors import SegmentError, StoreError
from ladders.checkpoints.files import compact_json
from ladders.checkpoints.segments import SegmentRef, read_segment
from ladders.checkpoints.manifests import Manifest
from ladders.checkpoints.store import RunStore
from ladders.solver.engines.elimination import (factor_block, system_rows, target_values,
                                                update_rows)
from ladders.solver.engines.elimination_plan import (EliminationPlan, make_plan,
                                                     symbolic_elimination)
from ladders.solver.exact import mpq
from ladders.solver.system import ORDERS, LinearSystem, pivot_order

Task = tuple[int, int]

#: One open store per worker process and run: its segment cache outlives the tasks.
_STORES: dict[tuple[str, str], RunStore] = {}


@dataclass(frozen=True)
class EliminationState:
    """What an elimination run has done. ``groups[j]``: the newest version of group j
    (the block that last updated it, -1 for the initial rows) and its segment;
    ``factored[b]``: F(b)'s segment while some U(b, j) still needs it (the last
    block's stays: it holds the target row); ``done``: the finished tasks (b, j)."""

    FOLDERS: ClassVar[dict[str, int]] = {"rows": 3}
    PAGED: ClassVar[str | None] = None
    groups: dict[int, tuple[int, SegmentRef]] = field(default_factory=dict)
    factored: dict[int, SegmentRef] = field(default_factory=dict)
    done: frozenset[Task] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {"groups": {str(j): {"version": v, "segment": ref.to_json()}
                           for j, (v, ref) in sorted(self.groups.items())},
                "factored": {str(b): ref.to_json() for b, ref in sorted(self.factored.items())},
                "done": sorted([b, j] for b, j in self.done)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EliminationState:
        return cls(groups={int(j): (int(g["version"]), SegmentRef.from_json(g["segment"]))
                           for j, g in data["groups"].items()},
                   factored={int(b): SegmentRef.from_json(r) for b, r in data["factored"].items()},
                   done=frozenset((int(b), int(j)) for b, j in data["done"]))

    def segments(self) -> Iterable[SegmentRef]:
        return [ref for _, ref in self.groups.values()] + list(self.factored.values())


def create_store(where: str | Backend, run: dict[str, Any], system: LinearSystem,
                 plan: EliminationPlan) -> RunStore:
    """A new elimination store: ``plan.json`` (hashed by its token, which run.json
    records) and the rows of every group before any elimination."""
    def initial(store: RunStore) -> EliminationState:
        return EliminationState(groups={
            j: (-1, store.write(f"rows/g{j}/init", system_rows(system, plan.group(j))))
            for j in range(len(plan.blocks))})
    return RunStore.create(where, {**run, "plan_token": plan.token}, EliminationState, initial,
                           files={"plan.json": _plan_json(plan)})


def _plan_json(plan: EliminationPlan) -> dict[str, Any]:
    """``plan.json``: the plan, with its token."""
    return {"order": list(plan.order), "blocks": [list(b) for b in plan.blocks],
            "touches": [list(t) for t in plan.touches], "system_digest": plan.system_digest,
            "updates": plan.updates, "fill": plan.fill, "token": plan.token}


def plan_of(store: RunStore, system: LinearSystem | None = None) -> EliminationPlan:
    """The store's plan, read once per process and checked against the run's token.

    ``plan.json`` is derived from the run, not data of its own: where it is damaged
    (unreadable, of another shape, or not of the run's token) and ``system`` is given
    (the run's problem gives it: resume, verify), it is derived again
    (:func:`derive_plan`) and written back whole; without ``system`` (``status``, from
    the files alone) a :class:`PlanDamaged` says that the next resume does so."""
    if "plan" not in store.memo:
        try:
            store.memo["plan"] = _read_plan(store)
        except PlanDamaged as exc:
            if system is None:
                raise
            plan = derive_plan(store, system)
            store.backend.replace("plan.json", compact_json(_plan_json(plan)))
            print(f"ladders: {exc.what}: derived again from the run's problem (plan "
                  f"{plan.token[:12]}) and written back", file=sys.stderr, flush=True)
            store.memo["plan"] = plan
    return store.memo["plan"]


class PlanDamaged(StoreError):
    """``plan.json`` cannot be used; ``what`` says why, in a few words."""

    def __init__(self, store: RunStore, what: str) -> None:
        super().__init__(f"{what}; 'ladders resume {store.url}' derives it again from the run's "
                         "problem (the rest of the store is intact)")
        self.what = what


def _read_plan(store: RunStore) -> EliminationPlan:
    where = f"{store.url}/plan.json"
    try:
        data = json.loads(store.backend.read("plan.json"))
    except FileNotFoundError:
        raise PlanDamaged(store, f"{where} is missing") from None
    except (OSError, ValueError) as exc:
        raise PlanDamaged(store, f"{where} is unreadable ({type(exc).__name__})") from exc
    try:
        plan = EliminationPlan(order=tuple(data["order"]),
                               blocks=tuple(tuple(b) for b in data["blocks"]),
                               touches=tuple(tuple(t) for t in data["touches"]),
                               system_digest=data["system_digest"], updates=data["updates"],
                               fill=data["fill"])
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanDamaged(store, f"{where} is not a plan of this store format "
                                 f"({type(exc).__name__}: {exc})") from exc
    if plan.token != store.run.get("plan_token") or plan.token != data.get("token"):
        raise PlanDamaged(store, f"{where} does not match the run's plan token (changed by hand, "
                                 "or damaged)")
    return plan


def derive_plan(store: RunStore, system: LinearSystem) -> EliminationPlan:
    """The plan of the run, made again from its ``system``: the plan the run was created
    with is one of the named pivot orders (``auto`` picks one of them) with the block
    size run.json records or the balanced blocks, and the run's plan token tells
    which (``StoreError`` where none matches: then the store is not this system's)."""
    want = store.run.get("plan_token")
    sizes = list(dict.fromkeys([store.run.get("block_size"), None]))
    for name in ORDERS:
        order = pivot_order(system, name)
        analysed = (order, symbolic_elimination(system, order))
        for size in sizes:
            plan = make_plan(system, size, order, analysed)
            if plan.token == want:
                return plan
    raise StoreError(f"{store.url}: plan.json is damaged and no plan made again from the run's "
                     f"problem has its token {str(want)[:12]}; {store.damaged()}")


@dataclass(frozen=True)
class Recovery:
    """What a manifest's damaged segments (a disk error, a file changed by hand) ask of
    the next resume, found by :func:`recovery` without changing anything.

    A group's initial rows are the system's own, so their segment is simply written
    again (``initial``: group -> what is wrong). A segment a task wrote holds work whose
    inputs were superseded since (``later``: path -> what is wrong): the run goes back
    to ``back_to``, the newest older manifest whose task-written segments all read
    whole (the store keeps :data:`~ladders.checkpoints.manifests.HISTORY` of them with
    their segments), or to the start (``back_to`` None) where none is left, and
    computes again the ``redo`` tasks done since."""

    initial: dict[int, str]
    later: dict[str, str]
    back_to: Manifest | None = None
    redo: int = 0

    def __bool__(self) -> bool:
        return bool(self.initial or self.later)

    def says(self, who: str) -> str:
        """What is damaged and what ``who`` (the next resume, or this one) does about
        it, in one clause."""
        parts = []
        if self.later:
            path = min(self.later)
            where = (f"manifest/{self.back_to.seq:06d}.json, the newest whose rows read whole,"
                     if self.back_to is not None else "the system's rows (no older manifest's rows "
                     "read whole)")
            parts.append(f"{_count(len(self.later), 'segment')} of rows damaged ({self.later[path]}): "
                         f"{who} goes back to {where} and computes again the "
                         f"{_count(self.redo, 'task')} done since")
        if self.initial:
            first = min(self.initial)
            parts.append(f"{_count(len(self.initial), 'segment')} of initial rows damaged "
                         f"(group {first}: {self.initial[first]}): {who} writes "
                         f"{'it' if len(self.initial) == 1 else 'them'} again from the run's problem")
        return "; ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def recovery(store: RunStore, manifest: Manifest) -> Recovery:
    """Read and check every segment ``manifest`` references (about the size of the
    system's rows as they stand), and where one a task wrote is damaged, the older
    manifests' too, newest first, until one's task-written segments all read whole:
    the same diagnosis for ``status``, ``resume`` and ``verify``, changing nothing."""
    checked: dict[str, str | None] = {}

    def damage(ref: SegmentRef) -> str | None:
        if ref.path not in checked:
            try:
                read_segment(store.backend, ref)
                checked[ref.path] = None
            except SegmentError as exc:
                checked[ref.path] = exc.reason
        return checked[ref.path]

    def initial(state: EliminationState) -> dict[int, str]:
        return {j: why for j, (version, ref) in sorted(state.groups.items())
                if version == -1 and (why := damage(ref)) is not None}

    def later(state: EliminationState) -> dict[str, str]:
        refs = [ref for version, ref in state.groups.values() if version != -1]
        return {ref.path: why for ref in refs + list(state.factored.values())
                if (why := damage(ref)) is not None}

    state: EliminationState = manifest.state  # type: ignore[assignment]
    bad = later(state)
    if not bad:
        return Recovery(initial(state), {})
    done = len(state.done)
    for older in store.older(manifest):
        was: EliminationState = older.state  # type: ignore[assignment]
        if not later(was):
            return Recovery(initial(was), bad, older, done - len(was.done))
    return Recovery({}, bad, None, done)


def repair(store: RunStore, system: LinearSystem, manifest: Manifest) -> Manifest:
    """``manifest``, or where :func:`recovery` finds damage, the manifest after it that
    a run can go on from: the initial rows a damaged segment held written again from
    ``system`` under fresh names, and where a task's segment is damaged, the state of
    the manifest the run goes back to (or of the start). Committed, and said on stderr
    in one line."""
    found = recovery(store, manifest)
    if not found:
        return manifest
    plan = plan_of(store, system)
    if found.later and found.back_to is None:
        base, rewrite = EliminationState(), set(range(len(plan.blocks)))
    else:
        base = (found.back_to or manifest).state  # type: ignore[assignment]
        rewrite = set(found.initial)
    groups = dict(base.groups)
    for j in sorted(rewrite):
        groups[j] = (-1, store.write(f"rows/g{j}/init-{uuid.uuid4().hex[:8]}",
                                     system_rows(system, plan.group(j))))
    bits = found.back_to.max_bits if found.back_to is not None else 0 if found.later else None
    new = manifest.next(EliminationState(groups, dict(base.factored), base.done), max_bits=bits)
    store.commit(new)
    store.drop_superseded(manifest, new)
    print(f"ladders: {store.url}: {found.says('this resume')}", file=sys.stderr, flush=True)
    return new


def segment_prefix(b: int, j: int) -> str:
    """Path prefix of the segments task ``(b, j)`` writes (one per attempt)."""
    return f"rows/g{j}/b{b}-"


def _store(url: str, token: str) -> RunStore:
    key = (url, token)
    if key not in _STORES:
        store = RunStore.open(url, EliminationState)
        if plan_of(store).token != token:
            raise StoreError(f"{url} holds plan {plan_of(store).token[:12]}, not {token[:12]}")
        _STORES[key] = store
    return _STORES[key]


def run_task(url: str, token: str, b: int, j: int, rows_ref: dict[str, Any],
             factored_ref: dict[str, Any] | None) -> dict[str, Any]:
    """What a Dask worker runs: :func:`execute_task` on this process's open store."""
    return execute_task(_store(url, token), b, j, rows_ref, factored_ref)


def execute_task(store: RunStore, b: int, j: int, rows_ref: dict[str, Any],
                 factored_ref: dict[str, Any] | None) -> dict[str, Any]:
    """Run ``F(b)`` (``j == b``) or ``U(b, j)`` (followed by ``F(j)`` when the plan
    fuses them) and return its receipt (with the seconds spent reading, computing and
    writing)."""
    t0 = time.perf_counter()
    rows = store.read(SegmentRef.from_json(rows_ref))
    factored = None
    if b != j:
        if factored_ref is None:
            raise ValueError(f"U({b}, {j}) needs the factored rows of block {b}")
        factored = store.read(SegmentRef.from_json(factored_ref))
    t1 = time.perf_counter()
    plan = plan_of(store)
    if factored is None:
        out = factor_block(rows, b, plan)
    else:
        out = update_rows(rows, factored, b, plan)
        if plan.fuses(b, j):
            out = factor_block(out, j, plan)
    t2 = time.perf_counter()
    ref = store.write(segment_prefix(b, j) + uuid.uuid4().hex[:12], out)
    bits = max((v.bit_length() for row in out.values() for v in row.values()), default=0)
    t3 = time.perf_counter()
    return {"b": b, "j": j, "segment": ref.to_json(), "max_bits": int(bits),
            "seconds": t3 - t0, "read_seconds": t1 - t0, "write_seconds": t3 - t2,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


# ------------------------------------------------------------------------- driver side
def task_inputs(state: EliminationState, b: int, j: int) -> tuple[dict, dict | None]:
    """Segments a task reads: group j's newest version, and F(b) for an update."""
    rows_ref = state.groups[j][1].to_json()
    return rows_ref, (None if b == j else state.factored[b].to_json())


def urgency(plan: EliminationPlan, task: Task) -> int:
    """Rank of ``task`` among the plan's, lower is more urgent.

    The critical path is the chain ``F(0)``, ``U(0, 1)`` + ``F(1)``, ``U(1, 2)`` +
    ``F(2)``, ...: group j is needed when the chain reaches block j, so every update of
    group j comes before any update of a later group, whatever block it applies (on
    ``hasbro`` cut at 60 the chain waited 0.23 s for ``U(4, 6)`` while the updates of
    block 3 ran first); within a group, updates go in block order (as they must)."""
    b, j = task
    return j * len(plan.blocks) + b


def ready_tasks(plan: EliminationPlan, state: EliminationState, in_flight: set[Task]) -> list[Task]:
    """Tasks whose inputs are committed and that are neither done nor running, most
    urgent first (see :func:`urgency`)."""
    last = plan.last_touch
    out = []
    for j, (version, _ref) in state.groups.items():
        # the next task on group j is the first (b, j) after `version`
        nxt = next_task_on_group(plan, j, version)
        if nxt is None or nxt in in_flight or nxt in state.done:
            continue
        b = nxt[0]
        if last[nxt] != version:
            continue
        if b != j and b not in state.factored:
            continue
        out.append(nxt)
    return sorted(out, key=lambda task: urgency(plan, task))


def next_task_on_group(plan: EliminationPlan, j: int, version: int) -> Task | None:
    """The task that follows ``version`` on group j: an update ``U(b, j)`` or ``F(j)``."""
    for b in plan.blocks_touching(j):
        if b > version:
            return (b, j)
    return (j, j) if version < j else None


def apply_receipt(plan: EliminationPlan, manifest: Manifest, receipt: dict[str, Any],
                  seconds: float) -> Manifest:
    """The manifest after a finished task: new group version, F(b) kept while needed."""
    b, j = int(receipt["b"]), int(receipt["j"])
    ref = SegmentRef.from_json(receipt["segment"])
    state: EliminationState = manifest.state  # type: ignore[assignment]
    groups = dict(state.groups)
    factored = dict(state.factored)
    done = state.done | set(task_parts(plan, b, j))
    if b == j or plan.fuses(b, j):
        del groups[j]
        factored[j] = ref
    else:
        groups[j] = (b, ref)
    last_block = len(plan.blocks) - 1
    for fb in list(factored):
        if fb != last_block and all((fb, g) in done for g in plan.touches[fb]):
            del factored[fb]
    return manifest.next(EliminationState(groups, factored, done), seconds,
                         max(manifest.max_bits, int(receipt.get("max_bits", 0))))


def task_parts(plan: EliminationPlan, b: int, j: int) -> list[Task]:
    """The plan's tasks that running ``(b, j)`` completes: itself, and ``F(j)`` when fused."""
    return [(b, j), (j, j)] if b != j and plan.fuses(b, j) else [(b, j)]


def is_finished(plan: EliminationPlan, state: EliminationState) -> bool:
    last = len(plan.blocks) - 1
    return (last, last) in state.done


def stored_answer(store: RunStore, system: LinearSystem, state: EliminationState) -> list[mpq]:
    """``x[target]`` for every right-hand side, read from the last factored block."""
    last = len(plan_of(store).blocks) - 1
    rows = store.read(state.factored[last])
    return target_values(system, rows[system.target])
