"""The real `ladders` CLI: SPEC 4 JSON keys, help texts, and one-line errors."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ladders.cluster.cli import cli
from ladders.solver.exact import mpq, str_to_fraction

COMMANDS = ["boards", "show", "stats", "bounds", "simulate", "solve", "coins"]


def run(*args: str) -> dict:
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return json.loads(result.stdout)


def test_stats_json_keys() -> None:
    data = run("stats", "hasbro", "--throws", "9")
    for key in ("expected_length", "expected_length_decimal", "sd_decimal", "min_throws",
                "expected_remaining", "distribution"):
        assert key in data
    assert data["expected_length_decimal"].startswith("39.598")
    assert data["min_throws"]["0"] == 7
    assert str_to_fraction(data["distribution"][6]["f"]) == mpq(73, 46656)
    assert set(data["distribution"][0]) == {"t", "f", "F"} and len(data["distribution"]) == 9


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


def test_solve_json_and_table(tmp_path) -> None:
    table = tmp_path / "p.jsonl.gz"
    data = run("solve", "tiny10", "--players", "2", "--table", str(table))
    assert data["players"] == 2 and data["engine"] == "series"  # the default
    assert data["seats"][0]["exact"] == "30799/57720"
    assert data["digits"] == {"numerator": 5, "denominator": 5}
    assert data["verified"]["passed"] is True
    assert data["verified"]["certificate"]["passed"] is True
    lines = gzip.decompress(table.read_bytes()).decode().splitlines()
    rows = [json.loads(x) for x in lines]
    assert rows[0] == {"a": 0, "b": 0, "exact": "30799/57720"}
    assert len(rows) == 64
    other = tmp_path / "modular.jsonl"
    run("solve", "tiny10", "--engine", "modular", "--table", str(other))
    assert other.read_text().splitlines() == lines  # every P(a,b) of two engines, ==


def test_solve_three_players_sum_to_one() -> None:
    data = run("solve", "tiny10", "--players", "3")
    assert sum((str_to_fraction(s["exact"]) for s in data["seats"]), mpq(0)) == 1


@pytest.mark.parametrize("engine", ["series", "modular", "crt", "elimination"])
def test_every_engine_gives_the_same_fraction(engine: str) -> None:
    data = run("solve", "tiny10", "--engine", engine)
    assert data["engine"] == engine and data["seats"][0]["exact"] == "30799/57720"
    tiers = data["verified"]
    assert tiers["passed"] and ("certificate" in tiers or tiers["cross"]["passed"])


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
    assert said[3].startswith("executor= is for engine='crt' or 'elimination' or 'series'")
    assert "(engine='series'), or add force=True to start it anyway" in said[4]
    assert not any("--" in text for text in said), said
    # the command line keeps its flags
    cli_said = CliRunner().invoke(cli, ["bounds", "hasbro", "--moves", "1000000000"]).output
    assert "--moves 1,000,000,000: bounds after" in cli_said


def test_the_bounds_beside_a_local_cluster_run_in_a_forked_process() -> None:
    """Beside a local cluster's workers the bounds walk in a child forked before the
    driver starts a thread; in a thread of the driver they hold its interpreter lock and
    the workers wait for their next batches (3 players on hasbro: 8 % slower end to end,
    when the progress line's thread started first)."""
    proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "solve", "tiny10", "-k", "3",
                           "--executor", "dask", "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["executor"] == "dask" and data["verified"]["bounds"]["process"] == "forked"
