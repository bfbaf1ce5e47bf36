"""Benchmark: a run store on S3 against a local folder, side by side in one run.

A moto S3 server runs on 127.0.0.1 in this process (what the tests use; a real bucket
is farther away, so read these as the cost of the protocol and of obstore, not of the
network). Every contender is a fresh ``ladders`` process, S3 and folder alternating:

1. ``ladders solve hasbro --players 3`` (series engine, 2 local workers) with
   ``--checkpoint s3://...`` and with a local folder: target within 1.3x;
2. ``--engine elimination`` on ``hasbro`` cut at 60 (2 workers): within 1.5x;
3. ``ladders status`` of a finished store the size of a 4-player run (500,000 primes
   in batches of 1,024, each batch a real segment) on S3: under 2 s.

The fractions must be equal (``==``). Run: ``python scripts/bench_store.py [--rounds N]
[--scale F]`` (``--scale 0.01``: the status store 100 times smaller, for a quick look).
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

from fresh import ladders, run

BUCKET = "ladders-bench"


def start_s3() -> dict[str, str]:
    """A moto S3 server on 127.0.0.1 with one bucket; the environment that reaches it."""
    import boto3
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    os.environ.update(env)
    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket=BUCKET)
    return env


def board60(tmp: Path) -> str:
    """``hasbro`` cut at square 60 (jumps beyond dropped) as a board file."""
    from ladders.solver.games.board import preset_board
    jumps = [(a, b) for a, b in preset_board("hasbro").jumps if a < 60 and b <= 60]
    path = tmp / "hasbro60.txt"
    path.write_text("0\n60\n6\n" + "".join(f"{a} {b}\n" for a, b in jumps))
    return str(path)


def big_store(where: str, primes: int, batch: int) -> int:
    """A finished series store of ``primes`` primes in batches of ``batch`` (segments of
    the real format, random residues: ``status`` reads the manifest and lists the
    objects, it never folds residues); returns the number of batches."""
    import numpy as np

    from ladders.checkpoints.batches import RESIDUES, BatchState
    from ladders.checkpoints.segments import write_arrays
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.session import run_json
    from ladders.cluster.engines import SolveRequest, get_engine
    from ladders.solver.games.board import preset_board
    from ladders.solver.problem import Problem
    problem = Problem.build(preset_board("hasbro"), 4)
    engine = get_engine("series")
    run = run_json(problem, engine, SolveRequest(), "dask", engine.digest(problem), seed=1,
                   batch_primes=batch, token="bench", **engine.run_fields(problem))
    store = RunStore.create(where, run, BatchState, lambda _: BatchState())
    rng = np.random.default_rng(1)
    state, manifest = BatchState(), store.current()
    for k in range(-(-primes // batch)):
        ref = write_arrays(store.backend, f"{RESIDUES}/b{k:05d}-{random.randrange(1 << 48):012x}",
                           {"primes": rng.integers(1 << 61, 1 << 62, batch, dtype=np.uint64),
                            "valid": np.ones(batch, dtype=np.uint8),
                            "residues": rng.integers(0, 1 << 61, (batch, 4), dtype=np.uint64)}, batch)
        state = state.with_batch(k, ref)
        manifest = manifest.next(state, 30.0, 62 * batch * (k + 1))
        store.commit(manifest)
    store.mark_complete({"seats": ["1/4"] * 4, "engine": "series", "verified": {"passed": True}})
    return len(state.batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="S3 and folder runs alternate this often")
    parser.add_argument("--scale", type=float, default=1.0, help="size of the status store (1: 500,000 primes)")
    parser.add_argument("--only", choices=["series", "elimination", "status"], default=None,
                        help="run one comparison only")
    args = parser.parse_args()
    env = start_s3()
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        b60 = board60(tmp)
        ladders("solve", "tiny10", "-k", "3", env=env)  # kernels compiled and cached
        jobs = {"hasbro-3 series": ["hasbro", "-k", "3", "--workers", "2"],
                "hasbro-60 elimination": [b60, "--engine", "elimination", "--workers", "2"]}
        jobs = {k: v for k, v in jobs.items() if args.only in (None, k.split()[1])}
        answers: dict[str, list] = {}
        for r in range(args.rounds):
            for name, job in jobs.items():
                for where, store in (("s3", f"s3://{BUCKET}/{name.split()[0]}-{r}"),
                                     ("folder", str(tmp / f"{name.split()[0]}-{r}"))):
                    res, data = ladders("solve", *job, "--checkpoint", store, env=env)
                    answers.setdefault(name, []).append([s["exact"] for s in data["seats"]])
                    figures.setdefault(f"{name} {where}", []).append(res["wall"])
        for name, seen in answers.items():
            assert all(a == seen[0] for a in seen), f"{name}: the stores gave different fractions"
        primes = int(500_000 * args.scale) if args.only in (None, "status") else 0
        batches = big_store(f"s3://{BUCKET}/status-store", primes, 1024)
        for _ in range(3 if primes else 0):
            res = run([sys.executable, "-m", "ladders.cluster.cli", "status",
                       f"s3://{BUCKET}/status-store", "--json"], env)
            assert json.loads(res["stdout"])["state"] == "complete"
            figures.setdefault("status", []).append(res["wall"])
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"{'run':40} {'median s':>9}   all")
    for k, v in figures.items():
        print(f"{k:40} {med[k]:9.2f}   {', '.join(f'{x:.2f}' for x in v)}")
    ratios = {name: med[f"{name} s3"] / med[f"{name} folder"] for name in jobs}
    targets = {"hasbro-3 series": 1.3, "hasbro-60 elimination": 1.5}
    for name, ratio in ratios.items():
        print(f"{name}: S3 / folder = {ratio:.2f} (target <= {targets[name]})")
    if primes:
        print(f"status of a store of {primes:,} primes in {batches} batches on S3: "
              f"{med['status']:.2f} s (target < 2 s)")
    print(json.dumps({"figures": figures, "ratios": ratios, "status_batches": batches}))


if __name__ == "__main__":
    main()
