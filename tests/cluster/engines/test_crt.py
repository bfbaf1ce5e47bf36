"""The crt engine (its driver, :mod:`ladders.cluster.engines.crt`, and its mathematics,
:mod:`ladders.solver.engines.crt`): batches of primes in the run store, in process and
on real Dask clusters, against the other engines; kill -9 and resume through the real
program."""

from __future__ import annotations

from ladders.cluster.runs import open_store

import gzip
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from distributed import Client, LocalCluster

from ladders.checkpoints.errors import StoreError
from ladders.cluster.connect import ClusterSpec
from ladders.cluster.runs import resume, solve
from ladders.solver.problem import Problem
from examples import EXAMPLES, board_file, truncated

from ladders.solver.engines.crt import FormAccumulator, prime_sequence, solve_mod
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import fraction_to_str, mpq, mpz
from ladders.solver.engines.modp import permute_csr
from ladders.solver.system import pivot_order
from ladders.solver.games.race import race_system, seats_from_values

LADDERS = [sys.executable, "-m", "ladders.cluster.cli"]


def reference(problem: Problem) -> list[mpq]:
    return seats_from_values(problem.system, problem.players, eliminate_target(problem.system))


def test_crt_table_is_every_unknown(tmp_path) -> None:
    problem = Problem.build(EXAMPLES["hasbro20-2"].board, 2)
    out = solve(problem, "crt", executor="serial", seed=1, table=True)
    x = solve_dixon(problem.system, seed=2).columns[0].solution()
    assert out.table == {problem.system.labels[i]: x[i] for i in range(problem.system.size)}


def test_residues_and_remainders() -> None:
    system = race_system(Problem.build(EXAMPLES["tiny10-2"].board, 2).piece, 2)
    order = pivot_order(system, "labels")
    primes = prime_sequence(3, 4)
    assert len(set(primes)) == 4 and primes == sorted(primes, reverse=True)
    value = mpq(30799, 57720)
    weights = np.eye(system.size, 1, -(system.size - 1), dtype=np.int64)  # the target alone
    acc = FormAccumulator(1, weights)
    order = np.asarray(order)
    permuted = permute_csr(system.indptr, system.indices, system.data, order)
    for p in primes:
        x = solve_mod(system, order, permuted, p)
        assert int(x[0, -1]) == int(value.numerator) * pow(int(value.denominator), -1, p) % p
        acc.add(p, x)
    m = mpz(1)
    for p in primes:
        m *= p
    assert acc.modulus == m
    assert acc.values[0][0] == int(value.numerator) * pow(int(value.denominator), -1, int(m)) % m


def test_a_candidate_missing_a_factor_of_2_is_widened_not_retried_for_ever() -> None:
    # with this seed all six random combinations of d3-4's first two columns cancel the
    # factor 2 of their common denominator: the candidate is refused, and the run went on
    # adding primes for ever (in CI: 80 minutes) because the same candidate came back
    ex = EXAMPLES["d3-4"]
    problem = Problem.build(ex.board, ex.players)
    out = solve(problem, "crt", executor="serial", seed=4197765137)
    assert list(out.seats) == reference(problem)
    assert out.tasks_run == 1
    assert out.verified["certificate"]["rejected_candidates"] == 2


def test_crt_on_a_dask_cluster_then_resume(tmp_path) -> None:
    # 7 primes, a Dask task each: the stop and the resume on a cluster, not arithmetic
    # (24 squares took 28 tasks, 187 s of a run on a busy machine)
    problem = Problem.build(truncated("hasbro", 16), 2)
    path = str(tmp_path / "run")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc, Client(lc):
        def stop_after_a_batch() -> bool:
            # stop on the first poll after a batch is committed: a count of polls
            # raced the workers' start on a slow machine (CI saw none committed)
            return os.path.isdir(path) and bool(open_store(path).current().state.batches)
        first = solve(problem, "crt", checkpoint=path, spec=ClusterSpec(scheduler=lc.scheduler_address),
                      executor="dask", seed=2, batch_primes=1, should_stop=stop_after_a_batch)
        assert first.interrupted and first.seats == ()
        done = len(open_store(path).current().state.batches)
        assert done >= 1
        out = resume(path, spec=ClusterSpec(scheduler=lc.scheduler_address))
    assert list(out.seats) == reference(problem)
    assert out.tasks_total >= done and out.verified["passed"]
    again = resume(path)  # finished: its stored answer, nothing runs
    assert again.seats == out.seats and again.tasks_run == 0


@pytest.mark.parametrize("engine", ["crt", pytest.param("series", marks=pytest.mark.slow)])  # series: 11 s
def test_a_damaged_batch_is_dropped_and_computed_again(tmp_path, capsys, engine: str) -> None:
    # batches are independent: one bad segment costs that batch, not the store (resume
    # said "cannot be resumed: start a new run" while verify said "resume it")
    k = 2 if engine == "crt" else 3
    problem = Problem.build(EXAMPLES["hasbro20-2"].board, k)
    path = tmp_path / "run"
    calls = {"n": 0}

    def stop_soon() -> bool:
        calls["n"] += 1
        return calls["n"] > 3
    solve(problem, engine, executor="serial", seed=4, batch_primes=1, checkpoint=str(path),
          should_stop=stop_soon)
    batches = open_store(path).current().state.batches
    k0, ref = min(batches.items())
    chunk = next(p for p in (path / ref.path / "residues").iterdir() if p.name != "zarr.json")
    data = bytearray(chunk.read_bytes())
    data[-10] ^= 1
    chunk.write_bytes(bytes(data))
    out = resume(str(path))
    assert f"1 damaged batch dropped, to be computed again (batch {k0}: segment {ref.path}" \
        in capsys.readouterr().err
    assert list(out.seats) == reference(problem)
    assert open_store(path).current().state.batches[k0].path != ref.path


def _finish(args: list[str]) -> dict:
    proc = subprocess.run(LADDERS + args + ["--json"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("engine, seed", [("crt", 1), ("crt", 2), ("series", 1)])
def test_kill_9_then_resume_crt(tmp_path, engine: str, seed: int) -> None:
    """kill -9 of a batch run (crt; series, whose batches live in the same kind of store,
    with 3 players) at a random committed batch: the resume redoes none of them."""
    board = board_file(tmp_path, 30)
    store = tmp_path / "run"
    rng = random.Random(seed)
    # series: 248 primes, in batches of 4 (of 1, its commits took most of the test)
    solve_args = [board, "--engine", engine, "--executor", "serial", "--batch-primes",
                  "4" if engine == "series" else "1", "--seed", "3"] + (
                      ["-k", "3"] if engine == "series" else [])
    args = ["solve", *solve_args, "--checkpoint", str(store)]
    proc = subprocess.Popen(LADDERS + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    want = rng.randint(2, 20)
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.05)
        try:
            if len(open_store(store).current().state.batches) >= want:
                break
        except (StoreError, OSError, ValueError):
            continue
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    at_kill = len(open_store(store).newest().state.batches)  # as resume adopts it
    output = tmp_path / "seats.json.gz"
    resumed = _finish(["resume", str(store), "--output", str(output)])
    whole = solve(Problem.build(truncated("hasbro", 30), 3 if engine == "series" else 2),
                  "series", executor="serial")
    assert [s["exact"] for s in resumed["seats"]] == [fraction_to_str(x) for x in whole.seats]
    written = json.loads(gzip.decompress(output.read_bytes()))
    assert [s["exact"] for s in written["seats"]] == [s["exact"] for s in resumed["seats"]]
    # the primes are fixed by the seed: a resume redoes no committed batch
    assert resumed["store"]["tasks_run"] == resumed["store"]["tasks_total"] - at_kill
    assert not [p for p in (store / "residues").iterdir()
                if p.name not in {r.path.split("/")[-1] for r in
                                  open_store(store).current().state.batches.values()}]
