"""The run session, written once for every engine: lock the store, open the engine's
work, run it in this process or on a Dask cluster, stop cleanly on an interrupt, read
the answer, verify it, record it, and hand back one frozen
:class:`~ladders.solver.result.Solution`.

An engine's driver (``ladders/cluster/engines/NAME.py``) supplies only what differs:
its store (:meth:`Engine.create_store`), its work (:meth:`Engine.open_work`, a
:class:`~ladders.cluster.loops.Work`) and how its final answer is read
(:meth:`Engine.answer`). The checks the answer is compared with (the Markov bounds, and
where the engine asks for it another engine's answer) are computed by :class:`Checks`
while the workers compute (the bounds beside a local cluster in a child process forked
for them), or after the work in a serial run (beside it, in a thread, for an engine
whose work lets the interpreter go: :attr:`Engine.checks_beside`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import random
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ladders.cluster.connect import ClusterStart, check_main_guard, connect_checked
from ladders.cluster.engines import Answer, Engine, Progress, SolveRequest
from ladders.cluster.errors import ClusterError
from ladders.cluster.loops import run_dask, run_serial
from ladders.solver.forked import Forked
from ladders.solver.result import Solution

if TYPE_CHECKING:
    from ladders.checkpoints.store import RunStore
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem

def versions() -> dict[str, str]:
    """Versions that must match between the run that wrote a store and the one resuming."""
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for pkg in ("ladders", "gmpy2", "zarr", "dask", "distributed", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def run_json(problem: Problem, engine: Engine, request: SolveRequest, executor: str,
             digest: str, **extra: Any) -> dict[str, Any]:
    """run.json of a new store: what is solved (``digest``: what the engine solves, see
    :meth:`Engine.digest`), how (the executor, and the cluster it was started on), with
    which versions, and the files to write when it is answered (``outputs``)."""
    run = {"problem": problem.to_json(), "engine": engine.name, "executor": executor,
           "cluster": request.spec.record(), "versions": versions(), "system_digest": digest,
           **extra}
    if request.outputs:
        run["outputs"] = dict(request.outputs)
    return run


def fresh_seed(request: SolveRequest) -> int:
    """The seed of a run's random primes: the one asked for, else a fresh one."""
    return request.seed if request.seed is not None else random.SystemRandom().randrange(1 << 32)


#: A temporary store's folder: ``ladders-run-<pid of its driver>-<random>``.
TEMPORARY = re.compile(r"ladders-run-(\d+)-[^/]*")


def clear_abandoned(root: str | None = None) -> list[str]:
    """Remove the temporary stores of drivers that are gone (killed with SIGKILL, their
    machine rebooted: no ``finally`` ran) from ``root`` (the system's temporary folder);
    return their paths. A folder whose process still runs stays."""
    root = root or tempfile.gettempdir()
    gone = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            match = TEMPORARY.fullmatch(entry.name)
            if match is None or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                os.kill(int(match.group(1)), 0)
            except ProcessLookupError:
                shutil.rmtree(entry.path, ignore_errors=True)
                gone.append(entry.path)
            except (PermissionError, OverflowError):
                continue  # another user's process runs with that number, or no such pid
    return gone


@contextlib.contextmanager
def store_place(checkpoint: str | None) -> Iterator[str]:
    """``checkpoint``, or a temporary folder removed afterwards (and those that drivers
    killed before they could remove theirs left behind). A write that fails there (a
    full disk, a file-size limit), or a temporary folder that cannot be made, says the
    way out (:data:`TEMPORARY_WAY_OUT`)."""
    if checkpoint:
        yield checkpoint
        return
    try:
        clear_abandoned()
        tmp = tempfile.mkdtemp(prefix=f"ladders-run-{os.getpid()}-")
    except OSError as exc:
        raise OSError(exc.errno, f"no temporary folder for the run's store ({exc.strerror or exc}); "
                                 f"{TEMPORARY_WAY_OUT}") from exc
    try:
        yield f"{tmp}/run"
    except OSError as exc:
        if exc.errno is None or not str(exc.filename or "").startswith(tmp):
            raise
        raise OSError(exc.errno, f"{exc.strerror} ({exc.filename}): the run keeps its work in "
                                 f"a temporary store; {TEMPORARY_WAY_OUT}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: What a user does where the temporary folder cannot hold a run's store.
TEMPORARY_WAY_OUT = ("free space in the temporary folder, point TMPDIR at a folder with room, "
                     "or keep the run in a folder of your choice with --checkpoint DIR")


#: Seconds the cross-check of a run may take (its engine's in-memory solve, where that
#: engine can stop midway): size alone misjudges it. 3 players on hasbro cut at 55
#: squares: 18,424 unknowns, within the modular engine's limit, but 11 minutes where
#: the series engine takes seconds; past this the cross-check is reported as skipped.
CROSS_BUDGET = 60.0


class Checks(threading.Thread):
    """What the verification compares an answer with: Markov bounds that agree to the
    engine's digits, and the in-memory answer of the engine it cross-checks with
    during a run (:meth:`Engine.run_cross`, unless that would take long, and for at
    most :data:`CROSS_BUDGET` seconds). With a Dask cluster they are computed while the
    workers compute (the driver only waits for receipts meanwhile); in a serial run,
    after the work, or beside it where the engine's work is compiled
    (:attr:`Engine.checks_beside`).

    ``forked``: the bounds are computed, single-threaded, in a child process forked now
    (call it where this process has no other thread: :class:`~ladders.solver.forked.Forked`),
    beside a local cluster's start and its workers. In a thread of this process their
    walk holds the interpreter lock that the cluster's start and its scheduler need
    (3 players on hasbro: started with the run, they held the workers back by 4 s;
    started once the workers were up, as before, they left a core idle meanwhile).
    """

    def __init__(self, engine: Engine, problem: Problem, threads: bool = True,
                 forked: bool = False) -> None:
        super().__init__(name="ladders-checks", daemon=True)
        self.engine, self.problem, self.threads = engine, problem, threads
        self.bounds: Any = None
        self.checker = engine.run_cross(problem)
        self.cross = None if self.checker is None else self.checker.name
        self.cross_seats: list[mpq] | None = None
        self.skip: str | None = None
        self.seconds = {"bounds": 0.0, "cross": 0.0}
        self.error: BaseException | None = None
        self.halt = threading.Event()   # set when a stop skips the cross-check
        self._child: Forked[tuple[Any, float]] | None = None
        if forked:
            digits, budget = engine.bounds_digits(problem)
            self._child = Forked(functools.partial(_timed_bounds, problem, digits, budget,
                                                   threads))

    def run(self) -> None:
        try:
            if self._child is not None:
                self.bounds, self.seconds["bounds"] = self._child.result()
            else:
                digits, budget = self.engine.bounds_digits(self.problem)
                self.bounds, self.seconds["bounds"] = _timed_bounds(self.problem, digits, budget,
                                                                    self.threads)
            t1 = time.perf_counter()
            if self.checker is not None:
                self.skip = self.checker.cross_skip(self.problem)
                if self.skip is None:
                    deadline = time.monotonic() + CROSS_BUDGET
                    self.cross_seats = self.checker.seats_in_memory(
                        self.problem, lambda: self.halt.is_set() or time.monotonic() > deadline)
                    if self.cross_seats is None:
                        self.skip = (f"the {self.cross} engine had not finished after "
                                     f"{CROSS_BUDGET:.0f} s")
                self.seconds["cross"] = time.perf_counter() - t1
        except BaseException as exc:  # raised again in the driver's thread by result()
            self.error = exc

    def close(self) -> None:
        """End the bounds' child process if it is still computing (a stopped run)."""
        if self._child is None:
            return
        if self.ident is None:
            self._child.cancel()
        else:                       # this thread waits for it, and reaps it
            self._child.kill()

    def result(self, should_stop: Callable[[], bool] = lambda: False) -> tuple[str | None, list[mpq] | None]:
        """Wait for the checks (started now if they were not: a serial run); a stop
        asked meanwhile (Ctrl-C, SIGTERM) skips the cross-check once the bounds are in:
        the answer is there, and another engine's solve can take longer than the run.
        Returns the cross-check's ``(skip reason, seats)``."""
        if self.ident is None:
            self.start()
        while self.is_alive():
            self.join(0.2)
            if self.is_alive() and self.bounds is not None and should_stop():
                self.halt.set()
                return "stopped before it finished (Ctrl-C or SIGTERM)", None
        if self.error is not None:
            raise self.error
        return self.skip, self.cross_seats

    def verify(self, answer: Answer, should_stop: Callable[[], bool] = lambda: False) -> dict[str, Any]:
        """The verification report of ``answer``: the bounds, the engine's certificate,
        the cross-check compared with ``==``, and the independent solve modulo a random
        prime (tier 2) only where neither a certificate nor a cross-check vouches for
        the answer."""
        from ladders.solver.checks.verify import cross_check, verify_answer
        skip, seats = self.result(should_stop)
        cross = None
        if self.cross is not None:
            cross = cross_check(self.problem, answer.seats, self.cross, lambda _: seats or [], skip)
            if skip is None:
                cross["seconds"] = round(self.seconds["cross"], 3)
        vouched = answer.certificate is not None or (cross is not None and not cross.get("skipped"))
        digits, _ = self.engine.bounds_digits(self.problem)
        report = verify_answer(self.problem, answer.seats, primes=0 if vouched else 1,
                               certificate=answer.certificate, cross=cross, digits=digits,
                               bounds=self.bounds)
        report["bounds"]["seconds"] = round(self.seconds["bounds"], 3)
        report["bounds"]["process"] = "forked" if self._child is not None else "this"
        return report


def _timed_bounds(problem: Problem, digits: int, budget: float,
                  threads: bool) -> tuple[Any, float]:
    """The Markov bounds that agree to ``digits`` decimals, or those reached within
    ``budget`` seconds, and the seconds they took."""
    t0 = time.perf_counter()
    bounds = problem.bounds_within(digits, budget, threads)
    return bounds, time.perf_counter() - t0


def solve(engine: Engine, problem: Problem, request: SolveRequest, progress: Progress | None,
          should_stop: Callable[[], bool], started: float) -> Solution:
    """A new run of ``engine`` on ``problem`` (``started``: the caller's clock at the
    start, so that ``seconds`` is the whole call's wall time)."""
    executor = engine.pick_executor(problem, request)
    if executor == "dask" and not request.spec.remote:
        check_main_guard()
    if not engine.keeps_store(problem, request, executor):
        return _drive(engine, problem, request, None, executor, progress, should_stop, started, {})
    with store_place(request.checkpoint) as where:
        t0 = time.perf_counter()
        store = engine.create_store(where, problem, request, executor)
        stages = {"store": time.perf_counter() - t0}
        try:
            with _resumable_on_write_errors(store.url if request.checkpoint else None):
                return _drive(engine, problem, request, store, executor, progress,
                              should_stop, started, stages)
        except ClusterError as exc:
            if not request.checkpoint or store.current().seq != 0:
                raise
            # the cluster could not start or check the store before any work was
            # committed: the store this call created holds nothing, and left in place it
            # would refuse the corrected command ("already holds a run") and send a
            # resume to the cluster that failed
            store.backend.remove_all()
            raise ClusterError(f"{exc}; nothing was kept in {store.url}, so the corrected "
                               "command can start there") from None


def resume(engine: Engine, store: RunStore, problem: Problem, request: SolveRequest,
           progress: Progress | None, should_stop: Callable[[], bool], started: float,
           announce: Callable[[], None] | None = None) -> Solution:
    """Continue a stored run, on the executor it was started with unless the request
    names another (``announce``: called once the store's LOCK is held)."""
    executor = request.executor if request.executor != "auto" else store.run["executor"]
    if executor == "dask" and not request.spec.remote:
        check_main_guard()
    with _resumable_on_write_errors(store.url):
        return _drive(engine, problem, request, store, executor, progress, should_stop,
                      started, {}, resumed=True, announce=announce)


@contextlib.contextmanager
def _resumable_on_write_errors(url: str | None) -> Iterator[None]:
    """A write that fails in a kept store (a full disk, a file-size limit) says what
    the user needs next: segments are committed only by a manifest written after
    them, so the store is consistent at its last manifest and a resume goes on from
    there (``url``: the kept store; None: a temporary one, whose way out
    :func:`store_place` says)."""
    try:
        yield
    except OSError as exc:
        if url is None or exc.errno is None:
            raise
        raise OSError(exc.errno, f"{exc.strerror} ({exc.filename}); the store {url} is "
                                 f"consistent at its last manifest: free space, then 'ladders "
                                 f"resume {url}'") from exc


def takes_keyword(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function`` takes the keyword ``name``: a progress callback written
    before :class:`Progress` had ``tail`` is still called as it was."""
    import inspect
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


def _drive(engine: Engine, problem: Problem, request: SolveRequest, store: RunStore | None,
           executor: str, progress: Progress | None, should_stop: Callable[[], bool],
           started: float, stages: dict[str, float], resumed: bool = False,
           announce: Callable[[], None] | None = None) -> Solution:
    """The session: lock, run, answer, verify, record (see the module docstring)."""
    # beside a local cluster's workers, whose processes take every core, the bounds walk
    # in one thread (its threads would only cost CPU there), of a child forked before
    # anything here starts a thread (opening the work may: zarr's I/O)
    local = executor == "dask" and not request.spec.remote
    checks = Checks(engine, problem, threads=not local,
                    forked=local and threading.active_count() == 1)
    with _locked(store), contextlib.closing(checks):
        if announce is not None:
            announce()
        work = engine.open_work(store, problem, request, progress, should_stop)
        startup = 0.0

        takes_tail = progress is not None and takes_keyword(progress, "tail")

        def report() -> None:
            figures = work.figures()
            if progress is not None and figures is not None:
                if takes_tail:
                    progress(*figures, tail=work.tail_seconds())
                else:
                    progress(*figures)

        t0 = time.perf_counter()
        if executor == "serial":
            if engine.checks_beside:
                checks.start()
            interrupted = run_serial(work, should_stop, report)
            stages["solve"] = time.perf_counter() - t0
            answered = None if interrupted else _answer(engine, work, problem, request, checks, stages,
                                                        should_stop)
        else:
            assert store is not None, "a Dask run keeps a store"
            spec = request.spec
            with ClusterStart(spec, work.preload) as cluster:
                if work.head_start and not spec.remote:
                    # while a local cluster's workers start (a remote one's are up already),
                    # this process runs the first items: the start of the critical path
                    run_serial(work, lambda: cluster.up() or should_stop(), report)
                connected = _connect(cluster, store.worker_url, work.modules, should_stop)
                if connected is None:
                    interrupted, answered = True, None
                else:
                    client, _, startup = connected
                    t0 += startup
                    checks.start()
                    interrupted = run_dask(client, work, should_stop, report,
                                           spec.no_worker_limit)
                    stages["solve"] = time.perf_counter() - t0
                    cluster.release()  # the cluster closes while this process verifies
                    answered = None if interrupted else _answer(engine, work, problem, request,
                                                                checks, stages, should_stop)
        ran, total = work.tally()
        # a temporary store (no --checkpoint) is gone with this call: nothing to resume
        kept = store is not None and (resumed or bool(request.checkpoint))
        common = {"problem": problem, "engine": engine.name, "executor": executor,
                  "store": store.url if kept else None, "tasks_run": ran,
                  "tasks_total": total, "startup_seconds": startup}
        if answered is None:
            return Solution(seats=(), verified={}, interrupted=True, details={},
                            seconds=time.perf_counter() - started,
                            store_bytes=0 if store is None else store.size_bytes(), **common)
        answer, verified = answered
        details = {**answer.details, "stages": {k: round(v, 3) for k, v in
                                                {**stages, **answer.details.get("stages", {}),
                                                 "startup": startup}.items()}}
        if store is not None and verified["passed"]:
            try:
                _record(store, engine, problem, answer.seats, verified,
                        time.perf_counter() - started)
            except OSError as exc:
                # a full disk (or a file-size limit) when the answer is in: it is
                # returned all the same; a kept store has its last manifest still
                details["not_recorded"] = (
                    f"{store.url}: COMPLETE.json could not be written ({exc.strerror or exc}); "
                    "the answer is verified and given here"
                    + (f", and 'ladders resume {store.url}' records it once there is space"
                       if kept else " (no --checkpoint: nothing else was kept)"))
        return Solution(seats=tuple(answer.seats), verified=verified, table=answer.table,
                        details=details, seconds=time.perf_counter() - started,
                        store_bytes=0 if store is None else store.size_bytes(), **common)


def _connect(cluster: ClusterStart, store_url: str, modules: tuple[str, ...],
             should_stop: Callable[[], bool]) -> tuple[Any, int, float] | None:
    """The cluster, up and checked (:func:`connect_checked`), and the seconds waited for
    it; or None when a stop was asked before it was: a Ctrl-C or SIGTERM while a local
    cluster starts stops the run then, and a failure of the start that the stop caused
    (a SIGTERM to the process group ends the starting workers: "Nanny failed to start")
    is that stop, not an error."""
    t0 = time.perf_counter()
    while not cluster.up():
        if should_stop():
            return None
        time.sleep(0.05)
    try:
        client, workers = connect_checked(cluster, store_url, modules)
    except Exception:
        if should_stop():
            return None
        raise
    return client, workers, time.perf_counter() - t0


def _answer(engine: Engine, work: Any, problem: Problem, request: SolveRequest, checks: Checks,
            stages: dict[str, float], should_stop: Callable[[], bool]) -> tuple[Answer, dict[str, Any]]:
    """The finished work's answer (the engine reads it) and its verification report."""
    answer = engine.answer(work, problem, request)
    t0 = time.perf_counter()
    verified = checks.verify(answer, should_stop)
    stages["verify"] = time.perf_counter() - t0
    return answer, verified


@contextlib.contextmanager
def _locked(store: RunStore | None) -> Iterator[None]:
    """Hold the store's LOCK for the session (a run kept in memory has none)."""
    if store is None:
        yield
        return
    store.acquire_lock()
    try:
        yield
    finally:
        store.release_lock()


def _record(store: RunStore, engine: Engine, problem: Problem, seats: list[mpq],
            verified: dict[str, Any], seconds: float) -> None:
    """COMPLETE.json, written last and only for a verified answer: the seats (what the
    system solves for) and every answer by name (a chain's least over its start states
    is not its first seat)."""
    from ladders.solver.exact import fraction_to_str
    answers = {name: v if isinstance(v, str) else fraction_to_str(v)
               for name, v in problem.named(seats).items()}
    store.mark_complete({"seats": [fraction_to_str(s) for s in seats], "answers": answers,
                         "engine": engine.name, "verified": verified, "seconds_total": seconds,
                         "finished": time.time()})
