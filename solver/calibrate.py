"""The series kernel's unit of cost on this machine: a few primes timed in CPU time,
kept per machine and version.

The plan's time of a prime is ``split_cost(split) * unit`` (:mod:`ladders.solver.estimate`).
The unit fitted on the project's two 2-core machines
(:data:`~ladders.solver.estimate.SERIES_UNIT_SECONDS`) missed a 16-core Xeon by 1.43x
(issue 54): a user's machine is neither. So the unit is measured where the plan is
made, once: :data:`REFERENCE`'s race at :data:`PRIMES` primes, timed in the CPU time of
this process (``time.process_time``: wall time moved 5 to 15 times with the machine's
load, issue 40), divided by the model's units for those primes. The result is kept in
the user's cache folder (:func:`cache_path`), keyed by the processor's model, the
machine's architecture, the Python and ladders versions and the series kernel's version,
and read back by later plans.

Measuring needs the compiled kernels. Where numba's cache has none yet (a fresh install),
nothing is measured (that would compile for a minute inside ``ladders plan``): the
plan keeps the fitted unit and counts the compile, :data:`COMPILE_SECONDS`, in the
run's time.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: The race whose primes are timed: hasbro with five players, 65-82 ms a prime on the
#: project's 2-core machines, long enough for the clock and a prime of the size that
#: a cluster run is made of.
REFERENCE = ("hasbro", 5)
#: Primes timed (after one that loads the compiled code): about half a second of CPU.
PRIMES = 6
#: Seconds the first run on a fresh install spends compiling the kernels before its
#: first batch (45 s on the project's 2-core machines, 60 s on a 16-core Xeon).
COMPILE_SECONDS = 60.0


@dataclass(frozen=True)
class Unit:
    """Seconds of one modelled unit of the series kernel on one core (``seconds``),
    where that figure came from (``source``, a phrase: measured on this machine, whose
    figure :func:`cache_path` keeps, or fitted elsewhere), and whether the kernels still
    have to be compiled before a first batch (``compile_seconds``: 0 where they are in
    numba's cache)."""

    seconds: float
    source: str
    compile_seconds: float = 0.0


def cache_path() -> Path:
    """The file of measured units: ``$XDG_CACHE_HOME/ladders/series-unit.json``
    (``~/.cache`` without it)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "ladders" / "series-unit.json"


def machine_key() -> str:
    """What a measured unit holds for: the processor's model, the architecture and
    cores, the Python and ladders versions and the kernel's version."""
    from importlib.metadata import PackageNotFoundError, version

    from ladders.solver.engines.series import KERNEL_VERSION
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh
                          if line.startswith("model name")), model)
    except OSError:
        pass
    try:
        ours = version("ladders")
    except PackageNotFoundError:
        ours = "source"
    python = ".".join(map(str, sys.version_info[:2]))
    return (f"{model} | {platform.machine()} x{os.cpu_count()} | python {python} | "
            f"ladders {ours} | kernel {KERNEL_VERSION}")


def _read() -> dict[str, dict[str, float]]:
    try:
        data = json.loads(cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(key: str, entry: dict[str, float]) -> None:
    """Add ``entry`` under ``key``, the file replaced whole (never half written); a
    folder that cannot be written keeps nothing (the next plan measures again)."""
    path = cache_path()
    data = {**_read(), key: entry}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".series-unit-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        return


def measure() -> float:
    """Seconds a modelled unit takes here: :data:`PRIMES` primes of :data:`REFERENCE`
    in this process's CPU time, over their units (compiles the kernels if they are not
    in numba's cache)."""
    from ladders.solver.engines.series import make_split, plan_series, prime_sequence, split_cost
    from ladders.solver.games.board import preset_board
    from ladders.solver.games.chain import build_chain
    name, players = REFERENCE
    plan = plan_series(build_chain(preset_board(name)), players)
    primes = prime_sequence(1, PRIMES + 1, plan.two_adicity, plan.multiple)
    plan.residues(primes[:1])  # loads the compiled code
    t0 = time.process_time()
    plan.residues(primes[1:])
    cpu = time.process_time() - t0
    units = split_cost(make_split(plan.data, players, plan.split))
    return cpu / (PRIMES * units)


def machine_unit(fitted: float, may_measure: bool = True) -> Unit:
    """The unit for this machine: measured here before (the cache), else measured now
    where the kernels are compiled and ``may_measure``, else ``fitted`` (the project's
    machines), with the compile counted where the kernels are not compiled yet."""
    from ladders.solver.engines.series.kernels import compiled
    key = machine_key()
    known = _read().get(key)
    ready = compiled()
    cold = 0.0 if ready else COMPILE_SECONDS
    if isinstance(known, dict) and isinstance(known.get("unit"), float):
        when = time.strftime("%Y-%m-%d", time.localtime(known.get("measured", 0)))
        return Unit(known["unit"], f"measured on this machine on {when}", cold)
    if ready and may_measure:
        unit = measure()
        _write(key, {"unit": unit, "measured": time.time(), "primes": PRIMES})
        return Unit(unit, f"measured on this machine now, {PRIMES} primes of "
                          f"{REFERENCE[0]} with {REFERENCE[1]} players in CPU time")
    why = "the kernels are not compiled yet" if not ready else "not measured here"
    return Unit(fitted, f"fitted on the project's 2-core machines, {why}", cold)
