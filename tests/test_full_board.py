"""The headline answer on the full board: through the modular engine (seconds, in the
default suite), the crt engine on Dask (slow: 2 minutes) and the column-block
elimination engine on Dask (slow: 18 minutes). All must give the same fraction."""

from __future__ import annotations

import pytest

from ladders.cluster.connect import ClusterSpec
from ladders.cluster.runs import solve
from ladders.solver.problem import Problem
from ladders.solver.games.board import preset_board
from ladders.solver.exact import fraction_to_decimal, mpq


def check_headline(p: mpq) -> None:
    assert len(str(p.numerator)) == 4453 and len(str(p.denominator)) == 4453
    # SPEC 3 prints 50 decimals rounded: ...187941|5744... rounds up to ...187942
    assert fraction_to_decimal(p + mpq(5, 10**51), 50) == "0.50780277346091397787392387841954080716542767187942"


@pytest.fixture(scope="module")
def modular() -> mpq:
    out = solve(Problem.build(preset_board("hasbro"), 2), "modular", seed=11)
    assert out.verified["passed"] and out.verified["certificate"]["passed"]
    assert out.verified["bounds"]["passed"]
    return out.seats[0]


def test_full_hasbro_modular(modular) -> None:
    check_headline(modular)


@pytest.mark.slow
def test_full_hasbro_crt_on_dask(tmp_path, modular) -> None:
    out = solve(Problem.build(preset_board("hasbro"), 2), "crt", checkpoint=str(tmp_path / "run"),
                spec=ClusterSpec(workers=2), executor="dask", seed=5)
    assert out.seats[0] == modular and out.verified["passed"]


@pytest.mark.slow
def test_full_hasbro_elimination_on_dask(tmp_path, modular) -> None:
    out = solve(Problem.build(preset_board("hasbro"), 2), "elimination", checkpoint=str(tmp_path / "run"),
                spec=ClusterSpec(workers=2), executor="dask")
    assert out.seats[0] == modular
    assert out.verified["passed"] and out.verified["cross"]["passed"]
