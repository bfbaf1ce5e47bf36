"""Benchmark: can the series driver keep hundreds of workers busy? A simulated cluster.

Issue 39 asks whether the driver of a 5-player run keeps up with 256 workers: their
batches (1,024 primes, about 2 minutes of a worker each at 123 ms a prime) finish about
two a second, and each must be committed (a manifest), read back and folded into the
reconstruction stream, with the next batch submitted, while the driver's memory holds
only the residues.

This runs the driver's own loop (:func:`~ladders.cluster.loops.run_dask` with a
:class:`~ladders.cluster.engines.prime_batches.BatchWork` over a real run store in a
folder, the run's kind of primes drawn as a run draws them, every segment read back and
folded into a real :class:`~ladders.solver.engines.series.ReconstructionStream`) against
a local Dask cluster of ``--processes`` worker processes with ``--threads`` threads each
(256 by default), whose task for a batch sleeps ``--batch-seconds`` (the worker's
kernel, simulated: no CPU) and then writes the batch's segment of synthetic residues of
the run's shape (``players`` columns of uint64 a prime), as a worker writes it. No
attempt at reconstruction is made (the residues are random), and the run ends after
``--batches`` batches.

Reported: each worker thread's idle gaps between one task's end and its next task's
start (median, 99th percentile, most), the threads' busy share between the first wave's
end and the last wave's start, the delay from a batch's end to its commit, the
driver's CPU, and its resident memory against the residues it must hold (sampled every
second). The scheduler and the workers are processes of their own (``dask scheduler``,
``dask worker`` on 127.0.0.1), as on a cluster; with ``--local`` a LocalCluster, whose
scheduler runs in the driver's process (its CPU and memory count there).

Run: ``python scripts/bench_cluster.py [--processes 16 --threads 16 --batch-seconds 30
--batches 2048]``. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from ladders.checkpoints.batches import RESIDUES, BatchState
from ladders.checkpoints.segments import SegmentRef, read_arrays, write_arrays
from ladders.checkpoints.store import RunStore
from ladders.cluster.engines.prime_batches import BatchWork
from ladders.cluster.loops import run_dask
from ladders.solver.engines.series import ReconstructionStream, ntt_primes
from ladders.solver.games.board import preset_board
from ladders.solver.problem import Problem


def synthetic_batch(url: str, token: str, k: int, primes: list[int], seconds: float,
                    columns: int) -> dict[str, Any]:
    """A worker's batch, simulated: sleep the kernel's time, then write the segment of
    random residues (of the run's shape) as :func:`~ladders.checkpoints.series.run_series_batch`
    writes its own, and return the same kind of receipt (with the wall-clock times)."""
    start = time.time()
    time.sleep(seconds)
    store = RunStore.open(url, BatchState)
    rng = np.random.default_rng(k)
    count = len(primes)
    ref = write_arrays(store.backend, f"{RESIDUES}/b{k:05d}-sim",
                       {"primes": np.asarray(primes, dtype=np.uint64),
                        "valid": np.ones(count, dtype=np.uint8),
                        "residues": rng.integers(0, 1 << 61, size=(count, columns),
                                                 dtype=np.uint64)}, count)
    return {"k": k, "segment": ref.to_json(), "valid": count, "start": start, "end": time.time(),
            "worker": f"{os.getpid()}:{threading.get_ident()}"}


class SimulatedRun(BatchWork):
    """A series run's driver side over synthetic batches (see the module docstring)."""

    def __init__(self, store: RunStore, batches: int, seconds: float, columns: int) -> None:
        self.count, self.seconds, self.columns = batches, seconds, columns
        self.stream = ReconstructionStream(columns, holdout=2)
        self.receipts: dict[int, dict[str, Any]] = {}
        self.committed_at: dict[int, float] = {}
        super().__init__(store)
        self.start()

    def sequence(self) -> Iterator[int]:
        return ntt_primes(self.seed)

    def batch_task(self, k: int, primes: list[int]) -> Any:
        return functools.partial(synthetic_batch, seconds=self.seconds, columns=self.columns)

    def accept(self, item: Any, receipt: dict[str, Any], seconds: float) -> None:
        self.receipts[int(receipt["k"])] = receipt
        super().accept(item, receipt, seconds)

    def commit(self) -> None:
        """The engine's commit; then the time each new batch's manifest was committed."""
        before = set(self.manifest.state.batches)  # type: ignore[attr-defined]
        super().commit()
        now = time.time()
        for k in set(self.manifest.state.batches) - before:  # type: ignore[attr-defined]
            self.committed_at[k] = now

    def fold(self, ref: SegmentRef) -> None:
        arrays = read_arrays(self.store.backend, ref, ("primes", "valid", "residues"))
        self.stream.add(arrays["primes"], arrays["residues"], arrays["valid"].astype(bool),
                        attempt=False)

    def bits(self) -> int:
        return self.stream.bits

    def conclude(self) -> bool:
        return self.batches() >= self.count


@contextlib.contextmanager
def cluster(processes: int, threads: int, local: bool) -> Iterator[Any]:
    """A ``dask scheduler`` process on 127.0.0.1 and ``processes`` ``dask worker``
    processes of ``threads`` threads (as a cluster's machines run them: the driver holds
    only its client); with ``local``, a LocalCluster, whose scheduler runs in the
    driver's process."""
    if local:
        from distributed import LocalCluster
        with LocalCluster(n_workers=processes, threads_per_worker=threads, processes=True,
                          dashboard_address=":0") as lc:
            yield lc
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.{}"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([*dask[:2], dask[2].format("dask_scheduler"), "--host", "127.0.0.1",
                               "--port", str(port), "--dashboard-address", ":0"], **quiet)]
    try:
        time.sleep(2)
        procs += [subprocess.Popen([*dask[:2], dask[2].format("dask_worker"), address,
                                    "--nthreads", str(threads), "--no-dashboard"], **quiet)
                  for _ in range(processes)]
        yield address
    finally:
        for proc in procs[::-1]:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=16, help="worker processes")
    parser.add_argument("--threads", type=int, default=16, help="threads a worker process")
    parser.add_argument("--batch-seconds", type=float, default=30.0,
                        help="a batch's simulated kernel time (a 5-player batch: ~126 s)")
    parser.add_argument("--batches", type=int, default=2048)
    parser.add_argument("--batch-primes", type=int, default=1024)
    parser.add_argument("--players", type=int, default=5, help="residue columns a prime")
    parser.add_argument("--local", action="store_true",
                        help="a LocalCluster (its scheduler in the driver's process) instead of "
                        "scheduler and worker processes")
    parser.add_argument("--trace", action="store_true",
                        help="trace the driver's allocations (tracemalloc) and print where "
                        "its memory went")
    args = parser.parse_args()
    if args.trace:
        import tracemalloc
        tracemalloc.start(6)

    import logging

    from distributed import Client
    # the spare tasks cancelled at the end are no news
    logging.getLogger("distributed").setLevel(logging.ERROR)

    threads = args.processes * args.threads
    with tempfile.TemporaryDirectory() as tmp:
        where = os.path.join(tmp, "store")
        problem = Problem.build(preset_board("hasbro"), args.players)
        run = {"engine": "series", "token": "simulated-1", "seed": 1,
               "batch_primes": args.batch_primes, "problem": problem.to_json()}
        store = RunStore.create(where, run, BatchState, lambda _: BatchState())
        store.acquire_lock()
        samples: list[tuple[float, int, int]] = []
        done = threading.Event()
        work: SimulatedRun | None = None

        def sample() -> None:
            while not done.wait(1.0):
                held = 0 if work is None else work.stream.prime_count * 8 * (args.players + 1)
                samples.append((time.time(), rss_bytes(), held))

        with cluster(args.processes, args.threads, args.local) as address, \
                Client(address, timeout=60) as client:
            client.wait_for_workers(args.processes, timeout=300)
            work = SimulatedRun(store, args.batches, args.batch_seconds, args.players)
            threading.Thread(target=sample, daemon=True).start()
            t0, c0 = time.time(), time.process_time()
            run_dask(client, work, lambda: False)
            wall, cpu = time.time() - t0, time.process_time() - c0
            done.set()
        store.release_lock()

    receipts = sorted(work.receipts.values(), key=lambda r: r["start"])
    by_thread: dict[str, list[dict[str, Any]]] = {}
    for r in receipts:
        by_thread.setdefault(r["worker"], []).append(r)
    gaps = [b["start"] - a["end"] for rs in by_thread.values() for a, b in zip(rs, rs[1:])]
    gaps.sort()
    # the steady state: after every thread's first task ended, before the last wave began
    first_wave_end = max(rs[0]["end"] for rs in by_thread.values())
    last_wave_start = min(rs[-1]["start"] for rs in by_thread.values())
    busy = sum(max(0.0, min(r["end"], last_wave_start) - max(r["start"], first_wave_end))
               for r in receipts)
    span = max(1e-9, last_wave_start - first_wave_end)
    share = busy / (len(by_thread) * span)
    delays = sorted(work.committed_at[k] - r["end"] for k, r in work.receipts.items()
                    if k in work.committed_at)
    mem = [(t - t0, rss, held) for t, rss, held in samples]
    quarter = [mem[min(len(mem) - 1, int(q * (len(mem) - 1)))] for q in (0, 0.25, 0.5, 0.75, 1)]

    def pct(xs: list[float], q: float) -> float:
        return xs[min(len(xs) - 1, int(q * (len(xs) - 1)))]

    result = {
        "threads": threads, "threads_seen": len(by_thread), "batches": len(receipts),
        "batch_seconds": args.batch_seconds, "batch_primes": args.batch_primes,
        "wall": wall, "driver_cpu": cpu, "batches_per_second": len(receipts) / wall,
        "gap_median": statistics.median(gaps) if gaps else None,
        "gap_p99": pct(gaps, 0.99) if gaps else None, "gap_max": gaps[-1] if gaps else None,
        "busy_share_steady": share, "steady_seconds": span,
        "commit_delay_median": statistics.median(delays), "commit_delay_p99": pct(delays, 0.99),
        "commit_delay_max": delays[-1],
        "driver_rss_mb": [round(rss / 2**20, 1) for _, rss, _ in quarter],
        "residues_held_mb": [round(held / 2**20, 1) for _, _, held in quarter],
        "at_seconds": [round(t, 1) for t, _, _ in quarter],
    }
    print(f"{threads} worker threads ({args.processes} processes x {args.threads}), "
          f"{len(receipts):,} batches of {args.batch_primes:,} primes, {args.batch_seconds:g} s each: "
          f"{wall:,.1f} s, {result['batches_per_second']:.2f} batches a second")
    print(f"  idle gap between a thread's tasks: median {result['gap_median']:.3f} s, "
          f"99th percentile {result['gap_p99']:.3f} s, most {result['gap_max']:.3f} s")
    print(f"  threads busy between the first wave's end and the last wave's start: "
          f"{100 * share:.2f} % of {span:,.1f} s")
    print(f"  a batch's end to its commit: median {result['commit_delay_median']:.3f} s, "
          f"99th percentile {result['commit_delay_p99']:.3f} s, most {result['commit_delay_max']:.3f} s")
    print(f"  driver CPU {cpu:,.1f} s; its memory at 0/25/50/75/100 % of the run: "
          f"{result['driver_rss_mb']} MB, of which residues held {result['residues_held_mb']} MB")
    if args.trace:
        import tracemalloc
        top = tracemalloc.take_snapshot().statistics("traceback")[:8]
        for stat in top:
            print(f"  {stat.size / 2**20:8.1f} MB in {stat.count:,} blocks:")
            for line in stat.traceback.format(limit=8)[-8:]:
                print("      " + line)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
