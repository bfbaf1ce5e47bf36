"""Imports point down: `solver` must not pull in dask, zarr or click."""

from __future__ import annotations

import subprocess
import sys


def test_solver_imports_no_framework() -> None:
    code = ("import sys, solver.board, solver.chain, solver.bounds, solver.race, solver.simulate, "
            "solver.coins, solver.verify, solver.eliminate; "
            "print(sorted(m for m in ('dask', 'distributed', 'zarr', 'click') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_gmpy2_is_imported_in_one_module_only() -> None:
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    users = sorted(str(p.relative_to(root)) for pkg in ("solver", "cluster", "checkpoints")
                   for p in (root / pkg).rglob("*.py") if "import gmpy2" in p.read_text()
                   or "from gmpy2" in p.read_text())
    assert users == ["solver/exact.py"]


def test_cli_help_imports_no_heavy_framework() -> None:
    code = ("import sys, cluster.cli; "
            "print(sorted(m for m in ('dask', 'distributed', 'zarr') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_checkpoints_never_import_dask() -> None:
    code = ("import sys, checkpoints.store, checkpoints.tasks, checkpoints.segments; "
            "print(sorted(m for m in ('dask', 'distributed', 'click') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
