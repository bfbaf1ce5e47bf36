"""The registry of exact engines: ``--engine NAME`` is looked up here and nowhere else.

Each engine is one named part with the same name in every layer: its mathematics in
``ladders/solver/engines/NAME.py``, its store format in ``ladders/checkpoints/NAME.py``,
and its driver here, in ``ladders/cluster/engines/NAME.py``, which defines ``ENGINE``, an
instance of a subclass of :class:`Engine`. The driver declares the options it accepts
and knows how to start, resume, report progress and cross-check; no other code
branches on an engine's name. Adding an engine adds files (as xarray's backends do).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from ladders.cluster.executor import ClusterSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from ladders.checkpoints.store import Manifest, RunStore
    from ladders.cluster.session import Outcome
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem



@dataclass(frozen=True)
class SolveRequest:
    """How to solve, as the user asked it (the command line or :func:`ladders.solve`).

    Fields left at their defaults were not asked for; :meth:`Engine.check` refuses
    the ones an engine does not take.
    """

    checkpoint: str | None = None
    spec: ClusterSpec = ClusterSpec()
    executor: str = "auto"
    seed: int | None = None
    table: bool = False
    block_size: int | None = None
    order: str = "auto"
    save_every: float | None = None
    batch_primes: int | None = None
    force: bool = False  # start even what the plan calls out of reach

    def given(self) -> set[str]:
        """Names of the options given (not at their defaults); the cluster options
        count as ``cluster`` and only when they ask for something; ``force`` is for
        every engine."""
        out = {f.name for f in fields(self)
               if f.name not in ("spec", "force") and getattr(self, f.name) != f.default}
        if self.spec.remote or self.spec.workers:
            out.add("cluster")
        return out


#: The command-line spelling of each request option, for messages.
FLAGS = {"checkpoint": "--checkpoint", "cluster": "--scheduler/--scheduler-file/--workers",
         "executor": "--executor", "seed": "--seed", "table": "--table",
         "block_size": "--block-size", "order": "--order", "save_every": "--save-every",
         "batch_primes": "--batch-primes"}


class Engine:
    """An exact engine's driver. Subclasses set the class attributes and the methods."""

    #: the name in every layer and on the command line
    name: ClassVar[str]
    #: one line for ``ladders solve --help``
    summary: ClassVar[str]
    #: the :class:`SolveRequest` options it takes (``cluster`` for the Dask ones)
    options: ClassVar[frozenset[str]]
    #: the progress bar's description and unit
    unit: ClassVar[tuple[str, str]] = ("tasks", "task")
    #: the engine whose in-memory answer cross-checks this one's, if any
    cross: ClassVar[str | None] = None

    def preference(self, problem: Problem) -> float | None:
        """Lower is preferred when the user names no engine; None: not for this problem."""
        return None

    def describe(self, problem: Problem) -> str:
        """What this engine will solve, in one phrase (printed before it starts)."""
        system = problem.system
        return f"{system.description}: {system.size:,} unknowns, {system.nnz:,} nonzeros"

    def digest(self, problem: Problem) -> str:
        """What a store records to refuse resuming another problem (run.json)."""
        return problem.system.digest()

    def check(self, problem: Problem, request: SolveRequest) -> None:
        """Refuse what this engine cannot do for ``problem`` (``ValueError``), beyond the
        options it does not take at all (see :func:`check_request`)."""

    def out_of_reach(self, problem: Problem) -> str | None:
        """Why the plan's cost model (:mod:`ladders.solver.checks.estimate`) calls
        ``problem`` out of this engine's reach on one machine, with its figures; None
        when it is not. Never builds the system (that is what it guards against)."""
        return None

    def solve(self, problem: Problem, request: SolveRequest, progress: Any,
              should_stop: Callable[[], bool]) -> Outcome:
        raise NotImplementedError

    def resume(self, store: RunStore, problem: Problem, request: SolveRequest, progress: Any,
               should_stop: Callable[[], bool]) -> Outcome:
        raise NotImplementedError

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """``tasks_done``, ``tasks_total``, ``progress`` and ``digits`` (phrases for
        people) and any figures of its own, from the store's files alone."""
        raise NotImplementedError

    def stored_seats(self, store: RunStore, problem: Problem) -> list[mpq] | None:
        """The answer a finished run holds (before COMPLETE.json), if the engine can
        read one back; None when only COMPLETE.json has it."""
        return None

    def seats_in_memory(self, problem: Problem) -> list[mpq]:
        """Every seat, solved in this process with no store (for cross-checks)."""
        raise NotImplementedError

    def cross_skip(self, problem: Problem) -> str | None:
        """Why :meth:`seats_in_memory` would take too long to cross-check ``problem``."""
        return None

    def recheck(self, problem: Problem, seats: list[mpq], primes: int,
                seed: int | None) -> dict[str, Any] | None:
        """``ladders verify``'s check at ``primes`` fresh primes for a race whose system
        is beyond :data:`~ladders.solver.checks.residue_check.CHECK_LIMIT` unknowns (too
        big to solve again modulo a prime); None: the engine has none, and the modular
        check runs whatever the size (the engine solved that system, after all)."""
        return None


class PrimeBatchEngine(Engine):
    """An engine whose run is batches of primes (``crt``, ``series``): batch k holds the
    same primes in every session, so a resume runs :meth:`run` on the store as it is,
    with the executor the run was started with unless the user names another."""

    unit = ("batches", "batch")

    def run(self, store: RunStore, problem: Problem, request: SolveRequest, executor: str,
            progress: Any, should_stop: Callable[[], bool]) -> Outcome:
        """Batches until the answer is confirmed, on a store that may hold some already."""
        raise NotImplementedError

    def resume(self, store: RunStore, problem: Problem, request: SolveRequest, progress: Any,
               should_stop: Callable[[], bool]) -> Outcome:
        executor = request.executor if request.executor != "auto" else store.run["executor"]
        return self.run(store, problem, SolveRequest(spec=request.spec), executor, progress,
                        should_stop)

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """How many batches a run takes is known only when its answer is confirmed: the
        modulus must grow past about twice the digits of the fractions."""
        from ladders.checkpoints.batches import committed_batches
        from ladders.solver.exact import bits_to_digits
        done = len(committed_batches(manifest))
        primes = done * int(store.run["batch_primes"])
        return {"tasks_done": done, "tasks_total": 0, "batches_done": done, "primes_done": primes,
                "progress": f"{done} batches ({primes:,} primes)",
                "digits": f"modulus of {bits_to_digits(manifest.max_bits):,} digits so far"}

@cache
def engines() -> dict[str, Engine]:
    """Every engine of this package, by name (each module's ``ENGINE``)."""
    found: dict[str, Engine] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        engine = getattr(module, "ENGINE", None)
        if isinstance(engine, Engine):
            found[engine.name] = engine
    return dict(sorted(found.items()))


def engine_names() -> dict[str, str]:
    """Every engine's name and one-line summary (for ``--help``)."""
    return {name: e.summary for name, e in engines().items()}


def get_engine(name: str) -> Engine:
    """The engine called ``name`` (``ValueError`` naming the known ones)."""
    try:
        return engines()[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; use one of {', '.join(engines())}") from None


def choose_engine(problem: Problem) -> Engine:
    """The preferred engine for ``problem`` (see :meth:`Engine.preference`)."""
    ranked = [(pref, name) for name, e in engines().items()
              if (pref := e.preference(problem)) is not None]
    if not ranked:
        raise ValueError(f"no exact engine solves {problem.players} players")
    return engines()[min(ranked)[1]]


def check_request(engine: Engine, problem: Problem, request: SolveRequest) -> None:
    """Refuse options ``engine`` does not take, naming the engines that take them, and
    (unless ``request.force``) a solve its plan calls out of reach, naming the figures
    and the engines that can do it."""
    for option in sorted(request.given() - engine.options):
        takers = [n for n, e in engines().items() if option in e.options]
        where = f"--engine {' or '.join(takers)}" if takers else "no engine"
        raise ValueError(f"{FLAGS[option]} is for {where}, not the {engine.name} engine")
    engine.check(problem, request)
    if request.force:
        return
    why = engine.out_of_reach(problem)
    if why is None:
        return
    others = [name for name, e in engines().items() if name != engine.name
              and e.preference(problem) is not None and e.out_of_reach(problem) is None]
    way = (f"the {' or '.join(others)} engine can (--engine {others[0]})" if others
           else "no engine is within reach of one machine")
    raise ValueError(f"{problem.board.name} with {problem.players} players is out of reach of "
                     f"the {engine.name} engine: {why} ('ladders plan' shows the figures); "
                     f"{way}, or add --force to start it anyway")


def system_out_of_reach(problem: Problem) -> str | None:
    """:meth:`Engine.out_of_reach` of the engines that build the race's system: the
    system alone, before any fill, must fit in one machine."""
    from ladders.solver.checks.estimate import MACHINE_BYTES, system_bytes
    size = problem.size
    need = system_bytes(size)
    if need <= MACHINE_BYTES:
        return None
    return (f"its system of {size.unknowns:,} unknowns and ~{size.nonzeros:,} nonzeros needs at "
            f"least {need / 1e9:,.0f} GB before any fill, more than the {MACHINE_BYTES / 1e9:,.0f} GB "
            "of one machine")


def cross_report(problem: Problem, seats: list[mpq], engine: str,
                 force: bool = False) -> dict[str, Any] | None:
    """Tier 3 ``cross`` for an answer of ``engine``: the in-memory answer of the engine
    it names as its checker (None if it names none), compared with ``==``; skipped
    where that would take long, unless ``force``."""
    from ladders.solver.checks.verify import cross_check
    other = get_engine(engine).cross
    if other is None:
        return None
    checker = get_engine(other)
    skip = None if force else checker.cross_skip(problem)
    return cross_check(problem, seats, other, checker.seats_in_memory, skip)
