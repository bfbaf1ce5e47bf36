"""The ``modular`` engine's driver: Dixon p-adic lifting in this process, certified.

The mathematics is :mod:`ladders.solver.engines.modular`; with ``--checkpoint`` the
lifting state is saved by :mod:`ladders.checkpoints.modular` every ``save_every``
seconds and whenever a right-hand side is certified, so a long solve (races of three or
more players) resumes where it stopped. The lifting is one step of work in this
process (:class:`Lifting`); the run session around it is the one every engine shares.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ladders.cluster.engines import Answer, Engine, Option, PlanRow, SolveRequest, human_seconds
from ladders.cluster.loops import OneStep

if TYPE_CHECKING:
    from ladders.checkpoints.manifests import Manifest
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem

#: Seconds between two saved lifting states of a modular solve with a store.
SAVE_EVERY = 10.0
#: Largest system the modular engine solves to cross-check another engine (about a
#: minute on one core; the 3-player full board has 91,881 unknowns and takes 30 min).
CROSS_LIMIT = 20_000


class Lifting(OneStep):
    """The lifting as one step in this process: it saves its state to the store as it
    goes (when there is one) and stops at ``should_stop`` with that state saved, so the
    loop sees an unfinished run."""

    def __init__(self, problem: Problem, store: RunStore | None, seed: int | None,
                 progress: Progress | None, should_stop: Callable[[], bool]) -> None:
        self.problem, self.store, self.seed = problem, store, seed
        self.progress, self.should_stop = progress, should_stop
        self.state: Any = None
        self.manifest: Manifest | None = None
        self.result: Any = None
        self.steps = 0
        self.seen = {"column": 0, "before": 0, "last": 0}
        if store is not None:
            from ladders.checkpoints.modular import load_state
            self.manifest = store.current()
            store.clear_leftovers(self.manifest)
            self.state = load_state(store, self.manifest)
            self.seed = int(store.run["seed"])
        self.resumed_from = 0 if self.state is None else self.state.steps

    def compute(self) -> bool:
        """Lift until certified or stopped (then the state is saved, when there is a store)."""
        from ladders.checkpoints.modular import save_state
        from ladders.solver.engines.modular import Interrupted, solve_dixon
        save = None
        store = self.store
        if store is not None:
            every = float(store.run.get("save_every", SAVE_EVERY))
            clock = {"last": time.perf_counter()}

            def save(st: Any) -> None:
                now = time.perf_counter()
                certified = len(self.manifest.state.columns)  # type: ignore[union-attr]
                if now - clock["last"] >= every or len(st.columns) > certified:
                    self.manifest = save_state(store, self.manifest, st, now - clock["last"])  # type: ignore[arg-type]
                    clock["last"] = now
        try:
            self.result = solve_dixon(self.problem.system, seed=self.seed, progress=self._step,
                                      state=self.state, save=save, should_stop=self.should_stop,
                                      factor_progress=self._factoring)
        except Interrupted as stop:
            if store is not None and stop.state is not None:
                self.manifest = save_state(store, self.manifest, stop.state, 0.0)  # type: ignore[arg-type]
            kept = stop.state or self.state  # stopped while factoring: what the store held
            self.steps = 0 if kept is None else kept.steps
            return False
        return True

    def _step(self, k: int, steps: int) -> None:
        """Lifting steps of all right-hand sides so far, and this one's digits."""
        from ladders.solver.exact import bits_to_digits
        seen = self.seen
        if k != seen["column"]:
            seen["column"], seen["before"] = k, seen["before"] + seen["last"]
        seen["last"] = steps
        if self.progress is not None:
            self.progress(seen["before"] + steps, 0, bits_to_digits(steps * 28 // 2),
                          stage=ModularEngine.unit)

    def _factoring(self, rows: int, total: int) -> None:
        if self.progress is not None:
            self.progress(rows, total, 0, stage=("factoring L U mod p", "row"))

    def tally(self) -> tuple[int, int]:
        """A stopped lifting counts its lifting steps (what the store keeps)."""
        return (1, 1) if self.done else (self.steps, 1)


class ModularEngine(Engine):
    name = "modular"
    summary = ("p-adic lifting in this process, certified (seconds on the full board); "
               "--checkpoint saves the lifting state")
    takes = frozenset({"checkpoint", "seed", "table"})
    options = (Option("save_every", "--save-every", click.FloatRange(min=0),
                      f"with --checkpoint: seconds between saved lifting states [default: "
                      f"{SAVE_EVERY:g}]", metavar="SECONDS"),)
    unit = ("lifting steps", "step")
    cross = "elimination"
    store_format = "ladders.checkpoints.modular:ModularState"


    def preference(self, problem: Problem) -> float | None:
        return 1.0

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")
        if "save_every" in request.options and not request.checkpoint:
            raise ValueError(f"{request.spell('save_every')} is for "
                             f"{request.spell('engine', 'modular')} with {request.spell('checkpoint')}")

    def out_of_reach(self, problem: Problem) -> str | None:
        """The plan's memory lower bound (no fill of L + U) beyond one machine."""
        from ladders.solver.estimate import MACHINE_BYTES, modular_bytes
        size = problem.size
        need = modular_bytes(size, size.nonzeros)
        if need <= MACHINE_BYTES:
            return None
        return (f"{size.unknowns:,} unknowns, an answer of ~{size.digits:,} digits: its "
                f"certificate and system need at least {need / 1e9:,.0f} GB, more than the "
                f"{MACHINE_BYTES / 1e9:,.0f} GB of one machine")

    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        from ladders.cluster.engines import chain_row
        from ladders.solver.estimate import MACHINE_BYTES, modular_figures
        if problem.pieces is None:
            return chain_row(self, problem)
        fig = modular_figures(problem.pieces, problem.players)
        bound = "at least " if fig["lower_bound"] else ""
        blocked = (f"needs at least {fig['bytes'] / 1e9:,.0f} GB for its certificate and system, "
                   f"more than the {MACHINE_BYTES / 1e9:,.0f} GB of one machine"
                   if fig["bytes"] > MACHINE_BYTES else None)
        undecided = (None if blocked or not fig["lower_bound"] else
                     "the fill of L + U (not measured for a system this size) multiplies the "
                     "modular engine's lower bounds; see docs/frontier.md")
        return PlanRow(f"{fig['steps']:,} lifting steps: {bound}{human_seconds(fig['seconds'])} on "
                       f"one core, {bound}{fig['bytes'] / 1e9:,.1f} GB", fig, fig["seconds"],
                       lower_bound=fig["lower_bound"], blocked=blocked, undecided=undecided)

    def pick_executor(self, problem: Problem, request: SolveRequest) -> str:
        return "serial"

    def keeps_store(self, problem: Problem, request: SolveRequest, executor: str) -> bool:
        return bool(request.checkpoint)

    def create_store(self, where: str, problem: Problem, request: SolveRequest,
                     executor: str) -> RunStore:
        from ladders.checkpoints.modular import ModularState
        from ladders.checkpoints.store import RunStore
        from ladders.cluster.session import fresh_seed, run_json
        every = request.options.get("save_every", SAVE_EVERY)
        run = run_json(problem, self, request, "serial", self.digest(problem), seed=fresh_seed(request),
                       save_every=every, unknowns=problem.system.size, nonzeros=problem.system.nnz)
        return RunStore.create(where, run, ModularState, lambda _: ModularState())

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> Lifting:
        from ladders.solver.engines.modp import compiled
        if not compiled():
            click.echo("ladders: compiling the modular engine's kernels first (once for this "
                       "install or upgrade, about 15 s)", err=True)
        return Lifting(problem, store, request.seed, progress, should_stop)

    def answer(self, work: Lifting, problem: Problem, request: SolveRequest) -> Answer:
        from ladders.solver.engines.modular import certificate_report
        from ladders.solver.exact import FractionTable
        result, system = work.result, problem.system
        table = None
        if request.table:
            values = result.columns[0].solution()
            table = FractionTable.from_values({system.labels[i]: values[i] for i in range(system.size)})
        seats = (problem.seats_from_solution(result.values, lambda k: result.columns[k].solution())
                 if problem.every else problem.seats_from_values(result.values))
        return Answer(seats,
                      certificate_report(result.columns, result.rejected), table,
                      {"prime": result.prime, "lu_nonzeros": result.lu_nonzeros,
                       "resumed_from_step": work.resumed_from,
                       "stages": {k: round(v, 3) for k, v in result.seconds.items()}})

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        from ladders.cluster.engines import reach_digits
        done = int(store.completed() is not None)
        state = manifest.state
        certified = len(state.columns)  # type: ignore[attr-defined]
        column, steps = state.column, state.steps  # type: ignore[attr-defined]
        return {"tasks_done": done, "tasks_total": 1, "column": column, "steps": steps,
                "columns_done": certified,
                "progress": "solved" if done else
                f"right-hand side {column + 1}: {steps:,} lifting steps ({certified} certified)",
                "digits": reach_digits(manifest.max_bits // 2, manifest.max_bits)}

    def cross_skip(self, problem: Problem) -> str | None:
        """Systems beyond :data:`CROSS_LIMIT` unknowns take minutes to hours here."""
        if problem.unknowns > CROSS_LIMIT:
            return f"{problem.unknowns:,} unknowns: the modular engine takes long here"
        return None

    def memory_seconds(self, problem: Problem) -> float | None:
        """The race system's build and the plan's lifting estimate (a lower bound
        where the fill was not measured); None for a chain question."""
        if problem.pieces is None:
            return None
        from ladders.solver.estimate import modular_memory_seconds
        return modular_memory_seconds(problem.pieces, problem.players)

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[mpq] | None:
        from ladders.solver.engines.modular import Interrupted, solve_dixon
        try:
            values = solve_dixon(problem.system, should_stop=should_stop).values
        except Interrupted:
            return None
        return problem.seats_from_values(values)


ENGINE = ModularEngine()
