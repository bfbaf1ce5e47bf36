"""Exact sparse elimination (:mod:`ladders.solver.engines.elimination`): the forward
elimination by a plan equals the full solve, and a row's content is removed exactly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from examples import EXAMPLES
from ladders.solver.games.chain import build_chain
from ladders.solver.engines.elimination import eliminate_target, remove_content, solve_all
from ladders.solver.exact import gcd, mpz
from ladders.solver.engines.elimination_plan import make_plan
from ladders.solver.games.race import race_system


def test_forward_elimination_equals_full_solve_in_any_order() -> None:
    system = race_system(build_chain(EXAMPLES["hasbro20-2"].board), 2)
    full = solve_all(system)[0][system.target]
    natural = [i for i in range(system.size) if i != system.target] + [system.target]
    for size in (1, 7, 50, system.size):
        assert eliminate_target(system, make_plan(system, size, natural)) == [full]
        assert eliminate_target(system, make_plan(system, size)) == [full]


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-10**40, 10**40).filter(bool), min_size=1, max_size=8),
       scale=st.integers(1, 10**30))
def test_remove_content_leaves_the_primitive_row(values: list[int], scale: int) -> None:
    # the first two entries often share more than the whole row does: the rescale path
    row = {c: mpz(v * scale) for c, v in enumerate(values)}
    remove_content(row)
    content = 0
    for v in values:
        content = gcd(content, v)
    assert row == {c: mpz(v // content) for c, v in enumerate(values)}
