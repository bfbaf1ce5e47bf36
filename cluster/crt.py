"""The ``crt`` engine's driver: batches of primes as Dask tasks (or in this process),
residues in the run store, Chinese remaindering with early termination, certificate.

Batch k holds primes ``k*B .. (k+1)*B - 1`` of the run's prime sequence
(:func:`solver.crt.prime_sequence`, fixed by the run's seed), so a batch means the same
work in every session. After each batch the driver commits a manifest that lists it,
folds its residues into the running remainders, and tries a candidate denominator; the
first candidate that passes the certificate ends the run (batches still in flight are
cancelled). Resuming reads the committed batches back from the store and goes on.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from checkpoints.residues import (clear_leftovers, committed_batches, crt_system, read_batch,
                                  run_crt_batch, with_batch)
from checkpoints.store import Manifest, RunStore
from cluster.executor import ClusterSpec, check_workers, connect
from cluster.run import (IN_MEMORY_LIMIT, Problem, SolveOutcome, _mark_complete, _run_json,
                         _store_dir, bits_to_digits, certificate_report, verify_answer)
from solver.crt import FormAccumulator, prime_sequence
from solver.dixon import MARGIN_BITS, CertifiedColumn, Lifter, combination_weights
from solver.race import seats_from_values

#: Primes per task: about 5 s of work on hasbro, against ~50 ms of store round trip.
BATCH_PRIMES = 32


def solve_crt(problem: Problem, *, checkpoint: str | None, spec: ClusterSpec, executor: str,
              seed: int | None, batch_primes: int | None, table: bool,
              progress: Callable[[int, int, int], None] | None,
              should_stop: Callable[[], bool]) -> SolveOutcome:
    """A new crt run on ``problem`` (see the module docstring)."""
    batch = batch_primes or BATCH_PRIMES
    if executor == "auto":
        small = problem.system.size <= IN_MEMORY_LIMIT and not spec.remote and not spec.workers
        executor = "serial" if small else "dask"
    seed = seed if seed is not None else random.SystemRandom().randrange(1 << 32)
    with _store_dir(checkpoint) as root:
        token = f"{problem.system.digest()[:24]}-{seed}-{batch}"
        run = _run_json(problem, "crt", executor, seed=seed, batch_primes=batch, crt_token=token)
        store = RunStore.create(root, run, extra={"batches": {}})
        return _run(store, problem, spec, executor, table, progress, should_stop)


def resume_crt(store: RunStore, problem: Problem, *, spec: ClusterSpec, executor: str | None,
               progress: Callable[[int, int, int], None] | None,
               should_stop: Callable[[], bool]) -> SolveOutcome:
    """Continue a crt run from its committed batches."""
    return _run(store, problem, spec, executor or store.run["executor"], False, progress, should_stop)


def crt_progress(store: RunStore, manifest: Manifest) -> tuple[int, int, dict[str, Any]]:
    """``(batches done, 0, extra status)`` of a crt run: how many batches it will take is
    known only when the answer is certified (each prime adds about 8.4 digits)."""
    done = len(committed_batches(manifest))
    return done, 0, {"batches_done": done, "primes_done": done * int(store.run["batch_primes"])}


class _Run:
    """One session of a crt run: remainders so far, and the certificate when it comes."""

    def __init__(self, store: RunStore, problem: Problem) -> None:
        self.store = store
        self.problem = problem
        self.system, self.order, _ = crt_system(store)
        self.seed = int(store.run["seed"])
        self.weights = combination_weights(self.system.size, np.random.default_rng(self.seed))
        self.acc = FormAccumulator(self.system.columns, self.weights)
        self.manifest = store.current()
        self.tried: set[tuple[int, ...]] = set()
        self.lifter: Lifter | None = None
        self.rejected = 0
        self.certified: list[CertifiedColumn] | None = None
        self._primes: list[int] = []
        for ref in committed_batches(self.manifest).values():
            self._fold(ref)

    def primes(self, k: int) -> list[int]:
        """The primes of batch k."""
        size = int(self.store.run["batch_primes"])
        if len(self._primes) < (k + 1) * size:
            self._primes = prime_sequence(self.seed, (k + 1) * size)
        return self._primes[k * size:(k + 1) * size]

    def next_batch(self, in_flight: set[int]) -> int:
        taken = set(committed_batches(self.manifest)) | in_flight
        k = 0
        while k in taken:
            k += 1
        return k

    def _fold(self, ref: Any) -> None:
        for p, residues in read_batch(self.store, ref):
            self.acc.add(p, residues)

    def commit(self, receipt: dict[str, Any], seconds: float) -> None:
        """Commit a finished batch, then fold its residues in."""
        before = committed_batches(self.manifest)
        if receipt["k"] in before:
            return  # ran twice: the committed one stays
        new = with_batch(self.manifest, receipt, seconds, 0)
        ref = committed_batches(new)[receipt["k"]]
        self._fold(ref)
        new.max_bits = int(self.acc.modulus.bit_length())
        self.store.commit(new)
        self.manifest = new

    def try_certify(self) -> bool:
        """Certify the current candidate denominators, if there is a new one."""
        cands = self.acc.candidates(MARGIN_BITS)
        if cands is None or tuple(int(c) for c in cands) in self.tried:
            return False
        self.tried.add(tuple(int(c) for c in cands))
        if self.lifter is None:
            self.lifter = Lifter.factor(self.system, self.order.tolist(), random.Random(self.seed))
        cols = []
        for k, den in enumerate(cands):
            col = self.lifter.certify(self.lifter.rhs(self.system, k), den)
            if col is None:
                self.rejected += 1
                return False
            cols.append(col)
        self.certified = cols
        return True


def _run(store: RunStore, problem: Problem, spec: ClusterSpec, executor: str, table: bool,
         progress: Callable[[int, int, int], None] | None,
         should_stop: Callable[[], bool]) -> SolveOutcome:
    store.acquire_lock()
    try:
        run = _Run(store, problem)
        clear_leftovers(store, run.manifest)
        t0 = time.perf_counter()
        startup = 0.0
        before = len(committed_batches(run.manifest))

        def report() -> None:
            if progress is not None:
                progress(len(committed_batches(run.manifest)), 0,
                         bits_to_digits(run.acc.modulus.bit_length() // 2))

        if executor == "serial":
            interrupted = _drive_serial(run, should_stop, report)
        else:
            with connect(spec) as client:
                workers = check_workers(client, str(store.root.resolve()))
                startup = time.perf_counter() - t0
                t0 += startup
                interrupted = _drive_dask(client, run, workers + 1, should_stop, report)
        seconds = time.perf_counter() - t0
        ran = len(committed_batches(run.manifest)) - before
        out = SolveOutcome(problem, [], seconds, executor, interrupted=interrupted, store=store.root,
                           tasks_run=ran, tasks_total=len(committed_batches(run.manifest)),
                           startup_seconds=startup, engine="crt")
        if interrupted:
            out.store_bytes = store.size_bytes()
            return out
        cols = run.certified
        assert cols is not None
        system = run.system
        out.seats = seats_from_values(system, problem.players, [c.value for c in cols])
        if table:
            values = cols[0].solution()
            out.table = {system.labels[i]: values[i] for i in range(system.size)}
        out.verified = verify_answer(problem, out.seats, primes=0,
                                     certificate=certificate_report(cols, run.rejected))
        primes = run.acc.primes
        out.details = {"primes": primes, "batches": len(committed_batches(run.manifest)),
                       "modulus_digits": bits_to_digits(run.acc.modulus.bit_length())}
        _mark_complete(store, out, run.manifest.elapsed)
        out.store_bytes = store.size_bytes()
        return out
    finally:
        store.release_lock()


def _drive_serial(run: _Run, should_stop: Callable[[], bool], report: Callable[[], None]) -> bool:
    """Batches one after another in this process; True if stopped before certified."""
    while not run.try_certify():
        if should_stop():
            return True
        k = run.next_batch(set())
        t0 = time.perf_counter()
        receipt = run_crt_batch(str(run.store.root), run.store.run["crt_token"], k, run.primes(k))
        run.commit(receipt, time.perf_counter() - t0)
        report()
    return False


def _drive_dask(client: Any, run: _Run, window: int, should_stop: Callable[[], bool],
                report: Callable[[], None]) -> bool:
    """Keep ``window`` batches in flight; commit each as it finishes; True if stopped."""
    from distributed import wait

    root, token = str(run.store.root), run.store.run["crt_token"]
    in_flight: dict[Any, int] = {}
    clock = time.perf_counter()
    try:
        while not run.try_certify():
            if should_stop():
                return True
            while len(in_flight) < window:
                k = run.next_batch(set(in_flight.values()))
                fut = client.submit(run_crt_batch, root, token, k, run.primes(k),
                                    key=f"ladders-crt-{token}-{k}", pure=False, priority=-k)
                in_flight[fut] = k
            try:
                finished, _ = wait(list(in_flight), timeout=0.5, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            for fut in sorted(finished, key=in_flight.get):
                in_flight.pop(fut)
                receipt = fut.result()  # a task's exception surfaces here, with its message
                now = time.perf_counter()
                run.commit(receipt, now - clock)
                clock = now
            report()
        return False
    finally:
        if in_flight:
            client.cancel(list(in_flight))
