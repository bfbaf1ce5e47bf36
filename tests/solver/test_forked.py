"""Work split by fork (:mod:`ladders.solver.forked`): results in order, failures named."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ladders.solver.forked import Forked, run_forked


def test_results_come_back_in_order_from_other_processes() -> None:
    here = os.getpid()
    out = run_forked([lambda: (os.getpid(), "a"), lambda: (os.getpid(), "b" * 300_000),
                      lambda: (os.getpid(), "c")])
    assert [tag[:1] for _, tag in out] == ["a", "b", "c"] and len(out[1][1]) == 300_000
    assert out[0][0] == here and {pid for pid, _ in out[1:]}.isdisjoint({here})


def test_a_failing_child_is_named() -> None:
    def boom() -> int:
        raise ValueError("no such table")
    with pytest.raises(RuntimeError, match="ValueError: no such table"):
        run_forked([lambda: 1, boom])


def test_a_child_killed_by_a_signal_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="without a result"):
        run_forked([lambda: 1, lambda: os._exit(3)])


def test_a_failure_here_reaps_the_children(tmp_path) -> None:
    marker = tmp_path / "pid"

    def child() -> None:
        marker.write_text(str(os.getpid()))
        time.sleep(30)

    def boom() -> int:
        while not marker.exists() or not marker.read_text():
            time.sleep(0.01)
        raise KeyError("here")

    with pytest.raises(KeyError):
        run_forked([boom, child])
    with pytest.raises(ChildProcessError):              # killed and reaped, not left behind
        os.waitpid(int(marker.read_text()), os.WNOHANG)


def test_a_forked_call_runs_at_once_in_another_process() -> None:
    here = os.getpid()
    child = Forked(lambda: (os.getpid(), "x" * 200_000))    # more than a pipe's buffer
    pid, text = child.result()
    assert pid != here and text == "x" * 200_000
    with pytest.raises(RuntimeError, match="asked for twice"):
        child.result()


def test_a_killed_forked_call_ends_the_wait_for_it() -> None:
    child = Forked(lambda: time.sleep(30))
    out: list[BaseException] = []

    def wait() -> None:
        try:
            child.result()
        except RuntimeError as exc:
            out.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    child.kill()
    waiter.join(10)
    assert not waiter.is_alive() and "without a result" in str(out[0])


def test_a_cancelled_forked_call_is_reaped(tmp_path) -> None:
    marker = tmp_path / "pid"

    def work() -> None:
        marker.write_text(str(os.getpid()))
        time.sleep(30)

    child = Forked(work)
    while not marker.exists() or not marker.read_text():
        time.sleep(0.01)
    child.cancel()
    with pytest.raises(ChildProcessError):              # killed and reaped, not left behind
        os.waitpid(int(marker.read_text()), os.WNOHANG)
