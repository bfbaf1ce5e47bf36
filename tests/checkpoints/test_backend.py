"""Run stores on object storage, against a real S3 server: moto in server mode on
127.0.0.1 (as s3fs and zarr test themselves), reached through obstore with the usual
AWS environment. The store's protocol must hold where there is no rename and no
exclusive create: manifests created only if absent, a stale CURRENT rolled forward,
the LOCK a lease; solves on real Dask workers that share no folder with the driver;
kill -9 and resume; damaged objects refused with the same clear errors as on disk.
The lease itself (taken over, renewed, lost, a dead or live driver's): ``test_locks.py``."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("obstore")
moto_server = pytest.importorskip("moto.server")

from examples import EXAMPLES  # noqa: E402
from ladders.checkpoints.backend import ObjectBackend, open_backend  # noqa: E402
from ladders.checkpoints.batches import BatchState  # noqa: E402
from ladders.checkpoints.errors import StoreError  # noqa: E402
from ladders.checkpoints.store import RunStore  # noqa: E402
from ladders.cluster.runs import open_store, solve, status, verify_stored  # noqa: E402
from ladders.solver.problem import Problem  # noqa: E402

LADDERS = [sys.executable, "-c", "from ladders.cluster.cli import main; main()"]
BUCKET = "ladders-test"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory):
    """A moto S3 server on 127.0.0.1 with one bucket, and the environment that reaches
    it (set in this process for the tests' own calls, and given to subprocesses)."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    import boto3
    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket=BUCKET)
    yield {**os.environ, **env}
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    server.stop()


def url(name: str) -> str:
    return f"s3://{BUCKET}/{name}-{random.randrange(1 << 32):08x}"


def reference() -> list[str]:
    from ladders.solver.exact import fraction_to_str
    from ladders.solver.engines.series import race_exact
    ex = EXAMPLES["tiny10-3"]
    return [fraction_to_str(s) for s in race_exact(Problem.build(ex.board, 3).piece, 3).seats]


def ladders(env: dict[str, str], *args: str, cwd: str | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*LADDERS, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def test_the_backend_on_s3(s3) -> None:
    backend = open_backend(url("ops"))
    assert isinstance(backend, ObjectBackend) and backend.is_empty()
    backend.create("manifest/000000.json", b"0")
    with pytest.raises(FileExistsError):
        backend.create("manifest/000000.json", b"again")
    backend.replace("manifest/CURRENT", b"0")
    backend.replace("rows/g1/b0-a/zarr.json", b"{}")
    backend.replace("rows/g1/b0-a/rows/c/0", b"x")
    assert sorted(backend.list("rows")) == ["rows/g1/b0-a/rows/c/0", "rows/g1/b0-a/zarr.json"]
    assert backend.entries("rows", 3) == {"rows/g1/b0-a"}
    data, etag = backend.read_versioned("manifest/CURRENT")
    assert data == b"0" and backend.swap("manifest/CURRENT", b"1", etag)
    assert not backend.swap("manifest/CURRENT", b"2", etag)  # the ETag moved on
    assert backend.read("manifest/CURRENT") == b"1" and 0 <= backend.age("manifest/CURRENT") < 60
    backend.delete_prefix("rows")
    assert list(backend.list("rows")) == [] and not backend.exists("rows/g1/b0-a/zarr.json")
    backend.delete("nothing-here")  # deleting what is gone is no error
    with pytest.raises(FileNotFoundError):
        backend.read("nothing-here")


def new_store(where: str) -> RunStore:
    """A series run's store of tiny10 with 3 players, no batch done yet."""
    from ladders.cluster.engines import SolveRequest, get_engine
    ex = EXAMPLES["tiny10-3"]
    return get_engine("series").create_store(where, Problem.build(ex.board, 3),
                                             SolveRequest(seed=1, options={"batch_primes": 1}),
                                             "serial")


def test_two_drivers_committing_the_same_number_one_wins(s3) -> None:
    where = url("race")
    new_store(where)
    first, second = (RunStore.open(where, BatchState) for _ in range(2))
    base = first.current()
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def commit(store: RunStore) -> None:
        barrier.wait()
        try:
            store.commit(base.next(BatchState(), 1.0))
            outcomes.append("committed")
        except StoreError as exc:
            outcomes.append(str(exc))
    threads = [threading.Thread(target=commit, args=(s,)) for s in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes)[0] == "committed" and "another driver" in sorted(outcomes)[1]


def test_a_stale_current_is_rolled_forward(s3) -> None:
    where = url("stale")
    store = new_store(where)
    for k in range(3):
        store.commit(store.current().next(BatchState(), 1.0))
    store.flush()
    store.backend.replace("manifest/CURRENT", b"1")  # as if the driver died before moving it
    reopened = RunStore.open(where, BatchState)
    assert reopened.current().seq == 1 and reopened.newest().seq == 3  # status sees 3
    reopened.acquire_lock()
    try:
        assert reopened.current().seq == 3
    finally:
        reopened.release_lock()


def test_unknown_schemes_and_bucketless_urls_are_refused(s3, tmp_path: Path) -> None:
    for bad, words in (("foo://x/run", "unknown storage scheme 'foo'"),
                       ("s3://", "name the bucket")):
        proc = ladders(s3, "solve", "tiny10", "-k", "3", "--checkpoint", bad, cwd=str(tmp_path))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and words in lines[0], proc.stderr
        assert list(tmp_path.iterdir()) == []  # never taken as a local path


def test_a_solve_in_memory_store_and_its_status(s3) -> None:
    ex = EXAMPLES["tiny10-3"]
    where = f"memory://run-{random.randrange(1 << 32):08x}"
    out = solve(Problem.build(ex.board, 3), "series", checkpoint=where, executor="serial",
                batch_primes=2, seed=3)
    from ladders.solver.exact import fraction_to_str
    assert [fraction_to_str(s) for s in out.seats] == reference() and out.store == where
    assert status(where)["state"] == "complete"
    assert verify_stored(where, primes=1)["report"]["passed"]


def _dask(env: dict[str, str], cwd: str, *args: str) -> subprocess.Popen:
    import shutil
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or "dask"
    return subprocess.Popen([dask, *args, "--no-dashboard"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd)


@pytest.mark.slow  # 31 s; test_a_local_cluster_solve_with_its_store_on_s3 stays in the default suite
def test_remote_workers_with_no_shared_folder_kill_9_resume_verify(s3, tmp_path: Path) -> None:
    """A scheduler and two workers in a folder of their own (no path to the driver's
    files); a 3-player series run on them with its store on S3, killed with SIGKILL
    midway, then status, resume and verify on the same URL: the reference digits."""
    import socket
    from distributed import Client
    (tmp_path / "workers").mkdir()
    (tmp_path / "driver").mkdir()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    procs = [_dask(s3, str(tmp_path / "workers"), "scheduler", "--host", "127.0.0.1",
                   "--port", str(port))]
    try:
        time.sleep(1.5)
        procs += [_dask(s3, str(tmp_path / "workers"), "worker", address, "--nthreads", "1")
                  for _ in range(2)]
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        where = url("remote")
        args = ["solve", "tiny10", "-k", "3", "--checkpoint", where, "--scheduler", address,
                "--batch-primes", "1", "--seed", "5", "--json"]
        # a short lease (renewed every 2 s), so that the killed driver's runs out soon
        proc = subprocess.Popen([*LADDERS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**s3, "LADDERS_LEASE_SECONDS": "8"},
                                cwd=str(tmp_path / "driver"), start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            time.sleep(0.1)
            try:
                if len(open_store(where).current().state.batches) >= 2:
                    break
            except (StoreError, OSError):
                continue
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        st = json.loads(ladders(s3, "status", where, "--json", cwd=str(tmp_path)).stdout)
        assert st["state"].startswith(("interrupted", "running (or stopped"))
        done = st["batches_done"]
        assert done >= 2
        # the dead driver's lease runs out before another may take the store over
        left = open_store(where).lock.lease_left()
        if left is not None and left > 0:
            time.sleep(left + 1)
        resumed = ladders(s3, "resume", where, "--scheduler", address, "--json",
                          cwd=str(tmp_path / "workers"), timeout=600)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        data = json.loads(resumed.stdout)
        assert [s["exact"] for s in data["seats"]] == reference()
        assert data["tasks"]["run"] == data["tasks"]["total"] - done  # nothing redone
        checked = ladders(s3, "verify", where, "--json", cwd=str(tmp_path))
        assert checked.returncode == 0 and json.loads(checked.stdout)["verified"]["passed"]
        again = ladders(s3, "solve", "tiny10", "-k", "3", "--checkpoint", where)
        assert again.returncode == 2 and "already holds a run" in again.stderr
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def test_damaged_objects_get_the_same_clear_errors(s3) -> None:
    ex = EXAMPLES["tiny10-3"]
    where = url("damaged")
    solve(Problem.build(ex.board, 3), "series", checkpoint=where, executor="serial",
          batch_primes=2, seed=3)
    backend = open_backend(where)
    manifest = open_store(where).current()
    ref = next(iter(manifest.state.batches.values()))
    chunk = next(k for k in backend.list(ref.path) if not k.endswith("zarr.json"))
    backend.replace(chunk, backend.read(chunk)[:-3])  # a cut segment
    backend.delete("COMPLETE.json")
    # a resume reads every committed batch back: the damaged one is dropped, said,
    # and computed again, as in a folder
    cut = ladders(s3, "resume", where)
    assert cut.returncode == 0 and "Traceback" not in cut.stderr
    assert "1 damaged batch dropped, to be computed again" in cut.stderr
    assert f"segment {ref.path}" in cut.stderr
    # a damaged newest manifest and a missing CURRENT: the run goes on from the newest
    # intact manifest, and says so (tests/checkpoints/test_store_recovery.py has the whole table)
    manifest = open_store(where).current()
    backend.delete("COMPLETE.json")
    key = f"manifest/{manifest.seq:06d}.json"
    backend.replace(key, b"{garbage")
    bad = ladders(s3, "status", where)
    assert bad.returncode == 0 and f"{key} is unreadable" in bad.stdout
    backend.delete("manifest/CURRENT")
    gone = ladders(s3, "resume", where, "--json")
    assert gone.returncode == 0, gone.stderr
    assert [s["exact"] for s in json.loads(gone.stdout)["seats"]] == reference()
    assert "manifest/CURRENT is missing" in gone.stderr and f"{key} is unreadable" in gone.stderr
    assert "Traceback" not in bad.stderr + gone.stderr


def test_a_local_cluster_solve_with_its_store_on_s3(s3, tmp_path: Path) -> None:
    """The default local cluster, started in a folder of its own, with the store on S3."""
    where = url("local")
    proc = ladders(s3, "solve", "tiny10", "-k", "3", "--checkpoint", where, "--workers", "2",
                   "--batch-primes", "2", "--json", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert [s["exact"] for s in data["seats"]] == reference() and data["executor"] == "dask"
    assert data["store"]["path"] == where and list(tmp_path.iterdir()) == []


def test_backends_declare_what_the_store_asks_of_them() -> None:
    # issue 39: the store chose a lease or a pid lock by hasattr(backend, "swap"); the
    # backends declare it now, and a backend that says it leases has what a lease needs
    from ladders.checkpoints.backend import Backend, LocalBackend, ObjectBackend
    assert {"leases", "round_trips"} <= set(Backend.__annotations__)
    assert (LocalBackend.leases, LocalBackend.round_trips) == (False, False)
    assert (ObjectBackend.leases, ObjectBackend.round_trips) == (True, True)
    for backend in (LocalBackend, ObjectBackend):
        assert backend.leases == (hasattr(backend, "swap") and hasattr(backend, "read_versioned"))
