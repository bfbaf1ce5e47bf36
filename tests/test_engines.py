"""The one table: every example game through every registered engine and executor.

Each example (``examples.py``, looked up by name) is solved by each engine in this
process, and by each engine that takes a cluster on a real LocalCluster, and must equal
the python-flint oracle (an independent formulation) and the published value with
``==``; its seats must sum to 1 exactly and its checks must pass. (sympy's
``polys/matrices/tests/test_rref.py`` is the model.)
"""

from __future__ import annotations

import pytest
from distributed import LocalCluster

from examples import EXAMPLES

from ladders.cluster.engines import SolveRequest, check_request, engines, takes
from ladders.cluster.connect import ClusterSpec
from ladders.cluster.runs import solve
from ladders.solver.exact import mpq
from ladders.solver.problem import Problem
from oracle import oracle_seats

ENGINES = sorted(engines())
CLUSTER_ENGINES = sorted(n for n, e in engines().items() if takes(e, "cluster"))
_ORACLE: dict[str, list[mpq]] = {}


def expected(name: str) -> list[mpq]:
    ex = EXAMPLES[name]
    if name not in _ORACLE:
        _ORACLE[name] = oracle_seats(ex.board, ex.players)
        assert ex.seat1 is None or _ORACLE[name][0] == ex.seat1
    return _ORACLE[name]


def check(name: str, out) -> None:
    assert list(out.seats) == expected(name)
    assert sum(out.seats, mpq(0)) == 1
    assert out.verified["passed"], out.verified


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc:
        yield lc.scheduler_address


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_in_this_process(name: str, engine: str, tmp_path) -> None:
    problem = Problem.build(EXAMPLES[name].board, EXAMPLES[name].players)
    options = {"executor": "serial"} if takes(engines()[engine], "executor") else {}
    check(name, solve(problem, engine, **options))


@pytest.mark.parametrize("engine", CLUSTER_ENGINES)
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_on_a_local_cluster(name: str, engine: str, scheduler: str, tmp_path) -> None:
    problem = Problem.build(EXAMPLES[name].board, EXAMPLES[name].players)
    request = SolveRequest(checkpoint=str(tmp_path / "run"), executor="dask",
                           spec=ClusterSpec(scheduler=scheduler))
    try:
        check_request(engines()[engine], problem, request)
    except ValueError as exc:  # e.g. two players on the series engine: in this process only
        pytest.skip(f"the {engine} engine refuses this: {exc}")
    out = solve(problem, engine, request)
    check(name, out)
    assert out.executor == "dask" and (tmp_path / "run" / "COMPLETE.json").exists()


def test_every_engine_is_in_the_table() -> None:
    assert {"modular", "crt", "elimination", "series"} <= set(ENGINES)


def test_a_series_run_stops_and_resumes_to_the_same_fractions(tmp_path) -> None:
    ex = EXAMPLES["tiny10-3"]
    problem = Problem.build(ex.board, ex.players)
    calls = []
    stopped = solve(problem, "series", checkpoint=str(tmp_path / "run"), executor="serial",
                    batch_primes=1, seed=7, progress=lambda *a: calls.append(a),
                    should_stop=lambda: len(calls) >= 1)
    assert stopped.interrupted and stopped.tasks_run == 1
    from ladders.cluster.runs import resume
    out = resume(str(tmp_path / "run"))
    assert list(out.seats) == expected("tiny10-3") and out.verified["passed"]
    assert out.tasks_total > out.tasks_run  # the committed batch was not redone


def test_a_cross_check_past_its_budget_is_skipped_not_waited_for(monkeypatch) -> None:
    """Size misjudges the modular engine's time (3 players on hasbro cut at 55: 18,424
    unknowns, 11 minutes): the cross-check stops at CROSS_BUDGET and says so, and the
    answer stands on its other checks."""
    from examples import truncated
    from ladders.cluster import session
    monkeypatch.setattr(session, "CROSS_BUDGET", 0.0)
    problem = Problem.build(truncated("hasbro", 30), 3)       # 4,060 unknowns
    out = solve(problem, "series", executor="serial")
    cross = out.verified["cross"]
    assert cross["skipped"] and cross["reason"] == "the modular engine had not finished after 0 s"
    assert out.verified["passed"]
    assert out.seats == solve(problem, "modular").seats


def test_a_series_run_with_attempts_in_line_starts_no_batch_the_next_attempt_cannot_use(tmp_path) -> None:
    from ladders.cluster.engines import get_engine
    from ladders.solver.games.board import preset_board
    engine = get_engine("series")
    problem = Problem.build(preset_board("hasbro"), 3)
    request = SolveRequest.build(batch_primes=16)
    store = engine.create_store(str(tmp_path / "run"), problem, request, "dask")
    work = engine.open_work(store, problem, request, None, lambda: False)
    assert work.inline()
    # three players: the first attempt comes at the size the plan expects
    assert work.stream.next_bits >= work.stream.expected_bits > 0
    first = work.ready(set(), 10_000)
    bits = [work._batch_bits(k) for k in first]
    # enough for that attempt, and not one batch more
    assert sum(bits[:-1]) < work.stream.next_bits <= sum(bits)
    assert work.ready(set(first), 10_000) == []
    # one batch always goes while none is in flight
    assert work.ready(set(), 1) == [0]
