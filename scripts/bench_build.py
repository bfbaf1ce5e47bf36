"""Time the build of a PRISM model's chain: ladders' own builder against Storm's exact
build, each in a fresh process, side by side, with the ratio.

    python scripts/bench_build.py nand:N=40,K=1 crowds:TotalRuns=5,CrowdSize=15 \\
        brp:N=64,MAX=5 --repeat 3

An instance is ``FAMILY:CONSTANTS`` over the QVBS folder (``$LADDERS_QVBS``, default
``/work/shared/qvbs``; ``FAMILY.prism`` in ``FAMILY/``). Each contender's time is the
wall time of its process from start to a built model (imports included: a user waits
for them too), the median of ``--repeat`` runs, the two contenders taking turns (on a
shared machine, a busy minute then slows both); ladders' is the whole ``Chain`` (rows
checked; states named when asked, as Storm's are without state valuations), Storm's
the model ``build_model[Rational]`` returns (no copy into a ``Chain``). Both report
their states and transitions, which must agree, and their peak memory (the process's
largest resident set, ``ru_maxrss``: imports included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

QVBS = Path(os.environ.get("LADDERS_QVBS", "/work/shared/qvbs"))

_LADDERS = """
import json, resource, sys, time
t = time.perf_counter()
from ladders.solver.chains.formats.prism import load
chain = load(sys.argv[1], constants=sys.argv[2] or None).chain
print(json.dumps({"states": chain.size, "transitions": chain.nnz, "seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_STORM = """
import json, resource, sys, time
t = time.perf_counter()
import stormpy
program = stormpy.parse_prism_program(sys.argv[1], prism_compatibility=True)
if sys.argv[2]:
    program, _ = stormpy.instantiate_constants(program, sys.argv[2], [])
options = stormpy.BuilderOptions()
options.set_build_all_labels()
options.set_build_all_reward_models()
model = stormpy.build_model[stormpy.Rational](program, options=options)
print(json.dumps({"states": model.nr_states, "transitions": model.nr_transitions,
                  "seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


#: The contenders' environment: Python writes its bytecode caches, as an installed
#: ladders has them (with PYTHONDONTWRITEBYTECODE set, every start compiles ladders'
#: sources again, tens of milliseconds that no user waits for).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(code: str, model: str, constants: str) -> dict[str, float]:
    """One build in a fresh interpreter: its states, transitions, seconds and peak
    memory (MB)."""
    out = subprocess.run([sys.executable, "-c", code, model, constants], capture_output=True,
                         text=True, check=True, env=ENV)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+", metavar="FAMILY:CONSTANTS")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'instance':<34} {'states':>10} {'transitions':>12} {'ladders s':>10} "
          f"{'storm s':>9} {'storm/ladders':>14} {'ladders MB':>11} {'storm MB':>9}")
    for instance in args.instances:
        family, _, constants = instance.partition(":")
        model = str(QVBS / family / f"{family}.prism")
        ours, theirs = [], []
        run(_LADDERS, model, constants)  # once untimed: bytecode caches written, files read
        for _ in range(args.repeat):
            ours.append(run(_LADDERS, model, constants))
            theirs.append(run(_STORM, model, constants))
        if (ours[0]["states"], ours[0]["transitions"]) != (theirs[0]["states"], theirs[0]["transitions"]):
            raise SystemExit(f"{instance}: ladders built {ours[0]['states']:,} states and "
                             f"{ours[0]['transitions']:,} transitions, Storm {theirs[0]['states']:,} "
                             f"and {theirs[0]['transitions']:,}")
        a = statistics.median(r["seconds"] for r in ours)
        b = statistics.median(r["seconds"] for r in theirs)
        peak_a = max(r["peak_mb"] for r in ours)
        peak_b = max(r["peak_mb"] for r in theirs)
        print(f"{instance:<34} {ours[0]['states']:>10,} {ours[0]['transitions']:>12,} {a:>10.2f} "
              f"{b:>9.2f} {b / a:>14.2f} {peak_a:>11,.0f} {peak_b:>9,.0f}", flush=True)


if __name__ == "__main__":
    main()
