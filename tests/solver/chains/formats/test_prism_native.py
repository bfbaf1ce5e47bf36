"""PRISM models built by ladders itself (``prism_lang``, ``explore``, ``prism_native``),
with Storm as the referee.

Three parts: small models written here for each feature of the language (renaming,
synchronisation, globals, formulas, rewards on actions, several initial states,
deadlocks), each chain compared with the one Storm builds, state by state (names,
rows, labels, rewards: ``==``) where stormpy is installed, and with values known by
hand everywhere; the QVBS Markov chains (``$LADDERS_QVBS``, default
``/work/shared/qvbs``), each instance's answers ``==`` Storm's exact values and its
states and transitions Storm's; and the errors, each one line with
``file:line:column``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ladders.solver.chains.formats import load_chain
from ladders.solver.chains.explore import Explorer
from ladders.solver.chains.formats.prism import load
from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.chains.questions import Question, answers, build_system, plan_question
from ladders.solver.chains.state_table import valuation_names
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.exact import mpq

QVBS = Path(os.environ.get("LADDERS_QVBS", "/work/shared/qvbs"))

# two modules, a global, synchronisation with a product of distributions, overlapping
# unsynchronised commands (fused uniformly), a formula, rewards on states and actions
SYNC = """\
dtmc
const int M = 2;
const double p = 0.25;
global g : [0..M] init 0;
global flag : bool init false;
formula low = x < 2;
module a
  x : [0..3] init 0;
  ab : bool init true;
  [] x<3 -> p : (x'=x+1) + 1-p : (x'=x);
  [] low -> (x'=x+1) & (ab'=!ab);
  [s] g<M -> (g'=g+1);
endmodule
module b
  y : [0..1] init 0;
  [s] true -> 1/3 : (y'=1) + 2/3 : (y'=0);
  [t] y=1 -> (flag'=true);
endmodule
rewards "r"
  x=1 : 2;
  [] x<3 : 1;
  [s] true : 5;
endrewards
rewards
  true : 1;
endrewards
label "done" = x=3;
"""

# a module made by renaming another, with its action renamed; a ring of two
RING = """\
dtmc
const int K = 3;
module p1
  s1 : [0..K] init 0;
  [go] s1<K -> 1/2 : (s1'=min(s1+1, s2+1)) + 1/2 : (s1'=s1);
  [go] s1=K -> true;
endmodule
module p2 = p1 [ s1=s2, s2=s1 ] endmodule
label "both" = s1=K & s2=K;
"""

# several initial states, a deadlock, arithmetic (mod, pow, floor, ceil, ? :)
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
"""


def solve(chain: Chain, question: Question) -> object:
    """The exact answer of ``question`` (the bound's truth for ``P>=b``)."""
    plan = plan_question(chain, question)
    values = solve_dixon(build_system(chain, question, plan)).values if plan.columns else []
    value = answers(plan, values)[plan.names[0]]
    if question.compare is None:
        return value
    op, bound = question.compare
    return {">=": value >= bound, ">": value > bound, "<=": value <= bound, "<": value < bound}[op]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------- Storm, the referee

def storm_chain(path: str, constants: str | None) -> dict[str, object]:
    """Storm's chain of the model, by state name as ladders names states: rows,
    labels and rewards (folded to states as Storm folds them)."""
    stormpy = pytest.importorskip("stormpy")
    program = stormpy.parse_prism_program(path, prism_compatibility=True)
    if constants:
        program, _ = stormpy.instantiate_constants(program, constants, [])
    options = stormpy.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    options.set_build_state_valuations()
    built = stormpy.build_model[stormpy.Rational](program, options=options)
    valuations = built.state_valuations
    variables = {v.name: v for v in valuations.get_all_variables()}
    return {"built": built, "valuations": valuations, "variables": variables}


def storm_names(storm: dict[str, object], order: list[str], boolean: list[bool]) -> list[str]:
    """Storm's states named as ladders names them: the variables that vary, in
    ladders' order."""
    valuations, variables = storm["valuations"], storm["variables"]
    columns = np.array([[int(v) for v in valuations.get_values_states(variables[name])]  # type: ignore[index]
                        for name in order], dtype=np.int64).T
    varying = [k for k in range(len(order)) if columns[:, k].min() != columns[:, k].max()] \
        or list(range(len(order)))
    return valuation_names(columns[:, varying], [order[k] for k in varying],
                           [boolean[k] for k in varying])


def assert_same_as_storm(chain: Chain, path: str, constants: str | None = None) -> None:
    """``chain`` is Storm's: the same states (by valuation), the same rows, labels and
    state rewards, exactly."""
    from ladders.solver.chains.formats.prism_lang import parse_constants, read_model
    storm = storm_chain(path, constants)
    built = storm["built"]
    program = read_model(path, parse_constants(constants))[0].program
    order, boolean = [v.name for v in program.variables], [v.boolean for v in program.variables]
    names = storm_names(storm, order, boolean)
    # ladders' states by the same names (a chain names them by number where they are long)
    explored = Explorer(program).explore()
    columns = np.stack([explored.layout.column(explored.states, k) for k in range(len(order))], 1)
    varying = [k for k in range(len(order)) if columns[:, k].min() != columns[:, k].max()] \
        or list(range(len(order)))
    ours = valuation_names(columns[:, varying], [order[k] for k in varying],
                           [boolean[k] for k in varying])
    assert (built.nr_states, built.nr_transitions) == (chain.size, chain.nnz)
    assert sorted(names) == sorted(ours)
    mine = {name: i for i, name in enumerate(ours)}
    for state in built.states:
        row = {names[t.column]: mpq(str(t.value)) for a in state.actions for t in a.transitions}
        assert dict((ours[j], p) for j, p in chain.row(mine[names[state.id]])) == row
    labeling = built.labeling
    for name in labeling.get_labels():
        theirs = {names[i] for i in labeling.get_states(name)}
        assert {ours[i] for i in chain.labels.get(name, [])} == theirs, name
    built.reduce_to_state_based_rewards()
    for name, model in built.reward_models.items():
        num, den = chain.rewards[name or "(unnamed)"]
        for i, r in enumerate(model.state_rewards):
            j = mine[names[i]]
            assert mpq(int(num[j]), int(den[j])) == mpq(str(r)), (name, names[i])


# --------------------------------------------------------------------- the language

def test_synchronisation_globals_and_action_rewards(tmp_path: Path) -> None:
    """Overlapping commands fused uniformly, a synchronised step as the product of its
    modules' distributions, action rewards averaged over the choices: Storm's chain."""
    path = write(tmp_path, "sync.prism", SYNC)
    chain = load(path).chain
    assert chain.states[0] == "!flag,ab,g=0,x=0,y=0"
    # three choices from the start: x<3 (1/4 up), low (x up, ab flipped), s (g up, y: 1/3)
    assert dict((chain.states[j], p) for j, p in chain.row(0)) == {
        "!flag,ab,g=0,x=0,y=0": mpq(1, 4), "!flag,ab,g=0,x=1,y=0": mpq(1, 12),
        "!flag,!ab,g=0,x=1,y=0": mpq(1, 3), "!flag,ab,g=1,x=0,y=1": mpq(1, 9),
        "!flag,ab,g=1,x=0,y=0": mpq(2, 9)}
    num, den = chain.rewards["r"]
    assert mpq(int(num[0]), int(den[0])) == mpq(7, 3)  # (1 + 1 + 5) / 3
    assert "(unnamed)" in chain.rewards
    assert_same_as_storm(chain, path)


def test_renamed_module(tmp_path: Path) -> None:
    path = write(tmp_path, "ring.prism", RING)
    loaded = load(path, properties=write(tmp_path, "ring.props", 'P=? [F "both"];\n'
                                         '"t": T=? [F "both"];'))
    assert loaded.chain.states[0] == "s1=0,s2=0"
    assert solve(loaded.chain, loaded.questions[0]) == 1
    assert_same_as_storm(loaded.chain, path)


def test_several_initial_states_deadlocks_and_arithmetic(tmp_path: Path) -> None:
    path = write(tmp_path, "walk.prism", WALK)
    loaded = load(path, constants="N=4", properties=write(
        tmp_path, "walk.props", '"avg": filter(avg, P=? [F "right"], "init");\n'
        '"lo": filter(min, P=? [F "right"], "init");'))
    chain = loaded.chain
    assert chain.start == ((0, mpq(1, 2)), (1, mpq(1, 2)))
    assert sorted(chain.states[i] for i in chain.labels["init"]) == ["x=1,k=0", "x=2,k=0"]
    assert len(chain.labels["deadlock"]) > 0 and any("deadlock" in n for n in chain.notes)
    # from x=1: 1/4, from x=2: 1/2
    assert solve(chain, loaded.questions[0]) == mpq(3, 8)
    assert loaded.questions[1].over == "min"
    assert_same_as_storm(chain, path, "N=4")


def test_a_long_target_is_a_label_of_a_short_name(tmp_path: Path) -> None:
    """A target that is an expression longer than a name may be: its label is named
    ``target of NAME``, and its text stays in the question."""
    path = write(tmp_path, "walk.prism", WALK)
    long = " | ".join(f"k={i}" for i in range(30, 90)) + " | x=N"
    loaded = load(path, constants="N=4",
                  properties=write(tmp_path, "long.props", f'"far": filter(avg, P=? [F {long}], "init");'))
    assert loaded.questions[0].target == "target of far"
    assert long[:40] in loaded.questions[0].text
    assert solve(loaded.chain, loaded.questions[0]) == mpq(3, 8)


def test_builds_without_stormpy(tmp_path: Path) -> None:
    """A PRISM model is read, built and answered with stormpy unimportable."""
    path = write(tmp_path, "ring.prism", RING)
    code = ("import sys; sys.modules['stormpy'] = None\n"
            "from ladders.solver.chains.formats import load_chain\n"
            f"print(load_chain({path!r}).chain.size)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "10"


def test_storm_route_on_request(tmp_path: Path) -> None:
    pytest.importorskip("stormpy")
    path = write(tmp_path, "ring.prism", RING)
    ours, storms = load_chain(path), load_chain(path, builder="storm")
    assert (ours.chain.size, ours.chain.nnz) == (storms.chain.size, storms.chain.nnz)
    assert ours.source is not None and "builder" not in ours.source
    assert storms.source is not None and storms.source["builder"] == "storm"


# --------------------------------------------------------------------- errors

@pytest.mark.parametrize(("text", "message"), [
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> (x'=1)\nendmodule\n",
     r"m.prism:5:1: expected ';' or '\+', found 'endmodule'"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> (x'=y);\nendmodule\n",
     r"m.prism:4:17: unknown name 'y'"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x+1 -> (x'=1);\nendmodule\n",
     r"m.prism:4:6: a guard must be true or false"),
    ("mdp\nmodule m\n  x : [0..1];\nendmodule\n",
     r"m.prism:1:1: a nondeterministic model \(mdp\): ladders answers Markov chains"),
    ("ctmc\nmodule m\n  x : [0..1];\nendmodule\n", r"a continuous-time model \(ctmc\)"),
    ("dtmc\nmodule m\n  x : int;\nendmodule\n", r"m.prism:3:7: an unbounded integer variable 'x'"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> log(2,3) : (x'=1);\nendmodule\n",
     r"m.prism:4:13: log\(...\) has irrational values"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] true -> (x'=x+1);\nendmodule\n",
     r"m.prism:4:3: the update x'=\(x \+ 1\) gives x the value 2 outside its range \[0..1\] "
     r"in the state x=1"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> 0.5 : (x'=1) + 0.4 : (x'=0);\nendmodule\n",
     r"m.prism: the transitions from 'x=0' sum to 9/10"),
    ("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> pow(2, 0.5) : (x'=1);\nendmodule\n",
     r"m.prism:4:13: pow\(2, 1/2\) is irrational in general: a fractional exponent has no "
     r"exact value here"),
    ("dtmc\nsystem m endsystem\n", r"m.prism:2:1: a system ... endsystem composition"),
])
def test_errors_name_the_place(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "m.prism", text)
    with pytest.raises(ChainError, match=message) as err:
        load(path)
    assert "\n" not in str(err.value)


def test_constants_are_all_required(tmp_path: Path) -> None:
    """Every open constant, the model's and the properties file's, must be given; those
    missing are named together; an unknown one is refused."""
    path = write(tmp_path, "walk.prism", WALK)
    props = write(tmp_path, "walk.props", 'const double b;\nfilter(avg, P=? [F x=N & b>0], "init");')
    with pytest.raises(ChainError, match=r"the constants N, b have no value; give them with "
                                         r"--constants N=\.\.\.,b=\.\.\."):
        load(path, properties=props)
    with pytest.raises(ChainError, match=r"the constant b has no value"):
        load(path, constants="N=4", properties=props)
    loaded = load(path, constants="N=4,b=0.375", properties=props)
    assert solve(loaded.chain, loaded.questions[0]) == mpq(3, 8)
    with pytest.raises(ChainError, match=r"--constants N=4,Q=1: Q is not a constant"):
        load(path, constants="N=4,Q=1")


@pytest.mark.parametrize(("prop", "words"), [
    ('P=? [F>=3 "right"]', "a lower or interval time bound (F>=k, F[a,b])"),
    ('P=? [x<3 U[1,4] "right"]', "a lower or interval time bound (U>=k, U[a,b])"),
    ('P=? [G "right"]', "globally (G)"),
    ('R{"steps"}=? [S]', "a long-run average (S, LRA)"),
    ('T=? [C<=3]', "a cumulative reward (C<=k) inside P or T"),
    ('R{"steps"}=? [F<=3 "right"]', "a step bound on F inside R or T"),
    ('filter(argmin, P=? [F "right"], "init")', "filter(argmin, ...) asks for states"),
    ('filter(avg, P=? [F "right"], x=1)', 'a filter over an expression; filter over "init"'),
])
def test_property_refusals(tmp_path: Path, prop: str, words: str) -> None:
    """A property ladders does not answer is refused by itself, by place, name and
    reason; the file's other properties are answered."""
    path = write(tmp_path, "walk.prism", WALK)
    loaded = load(path, constants="N=4",
                  properties=write(tmp_path, "walk.props",
                                f'{prop};\n"ok": filter(avg, P=? [F "right"], "init");'))
    assert [q.answer_name for q in loaded.questions] == ["ok"]
    (message,) = loaded.refused
    assert re.match(r".*walk.props:1:\d+: property .*" + re.escape(words), message)


# --------------------------------------------------------------------- QVBS

def _instances() -> list[object]:
    """Every PRISM instance of the QVBS Markov chains: (family, model, props,
    constants, Storm's states, Storm's values), slow above 40,000 states, left out above
    ``$LADDERS_QVBS_NATIVE_MAX`` states (default 1,100,000: a minute here)."""
    if not QVBS.is_dir():
        return []
    limit = int(os.environ.get("LADDERS_QVBS_NATIVE_MAX", "1100000"))
    out = []
    for family in sorted(p.name for p in QVBS.iterdir() if (p / "index.json").is_file()):
        index = json.loads((QVBS / family / "index.json").read_text())
        results = json.loads((QVBS / family / "storm_exact.json").read_text())["results"]
        for entry in index["files"]:
            model, props = entry["original-file"]
            tag = Path(model).stem.rpartition(".")[2]
            for inst in entry["open-parameter-values"]:
                params = {v["name"]: v["value"] for v in inst["values"]}
                constants = ",".join(f"{k}={v}" for k, v in params.items()) or None
                states = inst["states"][0]["number"]
                values = [r["values"] for r in results if r["params"] == params
                          and (not entry["file-parameter-values"] or f".{tag}." in r["file"])]
                if states > limit or not values:
                    continue
                marks = [pytest.mark.slow] if states > 40_000 else []
                out.append(pytest.param(family, str(QVBS / family / model), str(QVBS / family / props),
                                        constants, values[0], marks=marks,
                                        id=f"{Path(model).stem}-{constants or ''}"))
    return out


def _expected(text: str) -> object:
    return True if text == "true" else False if text == "false" else \
        text if text == "Infinity" else mpq(text)


@pytest.mark.parametrize(("family", "model", "props", "constants", "values"), _instances())
def test_qvbs_equals_storm(family: str, model: str, props: str, constants: str | None,
                           values: dict[str, str]) -> None:
    """Each answer ``==`` Storm's exact value (storm_exact.json); where stormpy is
    installed, the same states and transitions as its build."""
    loaded = load(model, constants=constants, properties=props)
    got = {q.answer_name: solve(loaded.chain, q) for q in loaded.questions}
    assert got == {name: _expected(v) for name, v in values.items() if name in got}
    assert set(got) == set(values)
    try:
        import stormpy  # noqa: F401
    except ImportError:
        return
    if loaded.chain.size <= 40_000:
        assert_same_as_storm(loaded.chain, model, constants)
    else:
        built = storm_chain(model, constants)["built"]
        assert (built.nr_states, built.nr_transitions) == (loaded.chain.size, loaded.chain.nnz)


LINE = """dtmc
const int N;
module walk
  x : [0..N] init 0;
  [] x < N -> 1/2 : (x'=x+1) + 1/2 : (x'=0);
  [] x = N -> true;
endmodule
label "top" = x = N;
"""


def test_a_build_is_followed_and_stops_at_the_limit_it_is_given(tmp_path: Path) -> None:
    """A model of N + 1 states in N + 1 breadth-first levels: the build reports each
    level, and a limit below N + 1 stops it at once with the way to raise it, through
    the API and the CLI (before: 20 million states, the fixed limit, after minutes in
    silence on brp with N = 10^6)."""
    path = tmp_path / "line.prism"
    path.write_text(LINE)
    seen: list[tuple[int, int, int]] = []
    loaded = load_chain(str(path), lambda *a: seen.append(a), constants="N=40", max_states=41)
    assert loaded.chain.size == 41 and [levels for _, _, levels in seen] == list(range(1, 42))
    assert [states for states, _, _ in seen] == [*range(2, 42), 41]
    with pytest.raises(ChainError, match="more than 40 states after 40 breadth-first levels.*"
                                         "--max-states N raises it"):
        load_chain(str(path), constants="N=40", max_states=40)
    with pytest.raises(ChainError, match="--max-states 0: give a positive whole number"):
        load_chain(str(path), constants="N=40", max_states="0")
    cli = [sys.executable, "-c", "from ladders.cluster.cli import main; main()", "solve"]
    out = subprocess.run([*cli, str(path), "--constants", "N=40", "--max-states", "10"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.strip().endswith(
        "more than 10 states after 10 breadth-first levels, the limit of one chain; "
        "--max-states N raises it"), out.stderr
    out = subprocess.run([*cli, "tiny10", "--max-states", "10"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "--max-states is for chain files" in out.stderr, out.stderr
