"""The ``elimination`` engine's driver: fraction-free column-block elimination, the
blocks as tasks on Dask (or in this process), rows checkpointed in the run store.

The plan (:mod:`ladders.solver.engines.elimination_plan`) is pure data; the tasks and
the bookkeeping of what may run next are :mod:`ladders.checkpoints.elimination`; this
driver wraps them as :class:`ladders.cluster.loops.Work` for the two loops. Small
problems with no store or cluster asked for run in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ladders.cluster.engines import (Answer, Engine, Option, PlanRow, SolveRequest, get_engine,
                                     human_seconds, system_out_of_reach)
from ladders.cluster.loops import Item, OneStep, Task

if TYPE_CHECKING:
    from ladders.checkpoints.manifests import Manifest
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.problem import Problem
    from ladders.solver.system import LinearSystem

#: What the tasks import on a worker (zarr when they first read or write a segment):
#: imported while the cluster is checked, on every worker at once, rather than by the
#: first two tasks one after the other (0.1 s each on the critical path).
WORKER_MODULES = ("ladders.checkpoints.elimination", "zarr")


class EliminationWork:
    """A stored elimination run as :class:`~ladders.cluster.loops.Work`: items are the
    plan's tasks ``(b, j)``; the manifest is updated per receipt and committed after.

    One task in flight per worker, none queued: a worker that finishes takes the most
    urgent task then ready (often the next link of the critical path), not one queued
    on it earlier (on hasbro cut at 60 the chain twice waited 0.2 s behind such a
    task). While a local cluster starts, this process runs the first tasks."""

    queued = 0
    head_start = True
    modules = WORKER_MODULES
    preload = WORKER_MODULES

    def __init__(self, store: RunStore, system: LinearSystem) -> None:
        from ladders.checkpoints.elimination import plan_of, repair
        self.store = store
        self.plan = plan_of(store, system)
        self.manifest = repair(store, system, store.current())
        self.committed = self.manifest
        self.before = len(self.manifest.state.done)  # type: ignore[attr-defined]
        store.clear_leftovers(self.manifest)  # leftovers of an interrupted run
        self.to_commit: list[Manifest] = []
        self.spent = {"read": 0.0, "compute": 0.0, "write": 0.0}

    @property
    def state(self) -> Any:
        return self.manifest.state

    def finished(self) -> bool:
        from ladders.checkpoints.elimination import is_finished
        return is_finished(self.plan, self.state)

    def ready(self, running: set[Item], limit: int) -> list[Item]:
        from ladders.checkpoints.elimination import ready_tasks
        return list(ready_tasks(self.plan, self.state, running)[:max(0, limit)])  # type: ignore[arg-type]

    def task(self, item: Item) -> Task:
        from ladders.checkpoints.elimination import run_task, task_inputs, urgency
        b, j = item  # type: ignore[misc]
        rows_ref, fac_ref = task_inputs(self.state, b, j)
        token = self.plan.token
        fused = self.plan.fuses(b, j)
        key = f"ladders-{token[:16]}-" + (f"F{b}" if b == j else f"{'UF' if fused else 'U'}{b}-{j}")
        return Task(run_task, (self.store.worker_url, token, b, j, rows_ref, fac_ref), key=key,
                    priority=-urgency(self.plan, (b, j)))

    def run_here(self, item: Item) -> dict[str, Any]:
        """In this process, on the driver's own store (its segment cache, its checks)."""
        from ladders.checkpoints.elimination import execute_task, task_inputs
        b, j = item  # type: ignore[misc]
        return execute_task(self.store, b, j, *task_inputs(self.state, b, j))

    def accept(self, item: Item, receipt: dict[str, Any], seconds: float) -> None:
        from ladders.checkpoints.elimination import apply_receipt
        self.manifest = apply_receipt(self.plan, self.manifest, receipt, seconds)
        self.to_commit.append(self.manifest)
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

    def attach(self, client: Any) -> None:
        """The driver's own work (the commits) stays in this process."""

    def figures(self) -> tuple[int, int, int]:
        from ladders.solver.exact import bits_to_digits
        return len(self.state.done), len(self.plan.tasks()), bits_to_digits(self.manifest.max_bits)

    def tally(self) -> tuple[int, int]:
        return len(self.state.done) - self.before, len(self.plan.tasks())

    def tail_seconds(self) -> float | None:
        return None  # the target's row is the last task


class InMemory(OneStep):
    """Small problems: the plan eliminated in this process, no store."""

    def __init__(self, problem: Problem, plan: Any, progress: Progress | None) -> None:
        self.problem, self.plan, self.progress = problem, plan, progress
        self.values: list[Any] | None = None

    def compute(self) -> bool:
        from ladders.solver.engines.elimination import eliminate_target
        progress = self.progress
        step = None if progress is None else (lambda d, t: progress(d, t, 0))
        self.values = eliminate_target(self.problem.system, self.plan, progress=step)
        return True

    def tally(self) -> tuple[int, int]:
        tasks = len(self.plan.tasks())
        return (tasks if self.done else 0), tasks


class EliminationEngine(Engine):
    name = "elimination"
    summary = ("column-block fraction-free elimination as Dask tasks, the wanted unknown "
               "last (the published method, sped up); resumable")
    takes = frozenset({"checkpoint", "cluster", "executor"})
    options = (
        Option("block_size", "--block-size", click.IntRange(min=1),
               "pivots per column block [default: blocks of equal symbolic cost, sized to "
               "the problem]"),
        Option("order", "--order", click.Choice(["auto", "far", "labels"]),
               "pivot order: far = farthest states first, labels = the published right-to-left "
               "order, auto = whichever needs fewer updates [default: auto]"),
    )
    # the series engine certifies a two-player race in a tenth of a second on hasbro cut
    # at 60 (the modular engine: 0.46 s, on the full board 5 s), while the workers solve
    cross = "series"
    #: a chain question, which the series engine declines: the modular engine (seconds)
    chain_cross = "modular"
    store_format = "ladders.checkpoints.elimination:EliminationState"


    def preference(self, problem: Problem) -> float | None:
        """Behind the others for a race; first for a small sparse chain question
        (:attr:`~ladders.solver.chain_problem.ChainProblem.sparse`), in this process,
        after the component solve where that one fits
        (:attr:`~ladders.solver.chain_problem.ChainProblem.topological`; then the
        chain is taken as sparse without the symbolic analysis, which took 7.6 s of a
        24 s solve of nand 40-1: every QVBS chain the component solve takes was sparse
        by it, and the elimination is the choice there only when a store is asked for)."""
        if self.declines(problem):
            return None
        sparse = problem.topological or problem.sparse
        return 0.5 if sparse else 2.0

    def declines(self, problem: Problem) -> str | None:
        if problem.every:
            return ("it keeps only the wanted unknown, and the least or greatest over several "
                    "start states needs every one")
        return None

    def big(self, problem: Problem) -> bool:
        if problem.sparse:
            return False
        return super().big(problem)

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if (why := self.declines(problem)) is not None:
            raise ValueError(f"the elimination engine declines {problem.name}: {why}; use "
                             "--engine modular or crt")
        if request.table:
            raise ValueError("--table needs every unknown: use the series engine (the default), "
                             "modular or crt")

    def out_of_reach(self, problem: Problem) -> str | None:
        return system_out_of_reach(problem)

    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        from ladders.cluster.engines import chain_row, system_too_big
        from ladders.solver.estimate import elimination_figures
        if problem.pieces is None:
            return chain_row(self, problem)
        fig = elimination_figures(problem.pieces, problem.players, workers)
        if fig["seconds"] is None:
            return PlanRow(f"not estimated: {fig['how']}", fig, None,
                           blocked=system_too_big(fig["size"]))
        return PlanRow(f"{fig['tasks']:,} tasks, {fig['updates']:,} row updates, fill "
                       f"{fig['fill']:,}: about {human_seconds(fig['seconds'])} on {workers} "
                       "workers (a rough fit)", fig, fig["seconds"])

    def _plan_of(self, problem: Problem, request: SolveRequest) -> Any:
        from ladders.solver.engines.elimination_plan import make_plan
        order = request.options.get("order", "auto")
        return make_plan(problem.system, request.options.get("block_size"),
                         None if order == "auto" else order, problem.symbolic)

    def create_store(self, where: str, problem: Problem, request: SolveRequest,
                     executor: str) -> RunStore:
        from ladders.checkpoints.elimination import create_store
        from ladders.cluster.session import run_json
        plan = self._plan_of(problem, request)
        run = run_json(problem, self, request, executor, self.digest(problem),
                       block_size=plan.blocks[0][1], plan=plan.describe(), unknowns=problem.system.size,
                       nonzeros=problem.system.nnz)
        return create_store(where, run, problem.system, plan)

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> Any:
        if store is None:
            return InMemory(problem, self._plan_of(problem, request), progress)
        return EliminationWork(store, problem.system)

    def answer(self, work: Any, problem: Problem, request: SolveRequest) -> Answer:
        from ladders.checkpoints.elimination import stored_answer
        if isinstance(work, InMemory):
            assert work.values is not None
            return Answer(problem.seats_from_values(work.values))
        values = stored_answer(work.store, problem.system, work.committed.state)
        return Answer(problem.seats_from_values(values),
                      details={"worker_seconds": {k: round(v, 3) for k, v in work.spent.items()}})

    def run_cross(self, problem: Problem) -> Engine | None:
        """The series engine beside a race; none beside a chain question, whose answer
        the residue check (tier 2, a solve modulo a random prime) vouches for in a tenth
        of the time that loading the modular engine's kernels takes (``ladders verify``
        still compares with the modular engine)."""
        if problem.pieces is None:
            return None
        return get_engine(self.cross_for(problem))  # type: ignore[arg-type]

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        from ladders.checkpoints.elimination import PlanDamaged, plan_of, recovery
        from ladders.solver.exact import bits_to_digits
        done = manifest.state.done  # type: ignore[attr-defined]
        damaged = None
        try:
            plan = plan_of(store)
            total, count = len(plan.tasks()), len(plan.blocks)
        except PlanDamaged as exc:  # its sizes are in run.json too
            damaged = str(exc)
            total, count = store.run["plan"]["tasks"], store.run["plan"]["blocks"]
        if found := recovery(store, manifest):
            damaged = "; ".join(filter(None, [damaged, found.says(f"'ladders resume {store.url}'")]))
        blocks = sum(1 for b in range(count) if (b, b) in done)
        return {"tasks_done": len(done), "tasks_total": total, "blocks_done": blocks,
                "blocks_total": count, "damaged": damaged,
                "progress": f"{len(done)}/{total} tasks, {blocks}/{count} blocks",
                "digits": f"up to {bits_to_digits(manifest.max_bits):,} in the rows so far"}

    def stored_seats(self, store: RunStore, problem: Problem) -> list[Any] | None:
        from ladders.checkpoints.elimination import is_finished, plan_of, stored_answer
        from ladders.checkpoints.errors import StoreError
        plan, manifest = plan_of(store, problem.system), store.current()
        if not is_finished(plan, manifest.state):  # type: ignore[arg-type]
            raise StoreError(f"{store.url} is not finished ({len(manifest.state.done)}/"  # type: ignore[attr-defined]
                             f"{len(plan.tasks())} tasks); continue it with 'ladders resume {store.url}'")
        return problem.seats_from_values(stored_answer(store, problem.system, manifest.state))  # type: ignore[arg-type]

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[Any]:
        from ladders.solver.engines.elimination import eliminate_target
        return problem.seats_from_values(eliminate_target(problem.system))

    def cross_skip(self, problem: Problem) -> str | None:
        from ladders.cluster.engines import IN_MEMORY_LIMIT
        size = problem.system.size
        if size > IN_MEMORY_LIMIT:
            return f"{size:,} unknowns: elimination takes long here (--cross runs it anyway)"
        return None


ENGINE = EliminationEngine()
