"""Monte Carlo of chain questions (solver/checks/simulate_chain.py): exact answers
from elimination lie within 5 standard errors, wrong ones do not."""

from __future__ import annotations

from ladders.solver.chains.model import Chain, chain_from_rows
from ladders.solver.chains.questions import (INFINITY, Question, answers, build_system,
                                             plan_question)
from ladders.solver.checks.simulate_chain import check_chain_simulation, simulate_chain
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import mpq


def ruin(n: int, p: mpq, start: int | list[tuple[int, mpq]] = 1) -> Chain:
    """Gambler's ruin on 0..n (up with p), 0 and n absorbing; reward ``pos``: the
    position, earned on leaving it."""
    rows = [{0: mpq(1)}] + [{i + 1: p, i - 1: 1 - p} for i in range(1, n)] + [{n: mpq(1)}]
    return chain_from_rows("ruin", [f"s{i}" for i in range(n + 1)], rows, start=start,
                           labels={"win": [n], "end": [0, n]},
                           rewards={"pos": {i: mpq(i) for i in range(1, n)}})


def exact(chain: Chain, question: Question) -> dict[str, mpq | str]:
    plan = plan_question(chain, question)
    if not plan.columns:
        return dict(plan.known)
    return answers(plan, eliminate_target(build_system(chain, question, plan)))


def simulate(chain: Chain, question: Question, values: dict[str, mpq | str], **kw) -> dict:
    return check_chain_simulation(chain, question, plan_question(chain, question), values,
                                  walks=kw.pop("walks", 20_000), seed=kw.pop("seed", 7), **kw)


START = [(2, mpq(1, 2)), (3, mpq(1, 3)), (8, mpq(1, 6))]
QUESTIONS = [Question("absorb"), Question("reach", target="win"),
             Question("reward", target="end", reward="pos"), Question("reward", target="end")]


def test_exact_answers_lie_within_five_standard_errors() -> None:
    chain = ruin(8, mpq(2, 5), START)
    for question in QUESTIONS:
        report = simulate(chain, question, exact(chain, question))
        assert report["passed"], report
        assert report["walks"] == 20_000 and report["unfinished"] == 0
        assert all(a["within"] and abs(a["z"]) < 5 for a in report["answers"])


def test_wrong_answers_are_rejected() -> None:
    """Off by a fifth: many standard errors at 20,000 walks."""
    chain = ruin(8, mpq(2, 5), START)
    for question in QUESTIONS:
        values = exact(chain, question)
        for name, value in values.items():
            wrong = dict(values, **{name: value * mpq(6, 5) if value else mpq(1, 20)})
            report = simulate(chain, question, wrong)
            entry = next(a for a in report["answers"] if a["name"] == name)
            assert not report["passed"] and entry["within"] is False and abs(entry["z"]) > 5


def test_the_same_seed_gives_the_same_walks() -> None:
    chain = ruin(6, mpq(1, 2), 3)
    plan = plan_question(chain, Question("absorb"))
    a = simulate_chain(chain, Question("absorb"), plan, 5000, seed=3)
    b = simulate_chain(chain, Question("absorb"), plan, 5000, seed=3)
    assert a.ended.tolist() == b.ended.tolist() and a.reward_sum == b.reward_sum
    assert a.ended.sum() == 5000


def test_infinite_steps_are_seen_as_misses() -> None:
    """From s0 a third of the way into a closed pair that never absorbs."""
    third = mpq(1, 3)
    rows = [{0: third, 1: third, 2: third}, {1: mpq(1)}, {3: mpq(1)}, {2: mpq(1, 2), 3: mpq(1, 2)}]
    chain = chain_from_rows("trap", ["s0", "goal", "a", "b"], rows, labels={"goal": [1]})
    values = exact(chain, Question("absorb"))
    assert values == {"goal": mpq(1, 2), "steps": INFINITY}
    report = simulate(chain, Question("absorb"), values)
    assert report["passed"] and report["missed"] > 0
    assert report["answers"][1]["within"] is True
    wrong = simulate(chain, Question("absorb"), dict(values, steps=mpq(2)))
    assert not wrong["passed"] and "infinite" in wrong["answers"][1]["note"]


def test_an_infinity_no_walk_shows_is_untested_not_passed_or_failed() -> None:
    """A miss of probability 1e-9 (1/10^9 of the time into a trap): no walk sees it."""
    tiny = mpq(1, 10 ** 9)
    rows = [{1: 1 - tiny, 2: tiny}, {1: mpq(1)}, {2: mpq(1)}]
    chain = chain_from_rows("rare", ["s0", "goal", "trap"], rows, labels={"goal": [1]})
    question = Question("reward", target="goal")
    values = exact(chain, question)
    assert list(values.values()) == [INFINITY]
    report = simulate(chain, question, values)
    assert report["passed"] and report["answers"][0]["within"] is None


def test_unfinished_walks_are_counted_either_way() -> None:
    """At most 3 steps: most walks of a slow ruin are unfinished; the exact answers still
    pass (the probabilities could go either way, the expectation is tested from below),
    and a probability the finished walks already exceed fails."""
    chain = ruin(30, mpq(1, 2), 15)
    values = exact(chain, Question("absorb"))
    report = simulate(chain, Question("absorb"), values, max_steps=3)
    assert report["unfinished"] == report["walks"] and report["steps"] == 3
    assert report["passed"]
    assert "lower side" in report["answers"][-1]["note"]
    done = simulate(chain, Question("absorb"), values, max_steps=40)
    assert 0 < done["unfinished"] < done["walks"]
    assert done["passed"]
    fewer = dict(values, end=mpq(1, 10 ** 6))
    assert not simulate(chain, Question("absorb"), fewer, max_steps=40)["passed"]
