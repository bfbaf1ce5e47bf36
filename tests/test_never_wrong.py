"""The six wrong answers of issue 50, each through the real CLI (subprocess), and the
checks that no longer read an answer's meaning from the solver's bookkeeping.

P1 a label shared with an unreachable absorbing state; P2 an undefined constant of a
properties file; P3 ``filter(min, ...)`` where one initial state's expectation is
infinite; P4 truncated ``.tra`` and ``.drn`` files; P5 the bounds and the plan of a
board with ``meet = "bump"``; P6 a label named like another state. Each was answered
wrongly, five of them marked verified, on the code before the fixes (277ea47).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ladders.solver.chains.formats import load_chain
from ladders.solver.chains.model import ChainError, chain_from_rows
from ladders.solver.chain_problem import ChainProblem
from ladders.solver.chains.questions import INFINITY, Question
from ladders.solver.checks.chain_bounds import check_chain_answers, ends_invariant
from ladders.solver.checks.reference import reference_system
from ladders.solver.checks.residue_check import check_residues
from ladders.solver.exact import mpq, str_to_fraction
from test_hostile import ladders, refused

FIXTURES = Path(__file__).parent / "solver" / "chains" / "formats" / "fixtures"


def answers_of(proc) -> dict[str, str]:
    """The answers of a ``ladders solve --json`` run, by name (each an exact text)."""
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = {}
    for result in json.loads(proc.stdout)["results"]:
        assert result["verified"]["passed"]
        out.update({name: a.get("exact", a.get("value")) for name, a in result["answers"].items()})
    return out


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# ---------------------------------------------------------------- P1, P6: names
SHARED = """start = "s"
[transitions]
"spare" = { "spare" = 1 }
"s" = { "heads" = "1/2", "tails" = "1/2" }
"heads" = { "heads" = 1 }
"tails" = { "tails" = 1 }
[labels]
done = ["spare", "heads"]
"""


def test_p1_a_label_names_every_state_carrying_it(tmp_path: Path) -> None:
    """``done`` is carried by an unreachable absorbing state listed first and by
    ``heads``: its answer is the probability of ending in either, 1/2."""
    proc = ladders("solve", str(write(tmp_path / "shared.toml", SHARED)), "--json")
    assert answers_of(proc) == {"done": "1/2", "tails": "1/2", "steps": "1"}


def test_p6_a_state_named_like_a_label_is_answered_apart(tmp_path: Path) -> None:
    """The label ``y`` is on state x; the unlabelled state y is ``state y``."""
    text = 'start = "s"\n[transitions]\n"s" = { "x" = "1/3", "y" = "2/3" }\n[labels]\ny = ["x"]\n'
    proc = ladders("solve", str(write(tmp_path / "coll.toml", text)), "--json")
    assert answers_of(proc) == {"y": "1/3", "state y": "2/3", "steps": "1"}


def test_two_groups_that_would_share_a_name_are_refused(tmp_path: Path) -> None:
    """An unlabelled absorbing state called ``a+b`` beside a state labelled a and b."""
    text = ('start = "s"\n[transitions]\n"s" = { "x" = "1/2", "a+b" = "1/2" }\n'
            '"x" = { "x" = 1 }\n"a+b" = { "a+b" = 1 }\n[labels]\na = ["x"]\nb = ["x"]\n')
    refused(ladders("solve", str(write(tmp_path / "plus.toml", text))), "'a+b'",
            "rename the state or the labels")


# ---------------------------------------------------------------- P2: constants
WALK = """dtmc
const int N;
module walk
  s : [0..N] init 1;
  [] s>0 & s<N -> 1/3 : (s'=s+1) + 2/3 : (s'=s-1);
  [] s=0 | s=N -> true;
endmodule
rewards "steps"
  s>0 & s<N : 1;
endrewards
"""


@pytest.mark.parametrize("props", [
    'const double lambda;\n"p1": P=? [ F s >= lambda*N ];\n',
    'const double lambda;\n"b": P>=lambda [ F s=4 ];\n',
])
def test_p2_an_undefined_constant_of_the_properties_is_refused(tmp_path: Path, props: str) -> None:
    pytest.importorskip("stormpy")
    model = write(tmp_path / "walk.prism", WALK)
    asked = write(tmp_path / "lam.props", props)
    refused(ladders("solve", str(model), "--properties", str(asked), "--constants", "N=4"),
            "lambda", "--constants lambda=")
    proc = ladders("solve", str(model), "--properties", str(asked), "--constants",
                   "N=4,lambda=1/2", "--json")
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- P3: filters
M3 = """dtmc
module m
  s : [0..3];
  [] s=0 -> 1/2:(s'=1) + 1/2:(s'=3);
  [] s=1 -> (s'=1);
  [] s=2 -> (s'=3);
  [] s=3 -> true;
endmodule
init s=0 | s=2 endinit
rewards "r"
  s=0 : 1;
  s=2 : 7;
endrewards
label "goal" = s=3;
"""

M3_PROPS = """"tmin": filter(min, T=? [ F "goal" ], "init");
"rmin": filter(min, R{"r"}=? [ F "goal" ], "init");
"rmax": filter(max, R{"r"}=? [ F "goal" ], "init");
"pmin": filter(min, P=? [ F "goal" ], "init");
"""


def test_p3_a_least_expectation_over_initial_states_is_each_ones_then_the_least(
        tmp_path: Path) -> None:
    """From s=0 the goal is missed with probability 1/2 (its expectations are
    infinite), from s=2 it is one step away: Storm answers 1, 7, Infinity, 1/2."""
    pytest.importorskip("stormpy")
    model = write(tmp_path / "m3.prism", M3)
    asked = write(tmp_path / "m3.props", M3_PROPS)
    got = answers_of(ladders("solve", str(model), "--properties", str(asked), "--json"))
    assert got == {"tmin": "1", "rmin": "7", "rmax": "Infinity", "pmin": "1/2"}


def test_p3_without_storm_a_least_and_a_greatest_over_several_starts() -> None:
    """The same chain built here: the least over the starts is the finite one's, the
    greatest is Infinity; the checks pass on the right answers and fail on Infinity."""
    rows = [{1: mpq(1, 2), 3: mpq(1, 2)}, {1: 1}, {3: 1}, {3: 1}]
    chain = chain_from_rows("m3", ["s0", "s1", "s2", "s3"], rows,
                            start=[(0, mpq(1, 2)), (2, mpq(1, 2))], labels={"goal": [3]},
                            rewards={"r": {0: 1, 2: 7}})
    least = ChainProblem(chain, Question("reward", "goal", reward="r", over="min"))
    assert least.solvable and least.plan.start == ((2, mpq(1)),)
    greatest = ChainProblem(chain, Question("reward", "goal", reward="r", over="max"))
    assert not greatest.solvable and greatest.named([]) == {greatest.question.answer_name: INFINITY}
    name = least.question.answer_name
    report = check_chain_answers(chain, least.question, least.plan, {name: mpq(7)})
    assert report["passed"]
    wrong = check_chain_answers(chain, least.question, least.plan, {name: mpq(8)})
    assert not wrong["passed"]
    # the least probability over both starts: their average is 3/4, the least 1/2 (from
    # s0); a least read from the wrong start fails the walks from each start
    reach = ChainProblem(chain, Question("reach", "goal", over="min"))
    assert reach.every and reach.named([mpq(3, 4), mpq(1, 2)]) == {reach.question.answer_name: mpq(1, 2)}
    assert reach.check_bounds([mpq(3, 4), mpq(1, 2)], 16)["passed"]
    report = reach.check_bounds([mpq(3, 4), mpq(1)], 16)
    assert not report["passed"] and not report["extremes"]["passed"]


# ---------------------------------------------------------------- P4: counts
RUIN = "5 8\n0 0 1\n1 0 2/3\n1 2 1/3\n2 1 2/3\n2 3 1/3\n3 2 2/3\n3 4 1/3\n4 4 1\n"
RUIN_LAB = '0="init" 1="goal"\n2: 0\n4: 1\n'


def test_p4_a_truncated_tra_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "ok.tra", RUIN)
    write(tmp_path / "ok.lab", RUIN_LAB)
    assert answers_of(ladders("solve", str(tmp_path / "ok.tra"), "--target", "goal",
                              "--json")) == {'P=? [F "goal"]': "1/5"}
    write(tmp_path / "cut.tra", "".join(RUIN.splitlines(keepends=True)[:6]))
    write(tmp_path / "cut.lab", RUIN_LAB)
    refused(ladders("solve", str(tmp_path / "cut.tra"), "--target", "goal"),
            "cut.tra:1", "declares 8 transitions", "gives 5", "cut short")


@pytest.mark.parametrize("name, text, words", [
    ("r.srew", "5 2\n1 1\n", ["r.srew:1", "declares 2 rewards", "gives 1"]),
    ("r.trew", "5 3\n1 0 1\n2 1 1\n", ["r.trew:1", "declares 3 rewards", "gives 2"]),
])
def test_p4_reward_files_are_held_to_their_counts(tmp_path: Path, name: str, text: str,
                                                  words: list[str]) -> None:
    write(tmp_path / "r.tra", RUIN)
    write(tmp_path / name, text)
    with pytest.raises(ChainError) as err:
        load_chain(str(tmp_path / "r.tra"))
    for word in words:
        assert word in str(err.value)


def test_p4_a_truncated_drn_is_refused(tmp_path: Path) -> None:
    lines = (FIXTURES / "die.drn").read_text().splitlines(keepends=True)
    # cut after the last state's action line: the state count holds, its row is empty
    last_action = max(k for k, line in enumerate(lines) if line.strip().startswith("action"))
    write(tmp_path / "cut.drn", "".join(lines[:last_action + 1]))
    refused(ladders("solve", str(tmp_path / "cut.drn")), "cut.drn:", "no transitions",
            "cut short")
    # cut at a state boundary: fewer states than @nr_states
    first_state = [k for k, line in enumerate(lines) if line.startswith("state ")][5]
    write(tmp_path / "few.drn", "".join(lines[:first_state]))
    refused(ladders("solve", str(tmp_path / "few.drn")), "@nr_states declares 13 states",
            "lists 5", "cut short")


# ---------------------------------------------------------------- P5: bump boards
BUMP = ('start = 0\nend = 8\ndie = 3\nrule = "bounce"\nmeet = "bump"\n'
        'jumps = [[2, 6], [7, 1]]\n')


def test_p5_the_bounds_of_a_bump_board_bracket_its_answer(tmp_path: Path) -> None:
    board = write(tmp_path / "b1.toml", BUMP)
    solved = answers_of(ladders("solve", str(board), "--json"))
    seat1 = str_to_fraction(solved["seat 1 wins"])
    proc = ladders("bounds", str(board), "--digits", "10", "--json")
    assert proc.returncode == 0, proc.stderr
    seats = json.loads(proc.stdout)["seats"]
    assert str_to_fraction(seats[0]["lower"]) <= seat1 <= str_to_fraction(seats[0]["upper"])
    refused(ladders("bounds", str(board), "--moves", "10"), "give --digits")
    plan = json.loads(ladders("plan", str(board), "--json").stdout)
    assert plan["meet"] == "bump" and plan["states"] == 53 and plan["unknowns"] == 51
    refused(ladders("plot", "diagonal", str(board), "-o", str(tmp_path / "d.png")),
            "never meet")


# ---------------------------------------------------------------- the checks
def test_the_checks_catch_an_answer_solved_for_the_wrong_state() -> None:
    """The fault of P1 put back by hand: answers solved for the unreachable state that
    carries the label. The bounds, the sum of the ends and the check's own system each
    fail, since none of them reads the plan's mapping."""
    rows = [{0: 1}, {2: mpq(1, 2), 3: mpq(1, 2)}, {2: 1}, {3: 1}]
    chain = chain_from_rows("shared", ["spare", "s", "heads", "tails"], rows, start=1,
                            labels={"done": [0, 2]})
    problem = ChainProblem(chain, Question())
    assert problem.plan.names == ("done", "tails", "steps")
    wrong = {"done": mpq(0), "tails": mpq(1, 2), "steps": mpq(1)}
    report = check_chain_answers(chain, problem.question, problem.plan, wrong)
    assert not report["passed"]
    assert not report["answers"][0]["inside"]
    assert report["ends"] == ends_invariant(wrong) and not report["ends"]["passed"]
    own = reference_system(chain, problem.question, problem.plan.names, problem.plan.columns)
    assert not check_residues(own, [wrong[n] for n in problem.plan.columns], seed=1)["passed"]
    right = {"done": mpq(1, 2), "tails": mpq(1, 2), "steps": mpq(1)}
    assert check_residues(own, [right[n] for n in problem.plan.columns], seed=1)["passed"]
    assert check_chain_answers(chain, problem.question, problem.plan, right)["passed"]


def test_the_sum_of_where_a_chain_ends() -> None:
    assert ends_invariant({"a": mpq(1, 3), "b": mpq(2, 3), "steps": mpq(5)})["passed"]
    assert not ends_invariant({"a": mpq(1, 3), "b": mpq(1, 3), "steps": mpq(5)})["passed"]
    assert ends_invariant({"a": mpq(1, 3), "steps": INFINITY})["passed"]
    assert not ends_invariant({"a": mpq(1), "steps": INFINITY})["passed"]


def test_a_name_no_state_answers_to_fails_the_check() -> None:
    chain = chain_from_rows("coin", ["s", "h", "t"], [{1: mpq(1, 2), 2: mpq(1, 2)}, {1: 1}, {2: 1}])
    problem = ChainProblem(chain, Question())
    renamed = type(problem.plan)(problem.plan.unknowns, problem.plan.start_row,
                                 ("heads", "t", "steps"), {}, ("heads", "t", "steps"),
                                 {}, problem.plan.start)
    report = check_chain_answers(chain, problem.question, renamed,
                                 {"heads": mpq(1, 2), "t": mpq(1, 2), "steps": mpq(1)})
    assert not report["passed"] and "no absorbing state" in report["answers"][0]["checked"]
    assert isinstance(reference_system(chain, problem.question, renamed.names, renamed.columns),
                      str)
    assert np.array_equal(chain.end_names["h"], [1])
