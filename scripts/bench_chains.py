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

Run: ``python scripts/bench_chains.py [--runs 3] [--only brp,crowds] [--max-ref 600]``.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from fresh import ROOT, run

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
print(json.dumps({"values": out, "states": built.nr_states, "seconds": time.perf_counter() - t0}))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each contender")
    parser.add_argument("--only", default=None, help="families, comma-separated")
    parser.add_argument("--max-ref", type=float, default=120.0,
                        help="leave out instances whose 2018 Storm reference took longer")
    parser.add_argument("--models", default=str(QVBS), help="the QVBS folders")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds a contender may take before it counts as not finished")
    parser.add_argument("--instance", action="append", default=[], metavar="MODEL,PROPS[,CONSTANTS]",
                        help="also a model from elsewhere (e.g. QVBS's herman from the qcomp "
                             "repository); its answers are compared between the two tools only")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    rows = []
    extra = []
    for text in args.instance:
        model, props, *rest = text.split(",", 2)
        extra.append({"name": Path(model).stem, "model": model, "props": props,
                      "constants": rest[0] if rest else "", "reference": {},
                      "reference_seconds": None})
    print(f"{'instance':22} {'states':>9} {'ladders s':>18} {'storm s':>18} {'storm/ladders':>13}  equal")
    for inst in (instances(Path(args.models), only, args.max_ref) if not extra or only else []) + extra:
        lad_cmd = [sys.executable, "-m", "ladders.cluster.cli", "solve", inst["model"],
                   "--properties", inst["props"], "--json"]
        if inst["constants"]:
            lad_cmd += ["--constants", inst["constants"]]
        storm_cmd = [sys.executable, "-c", STORM, inst["model"], inst["props"], inst["constants"]]
        figures: dict[str, list[float]] = {"ladders": [], "storm": []}
        values: dict[str, dict[str, str]] = {}
        states = 0
        limit = ["timeout", str(args.timeout)]
        for _ in range(args.runs):
            try:
                res = run(limit + lad_cmd)
            except SystemExit:
                figures["ladders"].append(math.inf)
            else:
                figures["ladders"].append(res["wall"])
                data = json.loads(res["stdout"])
                assert all(r["verified"]["passed"] for r in data["results"]), inst["name"]
                values["ladders"], states = ladders_values(data), data["states"]
            try:
                res = run(limit + storm_cmd)
            except SystemExit:
                figures["storm"].append(math.inf)
            else:
                figures["storm"].append(res["wall"])
                storm = json.loads(res["stdout"].strip().splitlines()[-1])  # Storm warns on stdout
                values["storm"], states = storm["values"], storm["states"]
        # each tool's answers against the other's and the references, where they finished
        refs = {**inst["reference"], **values.get("storm", {})}
        equal = all(same(values["ladders"][k], v) for k, v in refs.items()
                    if k in values.get("ladders", {}))
        lad, sto = statistics.median(figures["ladders"]), statistics.median(figures["storm"])
        row = {"instance": inst["name"], "states": states, "ladders": figures["ladders"],
               "storm": figures["storm"], "ratio": sto / lad, "equal": equal}
        rows.append(row)
        print(f"{inst['name']:22} {states:9,} {min(figures['ladders']):8.2f} {lad:8.2f} "
              f"{min(figures['storm']):8.2f} {sto:8.2f} {sto / lad:13.2f}  {equal}", flush=True)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main()
