"""The components engine with a store (:mod:`ladders.cluster.engines.components`,
:mod:`ladders.checkpoints.components`): a chain question asked with ``--checkpoint``
stays with the topological solve, as batches of primes committed to the store; stopped
or killed with -9 it resumes to the same fraction as the solve in memory (``==``), on
this process and on a real local Dask cluster, through the real program."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ladders.checkpoints.errors import StoreError
from ladders.cluster.runs import open_store

LADDERS = [sys.executable, "-m", "ladders.cluster.cli"]

#: A chain of stages, each left forward with probability 1/(s+3), to failure with
#: 1/(s+4), else stayed in: P(done) = prod_s (s+4)/(2s+7), about 370 digits in all
#: (some 40 primes of 30 bits); no cycle but the self-loops.
STAGES = """dtmc
const int N = 400;
module stages
  s : [0..N+1] init 0;
  [] s<N -> 1/(s+3) : (s'=s+1) + 1/(s+4) : (s'=N+1) + (1 - 1/(s+3) - 1/(s+4)) : true;
endmodule
label "done" = s=N;
"""


@pytest.fixture
def model(tmp_path: Path) -> list[str]:
    (tmp_path / "stages.prism").write_text(STAGES)
    (tmp_path / "done.props").write_text('"done": P=? [ F "done" ];\n')
    return [str(tmp_path / "stages.prism"), "--properties", str(tmp_path / "done.props")]


def ladders(*args: str, timeout: int = 600) -> dict:
    proc = subprocess.run(LADDERS + list(args) + ["--json"], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def answer(out: dict) -> str:
    (result,) = out["results"]
    return result["answers"]["done"]["exact"]


def test_a_chain_run_with_a_store_stays_with_the_component_solve(model: list[str], tmp_path: Path) -> None:
    """--checkpoint keeps the topological solve (before: the elimination engine, an LU
    of the whole system), as batches in the store; the fraction is the solve in
    memory's, the stored run says so again without solving, and status reads it."""
    memory = ladders("solve", *model)
    store = tmp_path / "run"
    stored = ladders("solve", *model, "--checkpoint", str(store), "--batch-primes", "4")
    assert answer(stored) == answer(memory) and stored["results"][0]["engine"] == "components"
    assert len(open_store(store).current().state.batches) >= 2
    again = ladders("resume", str(store))
    assert answer(again) == answer(memory)
    status = ladders("status", str(store))
    assert status["state"] == "complete" and status["engine"] == "components"


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_then_resume(model: list[str], tmp_path: Path, seed: int) -> None:
    """kill -9 of the driver at a random committed batch: the resume redoes none of the
    committed batches and ends at the solve in memory's fraction."""
    memory = answer(ladders("solve", *model))
    store = tmp_path / "run"
    proc = subprocess.Popen(LADDERS + ["solve", *model, "--checkpoint", str(store),
                                       "--batch-primes", "1", "--seed", "3"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    want = random.Random(seed).randint(2, 12)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
        try:
            if len(open_store(store).current().state.batches) >= want:
                break
        except (StoreError, OSError, ValueError):
            continue
    assert proc.poll() is None, "the run ended before it was killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    at_kill = {k: ref.path for k, ref in open_store(store).newest().state.batches.items()}
    assert len(at_kill) >= want
    resumed = ladders("resume", str(store))
    assert answer(resumed) == memory
    after = {k: ref.path for k, ref in open_store(store).current().state.batches.items()}
    assert {k: after[k] for k in at_kill} == at_kill and len(after) > len(at_kill)


def test_on_a_local_dask_cluster(model: list[str], tmp_path: Path) -> None:
    """Two local Dask workers, each building the chain from the model file the store
    names: the same fraction."""
    memory = answer(ladders("solve", *model))
    store = tmp_path / "run"
    out = ladders("solve", *model, "--checkpoint", str(store), "--workers", "2",
                  "--batch-primes", "4")
    assert answer(out) == memory
    assert json.loads((store / "run.json").read_text())["executor"] == "dask"


def test_a_damaged_structure_is_written_again(model: list[str], tmp_path: Path) -> None:
    """The system in solve order that workers read is the run's problem's: where its
    segment is damaged, a task that reads it names the resume, and the resume writes it
    again (the same digest) and ends at the same fraction."""
    from ladders.checkpoints.backend import open_backend
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.components import ARRAYS, components_solve
    from ladders.checkpoints.store import RunStore
    from ladders.checkpoints.errors import SegmentError
    from ladders.checkpoints.segments import SegmentRef, read_arrays
    memory = answer(ladders("solve", *model))
    store = tmp_path / "run"
    proc = subprocess.run(LADDERS + ["solve", *model, "--checkpoint", str(store), "--batch-primes",
                                     "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    chunk = store / "structure" / "data" / "0"
    raw = bytearray(chunk.read_bytes())
    raw[len(raw) // 2] ^= 1
    chunk.write_bytes(bytes(raw))
    ref = SegmentRef.from_json(json.loads((store / "run.json").read_text())["structure"])
    with pytest.raises(SegmentError) as caught:  # what a worker meets
        components_solve(RunStore.open(str(store), BatchState))
    assert str(caught.value).endswith(f"'ladders resume {store}' writes it again from the run's problem")
    (store / "COMPLETE.json").unlink()  # as if stopped: the resume runs the work again
    proc = subprocess.run(LADDERS + ["resume", str(store), "--json"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "structure cannot be read" in proc.stderr and "written again from the run's problem" in proc.stderr
    assert answer(json.loads(proc.stdout)) == memory
    read_arrays(open_backend(str(store)), ref, ARRAYS)  # whole again
