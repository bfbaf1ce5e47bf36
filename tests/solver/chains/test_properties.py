"""The questions a Storm user asks (issue 51, item 4), answered on every source of
chains and compared ``==`` with Storm's exact mode where stormpy is installed.

Each form has its own test on small models written here: a refused property by
itself (the others answered), until and next, the bounded forms by exact steps,
the long run over bottom components, and ``--properties`` on the chain TOML,
PRISM's explicit files and DRN (labels and the chain's own rewards as atoms).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

import ladders
from ladders.solver.chains.formats import load_chain
from test_hostile import ladders as cli
from test_hostile import refused

FIXTURES = Path(__file__).parent / "formats" / "fixtures"
DIE = FIXTURES / "die.prism"


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- refused by itself
def test_a_refused_property_leaves_the_others_answered(tmp_path: Path) -> None:
    """A property ladders does not answer is named with its line and reason, on
    stderr before the solve and in the output; the others are answered, exit 0."""
    props = write(tmp_path / "die.props",
                  '"g": P=? [G !"done"];\n"one": P=? [F "one"];\n')
    proc = cli("solve", str(DIE), "--properties", props, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [r["answers"]["one"]["exact"] for r in data["results"]] == ["1/6"]
    (line,) = data["refused"]
    assert line.startswith(f"{props}:1:6: property \"g\"") and "globally (G)" in line
    assert f"ladders: refused: {line}" in proc.stderr
    plain = cli("solve", str(DIE), "--properties", props)
    assert f"refused: {line}" in plain.stdout.splitlines()


def test_a_file_of_refused_properties_is_exit_2(tmp_path: Path) -> None:
    props = write(tmp_path / "none.props", 'P=? [G !"done"];\nP=? [!"one" W "done"];\n')
    refused(cli("solve", str(DIE), "--properties", props),
            f"{props}: no property can be answered", "none.props:1:1", "none.props:2:1")


# ---------------------------------------------------------------- Storm, the referee
WALK = """\
dtmc
const int N;
module walk
  x : [0..N];
  k : [0..20];
  [] x>0 & x<N -> 1/2 : (x'=x-1) & (k'=mod(k+pow(2,x), 7)) + 1/2 : (x'=x+1) & (k'=floor(k/2));
  [] x=0 -> (k'= x=0 ? ceil(k/3) : k);
endmodule
init (x=1 | x=2) & k=0 endinit
label "right" = x=N;
rewards "steps"
  true : 1;
endrewards
rewards "far"
  x>1 : x/2;
endrewards
"""


def storm_values(model: str, text: str, constants: str | None = None) -> list[Fraction]:
    """Storm's exact value of each property of ``text`` (its filter over the initial
    states applied: min, max, or the average)."""
    stormpy = pytest.importorskip("stormpy")
    program = stormpy.parse_prism_program(model, prism_compatibility=True)
    props = stormpy.parse_properties(text, program)
    if constants:
        program, props = stormpy.instantiate_constants(program, constants, props)
    built = stormpy.build_model[stormpy.Rational](program, props)
    out = []
    for prop in props:
        result = stormpy.model_checking(built, prop, only_initial_states=True)
        values = [Fraction(str(result.get_value(i))) for i in built.initial_states]
        how = str(prop).split("Obtain ", 1)[-1]
        out.append(max(values) if how.startswith("the maximum") else
                   min(values) if how.startswith("the min") else sum(values) / len(values))
    return out


def ours(model: str, text: str, tmp_path: Path, constants: str | None = None,
         **keywords: str) -> list[Fraction]:
    """ladders' answer of each property, solved and checked (every check passes)."""
    loaded = load_chain(model, properties=write(tmp_path / "asked.props", text),
                        constants=constants, **keywords)
    assert loaded.refused == ()
    solutions = ladders.solve_all(loaded)
    assert all(s.passed for s in solutions), [s.verified for s in solutions]
    return [Fraction(str(next(iter(s.answers.values())))) for s in solutions]


DIE_ASKED = """\
"u": P=? [ !"one" U "done" ];
"u2": P=? [ s!=2 & s!=6 U d>=5 | d=1 ];
"x": P=? [ X s=1 ];
"xs": P=? [ X s!=0 ];
"f3": P=? [ F<=3 "done" ];
"f10": P=? [ F<=10 d=1 ];
"f0": P=? [ F<=0 s=0 ];
"lt": P=? [ F<4 "done" ];
"u5": P=? [ s!=2 U<=5 "done" ];
"c5": R{"coin_flips"}=? [ C<=5 ];
"c0": R{"half"}=? [ C<=0 ];
"i2": R{"half"}=? [ I=2 ];
"i0": R{"half"}=? [ I=0 ];
"""


def test_until_next_and_bounded_forms_equal_storm(tmp_path: Path) -> None:
    """Until with a left side, next, F<=k, F<k, U<=k, C<=k and I=k on Knuth and Yao's
    die: each ``==`` Storm's exact value."""
    expected = storm_values(str(DIE), DIE_ASKED)
    got = ours(str(DIE), DIE_ASKED, tmp_path)
    assert got == expected
    assert got[:4] == [1, Fraction(1, 6), Fraction(1, 2), 1]


WALK_ASKED = """\
"a": filter(avg, P=? [ x!=0 U "right" ], "init");
"g": filter(min, P=? [ k<5 U "right" ], "init");
"h": filter(max, P=? [ k<5 U x=0 ], "init");
"b": filter(min, P=? [ F<=7 "right" ], "init");
"c": filter(max, P=? [ x>0 U<=9 "right" ], "init");
"d": filter(max, P=? [ X x=2 ], "init");
"e": filter(min, R{"steps"}=? [ C<=6 ], "init");
"f": filter(avg, R{"far"}=? [ I=6 ], "init");
"l": filter(max, R{"far"}=? [ C<=300 ], "init");
"""


def test_forms_over_several_initial_states_equal_storm(tmp_path: Path) -> None:
    """A walk with cycles and two initial states: the least, greatest and average over
    them ``==`` Storm's, 300 steps included."""
    model = write(tmp_path / "walk.prism", WALK)
    assert ours(model, WALK_ASKED, tmp_path, "N=5") == storm_values(model, WALK_ASKED, "N=5")


def storm_filtered(model: str, text: str, constants: str) -> list[Fraction | bool]:
    """Storm's answer of each property of ``text``, its filter applied to the initial
    states' values as Storm's command line applies it (``printFilteredResult``: min,
    max, sum, avg of a value; forall, exists of a truth)."""
    stormpy = pytest.importorskip("stormpy")
    program = stormpy.parse_prism_program(model, prism_compatibility=True)
    props = stormpy.parse_properties(text, program)
    program, props = stormpy.instantiate_constants(program, constants, props)
    built = stormpy.build_model[stormpy.Rational](program, props)
    out: list[Fraction | bool] = []
    for prop in props:
        result = stormpy.model_checking(built, prop)
        how = str(prop).split("Obtain ", 1)[-1]
        if prop.get_raw_formula().has_bound:
            truths = [bool(result.get_truth_values_vector().get(i)) for i in built.initial_states]
            out.append(all(truths) if how.startswith("whether for all") else any(truths))
            continue
        values = [Fraction(str(result.get_value(i))) for i in built.initial_states]
        out.append(max(values) if how.startswith("the maximum") else
                   min(values) if how.startswith("the min") else
                   sum(values) if how.startswith("the sum") else sum(values) / len(values))
    return out


FILTERS_ASKED = """\
"sum": filter(sum, P=? [ F "right" ], "init");
"sumr": filter(sum, R{"steps"}=? [ F x=0 | x=N ], "init");
"sumc": filter(sum, R{"far"}=? [ C<=7 ], "init");
"sums": filter(sum, S=? [ k<3 ], "init");
"all": filter(forall, P>=1/5 [ F "right" ], "init");
"all2": filter(forall, P>1/5 [ F "right" ], "init");
"allr": filter(forall, R{"steps"}<=6 [ F x=0 | x=N ], "init");
"any": filter(exists, P>=1/3 [ F "right" ], "init");
"any2": filter(exists, P<1/5 [ F "right" ], "init");
"anyf": filter(exists, P>=1/8 [ F<=4 "right" ], "init");
"none": filter(forall, P<=0 [ F "right" ], "init");
"""


def test_every_filter_over_several_initial_states_equals_storm(tmp_path: Path) -> None:
    """filter(sum|forall|exists, ..., "init") over two initial states ``==`` Storm's
    answer (sum: twice the average; forall, exists: the bound on the least or
    greatest value), on both builders."""
    model = write(tmp_path / "walk.prism", WALK)
    expected = storm_filtered(model, FILTERS_ASKED, "N=5")
    assert expected == [Fraction(3, 5), 10, Fraction(449, 64), 2, True, False, True, True, False,
                        True, False]
    loaded = load_chain(model, properties=write(tmp_path / "f.props", FILTERS_ASKED),
                        constants="N=5")
    assert [q.over for q in loaded.questions][:5] == ["sum", "sum", "sum", "sum", "min"]
    for builder in ("ladders", "storm"):
        loaded = load_chain(model, properties=write(tmp_path / "f.props", FILTERS_ASKED),
                            constants="N=5", builder=builder)
        assert loaded.refused == ()
        solutions = ladders.solve_all(loaded)
        assert all(s.passed for s in solutions), [s.verified for s in solutions]
        got = [Fraction(str(next(iter(s.answers.values())))) if s.problem.question.compare is None
               else next(iter(s.problem.comparisons(s.seats).values())) for s in solutions]
        assert got == expected


@pytest.mark.parametrize(("prop", "words"), [
    ('P=? [ F "right" ]', "has 2 initial states, and Storm's answer is one value for each"),
    ('P>=1/3 [ F "right" ]', "Storm's answer is one truth for each"),
    ('filter(count, P>=1/3 [ F "right" ], "init")', "is how many initial states meet the bound"),
    ('filter(argmax, P=? [ F "right" ], "init")', "asks for states, not a value"),
    ('filter(exists, P=? [ F "right" ], "init")', "needs a bound"),
    ('filter(max, P>=1/3 [ F "right" ], "init")', "of a bound is a truth per state"),
])
def test_filters_storm_gives_no_single_value_for_are_refused(tmp_path: Path, prop: str,
                                                            words: str) -> None:
    """A plain query over several initial states (Storm prints ``{v1, v2}``), count,
    argmin/argmax and the forms Storm refuses: each refused by itself, with the
    reason, on both builders."""
    asked = write(tmp_path / "r.props", f'{prop};\n"ok": filter(avg, P=? [ F "right" ], "init");')
    model = write(tmp_path / "walk.prism", WALK)
    for builder in ("ladders", "storm"):
        loaded = load_chain(model, properties=asked, constants="N=5", builder=builder)
        assert [q.answer_name for q in loaded.questions] == ["ok"]
        (line,) = loaded.refused
        assert words in line and "\n" not in line


def test_the_stepped_check_catches_a_wrong_value() -> None:
    """The forward stepping is a check: a plan whose value is off by the least amount
    fails it."""
    import dataclasses

    from ladders.solver.chains.questions import Question, plan_question
    from ladders.solver.checks.stepped import check_stepped
    chain = load_chain(str(DIE)).chain
    question = Question("reach", "done", steps=3)
    plan = plan_question(chain, question)
    assert check_stepped(chain, question, plan)["passed"]
    (name,) = plan.names
    wrong = dataclasses.replace(plan, known={name: plan.known[name] + Fraction(1, 2**40)})
    assert not check_stepped(chain, question, wrong)["passed"]


def test_a_question_keeps_its_path_and_steps_in_a_store() -> None:
    from ladders.solver.chains.questions import Question
    for question in (Question("reach", "done", through="one", steps=4),
                     Question("cumulative", reward="half", steps=7), Question("next", "done")):
        assert Question.from_json(json.loads(json.dumps(question.to_json()))) == question


def test_instantaneous_reward_of_action_rewards_is_refused(tmp_path: Path) -> None:
    """Storm counts only state rewards at step k (and refuses a structure without
    any); the chain keeps action rewards folded into the state's: refused, by itself."""
    loaded = load_chain(str(DIE), properties=write(tmp_path / "i.props",
                                                   '"ia": R{"coin_flips"}=? [ I=2 ];\n'
                                                   '"ih": R{"half"}=? [ I=2 ];\n'))
    assert [q.answer_name for q in loaded.questions] == ["ih"]
    assert "action or transition rewards" in loaded.refused[0]


# ---------------------------------------------------------------- the long run
LONG_RUN = """\
dtmc
const int M;
module m
  s : [0..6] init 0;
  [] s=0 -> 1/3:(s'=1) + 2/3:(s'=4);
  [] s=1 -> (s'=2);
  [] s=2 -> 1/2:(s'=3) + 1/2:(s'=1);
  [] s=3 -> (s'=1);
  [] s=4 -> 1/5:(s'=5) + 4/5:(s'=4);
  [] s=5 -> 2/7:(s'=6) + 5/7:(s'=4);
  [] s=6 -> (s'=4);
endmodule
module ring
  x : [0..M-1] init 0;
  [] true -> 1/3:(x'=mod(x+1,M)) + 1/3:(x'=mod(x*7+3,M)) + 1/3:(x'=x);
endmodule
label "odd" = s=1 | s=3 | s=5;
"""
LONG_RUN_ASKED = """\
"a": S=? [ "odd" ];
"b": S=? [ x<10 ];
"c": S=? [ x<10 & "odd" | s=6 ];
"d": S=? [ s=0 ];
"""


def test_the_long_run_equals_storm(tmp_path: Path) -> None:
    """Two bottom components of 60 states each (one periodic), reached with 1/3 and
    2/3: S=? ``==`` Storm's exact long-run values; on the die (absorbing) it is where
    the chain ends."""
    model = write(tmp_path / "lr.prism", LONG_RUN)
    got = ours(model, LONG_RUN_ASKED, tmp_path, "M=20")
    assert got == storm_values(model, LONG_RUN_ASKED, "M=20")
    assert got[3] == 0
    walk = write(tmp_path / "walk.prism", WALK)
    asked = 'filter(avg, S=? [ "right" ], "init");\nfilter(max, S=? [ k<3 ], "init");\n'
    assert ours(walk, asked, tmp_path, "N=5") == storm_values(walk, asked, "N=5")
    assert ours(str(DIE), 'S=? [ "one" ];', tmp_path) == [Fraction(1, 6)]


def test_a_bottom_components_share_by_state_reduction_and_by_system_agree(tmp_path: Path) -> None:
    """The two ways to a component's long-run share give the same fraction, and the
    long-run answer with the system's share ``==`` Storm's (components of 60 states, the
    state reduction kept to 10)."""
    from ladders.solver.chains.long_run import bottom_components, share_by_system, stationary
    from ladders.solver.chain_problem import target_value
    model = write(tmp_path / "lr.prism", LONG_RUN)
    chain = load_chain(model, constants="M=20").chain
    for name in ("odd",):
        phi = chain.label_mask(name)
        for part in bottom_components(chain):
            pi = stationary(chain, part)
            by_reduction = sum((pi[s] for s in part[phi[part]].tolist()), Fraction(0))
            assert share_by_system(chain, part, phi[part], target_value) == by_reduction


def test_the_long_run_by_system_equals_storm(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from ladders.solver.chains import long_run
    monkeypatch.setattr(long_run, "REDUCTION_STATES", 10)
    model = write(tmp_path / "lr.prism", LONG_RUN)
    assert ours(model, LONG_RUN_ASKED, tmp_path, "M=20") == \
        storm_values(model, LONG_RUN_ASKED, "M=20")


def test_a_bottom_component_too_big_is_refused_by_itself(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from ladders.cluster.commands.solve import chain_problems
    from ladders.solver.chains import long_run
    monkeypatch.setattr(long_run, "MAX_COMPONENT", 50)
    monkeypatch.setattr(long_run, "REDUCTION_STATES", 10)
    model = write(tmp_path / "lr.prism", LONG_RUN)
    props = write(tmp_path / "lr.props", '"b": S=? [ x<10 ];\n"p": P=? [ F s=4 ];\n')
    problems, refused = chain_problems(model, None, None, 1, None, None, props, "M=20")
    assert [p.question.answer_name for p in problems] == ["p"]
    (line,) = refused
    assert "a bottom component of 60 states" in line and "up to 50 states" in line


# ---------------------------------------------------------------- chain files
LABEL_ASKED = """\
"u": P=? [ !"one" U "done" ];
"x": P=? [ X !"done" ];
"f3": P=? [ F<=3 "done" ];
"u5": P=? [ !"one" U<=5 "done" ];
"c5": R{"coin_flips"}=? [ C<=5 ];
"i2": R{"half"}=? [ I=2 ];
"r": R{"coin_flips"}=? [ F "done" ];
"t": T=? [ F "done" & !"one" | "one" ];
"s": S=? [ "one" ];
"e": P=? [ F "done" & !"one" ];
"""


@pytest.mark.parametrize("name", ["die.drn", "die.tra"])
def test_properties_of_explicit_files_equal_storm(tmp_path: Path, name: str) -> None:
    """Storm's own export of the die (DRN; PRISM's .tra, .lab, .srew, .trew) asked with
    labels as atoms and its own rewards: ``==`` Storm's answers on the PRISM model."""
    expected = storm_values(str(DIE), LABEL_ASKED)
    assert ours(str(FIXTURES / name), LABEL_ASKED, tmp_path) == expected


def test_instantaneous_reward_of_transition_rewards_is_refused_on_files(tmp_path: Path) -> None:
    for name in ("die.drn", "die.tra"):
        loaded = load_chain(str(FIXTURES / name), properties=write(
            tmp_path / "i.props", 'R{"coin_flips"}=? [ I=2 ];\nR{"half"}=? [ I=2 ];\n'))
        assert len(loaded.questions) == 1 and "transition rewards" in loaded.refused[0]


RUIN_TOML = """\
start = { "1" = "1/2", "2" = "1/2" }
[transitions]
"1" = { "0" = "2/3", "2" = "1/3" }
"2" = { "1" = "2/3", "3" = "1/3" }
"3" = { "2" = "2/3", "4" = "1/3" }
[labels]
broke = ["0"]
rich = ["4"]
low = ["0", "1"]
[rewards.coins]
"1" = "1"
"2" = "2"
"3" = "3"
"""
RUIN_PRISM = """\
dtmc
module ruin
  s : [0..4];
  [] s>0 & s<4 -> 2/3 : (s'=s-1) + 1/3 : (s'=s+1);
endmodule
init s=1 | s=2 endinit
label "broke" = s=0;
label "rich" = s=4;
label "low" = s<=1;
rewards "coins"
  s>0 & s<4 : s;
endrewards
"""
RUIN_ASKED = """\
"rich": filter(avg, P=? [ F "rich" ], "init");
"lowrich": filter(avg, P=? [ !"low" U "rich" ], "init");
"x": filter(avg, P=? [ X "low" & !"broke" ], "init");
"f3": filter(avg, P=? [ F<=3 "rich" | "broke" ], "init");
"coins": filter(avg, R{"coins"}=? [ F "rich" | "broke" ], "init");
"c4": filter(avg, R=? [ C<=4 ], "init");
"i2": filter(avg, R{"coins"}=? [ I=2 ], "init");
"s": filter(avg, S=? [ "broke" ], "init");
"min": filter(min, P=? [ F "rich" ], "init");
"max": filter(max, P=? [ "low" U<=6 "broke" ], "init");
"""


def test_properties_of_a_toml_chain_equal_storm(tmp_path: Path) -> None:
    """A TOML chain's labels and rewards, its start a distribution: ``==`` Storm's on
    the same chain written in PRISM (two initial states, averaged); a plain query is
    the distribution's value."""
    toml = write(tmp_path / "ruin.toml", RUIN_TOML)
    prism = write(tmp_path / "ruin.prism", RUIN_PRISM)
    got = ours(toml, RUIN_ASKED, tmp_path)
    assert got == storm_values(prism, RUIN_ASKED)
    assert got[0] == Fraction(2, 15)  # (2^i - 1) / 15 from i = 1 and 2, averaged
    assert ours(toml, 'P=? [ F "rich" ];', tmp_path) == [Fraction(2, 15)]


def test_a_chain_files_target_of_any_length_and_its_errors(tmp_path: Path) -> None:
    """A state formula of 400 characters over labels becomes a label of a short
    made-up name; a bare name (a variable) is refused with the labels there are."""
    toml = write(tmp_path / "ruin.toml", RUIN_TOML)
    long = " | ".join(['"rich"'] * 40 + ['"broke"'] * 20)
    assert len(long) > 400
    loaded = load_chain(toml, properties=write(tmp_path / "l.props", f'"w": P=? [ F {long} ];'))
    (question,) = loaded.questions
    assert question.target == "target of w"
    assert ours(toml, f"P=? [ F {long} ];", tmp_path) == [1]
    proc = cli("solve", toml, "--properties", write(tmp_path / "v.props", "P=? [ F s=4 ];"))
    refused(proc, "v.props:1:9: unknown name 's'", 'name its labels in quotes ("broke", '
            '"deadlock", "low", "rich")')


def test_jani_step_bounds_until_and_long_run_equal_storm(tmp_path: Path) -> None:
    """A JANI file's own properties: ``step-bounds`` (``upper``, ``upper-exclusive``),
    an until with a left side and ``Smin``, added to QVBS's crowds: ``==`` Storm's."""
    stormpy = pytest.importorskip("stormpy")
    source = Path("/work/shared/qvbs/crowds/crowds.jani")
    if not source.is_file():
        pytest.skip("the QVBS models are not here")
    data = json.loads(source.read_text(encoding="utf-8-sig"))
    seen = {"left": "observe0", "op": ">", "right": 1}
    quiet = {"op": "=", "left": "observe1", "right": 0}

    def prop(name: str, values: dict[str, object]) -> dict[str, object]:
        return {"name": name, "expression": {"fun": "values", "op": "filter",
                                             "states": {"op": "initial"}, "values": values}}
    data["properties"] += [
        prop("soon", {"op": "Pmin", "exp": {"op": "U", "left": True, "right": seen,
                                             "step-bounds": {"upper": 20}}}),
        prop("soonx", {"op": "Pmin", "exp": {"op": "U", "left": True, "right": seen,
                                              "step-bounds": {"upper": 20, "upper-exclusive": True}}}),
        prop("until", {"op": "Pmin", "exp": {"op": "U", "left": quiet, "right": seen}}),
        prop("untilk", {"op": "Pmax", "exp": {"op": "U", "left": quiet, "right": seen,
                                               "step-bounds": {"upper": 40}}}),
        prop("long", {"op": "Smin", "exp": seen}),
    ]
    path = tmp_path / "crowds.jani"
    path.write_text(json.dumps(data))
    constants = "TotalRuns=3,CrowdSize=5"
    model, props = stormpy.parse_jani_model(str(path))
    model, props = stormpy.instantiate_constants(model, constants, props)
    built = stormpy.build_model[stormpy.Rational](model, props)
    expected = {p.get_name(): Fraction(str(stormpy.model_checking(
        built, p, only_initial_states=True).get_value(built.initial_states[0]))) for p in props}
    loaded = load_chain(str(path), constants=constants)
    assert loaded.refused == ()
    solutions = ladders.solve_all(loaded)
    assert all(s.passed for s in solutions)
    got = {s.problem.question.answer_name: Fraction(str(next(iter(s.answers.values()))))
           for s in solutions}
    assert got == expected and len(got) == 6


def test_the_storm_route_answers_the_same(tmp_path: Path) -> None:
    """``--builder storm``: until, the bounded forms, C<=k, I=k and the long run from
    Storm's formulas, ``==`` Storm's values; next (X), which stormpy does not bind, is
    refused by itself."""
    pytest.importorskip("stormpy")
    asked = "\n".join(line for line in DIE_ASKED.splitlines() if " X " not in line) + "\n"
    assert ours(str(DIE), asked, tmp_path, builder="storm") == storm_values(str(DIE), asked)
    loaded = load_chain(str(DIE), properties=write(tmp_path / "x.props", DIE_ASKED),
                        builder="storm")
    assert len(loaded.questions) == len(asked.splitlines())
    assert len(loaded.refused) == 2 and all("X" in line for line in loaded.refused)
    model = write(tmp_path / "lr.prism", LONG_RUN)
    assert ours(model, LONG_RUN_ASKED, tmp_path, "M=20", builder="storm") == \
        storm_values(model, LONG_RUN_ASKED, "M=20")
