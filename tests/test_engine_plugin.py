"""Adding an engine is adding files: a toy engine in a package of its own (this test's
files, made importable by ``PYTHONPATH`` and declared under the entry point group
``ladders.engines`` as an installed package declares it) is found by the registry,
offered by ``ladders solve --engine``, shown with its own option in ``ladders solve
--help``, given its own row in ``ladders plan``, and solves and verifies a race, with
no edit to any module of ladders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LADDERS = [sys.executable, "-c", "from ladders.cluster.cli import main; main()"]

TOY = '''
"""A toy exact engine: the race system solved over the rationals by p-adic lifting
(the modular engine's mathematics, used through ladders' public solver functions)."""

import click

from ladders.cluster.engines import Answer, Engine, Option, PlanRow
from ladders.cluster.loops import OneStep


class Solve(OneStep):
    def __init__(self, problem, flavour):
        self.problem, self.flavour = problem, flavour
        self.seats = None

    def compute(self):
        from ladders.solver.engines.modular import solve_dixon
        from ladders.solver.games.race import seats_from_values
        values = solve_dixon(self.problem.system, seed=1).values
        self.seats = seats_from_values(self.problem.system, self.problem.players, values)
        return True


class ToyEngine(Engine):
    name = "toy"
    summary = "a toy engine from another package"
    options = (Option("toy_flavour", "--toy-flavour", click.Choice(["sweet", "sour"]),
                      "the toy's flavour [default: sweet]"),)

    def preference(self, problem):
        return None  # only when asked for by name

    def plan(self, problem, workers, per_machine=None):
        return PlanRow(f"a toy row for {problem.players} players", {"toy": True}, 1.0)

    def open_work(self, store, problem, request, progress, should_stop):
        return Solve(problem, request.options.get("toy_flavour", "sweet"))

    def answer(self, work, problem, request):
        return Answer(work.seats, details={"flavour": work.flavour})


ENGINE = ToyEngine()
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment in which the toy package is installed (a module and its
    dist-info with the entry point), as pip would leave it."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "toy_ladders_engine.py").write_text(TOY)
    info = root / "toy_ladders_engine-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-ladders-engine\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ladders.engines]\ntoy = toy_ladders_engine:ENGINE\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*LADDERS, *args], capture_output=True, text=True, env=env, timeout=300)


def test_the_registry_finds_the_toy(plugin: dict[str, str]) -> None:
    code = "from ladders.cluster.engines import engines; print(sorted(engines()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=plugin,
                         check=True)
    assert "'toy'" in out.stdout
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "'toy'" not in alone.stdout  # the package, not ladders, brings it


def test_solve_help_offers_the_toy_and_its_option(plugin: dict[str, str]) -> None:
    out = run(plugin, "solve", "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "toy = a toy engine from another package" in text
    assert "--toy-flavour" in text and "toy: the toy's flavour" in text


def test_plan_has_a_row_for_the_toy(plugin: dict[str, str]) -> None:
    out = run(plugin, "plan", "tiny10", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["toy"] == {"toy": True}
    assert "a toy row for 2 players" in run(plugin, "plan", "tiny10").stdout


def test_the_toy_solves_and_is_verified(plugin: dict[str, str]) -> None:
    out = run(plugin, "solve", "tiny10", "--engine", "toy", "--toy-flavour", "sour", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["seats"][0]["exact"] == "30799/57720"  # SPEC.md's reference value
    assert data["engine"] == "toy" and data["details"]["flavour"] == "sour"
    assert data["verified"]["passed"] and data["verified"]["residues"]["passed"]
    refused = run(plugin, "solve", "tiny10", "--toy-flavour", "sour")
    assert refused.returncode == 2 and "--toy-flavour is for --engine toy" in refused.stderr
    assert "--batch-primes is for --engine components or crt or series, not the toy engine" in \
        run(plugin, "solve", "tiny10", "--engine", "toy", "--batch-primes", "4").stderr


def test_no_module_of_ladders_names_the_toy_package() -> None:
    import ladders
    root = Path(ladders.__file__).resolve().parent
    names = [p for layer in ("solver", "checkpoints", "cluster") for p in (root / layer).rglob("*.py")
             if "toy_ladders_engine" in p.read_text() or "ToyEngine" in p.read_text()]
    assert names == []
