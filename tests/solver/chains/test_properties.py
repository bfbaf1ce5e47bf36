"""The questions a Storm user asks (issue 51, item 4), answered on every source of
chains and compared ``==`` with Storm's exact mode where stormpy is installed.

Each form has its own test on small models written here: a refused property by
itself (the others answered), until and next, the bounded forms by exact steps,
the long run over bottom components, and ``--properties`` on the chain TOML,
PRISM's explicit files and DRN (labels and the chain's own rewards as atoms).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
