"""The run session every engine driver shares: the outcome it reports, the store's
run.json, the LOCK, the cluster connection, and the record of a verified answer.

A driver (``ladders/cluster/engines/NAME.py``) opens a session with :func:`locked`
(and :class:`ClusterStart` with :func:`connect_checked` when its tasks run on Dask), drives its work with the loops
of :mod:`ladders.cluster.executor`, verifies with :mod:`ladders.solver.checks.verify`,
and ends with :func:`record`.
"""

from __future__ import annotations

import contextlib
import platform
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladders.checkpoints.store import RunStore
from ladders.cluster.executor import ClusterSpec, check_workers, connect
from ladders.solver.exact import FractionTable, mpq
from ladders.solver.problem import Problem

#: Exit code of a solve stopped by Ctrl-C or SIGTERM with a consistent store (EX_TEMPFAIL).
EXIT_INTERRUPTED = 75
#: Problems this small run in memory unless a store or a cluster is asked for.
IN_MEMORY_LIMIT = 2000


@dataclass
class Outcome:
    """What a solve produced (``seats`` is empty when it was interrupted).

    ``table``: two players, when asked, every ``P(a, b)`` keyed by ``(a, b)`` (an ``mpq``
    on access; :meth:`~ladders.solver.exact.FractionTable.texts` for the exact texts).
    ``details``: what the engine reports about its work (prime, lifting steps, ...).
    """

    problem: Problem
    seats: list[mpq]
    seconds: float
    executor: str
    verified: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    store: Path | None = None
    tasks_run: int = 0
    tasks_total: int = 0
    store_bytes: int = 0
    startup_seconds: float = 0.0  # starting or reaching the cluster, checking its workers
    engine: str = ""
    table: FractionTable | None = None
    details: dict[str, Any] = field(default_factory=dict)


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


def run_json(problem: Problem, engine: str, executor: str, **extra: Any) -> dict[str, Any]:
    """run.json of a new store: what is solved, how, and with which versions. The race
    system's digest and size unless ``extra`` gives a ``system_digest`` of its own (an
    engine that never builds the system)."""
    out = {"problem": problem.to_json(), "engine": engine, "executor": executor,
           "versions": versions()}
    if "system_digest" not in extra:
        system = problem.system
        out.update(system_digest=system.digest(), unknowns=system.size, nonzeros=system.nnz)
    return {**out, **extra}


def pick_executor(problem: Problem, request_executor: str, spec: ClusterSpec,
                  checkpoint: str | None = None) -> str:
    """``auto``: in this process for small problems with no store or cluster asked for."""
    if request_executor != "auto":
        return request_executor
    small = (problem.system.size <= IN_MEMORY_LIMIT and not checkpoint and not spec.remote
             and not spec.workers)
    return "serial" if small else "dask"


@contextlib.contextmanager
def store_dir(checkpoint: str | None) -> Iterator[Path]:
    """``checkpoint``, or a temporary folder removed afterwards."""
    if checkpoint:
        yield Path(checkpoint)
        return
    tmp = Path(tempfile.mkdtemp(prefix="ladders-run-"))
    try:
        yield tmp / "run"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def locked(store: RunStore) -> Iterator[RunStore]:
    """Hold the store's LOCK for the session."""
    store.acquire_lock()
    try:
        yield store
    finally:
        store.release_lock()


class ClusterStart:
    """The cluster being reached or started in a background thread, so that the driver
    plans and writes the store meanwhile; :meth:`client` waits for it. A context
    manager: leaving it closes the cluster."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.t0 = time.perf_counter()
        self._ready = threading.Event()
        self._done = threading.Event()
        self._client: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ladders-cluster", daemon=True)

    def _run(self) -> None:
        try:
            with connect(self.spec) as client:
                self._client = client
                self._ready.set()
                self._done.wait()
        except BaseException as exc:  # handed to the driver's thread by client()
            self._error = exc
        finally:
            self._ready.set()

    def __enter__(self) -> ClusterStart:
        import signal
        self._sigint: Any = None
        if not self.spec.remote and threading.current_thread() is threading.main_thread():
            # Worker processes started while SIGINT is ignored keep ignoring it (an
            # ignored signal survives exec, and Python then installs no handler), so a
            # terminal's Ctrl-C reaches the driver alone: it stops cleanly instead of
            # every worker printing a traceback. Restored once the workers are up.
            self._sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
        self._thread.start()
        return self

    def up(self) -> bool:
        """Whether :meth:`client` would return (or raise) now, without waiting."""
        return self._ready.is_set()

    def client(self) -> Any:
        """The connected client (the cluster's error, if it failed to start)."""
        self._ready.wait()
        self._restore_sigint()
        if self._error is not None:
            raise self._error
        return self._client

    def _restore_sigint(self) -> None:
        import signal
        if self._sigint is not None:
            signal.signal(signal.SIGINT, self._sigint)
            self._sigint = None

    def release(self) -> None:
        """Start closing the cluster in the background (the driver goes on verifying)."""
        self._done.set()

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join()
        self._restore_sigint()


def connect_checked(started: ClusterStart, store: RunStore,
                    modules: tuple[str, ...] = ()) -> tuple[Any, int, float]:
    """``(client, workers, seconds waited)``: the cluster ``started`` in the background,
    once it is up, checked to see the store and to import ``modules``."""
    t0 = time.perf_counter()
    client = started.client()
    workers = check_workers(client, str(store.root.resolve()), modules)
    return client, workers, time.perf_counter() - t0


def record(store: RunStore, out: Outcome, seconds: float) -> None:
    """COMPLETE.json, written last and only for a verified answer; the store's size."""
    if out.verified.get("passed"):
        from ladders.solver.exact import fraction_to_str
        store.mark_complete({"seats": [fraction_to_str(s) for s in out.seats],
                             "engine": out.engine, "verified": out.verified,
                             "seconds_total": seconds, "finished": time.time()})
    out.store = store.root
    out.store_bytes = store.size_bytes()

