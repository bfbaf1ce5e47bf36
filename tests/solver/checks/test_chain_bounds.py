"""Markov bounds of chain questions (solver/checks/chain_bounds.py) against exact answers
in closed form and from elimination: they contain them, prove their digits, and fail
on answers off by 1e-12."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from ladders.solver.chains.model import Chain, chain_from_rows
from ladders.solver.chains.questions import (INFINITY, Question, answers, build_system,
                                             plan_question)
from ladders.solver.checks.chain_bounds import chain_bounds_within, check_chain_answers
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import fraction_to_decimal, mpq


def ruin(n: int, p: mpq, start: int | list[tuple[int, mpq]] = 1) -> Chain:
    """Gambler's ruin on 0..n: up with probability p, down with 1 - p; 0 and n absorb.
    Reward ``pos``: the position, earned on leaving it."""
    rows = [{0: mpq(1)}] + [{i + 1: p, i - 1: 1 - p} for i in range(1, n)] + [{n: mpq(1)}]
    return chain_from_rows("ruin", [f"s{i}" for i in range(n + 1)], rows, start=start,
                           labels={"win": [n], "lose": [0], "end": [0, n]},
                           rewards={"pos": {i: mpq(i) for i in range(1, n)}})


def exact(chain: Chain, question: Question) -> dict[str, mpq | str]:
    plan = plan_question(chain, question)
    if not plan.columns:
        return dict(plan.known)
    return answers(plan, eliminate_target(build_system(chain, question, plan)))


def check(chain: Chain, question: Question, values: dict[str, mpq | str],
          digits: int = 16) -> dict:
    return check_chain_answers(chain, question, plan_question(chain, question), values, digits)


def ruin_closed_form(n: int, p: mpq, i: int) -> tuple[mpq, mpq]:
    """``P_i(reach n)`` and ``E_i[T]`` of gambler's ruin, p != 1/2 (Feller, XIV.2-3)."""
    r = (1 - p) / p
    win = (1 - r ** i) / (1 - r ** n)
    return win, i / (1 - 2 * p) - n / (1 - 2 * p) * win


def test_gamblers_ruin_bounds_prove_16_digits_of_the_closed_form() -> None:
    n, p, i = 10, mpq(2, 5), 4
    chain = ruin(n, p, i)
    win, steps = ruin_closed_form(n, p, i)
    values = exact(chain, Question("absorb"))
    assert values == {"end+lose": 1 - win, "end+win": win, "steps": steps}
    report = check(chain, Question("absorb"), values)
    assert report["passed"] and report["digits"] == 16 and "stopped" not in report
    assert all(a["inside"] and a["digits"] == 16 for a in report["answers"])
    for entry, value in zip(report["answers"], values.values()):
        assert [cut(entry["lower_decimal"]), cut(entry["upper_decimal"])] == \
            [fraction_to_decimal(value, 16)] * 2
    reach = Question("reach", target="win")
    report = check(chain, reach, exact(chain, reach))
    assert report["passed"] and cut(report["answers"][0]["lower_decimal"]) == \
        fraction_to_decimal(win, 16)


def cut(decimal: str, digits: int = 16) -> str:
    """A decimal's text truncated to ``digits`` places."""
    return decimal[:decimal.index(".") + 1 + digits]


@pytest.mark.parametrize("kind", ["absorb", "reach", "reward"])
def test_an_answer_off_by_1e_12_fails(kind: str) -> None:
    chain = ruin(8, mpq(3, 7), 3)
    question = Question(kind, target=None if kind == "absorb" else
                        ("win" if kind == "reach" else "end"))
    values = exact(chain, question)
    assert check(chain, question, values)["passed"]
    for name in values:
        for delta in (mpq(1, 10 ** 12), -mpq(1, 10 ** 12)):
            wrong = dict(values, **{name: values[name] + delta})
            report = check(chain, question, wrong)
            entry = next(a for a in report["answers"] if a["name"] == name)
            assert not report["passed"] and not entry["inside"]


def test_short_decimals_are_pinned() -> None:
    """Fair ruin from the middle: 1/2 each side and 9 steps, which no bounds below and
    above them share the digits of."""
    chain = ruin(6, mpq(1, 2), 3)
    values = exact(chain, Question("absorb"))
    assert values == {"end+lose": mpq(1, 2), "end+win": mpq(1, 2), "steps": mpq(9)}
    report = check(chain, Question("absorb"), values)
    assert report["passed"]
    assert [a.get("pinned") for a in report["answers"]] == ["0.5", "0.5", "9"]
    wrong = dict(values, steps=mpq(9) + mpq(1, 10 ** 30))
    assert not check(chain, Question("absorb"), wrong)["passed"]


def test_a_closed_class_makes_the_steps_infinite() -> None:
    """From s0: to the goal with 1/3, to a closed pair {a, b} that never absorbs with
    1/3, else stay: absorbed in the goal with probability 1/2, steps Infinity."""
    third = mpq(1, 3)
    rows = [{0: third, 1: third, 2: third}, {1: mpq(1)}, {3: mpq(1)}, {2: mpq(1, 2), 3: mpq(1, 2)}]
    chain = chain_from_rows("trap", ["s0", "goal", "a", "b"], rows, labels={"goal": [1]},
                            rewards={"r": {0: mpq(5)}})
    values = exact(chain, Question("absorb"))
    assert values == {"goal": mpq(1, 2), "steps": INFINITY}
    report = check(chain, Question("absorb"), values)
    assert report["passed"]
    steps = report["answers"][1]
    assert steps["checked"].startswith("graph search: from 's0'")
    assert not check(chain, Question("absorb"), dict(values, steps=mpq(3)))["passed"]
    reward = Question("reward", target="goal", reward="r")
    name, = plan_question(chain, reward).names
    assert exact(chain, reward) == {name: INFINITY}
    assert check(chain, reward, exact(chain, reward))["passed"]
    assert not check(chain, reward, {name: mpq(10)})["passed"]


def test_finite_answer_claimed_infinite_fails() -> None:
    chain = ruin(5, mpq(1, 3), 2)
    values = exact(chain, Question("absorb"))
    report = check(chain, Question("absorb"), dict(values, steps=INFINITY))
    assert not report["passed"] and not report["answers"][-1]["inside"]


def test_start_distribution_and_rewards() -> None:
    """Start on 1, 2 or already on the goal; the reward of a state is its position."""
    start = [(1, mpq(1, 2)), (2, mpq(1, 3)), (6, mpq(1, 6))]
    chain = ruin(6, mpq(3, 5), start)
    question = Question("reward", target="end", reward="pos")
    values = exact(chain, question)
    report = check(chain, question, values)
    assert report["passed"] and report["digits"] == 16
    name, = plan_question(chain, question).names
    assert not check(chain, question, {name: values[name] * (1 + mpq(1, 10 ** 13))})["passed"]
    absorb = exact(chain, Question("absorb"))
    win = [ruin_closed_form(6, mpq(3, 5), i)[0] for i in (1, 2)]
    assert absorb["end+win"] == mpq(1, 2) * win[0] + mpq(1, 3) * win[1] + mpq(1, 6)
    assert check(chain, Question("absorb"), absorb)["passed"]


def test_large_denominators() -> None:
    """Rows over 61-bit denominators: the fixed point keeps them exact."""
    d = (1 << 61) - 1
    rows = [{0: mpq(1)}, {0: mpq(d - 5, d), 2: mpq(5, d)}, {1: mpq(1, 2), 3: mpq(1, 2)},
            {3: mpq(1)}]
    chain = chain_from_rows("big", ["lo", "x", "y", "hi"], rows, start=2)
    values = exact(chain, Question("absorb"))
    assert check(chain, Question("absorb"), values)["passed"]
    assert not check(chain, Question("absorb"),
                     dict(values, hi=values["hi"] + mpq(1, 10 ** 14)))["passed"]


def test_a_spent_budget_says_so_and_still_brackets() -> None:
    """A walk of 0 seconds: the bounds are still bounds, the report says why they stop
    (with the upper bound of the steps unproved: no backward step was taken)."""
    chain = ruin(40, mpq(1, 2), 20)
    question = Question("absorb")
    plan = plan_question(chain, question)
    values = exact(chain, question)
    bounds = chain_bounds_within(chain, question, plan, 16, 0.0)
    assert bounds.stopped is not None and bounds.upper[-1] is None
    report = check_chain_answers(chain, question, plan, values, 16, bounds=bounds)
    assert report["digits"] < 16 and report["digits_asked"] == 16
    assert report["stopped"] == bounds.stopped
    assert report["answers"][-1]["upper_decimal"] is None and "unproved" in report["answers"][-1]
    assert report["passed"]  # what is proved (lower <= value) holds


def test_digits_must_be_whole() -> None:
    chain = ruin(4, mpq(1, 2), 2)
    plan = plan_question(chain, Question("absorb"))
    with pytest.raises(ValueError, match="digits"):
        chain_bounds_within(chain, Question("absorb"), plan, 0)


@st.composite
def small_chains(draw: st.DrawFn) -> Chain:
    """Up to 6 states with rows over small denominators (some absorbing), a start
    distribution over up to 2 states and a reward on each state."""
    n = draw(st.integers(2, 6))
    rows = []
    for i in range(n):
        if draw(st.booleans()) and i > 0:
            rows.append({i: mpq(1)})
            continue
        den = draw(st.integers(1, 7))
        parts = draw(st.lists(st.integers(0, n - 1), min_size=den, max_size=den))
        row: dict[int, mpq] = {}
        for j in parts:
            row[j] = row.get(j, mpq(0)) + mpq(1, den)
        rows.append(row)
    starts = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    start = [(s, mpq(1, len(starts))) for s in starts]
    rewards = {i: mpq(draw(st.integers(0, 4)), draw(st.integers(1, 3))) for i in range(n)}
    target = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    return chain_from_rows("random", [f"s{i}" for i in range(n)], rows, start=start,
                           labels={"t": target}, rewards={"r": rewards})


@settings(max_examples=40, deadline=None)
@given(small_chains(), st.sampled_from(["absorb", "reach", "reward"]))
def test_bounds_contain_the_exact_answers(chain: Chain, kind: str) -> None:
    question = Question(kind, target=None if kind == "absorb" else "t",
                        reward="r" if kind == "reward" else None)
    plan = plan_question(chain, question)
    values = exact(chain, question)
    bounds = chain_bounds_within(chain, question, plan, 12, 5.0)
    for name, lo, up in zip(bounds.names, bounds.lower, bounds.upper):
        assert lo <= values[name]
        assert up is None or values[name] <= up
    report = check_chain_answers(chain, question, plan, values, 12, bounds=bounds)
    assert report["passed"]


def test_a_start_on_the_target_is_answered_at_once() -> None:
    chain = ruin(4, mpq(1, 3), [(4, mpq(1))])
    for question in (Question("reach", target="win"), Question("reward", target="win"),
                     Question("absorb")):
        values = exact(chain, question)
        report = check(chain, question, values)
        assert report["passed"] and report["steps"] <= 1 and report["digits"] == 16
        assert all(a["lower_decimal"] == a["upper_decimal"] for a in report["answers"])


@settings(max_examples=30, deadline=None)
@given(small_chains(), st.sampled_from(["absorb", "reach", "reward"]))
def test_the_forward_step_from_a_few_states_gives_the_same_integers(chain: Chain,
                                                                      kind: str) -> None:
    """The step that reads only the rows holding mass (SPARSE_SUPPORT) and the step over
    every row give the same bounds, step by step (``==``)."""
    import ladders.solver.checks.chain_bounds as cb
    question = Question(kind, target=None if kind == "absorb" else "t",
                        reward="r" if kind == "reward" else None)
    plan = plan_question(chain, question)
    found = []
    for every_row in (True, False):
        saved = cb.SPARSE_SUPPORT
        cb.SPARSE_SUPPORT = 10**9 if every_row else 0
        try:
            found.append(chain_bounds_within(chain, question, plan, 12, 5.0))
        finally:
            cb.SPARSE_SUPPORT = saved
    dense, sparse = found
    assert (dense.lower, dense.upper, dense.steps) == (sparse.lower, sparse.upper, sparse.steps)


def test_a_long_walk_from_a_few_states_matches_the_whole_step() -> None:
    """A 300-state ruin walked for hundreds of steps: the mass spreads from one state to
    all (the step switches from the few rows to every row); the bounds are the same."""
    import ladders.solver.checks.chain_bounds as cb
    chain = ruin(300, mpq(2, 5), 150)
    question = Question("reach", target="win")
    plan = plan_question(chain, question)
    found = []
    for support in (10**9, cb.SPARSE_SUPPORT):
        saved = cb.SPARSE_SUPPORT
        cb.SPARSE_SUPPORT = support
        try:
            found.append(chain_bounds_within(chain, question, plan, 16, 60.0))
        finally:
            cb.SPARSE_SUPPORT = saved
    assert found[0].lower == found[1].lower and found[0].upper == found[1].upper
    assert found[0].stopped is None and found[1].stopped is None
    assert found[0].steps == found[1].steps > 100


# ---------------------------------------------------------------- pushed in topological order
def test_a_probability_question_is_pushed_once_on_a_path():
    """A chain without cycles: one push through its transitions proves 16 digits."""
    n = 200
    rows = [{i + 1: mpq(2, 3), n + 1: mpq(1, 3)} for i in range(n)] + [{n: mpq(1)}, {n + 1: mpq(1)}]
    chain = chain_from_rows("path", [f"s{i}" for i in range(n + 2)], rows, start=0,
                            labels={"top": [n]})
    question = Question("reach", "top")
    bounds = chain_bounds_within(chain, question, plan_question(chain, question), 16)
    value = mpq(2, 3) ** n
    assert bounds.method == "push" and bounds.steps == 2 * n
    assert bounds.lower[0] <= value <= bounds.upper[0] and bounds.settled(16)
    assert check(chain, question, {question.answer_name: value})["passed"]


def test_a_cycle_that_is_left_soon_is_swept():
    """Two states that move to each other with probability 1/10 and out otherwise: one
    component, swept some 50 times, proves 16 digits by the push alone."""
    rows = [{1: mpq(1, 10), 2: mpq(9, 10)}, {0: mpq(1, 10), 3: mpq(9, 10)}, {2: 1}, {3: 1}]
    chain = chain_from_rows("pair", ["a", "b", "left", "right"], rows, start=0,
                            labels={"left": [2]})
    question = Question("reach", "left")
    bounds = chain_bounds_within(chain, question, plan_question(chain, question), 16)
    assert bounds.method == "push" and bounds.steps > 4
    assert check(chain, question, {question.answer_name: mpq(90, 99)})["passed"]
    assert not check(chain, question, {question.answer_name: mpq(90, 99) + mpq(1, 10 ** 12)})["passed"]


@pytest.mark.parametrize("n,p", [(5, mpq(1, 2)), (12, mpq(2, 5)), (30, mpq(1, 3))])
def test_a_slow_cycle_is_proved_by_the_push_or_the_walk(n, p):
    """Gambler's ruin is one component of n - 1 states that mass leaves slowly: the push
    gives up within its work, and the walk proves the digits."""
    chain = ruin(n, p)
    for question in (Question("reach", "win"), Question()):
        values = exact(chain, question)
        assert check(chain, question, values)["passed"]
        if question.kind == "reach":
            wrong = {k: v + mpq(1, 10 ** 12) for k, v in values.items()}
            assert not check(chain, question, wrong)["passed"]


def test_out_of_work_the_walk_takes_over(monkeypatch):
    from ladders.solver.checks import chain_bounds
    monkeypatch.setattr(chain_bounds, "PUSH_WORK", 0)
    chain = ruin(12, mpq(2, 5))
    question = Question("reach", "win")
    bounds = chain_bounds_within(chain, question, plan_question(chain, question), 16)
    assert bounds.method == "walk"
    assert check(chain, question, exact(chain, question))["passed"]
