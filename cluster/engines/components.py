"""The ``components`` engine's driver: the topological solve in this process.

The mathematics is :mod:`ladders.solver.engines.components`: the strongly connected
components of ``A``'s pattern in topological order, each solved modulo word primes
(a one-unknown component in one pass over its row), then Chinese remaindering and
rational reconstruction of the wanted unknowns only. It keeps no store: on the chains
it is chosen for, the solve takes about as long as building the system (nand 40-1, 629,595
unknowns: 0.17 s), far less than a store's start; with ``--checkpoint`` a chain question
goes to an engine that keeps one (:func:`~ladders.cluster.engines.choose_engine`).

It is the default for a chain question whose components are small
(:attr:`~ladders.solver.chain_problem.ChainProblem.topological`); a race of pieces
that never meet is the series engine's, and a chain whose components are large (pieces
that meet, herman's rings) a factorization's (modular, elimination).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import Answer, Engine, PlanRow, SolveRequest
from ladders.cluster.loops import OneStep

if TYPE_CHECKING:
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem


def wanted_unknowns(problem: Problem) -> list[int]:
    """The unknowns whose values a solve of ``problem`` needs: the target, and for a
    question over several start states (``every``) each start state that is unknown."""
    system = problem.system
    wanted = [system.target]
    if problem.every:
        # unknown k is state plan.unknowns[k] (increasing): found by bisection, not by a
        # table of every unknown
        import numpy as np
        states = problem.plan.unknowns
        starts = np.array([i for i, _ in problem.chain.start], dtype=np.int64)
        at = np.searchsorted(states, starts)
        found = at < len(states)
        found[found] = states[at[found]] == starts[found]
        wanted += sorted(set(at[found].tolist()) - {system.target})
    return wanted


class Topological(OneStep):
    """The topological solve as one step in this process."""

    def __init__(self, problem: Problem, seed: int | None) -> None:
        self.problem, self.seed = problem, seed
        self.result: Any = None
        self.wanted = wanted_unknowns(problem)

    def compute(self) -> bool:
        from ladders.solver.engines.components import solve_topological, structure
        problem = self.problem
        found = problem.structure or structure(problem.system)
        self.result = solve_topological(problem.system, found, self.wanted, self.seed)
        return True


class ComponentsEngine(Engine):
    name = "components"
    summary = ("strongly connected components in topological order, modulo word primes, "
               "in this process (Storm's topological solver); chain questions")
    takes = frozenset({"seed"})
    unit = ("components", "solve")
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

    def pick_executor(self, problem: Problem, request: SolveRequest) -> str:
        return "serial"

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> Topological:
        return Topological(problem, request.seed)

    def answer(self, work: Topological, problem: Problem, request: SolveRequest) -> Answer:
        result = work.result
        values = result.values[0]
        details = {"primes": result.primes, "batches": result.batches,
                   "stages": {k: round(v, 3) for k, v in result.seconds.items()}}
        if problem.every:
            at = dict(zip(work.wanted, result.values))
            seats = problem.seats_from_solution(values, lambda k: {w: v[k] for w, v in at.items()})
            return Answer(seats, details=details)
        return Answer(problem.seats_from_values(values), details=details)

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[mpq]:
        work = Topological(problem, None)
        work.compute()
        return self.answer(work, problem, SolveRequest()).seats


ENGINE = ComponentsEngine()
