"""Benchmark: ladders against Storm's exact mode on the QVBS chains, side by side.

Each instance (a PRISM model, its properties and constants, from ``../shared/qvbs`` or
``--models DIR`` of the same layout) is solved by two contenders, each in a fresh
process, alternating:

- ``ladders solve MODEL --properties PROPS --constants C --json``: Storm builds the
  model exactly through stormpy (the build counts), ladders' engines solve every
  property, and each answer is verified (Markov bounds, certificate);
- Storm's exact mode through stormpy in a fresh interpreter: parse, build exactly
  (rationals), model check every property (Storm's sparse engine over the rationals).

Both counts include starting the interpreter and importing stormpy. The answers must
be equal (``==``), to each other and to the QVBS reference values in
``storm_exact.json``; the figures are wall seconds (min / median over ``--runs``) and
their ratio. Instances whose Storm reference took longer than ``--max-ref`` seconds in
2018 are left out unless named.

``--baseline COMMIT`` adds ladders at that commit as a third contender (a checkout of
it, each run in a fresh process: the figures before and after a change, side by side).
``--memory`` runs each ladders contender once more per run, in a fresh process that
builds the chain with ladders' own PRISM builder and then times every property from
the chain in memory to its verified answer (``ladders.cluster.runs.solve``: the
engine the project picks, every check); Storm's figure beside it is its model checking
after its build.

Run: ``python scripts/bench_chains.py [--runs 3] [--only brp,crowds] [--max-ref 600]
[--baseline 47be004] [--memory]``. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from fresh import ROOT, baseline, run

QVBS = ROOT.parent / "shared" / "qvbs"

STORM = r"""
import json, sys, time
t0 = time.perf_counter()
import stormpy
model_path, props_path, constants = sys.argv[1], sys.argv[2], sys.argv[3]
if model_path.endswith(".jani"):
    model, props = stormpy.parse_jani_model(model_path)
else:
    model = stormpy.parse_prism_program(model_path)
    props = stormpy.parse_properties(open(props_path).read(), model)
if constants:
    model, props = stormpy.instantiate_constants(model, constants, props)
built = stormpy.build_model[stormpy.Rational](model, props)
out = {}
inits = list(built.initial_states)
t1 = time.perf_counter()
for prop in props:
    result = stormpy.model_checking(built, prop, only_initial_states=True)
    values = [result.get_value(i) if hasattr(result, "get_value") else result[i] for i in inits]
    # a filter over several initial states, as Storm prints it: "Obtain the maximum of ..."
    how = str(prop).split("Obtain ", 1)[-1]
    value = (max(values) if how.startswith("the maximum") else
             min(values) if how.startswith("the minimum") else
             sum(values[1:], values[0]) / len(values) if how.startswith("the average")
             else values[0])
    out[prop.get_name()] = str(value).lower() if isinstance(value, bool) else str(value)
t2 = time.perf_counter()
print(json.dumps({"values": out, "states": built.nr_states, "seconds": t2 - t0, "check": t2 - t1}))
"""

MEMORY = r"""
import json, sys, time
from ladders.solver.chains.formats import load_chain
from ladders.solver.chain_problem import ChainProblem
from ladders.cluster.runs import solve
model, props, constants = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
loaded = load_chain(model, constants=constants or None, properties=props)
t1 = time.perf_counter()
problems = [ChainProblem(loaded.chain, q) for q in loaded.questions]
solutions = [solve(p) for p in problems if p.solvable]
t2 = time.perf_counter()
print(json.dumps({"build": t1 - t0, "memory": t2 - t1, "passed": all(s.passed for s in solutions),
                  "engines": sorted({s.engine for s in solutions})}))
"""


def instances(root: Path, only: set[str] | None, max_ref: float) -> list[dict]:
    """Every (model, properties, constants, reference values) of the QVBS folders."""
    found = []
    for ref_file in sorted(root.glob("*/storm_exact.json")):
        family = ref_file.parent.name
        if only and family not in only:
            continue
        refs = json.loads(ref_file.read_text())["results"]
        props = next(ref_file.parent.glob("*.props"))
        for ref in refs:
            if ref["time_s"] > max_ref:
                continue
            params = ref["params"]
            model = ref_file.parent / f"{family}.prism"
            if not model.exists():  # leader_sync: one model file per instance
                model = ref_file.parent / f"{family}.{_instance_name(ref)}.prism"
            constants = ",".join(f"{k}={v}" for k, v in params.items())
            name = f"{family} {'-'.join(str(v) for v in params.values()) or _instance_name(ref)}"
            found.append({"name": name, "model": str(model), "props": str(props),
                          "constants": constants, "reference": ref["values"],
                          "reference_seconds": ref["time_s"]})
    return found


def _instance_name(ref: dict) -> str:
    """``3-2`` from ``Storm.exact.3-2.2018-10-17.json``."""
    return ref["file"].split(".")[2]


def same(a: str, b: str) -> bool:
    """Two exact values as the tools print them (``p/q``, ``true``, ``inf``) agree."""
    from fractions import Fraction
    norm = {"inf": "Infinity", "infinity": "Infinity", "true": "true", "false": "false"}
    a, b = norm.get(a.lower(), a), norm.get(b.lower(), b)
    if "Infinity" in (a, b) or a in ("true", "false") or b in ("true", "false"):
        return a == b
    return Fraction(a) == Fraction(b)


def ladders_values(data: dict) -> dict[str, str]:
    """Property name -> exact value (or true/false for a P>=b property) from ``--json``."""
    out = {}
    for result in data["results"]:
        name = result["question"].split(":")[0]
        if "holds" in result:
            out[name] = "true" if all(result["holds"].values()) else "false"
        else:
            (answer,) = result["answers"].values()
            out[name] = answer["exact"]
    return out


def timed(cmd: list[str], env: dict[str, str] | None, figures: list[float],
          peaks: list[float] | None = None) -> dict | None:
    """Run ``cmd`` in a fresh process; its wall time into ``figures`` (inf where it did
    not finish) and its peak memory in MB into ``peaks``; its stdout as JSON (its last
    line where more came before; None where it did not finish)."""
    try:
        res = run(cmd, env=env)
    except SystemExit:
        figures.append(math.inf)
        return None
    figures.append(res["wall"])
    if peaks is not None:
        peaks.append(res["peak_mb"])
    try:
        return json.loads(res["stdout"])
    except json.JSONDecodeError:  # Storm warns on stdout before its line
        return json.loads(res["stdout"].strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each contender")
    parser.add_argument("--only", default=None, help="families, comma-separated")
    parser.add_argument("--names", default=None,
                        help="instances, comma-separated (e.g. 'nand 40-1,crowds 4-20')")
    parser.add_argument("--max-ref", type=float, default=120.0,
                        help="leave out instances whose 2018 Storm reference took longer")
    parser.add_argument("--models", default=str(QVBS), help="the QVBS folders")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds a contender may take before it counts as not finished")
    parser.add_argument("--instance", action="append", default=[], metavar="MODEL,PROPS[,CONSTANTS]",
                        help="also a model from elsewhere (e.g. QVBS's herman from the qcomp "
                             "repository); its answers are compared between the two tools only")
    parser.add_argument("--baseline", default=None, metavar="COMMIT",
                        help="also ladders at COMMIT, side by side (before and after)")
    parser.add_argument("--memory", action="store_true",
                        help="also the time from the chain in memory to the verified answers")
    parser.add_argument("--no-storm", action="store_true",
                        help="ladders alone, against the QVBS references (instances Storm "
                             "takes minutes on)")
    args = parser.parse_args()
    if args.baseline:
        with baseline(args.baseline) as (_, env):
            bench(args, env)
    else:
        bench(args, None)


def bench(args: argparse.Namespace, before_env: dict[str, str] | None) -> None:
    """Every instance asked, each contender in a fresh process, alternating."""
    only = set(args.only.split(",")) if args.only else None
    names = set(args.names.split(",")) if args.names else None
    rows = []
    extra = []
    for text in args.instance:
        model, props, *rest = text.split(",", 2)
        extra.append({"name": Path(model).stem, "model": model, "props": props,
                      "constants": rest[0] if rest else "", "reference": {},
                      "reference_seconds": None})
    ladders_runs = {"ladders": None, **({"before": before_env} if before_env is not None else {})}
    head = "".join(f" {name + ' s':>10}" for name in ladders_runs) + f" {'storm s':>10}"
    if args.memory:
        head += "".join(f" {name + ' mem s':>14}" for name in ladders_runs) + f" {'storm chk s':>12}"
    print(f"{'instance':22} {'states':>10}{head} {'storm/ladders':>13}  equal")
    found = instances(Path(args.models), only, args.max_ref if not names else math.inf)
    if names:
        found = [inst for inst in found if inst["name"] in names]
    for inst in (found if not extra or only or names else []) + extra:
        base = ["-m", "ladders.cluster.cli", "solve", inst["model"], "--properties", inst["props"],
                "--json"] + (["--constants", inst["constants"]] if inst["constants"] else [])
        limit = ["timeout", str(args.timeout)]
        storm_cmd = [sys.executable, "-c", STORM, inst["model"], inst["props"], inst["constants"]]
        memory_cmd = [sys.executable, "-c", MEMORY, inst["model"], inst["props"], inst["constants"]]
        figures: dict[str, list[float]] = {name: [] for name in [*ladders_runs, "storm"]}
        memory: dict[str, list[float]] = {name: [] for name in [*ladders_runs, "storm"]}
        values: dict[str, dict[str, str]] = {}
        engines: dict[str, list[str]] = {}
        states = 0
        peaks: dict[str, list[float]] = {name: [] for name in ladders_runs}
        for _ in range(args.runs):
            for name, env in ladders_runs.items():
                data = timed(limit + [sys.executable, *base], env, figures[name], peaks[name])
                if data is not None:
                    assert all(r["verified"]["passed"] for r in data["results"]), inst["name"]
                    values[name], states = ladders_values(data), data["states"]
                if args.memory:
                    mem = timed(limit + memory_cmd, env, [])
                    memory[name].append(math.inf if mem is None else mem["memory"])
                    if mem is not None:
                        assert mem["passed"], inst["name"]
                        engines[name] = mem["engines"]
            storm = None if args.no_storm else timed(limit + storm_cmd, None, figures["storm"])
            if storm is not None:
                values["storm"], states = storm["values"], storm["states"]
                memory["storm"].append(storm["check"])
        # each tool's answers against the other's and the references, where they finished
        refs = {**inst["reference"], **values.get("storm", {})}
        equal = all(same(values[name][k], v) for name in ladders_runs if name in values
                    for k, v in refs.items() if k in values[name])
        med = {name: statistics.median(f) if f else math.nan for name, f in figures.items()}
        row = {"instance": inst["name"], "states": states, **figures, "peak_mb": peaks,
               "ratio": med["storm"] / med["ladders"], "equal": equal}
        line = "".join(f" {med[name]:10.2f}" for name in ladders_runs) + f" {med['storm']:10.2f}"
        if args.memory:
            mem_med = {name: statistics.median(f) for name, f in memory.items() if f}
            row.update(memory=memory, engines=engines)
            line += "".join(f" {mem_med.get(name, math.inf):14.2f}" for name in ladders_runs)
            line += f" {mem_med.get('storm', math.inf):12.2f}"
        rows.append(row)
        print(f"{inst['name']:22} {states:10,}{line} {row['ratio']:13.2f}  {equal}", flush=True)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
