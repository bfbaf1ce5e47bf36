"""Reaching a run store on object storage (issue 40): URLs that name no one place, the
lease's length, a missing bucket, refused credentials, missing settings, a store that
does not answer, and a full disk under a local store. Every refusal is one line, before
any request where it can be; nothing leaves 127.0.0.1: the commands run with a
recording proxy in ``HTTP_PROXY``/``HTTPS_PROXY`` (obstore sends every request but
those to 127.0.0.1 through it), and each test asserts that it saw no request. The S3
server is moto's, on 127.0.0.1 (see tests/checkpoints/test_backend.py)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("obstore")
moto_server = pytest.importorskip("moto.server")

from test_backend import LADDERS, ladders, new_store, reference, s3, url  # noqa: E402,F401

from ladders.checkpoints.backend import ObjectBackend, lease_seconds  # noqa: E402
from ladders.checkpoints.errors import StoreError  # noqa: E402
from ladders.cluster.cli import cli  # noqa: E402


class Recorder:
    """A proxy on 127.0.0.1 that forwards nothing: it records the start of every request
    sent to it (obstore sends there every request whose host is not 127.0.0.1)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.seen: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            try:
                self.seen.append(conn.recv(200))
            except OSError:
                self.seen.append(b"?")
            conn.close()

    def env(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
        return {**{n: proxy for n in names}, **{n.lower(): proxy for n in names},
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                "AWS_EC2_METADATA_DISABLED": "true"}

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def recorder():
    rec = Recorder()
    yield rec
    rec.close()


def bare(env: dict[str, str], recorder: Recorder, home: Path) -> dict[str, str]:
    """``env`` without any cloud's settings, its home empty (no credential files), and
    requests beyond 127.0.0.1 sent to ``recorder``."""
    kept = {k: v for k, v in env.items() if not k.startswith(("AWS_", "GOOGLE_", "AZURE_"))}
    return {**kept, **recorder.env(), "HOME": str(home)}


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("where, words", [
    ("s3://ladders-test/hx#frag", "'#' cannot be part"),
    ("s3://ladders-test/hx?versionId=1", "'?' cannot be part"),
    ("s3://ladders-test/a//b", "an empty, '.' or '..' part"),
    ("s3://ladders-test/../up", "an empty, '.' or '..' part"),
    ("s3://ladders-test/./x", "an empty, '.' or '..' part"),
    ("s3:/ladders-test/x", "a URL needs two slashes (s3://...)"),
    ("s3:ladders-test/x", "a URL needs two slashes (s3://...)"),
    ("memory://run", "a memory:// store lives only as long as one Python process"),
])
def test_urls_that_name_no_one_place_are_refused(where: str, words: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # '#' and '?' were dropped by obstore (two URLs, one store); 'a//b' got a 30-line
    # dump; '../up' became the prefix 'up'; 's3:/x' a local folder; memory:// a store
    # that ended with the command
    monkeypatch.chdir(tmp_path)
    for args in (["solve", "tiny10", "-k", "3", "--checkpoint", where], ["status", where],
                 ["resume", where], ["solve", "tiny10", "--output", f"{where}/h.json"]):
        result = CliRunner().invoke(cli, args)
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, (args, result.stderr)
        assert lines[0].startswith("ladders: error: ") and words in lines[0], (args, lines)
    assert list(tmp_path.iterdir()) == []  # no folder ./s3:


@pytest.mark.parametrize("value", ["inf", "0", "-5", "nan", "abc", "0.001"])
def test_a_lease_length_that_is_no_length_is_refused(value: str, tmp_path: Path) -> None:
    # inf: a traceback; 0, -5, nan: the lease renewed without pause; abc: an error
    # that did not name the variable
    store = tmp_path / "run"
    new_store(str(store))
    proc = subprocess.run([*LADDERS, "status", str(store)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LADDERS_LEASE_SECONDS": value})
    line = one_line(proc)
    assert proc.returncode == 2 and f"LADDERS_LEASE_SECONDS='{value}'" in line
    assert "from 1 to 86400" in line


def test_lease_seconds_reads_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LADDERS_LEASE_SECONDS", raising=False)
    assert lease_seconds() == 60.0
    monkeypatch.setenv("LADDERS_LEASE_SECONDS", " 2.5 ")
    assert lease_seconds() == 2.5
    monkeypatch.setenv("LADDERS_LEASE_SECONDS", "1e9")
    with pytest.raises(StoreError, match="LADDERS_LEASE_SECONDS='1e9'"):
        lease_seconds()


def test_a_missing_bucket_is_named(s3, recorder: Recorder, tmp_path: Path) -> None:
    # exit 2 with 26-30 lines of obstore's Debug dump; status said "no run store here"
    env = {**s3, **recorder.env()}
    for args in (["solve", "tiny10", "-k", "3", "--checkpoint", "s3://nobucket/x"],
                 ["status", "s3://nobucket/x"], ["resume", "s3://nobucket/x"],
                 ["solve", "tiny10", "--output", "s3://nobucket/h.json"]):
        proc = ladders(env, *args, cwd=str(tmp_path))
        line = one_line(proc)
        assert proc.returncode == 2 and "no such bucket 'nobucket'" in line, (args, line)
        assert "NoSuchBucket" in line and "AWS_ENDPOINT_URL" in line
    assert recorder.seen == []


def test_refused_credentials_are_one_line(s3, recorder: Recorder, tmp_path: Path) -> None:
    # a 403: status, status --json, verify and resume ended in "internal error:
    # PermissionDeniedError" and 25 lines
    from moto import settings
    where = url("denied")
    new_store(where)
    env = {**s3, **recorder.env(), "AWS_ACCESS_KEY_ID": "wrong", "AWS_SECRET_ACCESS_KEY": "wrong"}
    before = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0  # moto checks credentials from now on
    try:
        for args in (["status", where], ["status", where, "--json"], ["verify", where],
                     ["resume", where], ["solve", "tiny10", "-k", "3", "--checkpoint", url("d2")]):
            proc = ladders(env, *args, cwd=str(tmp_path))
            line = one_line(proc)
            assert proc.returncode == 2 and "refused these credentials" in line, (args, line)
            assert "403" in line and "AWS_ACCESS_KEY_ID" in line and "internal error" not in line
            assert "wrong" not in line  # no secret in a message
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = before
    assert recorder.seen == []


@pytest.mark.parametrize("where, words", [
    ("s3://ladders-test/run", "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
    ("gs://bucket/run", "set GOOGLE_SERVICE_ACCOUNT or GOOGLE_APPLICATION_CREDENTIALS"),
    ("az://container/run", "set AZURE_STORAGE_ACCOUNT_NAME"),
])
def test_missing_settings_are_refused_before_any_request(where: str, words: str, recorder: Recorder,
                                                         tmp_path: Path) -> None:
    # az:// printed 7 lines of Debug; gs:// and s3:// asked the cloud metadata address
    # (169.254.169.254), a host nobody named, and gs:// ended in an internal error
    env = bare(dict(os.environ), recorder, tmp_path)
    for args in (["solve", "tiny10", "-k", "3", "--checkpoint", where], ["status", where]):
        proc = subprocess.run([*LADDERS, *args], capture_output=True, text=True, env=env,
                              cwd=str(tmp_path), timeout=120)
        line = one_line(proc)
        assert proc.returncode == 2 and words in line, (args, line)
    assert recorder.seen == []
    assert list(tmp_path.iterdir()) == []


def test_account_and_credentials_of_azure(recorder: Recorder, tmp_path: Path) -> None:
    env = {**bare(dict(os.environ), recorder, tmp_path), "AZURE_STORAGE_ACCOUNT_NAME": "acct"}
    proc = subprocess.run([*LADDERS, "status", "az://container/run"], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=120)
    line = one_line(proc)
    assert proc.returncode == 2 and "AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN" in line
    assert recorder.seen == []


class Forwarder:
    """A TCP port on 127.0.0.1 in front of the S3 server that the test takes down
    (connections refused), stalls (accepted, never answered) and brings back."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit("//", 1)[1].split(":")
        self.target = (host, int(port))
        self.mode = "up"
        self.held: list[socket.socket] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self._start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _start(self) -> None:
        threading.Thread(target=self._serve, args=(self.sock,), daemon=True).start()

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if self.mode == "stall":
                self.held.append(conn)
                continue
            upstream = socket.create_connection(self.target)
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def down(self) -> None:
        self.mode = "down"
        self.sock.close()

    def up(self) -> None:
        self.mode = "up"
        self.sock = socket.create_server(("127.0.0.1", self.port))
        self._start()

    def stall(self) -> None:
        self.mode = "stall"

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def forwarder(s3):
    fwd = Forwarder(s3["AWS_ENDPOINT_URL"])
    yield fwd
    fwd.close()


def test_a_store_down_for_seconds_is_waited_for(s3, forwarder: Forwarder,
                                                monkeypatch: pytest.MonkeyPatch, capfd) -> None:
    # down for a few seconds: "internal error: GenericError ... after 10 retries"
    monkeypatch.setenv("AWS_ENDPOINT_URL", forwarder.endpoint)
    monkeypatch.setenv("LADDERS_LEASE_SECONDS", "60")
    backend = ObjectBackend(url("blip"))
    backend.create("run.json", b"{}")
    forwarder.down()
    timer = threading.Timer(8.0, forwarder.up)  # longer than obstore's own 10 retries
    timer.start()
    try:
        backend.create("manifest/000000.json", b"0")
        assert backend.read("manifest/000000.json") == b"0"
        with pytest.raises(FileExistsError):  # a retried create still refuses another's
            backend.create("run.json", b"other")
    finally:
        timer.join()
    err = capfd.readouterr().err
    assert "the object store does not answer (Connection refused); trying again for up to 60 s" in err
    assert "the object store answers again" in err


def test_a_store_that_stays_down_stops_the_command_with_the_resume_line(
        s3, forwarder: Forwarder, recorder: Recorder, tmp_path: Path) -> None:
    env = {**s3, **recorder.env(), "AWS_ENDPOINT_URL": forwarder.endpoint,
           "LADDERS_LEASE_SECONDS": "3"}
    where = url("down")
    new_store(where)
    for mode in ("down", "stall"):  # refused; accepted and never answered (was waited 75 s)
        getattr(forwarder, mode)()
        proc = ladders(env, "resume", where, cwd=str(tmp_path), timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 75 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        assert "the object store does not answer" in lines[0] and len(lines) == 2
        assert lines[1].startswith(f"ladders: error: {where}: the object store has not answered for")
        assert f"(LADDERS_LEASE_SECONDS=3): stopped" in lines[1]
        assert lines[1].endswith(f"continue with 'ladders resume {where}'")
        assert ("timed out" if mode == "stall" else "Connection refused") in lines[1]
        forwarder.up() if mode == "down" else None
    assert recorder.seen == []


def test_a_worker_without_credentials_asks_no_metadata_address(s3, recorder: Recorder,
                                                               tmp_path: Path) -> None:
    # the worker asked the EC2 metadata address, and was named by its address only
    from distributed import Client
    from test_backend import _dask
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    procs = [_dask(s3, str(tmp_path), "scheduler", "--host", "127.0.0.1", "--port", str(port))]
    try:
        procs.append(_dask(bare(s3, recorder, tmp_path), str(tmp_path), "worker", address,
                           "--nthreads", "1", "--name", "bare-worker"))
        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=60)
        proc = ladders({**s3, **recorder.env()}, "solve", "tiny10", "-k", "3", "--checkpoint",
                       url("bare"), "--scheduler", address)
        line = proc.stderr.strip().splitlines()[-1]
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert line.startswith(f"ladders: error: worker bare-worker (tcp://127.0.0.1:"), line
        assert "no credentials for Amazon S3" in line and "AWS_ACCESS_KEY_ID" in line
        assert "testing" not in proc.stderr  # no secret in a message
        assert recorder.seen == []
    finally:
        for p in procs[::-1]:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


def _tmpfs() -> list[str] | None:
    """A command prefix that mounts a 256 KiB tmpfs on its first argument (a private
    mount namespace), or None where this machine cannot (not root, no unshare)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    setup = 'mount -t tmpfs -o size=256k tmpfs "$1" && shift && exec "$@"'
    probe = subprocess.run(["unshare", "-m", "sh", "-c", setup, "sh", "/mnt", "true"],
                           capture_output=True)
    return ["unshare", "-m", "sh", "-c", setup, "sh"] if probe.returncode == 0 else None


def test_a_full_disk_under_a_store_names_the_file(tmp_path: Path) -> None:
    # "[Errno 28] No space left on device" and no path (outputs named theirs)
    prefix = _tmpfs()
    if prefix is None:
        pytest.skip("needs root and unshare to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    store = disk / "run"
    proc = subprocess.run([*prefix, str(disk), *LADDERS, "solve", "tiny10", "-k", "3", "--executor",
                           "serial", "--batch-primes", "1", "--checkpoint", str(store)],
                          capture_output=True, text=True, timeout=300)
    line = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "No space left on device" in line and f"{store}/" in line, line
