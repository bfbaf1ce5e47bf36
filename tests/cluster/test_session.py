"""The run session (:mod:`ladders.cluster.session`). A solve whose cluster cannot start
keeps nothing (issue 40): the store it created would refuse the corrected command
("already holds a run") and send a resume back to the cluster that failed. Beside a
local cluster the bounds are computed in a forked child."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path


def ladders(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ladders.cluster.cli", *args],
                          capture_output=True, text=True, timeout=300)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_start_that_fails_writes_nothing_and_the_corrected_command_runs(tmp_path: Path) -> None:
    store = tmp_path / "run"
    failed = ladders("solve", "tiny10", "-k", "3", "--checkpoint", str(store),
                     "--scheduler", f"tcp://127.0.0.1:{closed_port()}")
    assert failed.returncode != 0
    assert "nothing was kept in" in failed.stderr and "Traceback" not in failed.stderr
    assert not store.exists()
    corrected = ladders("solve", "tiny10", "-k", "3", "--checkpoint", str(store),
                        "--workers", "1", "--json")
    assert corrected.returncode == 0, corrected.stderr[-2000:]
    assert json.loads(corrected.stdout)["verified"]["passed"]


def test_the_bounds_beside_a_local_cluster_run_in_a_forked_process() -> None:
    """Beside a local cluster's workers the bounds walk in a child forked before the
    driver starts a thread; in a thread of the driver they hold its interpreter lock and
    the workers wait for their next batches (3 players on hasbro: 8 % slower end to end,
    when the progress line's thread started first)."""
    proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "solve", "tiny10", "-k", "3",
                           "--executor", "dask", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["executor"] == "dask" and data["verified"]["bounds"]["process"] == "forked"
