"""The ``series`` engine's driver: races through one player's generating functions.

The mathematics is :mod:`ladders.solver.engines.series`: no race system is built, only
polynomials of one player's chain. Two players: the exact fraction over the rationals
in this process, certified by the whole table P(a, b) satisfying the race equations.
Three or more: every seat modulo word-size primes, batches of primes as tasks (in this
process, or on Dask; :mod:`ladders.cluster.engines.prime_batches`), residues in the
run store (:mod:`ladders.checkpoints.series`), reconstructed at growing sizes and
confirmed at primes not used to build them.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from ladders.cluster.engines import (CLUSTER_SIZES, DAY, Answer, Engine, PlanRow,
                                     SolveRequest, busy_note, get_engine, human_seconds)
from ladders.cluster.engines.prime_batches import BatchWork, PrimeBatchEngine, batch_option
from ladders.cluster.loops import Item, OneStep

if TYPE_CHECKING:
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.manifests import Manifest
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.exact import mpq
    from ladders.solver.engines.series.reconstruct import Candidate, ReconstructionStream
    from ladders.solver.problem import Problem

#: Primes per task: about half a second of work on the full board for 3 players;
#: four times as many when a prime costs more than :data:`HEAVY_PRIME` modelled units
#: (``split_cost``, about 3.4 ms; 4 players: ~7 s a task, and a store of ~500 batches
#: instead of ~2,000). 1,024 primes for 3 players too were measured at 33.0-43.3 s end
#: to end against 38.5-42.2 s: the attempts that run beside the loop let more whole
#: batches in, so no gain could be shown.
BATCH_PRIMES = 256
HEAVY_PRIME = 2e6
#: Decimal digits to which the Markov bounds must agree for 3 or more players (the
#: answer has many more; the bounds are an independent check of its leading digits).
BOUNDS_DIGITS = 1000
#: At most this long for those bounds (boards where they converge slowly report the
#: digits reached instead: a slow board must not hold the answer back for hours).
BOUNDS_SECONDS = 60.0
#: Runs whose modulus is expected below this many bits attempt in line, in this process
#: (3 players on hasbro: the CRT of 10,240 primes and the checks, 0.22 s): beside the
#: loop, with the groups as tasks reading the store, the batches that kept coming during
#: the last attempt were wasted (44 batches where 40 were needed).
INLINE_BITS = 4_000_000
#: Modelled multiply-adds of one prime (degrees a x b) beyond which a run without a
#: store or cluster asked for still goes to a local Dask cluster: many primes to do.
DASK_DEGREES = 100_000


class SeriesWork(BatchWork):
    """One session of a series run: the residues so far in a reconstruction stream, the
    fractions when they come.

    On a Dask cluster the reconstruction attempts run beside the loop (a thread of this
    process, the tree below the groups as tasks on the workers: :func:`group_mapper`),
    so that the workers go on with batches while an attempt at millions of digits runs;
    in this process (serial), or when the modulus stays below :data:`INLINE_BITS`, an
    attempt runs when it is due, between two batches.
    """

    #: a local cluster's workers start with the batch task and its kernels loaded
    preload = ("ladders.checkpoints.series", "ladders.solver.engines.series.warm")

    def __init__(self, store: RunStore) -> None:
        from ladders.checkpoints.series import series_plan
        from ladders.solver.engines.series import engine_stream
        super().__init__(store)
        self.plan = series_plan(store)
        self.stream = engine_stream(self.plan)
        self.compute_seconds = 0.0
        self._bits: dict[int, float] = {}
        self._attempt: Attempt | None = None
        self.start()

    def start(self) -> None:
        """Fold the committed batches; the first attempt comes from :meth:`finished`,
        once the loop runs (on a resumed cluster run, beside it)."""
        self.fold_committed()

    def attach(self, client: Any) -> None:
        super().attach(client)
        if not self.inline():
            self.stream.mapper = group_mapper(client, self.store)
            self.stream.let_go_of_residues()

    def inline(self) -> bool:
        """Whether attempts run in line: no cluster, or a small modulus."""
        return self.client is None or self.stream.expected_bits < INLINE_BITS

    def sequence(self) -> Iterator[int]:
        from ladders.solver.engines.series import ntt_primes
        return ntt_primes(self.seed, self.plan.two_adicity, self.plan.multiple)

    def batch_task(self, k: int, primes: list[int]) -> Callable[..., dict[str, Any]]:
        from ladders.checkpoints.series import run_series_batch
        return run_series_batch

    def ready(self, running: set[Item], limit: int) -> list[Item]:
        """The next batches; but where attempts run in line, none beyond the bits of the
        attempt at the size the plan expects (the first at or past ``expected_bits``),
        which then runs on cores that batches of no use would have shared (3 players on
        hasbro: the attempt came with two such batches in flight). The batches in
        flight and those received count with all their primes, as if valid; with
        nothing in flight one batch always goes (skipped primes can leave the bits
        short of that count). The smaller attempts on the way, and those after a failed
        one at that size, keep every worker busy as before."""
        items = super().ready(running, limit)
        stream = self.stream
        if (not self.inline() or stream.values is not None or stream.expected_bits <= 0
                or stream.next_bits < stream.expected_bits or stream.bits >= stream.expected_bits):
            return items
        flying = set(running) | {r["k"] for r, _ in self.pending}
        have = stream.bits + sum(self._batch_bits(int(k)) for k in flying)  # type: ignore[call-overload]
        out: list[Item] = []
        for k in items:
            if have >= stream.next_bits and (out or flying):
                break
            out.append(k)
            have += self._batch_bits(int(k))  # type: ignore[call-overload]
        return out

    def _batch_bits(self, k: int) -> float:
        """``log2`` of the product of batch k's primes."""
        if k not in self._bits:
            self._bits[k] = sum(math.log2(q) for q in self.primes(k))
        return self._bits[k]

    def fold(self, ref: SegmentRef) -> None:
        from ladders.checkpoints.series import read_batch
        primes, residues, valid = read_batch(self.store, ref)
        self.stream.add(primes, residues, valid, source=ref.to_json(), attempt=False)

    def bits(self) -> int:
        return self.stream.bits

    def figures(self) -> tuple[int, int, int]:
        """Batches, the batches expected in all (the modulus the plan expects the
        succeeding attempt at, :meth:`ReconstructionStream.final_bits`, at the bits a
        batch has brought so far; one more than done once that is passed), and the
        digits of a fraction the modulus could give so far: half its own, or all of them
        over the denominator multiple (three players)."""
        from ladders.solver.estimate import SERIES_PRIME_BITS
        from ladders.solver.exact import bits_to_digits
        stream = self.stream
        done = self.batches()
        total = 0
        if stream.expected_bits > 0:
            per = stream.bits / done if done and stream.bits else SERIES_PRIME_BITS * self.size
            total = max(math.ceil(stream.final_bits() / per), done + (stream.values is None))
        bits = stream.bits if stream.multiple else stream.bits // 2
        return done, total, bits_to_digits(bits)

    def tail_seconds(self) -> float | None:
        """The attempt expected to succeed: from the attempts made so far
        (:meth:`~ReconstructionStream.attempt_seconds_at`), else the cost model's
        (:func:`~ladders.solver.estimate.tail_seconds`)."""
        from ladders.solver.estimate import tail_seconds
        stream = self.stream
        if stream.values is not None:
            return None
        bits = stream.final_bits()
        seconds = stream.attempt_seconds_at(bits)
        if seconds is None:
            seconds = tail_seconds(bits, stream.multiple)
        running = self._attempt
        if running is not None and running.bits >= bits:    # that attempt is under way
            seconds = max(0.0, seconds - (time.monotonic() - running.started))
        return seconds

    def conclude(self) -> bool:
        """Take a finished attempt's outcome; start the next one if it is due (beside
        the loop on a cluster, here otherwise). The run ends once the stream holds
        fractions confirmed at primes they were not built from."""
        stream = self.stream
        if self._attempt is not None:
            if not self._attempt.finished():
                return False
            stream.record(self._attempt.outcome())
            self._attempt = None
        if stream.values is None and stream.due():
            snapshot = stream.snapshot()
            if self.inline():
                stream.record(stream.try_snapshot(snapshot))
            else:
                # the groups go down their own paths where the workers are many enough
                from ladders.solver.engines.series.subproducts import hand_over
                workers = len(self.client.scheduler_info().get("workers", {}))
                stream.stop_at = hand_over(stream.groups, workers, stream.threads)
                self._attempt = Attempt(stream, snapshot)
        return stream.values is not None

    def finished(self) -> bool:
        if not self.done:
            self.done = self.conclude()
        return self.done

    def accept(self, item: Item, receipt: dict[str, Any], seconds: float) -> None:
        super().accept(item, receipt, seconds)
        self.compute_seconds += float(receipt.get("compute_seconds", 0.0))


class Attempt:
    """A reconstruction attempt in a thread of the driver, beside the loop.

    A daemon thread: an interrupted run does not wait for it (the attempt is redone on
    resume). gmpy2 holds the GIL during one operation, so the loop may wait for the
    largest multiplication (seconds at a billion bits) but not for the attempt.
    """

    def __init__(self, stream: ReconstructionStream, snapshot: Any) -> None:
        #: when it started, and the size of its modulus
        self.started = time.monotonic()
        self.bits = stream.bits
        self._outcome: Candidate | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(stream, snapshot),
                                        name="ladders-reconstruction", daemon=True)
        self._thread.start()

    def _run(self, stream: ReconstructionStream, snapshot: Any) -> None:
        try:
            self._outcome = stream.try_snapshot(snapshot)
        except BaseException as exc:  # handed to the loop's thread by outcome()
            self._error = exc

    def finished(self) -> bool:
        return not self._thread.is_alive()

    def outcome(self) -> Candidate:
        """The attempt's candidate (its error, raised in the caller's thread)."""
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome


def group_mapper(client: Any, store: RunStore) -> Callable[..., list[list[Any]]]:
    """The stream's mapper on a cluster: each group's lower tree a task that reads its
    batches from the store (``Group.source``), ahead of the batches in the queue. The
    groups' tops share their ancestors' remainders and the nodes of their paths
    (``subproducts.Top``: about 400 MB at five players' full size): each of those is
    scattered to the workers once, and the tasks are given their futures."""
    from ladders.checkpoints.series import series_group_terms

    def mapper(groups: Any, tops: Any) -> list[list[Any]]:
        token = store.run["token"]
        shared: dict[int, Any] = {}
        for top in tops:
            for value in (top.rem, *top.path):
                shared.setdefault(id(value), value)
        remote = dict(zip(shared, client.scatter(list(shared.values()), hash=False)))
        futures = [client.submit(series_group_terms, store.worker_url, token, g.source,
                                 remote[id(top.rem)], [remote[id(v)] for v in top.path], g.keep,
                                 key=f"ladders-crt-{token}-{uuid.uuid4().hex}",
                                 priority=1 << 30, pure=False)
                   for g, top in zip(groups, tops)]
        return client.gather(futures)

    return mapper


class TwoPlayers(OneStep):
    """Two players as one step in this process (no store, no tasks): P(0,0) over the
    rationals, its solve step certified exactly; with ``table`` the whole table P(a, b)
    instead, certified against the race equations in integers (the turn system is
    nonsingular, so the table that satisfies them is the table, and P(0,0) is its entry:
    the solve over Q would add nothing to that proof)."""

    def __init__(self, problem: Problem, table: bool) -> None:
        self.problem, self.table = problem, table
        self.answer: Answer | None = None

    def compute(self) -> bool:
        self.answer = self._solve()
        return True

    def _solve(self) -> Answer:
        from ladders.solver.engines.series import (check_table, two_player_certified,
                                                   two_player_table)
        from ladders.solver.exact import FractionTable, bits_to_digits, mpq
        chain = self.problem.pieces
        t0 = time.perf_counter()
        out_table = None
        if self.table:
            tab = two_player_table(chain)
            n, start = len(chain.states), chain.start_index
            passed = check_table(chain, tab.numerators, tab.denominator)
            p = mpq(tab.numerators[start * n + start], tab.denominator)
            stages = {"table": round(time.perf_counter() - t0, 3)}
            out_table = FractionTable([(a, b) for a in chain.states for b in chain.states],
                                      tab.lowest, tab.lowest_denominators, tab.numerator_texts)
            what = ("the table P(a,b) satisfies d P(a,b) + sum C[a,a'] P(b,a') = d for every "
                    "(a, b), in integers; P(0,0) is its entry")
        else:
            result = two_player_certified(chain)
            p, passed = result.value, result.certified
            stages = {k: round(v, 3) for k, v in result.seconds.items()}
            what = "Y D = N (mod chi) exactly over Q: the solve step of P = L(Y)"
        certificate = {"check": "certificate", "passed": passed, "what": what,
                       "denominator_digits": bits_to_digits(p.denominator.bit_length())}
        return Answer([p, 1 - p], certificate, out_table,
                      {"stages": stages, "states": len(chain.states)})


def run_needs(primes: int, seconds_per_prime: float, driver_bytes: float) -> str | None:
    """What makes a series run impossible, said as what it needs (None: nothing does):
    more than a day even on the largest cluster of the plan (:data:`CLUSTER_SIZES`), or
    more memory for its driver's reconstruction of the fractions, which runs in one
    process, than one machine has (:data:`MACHINE_BYTES`). The solve's refusal (the cost
    model's figures) and ``ladders plan``'s row (measured ones) both ask this."""
    from ladders.solver.estimate import MACHINE_BYTES
    most = CLUSTER_SIZES[-1]
    if primes * seconds_per_prime / most > DAY:
        return (f"needs {human_seconds(primes * seconds_per_prime / most)} even on {most:,} "
                f"workers ({primes:,} primes at {seconds_per_prime:,.2f} s each)")
    if driver_bytes > MACHINE_BYTES:
        return (f"needs about {driver_bytes / 1e9:,.0f} GB for its driver's reconstruction of "
                f"the fractions, more than the {MACHINE_BYTES / 1e9:,.0f} GB of one machine")
    return None


class SeriesEngine(PrimeBatchEngine):
    name = "series"
    work_type = SeriesWork
    summary = ("one player's generating functions, no race system (2 players: exact over "
               "the rationals, certified; more: primes as Dask tasks, resumable)")
    options = (batch_option(f"{BATCH_PRIMES}, or {4 * BATCH_PRIMES:,} where a prime is heavy "
                            "(4 players): seconds of work on hasbro"),)
    cross = "modular"

    def preference(self, problem: Problem) -> float | None:
        return 0.0 if problem.pieces is not None else None

    def declines(self, problem: Problem) -> str | None:
        if problem.pieces is not None:
            return None
        return ("it sums one player's generating functions, so it needs pieces that never "
                "meet (a race on a board); this is a chain of its own")

    def describe(self, problem: Problem) -> str:
        from ladders.solver.engines.series import plan_series
        plan = plan_series(problem.pieces, problem.players)
        return (f"{problem.board.name}: {problem.players}-player race through one player's "
                f"generating functions ({len(problem.pieces.states)} states; polynomials of "
                f"degree {plan.degree_a:,} and {plan.degree_b:,})")

    def digest(self, problem: Problem) -> str:
        from ladders.solver.engines.series import plan_series
        return plan_series(problem.pieces, problem.players).digest

    def check(self, problem: Problem, request: SolveRequest) -> None:
        if (why := self.declines(problem)) is not None:
            raise ValueError(f"the series engine declines {problem.name}: {why}; use --engine "
                             "modular, crt or elimination")
        if request.table and problem.players != 2:
            raise ValueError("the full table P(a, b) is for two players")
        if problem.players == 2 and ((request.given() & {"checkpoint", "cluster", "batch_primes"})
                                     or request.executor == "dask"):
            raise ValueError("two players take the series engine about a second in this "
                             "process: --checkpoint, --scheduler, --workers, --executor dask "
                             "and --batch-primes are for 3 or more players (or choose --engine "
                             "crt or elimination for a resumable 2-player run)")

    def out_of_reach(self, problem: Problem) -> str | None:
        """:func:`run_needs` from the cost model's figures (no prime is run)."""
        from ladders.solver.estimate import series_forecast
        fc = series_forecast(problem.pieces, problem.players)
        needs = run_needs(fc["primes"], fc["seconds_per_prime"], fc["driver_bytes"])
        return None if needs is None else f"the run {needs}"

    def forecast(self, problem: Problem, workers: int | None) -> str | None:
        """The plan's figures for this run (:func:`~ladders.solver.estimate.series_forecast`):
        the primes and their CPU alone, then the wall time on ``workers`` with the
        contention of a machine's busy cores and the reconstruction after the last
        batch (or the core-hours, where the workers are not known)."""
        from ladders.solver.estimate import series_forecast
        fc = series_forecast(problem.pieces, problem.players, workers or 1)
        if fc["core_seconds"] < 600:
            return None
        text = (f"the plan: about {fc['primes']:,} primes at about "
                f"{1000 * fc['seconds_per_prime']:,.1f} ms of CPU each (the cost model, its unit "
                f"{fc['unit_source']}), ")
        if fc["compile_seconds"]:
            text += f"about {fc['compile_seconds']:.0f} s compiling the kernels first, "
        text += (f"{human_seconds(fc['seconds'])} on {workers} workers (with "
                 f"{fc['contention']:.2f}x for the busy cores and "
                 f"{human_seconds(fc['tail_seconds'])} after the last batch)"
                 if workers else f"{fc['core_seconds'] / 3600:,.0f} core-hours")
        if fc["core_seconds"] / (workers or 1) > DAY:
            text += f"; {math.ceil(fc['core_seconds'] / DAY):,} workers bring it to about a day"
            if workers:
                text += " (--scheduler: see 'Running on a cluster' in docs/guide.md)"
        busy = busy_note()
        return text + (f"; {busy}" if busy else "")

    def run_seconds(self, problem: Problem, workers: int) -> float | None:
        from ladders.solver.estimate import series_forecast
        return series_forecast(problem.pieces, problem.players, workers)["seconds"]

    def plan(self, problem: Problem, workers: int, per_machine: int | None = None) -> PlanRow:
        from ladders.cluster.engines import chain_row
        from ladders.solver.estimate import series_figures
        if problem.pieces is None:
            return chain_row(self, problem)
        fig = series_figures(problem.pieces, problem.players, workers, per_machine)
        degrees = f"degrees {fig['degrees'][0]:,} and {fig['degrees'][1]:,}"
        if not fig["primes"]:
            return PlanRow(f"{degrees}, ~{fig['digits_estimate']:,} digits: {fig['how']}", fig, 0.0)
        compiling = (f", and {fig['compile_seconds']:.0f} s compiling the kernels first"
                     if fig["compile_seconds"] else "")
        text = (f"{degrees}, ~{fig['digits_estimate']:,} digits: {fig['primes']:,} primes at "
                f"{fig['ms_per_prime']:,.1f} ms of CPU alone (the cost model, its unit "
                f"{fig['unit_source']}{compiling}), "
                f"{fig['contention']:.2f}x on busy cores: {human_seconds(fig['seconds'])} on "
                f"{workers} workers, of which {human_seconds(fig['tail_seconds'])} after the "
                f"last batch; {fig['core_hours']:,.1f} core-hours held "
                f"({fig['busy_core_hours']:,.1f} computing); "
                f"~{fig['worker_bytes'] / 1e9:,.1f} GB a worker, its driver "
                f"~{fig['bytes'] / 1e9:,.1f} GB")
        blocked = run_needs(fig["primes"], fig["ms_per_prime"] / 1000, fig["bytes"])
        return PlanRow(text, fig, fig["seconds"], scales=True, blocked=blocked,
                       serial_seconds=fig["start_seconds"] + fig["serial_seconds"])

    def big(self, problem: Problem) -> bool:
        """Many primes to do: a local cluster pays off."""
        from ladders.solver.engines.series import plan_series
        plan = plan_series(problem.pieces, problem.players)
        return plan.degree_a * plan.degree_b > DASK_DEGREES

    def keeps_store(self, problem: Problem, request: SolveRequest, executor: str) -> bool:
        return problem.players > 2

    def default_batch(self, problem: Problem) -> int:
        from ladders.solver.engines.series import make_split, plan_series, split_cost
        plan = plan_series(problem.pieces, problem.players)
        cost = split_cost(make_split(plan.data, plan.players, plan.split))
        return BATCH_PRIMES * (4 if cost > HEAVY_PRIME else 1)

    def run_fields(self, problem: Problem) -> dict[str, Any]:
        from ladders.solver.engines.series import plan_series
        plan = plan_series(problem.pieces, problem.players)
        return {"unknowns": plan.degree_a, "degrees": [plan.degree_a, plan.degree_b],
                "split": plan.split, "multiple": plan.multiple}

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> Any:
        if problem.players == 2:
            return TwoPlayers(problem, request.table)
        from ladders.solver.engines.series.kernels import compiled
        if not compiled():
            click.echo("ladders: compiling the series kernels first (once for this install or "
                       "upgrade, about a minute; Ctrl-C twice stops it)", err=True)
        return super().open_work(store, problem, request, progress, should_stop)

    def batch_seconds(self, problem: Problem, primes: int) -> float | None:
        from ladders.solver.estimate import series_forecast
        return series_forecast(problem.pieces, problem.players)["seconds_per_prime"] * primes

    def answer(self, work: Any, problem: Problem, request: SolveRequest) -> Answer:
        from ladders.solver.engines.series import error_bound
        from ladders.solver.exact import bits_to_digits
        if isinstance(work, TwoPlayers):
            assert work.answer is not None
            return work.answer
        stream = work.stream
        confirmation = {"check": "confirmation", "passed": True,
                        "what": f"every seat's fraction agrees with the residues at {stream.holdout} "
                                "primes not used to build it, and the seats sum to 1 exactly",
                        "held_out_primes": stream.holdout, "rejected_candidates": stream.rejected,
                        "error_probability_below": error_bound(stream)}
        details = {"primes": stream.prime_count, "primes_skipped": len(stream.skipped),
                   "batches": work.batches(), "split": work.plan.split,
                   "degrees": [work.plan.degree_a, work.plan.degree_b],
                   "modulus_digits": bits_to_digits(stream.bits),
                   "reconstruction_attempts": stream.attempts,
                   "attempts": [{"bits": b, "seconds": round(t, 3)} for b, t in stream.attempt_log],
                   "stages": {"residues_on_workers": round(work.compute_seconds, 3),
                              "reconstruction": round(stream.attempt_seconds, 3)}}
        return Answer(list(stream.values or []), confirmation, None, details)

    def bounds_digits(self, problem: Problem) -> tuple[int, float]:
        if problem.players == 2:
            return super().bounds_digits(problem)
        return BOUNDS_DIGITS, BOUNDS_SECONDS

    def run_cross(self, problem: Problem) -> Engine | None:
        return get_engine(self.cross) if problem.players > 2 and self.cross else None

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """The batch figures, and the size of the polynomials (a series run has no
        race system: its run.json's ``unknowns`` is the degree of ``chi_a``)."""
        degrees = self._stored_plan(store)[0]
        return {**super().status(store, manifest),
                "size": f"polynomials of degree {degrees[0]:,} and {degrees[1]:,}"}

    def whole_modulus(self, store: RunStore) -> bool:
        """Three players: the fractions come over the denominator multiple."""
        return self._stored_plan(store)[1]

    def _stored_plan(self, store: RunStore) -> tuple[list[int], bool]:
        """The degrees and whether the plan has the denominator multiple, read from
        run.json (importing the engine to plan it again costs ``status`` 0.3 s; a store
        written before run.json recorded them is planned again)."""
        degrees, multiple = store.run.get("degrees"), store.run.get("multiple")
        if not (isinstance(degrees, list) and len(degrees) == 2 and isinstance(multiple, bool)):
            from ladders.solver.engines.series import plan_series
            from ladders.solver.problem import Problem
            problem = Problem.from_json(store.run["problem"])
            plan = plan_series(problem.pieces, problem.players)
            degrees, multiple = [plan.degree_a, plan.degree_b], plan.multiple
        return [int(d) for d in degrees], bool(multiple)

    def recheck(self, problem: Problem, seats: list[mpq], primes: int,
                seed: int | None) -> dict[str, Any]:
        """The series residues of every seat at fresh random primes."""
        from ladders.solver.engines.series.recheck import check_series_residues
        return check_series_residues(problem.pieces, problem.players, seats, primes, seed)

    def seats_in_memory(self, problem: Problem,
                        should_stop: Callable[[], bool] = lambda: False) -> list[mpq]:
        if problem.players == 2:
            from ladders.solver.engines.series import two_player_certified
            p = two_player_certified(problem.pieces).value
            return [p, 1 - p]
        from ladders.solver.engines.series import race_exact
        return list(race_exact(problem.pieces, problem.players).seats)


ENGINE = SeriesEngine()
