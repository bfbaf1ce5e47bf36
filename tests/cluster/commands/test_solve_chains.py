"""``ladders solve`` and ``ladders simulate`` on chains: files, --target, pieces that meet,
Infinity, the engines' declarations, and a chain run stored, stopped and resumed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ladders.solver.exact import mpq, str_to_fraction

ROOT = Path(__file__).resolve().parents[3]
RUIN = ROOT / "docs" / "examples" / "ruin.toml"


def ladders(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", *args],
                          capture_output=True, text=True, timeout=300)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def answers(out: str) -> list[dict[str, str]]:
    data = json.loads(out)
    return [{name: a["exact"] for name, a in r["answers"].items()} for r in data["results"]]


def test_a_chain_file_where_it_ends_and_the_expected_steps() -> None:
    proc = ladders("solve", str(RUIN), "--json")
    assert answers(proc.stdout) == [{"broke": "4/5", "rich": "1/5", "steps": "18/5"}]
    result = json.loads(proc.stdout)["results"][0]
    assert result["verified"]["passed"] and result["engine"] == "components"
    reach = ladders("solve", str(RUIN), "--target", "rich", "--json", "--engine", "modular")
    assert answers(reach.stdout) == [{'P=? [F "rich"]': "1/5"}]
    run = ladders("solve", str(RUIN))
    human = run.stdout
    assert "broke = 0.8   (4/5)" in human and "verified" in human
    # the opening line says which engine and why (issue 52)
    assert "(components engine: 1 strongly connected component of 3 unknowns: solved one " \
        "component at a time, in topological order" in run.stderr


def test_infinity_where_the_chain_may_never_end(tmp_path: Path) -> None:
    trap = tmp_path / "trap.toml"
    trap.write_text('start = "s"\n[transitions]\ns = { end = "1/2", t1 = "1/2" }\n'
                    't1 = { t2 = 1 }\nt2 = { t1 = 1 }\n[labels]\nend = ["end"]\n')
    proc = ladders("solve", str(trap), "--json")
    assert answers(proc.stdout) == [{"end": "1/2", "steps": "Infinity"}]
    missed = ladders("solve", str(trap), "--target", "end", "--json")
    assert answers(missed.stdout) == [{'P=? [F "end"]': "1/2"}]


def test_pieces_that_meet_are_a_chain_the_series_engine_declines() -> None:
    proc = ladders("solve", "tiny10", "--meet", "bump", "--json")
    (found,) = answers(proc.stdout)
    seats = [str_to_fraction(found["seat 1 wins"]), str_to_fraction(found["seat 2 wins"])]
    assert sum(seats, mpq(0)) == 1
    assert answers(ladders("solve", "tiny10", "--meet", "bump", "--json", "--engine",
                           "modular").stdout) == [found]
    refused = ladders("solve", "tiny10", "--meet", "bump", "--engine", "series", check=False)
    assert refused.returncode == 2
    assert "series engine declines" in refused.stderr and "never meet" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_bad_flags_are_named() -> None:
    proc = ladders("solve", "tiny10", "--target", "goal", check=False)
    assert proc.returncode == 2 and "--target is for chain files" in proc.stderr
    proc = ladders("solve", str(RUIN), "--rule", "bounce", check=False)
    assert proc.returncode == 2 and "--rule is for boards" in proc.stderr
    for command in ("stats", "show"):  # plan sizes a chain (issue 53)
        proc = ladders(command, str(RUIN), check=False)
        assert proc.returncode == 2 and "is a chain file: 'ladders solve'" in proc.stderr
    proc = ladders("solve", str(RUIN), "--target", "nowhere", check=False)
    assert proc.returncode != 0 and "no label 'nowhere'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_chain_run_is_stored_and_resumed(tmp_path: Path) -> None:
    store = tmp_path / "run"
    first = ladders("solve", str(RUIN), "--engine", "crt", "--executor", "serial",
                    "--checkpoint", str(store), "--json")
    assert answers(first.stdout) == [{"broke": "4/5", "rich": "1/5", "steps": "18/5"}]
    run = json.loads((store / "run.json").read_text())
    assert run["problem"]["kind"] == "chain"
    assert run["problem"]["source"]["path"] == str(RUIN.resolve())
    status = ladders("status", str(store)).stdout
    assert str(RUIN.resolve()) in status and "complete" in status
    verified = ladders("verify", str(store))
    assert "broke = 0.8" in verified.stdout and "verified" in verified.stdout


def test_simulate_a_chain() -> None:
    data = json.loads(ladders("simulate", str(RUIN), "--games", "20000", "--json").stdout)
    est = data["results"][0]["answers"]
    for name, exact in (("broke", 0.8), ("rich", 0.2), ("steps", 3.6)):
        assert abs(est[name]["estimate"] - exact) < 5 * est[name]["stderr"]


def test_the_api_and_the_cli_agree() -> None:
    import ladders as api
    out = api.solve(api.load_chain(str(RUIN)))
    assert out.answers == {"broke": mpq(4, 5), "rich": mpq(1, 5), "steps": mpq(18, 5)}
    assert out.passed
    assert answers(ladders("solve", str(RUIN), "--json").stdout)[0] == {
        k: f"{v.numerator}/{v.denominator}" for k, v in out.answers.items()}
    with pytest.raises(ValueError, match="target= and property= are for chains"):
        api.solve("tiny10", target="goal")


# ---------------------------------------------------------------- the seam's bugs (issue 53)
FIXTURES = ROOT / "tests" / "solver" / "chains" / "formats" / "fixtures"
BOARD_ONLY = (("-k", "5"), ("--players", "3"), ("--meet", "bump"), ("--rule", "bounce"),
              ("--die", "4"))


@pytest.mark.parametrize("name", ["ruin.toml", "die.tra", "die.drn", "die.prism"])
def test_a_board_option_on_a_chain_file_is_refused(name: str) -> None:
    """``ladders solve model.tra -k 5`` quietly ignored ``-k``: every option for boards
    is refused on every chain format by every command that reads one (exit 2, one
    line naming the option and the file)."""
    from click.testing import CliRunner

    from ladders.cluster.cli import cli
    path = str(FIXTURES / name)
    for command in (["solve"], ["simulate", "-n", "10"], ["plan"]):
        for option in BOARD_ONLY:
            result = CliRunner().invoke(cli, [*command, path, *option])
            assert result.exit_code == 2, (command, option, result.output)
            message = result.output.strip().splitlines()[-1]
            named = "--players" if option[0] == "-k" else option[0]
            assert named in message and "for boards" in message and path in message
    table = CliRunner().invoke(cli, ["solve", path, "--table", "t.jsonl"])
    assert table.exit_code == 2 and "--table is for races" in table.output


def test_one_piece_under_a_meeting_rule_is_one_piece() -> None:
    """``ladders simulate --meet bump -k 1`` raced two pieces: it walks the one piece
    asked for (seat 1 always wins), and two by default when pieces meet."""
    def seats(*args: str) -> list[str]:
        out = json.loads(ladders("simulate", "tiny10", "--meet", "bump", "-n", "200",
                                 "--json", *args).stdout)
        return sorted(n for n in out["results"][0]["answers"] if n.startswith("seat"))
    assert seats("-k", "1") == ["seat 1 wins"]
    assert seats() == ["seat 1 wins", "seat 2 wins"]
    assert seats("-k", "3") == ["seat 1 wins", "seat 2 wins", "seat 3 wins"]
