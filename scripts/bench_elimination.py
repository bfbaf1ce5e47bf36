"""Benchmark: the published algorithm against the column-block Dask engine, side by side.

1. ``hasbro`` cut at square 60 (jumps beyond dropped; 2,601 unknowns, two players):
   - baseline: the published algorithm, reimplemented here: rational (``mpq``) rows,
     pivots in the right-to-left order of the labels (a, b), the target P(0, 0) last,
     forward elimination only;
   - engine: ``ladders solve`` through a store on a local Dask cluster of 2 workers
     (cluster start-up reported apart from the solve).
2. The full ``hasbro`` two-player solve through the same engine: wall time and the
   peak memory of the driver and all its worker processes together.

Each round also times ``ladders solve`` of the same board end to end in a fresh
process (start-up, plan, cluster, solve, checks), and the baseline runs in a fresh
process of its own.

Run: ``python scripts/bench_elimination.py [--skip-full] [--workers 2] [--rounds 3]``.
The 60-square pair alternates ``--rounds`` times (this 2-core VM's timings vary by
10-20 % from run to run) and the speed-up is the ratio of the medians. Prints a table
and one JSON line with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from ladders.cluster.connect import ClusterSpec
from ladders.cluster.runs import solve
from ladders.solver.problem import Problem
from ladders.solver.games.board import Board, load_board, make_board, preset_board
from ladders.solver.exact import fraction_to_decimal, fraction_to_str, mpq, str_to_fraction
from ladders.solver.system import LinearSystem


def published_elimination(system: LinearSystem) -> mpq:
    """The published algorithm: mpq rows, right-to-left order, target last, no back-substitution."""
    n = system.size
    rows = {}
    for i in range(n):
        row = {c: mpq(v) for c, v in system.row(i)}
        row[n] = mpq(int(system.rhs[i, 0]))
        rows[i] = row
    col_rows: dict[int, set[int]] = {c: set() for c in range(n)}
    for i, row in rows.items():
        for c in row:
            if c < n:
                col_rows[c].add(i)
    order = sorted(range(n), key=lambda i: system.labels[i], reverse=True)
    order.remove(system.target)
    for piv in order:
        pivot = rows.pop(piv)
        p = pivot.pop(piv)
        pivot = {c: v / p for c, v in pivot.items()}
        for c in pivot:
            if c < n:
                col_rows[c].discard(piv)
        for i in col_rows.pop(piv) - {piv}:
            row = rows[i]
            q = row.pop(piv)
            for c, v in pivot.items():
                new = row.get(c, 0) - q * v
                if new:
                    if c not in row and c < n:
                        col_rows[c].add(i)
                    row[c] = new
                elif c in row:
                    del row[c]
                    if c < n:
                        col_rows[c].discard(i)
    last = rows[system.target]
    return last[n] / last[system.target]


class PeakMemory:
    """Samples the resident memory of this process and all its descendants."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for proc in [me, *me.children(recursive=True)]:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def engine_run(problem: Problem, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, PeakMemory() as mem:
        t0 = time.perf_counter()
        out = solve(problem, "elimination", checkpoint=str(Path(tmp) / "run"), spec=ClusterSpec(workers=workers),
                    executor="dask")
        wall = time.perf_counter() - t0
    assert out.verified["passed"]
    return {"wall": wall, "solve": out.seconds, "peak_mb": mem.peak / 1e6,
            "store_mb": out.store_bytes / 1e6, "value": out.seats[0],
            "tasks": out.tasks_total, "executor": out.executor,
            "worker_seconds": out.details.get("worker_seconds", {})}


def board_to_toml(board: Board) -> str:
    """The board as a TOML board file, for the command line."""
    jumps = ", ".join(f"[{a}, {b}]" for a, b in board.jumps)
    return (f'name = "{board.name}"\nstart = {board.start}\nend = {board.end}\n'
            f'die = {board.die}\nrule = "{board.rule}"\njumps = [{jumps}]\n')


def cli_run(board_file: Path, workers: int) -> dict[str, Any]:
    """``ladders solve FILE --engine elimination --workers N`` in a fresh process, timed
    from outside: what a user waits for (start-up, plan, cluster, solve, checks)."""
    cmd = [str(Path(sys.executable).with_name("ladders")), "solve", str(board_file),
           "--engine", "elimination", "--workers", str(workers), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    data = json.loads(proc.stdout)
    assert data["verified"]["passed"]
    return {"wall": wall, "value": str_to_fraction(data["seats"][0]["exact"]),
            "stages": data["details"]["stages"]}


def before_run(ladders: Path, board_file: Path, workers: int) -> dict[str, Any]:
    """The same command of an older installation (``ladders`` of a virtual environment
    with the older checkout installed), timed the same way: before and after a change,
    side by side in one run."""
    cmd = [str(ladders), "solve", str(board_file), "--engine", "elimination", "--workers",
           str(workers), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    return {"wall": wall, "value": str_to_fraction(json.loads(proc.stdout)["seats"][0]["exact"])}


def baseline_run(board_file: Path) -> dict[str, Any]:
    """The published algorithm in a fresh process (this script with ``--baseline``)."""
    proc = subprocess.run([sys.executable, __file__, "--baseline", str(board_file)],
                          capture_output=True, text=True, check=True)
    data = json.loads(proc.stdout)
    return {"seconds": data["seconds"], "value": str_to_fraction(data["exact"])}


def split(worker_seconds: dict[str, float]) -> str:
    """``compute 4.1 s, store read 0.7 s, store write 1.3 s`` (summed over the workers)."""
    w = worker_seconds
    return (f"workers spent: compute {w['compute']:.1f} s, store read {w['read']:.1f} s, "
            f"store write {w['write']:.1f} s")


def main() -> None:
    # every process this one starts (Dask workers, the CLI, the baseline) runs as an
    # installed program does, with bytecode cached: see fresh_environ in fresh.py
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3,
                        help="baseline and engine alternate this many times on the 60-square "
                             "board; the speed-up is the ratio of the medians")
    parser.add_argument("--skip-full", action="store_true", help="only the 60-square comparison")
    parser.add_argument("--baseline", metavar="BOARD", help=argparse.SUPPRESS)
    parser.add_argument("--before", metavar="LADDERS", type=Path, default=None,
                        help="also time this older 'ladders' command (the program of another "
                             "virtual environment, with the checkout before a change installed)")
    args = parser.parse_args()
    if args.baseline:  # the child process of baseline_run
        system = Problem.build(load_board(args.baseline), 2).system
        t0 = time.perf_counter()
        value = published_elimination(system)
        print(json.dumps({"seconds": time.perf_counter() - t0, "exact": fraction_to_str(value)}))
        return

    hasbro = preset_board("hasbro")
    board60 = make_board("hasbro-60", 0, 60, 6, "stay",
                         [(a, b) for a, b in hasbro.jumps if a < 60 and b <= 60])
    p60 = Problem.build(board60, 2)
    print(f"hasbro cut at 60: {p60.system.size:,} unknowns, {p60.system.nnz:,} nonzeros")
    board_file = Path(tempfile.mkdtemp(prefix="bench-")) / "hasbro-60.toml"
    board_file.write_text(board_to_toml(board60))
    bases: list[float] = []
    engines: list[dict[str, Any]] = []
    clis: list[dict[str, Any]] = []
    befores: list[float] = []
    for k in range(1, args.rounds + 1):
        base = baseline_run(board_file)
        bases.append(base["seconds"])
        eng = engine_run(p60, args.workers)
        cli = cli_run(board_file, args.workers)
        assert eng["value"] == base["value"] == cli["value"], "engine and baseline disagree"
        engines.append(eng)
        clis.append(cli)
        if args.before:
            old = before_run(args.before, board_file, args.workers)
            assert old["value"] == cli["value"], "the older checkout disagrees"
            befores.append(old["wall"])
            print(f"           the older 'ladders solve' end to end {old['wall']:.2f} s")
        print(f"  round {k}: published algorithm (mpq, right-to-left) {bases[-1]:6.2f} s;  "
              f"column-block engine, {args.workers} Dask workers {eng['solve']:5.2f} s "
              f"({eng['tasks']} tasks); 'ladders solve' end to end {cli['wall']:.2f} s")
        print(f"           {split(eng['worker_seconds'])}; CLI stages {cli['stages']}")
    base = statistics.median(bases)
    solve_s = statistics.median(e["solve"] for e in engines)
    cli_s = statistics.median(c["wall"] for c in clis)
    rounds = ", ".join(f"{b / e['solve']:.2f}x" for b, e in zip(bases, engines))
    print(f"  medians: baseline {base:.2f} s, engine {solve_s:.2f} s: speed-up {base / solve_s:.2f}x "
          f"(each round {rounds}); end to end, 'ladders solve' {cli_s:.2f} s: {base / cli_s:.2f}x")
    report: dict[str, Any] = {"board60": {
        "baseline_s": [round(b, 3) for b in bases], "engine_solve_s": [round(e["solve"], 3) for e in engines],
        "cli_wall_s": [round(c["wall"], 3) for c in clis],
        "speedup_of_medians": round(base / solve_s, 2), "speedup_end_to_end": round(base / cli_s, 2),
        "same_fraction": True}}
    if befores:
        before_s = statistics.median(befores)
        print(f"  before the change: 'ladders solve' {before_s:.2f} s end to end, "
              f"{base / before_s:.2f}x the baseline (now {base / cli_s:.2f}x)")
        report["board60"].update(before_wall_s=[round(b, 3) for b in befores],
                                 speedup_end_to_end_before=round(base / before_s, 2))
    if not args.skip_full:
        full = engine_run(Problem.build(hasbro, 2), args.workers)
        value = full["value"]
        print(f"full hasbro, 2 players: {full['wall']:.1f} s end to end "
              f"(solve {full['solve']:.1f} s, {full['tasks']} tasks), peak memory {full['peak_mb']:.0f} MB "
              f"(all processes), store at the end {full['store_mb']:.1f} MB")
        print(f"  {split(full['worker_seconds'])}")
        print(f"  P(0,0) = {fraction_to_decimal(value, 40)}..., "
              f"{len(str(value.numerator))} / {len(str(value.denominator))} digits")
        report["full"] = {"wall_s": round(full["wall"], 1), "solve_s": round(full["solve"], 1),
                          "peak_mb": round(full["peak_mb"]), "digits": len(str(value.numerator)),
                          "worker_seconds": full["worker_seconds"]}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
