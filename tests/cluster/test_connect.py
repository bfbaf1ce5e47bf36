"""A local cluster's workers end with their driver, even one killed outright (SIGKILL):
a worker's event loop sees the scheduler (which lived in the driver) gone and closes
the worker, provided that loop runs while the worker computes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

#: A driver: a local cluster of ladders (connect), one task that would take ten
#: minutes, the workers' pids on stdout, then waiting to be killed.
DRIVER = """import os, time
from ladders.cluster.connect import ClusterSpec, connect
with connect(ClusterSpec(workers=2)) as client:
    running = client.submit(time.sleep, 600, pure=False)
    while not any(client.processing().values()):
        time.sleep(0.05)
    print(" ".join(str(pid) for pid in client.run(os.getpid).values()), flush=True)
    time.sleep(600)
"""

#: Seconds the workers get to end: far below the tasks' length.
GRACE = 60


def _kill_and_wait(driver: subprocess.Popen, workers: list[psutil.Process]) -> list[psutil.Process]:
    """SIGKILL the driver; the workers still alive after :data:`GRACE` seconds."""
    assert all(w.is_running() for w in workers)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    _, alive = psutil.wait_procs(workers, timeout=GRACE)
    for w in alive:                     # do not leave them behind for the next tests
        w.kill()
    return alive


def test_workers_end_when_their_driver_is_killed() -> None:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], stdout=subprocess.PIPE, text=True)
    try:
        line = driver.stdout.readline()
        workers = [psutil.Process(int(pid)) for pid in line.split()]
        assert len(workers) == 2, line
        assert _kill_and_wait(driver, workers) == []
    finally:
        driver.kill()
        driver.wait()


@pytest.mark.slow  # a 5-player solve's start (about 15 s), then its workers' end
def test_workers_busy_in_the_series_kernel_end_with_a_killed_solve(tmp_path: Path) -> None:
    """The kernel lets go of the interpreter lock (``nogil``): holding it, a worker went
    on with its batch of 1,024 five-player primes (about 95 s) and only then ended."""
    driver = subprocess.Popen([sys.executable, "-m", "ladders.cluster.cli", "solve", "hasbro",
                               "--players", "5", "--workers", "2",
                               "--checkpoint", str(tmp_path / "run")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        me = psutil.Process(driver.pid)
        deadline = time.monotonic() + 300
        busy: list[psutil.Process] = []
        while len(busy) < 2 and time.monotonic() < deadline:     # both in a batch
            time.sleep(1)
            busy = [p for p in me.children(recursive=True)
                    if p.cpu_times().user > 5 and "forkserver" in " ".join(p.cmdline())]
        assert len(busy) == 2, "the workers never got busy"
        assert _kill_and_wait(driver, busy) == []
    finally:
        driver.kill()
        driver.wait()
