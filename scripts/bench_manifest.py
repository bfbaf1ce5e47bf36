"""Benchmark: what one commit of a prime-batch run costs as the run grows, this tree
against a baseline commit, each in a fresh process.

A store in a local folder (fsync and atomic replace, as a run's) holds a run of N
batches; then 200 more are committed one at a time, as the driver does. Reported per
contender and N: the median and largest time of a commit, the bytes of the newest
manifest, and the bytes of the new manifest files (manifests and pages) the 200
commits wrote. Issue 26's goal: at
10,000 batches (a 5-player run) at most 20 KB and 5 ms a commit.

Run: ``python scripts/bench_manifest.py [--baseline COMMIT] [--sizes 1000,10000]``.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys

from fresh import baseline, run

COMMITS = 200

CONTENDER = r'''
import json, sys, tempfile, time
from pathlib import Path
from ladders.checkpoints.batches import BatchState
from ladders.checkpoints.segments import SegmentRef
from ladders.checkpoints.store import RunStore
size, COMMITS = int(sys.argv[1]), int(sys.argv[2])
def ref(k):
    return SegmentRef(f"residues/b{k:05d}-{k * 7919 % 10007:04x}", f"{k:064x}", 1024, 41_000 + k)
root = Path(tempfile.mkdtemp()) / "run"
store = RunStore.create(str(root), {"problem": {"board": "bench"}, "engine": "series"},
                        BatchState, lambda _: BatchState())
state = BatchState({k: ref(k) for k in range(size)})
manifest = store.current().next(state)
store.commit(manifest)
def files():
    return {p: p.stat().st_size for p in (root / "manifest").rglob("*.json")}
times, written = [], 0
for k in range(size, size + COMMITS):
    state = state.with_batch(k, ref(k))
    manifest = manifest.next(state)
    before = files()
    t0 = time.perf_counter()
    store.commit(manifest)
    times.append(time.perf_counter() - t0)
    written += sum(n for p, n in files().items() if p not in before)
times.sort()
newest = (root / "manifest" / f"{manifest.seq:06d}.json").stat().st_size
print(json.dumps({"median_ms": 1000 * times[len(times) // 2], "max_ms": 1000 * times[-1],
                  "manifest_bytes": newest, "written_bytes": written}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="fbbb9a6",
                        help="commit whose store is timed alongside this one (default: the last "
                             "one with whole manifests)")
    parser.add_argument("--sizes", default="1000,10000", help="batches already in the run")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    figures: dict[str, dict] = {}
    with baseline(args.baseline) as (tmp, env):
        for size in sizes:
            for who, extra in (("this", None), ("baseline", env)):
                res = run([sys.executable, "-c", CONTENDER, str(size), str(COMMITS)], env=extra,
                          cwd=str(tmp))
                figures[f"{size}_{who}"] = json.loads(res["stdout"])
    print(f"{'batches':>8} {'who':>9} {'median ms':>10} {'max ms':>8} {'manifest KB':>12} "
          f"{'KB written by ' + str(COMMITS) + ' commits':>28}")
    for size in sizes:
        for who in ("this", "baseline"):
            f = figures[f"{size}_{who}"]
            print(f"{size:8,} {who:>9} {f['median_ms']:10.2f} {f['max_ms']:8.2f} "
                  f"{f['manifest_bytes'] / 1000:12.1f} {f['written_bytes'] / 1000:28.1f}")
    print(json.dumps({"figures": figures}))


if __name__ == "__main__":
    main()
