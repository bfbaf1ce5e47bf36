"""Benchmark: the series driver at a 5-player run's size, on residues of a known answer.

Issue 26 asks for proof, short of the full run, that the driver of a 5-player run on
the full board (about 10 million primes, fractions of about 616 million bits in all) is
never the bottleneck. Five known fractions ``n_j / D`` summing to 1 (random, ``D`` of
half the bits) are reduced modulo the run's kind of primes (``c 2^16 + 1``, the first
batches of seed 1), and fed through the driver's own path:

1. *workers* (one fresh process, not timed as the driver's): the residues batch by
   batch, each batch written as a worker writes it (a segment of the run store);
2. *driver* (another fresh process, timed): for each batch, the manifest that lists it
   committed, its segment read back and folded into the run's reconstruction stream
   (:func:`~ladders.solver.engines.series.run_stream`, expecting the known size, as a
   run expects its fitted size), attempts as they come due (subproduct-tree CRT and
   half-gcd reconstruction) until the fractions are confirmed at held-out primes;
   they must equal the known ones (``==``). With ``--workers N`` the attempts' lower
   trees run on a local Dask cluster of N workers, as a run's do.

``--scale 1`` is the full size (10.3 million primes; the first phase takes about half
an hour here); CI-sized runs use ``--scale 0.001``. Reported: each phase's wall time and
peak memory (``os.wait4``), the driver's time in commits, reads and attempts, and the
attempts. Issue 26's goal at full size: at most 45 minutes and 8 GB for the driver.

``--baseline COMMIT`` runs the driver's phase of that commit too, on the same store, in a
fresh process after this tree's (issue 39's tail: the last attempt's seconds side by side).
``--replay STORE`` times instead one attempt at every batch of a finished run's store
(a 4-player run's tail; a 3-player one's over its denominator multiple), this tree and
the ``--baseline``, their fractions compared, each with its compiled half-gcd loaded
first (a baseline's copy has no numba cache: its first attempt would also time the
compiler, about 5 s).
``--players 6`` makes six seats instead, ``--scale`` then a fraction of the six-player
answer's 10 billion bits (issue 39: six players' design, proved at ``--scale 0.0625``).

Run: ``python scripts/bench_driver.py --scale 0.01 [--players 5|6] [--store DIR]
[--workers N] [--baseline COMMIT]``. A store of the same scale is reused (``--store``);
prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from fresh import baseline, run

#: Bits of the k-player answer on hasbro (numerator and denominator of a seat; the
#: plan's fit): 92,709,268 digits each for 5 players, 1,501,890,140 for 6.
FULL_BITS = {5: 615_947_044, 6: 9_978_342_103}
BATCH = 1024


def known_fractions(bits: int, players: int) -> tuple[list, object]:
    """``([n_1 .. n_k], D)``: ``sum n_j = D``, ``D`` of ``bits / 2`` bits, from seed 26."""
    import gmpy2
    state = gmpy2.random_state(26)
    den = gmpy2.mpz_urandomb(state, bits // 2 - 1) | (gmpy2.mpz(1) << (bits // 2 - 2))
    nums = [gmpy2.mpz_urandomb(state, bits // 2 - 4) for _ in range(players - 1)]
    return [*nums, den - sum(nums)], den


def workers(store_dir: str, bits: int, players: int) -> dict:
    """Phase 1: the residues of every batch, written as segments; the receipts saved."""
    import numpy as np
    from ladders.checkpoints.batches import RESIDUES, BatchState
    from ladders.checkpoints.segments import write_arrays
    from ladders.checkpoints.store import RunStore
    from ladders.solver.engines.series import ntt_primes
    from ladders.solver.engines.series.subproducts import product_tree
    from ladders.solver.exact import invert, mpz
    t0 = time.perf_counter()
    nums, den = known_fractions(bits, players)
    count = int(bits * 1.05) // 61 + 64
    batches = -(-count // BATCH)
    primes_iter = ntt_primes(1)
    primes = [[next(primes_iter) for _ in range(BATCH)] for _ in range(batches)]
    t1 = time.perf_counter()
    tree = product_tree([product_tree([mpz(q) for q in b])[-1][0] for b in primes])
    values = [*nums, den]
    rems = [values]
    for low in reversed(tree[:-1]):  # each value modulo each batch's product, top down
        rems = [[v % node for v in rems[i // 2]] for i, node in enumerate(low)]
    t2 = time.perf_counter()
    store = RunStore.create(store_dir, {"problem": {"synthetic": bits}, "engine": "series",
                                        "batch_primes": BATCH, "token": "synthetic"}, BatchState,
                            lambda _: BatchState())
    receipts = []
    for k, (batch, rem) in enumerate(zip(primes, rems)):
        res = np.zeros((BATCH, players), dtype=np.uint64)
        for i, q in enumerate(batch):
            inv = int(invert(rem[-1] % q, q))
            res[i] = [int(r % q) * inv % q for r in rem[:-1]]
        ref = write_arrays(store.backend, f"{RESIDUES}/b{k:05d}-synthetic",
                           {"primes": np.asarray(batch, dtype=np.uint64),
                            "valid": np.ones(BATCH, dtype=np.uint8), "residues": res}, BATCH)
        receipts.append(ref.to_json())
    Path(store_dir, "receipts.json").write_text(json.dumps(receipts))
    return {"primes": batches * BATCH, "batches": batches, "prime_seconds": t1 - t0,
            "remainder_seconds": t2 - t1, "write_seconds": time.perf_counter() - t2}


class ResidentPeak:
    """The largest resident size of this process (MB) since :meth:`reset`, sampled every
    0.2 s from ``/proc/self/statm`` by a daemon thread (0 where there is none): an
    attempt's own peak against what the stream held before it."""

    def __init__(self) -> None:
        import threading
        self.peak = 0.0
        self._page = os.sysconf("SC_PAGE_SIZE") / 1e6
        threading.Thread(target=self._sample, daemon=True).start()

    def now(self) -> float:
        try:
            return int(Path("/proc/self/statm").read_text().split()[1]) * self._page
        except OSError:
            return 0.0

    def reset(self) -> float:
        self.peak = self.now()
        return self.peak

    def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, self.now())
            time.sleep(0.2)


def driver(store_dir: str, bits: int, workers_n: int, players: int) -> dict:
    """Phase 2: commit, read and fold each batch; attempt as due; check the answer."""
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.series import read_batch
    from ladders.checkpoints.store import RunStore
    from ladders.solver.engines.series import run_stream
    receipts = json.loads(Path(store_dir, "receipts.json").read_text())
    store = RunStore.open(store_dir, BatchState)
    manifest = store.current()
    stream = run_stream(players, 16, bits)
    cluster = client = None
    if workers_n:
        from distributed import Client, LocalCluster
        from ladders.cluster.engines.series import group_mapper
        cluster = LocalCluster(n_workers=workers_n, threads_per_worker=1, processes=True)
        client = Client(cluster)
        stream.mapper = group_mapper(client, store)
        if hasattr(stream, "let_go_of_residues"):     # (not before issue 39's six players)
            stream.let_go_of_residues()
        if hasattr(stream, "stop_at"):                # (not before the groups' own paths)
            from ladders.solver.engines.series.subproducts import hand_over
            stream.stop_at = hand_over(stream.groups, workers_n, stream.threads)
    commit = read = 0.0
    attempts = []
    resident = ResidentPeak()
    t0 = time.perf_counter()
    for k, ref_json in enumerate(receipts):
        ta = time.perf_counter()
        ref = SegmentRef.from_json(ref_json)
        state = manifest.state.with_batch(k, ref)
        manifest = manifest.next(state, 0.0, stream.bits)
        store.commit(manifest)
        tb = time.perf_counter()
        primes, residues, valid = read_batch(store, ref)
        stream.add(primes, residues, valid, source=ref_json, attempt=False)
        tc = time.perf_counter()
        commit += tb - ta
        read += tc - tb
        if stream.due():
            before = resident.reset()
            candidate = stream.try_snapshot(stream.snapshot())
            parts = {k: round(getattr(candidate, k, 0.0), 4)     # (a baseline may lack some)
                     for k in ("seconds", "crt_seconds", "groups_seconds", "rr_seconds",
                               "terms_seconds")}
            attempts.append({"bits": stream.bits, **parts, "found": candidate.values is not None,
                             "mb_before": round(before), "mb_peak": round(resident.peak)})
            stream.record(candidate)
            print(f"attempt at {stream.bits:,} bits: {parts['seconds']:.1f} s (CRT "
                  f"{parts['crt_seconds']:.1f} s, its groups {parts['groups_seconds']:.1f} s; "
                  f"the first seat's reconstruction {parts['rr_seconds']:.1f} s, lowest terms "
                  f"{parts['terms_seconds']:.1f} s; {before:,.0f} MB before, {resident.peak:,.0f} "
                  "MB at most)", file=sys.stderr, flush=True)
            if stream.values is not None:
                break
    total = time.perf_counter() - t0
    nums, den = known_fractions(bits, players)
    # v == n / den, cross-multiplied (building mpq(n, den) would take a gcd of each)
    if stream.values is None or any(v.numerator * den != n * v.denominator
                                    for v, n in zip(stream.values, nums)):
        raise SystemExit("the driver's fractions differ from the known ones")
    if client is not None:
        client.close()
        cluster.close()
    return {"batches": k + 1, "primes": stream.prime_count, "seconds": total,
            "commit_seconds": commit, "read_fold_seconds": read,
            "attempt_seconds": stream.attempt_seconds, "attempts": attempts}


def replay(store_dir: str) -> dict:
    """``--replay``: a finished run's store (every committed batch folded, in order)
    and one attempt at all of it, timed: the last attempt of that run, in this process
    alone. Uses only what the baseline has too, so the baseline's package runs it."""
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.series import read_batch
    from ladders.checkpoints.store import RunStore
    from ladders.solver.engines.series import HOLDOUT, ReconstructionStream
    store = RunStore.open(store_dir, BatchState)
    batches = store.current().state.batches
    # a run's driver threads where the stream has them (not before issue 39's tail)
    fields = {f.name for f in dataclasses.fields(ReconstructionStream)}
    threads = {"threads": min(os.cpu_count() or 1, 8)} if "threads" in fields else {}
    # three players' runs keep the residue of the denominator multiple as a last column
    multiple = {"multiple": True} if store.run.get("multiple") else {}
    stream = None
    for k in sorted(batches):
        primes, residues, valid = read_batch(store, batches[k])
        if stream is None:
            stream = ReconstructionStream(residues.shape[1], holdout=HOLDOUT, must_sum_to_one=True,
                                          **threads, **multiple)
        stream.add(primes, residues, valid, attempt=False)
    # the compiled half-gcd loaded (or built: a baseline's copy has no cache) before
    # the timing, as a run's earlier attempts have it
    from ladders.solver.engines.series.reconstruct import rational_reconstruct
    rational_reconstruct((1 << 19999) + 12345, (1 << 20001) + 1)
    candidate = stream.try_snapshot(stream.snapshot())
    if candidate.values is None:
        raise SystemExit("the replayed attempt found no fractions")
    parts = {k: getattr(candidate, k) for k in ("groups_seconds", "rr_seconds", "terms_seconds")
             if hasattr(candidate, k)}     # (a baseline may lack them)
    return {"batches": len(batches), "primes": stream.prime_count, "bits": candidate.bits,
            "seconds": candidate.seconds, "crt_seconds": candidate.crt_seconds, **parts,
            "digests": [hashlib.sha256(str(v).encode()).hexdigest()[:16] for v in candidate.values]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=0.01,
                        help="fraction of the k-player size (1 = 616 million bits at 5 "
                             "players, 9,978 million at 6)")
    parser.add_argument("--players", type=int, choices=sorted(FULL_BITS), default=5,
                        help="seats (columns) of the known fractions, and the size --scale "
                             "is a fraction of")
    parser.add_argument("--store", help="the run store to write (reused if it holds this scale)")
    parser.add_argument("--workers", type=int, default=0,
                        help="Dask workers for the attempts' lower trees (0: in the driver)")
    parser.add_argument("--baseline", help="a commit whose driver runs on the same store after this one")
    parser.add_argument("--phase", choices=["workers", "driver", "replay"], help=argparse.SUPPRESS)
    parser.add_argument("--replay", metavar="STORE",
                        help="time the last attempt of a finished run's store instead")
    args = parser.parse_args()
    if args.replay:
        main_replay(args)
        return
    bits = int(FULL_BITS[args.players] * args.scale)
    if args.phase == "workers":
        print(json.dumps(workers(args.store, bits, args.players)))
        return
    if args.phase == "driver":
        print(json.dumps(driver(args.store, bits, args.workers, args.players)))
        return
    own = args.store is None
    store = args.store or str(Path(tempfile.mkdtemp()) / "synthetic")
    scale_file = Path(store, "scale.json")
    out = {"scale": args.scale, "bits": bits}
    # (a baseline's script before six players knows no --players: five are its default)
    seats = ["--players", str(args.players)] if args.players != 5 else []
    if not (scale_file.exists() and json.loads(scale_file.read_text()) == out):
        shutil.rmtree(store, ignore_errors=True)
        res = run([sys.executable, __file__, "--phase", "workers", "--store", store,
                   "--scale", str(args.scale), *seats], stderr=Path(store + ".workers.err"))
        out["workers"] = {**json.loads(res["stdout"]), "wall": round(res["wall"], 1),
                          "peak_mb": round(res["peak_mb"])}
        scale_file.write_text(json.dumps({"scale": args.scale, "bits": bits}))
    command = [sys.executable, __file__, "--phase", "driver", "--store", store, "--scale",
               str(args.scale), "--workers", str(args.workers), *seats]
    contenders = [("driver", None)] + ([("baseline", args.baseline)] if args.baseline else [])
    for name, commit in contenders:
        err = Path(f"{store}.{name}.err")     # beside the store: its attempts, or its error
        if commit is None:
            res = run(command, stderr=err)
        else:       # the baseline's own script and package, the same store
            with baseline(commit) as (tmp, env):
                res = run([sys.executable, str(tmp / "baseline" / "scripts" / "bench_driver.py"),
                           *command[2:]], env=env, stderr=err)
        out[name] = {**json.loads(res["stdout"]), "wall": round(res["wall"], 1),
                     "cpu": round(res["cpu"], 1), "peak_mb": round(res["peak_mb"])}
    if own:
        shutil.rmtree(Path(store).parent, ignore_errors=True)
    d = out["driver"]
    print(f"scale {args.scale}: {bits:,} bits, {d['primes']:,} primes in {d['batches']:,} batches")
    if "workers" in out:
        w = out["workers"]
        print(f"  workers' phase: {w['wall']:,.1f} s, peak {w['peak_mb']:,} MB")
    for name, commit in contenders:
        d = out[name]
        last = d["attempts"][-1]
        print(f"  {name if commit is None else 'baseline ' + commit}: {d['wall']:,.1f} s wall, "
              f"peak {d['peak_mb']:,} MB; commits {d['commit_seconds']:.1f} s, reads and folds "
              f"{d['read_fold_seconds']:.1f} s, {len(d['attempts'])} attempts "
              f"{d['attempt_seconds']:.1f} s (the last: {last['seconds']} s at "
              f"{last['bits']:,} bits: CRT {last['crt_seconds']} s, its groups "
              f"{last.get('groups_seconds', '-')} s; the first seat's "
              f"reconstruction {last.get('rr_seconds', '-')} s, lowest terms "
              f"{last.get('terms_seconds', '-')} s; {last.get('mb_before', '-')} MB before it, "
              f"{last.get('mb_peak', '-')} MB at most)")
    print(json.dumps(out))


def main_replay(args: argparse.Namespace) -> None:
    """``--replay STORE [--baseline COMMIT]``: each in a fresh process, this tree first."""
    if args.phase == "replay":
        print(json.dumps(replay(args.replay)))
        return
    command = [sys.executable, __file__, "--phase", "replay", "--replay", args.replay]
    out = {"store": args.replay}
    out["this"] = json.loads(run(command)["stdout"])
    if args.baseline:
        with baseline(args.baseline) as (_, env):
            out["baseline"] = json.loads(run(command, env=env)["stdout"])
        if out["baseline"]["digests"] != out["this"]["digests"]:
            raise SystemExit("this tree and the baseline found different fractions")
    for name in ("this", "baseline"):
        if name in out:
            r = out[name]
            more = "".join(f", {k.removesuffix('_seconds')} {r[k]:.1f} s"
                           for k in ("groups_seconds", "rr_seconds", "terms_seconds") if k in r)
            print(f"{name}: {r['batches']} batches, {r['bits']:,} bits: the attempt "
                  f"{r['seconds']:.1f} s (CRT {r['crt_seconds']:.1f} s{more})")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
