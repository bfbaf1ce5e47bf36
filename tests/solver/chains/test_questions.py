"""Chain questions as systems, solved by every linear-system engine (issue 38)."""

from __future__ import annotations

import numpy as np
import pytest

from ladders.solver.chains.model import chain_from_rows
from ladders.solver.chain_problem import ChainProblem
from ladders.solver.chains.questions import INFINITY, Question, build_system, plan_question
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.exact import mpq


def ruin(n: int = 4, start: int = 2, up: mpq = mpq(1, 3)):
    """Gambler's ruin on 0..n: up with probability ``up``, else down; 0 and n absorb."""
    rows = [{0: 1}] + [{i - 1: 1 - up, i + 1: up} for i in range(1, n)] + [{n: 1}]
    return chain_from_rows("ruin", [str(i) for i in range(n + 1)], rows, start=start,
                           labels={"broke": [0], "rich": [n]})


def closed_form(n: int, start: int, up: mpq) -> mpq:
    """P(reach n before 0) from ``start``: (1 - r^start) / (1 - r^n), r = (1-up)/up."""
    r = (1 - up) / up
    return mpq(start, n) if r == 1 else (1 - r ** start) / (1 - r ** n)


def solve(chain, question):
    plan = plan_question(chain, question)
    return dict(zip(plan.columns, eliminate_target(build_system(chain, question, plan)))), plan


@pytest.mark.parametrize("n,start,up", [(4, 2, mpq(1, 3)), (10, 3, mpq(1, 2)), (7, 6, mpq(5, 7))])
def test_ruin_matches_the_closed_form(n, start, up):
    chain = ruin(n, start, up)
    values, plan = solve(chain, Question())
    assert values["rich"] == closed_form(n, start, up)
    assert values["broke"] == 1 - closed_form(n, start, up)
    # E[T] for a fair walk is start * (n - start)
    if up == mpq(1, 2):
        assert values["steps"] == start * (n - start)
    reach, _ = solve(chain, Question("reach", "rich"))
    assert list(reach.values()) == [closed_form(n, start, up)]


def test_expected_steps_to_a_target_and_rewards():
    chain = chain_from_rows("walk", ["a", "b", "c"], [{1: 1}, {0: mpq(1, 2), 2: mpq(1, 2)}, {2: 1}],
                            labels={"end": [2]}, rewards={"cost": {0: 3, 1: mpq(1, 2)}})
    steps, _ = solve(chain, Question("reward", "end"))
    # E_a = 1 + E_b, E_b = 1 + E_a / 2: E_a = 4
    assert list(steps.values()) == [4]
    cost, _ = solve(chain, Question("reward", "end", reward="cost"))
    # C_a = 3 + C_b, C_b = 1/2 + C_a / 2: C_a = 7
    assert list(cost.values()) == [7]


def test_infinite_expectations_and_unreachable_targets():
    # from 0: to the trap {2, 3} (a closed class that never absorbs) or to the end 1
    rows = [{1: mpq(1, 2), 2: mpq(1, 2)}, {1: 1}, {3: 1}, {2: 1}]
    chain = chain_from_rows("trap", ["s", "end", "t1", "t2"], rows, labels={"end": [1], "t": [2]})
    plan = plan_question(chain, Question())
    assert plan.known == {"steps": INFINITY}
    values, _ = solve(chain, Question())
    assert values == {"end": mpq(1, 2)}
    problem = ChainProblem(chain, Question())
    assert problem.named([mpq(1, 2)]) == {"end": mpq(1, 2), "steps": INFINITY}
    missed = ChainProblem(chain, Question("reward", "end"))
    assert not missed.solvable and missed.named([]) == {'T=? [F "end"]': INFINITY}
    never = chain_from_rows("never", ["a", "b", "c"], [{1: 1}, {0: 1}, {2: 1}], labels={"c": [2]})
    values, plan = solve(never, Question("reach", "c"))
    assert list(values.values()) == [0] and len(plan.unknowns) == 0


def test_a_start_distribution_and_an_absorbing_start():
    chain = ruin(4, 2)
    spread = chain_from_rows("spread", chain.states, [dict(chain.row(i)) for i in range(5)],
                             start=[(1, mpq(1, 4)), (3, mpq(1, 2)), (4, mpq(1, 4))],
                             labels={"rich": [4]})
    values, plan = solve(spread, Question("reach", "rich"))
    expect = (closed_form(4, 1, mpq(1, 3)) / 4 + closed_form(4, 3, mpq(1, 3)) / 2 + mpq(1, 4))
    assert plan.start_row and list(values.values()) == [expect]
    done = chain_from_rows("done", ["a", "b"], [{1: 1}, {1: 1}], start=1)
    values, _ = solve(done, Question())
    assert values == {"b": 1, "steps": 0}


def test_every_engine_gives_the_same_fractions():
    rng = np.random.default_rng(7)
    n = 30
    rows = []
    for i in range(n):
        if i in (0, n - 1):
            rows.append({i: 1})
            continue
        targets = rng.choice(n, size=3, replace=False)
        weights = rng.integers(1, 9, size=3)
        rows.append({int(t): mpq(int(w), int(weights.sum())) for t, w in zip(targets, weights)})
    chain = chain_from_rows("random", [f"s{i}" for i in range(n)], rows, start=n // 2)
    question = Question()
    plan = plan_question(chain, question)
    system = build_system(chain, question, plan)
    assert solve_dixon(system).values == eliminate_target(system)
