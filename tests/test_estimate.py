"""Sizing races before solving them: ``ladders.solver.estimate`` and ``ladders plan``."""

from __future__ import annotations

import json
import re
import math

from click.testing import CliRunner

from ladders.cluster.cli import cli
from examples import EXAMPLES
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.estimate import race_size, recurrent_states
from ladders.solver.games.race import race_system


def test_recurrent_states_are_the_squares_a_chute_leads_back_over() -> None:
    chain = build_chain(preset_board("tiny10"))
    # chute 9 -> 2: squares 2..8 except the ladder foot 4 can come round again
    assert sorted(chain.states[i] for i in recurrent_states(chain)) == [2, 3, 5, 6, 7, 8]


def test_sizes_match_the_systems_built() -> None:
    chain = build_chain(EXAMPLES["hasbro20-2"].board)
    for k in (2, 3):
        size = race_size(chain, k, sample=4000)
        system = race_system(chain, k)
        assert size.unknowns == system.size
        assert size.columns == system.columns
        if size.nonzeros_exact:
            assert size.nonzeros == system.nnz
        else:
            assert abs(size.nonzeros - system.nnz) < 0.1 * system.nnz


def test_digit_estimate_is_within_a_factor_of_three() -> None:
    for ex in (e for e in EXAMPLES.values() if e.name != "d3-4"):
        chain = build_chain(ex.board)
        value = solve_dixon(race_system(chain, ex.players), seed=0).values[0]
        actual = len(str(value.denominator))
        estimate = race_size(chain, ex.players).digits
        assert actual / 3 <= estimate <= 3 * actual + 10, (ex.name, actual, estimate)


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
    assert data["digits_from"] == "series"
