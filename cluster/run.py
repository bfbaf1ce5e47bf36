"""Long solves end to end: build the problem, plan it, run it (in memory, or through a
checkpoint store on Dask), verify the answer, and report on stored runs.

The CLI calls these functions and prints what they return; they raise
``ValueError``/``StoreError``/``ClusterError`` with one-line messages for bad input.
"""

from __future__ import annotations

import contextlib
import math
import platform
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoints.errors import StoreError
from checkpoints.store import Manifest, RunStore, pid_alive
from checkpoints.tasks import initial_groups, is_finished, run_in_process, stored_answer
from cluster.executor import ClusterSpec, check_workers, connect, drive
from solver.board import Board, make_board
from solver.bounds import check_players
from solver.chain import AbsorbingChain, build_chain
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
        b = self.board
        return {"board": {"name": b.name, "start": b.start, "end": b.end, "die": b.die,
                          "rule": b.rule, "jumps": [list(j) for j in b.jumps]},
                "players": self.players}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        b = data["board"]
        board = make_board(b["name"], b["start"], b["end"], b["die"], b["rule"],
                           [tuple(j) for j in b["jumps"]])
        return cls.build(board, int(data["players"]))


@dataclass
class SolveOutcome:
    """What a solve produced (``seats`` is empty when it was interrupted)."""

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


def verify_answer(problem: Problem, seats: list[mpq], primes: int = 1,
                  seed: int | None = None) -> dict[str, Any]:
    """Tier 1 (bounds) and tier 2 (modular) checks of a race answer."""
    bounds = check_against_bounds(problem.chain, problem.players, seats)
    targets = seats[:1] if problem.system.columns == 1 else seats
    modular = check_modular(problem.system, targets, primes=primes, seed=seed)
    return {"passed": bool(bounds["passed"] and modular["passed"]), "bounds": bounds,
            "modular": modular}


def solve(problem: Problem, *, checkpoint: str | None = None, spec: ClusterSpec = ClusterSpec(),
          executor: str = "auto", block_size: int | None = None, order: str | None = None,
          progress: Callable[[int, int, int], None] | None = None,
          should_stop: Callable[[], bool] = lambda: False) -> SolveOutcome:
    """Solve ``problem`` exactly and verify it.

    ``executor``: ``serial`` (in this process, in memory unless ``checkpoint``), ``dask``
    (tasks on ``spec``'s cluster through a store: ``checkpoint`` or a temporary one), or
    ``auto`` (``serial`` in memory for small problems with no store or cluster asked for).
    ``order`` names the pivot order (:data:`solver.plan.ORDERS`), ``block_size`` fixes
    the pivots per block (default: balanced). ``progress(done, total, digits_so_far)``
    is called as tasks finish.
    """
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
        return SolveOutcome(problem, seats, seconds, "serial", verify_answer(problem, seats),
                            tasks_run=len(plan.tasks()), tasks_total=len(plan.tasks()))
    with _store_dir(checkpoint) as root:
        run = {"problem": problem.to_json(), "engine": "elimination", "executor": executor,
               "system_digest": system.digest(), "unknowns": system.size, "nonzeros": system.nnz,
               "block_size": plan.blocks[0][1], "plan": plan.describe(), "versions": versions()}
        store = RunStore.create(root, run, plan, initial_groups(system, plan))
        return _run_store(store, problem, spec, executor, progress, should_stop)


def resume(path: str, *, spec: ClusterSpec = ClusterSpec(), executor: str | None = None,
           progress: Callable[[int, int, int], None] | None = None,
           should_stop: Callable[[], bool] = lambda: False) -> SolveOutcome:
    """Continue a stored run from its last committed manifest."""
    store = RunStore.open(path)
    problem = Problem.from_json(store.run["problem"])
    if problem.system.digest() != store.plan.system_digest:
        raise StoreError(f"{path}: the stored problem no longer builds the system it was planned "
                         "for (different ladders version?); start a new run")
    mine, theirs = versions(), store.run.get("versions", {})
    if mine.get("ladders") != theirs.get("ladders") or mine.get("gmpy2") != theirs.get("gmpy2"):
        raise StoreError(f"{path} was written by ladders {theirs.get('ladders')} / gmpy2 "
                         f"{theirs.get('gmpy2')}; this is {mine.get('ladders')} / {mine.get('gmpy2')}")
    if store.completed():
        raise StoreError(f"{path} is complete already; see 'ladders status {path}'")
    return _run_store(store, problem, spec, executor or store.run.get("executor", "dask"),
                      progress, should_stop)


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

        def report(manifest: Manifest, _ran: int) -> None:
            if progress is not None:
                progress(len(manifest.done), total, bits_to_digits(manifest.max_bits))

        if executor == "serial":
            before = len(store.current().done)
            manifest = run_in_process(store, report, should_stop)
            ran = len(manifest.done) - before
            interrupted = not is_finished(store.plan, manifest)
        else:
            with connect(spec) as client:
                workers = check_workers(client, str(store.root.resolve()))
                startup = time.perf_counter() - t0
                t0 += startup
                outcome = drive(client, store, window=2 * workers + 1, progress=report,
                                should_stop=should_stop)
            manifest, ran, interrupted = outcome.manifest, outcome.tasks_run, outcome.interrupted
        seconds = time.perf_counter() - t0
        out = SolveOutcome(problem, [], seconds, executor, interrupted=interrupted,
                           startup_seconds=startup,
                           store=store.root, tasks_run=ran, tasks_total=total,
                           store_bytes=store.size_bytes())
        if interrupted:
            return out
        values = stored_answer(store, problem.system, manifest)
        out.seats = seats_from_values(problem.system, problem.players, values)
        out.verified = verify_answer(problem, out.seats)
        out.store_bytes = store.size_bytes()
        if out.verified["passed"]:
            from solver.exact import fraction_to_str
            store.mark_complete({"seats": [fraction_to_str(s) for s in out.seats],
                                 "verified": out.verified, "seconds_total": manifest.elapsed,
                                 "finished": time.time()})
        return out
    finally:
        store.release_lock()


def bits_to_digits(bits: int) -> int:
    return math.ceil(bits * math.log10(2)) if bits else 0


def status(path: str) -> dict[str, Any]:
    """State of a stored run from its files alone (no cluster needed)."""
    store = RunStore.open(path)
    manifest = store.current()
    total = len(store.plan.tasks())
    done = len(manifest.done)
    blocks_done = sum(1 for b in range(len(store.plan.blocks)) if (b, b) in manifest.done)
    lock = store.locked_by()
    complete = store.completed()
    if complete:
        state = "complete"
    elif lock and (lock.get("host") != socket.gethostname() or pid_alive(int(lock.get("pid", 0)))):
        state = "running"
    elif lock:
        state = "interrupted (stale lock)"
    else:
        state = "interrupted" if done < total else "finished, not verified"
    return {"store": str(store.root), "state": state, "problem": store.run["problem"],
            "unknowns": store.run["unknowns"], "tasks_done": done, "tasks_total": total,
            "blocks_done": blocks_done, "blocks_total": len(store.plan.blocks),
            "digits_so_far": bits_to_digits(manifest.max_bits), "elapsed_seconds": round(manifest.elapsed, 2),
            "manifest": manifest.seq, "store_bytes": store.size_bytes(),
            "lock": lock, "result": complete}


def verify_stored(path: str, primes: int = 2, seed: int | None = None) -> dict[str, Any]:
    """Re-check a finished run's answer from its store: bounds and modular primes."""
    store = RunStore.open(path)
    manifest = store.current()
    if not is_finished(store.plan, manifest):
        raise StoreError(f"{path} is not finished ({len(manifest.done)}/{len(store.plan.tasks())} "
                         f"tasks); continue it with 'ladders resume {path}'")
    problem = Problem.from_json(store.run["problem"])
    if problem.system.digest() != store.plan.system_digest:
        raise StoreError(f"{path}: the stored problem does not build the planned system")
    values = stored_answer(store, problem.system, manifest)
    seats = seats_from_values(problem.system, problem.players, values)
    report = verify_answer(problem, seats, primes=primes, seed=seed)
    complete = store.completed()
    if complete is not None:
        from solver.exact import fraction_to_str
        report["matches_complete_json"] = complete.get("seats") == [fraction_to_str(s) for s in seats]
        report["passed"] = report["passed"] and report["matches_complete_json"]
    return {"problem": problem, "seats": seats, "report": report}

