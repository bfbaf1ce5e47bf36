"""The series kernel's unit measured on this machine (issue 54, item 3): the plan uses
the measured unit once it is in the cache, says where its unit came from, and counts
the kernels' first compile where they are not compiled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ladders.solver import calibrate
from ladders.solver.engines.series import choose_split, chain_data, split_cost
from ladders.solver.estimate import SERIES_UNIT_SECONDS, series_figures, series_forecast
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return calibrate.cache_path()


def test_a_measured_unit_is_kept_per_machine_and_used(cache: Path) -> None:
    assert not cache.exists()
    calibrate._write(calibrate.machine_key(), {"unit": 2.5e-9, "measured": 0.0, "primes": 6})
    calibrate._write("another machine", {"unit": 9.0e-9, "measured": 0.0, "primes": 6})
    unit = calibrate.machine_unit(SERIES_UNIT_SECONDS, may_measure=False)
    assert unit.seconds == 2.5e-9 and unit.source.startswith("measured on this machine on 1970")
    chain = build_chain(preset_board("hasbro"))
    units = split_cost(choose_split(chain_data(chain), 4))
    fc = series_forecast(chain, 4, unit=unit)
    assert fc["seconds_per_prime"] == units * 2.5e-9 and fc["unit_source"] == unit.source
    assert json.loads(cache.read_text()).keys() == {calibrate.machine_key(), "another machine"}


def test_without_a_measurement_the_fitted_unit_and_the_compile(cache: Path,
                                                               tmp_path: Path) -> None:
    """A fresh install: numba's cache empty (its folder given by NUMBA_CACHE_DIR, in a
    process of its own), so nothing is measured and the compile is counted."""
    import os
    import subprocess
    import sys
    script = ("import json; from ladders.solver import calibrate; "
              "from ladders.solver.estimate import SERIES_UNIT_SECONDS as fitted; "
              "u = calibrate.machine_unit(fitted); "
              "print(json.dumps([u.seconds == fitted, u.source, u.compile_seconds]))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty numba cache")}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    fitted, source, compile_seconds = json.loads(out.stdout)
    assert fitted and "not compiled yet" in source
    assert compile_seconds == calibrate.COMPILE_SECONDS and not cache.exists()
    chain = build_chain(preset_board("hasbro"))
    cold = series_forecast(chain, 3, unit=calibrate.Unit(SERIES_UNIT_SECONDS, source,
                                                         compile_seconds))
    warm = series_forecast(chain, 3, unit=calibrate.Unit(SERIES_UNIT_SECONDS, "fitted"))
    assert cold["seconds"] - warm["seconds"] == pytest.approx(calibrate.COMPILE_SECONDS)


@pytest.mark.slow
def test_the_plan_measures_the_unit_once(cache: Path) -> None:
    """Compiles the kernels where their cache is cold (a minute)."""
    from ladders.solver.engines.series.kernels import warm
    warm()
    figures = series_figures(build_chain(preset_board("hasbro")), 3)
    assert figures["unit_source"].startswith("measured on this machine now")
    measured = json.loads(cache.read_text())[calibrate.machine_key()]["unit"]
    # the project's machines measured 1.31e-9 and 1.63e-9 s a unit: the same order here
    assert 0.3e-9 < measured < 10e-9 and figures["unit_seconds"] == measured
    again = series_figures(build_chain(preset_board("hasbro")), 3)
    assert again["unit_source"].startswith("measured on this machine on")
