"""The chain file formats: ladders' TOML, PRISM's and Storm's explicit ``.tra``/``.lab``,
Storm's DRN, and adding a format as one module.

Fixtures (``fixtures/``): ``ruin.toml`` (a fair gambler's ruin, P(rich) = 1/5);
``die.prism`` (Knuth and Yao's die), ``die.drn`` as Storm exported it
(``stormpy.io.export_to_drn(stormpy.build_model[stormpy.Rational](program), ...)``) and
``die.tra``/``.lab``/``.srew``/``.trew``, the same chain as PRISM writes it. Storm's exact
answers for the die: ``P=? [F "one"]`` 1/6, ``R{"coin_flips"}=? [F "done"]`` 11/3,
``R{"half"}=? [F "done"]`` 11/6 (checked again below where stormpy is installed).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ladders.solver.chains import formats, model
from ladders.solver.chains.formats import format_of, load_chain
from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.chains.questions import Question, answers, build_system, plan_question
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import mpq

FIXTURES = Path(__file__).parent / "fixtures"


def ask(chain: Chain, question: Question) -> dict:
    """Every answer of ``question``, solved exactly in memory."""
    plan = plan_question(chain, question)
    values = eliminate_target(build_system(chain, question, plan)) if plan.columns else []
    return answers(plan, values)


def one(chain: Chain, question: Question):
    (value,) = ask(chain, question).values()
    return value


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def refused(path: str, *parts: str) -> str:
    """The message of the ChainError loading ``path`` raises; it holds every part."""
    with pytest.raises(ChainError) as info:
        load_chain(path)
    message = str(info.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, message
    return message


# ---------------------------------------------------------------- TOML

def test_toml_ruin_answers_exactly() -> None:
    loaded = load_chain(str(FIXTURES / "ruin.toml"))
    chain = loaded.chain
    assert loaded.source["format"] == "toml_chain"
    assert chain.name == "fair gambler's ruin"
    assert chain.size == 6 and chain.states[0] == "1"
    assert one(chain, Question("reach", "rich")) == mpq(1, 5)
    assert one(chain, Question("reach", "broke")) == mpq(4, 5)
    assert ask(chain, Question())["steps"] == 4
    # the absorbing ends without transitions of their own, noted
    assert any("'0', '5'" in note for note in chain.notes)
    # an unquoted 0.5 is the exact 1/2, the same row as "1/2"
    assert chain.row(chain.index["2"]) == [(chain.index["1"], mpq(1, 2)),
                                           (chain.index["3"], mpq(1, 2))]


def test_toml_start_distribution_labels_and_rewards(tmp_path: Path) -> None:
    path = write(tmp_path, "biased.toml", """
name = "gambler's ruin"
start = { "1" = "1/2", "3" = "1/2" }
[transitions]
"1" = { "0" = "2/3", "2" = "1/3" }
"2" = { "1" = "2/3", "3" = "1/3" }
[labels]
broke = ["0"]
rich = "3"
[rewards.cost]
"1" = "1"
"2" = 2.5e-1
""")
    chain = load_chain(path).chain
    # from 1: P(rich) = 1/7 (q/p = 2 on 0..3); the other half starts rich
    assert one(chain, Question("reach", "rich")) == mpq(1, 2) * mpq(1, 7) + mpq(1, 2)
    num, den = chain.rewards["cost"]
    assert mpq(int(num[chain.index["2"]]), int(den[chain.index["2"]])) == mpq(1, 4)
    # the cost until either end: x1 = 1 + x2/3, x2 = 1/4 + 2 x1/3, so x1 = 39/28, and
    # the half that starts on 3 pays nothing
    text = Path(path).read_text().replace('rich = "3"', 'rich = "3"\nend = ["0", "3"]')
    both = write(tmp_path, "ends.toml", text)
    assert one(load_chain(both).chain, Question("reward", "end", "cost")) == mpq(39, 56)


def test_toml_claims_chains_not_boards(tmp_path: Path) -> None:
    board = write(tmp_path, "board.toml", "start = 0\nend = 10\ndie = 6\njumps = [[3, 7]]\n")
    assert format_of(board) is None
    assert format_of(str(FIXTURES / "ruin.toml")) == "toml_chain"
    dotted = write(tmp_path, "dotted.toml", 'start = "a"\ntransitions.a = { b = 1 }\n')
    assert format_of(dotted) == "toml_chain"


# ---------------------------------------------------------------- PRISM / Storm explicit

def test_tra_die_matches_drn_and_storm() -> None:
    tra = load_chain(str(FIXTURES / "die.tra")).chain
    drn = load_chain(str(FIXTURES / "die.drn")).chain
    for chain in (tra, drn):
        assert one(chain, Question("reach", "one")) == mpq(1, 6)
        assert one(chain, Question("reward", "done", "coin_flips")) == mpq(11, 3)
        assert one(chain, Question("reward", "done", "half")) == mpq(11, 6)
        assert ask(chain, Question())["steps"] == mpq(11, 3)
        assert chain.start == ((0, mpq(1)),)
    for a, b in ((tra.indptr, drn.indptr), (tra.indices, drn.indices),
                 (tra.numerators, drn.numerators), (tra.denominators, drn.denominators)):
        assert np.array_equal(a, b)
    for name in ("half", "coin_flips"):
        assert all(np.array_equal(x, y) for x, y in zip(tra.rewards[name], drn.rewards[name]))


def test_tra_storm_flavour_and_no_lab(tmp_path: Path) -> None:
    write(tmp_path, "coin.lab", "#DECLARATION\ninit heads end\n#END\n0 init\n1 heads end\n2 end\n")
    write(tmp_path, "coin.srew", "0 3/2\n")
    path = write(tmp_path, "coin.tra", "dtmc\n0 1 0.5\n0 2 0.5\n1 1 1\n2 2 1\n")
    chain = load_chain(path).chain
    assert one(chain, Question("reach", "heads")) == mpq(1, 2)
    assert one(chain, Question("reward", "end", "reward")) == mpq(3, 2)
    # PRISM 4.9 may list the initial state in the .tra ("- state ...")
    listed = write(tmp_path, "listed.tra", "# Transitions (DTMC)\n2 2\n- 1 1\n0 0 1\n1 0 1\n")
    assert load_chain(listed).chain.start == ((1, mpq(1)),)
    bare = write(tmp_path, "bare.tra", "2 3\n0 0 1/4\n0 1 3/4\n1 1 1\n")
    chain = load_chain(bare).chain       # no .lab: state 0 starts, as in PRISM
    assert chain.start == ((0, mpq(1)),) and ask(chain, Question())["steps"] == mpq(4, 3)


# ---------------------------------------------------------------- DRN

def test_drn_labels_with_spaces_placeholders_and_action_rewards(tmp_path: Path) -> None:
    path = write(tmp_path, "walk.drn", """// hand written
@type: DTMC
@parameters

@placeholders
$half : 1/2
@reward_models
time cost
@nr_states
3
@nr_choices
3
@model
state 0 [1, 0] init "not done"
\taction 0 [0, 3]
\t\t0 : $half
\t\t1 : 1/4
\t\t2 : 0.25
state 1 "at one" done
\taction 0
\t\t1 : 1
state 2 done
\taction 0
\t\t2 : 1
""")
    chain = load_chain(path).chain
    assert sorted(chain.labels) == ["at one", "done", "init", "not done"]
    assert one(chain, Question("reach", "at one")) == mpq(1, 2)
    assert one(chain, Question("reward", "done", "time")) == 2
    # the action reward 3 is the state's reward in a DTMC: 3 a visit, 2 visits
    assert one(chain, Question("reward", "done", "cost")) == 6


def test_drn_against_storm_exact_model_checking(tmp_path: Path) -> None:
    stormpy = pytest.importorskip("stormpy")
    import stormpy.io
    qvbs = Path("/work/shared/qvbs/brp/brp.prism")
    if not qvbs.is_file():
        pytest.skip("the QVBS models are not here")
    program = stormpy.parse_prism_program(str(qvbs))
    props = stormpy.parse_properties('P=? [ F s=5 ]; P=? [ F s=5 & srep=2 ]', program)
    program, props = stormpy.io.instantiate_constants(program, "N=4,MAX=2", props)
    built = stormpy.build_model[stormpy.Rational](program, props)
    path = tmp_path / "brp.drn"
    stormpy.io.export_to_drn(built, str(path))
    chain = load_chain(str(path)).chain
    assert chain.size == built.nr_states and chain.nnz == built.nr_transitions
    env = stormpy.environments.exact()
    labels = ["(s = 5)", "((s = 5) & (srep = 2))"]
    for prop, label in zip(props, labels):
        expected = stormpy.model_checking(built, prop, environment=env).get_value(
            built.initial_states[0])
        assert one(chain, Question("reach", label)) == mpq(str(expected))


# ---------------------------------------------------------------- bad input

TOML_HEAD = 'start = "a"\n[transitions]\n'


@pytest.mark.parametrize("body, parts", [
    ('"a" = { "b" = "1/2", "c" = "1/3" }\n', ["bad.toml:3", "'a'", "5/6", "not 1", "exactly 1"]),
    ('"a" = { "b" = "-1/2", "c" = "3/2" }\n', ["bad.toml:3", "-1/2", "negative", "between 0 and 1"]),
    ('"a" = { "b" = "3/2" }\n', ["bad.toml:3", "3/2", "above 1"]),
    ('"a" = { "b" = "1/2", "b" = "1/2" }\n', ["bad.toml:3", "Duplicate", "key 'b'", "once"]),
    ('"a" = { "b\\u0007" = 1 }\n', ["bad.toml:3", "control character", "printable"]),
    ('"a" = { "b" = inf }\n', ["bad.toml:3", "'inf'", "quote it"]),
    ('"a" = { "b" = "one half" }\n', ["bad.toml:3", "'one half'", "a/b"]),
    ('"a" = { "b" = true }\n', ["bad.toml:3", "true", '"1/6"']),
    ('"a" = "b"\n', ["bad.toml:3", "not a table"]),
    ('"a" = { "b" = 1 }\n[labels]\ngoal = ["b", "z"]\n', ["bad.toml:5", "'z'", "no transition"]),
    ('"a" = { "b" = 1 }\n[rewards.r]\n"q" = 1\n', ["bad.toml:5", "'q'", "no transition"]),
    ('"a" = { "b" = 1 }\ncolour = "red"\n', ["bad.toml:4", "'colour'", "not a table"]),
])
def test_toml_bad_input(tmp_path: Path, body: str, parts: list[str]) -> None:
    refused(write(tmp_path, "bad.toml", TOML_HEAD + body), *parts)


@pytest.mark.parametrize("text, parts", [
    ('start = "z"\n[transitions]\na = { b = 1 }\n', ["bad.toml:1", "'z'", "no transition"]),
    ('start = { a = "1/2", b = "1/3" }\n[transitions]\na = { b = 1 }\n',
     ["bad.toml:1", "5/6", "exactly 1"]),
    ('[transitions]\na = { b = 1 }\n', ["no start", 'start = "a"']),
    ('start = "a"\ncolour = 1\n[transitions]\na = { b = 1 }\n', ["bad.toml:2", "unknown field 'colour'"]),
    ('start = "a"\n[transitions]\n', ["no transitions"]),
])
def test_toml_bad_start_and_fields(tmp_path: Path, text: str, parts: list[str]) -> None:
    refused(write(tmp_path, "bad.toml", text), *parts)


def test_size_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused(write(tmp_path, "huge.tra", "30000000 1\n0 0 1\n"), "huge.tra:1", "30,000,000 states",
            f"{model.MAX_STATES:,}")
    refused(write(tmp_path, "dense.tra", "3 200000000\n0 0 1\n"), "dense.tra:1",
            f"{model.MAX_TRANSITIONS:,}")
    refused(write(tmp_path, "huge.drn", "@type: DTMC\n@nr_states\n30000000\n@model\n"),
            "huge.drn:3", f"{model.MAX_STATES:,}")
    monkeypatch.setattr(model, "MAX_STATES", 3)
    refused(write(tmp_path, "big.toml", TOML_HEAD + "a = { b = 1 }\nb = { c = 1 }\nc = { d = 1 }\n"),
            "big.toml:", "more than 3 states")


@pytest.mark.parametrize("tra, parts", [
    ("2 3\n0 0 1/2\n0 1 1/3\n1 1 1\n", ["bad.tra:2", "state 0", "5/6", "exactly 1"]),
    ("2 3\n0 0 0.3333333333333333\n0 1 0.6666666666666666\n1 1 1\n",
     ["bad.tra:2", "rounded", "exact values"]),
    ("2 3\n0 0 1/2\n0 0 1/2\n1 1 1\n", ["bad.tra:3", "second transition", "line 2"]),
    ("2 3\n0 0 -1/2\n0 1 3/2\n1 1 1\n", ["bad.tra:2", "negative"]),
    ("2 2\n0 1 1\n1 2 1\n", ["bad.tra:3", "no state 2", "2 states"]),
    ("2 2 3\n0 0 1 1\n1 0 1 1\n", ["bad.tra:1", "nondeterministic model (MDP)"]),
    ("mdp\n0 0 1 1\n", ["bad.tra:1", "nondeterministic model (MDP)"]),
    ("ctmc\n0 1 3\n", ["bad.tra:1", "continuous time"]),
    ("# Transitions (CTMC)\n2 2\n0 1 3\n1 0 2\n", ["bad.tra:1", "continuous time"]),
    ("2 2\n0 1 3\n1 0 2\n", ["bad.tra:2", "above 1", "continuous time"]),
    ("dtmc\n0 1 0 1\n", ["bad.tra:2", "4 fields", "nondeterministic model (MDP)"]),
    ("2 2\n0 1 x\n1 1 1\n", ["bad.tra:2", "'x'"]),
])
def test_tra_bad_input(tmp_path: Path, tra: str, parts: list[str]) -> None:
    refused(write(tmp_path, "bad.tra", tra), *parts)


@pytest.mark.parametrize("lab, parts", [
    ('0="init" 1="goal"\n0: 0\n1: 0\n', ["bad.lab", "2 states are labelled init", "first of them"]),
    ('0="init" 1="goal"\n0: 0\n7: 1\n', ["bad.lab:3", "no state 7"]),
    ('0="init"\n0: 0 4\n', ["bad.lab:2", "'4' is not declared"]),
    ('0="init" 1="goal"\n1: 1\n', ["bad.lab", "no state is labelled init"]),
    ('0="init" 1="go\x07al"\n0: 0\n', ["bad.lab:1", "control character"]),
    ("#DECLARATION\ninit\n", ["bad.lab", "without #END"]),
])
def test_lab_bad_input(tmp_path: Path, lab: str, parts: list[str]) -> None:
    write(tmp_path, "bad.lab", lab)
    refused(write(tmp_path, "bad.tra", "2 2\n0 1 1\n1 1 1\n"), *parts)


def test_reward_files_bad_input(tmp_path: Path) -> None:
    tra = write(tmp_path, "r.tra", "2 2\n0 1 1\n1 1 1\n")
    write(tmp_path, "r.srew", "2 1\n0 -1\n")
    refused(tra, "r.srew:2", "negative")
    write(tmp_path, "r.srew", "2 2\n0 1\n0 2\n")
    refused(tra, "r.srew:3", "second reward for state 0", "line 2")
    (tmp_path / "r.srew").unlink()
    write(tmp_path, "r.trew", "2 1\n1 0 5\n")
    refused(tra, "r.trew:2", "from 1 to 0", "does not have")


DRN_HEAD = "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n2\n@nr_choices\n2\n@model\n"


@pytest.mark.parametrize("text, parts", [
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t0 : 1/2\n\t\t1 : 1/3\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:13", "state 0", "5/6", "exactly 1"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t1 : 1/2\n\t\t1 : 1/2\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:14", "second transition", "line 13"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t1 : 3/2\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:13", "3/2", "above 1"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t1 : 1\n\taction 1\n\t\t0 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:14", "second action", "nondeterministic model (MDP)"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t2 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:13", "target 2"]),
    (DRN_HEAD + "state 1 init\n", ["bad.drn:11", "state 1 where state 0"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t0 : 1\n", ["bad.drn", "declares 2 states", "lists 1"]),
    (DRN_HEAD + "state 0 init\n\taction 0\n\t\t0 : 1\nstate 1 init\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:11", "2 states are labelled init"]),
    (DRN_HEAD.replace("DTMC", "MDP"), ["bad.drn:1", "nondeterministic model (MDP)"]),
    (DRN_HEAD.replace("DTMC", "CTMC"), ["bad.drn:1", "continuous time"]),
    (DRN_HEAD.replace("DTMC", "MA"), ["bad.drn:1", "Markov automaton (MA)"]),
    (DRN_HEAD.replace("DTMC", "POMDP"), ["bad.drn:1", "partially observable", "(POMDP)"]),
    (DRN_HEAD.replace("@parameters\n\n", "@parameters\np q\n"), ["bad.drn:2", "parametric", "p q"]),
    ("@type: DTMC\n@value_type: double\n@nr_states\n2\n@model\nstate 0 init\n\taction 0\n"
     "\t\t0 : 0.3333333333333333\n\t\t1 : 0.6666666666666666\nstate 1\n\taction 0\n\t\t1 : 1\n",
     ["bad.drn:8", "doubles", "build_model[stormpy.Rational]"]),
    (DRN_HEAD + 'state 0 init "a\x07b"\n\taction 0\n\t\t1 : 1\nstate 1\n\taction 0\n\t\t1 : 1\n',
     ["bad.drn:11", "control character"]),
])
def test_drn_bad_input(tmp_path: Path, text: str, parts: list[str]) -> None:
    refused(write(tmp_path, "bad.drn", text), *parts)


# ---------------------------------------------------------------- a format as one file

TINY_FORMAT = '''"""A test format: one line per transition, "from to probability"."""
from pathlib import Path
from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import ChainBuilder, parse_exact

SUFFIXES = (".tiny",)
DESCRIPTION = "a tiny test format"
TAKES = ()


def load(path):
    builder = ChainBuilder(Path(path).stem, path)
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        a, b, p = line.split()
        builder.transition(builder.state(a), builder.state(b), parse_exact(p), number)
    builder.start_at(0)
    builder.label("end", [builder.known("end")])
    return Loaded(builder.build())
'''


def test_a_format_is_one_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "more_formats"
    package.mkdir()
    (package / "tinyformat_for_test.py").write_text(TINY_FORMAT)
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    formats.formats.cache_clear()
    try:
        path = write(tmp_path, "walk.tiny", "start mid 1\nmid start 1/2\nmid end 1/2\n")
        assert format_of(path) == "tinyformat_for_test"
        assert ".tiny" in formats.suffixes()
        loaded = load_chain(path)
        assert loaded.source["format"] == "tinyformat_for_test"
        assert one(loaded.chain, Question("reach", "end")) == 1
        assert ask(loaded.chain, Question())["steps"] == 4
    finally:
        formats.formats.cache_clear()
        sys.modules.pop(f"{formats.__name__}.tinyformat_for_test", None)


def test_formats_register_their_suffixes() -> None:
    found = formats.formats()
    assert {"toml_chain", "tra", "drn"} <= set(found)
    for name in ("toml_chain", "tra", "drn"):
        module = found[name]
        assert module.TAKES == () and module.DESCRIPTION and module.SUFFIXES


def test_fixture_copies_load_from_anywhere(tmp_path: Path) -> None:
    for name in ("die.tra", "die.lab", "die.srew", "die.trew"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    chain = load_chain(str(tmp_path / "die.tra")).chain
    assert sorted(chain.rewards) == ["coin_flips", "half"]
