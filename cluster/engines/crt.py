"""The ``crt`` engine's driver: batches of primes as tasks (Dask or this process),
residues in the run store, Chinese remaindering with early termination, certificate.

The batches, their manifests and the loop are :mod:`ladders.cluster.engines.prime_batches`;
here is what is the crt engine's own: the system solved modulo each prime of a batch
(:func:`ladders.checkpoints.crt.run_crt_batch`), the residues folded into running
remainders, and the conclusion: a candidate denominator certified by p-adic lifting.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import (Answer, PlanRow, SolveRequest, human_seconds,
                                     system_out_of_reach)
from ladders.cluster.engines.prime_batches import BatchWork, PrimeBatchEngine, batch_option

if TYPE_CHECKING:
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.manifests import Manifest
    from ladders.checkpoints.store import RunStore
    from ladders.solver.problem import Problem

#: Primes per task: about 5 s of work on hasbro, against ~50 ms of store round trip.
BATCH_PRIMES = 32


class CrtWork(BatchWork):
    """One session of a crt run: remainders so far, and the certificate when it comes."""

    def __init__(self, store: RunStore) -> None:
        import numpy as np
        from ladders.checkpoints.crt import crt_system
        from ladders.solver.engines.crt import FormAccumulator
        from ladders.solver.engines.modular import combination_weights
        super().__init__(store)
        self.system, self.order, _ = crt_system(store)
        self.acc = FormAccumulator(self.system.columns,
                                   combination_weights(self.system.size, np.random.default_rng(self.seed)))
        self.tried: list[set[Any]] = [set() for _ in range(self.system.columns)]
        self.columns: dict[int, Any] = {}
        self.lifter: Any = None
        self.certified: list[Any] | None = None
        self.start()

    def sequence(self) -> Iterator[int]:
        from ladders.solver.engines.crt import crt_primes
        return crt_primes(self.seed)

    def batch_task(self, k: int, primes: list[int]) -> Callable[..., dict[str, Any]]:
        from ladders.checkpoints.crt import run_crt_batch
        return run_crt_batch

    def fold(self, ref: SegmentRef) -> None:
        from ladders.checkpoints.crt import read_batch
        for p, residues in read_batch(self.store, ref):
            self.acc.add(p, residues)

    def bits(self) -> int:
        return int(self.acc.modulus.bit_length())

    def conclude(self) -> bool:
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


class CrtEngine(PrimeBatchEngine):
    name = "crt"
    work_type = CrtWork
    summary = "batches of primes as Dask tasks, Chinese remaindering, certified; resumable"
    options = (batch_option(f"{BATCH_PRIMES}, about 5 s of work on hasbro"),)
    cross = "elimination"

    def preference(self, problem: Problem) -> float | None:
        return 3.0

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")

    def out_of_reach(self, problem: Problem) -> str | None:
        return system_out_of_reach(problem)

    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        from ladders.cluster.engines import chain_row, system_too_big
        from ladders.solver.estimate import crt_figures
        if problem.pieces is None:
            return chain_row(self, problem)
        fig = crt_figures(problem.pieces, problem.players, workers)
        bound = "at least " if fig["lower_bound"] else ""
        return PlanRow(f"{fig['primes']:,} primes, one LU each: {bound}{human_seconds(fig['seconds'])} "
                       f"on {workers} workers", fig, fig["seconds"], scales=True,
                       lower_bound=fig["lower_bound"], blocked=system_too_big(fig["size"]))

    def default_batch(self, problem: Problem) -> int:
        return BATCH_PRIMES

    def run_fields(self, problem: Problem) -> dict[str, Any]:
        """The size of the system, for ``ladders status``."""
        return {"unknowns": problem.system.size, "nonzeros": problem.system.nnz}

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """The batch figures, and the system's size (run.json; a store written before
        it recorded it, from the problem: its unknowns are counted, not built)."""
        unknowns = store.run.get("unknowns")
        if not isinstance(unknowns, int):
            from ladders.solver.problem import problem_from_json
            unknowns = problem_from_json(store.run["problem"]).unknowns
        return {**super().status(store, manifest), "unknowns": unknowns,
                "size": f"{unknowns:,} unknowns"}

    def answer(self, work: CrtWork, problem: Problem, request: SolveRequest) -> Answer:
        from ladders.solver.engines.modular import certificate_report
        from ladders.solver.exact import FractionTable, bits_to_digits
        cols = work.certified
        assert cols is not None and work.lifter is not None
        system = work.system
        table = None
        if request.table:
            values = cols[0].solution()
            table = FractionTable.from_values({system.labels[i]: values[i] for i in range(system.size)})
        values = [c.value for c in cols]
        seats = (problem.seats_from_solution(values, lambda k: cols[k].solution())
                 if problem.every else problem.seats_from_values(values))
        return Answer(seats,
                      certificate_report(cols, work.lifter.rejected), table,
                      {"primes": work.acc.primes, "batches": work.batches(),
                       "modulus_digits": bits_to_digits(work.acc.modulus.bit_length())})


ENGINE = CrtEngine()
