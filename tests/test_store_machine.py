"""A state machine (hypothesis ``RuleBasedStateMachine``, as Icechunk tests its commits)
drives run stores through the real CLI: solves killed with SIGKILL at random moments,
single bytes flipped in random store files, resumes and verifies, in any order. The
invariant: no command ever reports a wrong answer. Each either prints the exact
fraction (compared with ``==`` against a reference computed once) or refuses in one
line, without a traceback, saying what to do."""

from __future__ import annotations

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

    @precondition(lambda self: not self.solved)
    @rule(delay=st.floats(0.5, 4.0), kill=st.booleans())
    def solve(self, delay: float, kill: bool) -> None:
        """Start a solve with a store; kill -9 it after ``delay`` seconds, or let it end."""
        proc = subprocess.Popen([*LADDERS, "solve", *RUNS[self.engine], "--checkpoint",
                                 str(self.store), "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
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


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(max_examples=5, stateful_step_count=5, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
def test_store_machine_long() -> None:
    """The same machine, longer: more interleavings (several minutes)."""
    from hypothesis.stateful import run_state_machine_as_test
    run_state_machine_as_test(StoreMachine, settings=settings(
        max_examples=40, stateful_step_count=12, deadline=None,
        suppress_health_check=[HealthCheck.too_slow]))
