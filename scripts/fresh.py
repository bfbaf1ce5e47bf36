"""Each contender of a benchmark in a fresh process: its wall time, CPU and peak memory.

Shared by ``bench_exact.py`` and ``bench_series.py`` (run as ``python scripts/NAME.py``,
which puts this folder on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> dict:
    """Run ``cmd`` in a fresh process: wall seconds, CPU and peak RSS of it and the
    children it waited for (``os.wait4``), and its stdout. Linux starts a child's peak at
    its parent's (``exec`` keeps the high-water mark): this script's, which stays small."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})}, cwd=cwd)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with status {status}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mb": usage.ru_maxrss / 1024, "stdout": out.decode()}


def ladders(*args: str, env: dict[str, str] | None = None) -> tuple[dict, dict]:
    """``ladders ARGS --json`` in a fresh process: the figures of :func:`run` and the
    parsed JSON document."""
    res = run([sys.executable, "-m", "ladders.cluster.cli", *args, "--json"], env)
    return res, json.loads(res["stdout"])
