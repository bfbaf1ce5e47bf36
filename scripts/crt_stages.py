"""Where one reconstruction attempt's Chinese remaindering spends its time, stage by stage.

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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def stages(store_dir: str, players: int, threads: int) -> dict:
    """The stages' ends (seconds) of one attempt's CRT at the store's known size."""
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.series import read_batch
    from ladders.checkpoints.store import RunStore
    from ladders.solver.engines.series import run_stream
    from ladders.solver.engines.series import subproducts as sp
    from ladders.solver.exact import release_gil, releasing_gil
    bits = int(json.loads(Path(store_dir, "scale.json").read_text())["bits"])
    receipts = json.loads(Path(store_dir, "receipts.json").read_text())
    store = RunStore.open(store_dir, BatchState)
    stream = run_stream(players, 16, bits)
    for receipt in receipts:                 # as far as the benchmark's last attempt
        primes, residues, valid = read_batch(store, SegmentRef.from_json(receipt))
        stream.add(primes, residues, valid, attempt=False)
        if stream.bits >= stream.final_bits():
            break
    chunks = stream.snapshot()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="a store written by scripts/bench_driver.py")
    parser.add_argument("--players", type=int, default=5, choices=[5, 6],
                        help="the seats the store was written with")
    parser.add_argument("--threads", type=int, default=min(os.cpu_count() or 1, 8),
                        help="the attempt's threads (the driver's default)")
    args = parser.parse_args()
    if not Path(args.store, "receipts.json").exists():
        sys.exit(f"{args.store}: no receipts.json (write it with scripts/bench_driver.py)")
    print(json.dumps(stages(args.store, args.players, args.threads)))


if __name__ == "__main__":
    main()
