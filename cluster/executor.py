"""Where tasks run: one loop in this process, one on a Dask cluster, for every engine.

Default cluster: ``LocalCluster(processes=True, threads_per_worker=1)`` (gmpy2 holds the
GIL, so parallel work needs processes). ``--scheduler tcp://HOST:PORT`` or
``--scheduler-file F`` use a cluster started with ``dask scheduler`` / ``dask worker``.

An engine's stored run implements :class:`Work`: which items may start, the task of an
item, what a finished item's receipt changes, and when the run is finished. The two
loops below (:func:`run_serial`, :func:`run_dask`) are the only submit / wait / commit /
report / stop loops of `ladders`, as in rechunker's executors. Tasks carry store paths
and small parameters only (no bulk data through the scheduler), their keys derive from
the run's token, and only the driver commits manifests: after every finished task, so
an interruption loses at most the tasks in flight.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ladders.cluster.errors import ClusterError


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: a scheduler address or file, else a local cluster of ``workers``."""

    scheduler: str | None = None
    scheduler_file: str | None = None
    workers: int | None = None
    connect_timeout: float = 10.0
    no_worker_limit: float = 120.0  # seconds without a worker before a run gives up

    @property
    def remote(self) -> bool:
        return bool(self.scheduler or self.scheduler_file)

    def describe(self) -> str:
        if self.scheduler:
            return f"scheduler {self.scheduler}"
        if self.scheduler_file:
            return f"scheduler file {self.scheduler_file}"
        return f"local cluster of {self.workers or os.cpu_count()} worker processes"


@contextlib.contextmanager
def connect(spec: ClusterSpec) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec``; fails within ``connect_timeout`` seconds."""
    import dask
    from distributed import Client, LocalCluster

    if spec.remote:
        address = spec.scheduler or scheduler_address(spec.scheduler_file or "")
        try:
            client = Client(address, timeout=spec.connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            where = spec.scheduler or spec.scheduler_file
            raise ClusterError(f"cannot reach the Dask scheduler at {where} within "
                               f"{spec.connect_timeout:.0f} s ({type(exc).__name__}: {exc}); "
                               "check the address and that 'dask scheduler' is running") from None
        try:
            yield client
        finally:
            client.close()
        return
    workers = spec.workers or os.cpu_count() or 1
    with dask.config.set(local_start_method()):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def local_start_method() -> dict[str, str]:
    """Dask configuration for how a local cluster's worker processes start.

    Dask spawns each worker: a fresh interpreter that imports Dask (0.35 s of CPU each,
    while the driver plans and writes the store on the same cores). Where the platform
    has it, a fork server imports Dask once and forks the workers from it; they also
    end at once when the cluster closes (0.02 s against 0.2 s). On ``hasbro`` cut at
    60 with 2 workers: cluster up 0.45 s against 0.5 s. A start method set in the
    user's Dask configuration is kept.
    """
    import multiprocessing

    import dask
    key = "distributed.worker.multiprocessing-method"
    if dask.config.get(key) != "spawn" or "forkserver" not in multiprocessing.get_all_start_methods():
        return {}
    return {key: "forkserver"}


def end_local_processes() -> None:
    """At the end of the program, before ``os._exit``: what the interpreter's exit does
    for :mod:`multiprocessing` (children joined, its finalizers run: they remove the
    fork server's temporary folder), and the fork server of local workers ended.

    The fork server's workers were joined when their cluster closed. Left to itself,
    the server would notice that this process is gone and then tear down its imports
    (Dask's) while it still holds this program's stdout and stderr: a pipe reading
    ``ladders solve --json`` would wait 0.2 s more for its end. (The server's pid is an
    attribute of CPython's ``multiprocessing.forkserver``; without it, the server ends
    on its own, only later.)
    """
    import signal
    import sys
    server = getattr(sys.modules.get("multiprocessing.forkserver"), "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if isinstance(pid, int):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    util = sys.modules.get("multiprocessing.util")
    if util is not None:
        util._exit_function()


def scheduler_address(path: str) -> str:
    """The address in a scheduler file (``dask scheduler --scheduler-file``), read once:
    a missing or garbled file is an error now, not a wait for it to appear."""
    import json
    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except FileNotFoundError:
        raise ClusterError(f"{path}: no such scheduler file; start the scheduler with "
                           f"'dask scheduler --scheduler-file {path}' first") from None
    except (OSError, ValueError) as exc:
        raise ClusterError(f"{path}: not a Dask scheduler file ({exc})") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ClusterError(f"{path}: not a Dask scheduler file (no scheduler address in it)")
    return address


def check_workers(client: Any, root: str, modules: tuple[str, ...] = (), timeout: float = 30.0) -> int:
    """Every worker must run our code (import ``modules``), see the store and match our
    versions.

    Returns the number of workers. Raises :class:`ClusterError` with the reason.
    """
    from ladders.checkpoints.store import probe_store

    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError) as exc:
        raise ClusterError(f"no Dask worker joined the scheduler within {timeout:.0f} s") from exc
    try:
        client.get_versions(check=True)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "mismatch"
        raise ClusterError(f"package versions differ between this driver and the workers: {first}") from None
    try:
        answers = client.run(probe_store, root, modules)
    except Exception as exc:  # a worker without our packages fails to unpickle the function
        raise ClusterError(f"the workers cannot run ladders tasks ({type(exc).__name__}: {exc}); "
                           "install ladders in the workers' environment") from None
    bad = {w: a for w, a in answers.items() if not a["ok"]}
    if bad:
        worker, answer = next(iter(bad.items()))
        if answer.get("module"):
            raise ClusterError(f"worker {worker} cannot import {answer['module']} ({answer['error']}); "
                               "install ladders and its dependencies in the workers' environment")
        raise ClusterError(f"worker {worker} cannot write the store {root}: {answer['error']}; every "
                           "worker must see the checkpoint folder at the same path")
    return len(answers)


@dataclass(frozen=True)
class Task:
    """What a worker runs for one item: ``function(*args)`` under a deterministic ``key``
    (Dask runs urgent tasks first: higher ``priority``)."""

    function: Callable[..., dict[str, Any]]
    args: tuple[Any, ...]
    key: str
    priority: int = 0


class Work(Protocol):
    """An engine's stored run, as the executors see it (items: hashable task names)."""

    def finished(self) -> bool:
        """Whether the run is done (may do the driver's final work, e.g. a certificate)."""

    def ready(self, running: set[Hashable], limit: int) -> list[Hashable]:
        """At most ``limit`` items that may start now and are not ``running``, most
        urgent first."""

    def task(self, item: Hashable) -> Task:
        """The task a Dask worker runs for ``item``."""

    def run_here(self, item: Hashable) -> dict[str, Any]:
        """Run ``item`` in this process and return its receipt."""

    def accept(self, item: Hashable, receipt: dict[str, Any], seconds: float) -> None:
        """Take a finished item's receipt into the driver's state (not yet on disk)."""

    def commit(self) -> None:
        """Commit what was accepted: the new manifests become the resume point."""


class BatchWork:
    """The part of :class:`Work` that the prime-based engines share: items are batch
    numbers 0, 1, 2, ... (each a fixed list of primes), a finished batch is committed
    as a manifest that lists its segment (:mod:`ladders.checkpoints.batches`) and then
    folded into the engine's own state. Subclasses give ``task`` (and ``primes``),
    ``fold(ref)``, ``bits()`` (the modulus so far) and ``finished``."""

    def __init__(self, store: Any) -> None:
        from ladders.checkpoints.batches import clear_leftovers, committed_batches
        self.store = store
        self.manifest = store.current()
        clear_leftovers(store, self.manifest)
        self.pending: list[tuple[dict[str, Any], float]] = []
        self.before = len(committed_batches(self.manifest))

    def fold_committed(self) -> None:
        """Fold every batch the manifest lists, in batch order (a resumed run)."""
        from ladders.checkpoints.batches import committed_batches
        for _k, ref in sorted(committed_batches(self.manifest).items()):
            self.fold(ref)

    def fold(self, ref: Any) -> None:
        raise NotImplementedError

    def bits(self) -> int:
        raise NotImplementedError

    def batches(self) -> int:
        from ladders.checkpoints.batches import committed_batches
        return len(committed_batches(self.manifest))

    def ready(self, running: set[Hashable], limit: int) -> list[Hashable]:
        from ladders.checkpoints.batches import committed_batches
        taken = set(committed_batches(self.manifest)) | set(running) | {r["k"] for r, _ in self.pending}
        out: list[Hashable] = []
        k = 0
        while len(out) < limit:
            if k not in taken:
                out.append(k)
            k += 1
        return out

    def task(self, item: Hashable) -> Task:
        raise NotImplementedError

    def run_here(self, item: Hashable) -> dict[str, Any]:
        task = self.task(item)
        return task.function(*task.args)

    def accept(self, item: Hashable, receipt: dict[str, Any], seconds: float) -> None:
        self.pending.append((receipt, seconds))

    def commit(self) -> None:
        """Commit each finished batch, then fold its residues in (in batch order)."""
        from ladders.checkpoints.batches import committed_batches, with_batch
        pending, self.pending = self.pending, []
        for receipt, seconds in sorted(pending, key=lambda rs: rs[0]["k"]):
            if receipt["k"] in committed_batches(self.manifest):
                continue  # ran twice: the committed one stays
            new = with_batch(self.manifest, receipt, seconds, 0)
            self.fold(committed_batches(new)[receipt["k"]])
            new.max_bits = self.bits()
            self.store.commit(new)
            self.manifest = new


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

    def __init__(self, client: Any, limit: float) -> None:
        self.client, self.limit = client, limit
        self.last_seen = self.last_check = time.monotonic()

    def check(self) -> None:
        """Raises :class:`ClusterError` once no worker was seen for ``limit`` seconds."""
        now = time.monotonic()
        if now - self.last_check < self.EVERY_S:
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
                return future.result(timeout=self.EVERY_S)
            except TimeoutError:
                if future.status == "error":  # the task's own TimeoutError
                    raise
                self.check()


def run_dask(client: Any, work: Work, window: int, should_stop: Callable[[], bool],
             progress: Callable[[], None] = lambda: None,
             no_worker_limit: float = ClusterSpec.no_worker_limit) -> bool:
    """Keep at most ``window`` tasks in flight on ``client``'s cluster, accept each
    receipt as it arrives, submit what became ready, then commit; True if stopped
    (the tasks still in flight are cancelled, the committed manifest is the resume
    point). A cluster left without workers for ``no_worker_limit`` seconds is an error,
    not an endless wait."""
    from distributed import wait

    in_flight: dict[Any, Hashable] = {}
    watch = WorkerWatch(client, no_worker_limit)

    def submit() -> None:
        for item in work.ready(set(in_flight.values()), window - len(in_flight)):
            task = work.task(item)
            fut = client.submit(task.function, *task.args, key=task.key, pure=False,
                                priority=task.priority)
            in_flight[fut] = item

    clock = time.perf_counter()
    try:
        while not work.finished():
            if should_stop():
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
            progress()
        return False
    finally:
        if in_flight:
            client.cancel(list(in_flight))
