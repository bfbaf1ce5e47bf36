"""Stops and progress through the real `ladders` program (issue 40): a second Ctrl-C
while numba compiles, a stop while the local cluster starts, what a stop drops, what a
run says while its first batches run, what a resume says it resumes, the warning for a
long run that keeps nothing. Real signals to real processes; the waits are hang guards,
never assertions on the clock."""

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

from ladders.checkpoints.errors import StoreError
from ladders.cluster.errors import EXIT_INTERRUPTED
from ladders.cluster.runs import open_store

LADDERS = [sys.executable, "-m", "ladders.cluster.cli"]


def start(args: list[str], **env: str) -> subprocess.Popen:
    return subprocess.Popen(LADDERS + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, **env})


class Lines:
    """A process's stderr, read line by line in a thread (a test waits for a store or
    a child process meanwhile)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, proc: subprocess.Popen) -> str:
        """The first line holding ``text`` (fails if the process ends first)."""
        while True:
            found = [line for line in self.lines if text in line]
            if found:
                return found[0]
            assert proc.poll() is None, f"ended without saying {text!r}: {self.lines}"
            time.sleep(0.02)

    def all(self, proc: subprocess.Popen) -> list[str]:
        proc.wait(timeout=300)
        self._thread.join(timeout=60)
        return self.lines


def batches_done(store: Path) -> int:
    try:
        return len(open_store(str(store)).current().state.batches)
    except (StoreError, OSError, ValueError):
        return 0


def forkserver_started(pid: int) -> bool:
    """Whether the local cluster's fork server runs (a child of ``pid``): the cluster
    is starting, and its workers are not up yet (the server imports Dask and the
    kernels before it forks them)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            children = open(f"/proc/{pid}/task/{task}/children").read().split()
        except OSError:
            continue
        for child in children:
            try:
                if b"forkserver" in open(f"/proc/{child}/cmdline", "rb").read():
                    return True
            except OSError:
                continue
    return False


def test_a_second_ctrl_c_stops_the_first_compile_at_once(tmp_path: Path) -> None:
    """The compile of the kernels (a minute, more on a busy machine) runs Python: a
    second Ctrl-C ends the process then, as the notice promises, instead of after it.
    The first Ctrl-C comes once numba has written the first function of the compile
    to its (fresh) cache folder."""
    cache = tmp_path / "numba"
    proc = start(["solve", "tiny10", "-k", "3", "--executor", "serial"], NUMBA_CACHE_DIR=str(cache))
    try:
        said = Lines(proc)
        assert "Ctrl-C twice stops it" in said.wait_for("compiling the series kernels", proc)
        while not list(cache.rglob("*.nbc")):
            assert proc.poll() is None, said.lines
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        said.wait_for("ladders: stopping", proc)
        time.sleep(1)  # past the half second in which a second SIGINT is the group's copy
        proc.send_signal(signal.SIGINT)
        lines = said.all(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    # ended by the signal's default action, not after the compile with exit 75
    assert proc.returncode == -signal.SIGINT, lines


@pytest.mark.skipif(not Path(f"/proc/self/task/{os.getpid()}/children").exists(),
                    reason="finds the fork server through /proc/PID/task/TID/children (Linux)")
@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM to the group"])
def test_a_stop_while_the_local_cluster_starts_ends_with_75(tmp_path: Path, how: str) -> None:
    """A Ctrl-C while the local cluster starts was dropped (the run went on to exit 0);
    a SIGTERM to the process group killed the starting workers and ended in "internal
    error: Nanny failed to start" (exit 1). Both are a stop: exit 75, a resumable store,
    whose resume writes the --output the solve was given (issue 55: it forgot it)."""
    store, output = tmp_path / "run", tmp_path / "answer.json"
    proc = start(["solve", "tiny10", "-k", "3", "--checkpoint", str(store), "--workers", "1",
                  "--batch-primes", "1", "--seed", "5", "--output", str(output)])
    try:
        said = Lines(proc)
        while not forkserver_started(proc.pid):
            assert proc.poll() is None, said.lines
            time.sleep(0.01)
        if how == "SIGINT":
            proc.send_signal(signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGTERM)
        lines = said.all(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = "\n".join(lines)
    assert proc.returncode == EXIT_INTERRUPTED, text
    assert f"ladders resume {store}" in text and "error" not in text and "Traceback" not in text
    if how != "SIGINT":  # a SIGTERM's stop is not called a Ctrl-C
        assert "Ctrl-C again" not in text, text
    status = subprocess.run(LADDERS + ["status", str(store), "--json"], capture_output=True,
                            text=True, timeout=120)
    assert json.loads(status.stdout)["state"] == "interrupted"
    assert not output.exists()
    resumed = subprocess.run(LADDERS + ["resume", str(store)], capture_output=True, text=True,
                             timeout=300, cwd=tmp_path.parent)
    assert resumed.returncode == 0, resumed.stderr
    assert f"output: {output} (as 'ladders solve --output' asked" in resumed.stderr
    assert json.loads(output.read_text())["players"] == 3


def test_a_batch_run_says_what_it_waits_for_what_a_stop_drops_and_what_it_resumes(
        tmp_path: Path) -> None:
    """Batches of minutes (5 players: 1,024 primes, about 90 s each) left stderr empty
    until the first was done; a stop said "stopping after the work in flight" and
    dropped it; a resume said nothing. Here 4 players in batches of 256 primes (about
    1.3 s each)."""
    store = tmp_path / "run"
    run = ["hasbro", "-k", "4", "--batch-primes", "256", "--workers", "1", "--seed", "3"]
    proc = start(["solve", *run, "--checkpoint", str(store)])
    try:
        said = Lines(proc)
        while batches_done(store) < 1:
            assert proc.poll() is None, said.lines
            time.sleep(0.05)
        # said before the first batch was done, with the cost model's time of a batch
        waiting = [line for line in said.lines if "waiting for the first batches" in line]
        # out of the batches expected: the attempt at the fitted size, 256 primes a batch
        assert waiting and waiting[0].startswith("batches: 0/1,961, "), said.lines
        assert "each on a quiet worker" in waiting[0]
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the workers get it too
        lines = said.all(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = "\n".join(lines)
    assert proc.returncode == EXIT_INTERRUPTED, text
    assert "ladders: stopping (Ctrl-C again to stop at once)" in lines
    assert any(line.startswith("ladders: stopped with ") and line.endswith(
        "in flight: their work is dropped") for line in lines), text
    assert "after the work in flight" not in text and "Traceback" not in text

    done = batches_done(store)
    proc = start(["resume", str(store)])
    try:
        said = Lines(proc)
        first = said.wait_for("resuming", proc)
        batches = "1 batch" if done == 1 else f"{done:,} batches"
        assert first == (f"resuming hasbro, 4 players (series engine) from {store}: {batches} "
                         f"({256 * done:,} primes) done"), first
        # the total from the bits a batch has brought so far
        assert re.match(rf"batches: {done:,}/1,9\d\d, ",
                        said.wait_for("waiting for the next batches", proc))
        proc.send_signal(signal.SIGINT)
        said.all(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == EXIT_INTERRUPTED


def test_progress_lines_keep_coming_while_nothing_is_done(capsys: pytest.CaptureFixture) -> None:
    """Off a terminal, a line every ``LOG_EVERY`` seconds even when no unit finishes
    (here every 0.05 s instead of 30), with the note of what the run waits for until
    the next unit is done."""
    from ladders.cluster.commands import task_bar

    class quick(task_bar):
        LOG_EVERY = 0.05

    with quick(("batches", "batch")) as step:
        step(0, 0, 0, note="waiting for the first batches: about 1.4 min each")
        while capsys.readouterr().err.count("waiting for the first batches") < 1:
            time.sleep(0.01)
        seen = ""
        while seen.count("\n") < 3:  # lines go on with no step at all
            seen += capsys.readouterr().err
            time.sleep(0.01)
        assert all(line.startswith("batches: 0, ") and line.endswith(
            "(waiting for the first batches: about 1.4 min each)") for line in seen.splitlines())
        step(1, 0, 20)  # the batch it waited for: the note is gone
        seen = ""
        while not seen.strip():
            seen += capsys.readouterr().err
            time.sleep(0.01)
        assert seen.splitlines()[0].startswith("batches: 1, 20 digits, ")
        assert "waiting" not in seen


def test_the_progress_line_gives_the_time_left_from_the_measured_rate(
        capsys: pytest.CaptureFixture) -> None:
    """The units left at this session's measured seconds a unit, plus the tail the run
    expects after its last unit; none before a unit is done or without a total."""
    from ladders.cluster.commands import task_bar

    class quick(task_bar):
        LOG_EVERY = 0.0

    with quick(("batches", "batch")) as step:
        t0 = time.monotonic()
        step(2, 10, 0)                        # resumed: 2 done before this session
        time.sleep(0.05)                      # the cluster's start, a first compile
        step(3, 10, 0)                        # the first unit: the rate counts from here
        time.sleep(0.1)
        step(6, 10, 0, tail=30.0)             # 3 more
        time.sleep(0.05)
        spent = time.monotonic() - t0
        lines = capsys.readouterr().err.splitlines()
    before = [line for line in lines if line.startswith(("batches: 2/10", "batches: 3/10"))]
    after = [line for line in lines if line.startswith("batches: 6/10")]
    assert before and after and not any("left" in line for line in before)
    for line in after:
        assert line.endswith(" s left")
        left = float(line.rsplit("about ", 1)[1].split()[0])
        # 4 units left at (the seconds of the 3 since the first) / 3 a unit, the tail,
        # less the time since the last
        assert 30.0 - spent <= left <= 30.0 + 4 / 3 * spent


def test_a_long_solve_without_a_checkpoint_is_warned_that_it_keeps_nothing() -> None:
    """5 players on hasbro: the plan says days; without --checkpoint a Ctrl-C or a crash
    loses all of it, and the solve says so with the plan, before it starts."""
    proc = start(["solve", "hasbro", "-k", "5", "--workers", "1"])
    try:
        said = Lines(proc)
        said.wait_for("the plan:", proc)
        proc.send_signal(signal.SIGINT)
        lines = said.all(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    plan = next(i for i, line in enumerate(lines) if line.startswith("the plan:"))
    warning = lines[plan + 1]  # written with the plan's line
    assert warning.startswith("ladders: warning: the plan puts this run at ") and \
        "without --checkpoint it keeps nothing" in warning and "--checkpoint DIR" in warning
