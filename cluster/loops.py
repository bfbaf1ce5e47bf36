"""Where tasks run: one loop in this process, one on a Dask cluster, for every engine.

An engine's run implements :class:`Work`: which items may start, the task of an item,
what a finished item's receipt changes, and when the run is finished. The two loops
below (:func:`run_serial`, :func:`run_dask`) are the only submit / wait / commit /
report / stop loops of `ladders`, as in rechunker's executors. Tasks carry store URLs
and small parameters only (no bulk data through the scheduler), their keys derive from
the run's token, and only the driver commits manifests: after every finished task, so
an interruption loses at most the tasks in flight.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import click

from ladders.cluster.connect import ClusterSpec
from ladders.cluster.errors import ClusterError


@dataclass(frozen=True)
class Task:
    """What a worker runs for one item: ``function(*args)`` under a deterministic ``key``
    (Dask runs urgent tasks first: higher ``priority``)."""

    function: Callable[..., dict[str, Any]]
    args: tuple[Any, ...]
    key: str
    priority: int = 0


#: An item of work: a hashable, sortable name of a task (a batch number, a block pair
#: ``(b, j)``): the Dask loop accepts the receipts of tasks that finish together in the
#: items' order, so that a run commits the same manifests whatever the timing.
Item = Hashable


class Work(Protocol):
    """An engine's run, as the loops see it.

    The loops ask :meth:`ready` for items, run each (:meth:`run_here` in this process,
    or :meth:`task` on a Dask worker), hand its receipt to :meth:`accept` and then call
    :meth:`commit`, which makes the accepted items the resume point and does the
    driver's own work between tasks (folding residues in, and the named step
    ``conclude`` of the prime-batch engines: a reconstruction or a certificate). The
    run ends when :meth:`finished` (a plain question, no work) says so.
    """

    #: items the loop keeps queued at the scheduler beyond one per worker thread, for
    #: every :data:`SPARE_THREADS` threads (a freed thread takes one at once, while the
    #: driver commits or waits for its lock)
    queued: int
    #: whether this process runs the first items while a local cluster starts (the
    #: critical path of a chain of tasks starts sooner)
    head_start: bool
    #: modules the tasks import on a worker: imported when the cluster is checked
    modules: tuple[str, ...]
    #: modules a local cluster's fork server imports before it forks the workers, so
    #: that each starts with them loaded (:func:`~ladders.cluster.connect.preload_fork_server`)
    preload: tuple[str, ...]

    def attach(self, client: Any) -> None:
        """The run's Dask client, given before the first task: a driver's own work (a
        series run's reconstruction) may then go to the cluster too."""

    def finished(self) -> bool:
        """Whether the run is done (a work whose own step runs beside the loop looks
        at that step here: the loops ask often)."""

    def ready(self, running: set[Item], limit: int) -> list[Item]:
        """At most ``limit`` items that may start now and are not ``running``, most
        urgent first."""

    def task(self, item: Item) -> Task:
        """The task a Dask worker runs for ``item``."""

    def run_here(self, item: Item) -> dict[str, Any]:
        """Run ``item`` in this process and return its receipt."""

    def accept(self, item: Item, receipt: dict[str, Any], seconds: float) -> None:
        """Take a finished item's receipt into the driver's state (not yet on disk)."""

    def commit(self) -> None:
        """Commit what was accepted: the new manifests become the resume point."""

    def figures(self) -> tuple[int, int, int] | None:
        """Progress as ``(done, total or 0, digits so far)``; None when the work reports
        its own progress as it goes."""

    def tally(self) -> tuple[int, int]:
        """Tasks run in this session, and tasks of the run (done so far or in all)."""

    def tail_seconds(self) -> float | None:
        """Seconds the run expects to need after its last unit (a reconstruction at
        full size), for the progress line's time left; None where nothing is known."""


class OneStep(abc.ABC):
    """:class:`Work` of one item run in this process, for a computation that is not
    split into tasks (two players over the rationals, a small elimination in memory, a
    p-adic lifting that saves its own states): a subclass gives :meth:`compute`."""

    queued = 0
    head_start = False
    modules: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    done = False

    def attach(self, client: Any) -> None:
        """Nothing of it runs on the cluster."""

    @abc.abstractmethod
    def compute(self) -> bool:
        """Do the work; True when it finished, False when it stopped early (asked to)."""

    def finished(self) -> bool:
        return self.done

    def ready(self, running: set[Item], limit: int) -> list[Item]:
        return [] if self.done or running or limit < 1 else [type(self).__name__]

    def task(self, item: Item) -> Task:
        raise TypeError(f"{type(self).__name__} runs in this process, not as a Dask task")

    def run_here(self, item: Item) -> dict[str, Any]:
        self.done = self.compute()
        return {}

    def accept(self, item: Item, receipt: dict[str, Any], seconds: float) -> None:
        """Nothing to take in: :meth:`compute` keeps its own result."""

    def commit(self) -> None:
        """Nothing to commit here: a step that keeps a store saves its own states."""

    def figures(self) -> tuple[int, int, int] | None:
        return None  # the step reports its own progress as it goes

    def tally(self) -> tuple[int, int]:
        return (1, 1) if self.done else (0, 1)

    def tail_seconds(self) -> float | None:
        return None


def run_serial(work: Work, should_stop: Callable[[], bool],
               progress: Callable[[], None] = lambda: None) -> bool:
    """Run the items one by one in this process, committing each; True if stopped."""
    while not work.finished():
        if should_stop():
            return True
        items = work.ready(set(), 1)
        if not items:
            raise ClusterError("no task can run but the run is not finished (inconsistent manifest)")
        t0 = time.perf_counter()
        receipt = work.run_here(items[0])
        work.accept(items[0], receipt, time.perf_counter() - t0)
        work.commit()
        progress()
    return False


class WorkerWatch:
    """Watches a cluster for workers while the driver waits: every worker can die (out of
    memory, killed, its machine gone) and the scheduler then holds the tasks forever."""

    EVERY_S = 5.0
    #: Seconds between two looks at which workers there are (to say who left).
    ROLL_S = 1.0

    def __init__(self, client: Any, limit: float,
                 stopping: Callable[[], bool] = lambda: False) -> None:
        self.client, self.limit, self.stopping = client, limit, stopping
        self.last_seen = self.last_check = self.last_roll = time.monotonic()
        # a limit shorter than the usual interval is checked often enough to be honoured
        self.every = min(self.EVERY_S, limit / 2)
        nthreads = client.nthreads()
        self.workers = set(nthreads)
        #: the cluster's worker threads at the last look (workers join and leave)
        self.threads = sum(nthreads.values())

    def roll(self) -> None:
        """Say on stderr which workers left since the last look (killed, out of memory,
        their machine gone): Dask runs their tasks again elsewhere, and only the
        scheduler's log said so. A worker that a nanny restarted has a new address.
        Nothing is said once the run is stopping: a stop signal to the process group
        ends a local cluster's workers too."""
        now = time.monotonic()
        if now - self.last_roll < self.ROLL_S or self.stopping():
            return
        self.last_roll = now
        nthreads = self.client.nthreads()
        workers = set(nthreads)
        self.threads = sum(nthreads.values())
        for gone in sorted(self.workers - workers):
            click.echo(f"ladders: worker {gone} left the cluster ({len(workers)} now); its "
                       "tasks run again on the others", err=True)
        self.workers = workers

    def check(self) -> None:
        """Raises :class:`ClusterError` once no worker was seen for ``limit`` seconds."""
        self.roll()
        now = time.monotonic()
        if now - self.last_check < self.every:
            return
        self.last_check = now
        if self.client.nthreads():
            self.last_seen = now
        elif now - self.last_seen >= self.limit:
            raise ClusterError(f"the Dask cluster has had no worker for {now - self.last_seen:.0f} s "
                               "(they died or left); the committed work is safe: start workers, "
                               "then 'ladders resume' the checkpoint")

    def result(self, future: Any) -> Any:
        """``future``'s result, checking for workers while it is fetched: a task that
        finished on a worker which then died is recomputed, and with no worker left the
        fetch would otherwise wait for ever (as the full test suite once did)."""
        while True:
            try:
                return future.result(timeout=self.every)
            except TimeoutError:
                if future.status == "error":  # the task's own TimeoutError
                    raise
                self.check()


#: A loop keeps ``Work.queued`` tasks queued beyond the running ones for every this many
#: worker threads: 1 on a local cluster of 2, 16 on 256 threads (a 5-player batch of
#: 1,024 primes is about 2 minutes of a worker; 256 of them finish 2 a second).
SPARE_THREADS = 16


def run_dask(client: Any, work: Work, should_stop: Callable[[], bool],
             progress: Callable[[], None] = lambda: None,
             no_worker_limit: float = ClusterSpec.no_worker_limit) -> bool:
    """Keep a task in flight on every worker thread of ``client``'s cluster, and
    ``work.queued`` more for every :data:`SPARE_THREADS` of them, counted again each
    second as workers join (a cluster of hundreds is started beside the driver, not
    before it) or leave; accept each receipt as it arrives, submit what became ready,
    then commit; True if stopped
    (the tasks still in flight are cancelled, and stderr says so: a batch of a 5-player
    run is minutes of a worker; the committed manifest is the resume point). A cluster
    left without workers for ``no_worker_limit`` seconds is an error, not an endless
    wait."""
    from distributed import wait

    in_flight: dict[Any, Item] = {}
    watch = WorkerWatch(client, no_worker_limit, should_stop)
    work.attach(client)

    def submit() -> None:
        threads = max(1, watch.threads)
        window = threads + work.queued * max(1, threads // SPARE_THREADS)
        for item in work.ready(set(in_flight.values()), window - len(in_flight)):
            task = work.task(item)
            fut = client.submit(task.function, *task.args, key=task.key, pure=False,
                                priority=task.priority)
            in_flight[fut] = item

    clock = time.perf_counter()
    try:
        while not work.finished():
            if should_stop():
                if in_flight:
                    count = len(in_flight)
                    click.echo(f"ladders: stopped with {count:,} {'task' if count == 1 else 'tasks'} "
                               "in flight: their work is dropped", err=True)
                return True
            submit()
            if not in_flight:
                raise ClusterError("no task can run but the run is not finished (inconsistent manifest)")
            try:
                finished, _ = wait(list(in_flight), timeout=0.5, return_when="FIRST_COMPLETED")
            except TimeoutError:
                watch.check()
                continue
            for fut in sorted(finished, key=in_flight.__getitem__):
                item = in_flight.pop(fut)
                receipt = watch.result(fut)  # a task's exception surfaces here, with its message
                now = time.perf_counter()
                work.accept(item, receipt, now - clock)
                clock = now
            # the next tasks go out before the commits: they read what is on disk
            # already, and if this driver dies before committing they are simply redone
            submit()
            work.commit()
            watch.check()
            progress()
        return False
    finally:
        if in_flight:
            client.cancel(list(in_flight))
