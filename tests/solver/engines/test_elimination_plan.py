"""Elimination plans (:mod:`ladders.solver.engines.elimination_plan`): a pivot order
must end with the target."""

from __future__ import annotations

import pytest

from examples import EXAMPLES
from ladders.solver.games.chain import build_chain
from ladders.solver.engines.elimination_plan import make_plan
from ladders.solver.games.race import race_system


def test_order_must_end_with_the_target() -> None:
    system = race_system(build_chain(EXAMPLES["tiny10-2"].board), 2)
    with pytest.raises(ValueError, match="target last"):
        make_plan(system, 8, [system.target] + [i for i in range(system.size) if i != system.target])
