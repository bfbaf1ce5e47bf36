"""A state machine (hypothesis ``RuleBasedStateMachine``, as Icechunk tests its commits)
drives run stores through the real CLI: solves killed with SIGKILL at random moments,
single bytes flipped in random store files, resumes and verifies, in any order. The
invariant: no command ever reports a wrong answer. Each either prints the exact
fraction (compared with ``==`` against a reference computed once) or refuses in one
line, without a traceback, saying what to do."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

LADDERS = [sys.executable, "-c", "from ladders.cluster.cli import main; main()"]

#: What each engine solves here: long enough (seconds) that a kill lands mid-run.
RUNS = {
    "crt": ["tiny10", "-k", "3", "--engine", "crt", "--executor", "serial", "--batch-primes", "1",
            "--seed", "7"],
    "elimination": ["tiny10", "-k", "3", "--engine", "elimination", "--executor", "serial",
                    "--block-size", "4"],  # 430 tasks, ~14 s (block size 1: 4,023 tasks, 2 min)
    "modular": ["tiny10", "-k", "3", "--engine", "modular", "--save-every", "0", "--seed", "7"],
}
#: Words of a refusal that tell the user what to do next.
WAYS_OUT = ("resume", "delete", "start a new run", "new run", "remove", "status", "--", "use ",
            "give ", "complete already", "failed", "try again")  # a garbled fresh LOCK: 10 s


@cache
def reference() -> tuple[str, ...]:
    """Every seat of tiny10 with 3 players, exact, from the default engine, no store."""
    proc = subprocess.run([*LADDERS, "solve", "tiny10", "-k", "3", "--json"], capture_output=True,
                          text=True, timeout=120, check=True)
    return tuple(s["exact"] for s in json.loads(proc.stdout)["seats"])


def answered_or_refused(proc: subprocess.CompletedProcess, exact: bool = True) -> None:
    """The invariant of one command: the reference fraction, or a one-line refusal."""
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    if proc.returncode == 0:
        seats = json.loads(proc.stdout)["seats"]
        if exact:
            assert tuple(s["exact"] for s in seats) == reference()
        else:  # verify prints decimals: they must be the reference's
            from ladders.solver.exact import fraction_to_decimal, str_to_fraction
            assert [s["decimal"] for s in seats] == [fraction_to_decimal(str_to_fraction(x), 50)
                                                     for x in reference()]
        return
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode in (1, 2, 75), (proc.returncode, proc.stderr[-3000:])
    last = lines[-1]
    assert last.startswith("ladders:") or "ladders resume" in last, proc.stderr[-3000:]
    assert any(w in last for w in WAYS_OUT), last


class StoreMachine(RuleBasedStateMachine):
    """One run store at a time; ``solved``: the solve rule ran (whether its kill came
    before the store existed or not). Every draw and precondition depends on the
    machine's own steps only, never on what is on disk, which varies with timing:
    hypothesis replays a failing case by its draws (it reported FlakyStrategyDefinition
    when a precondition read the disk and a file was sampled from a listing)."""

    @initialize(engine=st.sampled_from(sorted(RUNS)))
    def setup(self, engine: str) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.store = Path(self.tmp.name) / "run"
        self.engine = engine
        self.solved = False

    def teardown(self) -> None:
        self.tmp.cleanup()

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*LADDERS, *args, "--json"], capture_output=True, text=True,
                              timeout=timeout)

    def popen(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    @precondition(lambda self: not self.solved)
    @rule(delay=st.floats(0.5, 4.0), kill=st.booleans())
    def solve(self, delay: float, kill: bool) -> None:
        """Start a solve with a store; kill -9 it after ``delay`` seconds, or let it end."""
        proc = self.popen([*LADDERS, "solve", *RUNS[self.engine], "--checkpoint",
                           str(self.store), "--json"])
        try:
            if kill:
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=120)
        finally:  # a time-out must not leave it writing into the store teardown removes
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
        self.solved = True
        if proc.returncode >= 0:  # it ended by itself
            answered_or_refused(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))

    @precondition(lambda self: self.solved)
    @rule(which=st.integers(0, 2**20), at=st.integers(0, 2**30),
          mask=st.sampled_from([1, 0x20, 0xFF]))
    def damage(self, which: int, at: int, mask: int) -> None:
        """Flip one byte of one file of the store (any file: data, manifest, lock...);
        ``which`` and ``at`` pick the file and the byte modulo what is there."""
        files = sorted(p for p in self.store.rglob("*") if p.is_file() and p.stat().st_size)
        if not files:
            return
        path = files[which % len(files)]
        raw = bytearray(path.read_bytes())
        raw[at % len(raw)] ^= mask
        path.write_bytes(bytes(raw))

    @precondition(lambda self: self.solved)
    @rule()
    def resume(self) -> None:
        answered_or_refused(self.run("resume", str(self.store)))

    @precondition(lambda self: self.solved)
    @rule()
    def verify(self) -> None:
        answered_or_refused(self.run("verify", str(self.store), "--no-cross"), exact=False)

    @precondition(lambda self: self.solved)
    @rule()
    def status(self) -> None:
        proc = self.run("status", str(self.store))
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 2), proc.stderr


class S3StoreMachine(StoreMachine):
    """The same machine with the store on S3 (a moto server on 127.0.0.1, started once
    for the module): drivers killed with SIGKILL leave a lease that runs out in
    ``LADDERS_LEASE_SECONDS`` (3 s here); damage flips a byte of one object."""

    @initialize(engine=st.sampled_from(sorted(RUNS)))
    def setup(self, engine: str) -> None:
        self.env = s3_environment()
        self.tmp = tempfile.TemporaryDirectory()
        self.store = f"s3://{S3_BUCKET}/machine-{os.urandom(6).hex()}"  # type: ignore[assignment]
        self.engine = engine
        self.solved = False

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*LADDERS, *args, "--json"], capture_output=True, text=True,
                              timeout=timeout, env=self.env, cwd=self.tmp.name)

    def popen(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env=self.env, cwd=self.tmp.name)

    @precondition(lambda self: self.solved)
    @rule(which=st.integers(0, 2**20), at=st.integers(0, 2**30),
          mask=st.sampled_from([1, 0x20, 0xFF]))
    def damage(self, which: int, at: int, mask: int) -> None:
        from ladders.checkpoints.backend import open_backend
        backend = open_backend(str(self.store))
        keys = sorted(backend.list())
        if not keys:
            return
        key = keys[which % len(keys)]
        raw = bytearray(backend.read(key))
        if raw:
            raw[at % len(raw)] ^= mask
            backend.replace(key, bytes(raw))


S3_BUCKET = "ladders-machine"
_S3: dict[str, str] = {}


def s3_environment() -> dict[str, str]:
    """A moto S3 server on 127.0.0.1 for this module (started on first use) and the
    environment that reaches it, with a short lease."""
    if not _S3:
        import boto3
        from moto.server import ThreadedMotoServer
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
               "AWS_ALLOW_HTTP": "true", "LADDERS_LEASE_SECONDS": "3"}
        os.environ.update({k: v for k, v in env.items() if k != "LADDERS_LEASE_SECONDS"})
        boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket=S3_BUCKET)
        _S3.update({**os.environ, **env})
    return dict(_S3)


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(max_examples=5, stateful_step_count=5, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
TestS3StoreMachine = pytest.mark.skipif(importlib.util.find_spec("obstore") is None or
                                        importlib.util.find_spec("moto") is None,
                                        reason="needs obstore and moto[server]")(S3StoreMachine.TestCase)
TestS3StoreMachine.settings = settings(max_examples=2, stateful_step_count=4, deadline=None,
                                       suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
def test_store_machine_long() -> None:
    """The same machine, longer: more interleavings (several minutes)."""
    from hypothesis.stateful import run_state_machine_as_test
    run_state_machine_as_test(StoreMachine, settings=settings(
        max_examples=40, stateful_step_count=12, deadline=None,
        suppress_health_check=[HealthCheck.too_slow]))
