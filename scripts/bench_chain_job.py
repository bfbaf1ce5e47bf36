"""Benchmark: a QVBS chain solved as a resumable Dask job, killed with -9 and resumed.

Issue 52's goal for the largest QVBS chains (nand 60-4, crowds 6-20): exact on this
machine within 15 minutes and 12 GB, and "the same again as a Dask job on 2 local
workers, killed with -9 and resumed to the same fraction". For each instance named:

1. ``ladders solve MODEL --properties PROPS --constants C --checkpoint STORE
   --workers W`` in a fresh process group (the components engine as batches of primes,
   the workers reading the system in solve order from the store), killed with SIGKILL
   (driver, nanny and workers at once) once ``--kill-after`` batches are committed;
2. ``ladders resume STORE --json`` in a fresh process group, to the end;
3. the answer against the QVBS reference (``==`` on the fractions) and verified.

Both phases' wall time and the peak of the summed resident memory of every process of
the group (sampled every 0.2 s: the driver and its Dask nanny and worker processes
together, which ``ru_maxrss`` of one process does not see) are printed, with one JSON
line. The property asked is the instance's first (``--checkpoint`` keeps one question).

Run: ``python scripts/bench_chain_job.py --names 'nand 60-4,crowds 6-20' [--workers 2]
[--kill-after 2] [--solve-args '--batch-primes 1 --lump off'] [--runs-dir ~/ladders-runs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from bench_chains import QVBS, instances, same
from fresh import fresh_environ


class Sampler:
    """The peak of the summed RSS of a process and its descendants, sampled."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                root = psutil.Process(self.pid)
                total = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
                self.peak = max(self.peak, total)
            except psutil.Error:
                pass
            self._stop.wait(0.2)

    def stop(self) -> float:
        """Stop sampling; the peak in GB."""
        self._stop.set()
        self._thread.join()
        return self.peak / 2**30


def first_property(props: str, tmp: Path) -> tuple[str, str]:
    """The name of the properties file's first property, and a file holding only it."""
    for line in Path(props).read_text().splitlines():
        text = line.strip()
        if text and not text.startswith("//"):
            name = text.split(":", 1)[0].strip().strip('"')
            only = tmp / f"{name}.props"
            only.write_text(text + "\n")
            return name, str(only)
    raise SystemExit(f"{props}: no property")


def committed(store: Path) -> int:
    """Batches the store's newest manifest lists (0 while it is being created)."""
    from ladders.cluster.runs import open_store
    try:
        return len(open_store(str(store)).current().state.batches)
    except Exception:  # noqa: BLE001 - not there yet, or half-created: keep polling
        return 0


def job(inst: dict, args: argparse.Namespace, runs: Path) -> dict:
    """Solve, kill -9, resume one instance; its figures."""
    name, props = first_property(inst["props"], runs)
    store = runs / f"job-{inst['name'].replace(' ', '-')}"
    shutil.rmtree(store, ignore_errors=True)
    common = [sys.executable, "-m", "ladders.cluster.cli"]
    solve = common + ["solve", inst["model"], "--properties", props, "--constants",
                      inst["constants"], "--checkpoint", str(store), "--workers",
                      str(args.workers), *args.solve_args.split()]
    t0 = time.perf_counter()
    proc = subprocess.Popen(solve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=fresh_environ(), start_new_session=True)
    sampler = Sampler(proc.pid)
    while proc.poll() is None and committed(store) < args.kill_after:
        time.sleep(0.2)
    if proc.poll() is not None:
        raise SystemExit(f"{inst['name']}: the run ended (status {proc.returncode}) before "
                         f"{args.kill_after} batches were committed")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = {"seconds": time.perf_counter() - t0, "peak_gb": sampler.stop(),
             "batches": committed(store)}
    t1 = time.perf_counter()
    proc = subprocess.Popen(common + ["resume", str(store), "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=fresh_environ(), start_new_session=True)
    sampler = Sampler(proc.pid)
    out, _ = proc.communicate()
    second = {"seconds": time.perf_counter() - t1, "peak_gb": sampler.stop(),
              "batches": committed(store)}
    if proc.returncode != 0:
        raise SystemExit(f"{inst['name']}: resume failed with status {proc.returncode}")
    (result,) = json.loads(out)["results"]
    (value,) = result["answers"].values()
    return {"instance": inst["name"], "property": name, "killed": first, "resumed": second,
            "equal": same(value["exact"], inst["reference"][name]),
            "verified": result["verified"]["passed"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", required=True, help="instances, e.g. 'nand 60-4,crowds 6-20'")
    parser.add_argument("--workers", type=int, default=2, help="local Dask workers")
    parser.add_argument("--kill-after", type=int, default=2, help="batches committed before kill -9")
    parser.add_argument("--solve-args", default="",
                        help="more options of the solve, e.g. '--batch-primes 1 --lump off'")
    parser.add_argument("--runs-dir", default=str(Path.home() / "ladders-runs"),
                        help="where the stores go (outside the work tree)")
    parser.add_argument("--models", default=str(QVBS), help="the QVBS folders")
    args = parser.parse_args()
    runs = Path(args.runs_dir).expanduser()
    runs.mkdir(parents=True, exist_ok=True)
    names = set(args.names.split(","))
    found = [inst for inst in instances(Path(args.models), None, float("inf"))
             if inst["name"] in names]
    if len(found) != len(names):
        raise SystemExit(f"not in {args.models}: {sorted(names - {i['name'] for i in found})}")
    print(f"{'instance':14} {'killed at s':>11} {'batches':>7} {'peak GB':>7} "
          f"{'resumed s':>9} {'batches':>7} {'peak GB':>7}  equal  verified", flush=True)
    rows = []
    for inst in found:
        row = job(inst, args, runs)
        k, r = row["killed"], row["resumed"]
        print(f"{row['instance']:14} {k['seconds']:11.1f} {k['batches']:7d} {k['peak_gb']:7.2f} "
              f"{r['seconds']:9.1f} {r['batches']:7d} {r['peak_gb']:7.2f}  {row['equal']!s:5}  "
              f"{row['verified']}", flush=True)
        rows.append(row)
    print(json.dumps({"workers": args.workers, "rows": rows}))


if __name__ == "__main__":
    main()
