"""Where one reconstruction attempt spends its time, stage by stage: its Chinese
remaindering, or (``--attempt``) the whole attempt, the driver's part apart from the
groups' tasks.

The attempt's CRT (:func:`~ladders.solver.engines.series.subproducts.crt_columns`, run
as the attempt runs it, with a mark where each stage hands over to the next) has four
stages: the products of the groups' primes and the tree above them, the
remainders down its top levels, the groups (in this process here; a cluster's workers
take them in a run), and each column's sum (side by side in the attempt's threads). Only
column 0 is on the way to the half-gcd, so the stages before it are what a faster top
must shorten (issue 39: five players' tail).

Reads a store written by ``scripts/bench_driver.py`` (its batches as the driver folds
them), takes the batches up to the size of the benchmark's last attempt, and
prints each stage's end, in seconds from the start, as one JSON line::

    python scripts/crt_stages.py ~/ladders-runs/driver-full --players 5

``--attempt`` runs the whole attempt (the stream's own ``try_snapshot``: CRT, the first
seat's half-gcd, the other seats over its denominator, lowest terms) and marks where
the groups are handed over and come back, where the half-gcd and the lowest terms
start and end, for a cluster of ``--workers`` workers (default 64: every group goes
down its own path from where the driver stops, ``subproducts.hand_over``). On a
cluster the groups are tasks on workers that are idle then, each group one task: what
the tail waits for is the driver's part and the longest group.
So the groups run here one at a time, each timed (``group_seconds``), and the driver's
part is the attempt less the groups (``driver_seconds``). ``--groups-cache FILE`` keeps
the groups' terms from a first run in FILE and serves them from there in later runs
(the groups' own times then come from the first): a change to the driver's part is
measured in 6 minutes instead of 10 at five players' full size::

    python scripts/crt_stages.py ~/ladders-runs/driver-full --attempt \
        --groups-cache ~/ladders-runs/driver-full-groups.pkl
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def last_attempt(store_dir: str, players: int) -> tuple[Any, list]:
    """The stream fed the store's batches as far as the benchmark's last attempt, and
    the snapshot that attempt takes."""
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.series import read_batch
    from ladders.checkpoints.store import RunStore
    from ladders.solver.engines.series import run_stream
    bits = int(json.loads(Path(store_dir, "scale.json").read_text())["bits"])
    receipts = json.loads(Path(store_dir, "receipts.json").read_text())
    store = RunStore.open(store_dir, BatchState)
    stream = run_stream(players, 16, bits)
    for receipt in receipts:
        primes, residues, valid = read_batch(store, SegmentRef.from_json(receipt))
        stream.add(primes, residues, valid, attempt=False)
        if stream.bits >= stream.final_bits():
            break
    return stream, stream.snapshot()


def stages(store_dir: str, players: int, threads: int) -> dict:
    """The stages' ends (seconds) of one attempt's CRT at the store's known size."""
    from ladders.solver.engines.series import subproducts as sp
    from ladders.solver.exact import release_gil, releasing_gil
    stream, chunks = last_attempt(store_dir, players)
    groups = stream._groups(chunks, sum(len(p) for p, _, _ in chunks) - stream.holdout)
    out: dict = {"bits": stream.bits, "groups": len(groups), "columns": groups[0].columns}
    t0 = time.perf_counter()

    def since() -> float:
        return round(time.perf_counter() - t0, 4)

    # the attempt's own crt_columns, its stages marked where they meet: the remainders
    # start once the tree is built, the mapper once the remainders are down
    remainders_down = sp.remainders_down

    def marked_down(*args: Any) -> Any:
        out.setdefault("tree", since())     # (the groups' own remainders come later)
        return remainders_down(*args)

    def mapper(groups: Any, tops: Any) -> Any:
        out["tops"] = since()
        parts = sp.local_mapper(groups, tops)
        out["groups_done"] = since()
        return parts

    sp.remainders_down = marked_down
    finished: list[float] = []
    try:
        with releasing_gil(), ThreadPoolExecutor(threads, initializer=release_gil) as pool:
            columns, _ = sp.crt_columns(groups, mapper, pool)
            for column in columns:
                column.add_done_callback(lambda _: finished.append(since()))
    finally:
        sp.remainders_down = remainders_down
    out["columns_done"] = sorted(finished)
    return out


def attempt(store_dir: str, players: int, threads: int, cache: Path | None,
            workers: int) -> dict:
    """The whole last attempt, as a driver with ``workers`` workers makes it (where its
    remainders stop: ``subproducts.hand_over``): its marks (seconds from its start), the
    groups' own seconds (from the run that computed them), the driver's part and whether
    it found the fractions."""
    from ladders.solver.engines.series import reconstruct as rc
    from ladders.solver.engines.series import subproducts as sp
    stream, chunks = last_attempt(store_dir, players)
    stream.threads = threads
    stream.stop_at = sp.hand_over(stream.groups, workers, threads)
    marks: dict[str, float] = {}
    t0 = time.perf_counter()

    def mark(name: str) -> None:
        marks[name] = round(time.perf_counter() - t0, 2)

    held: dict[str, Any] = {}
    if cache is not None and cache.exists():
        held = pickle.loads(cache.read_bytes())

    def mapper(groups: Any, tops: Any) -> Any:
        mark("groups_out")
        if "parts" not in held:         # each group as one task: one at a time, timed
            held["parts"], held["seconds"] = [], []
            for group, top in zip(groups, tops):
                ta = time.perf_counter()
                held["parts"].append(sp.group_terms(group.primes, group.residues, top))
                held["seconds"].append(time.perf_counter() - ta)
            if cache is not None:
                cache.write_bytes(pickle.dumps(held))
        mark("groups_back")
        return held["parts"]

    def marked(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            mark(f"{name}_start")
            try:
                return fn(*args, **kwargs)
            finally:
                mark(f"{name}_end")
        return run

    stream.mapper = mapper
    originals = rc._wang_pair, rc.lowest_terms
    rc._wang_pair, rc.lowest_terms = marked("hgcd", rc._wang_pair), marked("terms", rc.lowest_terms)
    try:
        t0 = time.perf_counter()
        candidate = stream.try_snapshot(chunks)
    finally:
        rc._wang_pair, rc.lowest_terms = originals
    seconds = candidate.seconds
    groups = marks["groups_back"] - marks["groups_out"]
    return {"bits": stream.bits, "groups": len(held["seconds"]), "stop_at": stream.stop_at,
            "found": candidate.values is not None,
            "seconds": round(seconds, 2), "driver_seconds": round(seconds - groups, 2),
            "group_seconds": {"max": round(max(held["seconds"]), 2),
                              "sum": round(sum(held["seconds"]), 2)},
            "marks": marks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store written by scripts/bench_driver.py")
    parser.add_argument("--players", type=int, default=5, choices=[5, 6],
                        help="the seats the store was written with")
    parser.add_argument("--threads", type=int, default=min(os.cpu_count() or 1, 8),
                        help="the attempt's threads (the driver's default)")
    parser.add_argument("--attempt", action="store_true",
                        help="the whole attempt: the driver's part and the groups' tasks")
    parser.add_argument("--workers", type=int, default=64,
                        help="with --attempt: the cluster's workers (where the remainders "
                        "stop; default 64, a worker a group)")
    parser.add_argument("--groups-cache", type=Path,
                        help="with --attempt: keep the groups' terms here, or serve them from here")
    args = parser.parse_args()
    if not Path(args.store, "receipts.json").exists():
        sys.exit(f"{args.store}: no receipts.json (write it with scripts/bench_driver.py)")
    if args.attempt:
        print(json.dumps(attempt(args.store, args.players, args.threads, args.groups_cache,
                                 args.workers)))
    else:
        print(json.dumps(stages(args.store, args.players, args.threads)))


if __name__ == "__main__":
    main()
