"""JANI models built by ladders itself (``jani_lang`` into the PRISM reader's
``Program``, then the same explorer), with Storm as the referee.

A small model written here for the features the QVBS files do not use (locations,
synchronisation vectors whose actions differ, rewards on locations and destinations, a
transient Boolean label, open initial values), compared with Storm's build; every QVBS
JANI instance: answers ``==`` Storm's exact values, states and transitions equal to
Storm's build of the same file (state by state where small); errors at
``file:line:column``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ladders.solver.chains.explore import Explorer
from ladders.solver.chains.formats.jani_lang import read_jani
from ladders.solver.chains.formats.prism import load
from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.chains.state_table import valuation_names
from ladders.solver.exact import mpq

from test_prism_native import _expected, solve

QVBS = Path(os.environ.get("LADDERS_QVBS", "/work/shared/qvbs"))


def _edge(location, guard, destinations, action=None):  # type: ignore[no-untyped-def]
    edge = {"location": location, "guard": {"exp": guard}, "destinations": [
        {"location": to, **({"probability": {"exp": p}} if p is not None else {}),
         "assignments": [{"ref": r, "value": v} for r, v in assigned]}
        for to, p, assigned in destinations]}
    if action is not None:
        edge["action"] = action
    return edge


# two automata: a walker of two locations, a coin whose "flip" moves with the walker's
# "step"; rewards on a location and on destinations; a label set by a location
RELAY = {
    "jani-version": 1, "name": "relay", "type": "dtmc", "features": ["derived-operators"],
    "actions": [{"name": "step"}, {"name": "flip"}, {"name": "rest"}],
    "constants": [{"name": "N", "type": "int"}, {"name": "p", "type": "real", "value": 0.25}],
    "variables": [
        {"name": "x", "type": {"kind": "bounded", "base": "int", "lower-bound": 0, "upper-bound": "N"},
         "initial-value": 0},
        {"name": "cost", "type": "real", "transient": True, "initial-value": 0},
        {"name": "far", "type": "bool", "transient": True, "initial-value": False},
    ],
    "restrict-initial": {"exp": True},
    "automata": [
        {"name": "walker", "locations": [
            {"name": "go", "transient-values": [{"ref": "cost", "value": 1}]},
            {"name": "back", "transient-values": [
                {"ref": "far", "value": {"op": "≥", "left": "x", "right": 2}}]}],
         "initial-locations": ["go"], "variables": [],
         "edges": [
             _edge("go", {"op": "<", "left": "x", "right": "N"},
                   [("go", "p", [("x", {"op": "+", "left": "x", "right": 1}), ("cost", 3)]),
                    ("back", {"op": "-", "left": 1, "right": "p"}, [])], "step"),
             _edge("back", {"op": ">", "left": "x", "right": 0},
                   [("back", None, [("x", {"op": "-", "left": "x", "right": 1})])]),
             _edge("back", {"op": "=", "left": "x", "right": 0}, [("go", None, [])], "rest"),
         ]},
        {"name": "coin", "locations": [{"name": "c"}], "initial-locations": ["c"],
         "variables": [{"name": "heads", "type": "bool", "initial-value": False}],
         "edges": [_edge("c", True, [("c", 0.5, [("heads", True)]), ("c", 0.5, [("heads", False)])],
                         "flip")]},
    ],
    "system": {"elements": [{"automaton": "walker"}, {"automaton": "coin"}],
               "syncs": [{"synchronise": ["step", "flip"], "result": "step"},
                         {"synchronise": ["rest", None]}]},
    "properties": [
        {"name": "far", "expression": {"op": "filter", "fun": "avg", "states": {"op": "initial"},
                                       "values": {"op": "Pmax", "exp": {"op": "F", "exp": "far"}}}},
        {"name": "cost", "expression": {"op": "filter", "fun": "values", "states": {"op": "initial"},
                                        "values": {"op": "Emin", "exp": "cost", "accumulate": ["steps", "exit"],
                                                   "reach": {"op": "=", "left": "x", "right": "N"}}}},
    ],
}


def write(tmp_path: Path, data: object, name: str = "m.jani") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return str(path)


def storm_build(path: str, constants: str | None):  # type: ignore[no-untyped-def]
    """Storm's exact build of the JANI file, with state valuations."""
    stormpy = pytest.importorskip("stormpy")
    model, _ = stormpy.parse_jani_model(path)
    if constants:
        model, _ = stormpy.instantiate_constants(model, constants, [])
    options = stormpy.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    options.set_build_state_valuations()
    return stormpy.build_model[stormpy.Rational](model, options=options)


def assert_same_as_storm(chain: Chain, path: str, constants: str | None) -> None:
    """Storm's build of the file is ``chain``: states by valuation, rows, labels and
    state rewards, exactly (the file's variables only: one location an automaton)."""
    built = storm_build(path, constants)
    assert (built.nr_states, built.nr_transitions) == (chain.size, chain.nnz)
    program = read_jani(path, {k: v for k, v in (p.split("=") for p in (constants or "").split(",") if p)})[0].program
    order, boolean = [v.name for v in program.variables], [v.boolean for v in program.variables]
    variables = {v.name: v for v in built.state_valuations.get_all_variables()}
    # Storm names an automaton's own variable AUTOMATON_NAME
    storm_name = [v.name if v.module is None else f"{v.module}_{v.name}" for v in program.variables]
    theirs = np.array([[int(v) for v in built.state_valuations.get_values_states(variables[n])]
                       for n in storm_name], dtype=np.int64).T
    explored = Explorer(program).explore()
    ours = np.stack([explored.layout.column(explored.states, k) for k in range(len(order))], 1)
    names = valuation_names(theirs, order, boolean)
    mine = {name: i for i, name in enumerate(valuation_names(ours, order, boolean))}
    assert sorted(names) == sorted(mine)
    for state in built.states:
        row = {mine[names[t.column]]: mpq(str(t.value)) for a in state.actions for t in a.transitions}
        assert dict(chain.row(mine[names[state.id]])) == row
    for name in built.labeling.get_labels():
        assert {mine[names[i]] for i in built.labeling.get_states(name)} == \
            set(chain.labels.get(name, np.zeros(0, np.int64)).tolist()), name
    built.reduce_to_state_based_rewards()
    for name, model in built.reward_models.items():
        num, den = chain.rewards[name]
        if not model.has_state_rewards:   # Storm keeps none where every one is 0
            assert not num.any(), name
            continue
        for i, r in enumerate(model.state_rewards):
            j = mine[names[i]]
            assert mpq(int(num[j]), int(den[j])) == mpq(str(r)), (name, names[i])


# --------------------------------------------------------------------- the format

def test_locations_vectors_and_transient_variables(tmp_path: Path) -> None:
    """Two locations, a vector joining actions of different names, a reward on a
    location and on a destination, a label from a location: Storm's chain and answers."""
    path = write(tmp_path, RELAY)
    loaded = load(path, constants="N=3")
    chain = loaded.chain
    far, cost = (solve(chain, q) for q in loaded.questions)
    stormpy = pytest.importorskip("stormpy")
    model, props = stormpy.parse_jani_model(path)
    model, props = stormpy.instantiate_constants(model, "N=3", props)
    options = stormpy.BuilderOptions(props * 2)
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    built = stormpy.build_model[stormpy.Rational](model, options=options)
    assert (built.nr_states, built.nr_transitions) == (chain.size, chain.nnz)
    for prop, ours in zip(props, (far, cost)):
        result = stormpy.model_checking(built, prop, only_initial_states=True)
        assert ours == mpq(str(result.get_value(built.initial_states[0])))
    assert (far, cost) == (mpq(3, 4), 147)   # cost: 7/4 a step in "go" (1 there, 3 a step up)


def test_open_initial_values_restricted(tmp_path: Path) -> None:
    """Variables without an initial value take every value ``restrict-initial``
    allows: several initial states, as Storm builds them."""
    data = json.loads(json.dumps(RELAY))
    data["variables"][0].pop("initial-value")
    data["automata"][1]["variables"][0].pop("initial-value")
    data["restrict-initial"] = {"exp": {"op": "≤", "left": "x", "right": 1}}
    data["automata"] = data["automata"][1:]
    data["system"] = {"elements": [{"automaton": "coin"}]}
    data["properties"] = []
    path = write(tmp_path, data)
    chain = load(path, constants="N=3").chain
    assert len(chain.labels["init"]) == 4   # x in {0, 1}, heads either
    assert_same_as_storm(chain, path, "N=3")


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(type="mdp"), r"m.jani:4:\d+: a mdp model: ladders answers Markov chains"),
    (lambda d: d["automata"][1]["edges"][0]["guard"].update(exp="y"), r"m.jani:\d+:\d+: unknown name 'y'"),
    (lambda d: d["automata"][1]["edges"][0].update(rate={"exp": 2}), r"a rate \(continuous time\)"),
    (lambda d: d["variables"][0].update(type="int"), r"a variable 'x' of type int"),
    (lambda d: d["automata"][1]["edges"][0]["guard"].update(exp={"op": "log", "left": 2, "right": 3}),
     r"log\(...\) has irrational values"),
    (lambda d: d["system"]["elements"].append({"automaton": "coin"}), r"the automaton 'coin' composed twice"),
    (lambda d: d["variables"][1].update({"initial-value": 1}), r"the reward variable 'cost' starts at 1"),
    (lambda d: d["properties"][1]["expression"]["values"].update(accumulate=["steps"]),
     r"m.jani:\d+:\d+: 'cost' is earned in states, which this property does not accumulate"),
])
def test_errors_name_the_place(tmp_path: Path, change, message: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(RELAY))
    change(data)
    path = write(tmp_path, data)
    with pytest.raises(ChainError, match=message) as err:
        load(path, constants="N=3")
    assert "\n" not in str(err.value)


def test_the_place_is_the_value_at_fault(tmp_path: Path) -> None:
    data = json.loads(json.dumps(RELAY))
    data["automata"][0]["edges"][2]["destinations"][0]["location"] = "nowhere"
    path = write(tmp_path, data)
    with pytest.raises(ChainError) as err:
        load(path, constants="N=3")
    where, _, message = str(err.value).partition(": ")
    line, column = map(int, where.rsplit(":", 2)[1:])
    assert message == "no location 'nowhere'"
    assert Path(path).read_text().splitlines()[line - 1][column - 1:].startswith('"nowhere"')


def test_not_json(tmp_path: Path) -> None:
    with pytest.raises(ChainError, match=r"m.jani:2:1: not JSON"):
        load(write(tmp_path, '{"type": "dtmc",\n}'))


# --------------------------------------------------------------------- QVBS

def _instances() -> list[object]:
    """Every QVBS JANI instance with Storm's exact values: (model, constants, values),
    slow above 40,000 states, left out above ``$LADDERS_QVBS_NATIVE_MAX`` states."""
    if not QVBS.is_dir():
        return []
    limit = int(os.environ.get("LADDERS_QVBS_NATIVE_MAX", "1100000"))
    out = []
    for family in sorted(p.name for p in QVBS.iterdir() if (p / "index.json").is_file()):
        index = json.loads((QVBS / family / "index.json").read_text())
        results = json.loads((QVBS / family / "storm_exact.json").read_text())["results"]
        for entry in index["files"]:
            model = QVBS / family / entry["file"]
            if model.suffix != ".jani" or not model.is_file():
                continue
            tag = model.stem.rpartition(".")[2]
            for inst in entry["open-parameter-values"]:
                params = {v["name"]: v["value"] for v in inst["values"]}
                constants = ",".join(f"{k}={v}" for k, v in params.items()) or None
                states = inst["states"][0]["number"]
                values = [r["values"] for r in results if r["params"] == params
                          and (not entry["file-parameter-values"] or f".{tag}." in r["file"])]
                if states > limit or not values:
                    continue
                marks = [pytest.mark.slow] if states > 40_000 else []
                out.append(pytest.param(str(model), constants, values[0], marks=marks,
                                        id=f"{model.stem}-{constants or ''}"))
    return out


@pytest.mark.parametrize(("model", "constants", "values"), _instances())
def test_qvbs_jani_equals_storm(model: str, constants: str | None, values: dict[str, str]) -> None:
    """Each answer of the file's own properties ``==`` Storm's exact value; where
    stormpy is installed, Storm's build of the same file (state by state where small)."""
    loaded = load(model, constants=constants)
    got = {q.answer_name: solve(loaded.chain, q) for q in loaded.questions}
    assert got == {name: _expected(v) for name, v in values.items()}
    try:
        import stormpy  # noqa: F401
    except ImportError:
        return
    if loaded.chain.size <= 40_000:
        assert_same_as_storm(loaded.chain, model, constants)
    else:
        built = storm_build(model, constants)
        assert (built.nr_states, built.nr_transitions) == (loaded.chain.size, loaded.chain.nnz)


def test_builds_without_stormpy_and_takes_a_properties_file(tmp_path: Path) -> None:
    """A JANI model is read, built and answered with stormpy unimportable; a PRISM
    properties file over its names replaces its own properties."""
    path = write(tmp_path, RELAY)
    asked = tmp_path / "asked.props"
    asked.write_text('"two": P=? [F x=2];\n"far": P=? [F "far"];\n')
    code = ("import sys; sys.modules['stormpy'] = None\n"
            "from ladders.solver.chains.formats import load_chain\n"
            f"loaded = load_chain({path!r}, constants='N=3', properties={str(asked)!r})\n"
            "print(loaded.chain.size, [q.answer_name for q in loaded.questions])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(maxsplit=1) == ["14", "['two', 'far']\n"]
    loaded = load(path, constants="N=3", properties=str(asked))
    assert [solve(loaded.chain, q) for q in loaded.questions] == [1, mpq(3, 4)]
