"""The Dask executor on real clusters: LocalCluster, and `dask scheduler` / `dask worker`
processes on 127.0.0.1. Every answer is compared with the serial executor (==)."""

from __future__ import annotations

from ladders.cluster.runs import open_store

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
from distributed import Client, LocalCluster, wait

from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.store import RunStore
from ladders.cluster.errors import ClusterError
from ladders.cluster.engines.elimination import WORKER_MODULES
from ladders.cluster.connect import ClusterSpec, check_workers
from ladders.cluster.loops import WorkerWatch
from ladders.cluster.runs import on_recorded_cluster, resume, solve
from ladders.solver.problem import Problem
from examples import EXAMPLES, board_file, truncated

from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.engines.elimination_plan import make_plan
from ladders.solver.games.race import seats_from_values


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc, Client(lc) as client:
        yield lc, client


def reference(problem: Problem, block_size: int | None = None):
    values = eliminate_target(problem.system, make_plan(problem.system, block_size))
    return seats_from_values(problem.system, problem.players, values)


@pytest.mark.parametrize("ex", [e for e in EXAMPLES.values() if e.name in ("tiny10-3", "hasbro20-2", "d3-4")],
                         ids=lambda e: e.name)
def test_dask_equals_serial(cluster, tmp_path, ex) -> None:
    lc, _ = cluster
    problem = Problem.build(ex.board, ex.players)
    out = solve(problem, "elimination", checkpoint=str(tmp_path / "run"), spec=ClusterSpec(scheduler=lc.scheduler_address),
                executor="dask", block_size=16)
    assert list(out.seats) == reference(problem, 16)
    assert out.verified["passed"]
    assert RunStore.open(tmp_path / "run").completed() is not None


def test_default_local_cluster_and_resume_after_stop(tmp_path) -> None:
    problem = Problem.build(truncated("hasbro", 24), 2)
    path = str(tmp_path / "run")

    def stop_after_a_task() -> bool:
        # a count of polls raced the workers' start on a slow machine
        return os.path.isdir(path) and bool(open_store(path).current().state.done)

    first = solve(problem, "elimination", checkpoint=path, spec=ClusterSpec(workers=2), executor="dask",
                  block_size=40, should_stop=stop_after_a_task)
    assert first.interrupted and first.seats == ()
    done = len(open_store(path).current().state.done)
    assert 0 < done < first.tasks_total
    second = resume(path, spec=ClusterSpec(workers=2))
    assert not second.interrupted
    assert second.tasks_run == first.tasks_total - done  # nothing committed is redone
    assert list(second.seats) == reference(problem, 40)


def test_workers_are_checked_to_import_what_their_tasks_run(cluster, tmp_path) -> None:
    _, client = cluster
    assert check_workers(client, str(tmp_path), WORKER_MODULES) == 2
    with pytest.raises(ClusterError, match="cannot import ladders_no_such_module .*install ladders"):
        check_workers(client, str(tmp_path), ("ladders_no_such_module",))


@pytest.mark.slow  # 10 s
def test_a_worker_killed_mid_task_does_not_break_the_run(cluster, tmp_path, capfd) -> None:
    # killed at the first commit (a kill after 2 s of sleep came after the run's end)
    lc, client = cluster
    problem = Problem.build(truncated("hasbro", 34), 2)
    pids = list(client.run(os.getpid).values())
    killed = []

    def kill_a_worker(*args) -> None:
        if not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(args)
    out = solve(problem, "elimination", checkpoint=str(tmp_path / "run"),
                spec=ClusterSpec(scheduler=lc.scheduler_address), executor="dask",
                block_size=20, progress=kill_a_worker)
    assert list(out.seats) == reference(problem, 20)
    done, total, _ = killed[0]
    assert 0 < done < total
    client.wait_for_workers(2, timeout=60)
    # said on stderr, not only in the scheduler's log (1 or 2 workers now: the nanny
    # may have started its replacement already)
    err = capfd.readouterr().err
    assert "left the cluster (" in err and "now); its tasks run again on the others" in err


def test_a_resume_without_a_cluster_takes_the_recorded_one(tmp_path) -> None:
    from ladders.cluster.engines import SolveRequest
    problem = Problem.build(EXAMPLES["tiny10-2"].board, 2)
    solve(problem, "elimination", checkpoint=str(tmp_path / "run"), executor="serial")
    store = RunStore.open(tmp_path / "run")
    store.run["cluster"] = {"scheduler_file": "/shared/s.json", "workers": 4}
    bare = SolveRequest()
    assert on_recorded_cluster(store, bare).spec == ClusterSpec(scheduler_file="/shared/s.json",
                                                                workers=4)
    asked = SolveRequest(spec=ClusterSpec(workers=2))      # options given win
    assert on_recorded_cluster(store, asked) is asked
    for bad in ("tcp://10.0.0.5:8786", {"workers": 0}, {"workers": True}, {"host": "x"}):
        store.run["cluster"] = bad
        with pytest.raises(StoreError, match=r"run.json: its \"cluster\" .* --scheduler-file"):
            on_recorded_cluster(store, bare)


def test_second_solve_on_a_locked_store_is_refused(tmp_path) -> None:
    problem = Problem.build(EXAMPLES["tiny10-2"].board, 2)
    path = tmp_path / "run"
    out = solve(problem, "elimination", checkpoint=str(path), executor="serial")
    assert out.seats[0] == EXAMPLES["tiny10-2"].seat1
    with pytest.raises(StoreError, match="already holds a run"):
        solve(problem, "elimination", checkpoint=str(path), executor="serial")
    assert resume(str(path)).seats == out.seats  # finished: its stored answer
    store = RunStore.open(path)
    store.acquire_lock()
    try:
        with pytest.raises(StoreError, match="locked"):
            RunStore.open(path).acquire_lock()
    finally:
        store.release_lock()


def test_resume_refuses_a_store_of_another_problem(tmp_path) -> None:
    problem = Problem.build(EXAMPLES["tiny10-2"].board, 2)
    path = tmp_path / "run"
    solve(problem, "elimination", checkpoint=str(path), executor="serial")
    run = json.loads((path / "run.json").read_text())
    run["problem"]["players"] = 3
    (path / "run.json").write_text(json.dumps(run))
    (path / "COMPLETE.json").unlink()
    with pytest.raises(StoreError, match="no longer builds the system"):
        resume(str(path))


def test_unreachable_scheduler_fails_fast(tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    problem = Problem.build(EXAMPLES["tiny10-2"].board, 2)
    with pytest.raises(ClusterError, match="cannot reach the Dask scheduler"):  # not a wait
        solve(problem, "elimination", checkpoint=str(tmp_path / "run"),
              spec=ClusterSpec(scheduler=f"tcp://127.0.0.1:{port}", connect_timeout=3), executor="dask")
    assert not (tmp_path / "run" / "LOCK").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_process(*args: str) -> subprocess.Popen:
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or "dask"
    return subprocess.Popen([dask, *args, "--no-dashboard"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def _start_remote(procs: list[subprocess.Popen], workers: int) -> str:
    """A `dask scheduler` process on 127.0.0.1 and ``workers`` `dask worker` processes."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs.append(_dask_process("scheduler", "--host", "127.0.0.1", "--port", str(port)))
    time.sleep(1.5)
    for _ in range(workers):
        procs.append(_dask_process("worker", address, "--nthreads", "1"))
    with Client(address, timeout=30) as client:
        client.wait_for_workers(workers, timeout=60)
    return address


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs[::-1]:
        p.terminate()
    for p in procs:
        p.wait(timeout=30)


@pytest.mark.slow  # the default suite has remote processes in tests/checkpoints/test_backend.py
def test_remote_scheduler_and_workers_processes(tmp_path) -> None:
    procs: list[subprocess.Popen] = []
    try:
        address = _start_remote(procs, 2)
        problem = Problem.build(EXAMPLES["tiny10-3"].board, 3)
        out = solve(problem, "elimination", checkpoint=str(tmp_path / "run"), spec=ClusterSpec(scheduler=address),
                    executor="dask", block_size=32)
        assert list(out.seats) == reference(problem, 32)
    finally:
        _stop(procs)


@pytest.mark.slow  # 25 s; the default suite keeps the error (the test after this one)
def test_a_cluster_whose_workers_all_died_is_an_error_then_resumes(tmp_path) -> None:
    # the scheduler keeps the tasks of dead workers for whoever joins next: without a
    # limit the driver would wait for ever (as a cluster test once did in CI)
    procs: list[subprocess.Popen] = []
    try:
        address = _start_remote(procs, 1)
        problem = Problem.build(truncated("hasbro", 30), 2)
        path = str(tmp_path / "run")
        spec = ClusterSpec(scheduler=address, no_worker_limit=2.0)

        def kill_the_worker(*args) -> None:
            if procs[1].poll() is None:
                procs[1].kill()
                procs[1].wait()
        # an error, not a wait for ever (which the suite's per-test limit would stop)
        with pytest.raises(ClusterError, match="no worker for"):
            solve(problem, "elimination", checkpoint=path, spec=spec, executor="dask",
                  block_size=20, progress=kill_the_worker)
        procs.append(_dask_process("worker", address, "--nthreads", "1"))
        out = resume(path, spec=spec, executor="dask")
        assert list(out.seats) == reference(problem, 20)
        assert 0 < out.tasks_run < out.tasks_total
    finally:
        _stop(procs)


def test_a_result_lost_with_the_last_worker_is_an_error_not_a_wait() -> None:
    # the race the full suite once hung on: a task finished, its worker died before the
    # driver fetched the result, and the fetch waited for a recomputation with no worker
    procs: list[subprocess.Popen] = []
    try:
        address = _start_remote(procs, 1)
        with Client(address, timeout=30) as client:
            future = client.submit(sum, [1, 2, 3], pure=False)
            wait(future, timeout=60)
            procs[1].kill()
            procs[1].wait()
            with pytest.raises(ClusterError, match="no worker for"):  # not a wait for ever
                WorkerWatch(client, 2.0).result(future)
    finally:
        _stop(procs)


def test_the_resume_hint_names_the_cluster_the_run_was_on(tmp_path) -> None:
    """Interrupted, a run says how to resume it on the same cluster, and run.json
    records how it was connected (never a password)."""
    store = tmp_path / "run"
    cmd = [sys.executable, "-m", "ladders.cluster.cli", "solve", board_file(tmp_path, 30), "-k", "3",
           "--checkpoint", str(store), "--workers", "1", "--batch-primes", "1", "--seed", "3"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    while True:
        assert proc.poll() is None, "the run ended before it was interrupted"
        try:
            if len(open_store(store).current().state.batches) >= 2:
                break
        except (StoreError, OSError):
            pass
        time.sleep(0.1)
    # as 'timeout -s INT' sends it: to the process, then to its whole group (the second
    # copy, taken for a second Ctrl-C, ended the driver with the LOCK held)
    proc.send_signal(signal.SIGINT)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 75 and not (store / "LOCK").exists(), err[-1000:]
    assert f"Resume with: ladders resume {store} --workers 1" in err, err[-1000:]
    assert json.loads((store / "run.json").read_text())["cluster"] == {"workers": 1}
    # a bare resume runs on the recorded cluster, says so, and its own hint names it
    proc = subprocess.Popen([sys.executable, "-m", "ladders.cluster.cli", "resume", str(store)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stderr.readline().startswith(f"resuming hasbro30, 3 players (series engine) from {store}")
    said = proc.stderr.readline()
    assert said.startswith("resuming on the cluster the run was started on (a local cluster "
                           "of 1 worker process, from its run.json)"), said
    before = len(open_store(store).current().state.batches)
    while proc.poll() is None and len(open_store(store).current().state.batches) == before:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 75), err[-1000:]
    if proc.returncode == 75:
        assert f"Resume with: ladders resume {store} --workers 1" in err, err[-1000:]
    spec = ClusterSpec(scheduler="tls://ann:secret@10.0.0.5:8786")
    assert spec.record() == {"scheduler": "tls://10.0.0.5:8786"}
    assert spec.flags() == " --scheduler tls://10.0.0.5:8786"
    assert ClusterSpec(scheduler_file="/shared/my sched.json").flags() == \
        " --scheduler-file '/shared/my sched.json'"


def test_a_local_clusters_workers_start_with_the_preloaded_kernels() -> None:
    # a fresh interpreter: the fork server is one per process, started by the first
    # local cluster with the preload of that moment
    script = (
        "import json, sys\n"
        "from ladders.cluster.connect import ClusterSpec, connect\n"
        "def seen():\n"
        "    kernels = sys.modules.get('ladders.solver.engines.series.kernels')\n"
        "    return [kernels is not None, 0 if kernels is None else len(kernels._batch.signatures),\n"
        "            'ladders.checkpoints.series' in sys.modules]\n"
        "if __name__ == '__main__':\n"
        "    with connect(ClusterSpec(workers=2), ('ladders.checkpoints.series',\n"
        "                 'ladders.solver.engines.series.warm')) as client:\n"
        "        print(json.dumps(list(client.run(seen).values())))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[True, 1, True]] * 2


def test_bounds_from_a_forked_child_equal_those_made_here() -> None:
    from ladders.cluster.engines import get_engine
    from ladders.cluster.session import Checks
    from ladders.solver.checks.bounds import bounds_within
    from ladders.solver.games.board import preset_board
    problem = Problem.build(preset_board("tiny10"), 3)
    engine = get_engine("series")
    checks = Checks(engine, problem, threads=False, forked=True)
    assert checks._child is not None
    checks.start()
    checks.join(120)
    digits, budget = engine.bounds_digits(problem)
    assert checks.error is None and checks.seconds["bounds"] > 0
    assert checks.bounds == bounds_within(problem.piece, 3, digits, budget, False)
