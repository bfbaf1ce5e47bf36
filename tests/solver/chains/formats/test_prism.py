"""PRISM and JANI models through stormpy (``ladders.solver.chains.formats.prism``).

Two parts: a small model written here (Knuth and Yao's die from a fair coin, whose
answers are known by hand: each face 1/6, 11/3 coin flips) for every property shape
and every refusal; and the QVBS Markov chains with Storm's exact values
(``$LADDERS_QVBS``, default ``/work/shared/qvbs``; skipped where absent), each
instance loaded from its ``.prism`` with the ``.props`` file and from its ``.jani``,
every answer compared with ``==``. Instances beyond a few seconds are ``slow``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ladders.solver.chains.formats import format_of, load_chain
from ladders.solver.chains.formats.prism import INSTALL
from ladders.solver.chains.formats.prism import load_storm as load
from ladders.solver.chains.model import ChainError
from ladders.solver.chains.questions import INFINITY, Question, answers, build_system, plan_question
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.exact import mpq

DIE = """\
// Knuth and Yao's die from a fair coin
dtmc
module die
  s : [0..7] init 0;
  d : [0..6] init 0;
  [] s=0 -> 0.5 : (s'=1) + 0.5 : (s'=2);
  [] s=1 -> 0.5 : (s'=3) + 0.5 : (s'=4);
  [] s=2 -> 0.5 : (s'=5) + 0.5 : (s'=6);
  [] s=3 -> 0.5 : (s'=1) + 0.5 : (s'=7) & (d'=1);
  [] s=4 -> 0.5 : (s'=7) & (d'=2) + 0.5 : (s'=7) & (d'=3);
  [] s=5 -> 0.5 : (s'=7) & (d'=4) + 0.5 : (s'=7) & (d'=5);
  [] s=6 -> 0.5 : (s'=2) + 0.5 : (s'=7) & (d'=6);
  [] s=7 -> (s'=7);
endmodule
rewards "coin_flips"
  [] s<7 : 1;
endrewards
label "done" = s=7;
"""

# a walk on 0..N from two initial states (1 and 2), N an open constant
WALK = """\
dtmc
const int N;
module walk
  x : [0..N];
  [] x>0 & x<N -> 1/2 : (x'=x-1) + 1/2 : (x'=x+1);
  [] x=0 | x=N -> true;
endmodule
init x=1 | x=2 endinit
label "right" = x=N;
"""


def solve(chain, question: Question, engine: str = "dixon") -> mpq | str | bool:
    """The answer of ``question``: exact value, INFINITY, or the bound's truth."""
    plan = plan_question(chain, question)
    values = []
    if plan.columns:
        system = build_system(chain, question, plan)
        values = solve_dixon(system).values if engine == "dixon" else eliminate_target(system)
    value = answers(plan, values)[plan.names[0]]
    if question.compare is None:
        return value
    op, bound = question.compare
    return {">=": value >= bound, ">": value > bound, "<=": value <= bound, "<": value < bound}[op]


@pytest.fixture
def die(tmp_path: Path) -> Path:
    path = tmp_path / "die.prism"
    path.write_text(DIE)
    return path


def props(tmp_path: Path, text: str) -> str:
    path = tmp_path / "asked.props"
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------- the die

def test_die_chain(die: Path) -> None:
    pytest.importorskip("stormpy")
    loaded = load(str(die))
    chain = loaded.chain
    assert loaded.questions == ()  # no properties: the default question
    assert chain.size == 13 and chain.start == ((0, mpq(1)),)
    assert chain.states[:2] == ("s=0,d=0", "s=1,d=0")
    assert {"init", "done", "deadlock"} <= set(chain.labels)
    assert set(chain.rewards) == {"coin_flips"}
    # where the die ends: the six faces all carry the label "done", whose answer is
    # the probability of ending in any of them; and the expected coin flips
    absorb = answers(*_solved(chain, Question()))
    assert absorb == {"done": 1, "steps": mpq(11, 3)}


def _solved(chain, question: Question):
    plan = plan_question(chain, question)
    return plan, solve_dixon(build_system(chain, question, plan)).values


def test_die_properties(die: Path, tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    asked = props(tmp_path, """
        "six": P=? [F s=7 & d=6];
        "flips": R{"coin_flips"}=? [F "done"];
        T=? [F "done"];
        "r": R=? [F "done"];
        "sure": P>=1 [F "done"];
        "third": P>=1/3 [F d=1 | d=2];
        "less": P<1/6 [F d=3];
        "m": filter(min, P=? [F d=1], "init");
        "fa": filter(forall, P>0 [F d=2], "init");
        "u": Pmax=? [true U d=3];
        "never": R{"coin_flips"}=? [F d=7];
    """)
    loaded = load(str(die), properties=asked)
    got = {q.text: solve(loaded.chain, q) for q in loaded.questions}
    assert got == {
        "six: P=? [F ((s = 7) & (d = 6))]": mpq(1, 6),
        'flips: R{"coin_flips"}=? [F "done"]': mpq(11, 3),
        'T=? [F "done"]': mpq(11, 3),
        'r: R=? [F "done"]': mpq(11, 3),
        'sure: P>=1 [F "done"]': True,
        "third: P>=(1 / 3) [F ((d = 1) | (d = 2))]": True,
        "less: P<(1 / 6) [F (d = 3)]": False,
        'm: filter(min, P=? [F (d = 1)], "init")': mpq(1, 6),
        'fa: filter(forall, P>0 [F (d = 2)], "init")': True,
        "u: Pmax=? [true U (d = 3)]": mpq(1, 6),
        'never: R{"coin_flips"}=? [F (d = 7)]': INFINITY,
    }
    by_name = {q.text.partition(":")[0]: q for q in loaded.questions}
    assert by_name["six"] == Question("reach", "((s = 7) & (d = 6))", None,
                                      "six: P=? [F ((s = 7) & (d = 6))]")
    assert by_name["flips"].reward == "coin_flips" and by_name["T=? [F \"done\"]"].reward is None
    assert by_name["third"].compare == (">=", mpq(1, 3))  # not Storm's 1/3 as an integer, 0
    # the expression's states, found by Storm: a label of the chain
    mask = loaded.chain.label_mask("((s = 7) & (d = 6))")
    assert [loaded.chain.states[i] for i in mask.nonzero()[0]] == ["s=7,d=6"]


def test_die_through_the_registry(die: Path, tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    assert format_of(str(die)) == "prism"
    loaded = load_chain(str(die), properties=props(tmp_path, 'P=? [F s=2];'))
    assert [solve(loaded.chain, q) for q in loaded.questions] == [mpq(1, 2)]
    # the whole model, whatever is asked: Storm leaves a lone property's targets unexplored
    assert loaded.chain.size == 13
    assert loaded.source is not None and loaded.source["format"] == "prism"


@pytest.mark.parametrize(("prop", "words"), [
    ('"b": P=? [F>=3 "done"]', 'property "b" (P=? [true U>=3 "done"]): a bounded until with '
                               "a lower bound"),
    ('P=? [X "done"]', "next X"),
    ('P=? [G !"done"]', "globally (G)"),
    ("R=? [I=3]", "an instantaneous reward (I=k) of a reward structure with action"),
    ("R=? [LRA]", "a long-run average reward"),
    ('P=? [F P>0.5 [F "done"]]', "inside F (nested)"),
    ('P=? [F s=7 & P>0 [X "done"]]', "inside F (nested)"),
    ('P=? [F G "done"]', "a path formula inside F (LTL)"),
    ('P=? [F "done" || F d=1]', "a conditional probability"),
    ('multi(P>=0.5 [F "done"], P>=0.5 [F d=1])', "a multi-objective query"),
    ('"done"', "a state formula without P, R or T"),
    ('filter(argmin, P=? [F "done"], "init")', "filter(argmin, ...) asks for states"),
    ('filter(forall, P=? [F "done"], "init")', "filter(forall, ...) needs a bound"),
    ('filter(min, P=? [F "done"], s=1)', 'a filter over the states (s = 1); filter over "init"'),
    ('R{"nope"}=? [F "done"]', 'no reward structure "nope"; the model\'s: "coin_flips"'),
])
def test_die_refusals(die: Path, tmp_path: Path, prop: str, words: str) -> None:
    """Each shape ladders does not answer: one line naming the file, the property and
    what it answers instead; the property is refused by itself, the others answered."""
    pytest.importorskip("stormpy")
    loaded = load(str(die), properties=props(tmp_path, f'{prop};\n"ok": P=? [F s=2];'))
    assert [q.answer_name for q in loaded.questions] == ["ok"]
    (message,) = loaded.refused
    assert message.startswith(f"{die}: property ") and words in message
    assert "\n" not in message


def test_unreadable_properties(die: Path, tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    asked = props(tmp_path, "P=? [F zz=1];")
    with pytest.raises(ChainError, match=r"asked.props: Storm cannot read the properties: "):
        load(str(die), properties=asked)
    with pytest.raises(ChainError, match="no such properties file"):
        load(str(die), properties=str(tmp_path / "missing.props"))


def test_reward_needs_a_name_among_several(tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    path = tmp_path / "two.prism"
    path.write_text(DIE + 'rewards "other"\n  s<7 : 2;\nendrewards\n')
    loaded = load(str(path), properties=props(tmp_path, 'R{"other"}=? [F "done"];'))
    assert [solve(loaded.chain, q) for q in loaded.questions] == [mpq(22, 3)]
    (line,) = load(str(path), properties=props(tmp_path, 'R=? [F "done"];')).refused
    assert re.search(r'R without a name .* has "coin_flips", "other"|'
                     r'R without a name .* has "other", "coin_flips"', line)


@pytest.mark.parametrize(("kind", "words"), [
    ("mdp", "a nondeterministic model (MDP): ladders answers Markov chains"),
    ("ma", "a Markov automaton (MA)"),
    ("pomdp", "a partially observable model (POMDP)"),
])
def test_not_a_markov_chain(tmp_path: Path, kind: str, words: str) -> None:
    pytest.importorskip("stormpy")
    path = tmp_path / "other.prism"
    path.write_text(f"{kind}\nmodule m\n  x : [0..1];\n  [] x=0 -> 1 : (x'=1);\nendmodule\n")
    with pytest.raises(ChainError, match=f"^{re.escape(f'{path}: {words}')}"):
        load(str(path))


def test_ctmc_refused(tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    path = tmp_path / "rates.prism"
    path.write_text("ctmc\nmodule m\n  x : [0..1];\n  [] x=0 -> 3 : (x'=1);\nendmodule\n")
    with pytest.raises(ChainError, match=r"a continuous-time model \(CTMC\)"):
        load(str(path))


def test_constants(tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    path = tmp_path / "walk.prism"
    path.write_text(WALK)
    with pytest.raises(ChainError, match=r"the constant N has no value; give it with "
                                         r"--constants N=\.\.\."):
        load(str(path))
    with pytest.raises(ChainError, match=r"--constants N=4,M=2: the model's open constants: N; "
                                         r".*unknown undefined constant 'M'"):
        load(str(path), constants="N=4,M=2")
    chain = load(str(path), constants="N=4").chain
    assert chain.name == "walk (N=4)" and chain.size == 5


def test_several_initial_states(tmp_path: Path) -> None:
    """The start is uniform over the initial states: avg is the value from it, sum
    twice that, forall and exists the bound on the least or greatest; a plain query,
    whose Storm answer is one value for each, is refused
    (tests/solver/chains/test_properties.py compares every form with Storm)."""
    pytest.importorskip("stormpy")
    path = tmp_path / "walk.prism"
    path.write_text(WALK)
    loaded = load(str(path), constants="N=4", properties=props(tmp_path, """
        "avg": filter(avg, P=? [F "right"], "init");
        "sum": filter(sum, P=? [F "right"], "init");
        "all": filter(forall, P>=1 [F x=0 | x=N], "init");
        "any": filter(exists, P<1/2 [F "right"], "init");
    """))
    assert loaded.chain.start == ((0, mpq(1, 2)), (1, mpq(1, 2)))
    assert "2 initial states" in loaded.chain.notes[0]
    assert [q.over for q in loaded.questions] == [None, "sum", "min", "min"]
    # from x=1: 1/4, from x=2: 1/2
    assert solve(loaded.chain, loaded.questions[0]) == mpq(3, 8)
    plain = props(tmp_path, 'P=? [F "right"]')
    (line,) = load(str(path), constants="N=4", properties=plain).refused
    assert re.search("has 2 initial states, and Storm's answer is one value for each", line)


def test_the_least_and_greatest_over_several_initial_states(tmp_path: Path) -> None:
    """filter(min|max, ..., "init") over several initial states: the components engine
    gives every start state's value, the answer is the least or greatest (from x=1:
    1/4, from x=2: 1/2), checked; the elimination engine, which keeps only the target,
    declines it."""
    pytest.importorskip("stormpy")
    import ladders
    path = tmp_path / "walk.prism"
    path.write_text(WALK)
    loaded = load(str(path), constants="N=4", properties=props(tmp_path, """
        "lo": filter(min, P=? [F "right"], "init");
        "hi": filter(max, P=? [F "right"], "init");
    """))
    assert [q.over for q in loaded.questions] == ["min", "max"]
    lo, hi = ladders.solve_all(loaded)
    assert (lo.answers, hi.answers) == ({"lo": mpq(1, 4)}, {"hi": mpq(1, 2)})
    assert lo.engine == "components" and lo.passed and hi.passed
    assert lo.seats == (mpq(3, 8), mpq(1, 4))  # the average the bounds check, then the least
    with pytest.raises(ValueError, match="elimination engine declines"):
        ladders.solve(loaded, property="hi", engine="elimination")


def test_jani_with_its_own_properties_or_a_file(tmp_path: Path, die: Path) -> None:
    """A JANI file asks its own properties; --properties replaces them."""
    stormpy = pytest.importorskip("stormpy")
    program = stormpy.parse_prism_program(str(die))
    asked = stormpy.parse_properties('"six": P=? [F d=6]; "flips": R{"coin_flips"}=? [F "done"];',
                                     program)
    path = tmp_path / "die.jani"
    stormpy.io.export_jani_to_file(str(path), *program.to_jani(asked))
    own = load(str(path))
    assert {q.text.partition(":")[0]: solve(own.chain, q) for q in own.questions} == {
        "six": mpq(1, 6), "flips": mpq(11, 3)}
    other = load(str(path), properties=props(tmp_path, 'P=? [F d=1 | d=2];'))
    assert [solve(other.chain, q) for q in other.questions] == [mpq(1, 3)]


def test_jani_rewards_on_destinations(tmp_path: Path, die: Path) -> None:
    """A reward on each destination of an edge (2 for the flip that ends the game, 1
    for the others) is earned in expectation on leaving the state: 11/3 + 1."""
    stormpy = pytest.importorskip("stormpy")
    program = stormpy.parse_prism_program(str(die))
    asked = stormpy.parse_properties('"flips": R{"coin_flips"}=? [F "done"];', program)
    path = tmp_path / "die.jani"
    stormpy.io.export_jani_to_file(str(path), *program.to_jani(asked))
    jani = json.loads(path.read_text())
    for edge in jani["automata"][0]["edges"]:
        edge["assignments"] = []
        for destination in edge["destinations"]:
            ends = {"ref": "s", "value": 7} in [{k: a[k] for k in ("ref", "value")}
                                                 for a in destination["assignments"]]
            destination["assignments"].append({"ref": "coin_flips", "value": 2 if ends else 1})
    path.write_text(json.dumps(jani))
    loaded = load(str(path))
    assert [solve(loaded.chain, q) for q in loaded.questions] == [mpq(14, 3)]
    # earned in s=3 (1/2 to go on, 1/2 to end): 3/2
    num, den = loaded.chain.rewards["coin_flips"]
    s3 = loaded.chain.index["s=3,d=0,!done"]
    assert mpq(int(num[s3]), int(den[s3])) == mpq(3, 2)


def test_without_stormpy(die: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where stormpy is missing, the message says how to install it from a checkout
    ('ladders' on PyPI is another project)."""
    monkeypatch.setitem(sys.modules, "stormpy", None)  # as if not installed
    with pytest.raises(ChainError) as err:
        load(str(die))
    assert str(err.value).startswith(f"{die}: PRISM and JANI models need stormpy")
    assert INSTALL in str(err.value) and "'.[prism]'" in INSTALL


# --------------------------------------------------------------------- QVBS

QVBS = Path(os.environ.get("LADDERS_QVBS", "/work/shared/qvbs"))
#: Instances (family, constants or file) above this many states are slow here: the
#: largest default ones take a few seconds each (build and solve, 2 cores).
FAST_STATES = 20_000
#: Instances above this many states are skipped even with ``--runslow``: crowds 6-15
#: (2,341,309 states) took 508 s and 6.3 GB here; crowds 6-20 and nand 60-* (4.7 to 18.8
#: million) would pass a 24 GB machine's memory. ``LADDERS_QVBS_MAX_STATES`` raises it.
MAX_STATES = int(os.environ.get("LADDERS_QVBS_MAX_STATES", "2500000"))


def qvbs_instances() -> list:
    """(family, model file, constants, properties file, expected values) of every
    instance with Storm's exact values, slow ones marked, those over :data:`MAX_STATES`
    skipped."""
    if not QVBS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no QVBS models at {QVBS} "
                                                                  "(set LADDERS_QVBS)"))]
    out = []
    for family in sorted(p.name for p in QVBS.iterdir() if (p / "storm_exact.json").is_file()):
        folder = QVBS / family
        index = json.loads((folder / "index.json").read_text())
        for result in json.loads((folder / "storm_exact.json").read_text())["results"]:
            params = result["params"]
            constants = ",".join(f"{k}={v}" for k, v in params.items()) or None
            if params:
                stem, props_file = folder / family, folder / f"{family}.props"
            else:  # one file per instance: Storm.exact.<N-K>.<date>.json
                stem = folder / f"{family}.{result['file'].split('.')[2]}"
                props_file = folder / f"{family}.props"
            states = _states(index, stem.name + ".jani", params)
            for model in (stem.with_suffix(".prism"), stem.with_suffix(".jani")):
                if not model.is_file():
                    continue
                marks = [pytest.mark.slow] if states > FAST_STATES else []
                if states > MAX_STATES:
                    marks.append(pytest.mark.skip(
                        reason=f"{states:,} states, over LADDERS_QVBS_MAX_STATES={MAX_STATES:,} "
                               "(more than this machine's memory or an hour): raise it to run"))
                asked = props_file if model.suffix == ".prism" else None
                out.append(pytest.param(model, constants, asked, result["values"], marks=marks,
                                        id=f"{model.name}-{constants or ''}-{states}"))
    return out


def _states(index: dict, jani: str, params: dict) -> int:
    """The instance's state count from the QVBS index."""
    for entry in index["files"]:
        for instance in entry["open-parameter-values"]:
            if ({v["name"]: v["value"] for v in instance["values"]} == params
                    and entry["file"] == jani):
                return instance["states"][0]["number"]
    raise KeyError(f"{jani} {params}")


@pytest.mark.parametrize(("model", "constants", "asked", "expected"), qvbs_instances())
def test_qvbs(model: Path, constants: str | None, asked: Path | None,
              expected: dict[str, str]) -> None:
    """Every answer equals Storm's exact one (a fraction, true, or Infinity)."""
    pytest.importorskip("stormpy")
    loaded = load(str(model), constants=constants,
                  properties=str(asked) if asked is not None else None)
    got = {}
    for question in loaded.questions:
        value = solve(loaded.chain, question)
        got[question.text.partition(":")[0]] = (str(value).lower() if isinstance(value, bool)
                                                 else value)
    assert got == {name: value if value in ("true", "false", INFINITY) else mpq(value)
                   for name, value in expected.items()}


def test_qvbs_small_by_elimination() -> None:
    """The other engine gives the same fractions (leader_sync 4-3, brp N=16 MAX=2)."""
    pytest.importorskip("stormpy")
    if not QVBS.is_dir():
        pytest.skip(f"no QVBS models at {QVBS}")
    brp = load(str(QVBS / "brp" / "brp.jani"), constants="N=16,MAX=2")
    exact = json.loads((QVBS / "brp" / "storm_exact.json").read_text())["results"]
    values = next(r["values"] for r in exact if r["params"] == {"N": 16, "MAX": 2})
    for q in brp.questions:
        assert solve(brp.chain, q, "elimination") == mpq(values[q.text.partition(":")[0]])
    leader = load(str(QVBS / "leader_sync" / "leader_sync.4-3.prism"),
                  properties=str(QVBS / "leader_sync" / "leader_sync.props"))
    assert [solve(leader.chain, q, "elimination") for q in leader.questions] == [True, mpq(27, 20)]
