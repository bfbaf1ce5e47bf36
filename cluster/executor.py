"""The Dask executor: run a stored plan's tasks on a cluster, committing as they finish.

Default cluster: ``LocalCluster(processes=True, threads_per_worker=1)`` (gmpy2 holds the
GIL, so parallel work needs processes). ``--scheduler tcp://HOST:PORT`` or
``--scheduler-file F`` use a cluster started with ``dask scheduler`` / ``dask worker``.

Tasks carry store paths and segment references only (no bulk data through the
scheduler); their keys derive from the plan token. The driver alone commits manifests:
after every finished task, so an interruption loses at most the tasks in flight.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from checkpoints.store import Manifest, RunStore
from cluster.errors import ClusterError
from checkpoints.tasks import (apply_receipt, is_finished, probe_store, ready_tasks, run_task, task_inputs,
                               task_parts)


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: a scheduler address or file, else a local cluster of ``workers``."""

    scheduler: str | None = None
    scheduler_file: str | None = None
    workers: int | None = None
    connect_timeout: float = 10.0

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
    from distributed import Client, LocalCluster

    if spec.remote:
        try:
            if spec.scheduler_file:
                client = Client(scheduler_file=spec.scheduler_file, timeout=spec.connect_timeout)
            else:
                client = Client(spec.scheduler, timeout=spec.connect_timeout)
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
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def check_workers(client: Any, root: str, timeout: float = 30.0) -> int:
    """Every worker must run our code, see the store and match our versions.

    Returns the number of workers. Raises :class:`ClusterError` with the reason.
    """
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
        answers = client.run(probe_store, root)
    except Exception as exc:  # a worker without our packages fails to unpickle the function
        raise ClusterError(f"the workers cannot run ladders tasks ({type(exc).__name__}: {exc}); "
                           "install ladders in the workers' environment") from None
    bad = {w: a["error"] for w, a in answers.items() if not a["ok"]}
    if bad:
        worker, error = next(iter(bad.items()))
        raise ClusterError(f"worker {worker} cannot write the store {root}: {error}; every worker "
                           "must see the checkpoint folder at the same path")
    return len(answers)


@dataclass
class DriveOutcome:
    """Where a drive stopped. ``worker_seconds``: the finished tasks' time on the
    workers, split into ``read``, ``compute`` and ``write`` (the store's share)."""

    manifest: Manifest
    interrupted: bool
    tasks_run: int
    worker_seconds: dict[str, float]


def task_key(token: str, b: int, j: int, fused: bool = False) -> str:
    """Deterministic key: the plan token and the task (``UF``: an update fused with the
    factorization that follows it)."""
    return f"ladders-{token[:16]}-" + (f"F{b}" if b == j else f"{'UF' if fused else 'U'}{b}-{j}")


def drive(client: Any, store: RunStore, window: int,
          progress: Callable[[Manifest, int], None] | None = None,
          should_stop: Callable[[], bool] = lambda: False) -> DriveOutcome:
    """Submit ready tasks (at most ``window`` in flight), commit each receipt, until the
    plan is finished or ``should_stop()`` turns true (then in-flight tasks are cancelled
    and the committed manifest is the resume point)."""
    from distributed import wait

    plan = store.plan
    root, token = str(store.root), plan.token
    manifest = store.current()
    store.collect_garbage(manifest)  # leftovers of an interrupted run
    committed = manifest
    in_flight: dict[Any, tuple[int, int]] = {}
    ran = 0
    spent = {"read": 0.0, "compute": 0.0, "write": 0.0}
    clock = time.perf_counter()
    nblocks = len(plan.blocks)

    def submit_ready() -> None:
        running = set(in_flight.values())
        for b, j in ready_tasks(plan, manifest, running)[: max(0, window - len(in_flight))]:
            rows_ref, fac_ref = task_inputs(manifest, b, j)
            fut = client.submit(run_task, root, token, b, j, rows_ref, fac_ref,
                                key=task_key(token, b, j, plan.fuses(b, j)), pure=False,
                                priority=-(b * nblocks + (j - b)))
            in_flight[fut] = (b, j)

    while not is_finished(plan, manifest):
        if should_stop():
            client.cancel(list(in_flight))
            return DriveOutcome(committed, True, ran, spent)
        submit_ready()
        if not in_flight:
            raise ClusterError("no task can run but the plan is not finished (inconsistent manifest)")
        try:
            finished, _ = wait(list(in_flight), timeout=0.5, return_when="FIRST_COMPLETED")
        except TimeoutError:
            continue
        to_commit = []
        for fut in finished:
            in_flight.pop(fut)
            receipt = fut.result()  # a task's exception surfaces here, with its message
            now = time.perf_counter()
            manifest = apply_receipt(plan, manifest, receipt, now - clock)
            to_commit.append(manifest)
            clock = now
            ran += len(task_parts(plan, int(receipt["b"]), int(receipt["j"])))
            spent["read"] += receipt["read_seconds"]
            spent["write"] += receipt["write_seconds"]
            spent["compute"] += receipt["seconds"] - receipt["read_seconds"] - receipt["write_seconds"]
        # the next tasks go out before the commits: they read segments that are on disk
        # already, and if this driver dies before committing they are simply redone
        if not is_finished(plan, manifest):
            submit_ready()
        for version in to_commit:  # one manifest per finished task, in order
            store.commit(version)
            store.drop_superseded(committed, version)
            committed = version
        if progress is not None:
            progress(manifest, ran)
    return DriveOutcome(manifest, False, ran, spent)
