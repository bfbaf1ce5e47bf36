"""The real `ladders` CLI: SPEC 4 JSON keys, help texts, and one-line errors (those of
`ladders solve` and `ladders stats` alone: ``commands/test_solve.py``, ``commands/test_stats.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from examples import run_json as run
from ladders.cluster.cli import cli
from ladders.solver.exact import str_to_fraction

COMMANDS = ["boards", "show", "stats", "bounds", "simulate", "solve", "coins"]


def test_bounds_json_keys() -> None:
    data = run("bounds", "hasbro", "--moves", "9")
    assert data["moves"] == 9
    assert data["lower_decimal"].startswith("0.5000354014697371")
    assert str_to_fraction(data["lower"]) < str_to_fraction(data["upper"])
    data = run("bounds", "hasbro", "--digits", "16")
    assert data["lower_decimal"][:18] == data["upper_decimal"][:18] == "0.5078027734609139"


def test_simulate_json_keys() -> None:
    one = run("simulate", "tiny10", "--games", "2000", "--seed", "4")
    assert {"games", "estimate", "stderr", "ci95", "mean_length"} <= set(one)
    two = run("simulate", "tiny10", "-k", "2", "--games", "2000", "--convergence")
    assert {"games", "estimate", "stderr", "ci95", "convergence"} <= set(two)
    assert "mean_length" not in two


def test_simulate_is_reproducible() -> None:
    a = run("simulate", "hasbro", "--games", "3000", "--seed", "11")
    b = run("simulate", "hasbro", "--games", "3000", "--seed", "11")
    assert a["estimate"] == b["estimate"]


def test_coins_json_keys() -> None:
    data = run("coins")
    assert {"expected_cycles", "expected_cycles_decimal", "win_a", "win_b", "by_start"} <= set(data)
    assert data["expected_cycles_decimal"].startswith("17.54")
    assert data["by_start"]["A4B4"] == data["expected_cycles"]
    assert str_to_fraction(data["win_a"]) + str_to_fraction(data["win_b"]) == 1


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_explains_itself(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output and "--json" in result.output


BAD = [
    ("0\n10\n6\n4 7\n4 8\n", "square 4 has two jumps"),
    ("0\n10\n6\n4 7\n7 2\n", "chained jumps"),
    ("0\n10\n6\n4 12\n", "leaves the board"),
    ("0\n10\n6\n0 5\n", "starts on the start square"),
    ("0\n10\nsix\n", "is not an integer"),
    ("0\n10\n0\n", "die size 0"),
    ("5\n5\n6\n", "end square 5 is not after"),
    ("0\n10\n1\n9 2\n", "can last forever"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_boards_through_the_real_program(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "board.txt"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "stats", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("args", [
    ["bounds", "hasbro"], ["bounds", "hasbro", "--moves", "0"], ["stats", "nosuch"],
    ["solve", "tiny10", "--players", "9"], ["coins", "--a", "-1"], ["show", "tiny10", "--die", "1"],
    ["solve", "tiny10", "-k", "3", "--table", "x.jsonl"], ["nosuchcommand"],
    ["solve", "tiny10", "--engine", "elimination", "--table", "x.jsonl"],
    ["solve", "tiny10", "--workers", "2"], ["solve", "tiny10", "--order", "far"],
])
def test_usage_errors_are_one_line_with_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("ladders: error:")


def test_workers_with_executor_serial_is_refused_not_ignored() -> None:
    # issue 40: --workers was silently ignored with --executor serial (the run went on
    # in this process); now both ways are refused before any work
    import ladders
    result = CliRunner().invoke(cli, ["solve", "tiny10", "-k", "3", "--executor", "serial",
                                      "--workers", "2"])
    assert result.exit_code == 2
    assert ("--workers is for a Dask cluster, and --executor serial runs the tasks in this "
            "process without one: give one of the two") in result.output
    with pytest.raises(ValueError, match=r"^spec= is for a Dask cluster, and executor='serial'"):
        ladders.solve("tiny10", players=3, executor="serial",
                      spec=ladders.ClusterSpec(workers=2))


def test_the_api_names_its_keywords_not_the_flags() -> None:
    # issue 40: ladders.bounds(moves=...) answered "--moves 1,000,000,000: ..."
    import ladders
    with pytest.raises(ValueError) as moves:
        ladders.bounds("hasbro", moves=10**9)
    with pytest.raises(ValueError) as digits:
        ladders.bounds("hasbro", digits=10**9)
    with pytest.raises(ValueError) as every:
        ladders.solve("hasbro", engine="modular", save_every=3)
    with pytest.raises(ValueError) as executor:
        ladders.solve("hasbro", engine="modular", executor="dask")
    with pytest.raises(ValueError) as reach:
        ladders.solve("hasbro", players=4, engine="modular")
    said = [str(e.value) for e in (moves, digits, every, executor, reach)]
    assert said[0].startswith("moves=1000000000: bounds after that many moves")
    assert said[1].startswith("digits=1000000000: the bounds agree")
    assert said[2] == "save_every= is for engine='modular' with checkpoint="
    assert said[3].startswith("executor= is for engine='components' or 'crt' or 'elimination' or 'series'")
    assert "(engine='series'), or add force=True to start it anyway" in said[4]
    assert not any("--" in text for text in said), said
    # the command line keeps its flags
    cli_said = CliRunner().invoke(cli, ["bounds", "hasbro", "--moves", "1000000000"]).output
    assert "--moves 1,000,000,000: bounds after" in cli_said
