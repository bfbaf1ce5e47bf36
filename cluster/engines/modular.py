"""The ``modular`` engine's driver: Dixon p-adic lifting in this process, certified.

The mathematics is :mod:`ladders.solver.engines.modular`; with ``--checkpoint`` the
lifting state is saved by :mod:`ladders.checkpoints.modular` every ``save_every``
seconds and whenever a right-hand side is certified, so a long solve (races of three or
more players) resumes where it stopped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import Engine, SolveRequest

if TYPE_CHECKING:
    from ladders.checkpoints.store import Manifest, RunStore
    from ladders.cluster.session import Outcome
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem

#: Seconds between two saved lifting states of a modular solve with a store.
SAVE_EVERY = 10.0
#: Largest system the modular engine solves to cross-check another engine (about a
#: minute on one core; the 3-player full board has 91,881 unknowns and takes 30 min).
CROSS_LIMIT = 20_000


class ModularEngine(Engine):
    name = "modular"
    summary = ("p-adic lifting in this process, certified (seconds on the full board); "
               "--checkpoint saves the lifting state")
    options = frozenset({"checkpoint", "seed", "table", "save_every"})
    unit = ("lifting steps", "step")
    cross = "elimination"

    def preference(self, problem: Problem) -> float | None:
        return 1.0

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")
        if request.save_every is not None and not request.checkpoint:
            raise ValueError("--save-every is for --engine modular with --checkpoint")

    def out_of_reach(self, problem: Problem) -> str | None:
        """The plan's memory lower bound (no fill of L + U) beyond one machine."""
        from ladders.solver.checks.estimate import MACHINE_BYTES, modular_bytes
        size = problem.size
        need = modular_bytes(size, size.nonzeros)
        if need <= MACHINE_BYTES:
            return None
        return (f"{size.unknowns:,} unknowns, an answer of ~{size.digits:,} digits: its "
                f"certificate and system need at least {need / 1e9:,.0f} GB, more than the "
                f"{MACHINE_BYTES / 1e9:,.0f} GB of one machine")

    def solve(self, problem: Problem, request: SolveRequest, progress: Any,
              should_stop: Callable[[], bool]) -> Outcome:
        from ladders.cluster.session import run_json
        store = None
        seed = request.seed
        if request.checkpoint:
            from ladders.checkpoints.store import RunStore
            seed = seed if seed is not None else random.SystemRandom().randrange(1 << 32)
            every = SAVE_EVERY if request.save_every is None else request.save_every
            store = RunStore.create(request.checkpoint, run_json(problem, self.name, "serial",
                                                                 seed=seed, save_every=every))
        return _lift(problem, store, request.table, seed, progress, should_stop)

    def resume(self, store: RunStore, problem: Problem, request: SolveRequest, progress: Any,
               should_stop: Callable[[], bool]) -> Outcome:
        return _lift(problem, store, False, store.run.get("seed"), progress, should_stop)

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        from ladders.solver.exact import bits_to_digits
        done = int(store.completed() is not None)
        column = manifest.extra.get("column", 0)
        steps = manifest.extra.get("steps", 0)
        certified = len(manifest.extra.get("columns", {}))
        return {"tasks_done": done, "tasks_total": 1, "column": column, "steps": steps,
                "columns_done": certified,
                "progress": "solved" if done else
                f"right-hand side {column + 1}: {steps:,} lifting steps ({certified} certified)",
                "digits": f"modulus of {bits_to_digits(manifest.max_bits):,} digits so far"}

    def cross_skip(self, problem: Problem) -> str | None:
        """Systems beyond :data:`CROSS_LIMIT` unknowns take minutes to hours here."""
        if problem.unknowns > CROSS_LIMIT:
            return f"{problem.unknowns:,} unknowns: the modular engine takes long here"
        return None

    def seats_in_memory(self, problem: Problem) -> list[mpq]:
        from ladders.solver.engines.modular import solve_dixon
        from ladders.solver.games.race import seats_from_values
        return seats_from_values(problem.system, problem.players, solve_dixon(problem.system).values)


def _lift(problem: Problem, store: RunStore | None, table: bool, seed: int | None, progress: Any,
          should_stop: Callable[[], bool]) -> Outcome:
    """Lift in this process; with a ``store`` save the state as it goes and record the
    verified answer."""
    import contextlib

    from ladders.checkpoints.modular import clear_leftovers, load_state, save_state
    from ladders.cluster.session import Outcome, locked, record
    from ladders.solver.checks.verify import certificate_report, verify_answer
    from ladders.solver.engines.modular import Interrupted, LiftState, solve_dixon
    from ladders.solver.exact import FractionTable, bits_to_digits
    from ladders.solver.games.race import seats_from_values

    system = problem.system
    state = None
    save = None
    clock: dict[str, Any] = {}
    with locked(store) if store is not None else contextlib.nullcontext():
        if store is not None:
            manifest = store.current()
            clear_leftovers(store, manifest)
            state = load_state(store, manifest)
            seed = int(store.run["seed"])
            every = float(store.run.get("save_every", SAVE_EVERY))
            clock.update(last=time.perf_counter(), manifest=manifest)

            def save_now(st: LiftState) -> None:
                now = time.perf_counter()
                certified = len(clock["manifest"].extra.get("columns", {}))
                if now - clock["last"] >= every or len(st.columns) > certified:
                    clock["manifest"] = save_state(store, clock["manifest"], st, now - clock["last"])
                    clock["last"] = now
            save = save_now
        t0 = time.perf_counter()
        seen = {"column": 0, "before": 0, "last": 0}

        def step(k: int, steps: int) -> None:
            """Lifting steps of all right-hand sides so far, and this one's digits."""
            if k != seen["column"]:
                seen["column"], seen["before"] = k, seen["before"] + seen["last"]
            seen["last"] = steps
            if progress is not None:
                progress(seen["before"] + steps, 0, bits_to_digits(steps * 28 // 2),
                         stage=ModularEngine.unit)
        def factoring(rows: int, total: int) -> None:
            if progress is not None:
                progress(rows, total, 0, stage=("factoring L U mod p", "row"))
        try:
            result = solve_dixon(system, seed=seed, progress=step, state=state, save=save,
                                 should_stop=should_stop, factor_progress=factoring)
        except Interrupted as stop:
            if store is not None and stop.state is not None:
                save_state(store, clock["manifest"], stop.state, time.perf_counter() - clock["last"])
            kept = stop.state or state  # stopped while factoring: what the store held
            return Outcome(problem, [], time.perf_counter() - t0, "serial", interrupted=True,
                           store=None if store is None else store.root, engine="modular",
                           tasks_run=0 if kept is None else kept.steps)
        seats = seats_from_values(system, problem.players, result.values)
        tab = None
        if table:
            values = result.columns[0].solution()
            tab = FractionTable.from_values({system.labels[i]: values[i] for i in range(system.size)})
        seconds = time.perf_counter() - t0
        verified = verify_answer(problem, seats, primes=0,
                                 certificate=certificate_report(result.columns, result.rejected))
        details = {"prime": result.prime, "lu_nonzeros": result.lu_nonzeros,
                   "resumed_from_step": 0 if state is None else state.steps,
                   "stages": {k: round(v, 3) for k, v in result.seconds.items()}}
        out = Outcome(problem, seats, seconds, "serial", verified, engine="modular",
                      table=tab, details=details, tasks_run=1, tasks_total=1)
        if store is not None:
            record(store, out, seconds)
        return out


ENGINE = ModularEngine()
