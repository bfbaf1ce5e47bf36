"""The LOCK of a run store on object storage, a lease (:mod:`ladders.checkpoints.locks`):
one that runs out is taken over, one renewed never is, one lost stops the commits; a
second driver is refused at once; a killed driver's lease is taken over at once on its
host, by one of two resumers; a live driver's is respected. Against moto's S3 server on
127.0.0.1 (``s3`` and the helpers: ``test_backend.py``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("obstore")
moto_server = pytest.importorskip("moto.server")

from examples import board_file  # noqa: E402
from ladders.checkpoints.backend import open_backend  # noqa: E402
from ladders.checkpoints.batches import BatchState  # noqa: E402
from ladders.checkpoints.errors import StoreError  # noqa: E402
from ladders.checkpoints.locks import CLOCK_SLACK, identity  # noqa: E402
from ladders.checkpoints.store import RunStore  # noqa: E402
from ladders.cluster.runs import open_store, status  # noqa: E402
from test_backend import LADDERS, ladders, new_store, s3, url  # noqa: E402,F401  (s3: moto on 127.0.0.1)


def unrenewed_lease(name: str) -> tuple[str, RunStore]:
    """A store whose driver took a 2 s lease and then stopped renewing it (it died, or
    froze for longer than its lease)."""
    where = url(name)
    store = new_store(where)
    store.lock.lease_seconds = 2.0
    store.acquire_lock()
    store.lock._lease.stop()
    return where, store


def test_a_lease_that_runs_out_is_taken_over(s3) -> None:
    where, _crashed = unrenewed_lease("lease")  # the driver died: nobody renews its lease
    other = RunStore.open(where, BatchState)
    with pytest.raises(StoreError, match="locked by a running solve"):
        other.acquire_lock()
    time.sleep(2.0 + CLOCK_SLACK + 1.0)
    other.acquire_lock()  # the lease ran out: taken over by compare-and-swap
    assert other.locked_by()["owner"] == other.lock._lease.me["owner"]
    other.release_lock()
    assert other.locked_by() is None


def test_a_renewed_lease_is_never_taken_over(s3) -> None:
    where = url("renewed")
    live = new_store(where)
    live.lock.lease_seconds = 2.0
    live.acquire_lock()
    try:
        for _ in range(3):
            time.sleep(2.0)  # past the lease: only the renewals keep it
            other = RunStore.open(where, BatchState)
            with pytest.raises(StoreError, match="locked by a running solve"):
                other.acquire_lock()
        assert not live.lease_lost()
        live.commit(live.current().next(BatchState(), 1.0))  # still the store's driver
    finally:
        live.release_lock()


def test_a_lost_lease_stops_the_commits(s3) -> None:
    where, slow = unrenewed_lease("lost")  # a driver frozen for longer than its lease
    time.sleep(2.0 + CLOCK_SLACK + 1.0)
    other = RunStore.open(where, BatchState)
    other.acquire_lock()
    assert not slow.lock._lease.renew()  # it wakes up: its renewal finds another owner
    assert slow.lease_lost()
    with pytest.raises(StoreError, match="lease"):
        slow.commit(slow.current().next(BatchState(), 1.0))
    other.release_lock()


def test_a_second_driver_on_a_live_url_is_refused_at_once(s3, tmp_path: Path) -> None:
    where = url("live")
    store = new_store(where)
    store.acquire_lock()
    try:
        proc = ladders(s3, "resume", where, cwd=str(tmp_path))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "locked by a running solve" in lines[0]
        assert "Traceback" not in proc.stderr
    finally:
        store.release_lock()


def _driver_with_a_commit(s3, tmp_path: Path) -> tuple[str, subprocess.Popen]:
    """A real ``ladders solve`` (3 players, series, serial) with its store on S3 and the
    default lease of 60 s, once it holds the lease and has committed a batch."""
    where = url("driver")
    args = ["solve", board_file(tmp_path, 30), "-k", "3", "--executor", "serial",
            "--batch-primes", "4", "--seed", "3", "--checkpoint", where]
    proc = subprocess.Popen([*LADDERS, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=s3, cwd=str(tmp_path), start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.1)
        try:
            store = open_store(where)
            if (store.locked_by() or {}).get("pid") == proc.pid and store.current().state.batches:
                return where, proc
        except (StoreError, OSError):
            continue
    proc.kill()
    raise AssertionError("the driver committed no batch")


def test_a_killed_drivers_lease_is_taken_over_at_once_on_its_host(s3, tmp_path: Path) -> None:
    """kill -9 of a driver leaves its lease; on the same host (hostname, boot id, pid
    namespace) its pid is seen gone, so status says so and resume takes the store over at
    once, by compare-and-swap, instead of refusing until the lease runs out."""
    if "start_ticks" not in identity():
        pytest.skip("this host has no /proc: a dead driver's lease is waited out")
    where, proc = _driver_with_a_commit(s3, tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < open_store(where).lock.lease_left()  # the lease has not run out
    st = json.loads(ladders(s3, "status", where, "--json", cwd=str(tmp_path)).stdout)
    assert st["state"].startswith(f"interrupted (its driver, pid {proc.pid} on this host, is gone")
    resumed = ladders(s3, "resume", where, "--json", cwd=str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    said = [line for line in resumed.stderr.splitlines() if "lease" in line]
    assert len(said) == 1 and re.fullmatch(
        rf"ladders: {re.escape(where)}: the driver that held its lease \(pid {proc.pid} on this "
        r"host\) is gone: the lease is taken over now, \d+ s before it would run out", said[0])
    assert "locked by" not in resumed.stderr and json.loads(resumed.stdout)["verified"]["passed"]


def test_two_resumers_of_a_dead_drivers_lease_one_wins(s3) -> None:
    """A fresh lease whose driver is gone from this host, taken over at once by two
    drivers together: the compare-and-swap on its ETag lets one win; the other is
    refused, naming the winner."""
    if "start_ticks" not in identity():
        pytest.skip("this host has no /proc: a dead driver's lease is waited out")
    where = url("dead")
    new_store(where)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    open_backend(where).replace("LOCK", json.dumps(
        {**identity(), "pid": dead.pid, "owner": "gone", "since": time.time(),
         "lease_seconds": 60.0}).encode())
    stores = [RunStore.open(where, BatchState) for _ in range(2)]
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def take(store: RunStore) -> None:
        barrier.wait()
        try:
            store.acquire_lock()
            outcomes.append("taken")
        except StoreError as exc:
            outcomes.append(str(exc))
    threads = [threading.Thread(target=take, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winner = [s for s in stores if s.lock._lease is not None]
    assert sorted(outcomes)[1] == "taken" and len(winner) == 1
    assert f"locked by a running solve (pid {os.getpid()} on host" in sorted(outcomes)[0]
    assert stores[0].locked_by()["owner"] == winner[0].lock._lease.me["owner"]
    winner[0].release_lock()


def test_a_live_drivers_lease_is_respected(s3, tmp_path: Path) -> None:
    """A driver that lives (here stopped, so that it neither finishes nor renews) keeps
    its lease: resume is refused, status says it may be running; an older LOCK without
    boot id (or from another boot) naming a dead pid is waited out, as before."""
    where, proc = _driver_with_a_commit(s3, tmp_path)
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        refused = ladders(s3, "resume", where, cwd=str(tmp_path))
        assert refused.returncode == 2 and "locked by a running solve" in refused.stderr
        assert "taken over" not in refused.stderr
        st = json.loads(ladders(s3, "status", where, "--json", cwd=str(tmp_path)).stdout)
        assert st["state"].startswith("running (or stopped less than a lease ago")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    holder = open_store(where).locked_by()
    backend = open_backend(where)
    for older in ({k: v for k, v in holder.items() if k not in ("boot_id", "pid_ns", "start_ticks")},
                  {**holder, "boot_id": "another boot"}):
        backend.replace("LOCK", json.dumps(older).encode())
        refused = ladders(s3, "resume", where, cwd=str(tmp_path))
        assert refused.returncode == 2 and "locked by a running solve" in refused.stderr
        assert open_store(where).locked_by() == older
        assert status(where)["state"].startswith("running (or stopped less than a lease ago")
