"""Where one reconstruction attempt's Chinese remaindering spends its time, stage by stage.

The attempt's CRT (:func:`~ladders.solver.engines.series.subproducts.crt_columns`) runs
in four stages: the products of the groups' primes and the tree above them, the
remainders down its top levels, the groups (in this process here; a cluster's workers
take them in a run), and each column's sum (side by side in the attempt's threads). Only
column 0 is on the way to the half-gcd, so the stages before it are what a faster top
must shorten (issue 39: five players' tail).

Reads a store written by ``scripts/bench_driver.py`` (its batches as the driver folds
them), takes the batches up to ``--bits`` as the benchmark's last attempt does, and
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

    with releasing_gil(), ThreadPoolExecutor(threads, initializer=release_gil) as pool:
        tree = sp.product_tree(sp.each_in(pool, sp.group_product, [g.primes for g in groups]))
        out["tree"] = since()
        tops = sp.remainders_down(tree[-1][0], tree, pool)
        out["tops"] = since()
        parts = sp.local_mapper(groups, tops)
        out["groups_done"] = since()

        def column(j: int) -> float:
            sp.combine_up([p[j] for p in parts], tree) % tree[-1][0]
            return since()

        out["columns_done"] = list(pool.map(column, range(groups[0].columns)))
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
