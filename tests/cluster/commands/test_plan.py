"""``ladders plan``: how big a race is and what each engine would cost, as the solve
states it (the sizes themselves: ``tests/solver/test_estimate.py``)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from click.testing import CliRunner

from ladders.cluster.cli import cli
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain


def test_plan_command() -> None:
    result = CliRunner().invoke(cli, ["plan", "hasbro", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["unknowns"] == 6561 and data["nonzeros"] == 44221 and data["lu_measured"]
    assert data["verdict"].startswith("one machine")
    big = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "3", "--json"]).stdout)
    assert big["unknowns"] == math.comb(81 + 2, 3) and not big["lu_measured"]
    assert big["modular"]["lower_bound"] and big["crt"]["primes"] > 1000


def test_plan_gives_one_digit_estimate_from_the_engine_that_runs() -> None:
    # the headline digits were the race system's fit (108,108 for 3 players) beside the
    # series row's 176,030; the answer has 175,755
    result = CliRunner().invoke(cli, ["plan", "hasbro", "-k", "3"])
    assert result.exit_code == 0, result.output
    digits = {m.replace(",", "") for m in re.findall(r"~([\d,]+) digits|~([\d,]+) over", result.stdout)
              for m in m if m}
    assert digits == {"176030"}
    data = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "3", "--json"]).stdout)
    assert data["digits_estimate"] == data["series"]["digits_estimate"] == 176_030


def test_the_modular_refusal_gives_the_plans_digits() -> None:
    # the refusal said ~2,135,133 digits (the race system's fit) where the plan and the
    # README say 4.6 million
    plan = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "4", "--json"]).stdout)
    result = CliRunner().invoke(cli, ["solve", "hasbro", "-k", "4", "--engine", "modular"])
    assert result.exit_code == 2
    assert f"an answer of ~{plan['digits_estimate']:,} digits" in result.output
    assert plan["digits_estimate"] == 4_635_463
    assert plan["modular"]["steps"] > 4_000_000  # sized by the same digits


def test_plan_and_solve_state_the_same_series_figures() -> None:
    # the plan timed primes by the wall clock (5 players: "73.1 days" from the plan where
    # the solve said "5.0 days"); now both state the calibrated model's CPU figures
    from ladders.cluster.engines import get_engine, human_seconds
    from ladders.solver.problem import Problem
    data = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "5", "--workers", "16",
                                               "--json"]).stdout)
    series = data["series"]
    said = get_engine("series").forecast(Problem.build(preset_board("hasbro"), 5), 16)
    assert said is not None
    assert f"about {series['primes']:,} primes at about {series['ms_per_prime']:,.1f} ms" in said
    assert f"{human_seconds(series['seconds'])} on 16 workers" in said
    # the model's units of a prime times this machine's unit (measured by the plan, or
    # the fitted one where the kernels are not compiled), the same in both
    from ladders.solver.engines.series import chain_data, choose_split, split_cost
    units = split_cost(choose_split(chain_data(build_chain(preset_board("hasbro"))), 5))
    assert series["ms_per_prime"] == round(1000 * units * series["unit_seconds"], 3)
    assert series["unit_source"] in said


def test_plan_of_six_players_runs_no_prime_and_shows_the_driver_memory(tmp_path: Path) -> None:
    # the plan ran primes (the kernels compiled first: 64 s with no output) and did not
    # show the driver memory that the solve's refusal cites; on a fresh install (numba's
    # cache empty) it compiles nothing and counts the compile instead
    code = ("from click.testing import CliRunner\n"
            "from ladders.cluster.cli import cli\n"
            "plan = CliRunner().invoke(cli, ['plan', 'hasbro', '-k', '6'])\n"
            "solve = CliRunner().invoke(cli, ['solve', 'hasbro', '-k', '6'])\n"
            "print(plan.output + solve.output)\n")
    cache = tmp_path / "numba"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "XDG_CACHE_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    rest = proc.stdout
    assert not list(cache.rglob("*.nbc"))  # no kernel was compiled
    assert "60 s compiling the kernels first" in rest
    row = next(line for line in rest.splitlines() if line.strip().startswith("series"))
    assert "its driver ~51.4 GB" in row
    assert "needs about 51 GB for its driver's reconstruction" in rest.split("ladders: error:")[1]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_plan_says_when_the_machine_is_busy() -> None:
    # two busy loops on the one core the plan may use: it gets about a third of it
    hog = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(hog, preexec_fn=lambda: os.sched_setaffinity(0, {0}))
            for _ in range(2)]
    try:
        proc = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "plan", "hasbro",
                               "-k", "4", "--json"], capture_output=True, text=True, timeout=600,
                              preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["busy"].startswith("the machine is busy: this process got")
    quiet = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "4", "--json"]).stdout)
    assert data["series"]["ms_per_prime"] == quiet["series"]["ms_per_prime"]  # they do not move


def test_plan_counts_the_cross_check_the_solve_spends() -> None:
    # tiny10 with 6 players: the solve spent 15-55 s on the modular engine's cross-check
    # (12 million terms to build its system); the plan left it out
    result = CliRunner().invoke(cli, ["plan", "tiny10", "-k", "6", "--json"])
    assert result.exit_code == 0, result.output
    cross = json.loads(result.stdout)["cross_check"]
    assert cross["engine"] == "modular" and cross["seconds"] >= 12
    text = CliRunner().invoke(cli, ["plan", "tiny10", "-k", "6"]).stdout
    assert "the cross-check by the modular engine" in text
    skipped = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "3", "--json"]).stdout)
    assert "unknowns" in skipped["cross_check"]["skipped"]


def test_the_plan_counts_a_machines_busy_cores_and_the_reconstruction_after() -> None:
    """The wall time on W workers is the CPU alone times the slowdown of the workers that
    share a machine (1 + 0.08 log2 n), over W, plus the reconstruction after the last
    batch; with core-hours and a worker's and the driver's memory (issue 39)."""
    def series(*extra: str) -> dict:
        out = CliRunner().invoke(cli, ["plan", "hasbro", "-k", "5", *extra, "--json"])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)["series"]

    alone = series("--workers", "256", "--per-machine", "1")
    busy = series("--workers", "256")                       # 16 a machine by default
    eight = series("--workers", "256", "--per-machine", "8")
    assert alone["contention"] == 1.0 and busy["contention"] == 1.32 and eight["contention"] == 1.24
    for fig in (alone, busy, eight):
        work = fig["primes"] * fig["ms_per_prime"] / 1000 * fig["contention"] / 256
        assert abs(fig["seconds"] - (fig["start_seconds"] + work + fig["tail_seconds"])) < 0.5
        assert abs(fig["core_hours"] - fig["seconds"] * 256 / 3600) < 0.1
    assert busy["tail_seconds"] > 60 and busy["worker_bytes"] < 0.5e9 < busy["bytes"]
    # three players reconstruct over the denominator multiple: a second or less after
    assert series_tail(3) < 1.0


def series_tail(players: int) -> float:
    out = CliRunner().invoke(cli, ["plan", "hasbro", "-k", str(players), "--json"])
    return json.loads(out.stdout)["series"]["tail_seconds"]


def test_plan_of_six_players_with_force_gives_a_plan() -> None:
    # issue 39: '--force' plans what 'solve --force' would run, past one machine's
    # memory, and says what it needs; the driver's part of the reconstruction is not
    # divided by the workers, its CRT's groups are
    refused = json.loads(CliRunner().invoke(cli, ["plan", "hasbro", "-k", "6", "--workers", "256",
                                                  "--json"]).stdout)
    assert refused["verdict"].startswith("out of reach")
    result = CliRunner().invoke(cli, ["plan", "hasbro", "-k", "6", "--workers", "256", "--force",
                                      "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    verdict, fig = doc["verdict"], doc["series"]
    assert verdict.startswith("a cluster of 1,024 workers: the series engine")
    assert "with --force: it needs about 51 GB" in verdict
    assert 3600 < fig["serial_seconds"] < fig["tail_seconds"]
    serial = fig["start_seconds"] + fig["serial_seconds"]
    wall = (fig["seconds"] - serial) * 256 / 1024 + serial
    assert f"about {wall / 3600:.1f} hours" in verdict


def test_a_serial_tail_is_not_divided_by_the_workers() -> None:
    from ladders.cluster.engines import DAY, PlanRow, verdict
    row = PlanRow("", {}, 40 * 3600.0, scales=True, serial_seconds=20 * 3600.0)
    assert row.seconds_on(2, 16) == 20 * 3600 * 2 / 16 + 20 * 3600
    # 40 h on 2 workers with 20 h serial: 22.5 h on 16 (linear scaling said 5 h)
    assert verdict({"series": row}, ["series"], 2) == (
        "a cluster of 16 workers: the series engine, within a day (about 22.5 hours)")
    # within a day on the workers asked for: one machine only where they fit on one
    quick = PlanRow("", {}, 1.4 * 3600, scales=True, serial_seconds=400.0)
    assert verdict({"series": quick}, ["series"], 16) == "one machine: the series engine"
    assert verdict({"series": quick}, ["series"], 256) == (
        "a cluster of 256 workers: the series engine, within a day (about 1.4 hours)")
    assert verdict({"series": quick}, ["series"], 32, per_machine=32).startswith("one machine")
    # under an hour in minutes, not "about 0.0 hours" (4 players on 64 workers)
    brief = PlanRow("", {}, 55.0, scales=True, serial_seconds=8.0)
    assert verdict({"series": brief}, ["series"], 64) == (
        "a cluster of 64 workers: the series engine, within a day (about 55.0 s)")
    late = PlanRow("", {}, 2 * DAY, scales=True, serial_seconds=1.5 * DAY)
    assert verdict({"series": late}, ["series"], 2).startswith("out of reach")


# ---------------------------------------------------------------- chains (issue 53)
FIXTURES = Path(__file__).resolve().parents[2] / "solver" / "chains" / "formats" / "fixtures"
CHAIN_FILES = ("ruin.toml", "die.tra", "die.drn", "die.prism")


def test_a_chain_has_a_plan_whose_engine_is_the_solves() -> None:
    """``ladders plan`` refused every chain file; it now sizes each question and names
    the engine the solve picks, with its time from the chain engines' cost model."""
    data = json.loads(CliRunner().invoke(cli, ["plan", str(FIXTURES / "ruin.toml"),
                                               "--json"]).stdout)
    assert (data["chain"], data["states"], data["transitions"]) == ("fair gambler's ruin", 6, 10)
    assert (data["unknowns"], data["answers"], data["components"]) == (4, 3, 1)
    assert data["topological"] and data["engine"] == "components"
    assert data["seconds_estimate"] > 0
    solved = json.loads(CliRunner().invoke(cli, ["solve", str(FIXTURES / "ruin.toml"),
                                                 "--json"]).stdout)
    assert solved["results"][0]["engine"] == data["engine"]
    # the same shape for pieces that meet, beside the board's own keys
    bump = json.loads(CliRunner().invoke(cli, ["plan", "tiny10", "--meet", "bump", "-k", "3",
                                               "--json"]).stdout)
    assert (bump["players"], bump["unknowns"], bump["engine"]) == (3, 904, "elimination")
    assert bump["questions"][0]["seconds_estimate"] == bump["seconds_estimate"] > 0


@pytest.mark.parametrize("name", CHAIN_FILES)
def test_every_chain_format_is_planned(name: str) -> None:
    result = CliRunner().invoke(cli, ["plan", str(FIXTURES / name), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["questions"] and all(q["engine"] for q in data["questions"] if q["unknowns"])
