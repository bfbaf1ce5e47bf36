"""Storm's DRN files (:mod:`ladders.solver.chains.formats.drn`): labels, placeholders and
action rewards, Storm's own exact model checking where stormpy is installed, and bad
input refused with its line (helpers: ``test_formats.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ladders.solver.chains.formats import load_chain
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq
from test_formats import one, refused, write

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
