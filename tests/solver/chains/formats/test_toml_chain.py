"""Ladders' own chain format, a TOML file (:mod:`ladders.solver.chains.formats.toml_chain`):
exact answers, start distributions, labels and rewards, boards told apart, bad input
refused with its line (helpers and fixtures: ``test_formats.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ladders.solver.chains.formats import format_of, load_chain
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq
from test_formats import FIXTURES, TOML_HEAD, ask, one, refused, write

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
