"""Crash and resume through the real `ladders` program: kill -9 at random points, Ctrl-C,
SIGTERM. The resumed answer must be the identical fraction, and a resume may only redo
what was in flight when the driver died (nothing a committed manifest lists). Then
``status`` and ``verify`` of stored runs (:mod:`ladders.cluster.runs`)."""

from __future__ import annotations

from ladders.cluster.runs import open_store

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ladders.checkpoints.elimination import plan_of
from ladders.checkpoints.store import RunStore
from ladders.cluster.errors import EXIT_INTERRUPTED
from ladders.cluster.runs import solve, verify_stored
from ladders.solver.problem import Problem
from examples import EXAMPLES, board_file

LADDERS = [sys.executable, "-m", "ladders.cluster.cli"]


def start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(LADDERS + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def finish(args: list[str]) -> dict:
    proc = subprocess.run(LADDERS + args + ["--json"], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def reference(board: str) -> str:
    return finish(["solve", board])["seats"][0]["exact"]


def kill_and_resume(tmp_path: Path, board: str, executor: str, seed: int, extra: list[str],
                    plan: tuple[str, ...] = ()) -> None:
    """``plan``: solve options that fix the plan (a run that finishes before the kill
    tests nothing)."""
    rng = random.Random(seed)
    store = tmp_path / f"run{seed}"
    proc = start(["solve", board, "--engine", "elimination", "--checkpoint", str(store),
                  "--executor", executor, *plan, *extra])
    deadline = time.time() + 120
    # wait until some tasks are committed, then kill -9 the whole process group
    while time.time() < deadline:
        time.sleep(0.2)
        try:
            done = len(open_store(store).current().state.done)
        except Exception:
            continue
        if done >= rng.randint(1, 6):
            break
    time.sleep(rng.random())
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = open_store(store)
    done_at_kill = len(stored.newest().state.done)  # a manifest written just before the kill counts
    total = len(plan_of(stored).tasks())
    assert done_at_kill < total, "the run finished before the kill; give it more tasks"
    resumed = finish(["resume", str(store), *extra])
    assert resumed["seats"][0]["exact"] == reference(board)
    assert resumed["store"]["tasks_run"] == total - done_at_kill
    assert resumed["verified"]["passed"]


def test_kill_9_then_resume_serial_executor(tmp_path) -> None:
    # 387 tasks of 40 blocks (about 5 s): with the segment cache and fused U+F tasks,
    # 78 tasks of 16 blocks took under a second and were done before the kill at times
    kill_and_resume(tmp_path, board_file(tmp_path, 30), "serial", seed=1, extra=[],
                    plan=("--block-size", "20"))


def test_ctrl_c_and_sigterm_leave_a_resumable_store(tmp_path) -> None:
    board = board_file(tmp_path, 30)
    for sig in (signal.SIGINT, signal.SIGTERM):
        store = tmp_path / f"run-{sig.name}"
        proc = start(["solve", board, "--engine", "elimination", "--checkpoint", str(store),
                      "--executor", "serial", "--block-size", "20"])  # 387 tasks, as above
        while not (store / "manifest" / "CURRENT").exists() or len(open_store(store).current().state.done) < 3:
            time.sleep(0.1)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == EXIT_INTERRUPTED, err[-1000:]
        assert f"ladders resume {store}" in err
        assert "Traceback" not in err
        status = subprocess.run(LADDERS + ["status", str(store), "--json"], capture_output=True, text=True)
        assert json.loads(status.stdout)["state"] == "interrupted"
        assert finish(["resume", str(store)])["seats"][0]["exact"] == reference(board)


def test_status_and_verify_of_a_finished_run(tmp_path) -> None:
    store = tmp_path / "run"
    board = board_file(tmp_path, 20)
    solved = finish(["solve", board, "--engine", "elimination", "--checkpoint", str(store),
                     "--executor", "serial"])
    st = finish(["status", str(store)])
    assert st["state"] == "complete" and st["tasks_done"] == st["tasks_total"]
    assert st["result"]["seats"][0] == solved["seats"][0]["exact"]
    assert "so far" not in st["digits"]  # a finished run has all its digits
    ver = finish(["verify", str(store), "--primes", "2"])
    residues = ver["verified"]["residues"]  # two 31-bit primes for each 61-bit one by blocks
    assert ver["verified"]["passed"] and len(residues["primes"]) == 2 * (
        2 if residues["method"] == "blocks" else 1)
    assert ver["verified"]["cross"] == {**ver["verified"]["cross"], "engine": "series", "passed": True}
    # a damaged committed segment makes verify fail with one line, no traceback
    manifest = open_store(store).current()
    seg = next(iter(manifest.state.factored.values()))
    chunk = store / seg.path / "rows" / "0"
    data = bytearray(chunk.read_bytes())
    data[-10] ^= 1
    chunk.write_bytes(bytes(data))
    bad = subprocess.run(LADDERS + ["verify", str(store)], capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_kill_9_soak_on_a_dask_cluster(tmp_path, seed: int) -> None:
    kill_and_resume(tmp_path, board_file(tmp_path, 50), "dask", seed=seed, extra=["--workers", "2"])


@pytest.mark.slow  # 12 s
def test_modular_engine_stops_and_resumes_its_lifting(tmp_path) -> None:
    from ladders.cluster.runs import solve
    from ladders.solver.exact import fraction_to_str
    from ladders.solver.games.board import preset_board
    from ladders.solver.problem import Problem
    whole = [fraction_to_str(x) for x in solve(Problem.build(preset_board("hasbro"), 2), "series").seats]
    # SIGTERM in the middle of the lifting: exit 75, a saved state, the same answer
    store = tmp_path / "run-term"
    proc = start(["solve", "hasbro", "--engine", "modular", "--checkpoint", str(store), "--save-every", "0.2"])
    deadline = time.time() + 60
    while not (store / "lift").exists() or not any((store / "lift").iterdir()):
        assert time.time() < deadline, "no lifting state was saved"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_INTERRUPTED, err[-1000:]
    assert f"ladders resume {store}" in err and "Traceback" not in err
    st = finish(["status", str(store)])
    assert st["state"] == "interrupted" and st["steps"] > 0
    resumed = finish(["resume", str(store)])
    assert [x["exact"] for x in resumed["seats"]] == whole and resumed["details"]["resumed_from_step"] == st["steps"]
    # kill -9 of the process: the last committed state is where the resume starts
    store = tmp_path / "run-kill"
    proc = start(["solve", "hasbro", "--engine", "modular", "--checkpoint", str(store), "--save-every", "0"])
    deadline = time.time() + 60
    while True:
        assert time.time() < deadline, "no lifting state reached 256 steps"
        time.sleep(0.05)
        try:
            steps = open_store(store).current().state.steps
        except Exception:
            continue
        if steps >= 256:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    at_kill = open_store(store).current().state.steps
    resumed = finish(["resume", str(store)])
    assert [x["exact"] for x in resumed["seats"]] == whole and resumed["details"]["resumed_from_step"] >= at_kill
    assert len(list((store / "lift").iterdir())) == 1  # leftovers of the killed run are gone


def test_a_stop_during_the_final_checks_skips_the_cross_check() -> None:
    # issue 27 item 4: Ctrl-C after the work went unheard for the 40 s of the other
    # engine's solve. The serial loop asks once before its one batch; from the next
    # question on (the checks) the answer is "stop": the cross-check is skipped, the
    # answer stands, verified by its own confirmation and the bounds
    from ladders.cluster.runs import solve
    from ladders.solver.games.board import preset_board
    from ladders.solver.problem import Problem
    asked = []

    def stop_after_the_work() -> bool:
        asked.append(1)
        return len(asked) > 1
    out = solve(Problem.build(preset_board("tiny10"), 5), executor="serial",
                should_stop=stop_after_the_work)
    assert not out.interrupted and out.passed and len(out.seats) == 5
    cross = out.verified["cross"]
    assert cross["skipped"] and cross["reason"] == "stopped before it finished (Ctrl-C or SIGTERM)"
    assert out.verified["certificate"]["check"] == "confirmation"
    assert out.verified["certificate"]["passed"] and out.verified["bounds"]["passed"]


def test_status_of_prime_batch_runs_names_its_digits_and_sizes(tmp_path) -> None:
    # issue 40: a crt run's status said "0 unknowns" and tasks_total 0 where the solve
    # said 120 unknowns and 1 batch; its digits (the whole modulus) read as twice the
    # progress line's (what N or D can reach)
    from ladders.solver.exact import bits_to_digits
    crt = tmp_path / "crt"
    solved = finish(["solve", "tiny10", "-k", "3", "--engine", "crt", "--checkpoint", str(crt),
                     "--executor", "serial"])
    st = finish(["status", str(crt)])
    assert st["unknowns"] == 120 and st["size"] == "120 unknowns"
    assert st["tasks_done"] == st["tasks_total"] == solved["tasks"]["total"] == 1
    bits = open_store(str(crt)).current().max_bits
    assert st["digits"] == (f"N and D up to {bits_to_digits(bits // 2):,} digits each, from a "
                            f"modulus of {bits_to_digits(bits):,} digits")
    # three players of the series engine: the fractions come over the denominator
    # multiple, so they may be as long as the whole modulus
    series = tmp_path / "series"
    finish(["solve", "tiny10", "-k", "3", "--checkpoint", str(series), "--executor", "serial"])
    st = finish(["status", str(series)])
    whole = bits_to_digits(open_store(str(series)).current().max_bits)
    assert st["digits"] == f"N and D up to {whole:,} digits each, from a modulus of {whole:,} digits"
    assert st["tasks_done"] == st["tasks_total"] == 1


def test_verify_of_a_modular_run_cross_checks_with_elimination(tmp_path) -> None:
    store = tmp_path / "run"
    problem = Problem.build(EXAMPLES["hasbro20-2"].board, 2)
    out = solve(problem, "modular", checkpoint=str(store), seed=1)
    assert out.store == str(store) and RunStore.open(store).completed()["engine"] == "modular"
    report = verify_stored(str(store), primes=1)["report"]
    assert report["passed"] and report["cross"]["engine"] == "elimination"
    assert report["cross"]["passed"] and report["matches_complete_json"]


def test_verify_of_a_series_run_too_big_to_solve_again_uses_fresh_primes(tmp_path, monkeypatch) -> None:
    """Beyond CHECK_LIMIT unknowns (the full board for 3 or 4 players; here the limit
    is lowered below tiny10's 120) verify never builds the race system: the series
    residues at fresh primes stand in for the modular solves."""
    import ladders.cluster.runs as runs
    store = tmp_path / "run"
    problem = Problem.build(EXAMPLES["tiny10-3"].board, 3)
    out = solve(problem, "series", checkpoint=str(store), seed=1)
    assert runs.status(str(store))["size"] == "polynomials of degree 8 and 21"  # no system
    small = verify_stored(str(store), primes=1)["report"]
    assert small["passed"] and len(small["residues"]["primes"]) == (
        2 if small["residues"]["method"] == "blocks" else 1)
    monkeypatch.setattr(runs, "CHECK_LIMIT", problem.unknowns - 1)
    report = verify_stored(str(store), primes=2, seed=4)["report"]
    assert "residues" not in report and report["certificate"]["check"] == "confirmation"
    assert report["passed"] and report["matches_complete_json"]
    assert [x["agree"] for x in report["certificate"]["primes"]] == [True, True]
    assert verify_stored(str(store), primes=2, seed=4)["seats"] == list(out.seats)
