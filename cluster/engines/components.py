"""The ``components`` engine's driver: the topological solve in this process, or as
batches of primes with a store.

The mathematics is :mod:`ladders.solver.engines.components`: the strongly connected
components of ``A``'s pattern in topological order, each solved modulo word primes
(a one-unknown component in one pass over its row), then Chinese remaindering and
rational reconstruction of the wanted unknowns only. Without a store it runs in this
process in one step: on the chains it is chosen for, the solve takes about as long as
building the system (nand 40-1, 629,595 unknowns: 0.17 s), far less than a store's
start. With ``--checkpoint``, or on a Dask cluster (``--workers``, ``--scheduler``),
the run is batches of primes as tasks, like the ``crt`` engine's
(:mod:`~ladders.cluster.engines.prime_batches`): each batch's residues of the wanted
unknowns are committed to the store (:mod:`ladders.checkpoints.components`), a resume
after a crash goes on from the batches committed, and ``ladders status`` reads them.

It is the default for a chain question whose components are small
(:attr:`~ladders.solver.chain_problem.ChainProblem.topological`); a race of pieces
that never meet is the series engine's, and a chain whose components are large (pieces
that meet, herman's rings) a factorization's (modular, elimination).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import Answer, PlanRow, SolveRequest
from ladders.cluster.engines.prime_batches import BatchWork, PrimeBatchEngine, batch_option
from ladders.cluster.loops import OneStep

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem


class Topological(OneStep):
    """The topological solve as one step in this process."""

    def __init__(self, problem: Problem, seed: int | None) -> None:
        from ladders.checkpoints.components import wanted_unknowns
        self.problem, self.seed = problem, seed
        self.result: Any = None
        self.wanted = wanted_unknowns(problem)  # type: ignore[arg-type]

    def compute(self) -> bool:
        from ladders.solver.engines.components import solve_topological, structure
        problem = self.problem
        found = problem.structure or structure(problem.system)
        self.result = solve_topological(problem.system, found, self.wanted, self.seed)
        return True


#: Primes per task of a stored run: nand 40-1 solves 64 primes in 0.17 s, so a batch of
#: nand 60-4 (18.8 million states) takes seconds, against ~50 ms of store round trip.
BATCH_PRIMES = 32


class BatchedTopological(BatchWork):
    """A stored run of the topological solve: batches of primes, each batch's residues
    of the wanted unknowns held against the candidate the batches before give
    (:class:`~ladders.solver.engines.components.Reconstruction`)."""

    modules = ("ladders.checkpoints.components",)
    preload = modules

    def __init__(self, store: RunStore, problem: Problem) -> None:
        from ladders.checkpoints.components import (components_solve, restore_structure,
                                                    wanted_unknowns)
        from ladders.solver.engines.components import Reconstruction
        super().__init__(store)
        restore_structure(store, problem)  # type: ignore[arg-type]  # what the workers read
        components_solve(store, problem)  # type: ignore[arg-type]  # batches run here use it
        self.wanted = wanted_unknowns(problem)  # type: ignore[arg-type]
        self.rebuilt = Reconstruction(len(self.wanted), problem.system.columns)
        self.fresh: list[tuple[int, list[int]]] = []
        self.start()

    def sequence(self) -> Iterator[int]:
        from ladders.solver.engines.components import prime_sequence
        return prime_sequence(self.seed)

    def batch_task(self, k: int, primes: list[int]) -> Callable[..., dict[str, Any]]:
        from ladders.checkpoints.components import run_components_batch
        return run_components_batch

    def fold(self, ref: SegmentRef) -> None:
        from ladders.checkpoints.components import read_components_batch
        self.fresh += read_components_batch(self.store, ref)

    def bits(self) -> int:
        return self.rebuilt.bits

    def conclude(self) -> bool:
        """The batches folded since the last conclusion, held against the candidate of
        those before (a resumed run's committed batches are all taken in first)."""
        fresh, self.fresh = self.fresh, []
        return bool(fresh) and self.rebuilt.add(fresh)


class ComponentsEngine(PrimeBatchEngine):
    name = "components"
    summary = ("strongly connected components in topological order, modulo word primes "
               "(Storm's topological solver); in this process, or batches of primes with a "
               "store (--checkpoint, a Dask cluster); chain questions")
    takes = frozenset({"checkpoint", "cluster", "executor", "seed"})
    options = (batch_option(f"{BATCH_PRIMES}"),)
    unit = ("batches", "batch")
    #: the solve is compiled and lets the interpreter go: the bounds (compiled too, in
    #: topological order) are computed beside it, on the other core
    checks_beside = True

    def preference(self, problem: Problem) -> float | None:
        """First for a chain question whose components are small (a model checker's
        chain); not chosen for a race of pieces that never meet (the series engine's)
        nor where the dense solves of its components would be large."""
        return 0.4 if problem.topological else None

    def describe(self, problem: Problem) -> str:
        found = problem.structure
        return super().describe(problem) + (f", {found.describe()}" if found is not None else "")

    def why(self, problem: Problem) -> str | None:
        found = problem.structure
        if found is None or not problem.topological:
            return None
        return (f"{found.describe()}: solved one component at a time, in topological "
                "order, modulo word primes")

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table:
            raise ValueError("--table needs every unknown: use the series engine (the default), "
                             "modular or crt")

    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        from ladders.cluster.engines import chain_row
        if problem.pieces is None:
            return chain_row(self, problem)
        return PlanRow("not estimated: for chain questions whose strongly connected components "
                       "are small (a race's system is one large component or few)", {}, None,
                       undecided="no cost model for races")

    def big(self, problem: Problem) -> bool:
        """Never: the solve in this process is what it is chosen for; a cluster only
        where one is asked for."""
        return False

    def keeps_store(self, problem: Problem, request: SolveRequest, executor: str) -> bool:
        """Where ``--checkpoint`` or a Dask cluster asks for one (not a temporary store
        for a solve in this process: it would cost more than the solve)."""
        return executor == "dask" or bool(request.checkpoint)

    def default_batch(self, problem: Problem) -> int:
        return BATCH_PRIMES

    def first_state(self, store: RunStore, problem: Problem) -> BatchState:
        """No batch yet; the arrays the batches read written once
        (:func:`~ladders.checkpoints.components.write_structure`)."""
        from ladders.checkpoints.components import write_structure
        write_structure(store, problem)  # type: ignore[arg-type]
        return super().first_state(store, problem)

    def run_fields(self, problem: Problem) -> dict[str, Any]:
        """The size of the system, for ``ladders status``."""
        return {"unknowns": problem.system.size, "nonzeros": problem.system.nnz}

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]
                  ) -> Topological | BatchedTopological:
        if store is None:
            return Topological(problem, request.seed)
        return BatchedTopological(store, problem)

    def answer(self, work: Topological | BatchedTopological, problem: Problem,
               request: SolveRequest) -> Answer:
        if isinstance(work, BatchedTopological):
            found = work.rebuilt.by_unknown()
            details: dict[str, Any] = {"batches": work.batches()}
        else:
            found = work.result.values
            details = {"primes": work.result.primes, "batches": work.result.batches,
                       "stages": {k: round(v, 3) for k, v in work.result.seconds.items()}}
        values = found[0]
        if problem.every:
            at = dict(zip(work.wanted, found))
            seats = problem.seats_from_solution(values, lambda k: {w: v[k] for w, v in at.items()})
            return Answer(seats, details=details)
        return Answer(problem.seats_from_values(values), details=details)

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[mpq]:
        work = Topological(problem, None)
        work.compute()
        return self.answer(work, problem, SolveRequest()).seats


ENGINE = ComponentsEngine()
