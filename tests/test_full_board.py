"""The headline solve through the column-block Dask engine (slow: minutes)."""

from __future__ import annotations

import pytest

from cluster.executor import ClusterSpec
from cluster.run import Problem, solve
from solver.board import preset_board
from solver.exact import fraction_to_decimal, mpq


@pytest.mark.slow
def test_full_hasbro_two_players(tmp_path) -> None:
    out = solve(Problem.build(preset_board("hasbro"), 2), checkpoint=str(tmp_path / "run"),
                spec=ClusterSpec(workers=2), executor="dask")
    p = out.seats[0]
    assert len(str(p.numerator)) == 4453 and len(str(p.denominator)) == 4453
    # SPEC 3 prints 50 decimals rounded: ...187941|5744... rounds up to ...187942
    assert fraction_to_decimal(p + mpq(5, 10**51), 50) == "0.50780277346091397787392387841954080716542767187942"
    assert out.verified["passed"]
