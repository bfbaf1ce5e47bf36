"""Long solves end to end, whatever the engine: start, resume, inspect and re-verify.

The CLI and the Python API call these functions and print what they return; they find
the engine in the registry (:mod:`ladders.cluster.engines`) and raise ``ValueError`` /
``StoreError`` / ``ClusterError`` with one-line messages for bad input.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.store import RunStore, pid_alive
from ladders.cluster.engines import (SolveRequest, check_request, choose_engine, cross_report,
                                     get_engine)
from ladders.cluster.session import Outcome, versions
from ladders.solver.checks.residue_check import CHECK_LIMIT
from ladders.solver.checks.verify import verify_answer
from ladders.solver.exact import bits_to_digits, fraction_to_str, str_to_fraction
from ladders.solver.problem import Problem

ProgressFn = Callable[[int, int, int], None]


def solve(problem: Problem, engine: str | None = None, request: SolveRequest | None = None, *,
          progress: ProgressFn | None = None, should_stop: Callable[[], bool] = lambda: False,
          **options: Any) -> Outcome:
    """Solve ``problem`` exactly with ``engine`` (default: the preferred one) and verify it.

    How: ``request``, or its fields as keywords (``checkpoint=``, ``spec=``, ``seed=``...).
    ``seconds`` of the outcome is the wall time of this call, verification included.
    ``progress(done, total, digits_so_far, stage=None)`` is called as work finishes
    (``stage``: a description and unit when a new phase starts, e.g. the modular
    engine's factorization); ``should_stop`` is polled, and a stopped run returns an
    interrupted outcome (resumable when it has a store).
    """
    request = request or SolveRequest(**options)
    driver = get_engine(engine) if engine else choose_engine(problem)
    check_request(driver, problem, request)
    return _timed(lambda: driver.solve(problem, request, progress, should_stop))


def _timed(run: Callable[[], Outcome]) -> Outcome:
    """``run()``, whose outcome reports its whole wall time in ``seconds``: the solve and
    everything after it (the verification, writing the store), not the engine's share."""
    t0 = time.perf_counter()
    out = run()
    out.seconds = time.perf_counter() - t0
    return out


def open_run(path: str) -> tuple[RunStore, Problem]:
    """A stored run and the problem it solves, rebuilt and checked against its digest."""
    store = RunStore.open(path)
    try:
        problem = Problem.from_json(store.run["problem"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{store.root}/run.json: its problem cannot be rebuilt "
                         f"({type(exc).__name__}: {exc}); {store.damaged(store.root)}") from None
    if get_engine(store.engine).digest(problem) != store.run.get("system_digest"):
        raise StoreError(f"{store.root}: the stored problem no longer builds the system it was "
                         "solving (another ladders version, or a damaged run.json); start a new run")
    return store, problem


def resume(path: str, request: SolveRequest | None = None, *, progress: ProgressFn | None = None,
           should_stop: Callable[[], bool] = lambda: False, **options: Any) -> Outcome:
    """Continue a stored run from its last committed manifest (``request`` or its fields
    as keywords: where to run, ``spec=`` and ``executor=``)."""
    request = request or SolveRequest(**options)
    store, problem = open_run(path)
    mine, theirs = versions(), store.run.get("versions", {})
    if mine.get("ladders") != theirs.get("ladders") or mine.get("gmpy2") != theirs.get("gmpy2"):
        raise StoreError(f"{path} was written by ladders {theirs.get('ladders')} / gmpy2 "
                         f"{theirs.get('gmpy2')}; this is {mine.get('ladders')} / {mine.get('gmpy2')}")
    if store.completed():
        raise StoreError(f"{path} is complete already; see 'ladders status {path}'")
    driver = get_engine(store.engine)
    # the run was started, so its size was accepted (or forced) then: do not refuse it now
    check_request(driver, problem, replace(request, force=True))
    return _timed(lambda: driver.resume(store, problem, request, progress, should_stop))


def status(path: str) -> dict[str, Any]:
    """State of a stored run from its files alone (no cluster needed)."""
    store = RunStore.open(path)
    manifest = store.newest()  # what a resume continues from
    figures = get_engine(store.engine).status(store, manifest)
    lock = store.locked_by()
    complete = store.completed()
    done, total = figures["tasks_done"], figures["tasks_total"]
    if complete:
        state = "complete"
    elif lock and (lock.get("host") != socket.gethostname() or pid_alive(int(lock.get("pid", 0)))):
        state = "running"
    elif lock:
        state = "interrupted (stale lock)"
    else:
        state = "interrupted" if done < total or not total else "finished, not verified"
    return {"store": str(store.root), "state": state, "engine": store.engine,
            "problem": store.run["problem"], "unknowns": store.run.get("unknowns", 0),
            "size": f"{store.run.get('unknowns', 0):,} unknowns", **figures,
            "digits_so_far": bits_to_digits(manifest.max_bits),
            "elapsed_seconds": round(manifest.elapsed, 2), "manifest": manifest.seq,
            "store_bytes": store.size_bytes(), "lock": lock, "result": complete}


def verify_stored(path: str, primes: int = 2, seed: int | None = None,
                  cross: bool | None = None) -> dict[str, Any]:
    """Re-check a finished run's answer from its store: bounds, modular primes, and the
    other engine (``cross``: None runs it where it is quick). A race system beyond
    :data:`~ladders.solver.checks.residue_check.CHECK_LIMIT` unknowns is not solved again
    where the engine has a check of its own at fresh primes (:meth:`Engine.recheck`)."""
    store, problem = open_run(path)
    driver = get_engine(store.engine)
    complete = store.completed()
    seats = driver.stored_seats(store, problem)
    if seats is None:
        if complete is None:
            raise StoreError(f"{path} is not finished; continue it with 'ladders resume {path}'")
        seats = [str_to_fraction(v) for v in complete["seats"]]
    xc = None if cross is False else cross_report(problem, seats, store.engine, force=bool(cross))
    fresh = driver.recheck(problem, seats, primes, seed) if problem.unknowns > CHECK_LIMIT else None
    report = verify_answer(problem, seats, primes=primes if fresh is None else 0, seed=seed,
                           certificate=fresh, cross=xc)
    if complete is not None:
        report["matches_complete_json"] = complete.get("seats") == [fraction_to_str(s) for s in seats]
        report["passed"] = report["passed"] and report["matches_complete_json"]
    return {"problem": problem, "seats": seats, "report": report, "engine": store.engine}
