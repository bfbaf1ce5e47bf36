"""The ``elimination`` engine's driver: fraction-free column-block elimination, the
blocks as tasks on Dask (or in this process), rows checkpointed in the run store.

The plan (:mod:`ladders.solver.engines.elimination_plan`) is pure data; the tasks and
the bookkeeping of what may run next are :mod:`ladders.checkpoints.elimination`; this
driver wraps them as :class:`ladders.cluster.executor.Work` for the two loops. Small
problems with no store or cluster asked for run in memory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import Engine, SolveRequest, system_out_of_reach
from ladders.cluster.executor import Task

if TYPE_CHECKING:
    from ladders.checkpoints.store import Manifest, RunStore
    from ladders.cluster.session import Outcome
    from ladders.solver.problem import Problem


class EliminationEngine(Engine):
    name = "elimination"
    summary = ("column-block fraction-free elimination as Dask tasks, the wanted unknown "
               "last (the published method, sped up); resumable")
    options = frozenset({"checkpoint", "cluster", "executor", "block_size", "order"})
    unit = ("tasks", "task")
    # the series engine certifies a two-player race in a tenth of a second on hasbro cut
    # at 60 (the modular engine: 0.46 s, on the full board 5 s), while the workers solve
    cross = "series"

    def preference(self, problem: Problem) -> float | None:
        return 2.0

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table:
            raise ValueError("--table needs every unknown: use the series engine (the default), modular or crt")

    def out_of_reach(self, problem: Problem) -> str | None:
        return system_out_of_reach(problem)

    def solve(self, problem: Problem, request: SolveRequest, progress: Any,
              should_stop: Callable[[], bool]) -> Outcome:
        from ladders.checkpoints.elimination import create_store
        from ladders.cluster.session import pick_executor, run_json, store_dir
        from ladders.solver.engines.elimination_plan import make_plan
        system = problem.system
        executor = pick_executor(problem, request.executor, request.spec, request.checkpoint)
        order = None if request.order == "auto" else request.order
        # the plan and the store first, the cluster after (in _run): its thread importing
        # Dask beside them made the store take 0.4-0.55 s instead of 0.15-0.28 on hasbro
        # cut at 60, and the driver's first task waits for the store
        t0 = time.perf_counter()
        plan = make_plan(system, request.block_size, order)
        stages = {"plan": time.perf_counter() - t0}
        if executor == "serial" and not request.checkpoint:
            return _in_memory(problem, plan, progress, stages)
        with store_dir(request.checkpoint) as root:
            t0 = time.perf_counter()
            run = run_json(problem, self.name, executor, block_size=plan.blocks[0][1],
                           plan=plan.describe())
            store = create_store(root, run, system, plan)
            stages["store"] = time.perf_counter() - t0
            return _run(store, problem, request, executor, progress, should_stop, stages)

    def resume(self, store: RunStore, problem: Problem, request: SolveRequest, progress: Any,
               should_stop: Callable[[], bool]) -> Outcome:
        executor = request.executor if request.executor != "auto" else store.run.get("executor", "dask")
        return _run(store, problem, request, executor, progress, should_stop)

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        from ladders.checkpoints.elimination import plan_of
        from ladders.solver.exact import bits_to_digits
        plan = plan_of(store)
        total, done = len(plan.tasks()), len(manifest.done)
        blocks = sum(1 for b in range(len(plan.blocks)) if (b, b) in manifest.done)
        return {"tasks_done": done, "tasks_total": total, "blocks_done": blocks,
                "blocks_total": len(plan.blocks),
                "progress": f"{done}/{total} tasks, {blocks}/{len(plan.blocks)} blocks",
                "digits": f"up to {bits_to_digits(manifest.max_bits):,} in the rows so far"}

    def stored_seats(self, store: RunStore, problem: Problem) -> list[Any] | None:
        from ladders.checkpoints.elimination import is_finished, plan_of, stored_answer
        from ladders.checkpoints.errors import StoreError
        from ladders.solver.games.race import seats_from_values
        plan, manifest = plan_of(store), store.current()
        if not is_finished(plan, manifest):
            raise StoreError(f"{store.root} is not finished ({len(manifest.done)}/{len(plan.tasks())} "
                             f"tasks); continue it with 'ladders resume {store.root}'")
        return seats_from_values(problem.system, problem.players,
                                 stored_answer(store, problem.system, manifest))

    def seats_in_memory(self, problem: Problem) -> list[Any]:
        from ladders.solver.engines.elimination import eliminate_target
        from ladders.solver.games.race import seats_from_values
        return seats_from_values(problem.system, problem.players, eliminate_target(problem.system))

    def cross_skip(self, problem: Problem) -> str | None:
        from ladders.cluster.session import IN_MEMORY_LIMIT
        size = problem.system.size
        if size > IN_MEMORY_LIMIT:
            return f"{size:,} unknowns: elimination takes long here (--cross runs it anyway)"
        return None


class EliminationWork:
    """A stored elimination run as :class:`ladders.cluster.executor.Work`: items are the
    plan's tasks ``(b, j)``; the manifest is updated per receipt and committed after."""

    def __init__(self, store: RunStore) -> None:
        from ladders.checkpoints.elimination import plan_of
        self.store = store
        self.plan = plan_of(store)
        self.manifest = store.current()
        self.committed = self.manifest
        store.collect_garbage(self.manifest)  # leftovers of an interrupted run
        self.to_commit: list[Manifest] = []
        self.ran = 0
        self.spent = {"read": 0.0, "compute": 0.0, "write": 0.0}

    def finished(self) -> bool:
        from ladders.checkpoints.elimination import is_finished
        return is_finished(self.plan, self.manifest)

    def ready(self, running: set[Hashable], limit: int) -> list[Hashable]:
        from ladders.checkpoints.elimination import ready_tasks
        return list(ready_tasks(self.plan, self.manifest, running)[:max(0, limit)])  # type: ignore[arg-type]

    def task(self, item: Hashable) -> Task:
        from ladders.checkpoints.elimination import run_task, task_inputs, urgency
        b, j = item  # type: ignore[misc]
        rows_ref, fac_ref = task_inputs(self.manifest, b, j)
        token = self.plan.token
        fused = self.plan.fuses(b, j)
        key = f"ladders-{token[:16]}-" + (f"F{b}" if b == j else f"{'UF' if fused else 'U'}{b}-{j}")
        return Task(run_task, (str(self.store.root), token, b, j, rows_ref, fac_ref), key=key,
                    priority=-urgency(self.plan, (b, j)))

    def run_here(self, item: Hashable) -> dict[str, Any]:
        """In this process, on the driver's own store (its segment cache, its checks)."""
        from ladders.checkpoints.elimination import execute_task, task_inputs
        b, j = item  # type: ignore[misc]
        return execute_task(self.store, b, j, *task_inputs(self.manifest, b, j))

    def accept(self, item: Hashable, receipt: dict[str, Any], seconds: float) -> None:
        from ladders.checkpoints.elimination import apply_receipt, task_parts
        self.manifest = apply_receipt(self.plan, self.manifest, receipt, seconds)
        self.to_commit.append(self.manifest)
        self.ran += len(task_parts(self.plan, int(receipt["b"]), int(receipt["j"])))
        self.spent["read"] += receipt["read_seconds"]
        self.spent["write"] += receipt["write_seconds"]
        self.spent["compute"] += receipt["seconds"] - receipt["read_seconds"] - receipt["write_seconds"]

    def commit(self) -> None:
        """One manifest per finished task, in order; superseded segments deleted."""
        for version in self.to_commit:
            self.store.commit(version)
            self.store.drop_superseded(self.committed, version)
            self.committed = version
        self.to_commit = []


def _in_memory(problem: Problem, plan: Any, progress: Any, stages: dict[str, float]) -> Outcome:
    """Small problems: the same plan eliminated in this process, no store."""
    from ladders.cluster.session import Outcome
    from ladders.solver.engines.elimination import eliminate_target
    from ladders.solver.games.race import seats_from_values
    t0 = time.perf_counter()
    step = None if progress is None else (lambda d, t: progress(d, t, 0))
    values = eliminate_target(problem.system, plan, progress=step)
    seconds = time.perf_counter() - t0
    seats = seats_from_values(problem.system, problem.players, values)
    verified = _verify(problem, seats, stages)
    return Outcome(problem, seats, seconds, "serial", verified, engine="elimination",
                   tasks_run=len(plan.tasks()), tasks_total=len(plan.tasks()),
                   details={"stages": {k: round(v, 3) for k, v in stages.items()}})


class _Checks(threading.Thread):
    """What the verification compares the answer with: the Markov bounds, and the
    cross-checking engine's answer. With a Dask cluster they are computed here while
    the workers solve (the driver only waits for receipts meanwhile)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(name="ladders-checks", daemon=True)
        self.problem = problem
        self.bounds: Any = None
        self.cross_seats: list[Any] | None = None
        self.skip: str | None = None
        self.seconds = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        from ladders.cluster.engines import get_engine
        from ladders.solver.checks.bounds import bounds_within
        from ladders.solver.checks.verify import VERIFY_SECONDS
        t0 = time.perf_counter()
        try:
            self.bounds = bounds_within(self.problem.chain, self.problem.players, 16, VERIFY_SECONDS)
            checker = get_engine(ENGINE.cross or "")
            self.skip = checker.cross_skip(self.problem)
            if self.skip is None:
                self.cross_seats = checker.seats_in_memory(self.problem)
        except BaseException as exc:  # raised again in the driver's thread by result()
            self.error = exc
        self.seconds = time.perf_counter() - t0

    def result(self) -> _Checks:
        if self.ident is None:
            self.run()  # never started (no cluster): compute now, in this thread
        else:
            self.join()
        if self.error is not None:
            raise self.error
        return self


def _verify(problem: Problem, seats: list[Any], stages: dict[str, float],
            checks: _Checks | None = None) -> dict[str, Any]:
    """Bounds, and the cross-checking engine's certified answer (the series engine's)
    compared with ``==``; the independent solve modulo a random prime (tier 2) runs only
    where that cross-check could not, since a certified equal answer implies it."""
    from ladders.solver.checks.verify import cross_check, verify_answer
    t0 = time.perf_counter()
    pre = (checks or _Checks(problem)).result()
    cross = cross_check(problem, seats, ENGINE.cross or "", lambda _: pre.cross_seats, pre.skip)
    if pre.skip is None:
        cross["seconds"] = round(pre.seconds, 3)
    verified = verify_answer(problem, seats, primes=0 if pre.skip is None else 1, cross=cross,
                             bounds=pre.bounds)
    stages["verify"] = time.perf_counter() - t0
    return verified


def _run(store: RunStore, problem: Problem, request: SolveRequest, executor: str, progress: Any,
         should_stop: Callable[[], bool], stages: dict[str, float] | None = None) -> Outcome:
    """The stored run on ``executor`` (a Dask cluster: started or reached in the
    background while this process runs the first tasks), then the answer read back,
    verified and recorded."""
    from ladders.cluster.executor import run_dask, run_serial
    from ladders.cluster.session import ClusterStart, Outcome, connect_checked, locked, record
    from ladders.solver.exact import bits_to_digits

    stages = {} if stages is None else stages
    with locked(store):
        work = EliminationWork(store)
        total = len(work.plan.tasks())
        before = len(work.manifest.done)
        details: dict[str, Any] = {}
        startup = 0.0

        def report() -> None:
            if progress is not None:
                progress(len(work.manifest.done), total, bits_to_digits(work.manifest.max_bits))

        t0 = time.perf_counter()
        if executor == "serial":
            interrupted = run_serial(work, should_stop, report)
            seconds = time.perf_counter() - t0
            ran = len(work.manifest.done) - before
        else:
            with ClusterStart(request.spec) as started:
                # while a local cluster's workers start (a remote one's are up already),
                # this process runs the first tasks (the start of the critical path):
                # the workers then find updates ready to run
                here = len(work.manifest.done)
                if not request.spec.remote:
                    run_serial(work, lambda: started.up() or should_stop(), report)
                details["tasks_in_driver"] = len(work.manifest.done) - here
                client, workers, startup = connect_checked(started, store, WORKER_MODULES)
                t0 += startup
                checks = _Checks(problem)
                checks.start()
                # one task in flight per worker, none queued: a worker that finishes takes
                # the most urgent task then ready (often the next link of the critical
                # path), not one queued on it earlier (on hasbro cut at 60 the chain twice
                # waited 0.2 s behind such a task); at least one, for workers yet to join
                interrupted = run_dask(client, work, max(1, workers), should_stop, report,
                                       request.spec.no_worker_limit)
                seconds = time.perf_counter() - t0
                started.release()  # the cluster closes while this process verifies
                if not interrupted:
                    seats = _answer(store, problem, work)
                    verified = _verify(problem, seats, stages, checks)
            ran = work.ran
            details["worker_seconds"] = {k: round(v, 3) for k, v in work.spent.items()}
        out = Outcome(problem, [], seconds, executor, interrupted=interrupted, details=details,
                      startup_seconds=startup, store=store.root, tasks_run=ran, tasks_total=total,
                      engine="elimination")
        if interrupted:
            out.store_bytes = store.size_bytes()
            return out
        if executor == "serial":
            seats = _answer(store, problem, work)
            verified = _verify(problem, seats, stages)
        out.seats, out.verified = seats, verified
        stages.update(startup=startup, solve=seconds)
        out.details["stages"] = {k: round(v, 3) for k, v in stages.items()}
        record(store, out, work.committed.elapsed)
        return out


def _answer(store: RunStore, problem: Problem, work: EliminationWork) -> list[Any]:
    """Every seat, from the last factored block of a finished run."""
    from ladders.checkpoints.elimination import stored_answer
    from ladders.solver.games.race import seats_from_values
    values = stored_answer(store, problem.system, work.committed)
    return seats_from_values(problem.system, problem.players, values)


#: What the tasks import on a worker (zarr when they first read or write a segment):
#: imported while the cluster is checked, on every worker at once, rather than by the
#: first two tasks one after the other (0.1 s each on the critical path).
WORKER_MODULES = ("ladders.checkpoints.elimination", "zarr")

ENGINE = EliminationEngine()
