"""The ``crt`` engine's driver: batches of primes as tasks (Dask or this process),
residues in the run store, Chinese remaindering with early termination, certificate.

Batch k holds primes ``k*B .. (k+1)*B - 1`` of the run's prime sequence
(:func:`ladders.solver.engines.crt.crt_primes`, fixed by the run's seed), so a
batch means the same work in every session. After each batch the driver commits a
manifest that lists it (:mod:`ladders.checkpoints.crt`), folds its residues into the
running remainders, and tries a candidate denominator; the first candidate that passes
the certificate ends the run (batches still in flight are cancelled). Resuming reads
the committed batches back from the store and goes on.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import PrimeBatchEngine, SolveRequest, system_out_of_reach
from ladders.cluster.executor import BatchWork, Task

if TYPE_CHECKING:
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.session import Outcome
    from ladders.solver.problem import Problem

#: Primes per task: about 5 s of work on hasbro, against ~50 ms of store round trip.
BATCH_PRIMES = 32


class CrtEngine(PrimeBatchEngine):
    name = "crt"
    summary = "batches of primes as Dask tasks, Chinese remaindering, certified; resumable"
    options = frozenset({"checkpoint", "cluster", "executor", "seed", "table", "batch_primes"})
    cross = "elimination"

    def preference(self, problem: Problem) -> float | None:
        return 3.0

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")

    def out_of_reach(self, problem: Problem) -> str | None:
        return system_out_of_reach(problem)

    def solve(self, problem: Problem, request: SolveRequest, progress: Any,
              should_stop: Callable[[], bool]) -> Outcome:
        from ladders.checkpoints.store import RunStore
        from ladders.cluster.session import pick_executor, run_json, store_dir
        batch = request.batch_primes or BATCH_PRIMES
        executor = pick_executor(problem, request.executor, request.spec)
        seed = request.seed if request.seed is not None else random.SystemRandom().randrange(1 << 32)
        with store_dir(request.checkpoint) as root:
            token = f"{problem.system.digest()[:24]}-{seed}-{batch}"
            run = run_json(problem, self.name, executor, seed=seed, batch_primes=batch, crt_token=token)
            store = RunStore.create(root, run, extra={"batches": {}})
            return self.run(store, problem, request, executor, progress, should_stop)

    def run(self, store: RunStore, problem: Problem, request: SolveRequest, executor: str,
            progress: Any, should_stop: Callable[[], bool]) -> Outcome:
        return _run(store, problem, request, executor, progress, should_stop)


class CrtWork(BatchWork):
    """One session of a crt run (:class:`ladders.cluster.executor.Work`): remainders so
    far, and the certificate when it comes."""

    def __init__(self, store: RunStore) -> None:
        import numpy as np

        from ladders.checkpoints.crt import crt_system
        from ladders.solver.engines.crt import FormAccumulator
        from ladders.solver.engines.modular import combination_weights
        super().__init__(store)
        self.system, self.order, _ = crt_system(store)
        self.seed = int(store.run["seed"])
        self.size = int(store.run["batch_primes"])
        self.acc = FormAccumulator(self.system.columns,
                                   combination_weights(self.system.size, np.random.default_rng(self.seed)))
        self.tried: list[set[Any]] = [set() for _ in range(self.system.columns)]
        self.columns: dict[int, Any] = {}
        self.lifter: Any = None
        self.certified: list[Any] | None = None
        self._primes: list[int] = []
        self._sequence: Iterator[int] | None = None
        self.fold_committed()

    def primes(self, k: int) -> list[int]:
        """The primes of batch k."""
        from ladders.solver.engines.crt import crt_primes
        if self._sequence is None:
            self._sequence = crt_primes(self.seed)
        while len(self._primes) < (k + 1) * self.size:  # drawn once, not again per batch
            self._primes.append(next(self._sequence))
        return self._primes[k * self.size:(k + 1) * self.size]

    def fold(self, ref: Any) -> None:
        from ladders.checkpoints.crt import read_batch
        for p, residues in read_batch(self.store, ref):
            self.acc.add(p, residues)

    def bits(self) -> int:
        return int(self.acc.modulus.bit_length())

    def finished(self) -> bool:
        """Certify each column's current candidate denominator (:meth:`Lifter.settle`:
        a refused one is widened from as many p-adic digits as the remainders have bits)."""
        from ladders.solver.engines.modular import MARGIN_BITS, Lifter
        cands = self.acc.candidates(MARGIN_BITS)
        if cands is None:
            return False
        if self.lifter is None:
            self.lifter = Lifter.factor(self.system, self.order.tolist(), random.Random(self.seed))
        steps = -(-self.bits() // (self.lifter.lu.p.bit_length() - 1))
        for k, den in enumerate(cands):
            if k not in self.columns:
                col = self.lifter.settle(self.lifter.rhs(self.system, k), den, self.tried[k], steps, 0)
                if col is None:
                    return False
                self.columns[k] = col
        self.certified = [self.columns[k] for k in range(len(cands))]
        return True

    def task(self, item: Hashable) -> Task:
        from ladders.checkpoints.crt import run_crt_batch
        k = int(item)  # type: ignore[call-overload]
        token = self.store.run["crt_token"]
        return Task(run_crt_batch, (str(self.store.root), token, k, self.primes(k)),
                    key=f"ladders-crt-{token}-{k}", priority=-k)


def _run(store: RunStore, problem: Problem, request: SolveRequest, executor: str, progress: Any,
         should_stop: Callable[[], bool]) -> Outcome:
    from ladders.cluster.executor import run_dask, run_serial
    from ladders.cluster.session import ClusterStart, Outcome, connect_checked, locked, record
    from ladders.solver.checks.verify import certificate_report, verify_answer
    from ladders.solver.exact import FractionTable, bits_to_digits
    from ladders.solver.games.race import seats_from_values

    with locked(store):
        work = CrtWork(store)
        startup = 0.0

        def report() -> None:
            if progress is not None:
                progress(work.batches(), 0, bits_to_digits(work.acc.modulus.bit_length() // 2))

        t0 = time.perf_counter()
        if executor == "serial":
            interrupted = run_serial(work, should_stop, report)
        else:
            with ClusterStart(request.spec) as started:
                client, workers, startup = connect_checked(started, store)
                t0 += startup
                interrupted = run_dask(client, work, workers + 1, should_stop, report,
                                       request.spec.no_worker_limit)
        seconds = time.perf_counter() - t0
        out = Outcome(problem, [], seconds, executor, interrupted=interrupted, store=store.root,
                      tasks_run=work.batches() - work.before, tasks_total=work.batches(),
                      startup_seconds=startup, engine="crt")
        if interrupted:
            out.store_bytes = store.size_bytes()
            return out
        cols = work.certified
        assert cols is not None
        system = work.system
        out.seats = seats_from_values(system, problem.players, [c.value for c in cols])
        if request.table:
            values = cols[0].solution()
            out.table = FractionTable.from_values({system.labels[i]: values[i]
                                                   for i in range(system.size)})
        out.verified = verify_answer(problem, out.seats, primes=0,
                                     certificate=certificate_report(cols, work.lifter.rejected))
        out.details = {"primes": work.acc.primes, "batches": work.batches(),
                       "modulus_digits": bits_to_digits(work.acc.modulus.bit_length())}
        record(store, out, work.manifest.elapsed)
        return out


ENGINE = CrtEngine()
