"""Long solves end to end, whatever the engine: start, resume, inspect and re-verify.

The CLI and the Python API call these functions and print what they return; they find
the engine in the registry (:mod:`ladders.cluster.engines`) and raise ``ValueError`` /
``StoreError`` / ``ClusterError`` with one-line messages for bad input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.locks import LOCK_GRACE, driver_gone
from ladders.checkpoints.store import RunStore
from ladders.cluster import session
from ladders.cluster.connect import ClusterSpec
from ladders.cluster.engines import (Progress, SolveRequest, check_request, choose_engine,
                                     cross_report, get_engine)
from ladders.cluster.session import versions
from ladders.solver.chains.model import ChainError
from ladders.solver.checks.residue_check import CHECK_LIMIT
from ladders.solver.checks.verify import verify_answer
from ladders.solver.exact import bits_to_digits, fraction_to_str, str_to_fraction
from ladders.solver.problem import Problem, problem_from_json
from ladders.solver.result import Solution


def solve(problem: Problem, engine: str | None = None, request: SolveRequest | None = None, *,
          progress: Progress | None = None, should_stop: Callable[[], bool] = lambda: False,
          started: float | None = None, **options: Any) -> Solution:
    """Solve ``problem`` exactly with ``engine`` (default: the preferred one) and verify it.

    How: ``request``, or its fields and the engines' options as keywords
    (``checkpoint=``, ``spec=``, ``seed=``, ``batch_primes=``...). ``progress`` is
    called as work finishes (:class:`~ladders.cluster.engines.Progress`);
    ``should_stop`` is polled, and a stopped run returns an interrupted solution
    (resumable when it has a store). ``seconds`` of the solution is the wall time from
    ``started`` (the caller's ``time.perf_counter()``, default: this call's start) to
    the end, verification included.
    """
    started = time.perf_counter() if started is None else started
    request = request or SolveRequest.build(**options)
    driver = get_engine(engine) if engine else choose_engine(problem, request)
    check_request(driver, problem, request)
    return session.solve(driver, problem, request, progress, should_stop, started)


def known_solution(problem: Any, started: float) -> Solution:
    """The solution of a chain question whose every answer graph search decided
    (``Infinity`` where the target is missed with positive probability), or that its
    plan answered by stepping the chain (a stepped question, checked by stepping the
    other way: :mod:`ladders.solver.checks.stepped`): no system, no engine."""
    if problem.question.stepped:
        # a question over a fixed number of steps: stepped backward by its plan, checked
        # by stepping forward
        from ladders.solver.checks.stepped import check_stepped
        report = check_stepped(problem.chain, problem.question, problem.plan)
        return Solution(problem=problem, seats=(), engine="steps", executor="serial",
                        verified={"passed": report["passed"], "stepped": report},
                        seconds=time.perf_counter() - started)
    what = "every answer decided by graph search, no system to solve"
    return Solution(problem=problem, seats=(), engine="graph", executor="serial",
                    verified={"passed": True, "graph": {"check": "graph", "what": what,
                                                        "passed": True}},
                    seconds=time.perf_counter() - started)


def open_store(path: str) -> RunStore:
    """A stored run, opened with its engine's manifest format."""
    probe = RunStore.open(path)
    return RunStore(probe.backend, probe.run, get_engine(probe.engine).state_type)


def open_run(path: str) -> tuple[RunStore, Problem]:
    """A stored run and the problem it solves, rebuilt and checked against its digest."""
    store = open_store(path)
    driver = get_engine(store.engine)
    try:
        problem = problem_from_json(store.run["problem"])
    except ChainError as exc:
        # an intact store whose chain file (or properties file) was moved or changed
        raise StoreError(f"{store.url}: the chain of this run cannot be loaded again: {exc}; the "
                         "store itself is intact: put the file back where its run.json says "
                         "and resume") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{store.url}/run.json: its problem cannot be rebuilt "
                         f"({type(exc).__name__}: {exc}); {store.damaged()}") from None
    if driver.digest(problem) != store.run.get("system_digest"):
        raise StoreError(f"{store.url}: the stored problem no longer builds the system it was "
                         "solving (another ladders version, or a damaged run.json); start a new run")
    return store, problem


def on_recorded_cluster(store: RunStore, request: SolveRequest) -> SolveRequest:
    """``request`` with the cluster recorded in the run's run.json when it names none (no
    scheduler, scheduler file or number of workers) and runs on a cluster (not
    ``executor="serial"``, which uses none): a resume goes where the run went, as the
    hint printed at its interruption says."""
    spec = request.spec
    recorded = store.run.get("cluster") or {}
    if spec.remote or spec.workers or not recorded or request.executor == "serial":
        return request
    try:
        found = ClusterSpec.from_record(recorded)
    except ValueError as exc:
        raise StoreError(f"{store.url}/run.json: its \"cluster\" ({exc}); name the cluster "
                         "with --scheduler, --scheduler-file or --workers") from None
    return replace(request, spec=replace(spec, scheduler=found.scheduler,
                                         scheduler_file=found.scheduler_file,
                                         workers=found.workers))


def resume(path: str, request: SolveRequest | None = None, *, progress: Progress | None = None,
           should_stop: Callable[[], bool] = lambda: False, started: float | None = None,
           announce: Callable[[], None] | None = None, **options: Any) -> Solution:
    """Continue a stored run from its last committed manifest (``request`` or its fields
    as keywords: where to run, ``spec=`` and ``executor=``; without a cluster, the one
    recorded in run.json: :func:`on_recorded_cluster`). A finished run's answer is its
    stored one (:func:`stored_solution`): nothing runs. ``announce`` is called once the
    store's LOCK is held (what is resumed is said only when it is)."""
    started = time.perf_counter() if started is None else started
    request = request or SolveRequest.build(**options)
    store, problem = open_run(path)
    if store.completed():
        return stored_solution(path, started)
    request = on_recorded_cluster(store, request)
    mine, theirs = versions(), store.run.get("versions", {})
    if mine.get("ladders") != theirs.get("ladders") or mine.get("gmpy2") != theirs.get("gmpy2"):
        raise StoreError(f"{path} was written by ladders {theirs.get('ladders')} / gmpy2 "
                         f"{theirs.get('gmpy2')}; this is {mine.get('ladders')} / {mine.get('gmpy2')}")
    driver = get_engine(store.engine)
    # the run was started, so its size was accepted (or forced) then: do not refuse it now
    check_request(driver, problem, replace(request, force=True))
    return session.resume(driver, store, problem, request, progress, should_stop, started,
                          announce)


def status(path: str) -> dict[str, Any]:
    """State of a stored run from its files alone (no cluster needed): what a resume
    continues from and what was lost (``lost``). A finished run is complete whatever
    became of its manifests, as resume and verify say too: its answer is COMPLETE.json."""
    store = open_store(path)
    complete = store.completed()
    try:
        survey = store.survey()
    except StoreError:
        if complete is None:
            raise
        survey = None
    if survey is None:
        assert complete is not None
        lost = "its manifests cannot be used; its answer is COMPLETE.json"
        longest = max(len(part.lstrip("-")) for seat in complete["seats"] for part in seat.split("/"))
        figures: dict[str, Any] = {"tasks_done": 0, "tasks_total": 0, "progress": f"finished ({lost})",
                                   "digits": f"{longest:,} digits"}
        seq, elapsed, bits = -1, 0.0, 0
    else:
        lost, manifest = survey.lost, survey.manifest
        figures = get_engine(store.engine).status(store, manifest)
        # a file the next resume makes again (the elimination plan) is lost too
        damaged = figures.pop("damaged", None)
        lost = "; ".join(part for part in (lost, damaged) if part) or None
        seq, elapsed, bits = manifest.seq, manifest.elapsed, manifest.max_bits
    lock = store.locked_by()
    done, total = figures["tasks_done"], figures["tasks_total"]
    left = store.lock.lease_left()
    if complete:
        state = "complete"
        figures["digits"] = figures["digits"].removesuffix(" so far")  # all there will be
    elif lock and left is not None:
        state = (f"interrupted (its driver, pid {lock['pid']} on this host, is gone: the next "
                 "resume takes its lease over at once)" if left > 0 and driver_gone(lock) else
                 f"running (or stopped less than a lease ago: its lease runs out in {left:.0f} s "
                 "unless renewed)" if left > 0 else "interrupted (expired lease)")
    elif lock and not driver_gone(lock, hostname_enough=True):
        state = "running"
    elif lock:
        state = "interrupted (stale lock)"
    elif (age := store.lock.unwritten_lock_age()) is not None:
        state = (f"starting (its LOCK is {age:.0f} s old and not written yet; taken over after "
                 f"{LOCK_GRACE:.0f} s)" if age <= LOCK_GRACE else
                 "interrupted (an unreadable LOCK, which the next resume takes over)")
    else:
        state = "interrupted" if done < total or not total else "finished, not verified"
    if lost and not complete:
        state = f"{state} ({lost})"
    return {"store": store.url, "state": state, "engine": store.engine, "lost": lost,
            "problem": store.run["problem"], "unknowns": store.run.get("unknowns", 0),
            "size": f"{store.run.get('unknowns', 0):,} unknowns", **figures,
            "digits_so_far": bits_to_digits(bits), "elapsed_seconds": round(elapsed, 2),
            "manifest": seq, "store_bytes": store.size_bytes(), "lock": lock, "result": complete}


def stored_solution(path: str, started: float | None = None) -> Solution:
    """A finished run's answer as its solve returned it, from COMPLETE.json (whose
    seats' digest is checked when it is read): what ``ladders resume`` of a finished
    store prints and writes. ``seconds`` is this call's, from ``started`` (the caller's
    ``time.perf_counter()``); the stored run's own are ``details["stored"]``, with when
    it finished."""
    started = time.perf_counter() if started is None else started
    store, problem = open_run(path)
    complete = store.completed()
    if complete is None:
        raise StoreError(f"{path} is not finished; continue it with 'ladders resume {path}'")
    stored = {"seconds": float(complete.get("seconds_total", 0.0)),
              "finished": complete.get("finished")}
    return Solution(problem=problem, seats=tuple(str_to_fraction(v) for v in complete["seats"]),
                    verified=complete["verified"], engine=complete["engine"],
                    executor=store.run.get("executor", "serial"), store=store.url,
                    store_bytes=store.size_bytes(), details={"stored": stored},
                    seconds=time.perf_counter() - started)


def verify_stored(path: str, primes: int = 2, seed: int | None = None,
                  cross: bool | None = None) -> dict[str, Any]:
    """Re-check a finished run's answer from its store: bounds, modular primes, and the
    other engine (``cross``: None runs it where it is quick). A race system beyond
    :data:`~ladders.solver.checks.residue_check.CHECK_LIMIT` unknowns is not solved again
    where the engine has a check of its own at fresh primes (:meth:`Engine.recheck`)."""
    store, problem = open_run(path)
    driver = get_engine(store.engine)
    complete = store.completed()
    try:
        seats = driver.stored_seats(store, problem)
    except StoreError:
        if complete is None:
            raise
        seats = None  # its manifests cannot be used: the answer is COMPLETE.json's (see status)
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
