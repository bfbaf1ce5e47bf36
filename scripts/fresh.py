"""Each contender of a benchmark in a fresh process: its wall time, CPU and peak memory.

Shared by ``bench_exact.py`` and ``bench_series.py`` (run as ``python scripts/NAME.py``,
which puts this folder on ``sys.path``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fresh_environ(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with ``env`` added, for a contender that runs as an
    installed program runs: with its modules' bytecode cached. (A shell that sets
    PYTHONDONTWRITEBYTECODE=1 would make every contender, and each of its Dask workers,
    compile the ~50 modules of ``ladders`` again: about 70 ms each time.)"""
    environ = {**os.environ, **(env or {})}
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    return environ


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None,
        stderr: Path | None = None) -> dict:
    """Run ``cmd`` in a fresh process: wall seconds, CPU and peak RSS of it and the
    children it waited for (``os.wait4``), and its stdout. Linux starts a child's peak at
    its parent's (``exec`` keeps the high-water mark): this script's, which stays small.
    The first run of a contender writes its bytecode; the scripts' warm-up runs do that.
    Its stderr goes to the file ``stderr`` where one is given (named if it fails)."""
    t0 = time.perf_counter()
    with open(stderr or os.devnull, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                                env=fresh_environ(env), cwd=cwd)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with status {status}"
                         + (f"; its stderr is in {stderr}" if stderr else ""))
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024, "stdout": out.decode()}


def ladders(*args: str, env: dict[str, str] | None = None) -> tuple[dict, dict]:
    """``ladders ARGS --json`` in a fresh process: the figures of :func:`run` and the
    parsed JSON document."""
    res = run([sys.executable, "-m", "ladders.cluster.cli", *args, "--json"], env)
    return res, json.loads(res["stdout"])


def baseline_tree(tmp: Path, commit: str) -> dict[str, str]:
    """A checkout of ``commit`` importable as ``ladders`` (the repository root is the
    package), in ``tmp``: the environment that makes a fresh process import it instead
    of this tree. Remove it with :func:`remove_baseline`."""
    tree = tmp / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit],
                   check=True, capture_output=True)
    shim = tmp / "shim"
    shim.mkdir()
    (shim / "ladders").symlink_to(tree)
    return {"PYTHONPATH": str(shim), "NUMBA_CACHE_DIR": str(tmp / "numba-baseline")}


def remove_baseline(tmp: Path) -> None:
    """Undo :func:`baseline_tree` (the worktree is registered in this repository)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tmp / "baseline")],
                   capture_output=True)


@contextlib.contextmanager
def baseline(commit: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary folder and the environment of :func:`baseline_tree` for ``commit``,
    removed afterwards: ``with baseline(c) as (tmp, env): run(cmd, env=env)``."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = baseline_tree(tmp, commit)
        try:
            yield tmp, env
        finally:
            remove_baseline(tmp)
