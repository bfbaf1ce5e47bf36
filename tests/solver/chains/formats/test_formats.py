"""The chain file formats together: the die as ``.tra`` and as DRN, the size limits of
every format, adding a format as one module, and the helpers the format tests share.
Each format's own tests: ``test_toml_chain.py`` (ladders' TOML), ``test_tra.py`` (PRISM's
and Storm's explicit ``.tra``/``.lab``), ``test_drn.py`` (Storm's DRN), ``test_prism.py``.

Fixtures (``fixtures/``): ``ruin.toml`` (a fair gambler's ruin, P(rich) = 1/5);
``die.prism`` (Knuth and Yao's die), ``die.drn`` as Storm exported it
(``stormpy.io.export_to_drn(stormpy.build_model[stormpy.Rational](program), ...)``) and
``die.tra``/``.lab``/``.srew``/``.trew``, the same chain as PRISM writes it. Storm's exact
answers for the die: ``P=? [F "one"]`` 1/6, ``R{"coin_flips"}=? [F "done"]`` 11/3,
``R{"half"}=? [F "done"]`` 11/6 (checked again in ``test_drn.py`` where
stormpy is installed).
"""

from __future__ import annotations

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


# ---------------------------------------------------------------- one chain, two formats

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


# ---------------------------------------------------------------- bad input

TOML_HEAD = 'start = "a"\n[transitions]\n'


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
        assert module.TAKES == ("properties",) and module.DESCRIPTION and module.SUFFIXES
