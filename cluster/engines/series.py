"""The ``series`` engine's driver: races through one player's generating functions.

The mathematics is :mod:`ladders.solver.engines.series`: no race system is built, only
polynomials of one player's chain. Two players: the exact fraction over the rationals
in this process, certified by the whole table P(a, b) satisfying the race equations.
Three or more: every seat modulo word-size primes, batches of primes as tasks (in this
process, or on Dask), residues in the run store (:mod:`ladders.checkpoints.series`),
reconstructed at growing sizes and confirmed at primes not used to build them.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from ladders.cluster.engines import PrimeBatchEngine, SolveRequest
from ladders.cluster.executor import BatchWork, Task

if TYPE_CHECKING:
    from ladders.checkpoints.store import Manifest, RunStore
    from ladders.cluster.session import Outcome
    from ladders.solver.exact import mpq
    from ladders.solver.problem import Problem

#: Primes per task: a few seconds of work on the full board for 3 players; four
#: times as many when a prime costs more than :data:`HEAVY_PRIME` modelled operations
#: (4 players: ~30 s a task, and a store of ~500 batches instead of ~2,000, whose
#: manifests list every batch).
BATCH_PRIMES = 256
HEAVY_PRIME = 5e6


def default_batch(plan: Any) -> int:
    """Primes per batch for ``plan`` when ``--batch-primes`` is not given."""
    from ladders.solver.engines.series import make_split, split_cost
    cost = split_cost(make_split(plan.data, plan.players, plan.split))
    return BATCH_PRIMES * (4 if cost > HEAVY_PRIME else 1)
#: Decimal digits to which the Markov bounds must agree for 3 or more players (the
#: answer has many more; the bounds are an independent check of its leading digits).
BOUNDS_DIGITS = 1000
#: At most this long for those bounds (boards where they converge slowly report the
#: digits reached instead: a slow board must not hold the answer back for hours).
BOUNDS_SECONDS = 60.0


class SeriesEngine(PrimeBatchEngine):
    name = "series"
    summary = ("one player's generating functions, no race system (2 players: exact over "
               "the rationals, certified; more: primes as Dask tasks, resumable)")
    options = frozenset({"checkpoint", "cluster", "executor", "seed", "table", "batch_primes"})
    cross = "modular"

    def preference(self, problem: Problem) -> float | None:
        return 0.0

    def describe(self, problem: Problem) -> str:
        from ladders.solver.engines.series import plan_series
        plan = plan_series(problem.chain, problem.players)
        return (f"{problem.board.name}: {problem.players}-player race through one player's "
                f"generating functions ({len(problem.chain.states)} states; polynomials of "
                f"degree {plan.degree_a:,} and {plan.degree_b:,})")

    def digest(self, problem: Problem) -> str:
        from ladders.solver.engines.series import plan_series
        return plan_series(problem.chain, problem.players).digest

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")
        if problem.players == 2 and ((request.given() & {"checkpoint", "cluster", "batch_primes"})
                                     or request.executor == "dask"):
            raise ValueError("two players take the series engine about a second in this "
                             "process: --checkpoint, --scheduler, --workers, --executor dask "
                             "and --batch-primes are for 3 or more players")

    def solve(self, problem: Problem, request: SolveRequest, progress: Any,
              should_stop: Callable[[], bool]) -> Outcome:
        if problem.players == 2:
            return _two_players(problem, request.table)
        from ladders.checkpoints.store import RunStore
        from ladders.cluster.session import run_json, store_dir
        from ladders.solver.engines.series import plan_series
        plan = plan_series(problem.chain, problem.players)
        executor = request.executor
        if executor == "auto":  # a cluster pays off when there are many primes to do
            executor = "dask" if (plan.degree_a * plan.degree_b > 100_000 or request.spec.remote
                                  or request.spec.workers) else "serial"
        seed = request.seed if request.seed is not None else random.SystemRandom().randrange(1 << 32)
        batch = request.batch_primes or default_batch(plan)
        with store_dir(request.checkpoint) as root:
            token = f"{plan.digest[:24]}-{seed}-{batch}"
            run = run_json(problem, self.name, executor, system_digest=plan.digest,
                           unknowns=plan.degree_a, seed=seed, batch_primes=batch,
                           series_token=token, split=plan.split)
            store = RunStore.create(root, run, extra={"batches": {}})
            return self.run(store, problem, request, executor, progress, should_stop)

    def run(self, store: RunStore, problem: Problem, request: SolveRequest, executor: str,
            progress: Any, should_stop: Callable[[], bool]) -> Outcome:
        return _run(store, problem, request, executor, progress, should_stop)

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """The batch figures, and the size of the polynomials (a series run has no
        race system: its run.json's ``unknowns`` is the degree of ``chi_a``)."""
        from ladders.solver.engines.series import plan_series
        from ladders.solver.problem import Problem
        problem = Problem.from_json(store.run["problem"])
        plan = plan_series(problem.chain, problem.players)
        return {**super().status(store, manifest),
                "size": f"polynomials of degree {plan.degree_a:,} and {plan.degree_b:,}"}

    def recheck(self, problem: Problem, seats: list[mpq], primes: int,
                seed: int | None) -> dict[str, Any]:
        """The series residues of every seat at fresh random primes."""
        from ladders.solver.checks.residue_check import check_series_residues
        return check_series_residues(problem.chain, problem.players, seats, primes, seed)

    def seats_in_memory(self, problem: Problem) -> list[mpq]:
        if problem.players == 2:
            from ladders.solver.engines.series import two_player_certified
            p = two_player_certified(problem.chain).value
            return [p, 1 - p]
        from ladders.solver.engines.series import race_exact
        return list(race_exact(problem.chain, problem.players).seats)


class SeriesWork(BatchWork):
    """One session of a series run (:class:`ladders.cluster.executor.Work`): the
    residues so far in a reconstruction stream, the fractions when they come."""

    def __init__(self, store: RunStore) -> None:
        from ladders.checkpoints.series import series_plan
        from ladders.solver.engines.series import engine_stream
        super().__init__(store)
        self.plan = series_plan(store)
        self.seed = int(store.run["seed"])
        self.size = int(store.run["batch_primes"])
        self.stream = engine_stream(self.plan)
        self._primes: list[int] = []
        self._sequence: Any = None
        self.compute_seconds = 0.0
        with self.stream.deferred():
            self.fold_committed()

    def primes(self, k: int) -> list[int]:
        """The primes of batch k (the run's seed fixes the sequence; drawn once)."""
        from ladders.solver.engines.series import ntt_primes
        if self._sequence is None:
            self._sequence = ntt_primes(self.seed, self.plan.two_adicity)
        while len(self._primes) < (k + 1) * self.size:
            self._primes.append(next(self._sequence))
        return self._primes[k * self.size:(k + 1) * self.size]

    def fold(self, ref: Any) -> None:
        from ladders.checkpoints.series import read_batch
        primes, residues, valid = read_batch(self.store, ref)
        self.stream.add([int(p) for p in primes], residues, valid)

    def bits(self) -> int:
        return self.stream.bits

    def finished(self) -> bool:
        return self.stream.values is not None

    def task(self, item: Hashable) -> Task:
        from ladders.checkpoints.series import run_series_batch
        k = int(item)  # type: ignore[call-overload]
        token = self.store.run["series_token"]
        return Task(run_series_batch, (str(self.store.root), token, k, self.primes(k)),
                    key=f"ladders-series-{token}-{k}", priority=-k)

    def accept(self, item: Hashable, receipt: dict[str, Any], seconds: float) -> None:
        super().accept(item, receipt, seconds)
        self.compute_seconds += float(receipt.get("compute_seconds", 0.0))


class _Bounds(threading.Thread):
    """Markov bounds that agree to :data:`BOUNDS_DIGITS` digits (in fixed point:
    :func:`ladders.solver.checks.bounds.interval_bounds`), computed in the driver while
    the workers compute residues (it only waits for receipts meanwhile)."""

    def __init__(self, problem: Problem, digits: int) -> None:
        super().__init__(name="ladders-bounds", daemon=True)
        self.problem, self.digits = problem, digits
        self.bounds: Any = None
        self.seconds = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        from ladders.solver.checks.bounds import interval_bounds
        t0 = time.perf_counter()
        try:
            self.bounds = interval_bounds(self.problem.chain, self.problem.players, self.digits,
                                          seconds=BOUNDS_SECONDS)
        except BaseException as exc:  # raised again in the driver's thread by result()
            self.error = exc
        self.seconds = time.perf_counter() - t0

    def result(self) -> Any:
        if self.ident is None:
            self.run()
        else:
            self.join()
        if self.error is not None:
            raise self.error
        return self.bounds


def _two_players(problem: Problem, table: bool) -> Outcome:
    """P(0,0) over the rationals, its solve step certified exactly; with ``table`` the
    whole table P(a, b) instead, certified against the race equations in integers (the
    turn system is nonsingular, so the table that satisfies them is the table, and
    P(0,0) is its entry: the solve over Q would add nothing to that proof)."""
    from ladders.cluster.session import Outcome
    from ladders.solver.checks.verify import verify_answer
    from ladders.solver.engines.series import check_table, two_player_certified, two_player_table
    from ladders.solver.exact import FractionTable, bits_to_digits, mpq
    chain = problem.chain
    t0 = time.perf_counter()
    out_table = None
    if table:
        tab = two_player_table(chain)
        n, start = len(chain.states), chain.start_index
        passed = check_table(chain, tab.numerators, tab.denominator)
        p = mpq(tab.numerators[start * n + start], tab.denominator)
        stages = {"table": round(time.perf_counter() - t0, 3)}
        out_table = FractionTable([(a, b) for a in chain.states for b in chain.states],
                                  tab.lowest, tab.lowest_denominators, tab.numerator_texts)
        what = ("the table P(a,b) satisfies d P(a,b) + sum C[a,a'] P(b,a') = d for every (a, b), "
                "in integers; P(0,0) is its entry")
    else:
        result = two_player_certified(chain)
        p, passed = result.value, result.certified
        stages = {k: round(v, 3) for k, v in result.seconds.items()}
        what = "Y D = N (mod chi) exactly over Q: the solve step of P = L(Y)"
    certificate = {"check": "certificate", "passed": passed, "what": what,
                   "denominator_digits": bits_to_digits(p.denominator.bit_length())}
    seats = [p, 1 - p]
    seconds = time.perf_counter() - t0
    verified = verify_answer(problem, seats, primes=0, certificate=certificate)
    return Outcome(problem, seats, seconds, "serial", verified, engine="series", table=out_table,
                   details={"stages": stages, "states": len(chain.states)},
                   tasks_run=1, tasks_total=1)


def _run(store: RunStore, problem: Problem, request: SolveRequest, executor: str, progress: Any,
         should_stop: Callable[[], bool]) -> Outcome:
    from ladders.cluster.engines import cross_report
    from ladders.cluster.executor import run_dask, run_serial
    from ladders.cluster.session import ClusterStart, Outcome, connect_checked, locked, record
    from ladders.solver.checks.verify import verify_answer
    from ladders.solver.engines.series import error_bound
    from ladders.solver.exact import bits_to_digits

    with locked(store):
        work = SeriesWork(store)
        bounds = _Bounds(problem, BOUNDS_DIGITS)
        startup = 0.0

        def report() -> None:
            if progress is not None:
                progress(work.batches(), 0, bits_to_digits(work.stream.bits // 2))

        t0 = time.perf_counter()
        if executor == "serial":
            interrupted = run_serial(work, should_stop, report)
        else:
            with ClusterStart(request.spec) as started:
                client, workers, startup = connect_checked(started, store)
                t0 += startup
                bounds.start()
                interrupted = run_dask(client, work, workers + 1, should_stop, report,
                                       request.spec.no_worker_limit)
                started.release()  # the cluster closes while this process verifies
        seconds = time.perf_counter() - t0
        out = Outcome(problem, [], seconds, executor, interrupted=interrupted, store=store.root,
                      tasks_run=work.batches() - work.before, tasks_total=work.batches(),
                      startup_seconds=startup, engine="series")
        if interrupted:
            out.store_bytes = store.size_bytes()
            return out
        stream = work.stream
        out.seats = list(stream.values or [])
        t1 = time.perf_counter()
        confirmation = {"check": "confirmation", "passed": True,
                        "what": f"every seat's fraction agrees with the residues at {stream.holdout} "
                                "primes not used to build it, and the seats sum to 1 exactly",
                        "held_out_primes": stream.holdout, "rejected_candidates": stream.rejected,
                        "error_probability_below": error_bound(stream)}
        out.verified = verify_answer(problem, out.seats, primes=0, certificate=confirmation,
                                     cross=cross_report(problem, out.seats, "series"),
                                     digits=BOUNDS_DIGITS, bounds=bounds.result())
        out.verified["bounds"]["seconds"] = round(bounds.seconds, 3)
        out.details = {"primes": len(stream.primes), "primes_skipped": len(stream.skipped),
                       "batches": work.batches(), "split": work.plan.split,
                       "degrees": [work.plan.degree_a, work.plan.degree_b],
                       "modulus_digits": bits_to_digits(stream.bits),
                       "reconstruction_attempts": stream.attempts,
                       "stages": {"residues_on_workers": round(work.compute_seconds, 3),
                                  "reconstruction": round(stream.attempt_seconds, 3),
                                  "bounds": round(bounds.seconds, 3),
                                  "verify": round(time.perf_counter() - t1, 3)}}
        record(store, out, work.manifest.elapsed)
        return out


ENGINE = SeriesEngine()
