"""The answers a solve prints with ``--json`` and writes with ``--output``, pinned as
they were before issue 53 made one report and one writer of the race's and the
chain's: every key and every digit they had is still there, with the same value
(keys added since are allowed). Times, the residues' random primes and the folder
of the checkout and of the test's files are left out: they change from run to run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ladders.cluster.cli import cli

ROOT = Path(__file__).resolve().parents[3]
RUIN = ROOT / "docs" / "examples" / "ruin.toml"
PINNED = Path(__file__).with_name("pinned_reports.json")

#: what changes from run to run: left out of the pinned documents
VOLATILE = {"seconds", "startup_seconds", "cpu_seconds", "stages", "prime", "lower_decimal",
            "upper_decimal", "process", "error_probability_below", "attempts",
            "modulus_digits"}

#: name -> the command line (the document is its --json, or the file of its --output)
CASES = {
    "race json": ["solve", "tiny10", "--json"],
    "race output": ["solve", "tiny10", "--output", "{out}"],
    "race three json": ["solve", "tiny10", "-k", "3", "--json"],
    "chain json": ["solve", str(RUIN), "--json"],
    "chain output": ["solve", str(RUIN), "--output", "{out}"],
    "chain two questions json": ["solve", str(RUIN), "--properties", "{props}", "--json"],
    "chain two questions output": ["solve", str(RUIN), "--properties", "{props}",
                                   "--output", "{out}"],
    "bump json": ["solve", "tiny10", "--meet", "bump", "--json"],
}

PROPS = 'P=? [ F "rich" ]\nP>=0.5 [ F "broke" ]\nR=? [ C<=3 ]\n'


def normalized(data: Any) -> Any:
    """``data`` without what changes from run to run (:data:`VOLATILE`), and a source's
    path without the checkout's folder."""
    if isinstance(data, dict):
        return {k: (Path(v).name if k == "path" else normalized(v))
                for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [normalized(v) for v in data]
    return data


def document(case: str, tmp_path: Path) -> dict[str, Any]:
    """The document of ``case``, as the real command line prints or writes it."""
    out, props = tmp_path / "out.json", tmp_path / "ruin.props"
    props.write_text(PROPS)
    args = [a.format(out=out, props=props) for a in CASES[case]]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output + (result.stderr or "")
    text = out.read_text() if "--output" in args else result.stdout
    return normalized(json.loads(text.replace(str(tmp_path), "TMP")))


def missing(pinned: Any, got: Any, where: str = "") -> list[str]:
    """Where ``got`` lacks a key of ``pinned`` or holds another value (a list: the same
    length, each entry compared so)."""
    if isinstance(pinned, dict):
        if not isinstance(got, dict):
            return [f"{where}: not an object"]
        return [m for k, v in pinned.items()
                for m in ([f"{where}/{k}: missing"] if k not in got else
                          missing(v, got[k], f"{where}/{k}"))]
    if isinstance(pinned, list):
        if not isinstance(got, list) or len(got) != len(pinned):
            return [f"{where}: {got!r} is not a list of {len(pinned)}"]
        return [m for i, (a, b) in enumerate(zip(pinned, got)) for m in missing(a, b, f"{where}/{i}")]
    return [] if pinned == got else [f"{where}: {got!r}, was {pinned!r}"]


def test_missing_finds_a_lost_key_and_a_changed_digit() -> None:
    pinned = {"seats": [{"exact": "1/2", "seat": 1}], "engine": "series"}
    assert missing(pinned, {**pinned, "new": 1}) == []
    assert missing(pinned, {"seats": [{"exact": "1/3", "seat": 1}]}) == [
        "/seats/0/exact: '1/3', was '1/2'", "/engine: missing"]


@pytest.mark.parametrize("case", list(CASES))
def test_the_documents_keep_their_keys_and_digits(case: str, tmp_path: Path) -> None:
    assert missing(json.loads(PINNED.read_text())[case], document(case, tmp_path)) == []


@pytest.mark.parametrize("args", [["tiny10"], [str(RUIN)], ["tiny10", "--meet", "bump"]])
def test_the_output_file_is_what_json_prints(args: list[str], tmp_path: Path) -> None:
    """One report and one writer: ``--output`` writes the document ``--json`` prints, a
    race's and a chain's alike (it wrote fewer keys than it printed, a chain's without
    its kind, its ``P>=b`` verdicts or its lumping)."""
    out = tmp_path / "answers.json.gz"
    result = CliRunner().invoke(cli, ["solve", *args, "--json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    import gzip
    assert json.loads(gzip.decompress(out.read_bytes())) == json.loads(result.stdout)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a full disk)")
def test_a_chain_output_on_a_full_disk_names_the_file_and_keeps_the_answers() -> None:
    """A chain's ``--output`` that cannot be written was a traceback with no answer
    printed; it is the race's message now: the answers printed, the file named, exit 1."""
    result = CliRunner().invoke(cli, ["solve", str(RUIN), "--output", "/dev/full"])
    assert result.exit_code == 1
    assert "broke = 0.8   (4/5)" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == (
        "ladders: error: cannot write /dev/full (No space left on device); the answer is "
        "verified and every digit is printed above")
