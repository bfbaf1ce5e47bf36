"""PRISM's and Storm's explicit model files (:mod:`ladders.solver.chains.formats.tra`):
``.tra`` with the ``.lab``, ``.srew`` and ``.trew`` beside it, in both flavours, and bad
input refused with its line (helpers and fixtures: ``test_formats.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ladders.solver.chains.formats import load_chain
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq
from test_formats import FIXTURES, ask, one, refused, write

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


def test_fixture_copies_load_from_anywhere(tmp_path: Path) -> None:
    for name in ("die.tra", "die.lab", "die.srew", "die.trew"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    chain = load_chain(str(tmp_path / "die.tra")).chain
    assert sorted(chain.rewards) == ["coin_flips", "half"]
