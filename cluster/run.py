"""Long solves end to end: build the problem, plan it, run it (in memory, or through a
checkpoint store on Dask), verify the answer, and report on stored runs.

The CLI calls these functions and prints what they return; they raise
``ValueError``/``StoreError``/``ClusterError`` with one-line messages for bad input.
"""

from __future__ import annotations

import contextlib
import math
import platform
import random
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoints.errors import StoreError
from checkpoints.lifting import clear_leftovers as clear_lift_leftovers
from checkpoints.lifting import load_state, save_state
from checkpoints.store import Manifest, RunStore, pid_alive
from checkpoints.tasks import initial_groups, is_finished, run_in_process, stored_answer
from cluster.executor import ClusterSpec, check_workers, connect, drive
from solver.board import Board, board_from_json, board_to_json
from solver.bounds import check_players
from solver.chain import AbsorbingChain, build_chain
from solver.dixon import CertifiedColumn, Interrupted, LiftState, solve_dixon
from solver.eliminate import eliminate_target
from solver.exact import mpq
from solver.modular import check_modular
from solver.plan import make_plan
from solver.race import race_system, seats_from_values
from solver.system import LinearSystem
from solver.verify import check_against_bounds

#: Exit code of a solve stopped by Ctrl-C or SIGTERM with a consistent store (EX_TEMPFAIL).
EXIT_INTERRUPTED = 75
#: Problems this small run in memory unless a store or a cluster is asked for.
IN_MEMORY_LIMIT = 2000
#: The exact engines: column-block elimination (Dask), Dixon lifting (one process),
#: Chinese remaindering over batches of primes (Dask).
ENGINES = ("elimination", "modular", "crt")


@dataclass
class Problem:
    """A race to solve: board, players, and the system built from them."""

    board: Board
    players: int
    chain: AbsorbingChain
    system: LinearSystem

    @classmethod
    def build(cls, board: Board, players: int) -> Problem:
        check_players(players)
        chain = build_chain(board)
        return cls(board, players, chain, race_system(chain, players))

    def to_json(self) -> dict[str, Any]:
        return {"board": board_to_json(self.board), "players": self.players}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        return cls.build(board_from_json(data["board"]), int(data["players"]))


@dataclass
class SolveOutcome:
    """What a solve produced (``seats`` is empty when it was interrupted).

    ``table``: two players, when asked, every ``P(a, b)`` keyed by ``(a, b)``.
    ``details``: what the engine reports about its work (prime, lifting steps, ...).
    """

    problem: Problem
    seats: list[mpq]
    seconds: float
    executor: str
    verified: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False
    store: Path | None = None
    tasks_run: int = 0
    tasks_total: int = 0
    store_bytes: int = 0
    startup_seconds: float = 0.0  # starting or reaching the cluster, checking its workers
    engine: str = "elimination"
    table: dict[tuple[int, int], mpq] | None = None
    details: dict[str, Any] = field(default_factory=dict)


def versions() -> dict[str, str]:
    """Versions that must match between the run that wrote a store and the one resuming."""
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": platform.python_version()}
    for pkg in ("ladders", "gmpy2", "zarr", "dask", "distributed", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def verify_answer(problem: Problem, seats: list[mpq], primes: int = 1, seed: int | None = None,
                  certificate: dict[str, Any] | None = None,
                  cross: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every check of a race answer that ran, and whether all passed.

    Tier 1 ``bounds`` always; tier 2 ``modular`` (independent solves modulo ``primes``
    random 61-bit primes) when ``primes > 0``; tier 3 ``certificate`` (``A x = b``
    checked exactly, from the modular engines) and ``cross`` (the other engine's
    answer, see :func:`cross_check`) when given.
    """
    report: dict[str, Any] = {"bounds": check_against_bounds(problem.chain, problem.players, seats)}
    if primes > 0:
        targets = seats[:problem.system.columns]  # the seats the system solves for
        report["modular"] = check_modular(problem.system, targets, primes=primes, seed=seed)
    if certificate is not None:
        report["certificate"] = certificate
    if cross is not None:
        report["cross"] = cross
    tiers = [r for r in report.values() if not r.get("skipped")]
    return {"passed": all(bool(r["passed"]) for r in tiers), **report}


def certificate_report(columns: list[CertifiedColumn], rejected: int) -> dict[str, Any]:
    """Tier 3 of the modular engines: what the certificate checked, for the JSON report."""
    return {"check": "certificate", "what": "A N = D b exactly in integers (N/D: every unknown)",
            "passed": True, "prime": columns[0].prime,
            "lifting_steps": [c.lifting_steps for c in columns],
            "certificate_steps": [c.certificate_steps for c in columns],
            "denominator_digits": bits_to_digits(columns[0].denominator.bit_length()),
            "rejected_candidates": rejected}


def cross_check(problem: Problem, seats: list[mpq], engine: str, force: bool = False) -> dict[str, Any]:
    """The answer of the *other* kind of engine, compared with ``==``.

    An elimination result is checked by the modular engine (seconds, certified); a
    modular result by fraction-free elimination in memory, which takes minutes to
    hours on big boards, so it runs only for small systems unless ``force``.
    """
    system = problem.system
    t0 = time.perf_counter()
    if engine == "elimination":
        other = "modular"
        values = solve_dixon(system).values
    else:
        other = "elimination"
        if system.size > IN_MEMORY_LIMIT and not force:
            return {"check": "cross", "engine": other, "skipped": True, "passed": True,
                    "reason": f"{system.size:,} unknowns: elimination takes long here "
                              "(--cross runs it anyway)"}
        values = eliminate_target(system)
    agree = seats_from_values(system, problem.players, values) == list(seats)
    return {"check": "cross", "engine": other, "passed": agree,
            "seconds": round(time.perf_counter() - t0, 3)}


def solve(problem: Problem, *, engine: str = "elimination", checkpoint: str | None = None,
          spec: ClusterSpec = ClusterSpec(), executor: str = "auto", block_size: int | None = None,
          order: str | None = None, table: bool = False, seed: int | None = None,
          batch_primes: int | None = None, save_every: float | None = None,
          progress: Callable[[int, int, int], None] | None = None,
          should_stop: Callable[[], bool] = lambda: False) -> SolveOutcome:
    """Solve ``problem`` exactly with ``engine`` (:data:`ENGINES`) and verify it.

    Elimination: ``executor`` is ``serial`` (in this process, in memory unless
    ``checkpoint``), ``dask`` (tasks on ``spec``'s cluster through a store:
    ``checkpoint`` or a temporary one), or ``auto`` (``serial`` in memory for small
    problems with no store or cluster asked for). ``order`` names the pivot order
    (:data:`solver.plan.ORDERS`), ``block_size`` fixes the pivots per block (default:
    balanced). Modular: in this process, certified, saving its state every ``save_every``
    seconds into ``checkpoint`` if given; crt: batches of ``batch_primes``
    primes on ``executor``, certified; both take a ``seed`` for their primes, and with
    ``table`` (two players) keep every ``P(a, b)``. ``progress(done, total,
    digits_so_far)`` is called as work finishes.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; use one of {', '.join(ENGINES)}")
    if table and (problem.players != 2 or problem.system.columns != 1):
        raise ValueError("the full table P(a, b) is for two players")
    if engine == "modular":
        store = None
        if checkpoint:
            seed = seed if seed is not None else random.SystemRandom().randrange(1 << 32)
            store = RunStore.create(checkpoint, _run_json(problem, "modular", "serial", seed=seed,
                                                          save_every=SAVE_EVERY if save_every is None else save_every))
        return _solve_modular(problem, store, table, seed, progress, should_stop)
    if engine == "crt":
        from cluster.crt import solve_crt
        return solve_crt(problem, checkpoint=checkpoint, spec=spec, executor=executor, seed=seed,
                         batch_primes=batch_primes, table=table, progress=progress,
                         should_stop=should_stop)
    if table:
        raise ValueError("the table P(a, b) comes from the modular engines: --engine modular")
    system = problem.system
    if executor == "auto":
        small = system.size <= IN_MEMORY_LIMIT and not checkpoint and not spec.remote and not spec.workers
        executor = "serial" if small else "dask"
    plan = make_plan(system, block_size, order)
    if executor == "serial" and not checkpoint:
        t0 = time.perf_counter()
        step = None if progress is None else (lambda d, t: progress(d, t, 0))
        values = eliminate_target(system, plan, progress=step)
        seconds = time.perf_counter() - t0
        seats = seats_from_values(system, problem.players, values)
        verified = verify_answer(problem, seats, cross=cross_check(problem, seats, "elimination"))
        return SolveOutcome(problem, seats, seconds, "serial", verified,
                            tasks_run=len(plan.tasks()), tasks_total=len(plan.tasks()))
    with _store_dir(checkpoint) as root:
        run = _run_json(problem, "elimination", executor, block_size=plan.blocks[0][1],
                        plan=plan.describe())
        store = RunStore.create(root, run, plan, initial_groups(system, plan))
        return _run_store(store, problem, spec, executor, progress, should_stop)


def resume(path: str, *, spec: ClusterSpec = ClusterSpec(), executor: str | None = None,
           progress: Callable[[int, int, int], None] | None = None,
           should_stop: Callable[[], bool] = lambda: False) -> SolveOutcome:
    """Continue a stored run from its last committed manifest."""
    store = RunStore.open(path)
    problem = stored_problem(store)
    mine, theirs = versions(), store.run.get("versions", {})
    if mine.get("ladders") != theirs.get("ladders") or mine.get("gmpy2") != theirs.get("gmpy2"):
        raise StoreError(f"{path} was written by ladders {theirs.get('ladders')} / gmpy2 "
                         f"{theirs.get('gmpy2')}; this is {mine.get('ladders')} / {mine.get('gmpy2')}")
    if store.completed():
        raise StoreError(f"{path} is complete already; see 'ladders status {path}'")
    if store.engine == "modular":
        return _solve_modular(problem, store, False, store.run.get("seed"), progress, should_stop)
    if store.engine == "crt":
        from cluster.crt import resume_crt
        return resume_crt(store, problem, spec=spec, executor=executor, progress=progress,
                          should_stop=should_stop)
    return _run_store(store, problem, spec, executor or store.run.get("executor", "dask"),
                      progress, should_stop)


def stored_problem(store: RunStore) -> Problem:
    """The problem a store was made for, rebuilt and checked against its system digest."""
    problem = Problem.from_json(store.run["problem"])
    if problem.system.digest() != store.run.get("system_digest"):
        raise StoreError(f"{store.root}: the stored problem no longer builds the system it was "
                         "solving (different ladders version?); start a new run")
    return problem


#: Seconds between two saved lifting states of a modular solve with a store.
SAVE_EVERY = 10.0


def _solve_modular(problem: Problem, store: RunStore | None, table: bool, seed: int | None,
                   progress: Callable[[int, int, int], None] | None,
                   should_stop: Callable[[], bool] = lambda: False) -> SolveOutcome:
    """The modular engine in this process. With a ``store`` the lifting state is saved
    every ``save_every`` seconds of its run.json (default :data:`SAVE_EVERY`) and whenever
    a right-hand side is certified, so a long solve (races of three or more players)
    resumes where it stopped; the answer is recorded once verified."""
    system = problem.system
    state = None
    save = None
    if store is not None:
        store.acquire_lock()
        manifest = store.current()
        clear_lift_leftovers(store, manifest)
        state = load_state(store, manifest)
        seed = int(store.run["seed"])
        every = float(store.run.get("save_every", SAVE_EVERY))
        clock: dict[str, Any] = {"last": time.perf_counter(), "manifest": manifest}

        def save(st: LiftState) -> None:
            now = time.perf_counter()
            certified = len(clock["manifest"].extra.get("columns", {}))
            if now - clock["last"] >= every or len(st.columns) > certified:
                clock["manifest"] = save_state(store, clock["manifest"], st, now - clock["last"])
                clock["last"] = now
    try:
        t0 = time.perf_counter()
        seen = {"column": 0, "before": 0, "last": 0}

        def step(k: int, steps: int) -> None:
            """Lifting steps of all right-hand sides so far, and this one's digits."""
            if k != seen["column"]:
                seen["column"], seen["before"] = k, seen["before"] + seen["last"]
            seen["last"] = steps
            if progress is not None:
                progress(seen["before"] + steps, 0, bits_to_digits(steps * 28 // 2))
        try:
            result = solve_dixon(system, seed=seed, progress=step, state=state, save=save,
                                 should_stop=should_stop)
        except Interrupted as stop:
            if store is not None:
                save_state(store, clock["manifest"], stop.state, time.perf_counter() - clock["last"])
            return SolveOutcome(problem, [], time.perf_counter() - t0, "serial", interrupted=True,
                                store=None if store is None else store.root, engine="modular",
                                tasks_run=stop.state.steps)
        seats = seats_from_values(system, problem.players, result.values)
        tab = None
        if table:
            values = result.columns[0].solution()
            tab = {system.labels[i]: values[i] for i in range(system.size)}
        seconds = time.perf_counter() - t0
        verified = verify_answer(problem, seats, primes=0,
                                 certificate=certificate_report(result.columns, result.rejected))
        details = {"prime": result.prime, "lu_nonzeros": result.lu_nonzeros,
                   "resumed_from_step": 0 if state is None else state.steps,
                   "stages": {k: round(v, 3) for k, v in result.seconds.items()}}
        out = SolveOutcome(problem, seats, seconds, "serial", verified, engine="modular",
                           table=tab, details=details, tasks_run=1, tasks_total=1)
        if store is not None:
            out.store = store.root
            _mark_complete(store, out, seconds)
            out.store_bytes = store.size_bytes()
        return out
    finally:
        if store is not None:
            store.release_lock()


def _run_json(problem: Problem, engine: str, executor: str, **extra: Any) -> dict[str, Any]:
    """run.json of a new store: what is solved, how, and with which versions."""
    system = problem.system
    return {"problem": problem.to_json(), "engine": engine, "executor": executor,
            "system_digest": system.digest(), "unknowns": system.size, "nonzeros": system.nnz,
            "versions": versions(), **extra}


def _mark_complete(store: RunStore, out: SolveOutcome, seconds: float) -> None:
    """COMPLETE.json, written last and only for a verified answer."""
    if out.verified["passed"]:
        from solver.exact import fraction_to_str
        store.mark_complete({"seats": [fraction_to_str(s) for s in out.seats],
                             "engine": out.engine, "verified": out.verified,
                             "seconds_total": seconds, "finished": time.time()})


@contextlib.contextmanager
def _store_dir(checkpoint: str | None) -> Iterator[Path]:
    if checkpoint:
        yield Path(checkpoint)
        return
    tmp = Path(tempfile.mkdtemp(prefix="ladders-run-"))
    try:
        yield tmp / "run"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_store(store: RunStore, problem: Problem, spec: ClusterSpec, executor: str,
               progress: Callable[[int, int, int], None] | None,
               should_stop: Callable[[], bool]) -> SolveOutcome:
    store.acquire_lock()
    try:
        t0 = time.perf_counter()
        startup = 0.0
        total = len(store.plan.tasks())
        details: dict[str, Any] = {}

        def report(manifest: Manifest, _ran: int) -> None:
            if progress is not None:
                progress(len(manifest.done), total, bits_to_digits(manifest.max_bits))

        if executor == "serial":
            before = len(store.current().done)
            manifest = run_in_process(store, report, should_stop)
            ran = len(manifest.done) - before
            interrupted = not is_finished(store.plan, manifest)
            seconds = time.perf_counter() - t0
        else:
            with connect(spec) as client:
                workers = check_workers(client, str(store.root.resolve()))
                startup = time.perf_counter() - t0
                t0 += startup
                outcome = drive(client, store, window=2 * workers + 1, progress=report,
                                should_stop=should_stop)
                seconds = time.perf_counter() - t0  # the cluster's shutdown is not the solve's
            manifest, ran, interrupted = outcome.manifest, outcome.tasks_run, outcome.interrupted
            details["worker_seconds"] = {k: round(v, 3) for k, v in outcome.worker_seconds.items()}
        out = SolveOutcome(problem, [], seconds, executor, interrupted=interrupted, details=details,
                           startup_seconds=startup,
                           store=store.root, tasks_run=ran, tasks_total=total,
                           store_bytes=store.size_bytes())
        if interrupted:
            return out
        values = stored_answer(store, problem.system, manifest)
        out.seats = seats_from_values(problem.system, problem.players, values)
        out.verified = verify_answer(problem, out.seats,
                                     cross=cross_check(problem, out.seats, "elimination"))
        out.store_bytes = store.size_bytes()
        _mark_complete(store, out, manifest.elapsed)
        return out
    finally:
        store.release_lock()


def bits_to_digits(bits: int) -> int:
    return math.ceil(bits * math.log10(2)) if bits else 0


def status(path: str) -> dict[str, Any]:
    """State of a stored run from its files alone (no cluster needed)."""
    store = RunStore.open(path)
    manifest = store.current()
    if store.plan is not None:
        total = len(store.plan.tasks())
        done = len(manifest.done)
        blocks = {"blocks_done": sum(1 for b in range(len(store.plan.blocks)) if (b, b) in manifest.done),
                  "blocks_total": len(store.plan.blocks)}
    elif store.engine == "crt":
        from cluster.crt import crt_progress
        done, total, blocks = crt_progress(store, manifest)
    else:  # modular: lifting steps of the current right-hand side
        done, total = int(store.completed() is not None), 1
        blocks = {"column": manifest.extra.get("column", 0), "steps": manifest.extra.get("steps", 0),
                  "columns_done": len(manifest.extra.get("columns", {}))}
    lock = store.locked_by()
    complete = store.completed()
    if complete:
        state = "complete"
    elif lock and (lock.get("host") != socket.gethostname() or pid_alive(int(lock.get("pid", 0)))):
        state = "running"
    elif lock:
        state = "interrupted (stale lock)"
    else:
        state = "interrupted" if done < total or not total else "finished, not verified"
    return {"store": str(store.root), "state": state, "engine": store.engine,
            "problem": store.run["problem"], "unknowns": store.run["unknowns"],
            "tasks_done": done, "tasks_total": total, **blocks,
            "digits_so_far": bits_to_digits(manifest.max_bits), "elapsed_seconds": round(manifest.elapsed, 2),
            "manifest": manifest.seq, "store_bytes": store.size_bytes(),
            "lock": lock, "result": complete}


def verify_stored(path: str, primes: int = 2, seed: int | None = None,
                  cross: bool | None = None) -> dict[str, Any]:
    """Re-check a finished run's answer from its store: bounds, modular primes, and the
    other engine (``cross``: None runs it where it is quick, see :func:`cross_check`)."""
    store = RunStore.open(path)
    problem = stored_problem(store)
    complete = store.completed()
    if store.plan is not None:
        manifest = store.current()
        if not is_finished(store.plan, manifest):
            raise StoreError(f"{path} is not finished ({len(manifest.done)}/{len(store.plan.tasks())} "
                             f"tasks); continue it with 'ladders resume {path}'")
        seats = seats_from_values(problem.system, problem.players,
                                  stored_answer(store, problem.system, manifest))
    elif complete is None:
        raise StoreError(f"{path} is not finished; continue it with 'ladders resume {path}'")
    else:
        from solver.exact import str_to_fraction
        seats = [str_to_fraction(v) for v in complete["seats"]]
    xc = None if cross is False else cross_check(problem, seats, store.engine, force=bool(cross))
    report = verify_answer(problem, seats, primes=primes, seed=seed, cross=xc)
    if complete is not None:
        from solver.exact import fraction_to_str
        report["matches_complete_json"] = complete.get("seats") == [fraction_to_str(s) for s in seats]
        report["passed"] = report["passed"] and report["matches_complete_json"]
    return {"problem": problem, "seats": seats, "report": report, "engine": store.engine}
