"""The registry of exact engines: ``--engine NAME`` is looked up here and nowhere else.

Each engine is one named part with the same name in every layer: its mathematics in
``ladders/solver/engines/NAME.py``, its store format in ``ladders/checkpoints/NAME.py``,
and its driver here, in ``ladders/cluster/engines/NAME.py``, which defines ``ENGINE``, an
instance of a subclass of :class:`Engine`. An engine describes itself: its options
(with their help), its row of ``ladders plan``, and what it needs of a run (its store,
its work, how its answer is read); the run session
(:mod:`ladders.cluster.session`), the command line and the plan ask it, and no other
code branches on an engine's name. Adding an engine adds files, as xarray's backends
do: a module here, or any installed package that declares one under the entry point
group ``ladders.engines`` (``toy = "my_package.engine:ENGINE"``).

The drivers here: :mod:`.series`, :mod:`.modular`, :mod:`.crt`, :mod:`.elimination` and
:mod:`.components`;
:mod:`.prime_batches` is what crt and series share (batches of primes as tasks).
"""

from __future__ import annotations

import abc
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ladders.cluster.connect import ClusterSpec

if TYPE_CHECKING:
    from ladders.checkpoints.manifests import Manifest, ManifestState
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.loops import Work
    from ladders.solver.exact import FractionTable, mpq
    from ladders.solver.problem import Problem

#: The entry point group of engines from other packages.
ENTRY_POINTS = "ladders.engines"
#: A day, the horizon of the plan's verdicts.
DAY = 86_400.0
#: Cluster sizes the plan tries when one machine takes more than a day.
CLUSTER_SIZES = (16, 64, 256, 1024)
#: Race systems this small run in this process unless a cluster is asked for.
IN_MEMORY_LIMIT = 2000


class Progress(Protocol):
    """How a run reports progress: ``done`` of ``total`` (0: not known yet; the series
    engine's: expected) units, the digits reached so far, a ``stage`` (a description
    and unit) when a new phase starts (e.g. the modular engine's factorization before
    its lifting), a ``note``: what the run waits for until the next unit is done (its
    first batches), and ``tail``: the seconds expected after the last unit (the
    reconstruction at full size), for the time left."""

    def __call__(self, done: int, total: int, digits: int,
                 stage: tuple[str, str] | None = None, note: str | None = None,
                 tail: float | None = None) -> None: ...


@dataclass(frozen=True)
class Option:
    """An option an engine takes beyond the common ones: ``name`` is its keyword
    (``ladders.solve(..., name=value)``), ``flag`` its spelling on the command line,
    ``type`` a click parameter type that checks a value (from the command line or the
    API), ``help`` what it does for this engine, its default included."""

    name: str
    flag: str
    type: Any
    help: str
    metavar: str | None = None

    def convert(self, value: Any) -> Any:
        """``value`` checked and converted by :attr:`type` (``ValueError`` naming it)."""
        import click
        try:
            return self.type.convert(value, None, None)
        except click.BadParameter as exc:
            raise ValueError(f"{self.name}={value!r}: {exc.format_message()}") from None


#: The options every engine may take (fields of :class:`SolveRequest`), with their
#: command-line spelling; an engine lists the ones it takes in :attr:`Engine.takes`.
COMMON_FLAGS = {"checkpoint": "--checkpoint", "cluster": "--scheduler/--scheduler-file/--workers",
                "executor": "--executor", "seed": "--seed", "table": "--table"}


@dataclass(frozen=True)
class SolveRequest:
    """How to solve, as the user asked it (the command line or :func:`ladders.solve`).

    Fields left at their defaults were not asked for; ``options`` holds the engines' own
    options that were given (:class:`Option`). :func:`check_request` refuses what the
    chosen engine does not take.
    """

    checkpoint: str | None = None
    spec: ClusterSpec = ClusterSpec()
    executor: str = "auto"
    seed: int | None = None
    table: bool = False
    force: bool = False  # start even what the plan calls out of reach
    options: Mapping[str, Any] = field(default_factory=dict)
    #: how messages name options: the Python API's keywords (``checkpoint=``, set by
    #: :meth:`build`) or the command line's flags (``--checkpoint``)
    keywords: bool = False
    #: the files the command line writes when the run is answered (``output``,
    #: ``table``: absolute paths or URLs), kept in the store's run.json so that
    #: ``ladders resume`` writes them too
    outputs: Mapping[str, str] = field(default_factory=dict)

    def spell(self, name: str, value: Any = None) -> str:
        """Option ``name`` (a field, an engine's option, ``engine`` or ``cluster``), with
        ``value`` if given, as this request's caller writes it: ``engine='series'`` or
        ``--engine series``, ``force=True`` or ``--force``."""
        if self.keywords:
            keyword = "spec" if name == "cluster" else name
            return f"{keyword}=" if value is None else f"{keyword}={value!r}"
        written = "--engine" if name == "engine" else "--force" if name == "force" else flag(name)
        return written if value is None or value is True else f"{written} {value}"

    @classmethod
    def build(cls, **given: Any) -> SolveRequest:
        """A request from keywords: the fields above, and any engine's options (checked
        and converted by their types); an unknown keyword is a ``ValueError``."""
        own = {f.name for f in fields(cls)} - {"options", "keywords", "outputs"}
        known = engine_options()
        extra = {}
        for name, value in given.items():
            if name in own:
                continue
            if name not in known:
                names = sorted(own | set(known))
                raise ValueError(f"unknown solve option {name!r}; the options are {', '.join(names)}")
            if value is not None:
                extra[name] = known[name].convert(value)
        return cls(**{k: v for k, v in given.items() if k in own}, options=extra, keywords=True)

    def given(self) -> set[str]:
        """Names of the options given (not at their defaults); the cluster options
        count as ``cluster`` and only when they ask for something; ``force`` is for
        every engine."""
        defaults = {f.name: f.default for f in fields(self) if f.name in COMMON_FLAGS}
        out = {name for name, default in defaults.items() if getattr(self, name) != default}
        if self.spec.remote or self.spec.workers:
            out.add("cluster")
        return out | set(self.options)


@dataclass(frozen=True)
class Answer:
    """What an engine reads from its finished work: every seat, the engine's own
    certificate report (tier 3, if it has one), the two-player table when asked for,
    and its figures (``stages``: seconds of its own steps)."""

    seats: list[mpq]
    certificate: dict[str, Any] | None = None
    table: FractionTable | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanRow:
    """One engine's row of ``ladders plan``: ``text`` for people, ``figures`` for JSON,
    ``seconds`` on the plan's workers (None: not estimated), whether more workers bring
    it down (``scales``; ``serial_seconds`` of them they do not: the series engine's
    start and its reconstruction after the last batch), whether the figures are lower bounds, and
    ``blocked``: why the engine cannot do it within a day on any cluster, in its own
    words (None: it can, or it cannot tell: ``undecided``)."""

    text: str
    figures: dict[str, Any]
    seconds: float | None
    scales: bool = False
    lower_bound: bool = False
    blocked: str | None = None
    undecided: str | None = None
    serial_seconds: float = 0.0

    def seconds_on(self, workers: int, size: int) -> float | None:
        """The wall time on ``size`` workers, from the plan's on ``workers``: the part
        that scales, scaled; the serial part as it is."""
        if self.seconds is None:
            return None
        return (self.seconds - self.serial_seconds) * workers / size + self.serial_seconds


def chain_row(engine: Engine, problem: Problem) -> PlanRow:
    """An engine's row of ``ladders plan`` for a chain question: why it declines it, or
    its time in this process from the chain engines' cost model
    (:func:`ladders.solver.estimate.chain_seconds`), or that it has none."""
    from ladders.solver.estimate import chain_seconds
    why = engine.declines(problem)
    if why is not None:
        return PlanRow(f"declines: {why}", {}, None)
    seconds = chain_seconds(problem, engine.name)
    if seconds is None:
        return PlanRow("not estimated: no cost model for it on chains", {}, None,
                       undecided="no cost model for chains")
    return PlanRow(f"about {human_seconds(seconds)} in this process (the chain engines' cost "
                   "model: a rough fit)", {"seconds": round(seconds, 3)}, seconds)


class Engine(abc.ABC):
    """An exact engine's driver: what it is, what it takes, and what it needs of a run.
    Subclasses set the class attributes and the abstract methods."""

    #: the name in every layer and on the command line
    name: ClassVar[str]
    #: one line for ``ladders solve --help``
    summary: ClassVar[str]
    #: the common options it takes (keys of :data:`COMMON_FLAGS`)
    takes: ClassVar[frozenset[str]] = frozenset()
    #: its own options
    options: ClassVar[tuple[Option, ...]] = ()
    #: the progress bar's description and unit
    unit: ClassVar[tuple[str, str]] = ("tasks", "task")
    #: the engine whose in-memory answer ``ladders verify`` compares with, if any
    cross: ClassVar[str | None] = None
    #: the one it compares with for a chain question that is no race, where not :attr:`cross`
    chain_cross: ClassVar[str | None] = None
    #: its manifests' payload as ``"module:Class"`` (a :class:`ManifestState` of its
    #: ``checkpoints/`` module, imported when a store is opened); None: it keeps no store
    store_format: ClassVar[str | None] = None
    #: whether a serial run's checks (the bounds) start with its work, in a thread beside
    #: it: for work that is compiled and lets the interpreter go (else they start after)
    checks_beside: ClassVar[bool] = False

    @property
    def state_type(self) -> type[ManifestState] | None:
        """The class of its manifests' payload (see :attr:`store_format`)."""
        if self.store_format is None:
            return None
        module, name = self.store_format.split(":")
        return getattr(importlib.import_module(module), name)

    # ------------------------------------------------------------------ what it is
    @abc.abstractmethod
    def preference(self, problem: Problem) -> float | None:
        """Lower is preferred when the user names no engine; None: not for this problem."""

    def declines(self, problem: Problem) -> str | None:
        """Why this engine cannot solve a problem of this kind at all (the engine's
        declaration of what it needs, e.g. pieces that never meet), or None."""
        return None

    def describe(self, problem: Problem) -> str:
        """What this engine will solve, in one phrase (printed before it starts)."""
        system = problem.system
        return f"{system.description}: {system.size:,} unknowns, {system.nnz:,} nonzeros"

    def why(self, problem: Problem) -> str | None:
        """Why this engine suits ``problem``, in one phrase for the solve's opening
        line (None: nothing beyond its name)."""
        return None

    def digest(self, problem: Problem) -> str:
        """What a store records to refuse resuming another problem (run.json)."""
        return problem.system.digest()

    def check(self, problem: Problem, request: SolveRequest) -> None:
        """Refuse what this engine cannot do for ``problem`` (``ValueError``), beyond the
        options it does not take at all (see :func:`check_request`)."""

    def out_of_reach(self, problem: Problem) -> str | None:
        """Why the plan's cost model calls ``problem`` out of this engine's reach on one
        machine, with its figures; None when it is not. Never builds the system (that
        is what it guards against)."""
        return None

    def forecast(self, problem: Problem, workers: int | None) -> str | None:
        """What a solve says before it starts a long run on ``workers`` (None: a remote
        cluster's, not known yet): the cost model's estimate, at once (no measurement);
        None for a short one."""
        return None

    def run_seconds(self, problem: Problem, workers: int) -> float | None:
        """The cost model's wall time of a solve of ``problem`` on ``workers``, at once
        (no measurement); None where the engine has no model."""
        return None

    @abc.abstractmethod
    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        """Its row of ``ladders plan`` for any problem (from :mod:`ladders.solver.estimate`)
        on ``workers`` workers, ``per_machine`` of them sharing a machine (None: the
        model's default; a model that does not count them ignores it). A chain question
        (no :attr:`~ladders.solver.problem.Problem.pieces`) gets :func:`chain_row`."""

    # ------------------------------------------------------------------ a run
    def pick_executor(self, problem: Problem, request: SolveRequest) -> str:
        """``serial`` (this process) or ``dask``: the request's, else ``auto``: a Dask
        cluster when one is asked for (``--scheduler``, ``--workers``) or the work is
        big (:meth:`big`), else this process. A store alone asks for no cluster: it is
        how a run survives a stop, not how it runs in parallel."""
        if request.executor != "auto":
            return request.executor
        asked = request.spec.remote or bool(request.spec.workers)
        return "dask" if asked or self.big(problem) else "serial"

    def big(self, problem: Problem) -> bool:
        """Whether ``problem`` is worth a Dask cluster when none is asked for."""
        return problem.system.size > IN_MEMORY_LIMIT

    def keeps_store(self, problem: Problem, request: SolveRequest, executor: str) -> bool:
        """Whether the run keeps a store (a temporary one without ``--checkpoint``)."""
        return self.store_format is not None and (executor == "dask" or bool(request.checkpoint))

    def create_store(self, where: str, problem: Problem, request: SolveRequest,
                     executor: str) -> RunStore:
        """A new store for the run at ``where``."""
        raise TypeError(f"the {self.name} engine keeps no store")

    @abc.abstractmethod
    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> Work:
        """The run's work (:class:`~ladders.cluster.loops.Work`) on ``store`` as it is
        (a resumed run continues from its newest manifest), or in memory."""

    @abc.abstractmethod
    def answer(self, work: Any, problem: Problem, request: SolveRequest) -> Answer:
        """Every seat (and its certificate, table, figures) from a finished work."""

    def bounds_digits(self, problem: Problem) -> tuple[int, float]:
        """Digits to which the Markov bounds must agree, and the seconds they may take."""
        from ladders.solver.checks.verify import VERIFY_SECONDS
        return 16, VERIFY_SECONDS

    def run_cross(self, problem: Problem) -> Engine | None:
        """The engine whose in-memory answer a run compares its own with (None: none)."""
        return None

    def cross_for(self, problem: Problem) -> str | None:
        """The engine ``ladders verify`` compares with for ``problem``: :attr:`cross` for
        a race, :attr:`chain_cross` (else :attr:`cross`) for any other chain question;
        None where that engine declines the problem (a chain, for the series engine)."""
        other = self.cross if problem.pieces is not None else self.chain_cross or self.cross
        if other is None or get_engine(other).declines(problem) is not None:
            return None
        return other

    # ------------------------------------------------------------------ a stored run
    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """``tasks_done``, ``tasks_total``, ``progress`` and ``digits`` (phrases for
        people) and any figures of its own, from the store's files alone."""
        raise TypeError(f"the {self.name} engine keeps no store")

    def stored_seats(self, store: RunStore, problem: Problem) -> list[mpq] | None:
        """The answer a finished run holds (before COMPLETE.json), if the engine can
        read one back; None when only COMPLETE.json has it."""
        return None

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[mpq] | None:
        """Every seat, solved in this process with no store: what an engine that names
        this one as its ``cross`` compares with; None if ``should_stop()`` turned true
        before the end (an engine that cannot stop midway does not ask it)."""
        raise TypeError(f"the {self.name} engine has no in-memory solve to cross-check with")

    def cross_skip(self, problem: Problem) -> str | None:
        """Why :meth:`seats_in_memory` would take too long to cross-check ``problem``."""
        return None

    def memory_seconds(self, problem: Problem) -> float | None:
        """About how many CPU seconds :meth:`seats_in_memory` takes for ``problem``,
        from the plan's cost model (None: not estimated): what ``ladders plan`` shows
        for the cross-check of a run that compares with this engine."""
        return None

    def recheck(self, problem: Problem, seats: list[mpq], primes: int,
                seed: int | None) -> dict[str, Any] | None:
        """``ladders verify``'s check at ``primes`` fresh primes for a race whose system
        is beyond :data:`~ladders.solver.checks.residue_check.CHECK_LIMIT` unknowns (too
        big to solve again modulo a prime); None: the engine has none, and the residue
        check runs whatever the size (the engine solved that system, after all)."""
        return None


@cache
def engines() -> dict[str, Engine]:
    """Every engine, by name: each module of this package's ``ENGINE``, and each entry
    point of the group :data:`ENTRY_POINTS`."""
    from importlib.metadata import entry_points
    found: dict[str, Engine] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        engine = getattr(module, "ENGINE", None)
        if isinstance(engine, Engine):
            found[engine.name] = engine
    for point in entry_points(group=ENTRY_POINTS):
        engine = point.load()
        if not isinstance(engine, Engine):
            raise TypeError(f"entry point {point.name} = {point.value} of {ENTRY_POINTS} is not "
                            "an Engine instance")
        found.setdefault(engine.name, engine)
    return dict(sorted(found.items()))


def cross_help() -> str:
    """What ``ladders verify`` compares each engine's runs with, for its help (as
    ``ladders solve --help`` is made from the options): every engine's :attr:`Engine.cross`
    and :attr:`Engine.chain_cross`."""
    said = []
    for name, engine in engines().items():
        if engine.cross is None:
            continue
        chain = engine.chain_cross or engine.cross
        said.append(f"{name} runs: {engine.cross}"
                    + (f", {chain} for a chain question" if chain != engine.cross else ""))
    return "; ".join(said)


def engine_options() -> dict[str, Option]:
    """Every engine's own option by name (the first engine's, where engines share a name)."""
    out: dict[str, Option] = {}
    for engine in engines().values():
        for option in engine.options:
            out.setdefault(option.name, option)
    return out


def flag(name: str) -> str:
    """The command-line spelling of an option, for messages."""
    return COMMON_FLAGS.get(name) or engine_options()[name].flag


def get_engine(name: str) -> Engine:
    """The engine called ``name`` (``ValueError`` naming the known ones)."""
    try:
        return engines()[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}; use one of {', '.join(engines())}") from None


def choose_engine(problem: Problem, request: SolveRequest | None = None) -> Engine:
    """The preferred engine for ``problem`` (see :meth:`Engine.preference`) among those
    that take every option ``request`` gives (``--checkpoint`` asks for an engine that
    keeps a store: a chain question then goes to the elimination engine, not the
    component solve)."""
    given = request.given() if request is not None else set()
    ranked = [(pref, name) for name, e in engines().items()
              if all(takes(e, option) for option in given)
              and (pref := e.preference(problem)) is not None]
    if not ranked:
        why = "; ".join(f"the {name} engine: {reason}" for name, e in engines().items()
                        if (reason := e.declines(problem)))
        raise ValueError(f"no exact engine solves {problem.name}" + (f" ({why})" if why else ""))
    return engines()[min(ranked)[1]]


def takes(engine: Engine, option: str) -> bool:
    """Whether ``engine`` takes the common or own option ``option``."""
    return option in engine.takes or any(o.name == option for o in engine.options)


def check_request(engine: Engine, problem: Problem, request: SolveRequest) -> None:
    """Refuse options ``engine`` does not take, naming the engines that take them, and
    (unless ``request.force``) a solve its plan calls out of reach, naming the figures
    and the engines that can do it."""
    for option in sorted(request.given()):
        if not takes(engine, option):
            takers = [n for n, e in engines().items() if takes(e, option)]
            names = " or ".join(repr(n) if request.keywords else n for n in takers)
            where = f"{request.spell('engine')}{'' if request.keywords else ' '}{names}" \
                if takers else "no engine"
            raise ValueError(f"{request.spell(option)} is for {where}, not the {engine.name} engine")
    spec = request.spec
    if request.executor == "serial" and (spec.remote or spec.workers):
        asked = ("spec=" if request.keywords else "--workers" if spec.workers
                 else "--scheduler-file" if spec.scheduler_file else "--scheduler")
        raise ValueError(f"{asked} is for a Dask cluster, and {request.spell('executor', 'serial')} "
                         "runs the tasks in this process without one: give one of the two")
    engine.check(problem, request)
    if request.force:
        return
    why = engine.out_of_reach(problem)
    if why is None:
        return
    others = [name for name, e in engines().items() if name != engine.name
              and e.preference(problem) is not None and e.out_of_reach(problem) is None]
    way = (f"the {' or '.join(others)} engine can ({request.spell('engine', others[0])})"
           if others else "no other engine can")
    raise ValueError(f"{problem.describe()} is out of reach of "
                     f"the {engine.name} engine: {why} ('ladders plan' shows the figures); "
                     f"{way}, or add {request.spell('force', True)} to start it anyway")


def system_out_of_reach(problem: Problem) -> str | None:
    """:meth:`Engine.out_of_reach` of the engines that build the race's system: the
    system alone, before any fill, must fit in one machine."""
    return system_too_big(problem.size)


def system_too_big(size: Any) -> str | None:
    """Why a race of ``size`` (:class:`~ladders.solver.estimate.RaceSize`) is
    too big to build its system on one machine, or None."""
    from ladders.solver.estimate import MACHINE_BYTES, system_bytes
    need = system_bytes(size)
    if need <= MACHINE_BYTES:
        return None
    return (f"its system of {size.unknowns:,} unknowns and ~{size.nonzeros:,} nonzeros needs at "
            f"least {need / 1e9:,.0f} GB before any fill, more than the {MACHINE_BYTES / 1e9:,.0f} GB "
            "of one machine")


#: Wall seconds under which a process is too young to tell a busy machine by.
BUSY_WALL = 0.2


def busy_note() -> str | None:
    """What ``ladders plan`` and a solve's forecast add when this process got under half
    of its life as CPU: the machine is busy, so a run takes longer than the figures,
    which are CPU time on an idle core (the bounds say so the same way when their budget
    ran out). None otherwise."""
    import time

    import psutil
    wall = time.time() - psutil.Process().create_time()
    cpu = time.process_time()
    if wall < BUSY_WALL or cpu >= wall / 2:
        return None
    return (f"the machine is busy: this process got {cpu:.1f} s of CPU in {wall:.1f} s; the "
            "figures are CPU time on an idle core, and a run here now takes longer")


def reach_digits(fraction_bits: int, modulus_bits: int) -> str:
    """``status``'s digits of a run whose modulus grows (primes, p-adic steps): the
    digits a numerator or denominator can have so far, which the progress line shows,
    then the modulus they come from (about twice as many: both halves of a fraction
    must fit in it), so that the two figures do not read as a contradiction."""
    from ladders.solver.exact import bits_to_digits
    return (f"N and D up to {bits_to_digits(fraction_bits):,} digits each, from a modulus of "
            f"{bits_to_digits(modulus_bits):,} digits so far")


def human_seconds(seconds: float) -> str:
    """A duration for people: days, hours, minutes or seconds."""
    for unit, width in (("days", DAY), ("h", 3600.0), ("min", 60.0)):
        if seconds >= width:
            return f"{seconds / width:,.1f} {unit}"
    return f"{seconds:.1f} s"


def verdict(rows: dict[str, PlanRow], order: list[str], workers: int,
            force: bool = False, per_machine: int | None = None) -> str:
    """What can do the solve, from the engines' rows (``order``: the candidates, most
    preferred first): the workers asked for within a day (one machine where they fit
    on one: ``per_machine``, default :data:`~ladders.solver.estimate.MACHINE_WORKERS`);
    else a cluster of so many workers within a day; else undecided; else out of
    reach, in the preferred engine's words. ``force``: as ``ladders solve --force``
    runs, an engine that one machine's memory refuses (``blocked``) is planned anyway,
    and the verdict says what it needs."""
    from ladders.solver.estimate import MACHINE_WORKERS

    def forced(name: str) -> str:
        blocked = rows[name].blocked
        return f" (with --force: it {blocked})" if blocked else ""

    def about(seconds: float) -> str:
        return f"{seconds / 3600:.1f} hours" if seconds >= 3600 else human_seconds(seconds)

    for name in order:
        row = rows[name]
        if (row.blocked is None or force) and row.undecided is None \
                and row.seconds is not None and row.seconds <= DAY:
            if workers <= (per_machine or MACHINE_WORKERS):
                return f"one machine: the {name} engine{forced(name)}"
            return (f"a cluster of {workers:,} workers: the {name} engine, within a day "
                    f"(about {about(row.seconds)}){forced(name)}")
    for size in CLUSTER_SIZES:
        for name in order:
            row = rows[name]
            wall = row.seconds_on(workers, size)
            if row.scales and (row.blocked is None or force) and wall is not None \
                    and wall <= DAY:
                return (f"a cluster of {size:,} workers: the {name} engine, within a day "
                        f"(about {about(wall)}){forced(name)}")
    if force:
        for name in order:
            row = rows[name]
            wall = row.seconds_on(workers, CLUSTER_SIZES[-1])
            if row.scales and wall is not None:
                return (f"a cluster of {CLUSTER_SIZES[-1]:,} workers: the {name} engine, in "
                        f"about {wall / DAY:.1f} days, {row.serial_seconds / 3600:.1f} hours of "
                        f"them in one process{forced(name)}")
    undecided = [rows[name].undecided for name in order if rows[name].undecided]
    if undecided:
        return f"not decided: {undecided[0]}"
    reasons = [f"the {name} engine {rows[name].blocked}" for name in order if rows[name].blocked]
    if not reasons:
        return "out of reach: more than a day even on 1,024 workers"
    return "out of reach: " + reasons[0]


def cross_report(problem: Problem, seats: list[mpq], engine: str,
                 force: bool = False) -> dict[str, Any] | None:
    """Tier 3 ``cross`` for an answer of ``engine``: the in-memory answer of the engine
    it names as its checker (None if it names none), compared with ``==``; skipped
    where that would take long, unless ``force``."""
    from ladders.solver.checks.verify import cross_check
    other = get_engine(engine).cross_for(problem)
    if other is None:
        return None
    checker = get_engine(other)
    skip = None if force else checker.cross_skip(problem)
    return cross_check(problem, seats, other, checker.seats_in_memory, skip)
