"""The Dask loop keeps every worker thread busy, as workers join (a real LocalCluster)."""

from __future__ import annotations

import threading
import time
from typing import Any

from distributed import Client, LocalCluster

from ladders.cluster.loops import Task, run_dask


def _nap(k: int, seconds: float) -> dict[str, Any]:
    start = time.monotonic()
    time.sleep(seconds)
    return {"k": k, "start": start, "end": time.monotonic()}


class Naps:
    """``count`` tasks of ``seconds`` each, no store: the loop's own behaviour."""

    queued = 1
    head_start = False
    modules: tuple[str, ...] = ()

    def __init__(self, count: int, seconds: float) -> None:
        self.count, self.seconds = count, seconds
        self.receipts: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []

    def attach(self, client: Any) -> None:
        pass

    def finished(self) -> bool:
        return len(self.receipts) >= self.count

    def ready(self, running: set, limit: int) -> list[int]:
        taken = {r["k"] for r in self.receipts + self.pending} | set(running)
        return [k for k in range(self.count) if k not in taken][:max(0, limit)]

    def task(self, item: int) -> Task:
        return Task(_nap, (item, self.seconds), key=f"nap-{item}")

    def run_here(self, item: int) -> dict[str, Any]:
        return _nap(item, self.seconds)

    def accept(self, item: int, receipt: dict[str, Any], seconds: float) -> None:
        self.pending.append(receipt)

    def commit(self) -> None:
        self.receipts += self.pending
        self.pending = []

    def figures(self) -> None:
        return None

    def tally(self) -> tuple[int, int]:
        return len(self.receipts), self.count

    def tail_seconds(self) -> None:
        return None

    def most_at_once(self, after: float = 0.0) -> int:
        """The most tasks that ran at the same moment (starting at or after ``after``)."""
        events = sorted([(r["start"], 1) for r in self.receipts if r["start"] >= after]
                        + [(r["end"], -1) for r in self.receipts if r["start"] >= after])
        most = now = 0
        for _, step in events:
            now += step
            most = max(most, now)
        return most


def test_every_thread_of_a_worker_gets_a_task() -> None:
    """A worker of 4 threads runs 4 tasks at once (the window was one task a worker
    process, plus one)."""
    with LocalCluster(n_workers=1, threads_per_worker=4, processes=False,
                      dashboard_address=":0") as lc, Client(lc) as client:
        work = Naps(12, 0.3)
        assert run_dask(client, work, lambda: False) is False
    assert len(work.receipts) == 12 and work.most_at_once() == 4


def test_workers_that_join_during_a_run_get_tasks() -> None:
    """A cluster of hundreds is started beside the driver: workers that join after the
    run started are counted (the window was fixed at the workers there at the start)."""
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as lc, Client(lc) as client:
        work = Naps(40, 0.25)
        joined: list[float] = []

        def grow() -> None:
            time.sleep(0.6)
            lc.scale(3)
            client.wait_for_workers(3, timeout=30)
            joined.append(time.monotonic())

        helper = threading.Thread(target=grow)
        helper.start()
        assert run_dask(client, work, lambda: False) is False
        helper.join()
    assert joined and work.most_at_once(after=joined[0] + 1.5) == 3
