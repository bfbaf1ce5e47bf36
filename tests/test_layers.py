"""Imports point down (cluster -> checkpoints -> solver), every module of every layer,
and no module imports another that imports it back (no import cycle anywhere)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ladders

ROOT = Path(ladders.__file__).resolve().parent
LAYERS = {"solver": ("dask", "distributed", "zarr", "click"),
          "checkpoints": ("dask", "distributed", "click")}


def modules(layer: str) -> list[str]:
    """Every module of a layer, as an import name."""
    return sorted("ladders." + ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for p in (ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_imports_no_framework_above_it(layer: str) -> None:
    names = modules(layer)
    assert len(names) >= 8
    code = ("import importlib, json, sys\n"
            f"for name in {names!r}: importlib.import_module(name)\n"
            f"print(json.dumps(sorted(m for m in {LAYERS[layer]!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_cli_help_imports_no_heavy_framework() -> None:
    code = ("import sys, ladders.cluster.cli; "
            "print(sorted(m for m in ('dask', 'distributed', 'zarr', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def imported_libraries(path: Path) -> set[str]:
    """The top-level names of every module that ``path`` imports, anywhere in its text."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize(("library", "owner"), [("gmpy2", "solver/exact.py"),
                                                ("flint", "solver/exact_flint.py")])
def test_each_big_number_library_is_imported_in_one_module_only(library: str, owner: str) -> None:
    users = sorted(str(p.relative_to(ROOT)) for layer in ("solver", "checkpoints", "cluster")
                   for p in (ROOT / layer).rglob("*.py") if library in imported_libraries(p))
    assert users == [owner]


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its text (top level or
    inside functions: a lazy import still ties the two modules together)."""
    names = {n for layer in ("solver", "checkpoints", "cluster") for n in modules(layer)}
    graph: dict[str, set[str]] = {}
    for name in names:
        path = ROOT.joinpath(*name.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            edges |= {t for t in targets if t in names and t != name}
        graph[name] = edges
    return graph


def test_no_import_cycle_anywhere() -> None:
    graph = import_graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_imports_point_down() -> None:
    rank = {"solver": 0, "checkpoints": 1, "cluster": 2}
    for name, edges in import_graph().items():
        for target in edges:
            assert rank[target.split(".")[1]] <= rank[name.split(".")[1]], (name, target)


#: The ranks inside ``solver/``, bottom to top (docs/architecture.md draws them): a
#: module imports modules of its own rank or below, never above, lazily or not. The
#: longest prefix names a module's rank. ``engines.series.jit`` is the one door to numba
#: (every compiled kernel, the chains' graph searches too, goes through it) and imports
#: no project module: it sits at the bottom with the numbers.
SOLVER_RANKS: tuple[tuple[str, ...], ...] = (
    # numbers, systems, and what any module may use
    ("solver", "solver.exact", "solver.exact_flint", "solver.system", "solver.forked",
     "solver.extras", "solver.engines.series.jit"),
    ("solver.chains",),  # the model: Chain, its questions, its file formats
    ("solver.games",),  # sources of chains: boards, one player's chain, races, bump, coins
    ("solver.engines",),  # the exact kernels: they take systems
    ("solver.checks",),  # what trusts no engine: bounds, Monte Carlo, residues
    # problems: a source, a question and its system, its engines and its checks
    ("solver.problem", "solver.chain_problem", "solver.answers", "solver.estimate",
     "solver.calibrate", "solver.result", "solver.report"),
)


def solver_rank(name: str) -> int:
    """The rank of a module of ``solver`` (``ladders.`` left off), by its longest prefix
    in :data:`SOLVER_RANKS`; a module no prefix names fails the test."""
    best = max(((len(prefix), rank) for rank, prefixes in enumerate(SOLVER_RANKS)
                for prefix in prefixes if name == prefix or name.startswith(prefix + ".")),
               default=None)
    assert best is not None, f"{name} has no rank in SOLVER_RANKS: give it one"
    return best[1]


def arrows_back_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import inside ``solver`` of a module of a higher rank."""
    return sorted((name, target) for name, edges in graph.items() if name.startswith("ladders.solver")
                  for target in edges if target.startswith("ladders.solver")
                  and solver_rank(target[8:]) > solver_rank(name[8:]))


def test_every_solver_module_has_a_rank() -> None:
    assert sorted({solver_rank(name[8:]) for name in modules("solver")}) == list(range(len(SOLVER_RANKS)))


def test_solver_imports_point_down_its_ranks() -> None:
    assert arrows_back_up(import_graph()) == []


def test_an_import_of_a_higher_rank_fails_the_ranks() -> None:
    """The yardstick itself: the arrows that ran back up before issue 53 (the model
    importing the games and the engines, the games importing the engines) are found."""
    graph = {"ladders.solver.games.bump": {"ladders.solver.chains.model"},
             "ladders.solver.chains.problem": {"ladders.solver.games.board",
                                                "ladders.solver.checks.verify",
                                                "ladders.solver.engines.components"},
             "ladders.solver.games.race": {"ladders.solver.engines.elimination"},
             "ladders.solver.checks.verify": {"ladders.solver.problem"}}
    assert arrows_back_up(graph) == [
        ("ladders.solver.chains.problem", "ladders.solver.checks.verify"),
        ("ladders.solver.chains.problem", "ladders.solver.engines.components"),
        ("ladders.solver.chains.problem", "ladders.solver.games.board"),
        ("ladders.solver.checks.verify", "ladders.solver.problem"),
        ("ladders.solver.games.race", "ladders.solver.engines.elimination")]
