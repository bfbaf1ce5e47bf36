"""``ladders solve`` (:mod:`ladders.cluster.commands.solve`) on boards: its JSON, the
``--table`` of two players, three seats that sum to one, and the same fraction from
every engine."""

from __future__ import annotations

import gzip
import json

import pytest

from examples import run_json as run
from ladders.solver.exact import mpq, str_to_fraction


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
