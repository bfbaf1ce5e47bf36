"""Time the build of a PRISM model's chain: ladders' own builder against Storm's exact
build, each in a fresh process, side by side, with the ratio.

    python scripts/bench_build.py nand:N=40,K=1 crowds:TotalRuns=5,CrowdSize=15 \\
        brp:N=64,MAX=5 --repeat 3

An instance is ``FAMILY:CONSTANTS`` over the QVBS folder (``$LADDERS_QVBS``, default
``/work/shared/qvbs``; ``FAMILY.prism`` in ``FAMILY/``). Each contender's time is the
wall time of its process from start to a built model (imports included: a user waits
for them too), the median of ``--repeat`` runs; ladders' is the whole ``Chain`` (states
named, rows checked), Storm's the model ``build_model[Rational]`` returns (no copy
into a ``Chain``). Both report their states and transitions, which must agree.
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
import json, sys, time
t = time.perf_counter()
from ladders.solver.chains.formats.prism import load
chain = load(sys.argv[1], constants=sys.argv[2] or None).chain
print(json.dumps({"states": chain.size, "transitions": chain.nnz, "seconds": time.perf_counter() - t}))
"""

_STORM = """
import json, sys, time
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
                  "seconds": time.perf_counter() - t}))
"""


def run(code: str, model: str, constants: str) -> dict[str, float]:
    """One build in a fresh interpreter: its states, transitions and seconds."""
    out = subprocess.run([sys.executable, "-c", code, model, constants], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instances", nargs="+", metavar="FAMILY:CONSTANTS")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'instance':<34} {'states':>10} {'transitions':>12} {'ladders s':>10} "
          f"{'storm s':>9} {'storm/ladders':>14}")
    for instance in args.instances:
        family, _, constants = instance.partition(":")
        model = str(QVBS / family / f"{family}.prism")
        ours = [run(_LADDERS, model, constants) for _ in range(args.repeat)]
        theirs = [run(_STORM, model, constants) for _ in range(args.repeat)]
        if (ours[0]["states"], ours[0]["transitions"]) != (theirs[0]["states"], theirs[0]["transitions"]):
            raise SystemExit(f"{instance}: ladders built {ours[0]['states']:,} states and "
                             f"{ours[0]['transitions']:,} transitions, Storm {theirs[0]['states']:,} "
                             f"and {theirs[0]['transitions']:,}")
        a = statistics.median(r["seconds"] for r in ours)
        b = statistics.median(r["seconds"] for r in theirs)
        print(f"{instance:<34} {ours[0]['states']:>10,} {ours[0]['transitions']:>12,} {a:>10.2f} "
              f"{b:>9.2f} {b / a:>14.2f}", flush=True)


if __name__ == "__main__":
    main()
