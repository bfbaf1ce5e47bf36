"""Herman's rings solved with and without lumping, beside Storm's exact bisimulation,
each contender in a fresh process (wall time, CPU, peak memory), and the closed form for
three tokens checked at every three-token state.

``python scripts/bench_lumping.py --rings 13,15 --storm --closed-form``

The models: ``--models DIR`` holding ``herman.N.prism`` and ``herman.props`` (QVBS's, from
the qcomp repository's ``benchmarks/dtmc/herman``), else written by this script from
the protocol (Herman 1990: process i holds a bit; each step, where it equals its left
neighbour's it is redrawn fairly, else it copies it; every configuration is initial;
the question ``filter(max, R{"steps"}=? [F "stable"], "init")``, stable: one token).

Contenders:

- ``ladders solve MODEL --properties PROPS --json`` (lumping ``auto``, the default);
- the same with ``--lump off``, for rings up to ``--unlumped-upto``;
- ``--storm``: stormpy, the chain built with exact coefficients (its
  ``RationalFunction`` type: stormpy's bisimulation takes no ``Rational`` model), the
  strong bisimulation quotient for the property, and its exact model checking;
- ``--closed-form``: ladders' quotient solved for every block, each state with three
  tokens at distances a, b, c (a + b + c = N) held against ``4abc/N``, the expected
  stabilisation time McIver and Morgan proved for three tokens (*An elementary proof
  that Herman's ring is Theta(N^2)*, IPL 94(2), 2005), whose greatest value over a, b,
  c is the answer where three tokens are the worst start (every ring here).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from fresh import run

STORM = r"""
import json, sys, time
from fractions import Fraction
t0 = time.perf_counter()
import stormpy
import stormpy.transformations
program = stormpy.parse_prism_program(sys.argv[1])
props = stormpy.parse_properties(open(sys.argv[2]).read(), program)
model = stormpy.build_model[stormpy.RationalFunction](program, props)
t1 = time.perf_counter()
small = stormpy.transformations.perform_bisimulation(model, props)
t2 = time.perf_counter()
result = stormpy.model_checking(small, props[0], only_initial_states=True)
value = max(Fraction(str(result.get_value(i))) for i in small.initial_states)
t3 = time.perf_counter()
print(json.dumps({"states": model.nr_states, "quotient": small.nr_states, "value": str(value),
                  "build": t1 - t0, "bisimulation": t2 - t1, "check": t3 - t2}))
"""

CLOSED = r"""
import json, sys, time
import numpy as np
from ladders.solver.chains.formats import load_chain
from ladders.solver.chain_problem import ChainProblem, lumped_problem
from ladders.solver.engines.components import solve_topological
from ladders.solver.exact import mpq
n = int(sys.argv[3])
loaded = load_chain(sys.argv[1], properties=sys.argv[2])
problem = lumped_problem(ChainProblem(loaded.chain, loaded.questions[0]), "on")
chain, lumping = problem.chain, problem.lumping
pos = {state: k for k, (state,) in enumerate(problem.system.labels)}
unknown = problem.plan.unknowns.tolist()
solved = solve_topological(problem.system, problem.structure, [pos[b] for b in unknown])
value = {b: solved.values[k][0] for k, b in enumerate(unknown)}
names = lumping.original.states[0:lumping.original.size]
checked = wrong = 0
for s, name in enumerate(names):
    bits = dict(part.split("=") for part in name.split(","))
    x = [int(bits[f"x{i}"]) for i in range(1, n + 1)]
    tokens = [i for i in range(n) if x[i] == x[i - 1]]
    if len(tokens) != 3:
        continue
    a, b = tokens[1] - tokens[0], tokens[2] - tokens[1]
    c = n - a - b
    checked += 1
    wrong += value.get(int(lumping.blocks[s]), mpq(0)) != mpq(4 * a * b * c, n)
best = max((mpq(4 * a * b * (n - a - b), n) for a in range(1, n) for b in range(1, n - a)))
print(json.dumps({"three_token_states": checked, "differ": wrong, "greatest": str(best)}))
"""


def herman_prism(processes: int) -> str:
    """Herman's ring of ``processes`` (odd) as a PRISM model (module docstring)."""
    n = processes
    lines = ["dtmc"]
    for i in range(1, n + 1):
        left = n if i == 1 else i - 1
        lines += [f"module p{i}", f"  x{i} : [0..1];",
                  f"  [step] x{i}=x{left} -> 1/2 : (x{i}'=0) + 1/2 : (x{i}'=1);",
                  f"  [step] x{i}!=x{left} -> (x{i}'=x{left});", "endmodule"]
    tokens = " + ".join(f"(x{i}=x{n if i == 1 else i - 1}?1:0)" for i in range(1, n + 1))
    lines += ['rewards "steps"', "  true : 1;", "endrewards", "init true endinit",
              f'label "stable" = {tokens} = 1;']
    return "\n".join(lines) + "\n"


def models(folder: Path | None, rings: list[int], tmp: Path) -> dict[int, tuple[str, str]]:
    """Each ring's model and properties file."""
    if folder is not None:
        return {n: (str(folder / f"herman.{n}.prism"), str(folder / "herman.props")) for n in rings}
    props = tmp / "herman.props"
    props.write_text('"steps": filter(max, R{"steps"}=? [ F "stable" ], "init");\n')
    out = {}
    for n in rings:
        path = tmp / f"herman.{n}.prism"
        path.write_text(herman_prism(n))
        out[n] = (str(path), str(props))
    return out


def ladders(model: str, props: str, *extra: str) -> dict:
    res = run([sys.executable, "-m", "ladders.cluster.cli", "solve", model, "--properties", props,
               "--json", *extra])
    data = json.loads(res.pop("stdout"))
    result = data["results"][0]
    return {**res, "value": result["answers"]["steps"]["exact"], "engine": result["engine"],
            "verified": result["verified"]["passed"], "lumped": result.get("lumped"),
            "states": data["states"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rings", default="9,11,13,15", help="ring sizes, comma-separated")
    parser.add_argument("--models", type=Path, default=None,
                        help="a folder with herman.N.prism and herman.props (default: written here)")
    parser.add_argument("--unlumped-upto", type=int, default=11,
                        help="also --lump off for rings up to this size")
    parser.add_argument("--storm", action="store_true", help="also Storm's exact bisimulation")
    parser.add_argument("--closed-form", action="store_true",
                        help="also every three-token state against 4abc/N")
    args = parser.parse_args()
    rings = [int(n) for n in args.rings.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        found = models(args.models, rings, Path(tmp))
        for n in rings:
            model, props = found[n]
            row: dict = {"ring": n, "lumped": ladders(model, props)}
            if n <= args.unlumped_upto:
                row["unlumped"] = ladders(model, props, "--lump", "off")
            if args.storm:
                res = run([sys.executable, "-c", STORM, model, props])
                found = json.loads(res.pop("stdout"))
                row["storm"] = {**res, **found}
            if args.closed_form:
                res = run([sys.executable, "-c", CLOSED, model, props, str(n)])
                found = json.loads(res.pop("stdout"))
                row["closed_form"] = {**res, **found}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
