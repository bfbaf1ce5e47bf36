"""``ladders stats`` (:mod:`ladders.cluster.commands.stats`): its JSON keys, absurd
``--throws`` refused at once, and long distributions printed as decimals in little
memory."""

from __future__ import annotations

import json

from examples import run_json as run
from ladders.solver.exact import mpq, str_to_fraction
from test_hostile import ladders, refused, with_peak_memory


def test_stats_json_keys() -> None:
    data = run("stats", "hasbro", "--throws", "9")
    for key in ("expected_length", "expected_length_decimal", "sd_decimal", "min_throws",
                "expected_remaining", "distribution"):
        assert key in data
    assert data["expected_length_decimal"].startswith("39.598")
    assert data["min_throws"]["0"] == 7
    assert str_to_fraction(data["distribution"][6]["f"]) == mpq(73, 46656)
    assert set(data["distribution"][0]) == {"t", "f", "F"} and len(data["distribution"]) == 9


def test_stats_refuses_absurd_throws() -> None:
    """A property test drew ``stats hasbro --throws 10^25 --json``: it ran for minutes."""
    refused(ladders("stats", "hasbro", "--throws", "10" + "0" * 25, timeout=20), "at most 100,000")
    refused(ladders("stats", "hasbro", "--throws", "5669", "--json", timeout=20), "at most 5,668")
    assert len(json.loads(ladders("stats", "tiny10", "--throws", "300", "--json").stdout)
               ["distribution"]) == 300


def test_stats_prints_decimals_without_building_fractions() -> None:
    proc, peak = with_peak_memory("stats", "hasbro", "--throws", "20000")
    assert peak < 400_000  # KB of peak memory: 919 MB (and 19 s) before
    last = proc.stdout.strip().splitlines()[-1].split()
    assert last == ["20000", "0.0000000000", "0.9999999999"]
