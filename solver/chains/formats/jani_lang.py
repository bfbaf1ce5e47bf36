"""A reader for the discrete-time subset of JANI (``.jani``, the JSON model format of
the Quantitative Verification Benchmark Set) into the same
:class:`~ladders.solver.chains.symbolic.Program` the PRISM reader makes, with the
file's own properties as :class:`~ladders.solver.chains.formats.prism_lang.Property`
records (no Storm needed).

The subset, as Storm reads it (``storm::generator::JaniNextStateGenerator``):

- ``"type": "dtmc"``; constants of type ``int``, ``real``, ``bool`` (those without a
  value given by ``--constants``); global and automaton variables, bounded integers and
  Booleans, with ``restrict-initial`` and variables without an initial value giving
  several initial states;
- automata with their locations (an automaton of more than one location gets a
  variable ``loc_NAME``, its location's number), edges with a guard, and destinations
  with a probability (1 where none is given) and assignments;
- the system's synchronisation vectors: each vector one joint move of the automata it
  names, with the action each takes part with; an edge without an action moves alone,
  and one whose action no vector names never moves (an automaton composed alone, with
  no vector, moves by every edge);
- transient variables: a number (initial value 0) is a reward structure of its name,
  earned in a state by its location's ``transient-values`` and on a move by its
  destinations' assignments (each destination's value times its probability, as Storm
  folds them); a Boolean is a label of its name, set by locations' ``transient-values``;
- expressions: numbers (a JSON decimal is the decimal it spells), Booleans, names,
  ``ite``, ``¬ ∧ ∨ ⇒``, ``= ≠ < ≤ > ≥``, ``+ - * / %``, ``pow``, ``min``, ``max``,
  ``floor``, ``ceil``, ``abs``, ``sgn``, ``trc``;
- properties: ``filter`` over the initial states, ``Pmin``/``Pmax`` of ``U`` and ``F``
  (with an upper ``step-bounds``: ``U<=k``), ``Emin``/``Emax`` of a reward variable until
  ``reach``, ``Smin``/``Smax`` of a state formula (the long run), and the comparisons of
  these with a bound. A reward's state part counts where the property accumulates ``exit``,
  its part on steps where it accumulates ``steps`` (Storm's reading for a DTMC, where
  ``time`` adds nothing); a property that leaves out a part the variable has is
  refused.

Refused by name: other model types, rates, clocks, arrays, unbounded or real state
variables, assignment levels, an automaton composed twice, functions with irrational
values. An error names ``file:line:column`` of the JSON value at fault (found in the
text only when an error is raised).
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

from ladders.solver.chains.formats.prism_lang import Model, Property, Scope, _given, _read, _typed
from ladders.solver.chains.model import ChainError, parse_exact
from ladders.solver.exact import mpq
from ladders.solver.chains.symbolic import (
    Command, Expr, ExprError, Program, RewardItem, Update, Variable, const, label, make,
    show, too_wide, variable,
)

#: JANI's operators with two operands, by the name ``symbolic.make`` knows them.
_BINARY = {"∧": "&", "∨": "|", "⇒": "=>", "=": "=", "≠": "!=", "<": "<", "≤": "<=",
           ">": ">", "≥": ">=", "+": "+", "-": "-", "*": "*", "/": "/", "%": "mod",
           "pow": "pow", "min": "min", "max": "max"}
#: Comparisons of a property's value with a bound, as PRISM writes them.
_BOUNDS = {"<": "<", "≤": "<=", ">": ">", "≥": ">="}
_IRRATIONAL = ("log", "exp", "sqrt", "sin", "cos", "tan")
_FILTERS = {"∀": "forall", "∃": "exists"}
_KINDS = {"int": "int", "real": "double", "bool": "bool"}

Pointer = tuple[str | int, ...]


class Locator:
    """``file:line:column`` of a value of the JSON text by its path of keys and
    indices, found by walking the text (each value's place is remembered, so that
    reading a document's edges in order walks it about once)."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self._known: dict[Pointer, int] = {}
        self._decoder = json.JSONDecoder()

    def __call__(self, pointer: Pointer) -> str:
        i = self._offset(tuple(pointer))
        line = self.text.count("\n", 0, i) + 1
        return f"{self.path}:{line}:{i - self.text.rfind(chr(10), 0, i)}"

    def _offset(self, pointer: Pointer) -> int:
        """Where the value at ``pointer`` starts (or, where there is none, where its
        nearest container does)."""
        found = self._known.get(pointer)
        if found is not None:
            return found
        if not pointer:
            self._known[()] = self._space(0)
            return self._known[()]
        parent, key = pointer[:-1], pointer[-1]
        i = self._offset(parent)
        text = self.text
        if i >= len(text) or text[i] not in "{[":
            return i
        if text[i] == "[":
            if not isinstance(key, int):
                return i
            n = next((j for j in range(key, -1, -1) if parent + (j,) in self._known), None)
            pos = self._space(i + 1) if n is None else self._known[parent + (n,)]
            n = 0 if n is None else n
            self._known[parent + (n,)] = pos
            while n < key and pos < len(text) and text[pos] != "]":
                pos = self._next(pos)
                n += 1
                self._known[parent + (n,)] = pos
            return pos
        pos = self._space(i + 1)
        while pos < len(text) and text[pos] != "}":
            name, after = json.decoder.scanstring(text, pos + 1)
            value = self._space(self._space(after) + 1)
            self._known[parent + (name,)] = value
            if name == key:
                return value
            pos = self._next(value)
        return i

    def _next(self, pos: int) -> int:
        """The start of the value after the one at ``pos`` (past its comma)."""
        pos = self._space(self._decoder.raw_decode(self.text, pos)[1])
        if pos < len(self.text) and self.text[pos] == ",":
            pos = self._space(pos + 1)
        return pos

    def _space(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i


def read_jani(path: str, given: dict[str, str]) -> tuple[Model, list[str], list[Property]]:
    """The JANI model in ``path`` with the constants ``given``: its :class:`Model`
    (program and scope, for a properties file read over it), the names of its
    constants without a value (the caller refuses them), and its own properties."""
    text = _read(path, "model")
    try:
        data = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise ChainError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    reader = _Reader(path, data, Locator(path, text))
    missing = reader.constants(given)
    if missing:
        return Model(Program(path, path, (), (), ()), reader.scope), missing, []
    return Model(reader.program(), reader.scope), [], reader.properties()


class _Reader:
    """One JANI document made into a program, keeping where each part came from."""

    def __init__(self, path: str, data: Any, where: Locator) -> None:
        self.path, self.data, self.where = path, data, where
        self.scope = Scope(path)
        #: transient variables: name -> (type, initial value)
        self.transient: dict[str, tuple[str, Any]] = {}
        #: where each reward variable is earned: "state" (locations), "step" (destinations)
        self._parts: dict[str, set[str]] = {}
        #: the state variables without an initial value, and every state variable
        self._open: list[str] = []
        self._declared: tuple[Variable, ...] = ()
        self._props = False
        if not isinstance(data, dict):
            raise ChainError(f"{where(())}: a JANI model is a JSON object")
        kind = data.get("type")
        if kind != "dtmc":
            raise ChainError(f"{where(('type',))}: a {kind} model: ladders answers Markov chains "
                             "(dtmc)")

    def fail(self, pointer: Pointer, message: str) -> ChainError:
        return ChainError(f"{self.where(pointer)}: {message}")

    def get(self, obj: Any, key: str, pointer: Pointer) -> Any:
        """``obj[key]``, or an error naming what is missing where."""
        if not isinstance(obj, dict) or key not in obj:
            raise self.fail(pointer, f"expected a member {key!r}")
        return obj[key]

    # ------------------------------------------------------------------ expressions
    def expr(self, x: Any, at: Pointer) -> Expr:
        """The JANI expression ``x`` (at ``at``) resolved, typed and folded."""
        if isinstance(x, bool):
            return const(x)
        if isinstance(x, int):
            return const(x)
        if isinstance(x, Decimal):
            return const(parse_exact(str(x)))
        if isinstance(x, str):
            return self._name(x, at)
        if not isinstance(x, dict) or "op" not in x:
            if isinstance(x, dict) and "constant" in x:
                raise self.fail(at, f"the constant {x['constant']} is irrational; ladders computes "
                                    "exactly and cannot use it")
            raise self.fail(at, "expected an expression")
        op = x["op"]
        try:
            if op == "ite":
                return make("ite", [self.expr(self.get(x, k, at), at + (k,))
                                    for k in ("if", "then", "else")])
            if op == "¬":
                return make("not", [self.expr(self.get(x, "exp", at), at + ("exp",))])
            if op in ("floor", "ceil", "abs", "sgn", "trc"):
                return _unary(op, self.expr(self.get(x, "exp", at), at + ("exp",)))
            if op in _BINARY:
                left = self.expr(self.get(x, "left", at), at + ("left",))
                right = self.expr(self.get(x, "right", at), at + ("right",))
                return make(_BINARY[op], [left, right])
        except ExprError as exc:
            raise self.fail(at, str(exc)) from None
        if op in _IRRATIONAL:
            raise self.fail(at, f"{op}(...) has irrational values; ladders computes exactly and "
                                "cannot use it")
        raise self.fail(at, f"the operator {op!r} is outside what ladders reads")

    def _name(self, name: str, at: Pointer) -> Expr:
        scope = self.scope
        if name in scope.variables:
            return variable(name, scope.variables[name])
        if name in scope.constants:
            return scope.constants[name]
        if name in self.transient:
            kind, _ = self.transient[name]
            if self._props and kind == "bool":
                return label(name)
            raise self.fail(at, f"the transient variable {name!r} read in an expression; ladders "
                                "reads it only as a label or a reward")
        raise self.fail(at, f"unknown name {name!r}")

    # ------------------------------------------------------------------ constants
    def constants(self, given: dict[str, str]) -> list[str]:
        """Define the constants (their values, or those ``given``); the names of those
        without either."""
        missing = []
        for n, c in enumerate(self.data.get("constants", [])):
            at: Pointer = ("constants", n)
            name = self.get(c, "name", at)
            kind = _KINDS.get(c.get("type")) if isinstance(c.get("type"), str) else \
                "int" if isinstance(c.get("type"), dict) and c["type"].get("base") == "int" else None
            if kind is None:
                raise self.fail(at + ("type",), f"the constant {name!r} has a type ladders does not "
                                                "read (int, real or bool)")
            if name in self.scope.constants:
                raise self.fail(at, f"a second constant {name!r}")
            if "value" in c:
                if name in given:
                    raise self.fail(at, f"--constants gives {name}, which the file defines already")
                e = self.expr(c["value"], at + ("value",))
                if e.op != "const":
                    raise self.fail(at + ("value",), f"the constant {name!r} is not a constant "
                                                     "expression")
                value = e.value
            elif name in given:
                value = _given(given[name], kind, name)
            else:
                missing.append(name)
                continue
            self.scope.constants[name] = _typed(value, kind, name, self.where(at))
        return missing

    # ------------------------------------------------------------------ the program
    def _variables(self, declared: list[Any], at: Pointer, module: str | None,
                   out: list[Variable]) -> None:
        for n, v in enumerate(declared):
            here = at + (n,)
            name, kind = self.get(v, "name", here), v.get("type")
            if name in self.scope.variables or name in self.transient or name in self.scope.constants:
                raise self.fail(here, f"a second variable {name!r}")
            init = v.get("initial-value")
            if v.get("transient", False):
                if kind not in ("bool", "int", "real"):
                    raise self.fail(here, f"the transient variable {name!r} has a type ladders "
                                          "does not read")
                if init is None:
                    raise self.fail(here, f"the transient variable {name!r} has no initial value")
                value = self.expr(init, here + ("initial-value",))
                if kind != "bool" and value.value != 0:
                    raise self.fail(here + ("initial-value",),
                                    f"the reward variable {name!r} starts at {value.value}; ladders "
                                    "reads rewards that start at 0")
                self.transient[name] = (kind, value)
                continue
            if kind == "bool":
                low, high, boolean = 0, 1, True
            elif isinstance(kind, dict) and kind.get("kind") == "bounded" and kind.get("base") == "int":
                if "lower-bound" not in kind or "upper-bound" not in kind:
                    raise self.fail(here + ("type",), f"an unbounded integer variable {name!r}; give "
                                                      "it both bounds")
                low = self._integer(kind["lower-bound"], here + ("type", "lower-bound"), "a bound")
                high = self._integer(kind["upper-bound"], here + ("type", "upper-bound"), "a bound")
                boolean = False
            else:
                shown = kind if isinstance(kind, str) else json.dumps(kind)[:60]
                raise self.fail(here + ("type",), f"a variable {name!r} of type {shown}: ladders reads "
                                                  "bounded integers and Booleans")
            if low > high:
                raise self.fail(here + ("type",), f"the variable {name!r} has the empty range "
                                                  f"[{low}..{high}]")
            if (wide := too_wide(name, low, high)) is not None:
                raise self.fail(here + ("type",), wide)
            start = low if init is None else self._integer(init, here + ("initial-value",),
                                                           "an initial value")
            if not low <= start <= high:
                raise self.fail(here + ("initial-value",), f"the initial value {start} of {name!r} is "
                                                           f"outside [{low}..{high}]")
            out.append(Variable(name, low, high, start, boolean, module))
            self.scope.variables[name] = "bool" if boolean else "int"
            if init is None:
                self._open.append(name)

    def _integer(self, x: Any, at: Pointer, what: str) -> int:
        e = self.expr(x, at)
        if e.op != "const" or e.type == "rat" and e.value.denominator != 1:  # type: ignore[union-attr]
            raise self.fail(at, f"{what} must be a constant integer")
        return int(e.value)  # type: ignore[call-overload]

    def program(self) -> Program:
        """The :class:`Program` of the document."""
        data = self.data
        declared: list[Variable] = []
        self._variables(data.get("variables", []), ("variables",), None, declared)
        automata = data.get("automata", [])
        by_name = {}
        for n, a in enumerate(automata):
            name = self.get(a, "name", ("automata", n))
            by_name[name] = n
            self._variables(a.get("variables", []), ("automata", n, "variables"), name, declared)
        locations: dict[str, dict[str, int]] = {}
        for n, a in enumerate(automata):
            names = [self.get(loc, "name", ("automata", n, "locations", k))
                     for k, loc in enumerate(self.get(a, "locations", ("automata", n)))]
            locations[a["name"]] = {loc: k for k, loc in enumerate(names)}
            if len(names) > 1:
                first = self.get(a, "initial-locations", ("automata", n))
                if len(first) != 1:
                    raise self.fail(("automata", n, "initial-locations"), "an automaton needs one "
                                                                          "initial location")
                var = f"loc_{a['name']}"
                declared.append(Variable(var, 0, len(names) - 1, names.index(first[0]), False,
                                         a["name"]))
                self.scope.variables[var] = "int"
        # Storm's order: Booleans, then integers; each the globals first, then by automaton
        variables = tuple(sorted(declared, key=lambda v: (not v.boolean, v.module is not None)))
        self._declared = variables
        system = self.get(data, "system", ())
        elements = [self.get(e, "automaton", ("system", "elements", k))
                    for k, e in enumerate(self.get(system, "elements", ("system",)))]
        for k, e in enumerate(system["elements"]):
            if e.get("input-enable"):
                raise self.fail(("system", "elements", k, "input-enable"), "input-enabled actions "
                                                                          "are outside what ladders reads")
        for k, name in enumerate(elements):
            if name not in by_name:
                raise self.fail(("system", "elements", k), f"no automaton {name!r}")
            if name in elements[:k]:
                raise self.fail(("system", "elements", k), f"the automaton {name!r} composed twice")
        # one automaton alone moves by every edge, whatever its action (Storm's reading)
        alone = len(elements) == 1 and not system.get("syncs")
        commands: list[Command] = []
        modules = []
        rewards: dict[str, list[RewardItem]] = {r: [] for r, (kind, _) in self.transient.items()
                                                if kind != "bool"}
        labels: dict[str, Expr] = {}
        for name in elements:
            n = by_name[name]
            a = automata[n]
            used = set()
            for k, edge in enumerate(self.get(a, "edges", ("automata", n))):
                command = self._edge(edge, ("automata", n, "edges", k), name, locations[name])
                if alone:
                    command = dataclasses.replace(command, action=None)
                commands.append(command)
                if command.action is not None:
                    used.add(command.action)
            modules.append((name, frozenset(used)))
            self._transient_values(a, n, locations[name], rewards, labels)
        for var, (kind, value) in self.transient.items():
            if kind == "bool" and var not in labels:
                labels[var] = value
        self.scope.labels = set(labels) | {"init", "deadlock"}
        syncs = []
        for k, vector in enumerate(system.get("syncs", [])):
            at: Pointer = ("system", "syncs", k)
            actions = self.get(vector, "synchronise", at)
            if len(actions) != len(elements):
                raise self.fail(at, f"a synchronisation vector of {len(actions)} actions for "
                                    f"{len(elements)} automata")
            participants = tuple((elements[i], act) for i, act in enumerate(actions) if act is not None)
            syncs.append((vector.get("result") or "+".join(a for _, a in participants), participants))
        return Program(name=str(data.get("name", self.path)), source=self.path, variables=variables,
                       modules=tuple(modules), commands=tuple(commands), init=self._init(),
                       labels=labels, rewards={r: tuple(items) for r, items in rewards.items()},
                       synchronisations=tuple(syncs))

    def _init(self) -> Expr | None:
        """The initial states' condition: ``restrict-initial`` and the initial values,
        where a variable has none or the restriction is not ``true`` (None: the
        variables' initial values alone)."""
        restrict = self.data.get("restrict-initial", {"exp": True})
        at: Pointer = ("restrict-initial", "exp")
        condition = self.expr(self.get(restrict, "exp", ("restrict-initial",)), at)
        if condition.type != "bool":
            raise self.fail(at, "the initial restriction must be true or false")
        if not self._open and condition.op == "const" and condition.value is True:
            return None
        for v in self._declared:
            if v.name in self._open:
                continue
            condition = make("&", [condition, make("=", [variable(v.name, "bool" if v.boolean else "int"),
                                                         const(bool(v.init) if v.boolean else v.init)])])
        return condition

    def _edge(self, edge: Any, at: Pointer, module: str, locations: dict[str, int]) -> Command:
        """One edge as a command: its guard (and location), its destinations as updates."""
        for key in ("rate", "assignments"):
            if edge.get(key):
                raise self.fail(at + (key,), "a rate (continuous time) is outside what ladders reads"
                                if key == "rate" else "assignments on an edge are outside what "
                                "ladders reads (JANI puts them on destinations)")
        guard = self.expr(self.get(edge["guard"], "exp", at + ("guard",)), at + ("guard", "exp")) \
            if "guard" in edge else const(True)
        if guard.type != "bool":
            raise self.fail(at + ("guard",), "a guard must be true or false")
        several = len(locations) > 1
        source = self.get(edge, "location", at)
        if source not in locations:
            raise self.fail(at + ("location",), f"no location {source!r}")
        if several:
            guard = make("&", [make("=", [variable(f"loc_{module}", "int"), const(locations[source])]),
                               guard])
        updates = []
        for d, dest in enumerate(self.get(edge, "destinations", at)):
            here = at + ("destinations", d)
            prob = const(1)
            if "probability" in dest:
                prob = self.expr(self.get(dest["probability"], "exp", here + ("probability",)),
                                 here + ("probability", "exp"))
                if prob.type == "bool":
                    raise self.fail(here + ("probability",), "a probability must be a number")
            assignments: list[tuple[str, Expr]] = []
            earned: list[tuple[str, Expr]] = []
            for k, assign in enumerate(dest.get("assignments", [])):
                spot = here + ("assignments", k)
                if assign.get("index", 0) != 0:
                    raise self.fail(spot + ("index",), "assignment levels are outside what ladders "
                                                       "reads")
                ref = self.get(assign, "ref", spot)
                if not isinstance(ref, str):
                    raise self.fail(spot + ("ref",), "an assignment to an array element is outside "
                                                     "what ladders reads")
                value = self.expr(self.get(assign, "value", spot), spot + ("value",))
                if ref in self.transient:
                    if self.transient[ref][0] == "bool":
                        raise self.fail(spot, f"the transient Boolean {ref!r} set on an edge; ladders "
                                              "labels states (set it in a location)")
                    if any(r == ref for r, _ in earned):
                        raise self.fail(spot, f"{ref!r} assigned twice by one destination")
                    earned.append((ref, value))
                    self._parts.setdefault(ref, set()).add("step")
                    continue
                if ref not in self.scope.variables:
                    raise self.fail(spot + ("ref",), f"unknown variable {ref!r}")
                if (value.type == "bool") != (self.scope.variables[ref] == "bool"):
                    raise self.fail(spot + ("value",), f"the value's type does not fit {ref!r}")
                assignments.append((ref, value))
            target = self.get(dest, "location", here)
            if target not in locations:
                raise self.fail(here + ("location",), f"no location {target!r}")
            if several:
                assignments.append((f"loc_{module}", const(locations[target])))
            updates.append(Update(prob, tuple(assignments), tuple(earned)))
        action = edge.get("action")
        return Command(module, action, guard, tuple(updates), self.where(at))

    def _transient_values(self, a: Any, n: int, locations: dict[str, int],
                          rewards: dict[str, list[RewardItem]], labels: dict[str, Expr]) -> None:
        """The state rewards and labels an automaton's locations set."""
        for k, loc in enumerate(a["locations"]):
            if "time-progress" in loc:
                raise self.fail(("automata", n, "locations", k, "time-progress"),
                                "time progress conditions (timed automata) are outside what "
                                "ladders reads")
            here_loc: Expr = const(True)
            if len(locations) > 1:
                here_loc = make("=", [variable(f"loc_{a['name']}", "int"), const(k)])
            for j, assign in enumerate(loc.get("transient-values", [])):
                at: Pointer = ("automata", n, "locations", k, "transient-values", j)
                ref = self.get(assign, "ref", at)
                if ref not in self.transient:
                    raise self.fail(at + ("ref",), f"{ref!r} is not a transient variable")
                value = self.expr(self.get(assign, "value", at), at + ("value",))
                kind, default = self.transient[ref]
                if kind == "bool":
                    if ref in labels and len(locations) == 1:
                        raise self.fail(at, f"the label {ref!r} set by two automata")
                    before = labels.get(ref, default)
                    labels[ref] = value if len(locations) == 1 else make("ite", [here_loc, value, before])
                else:
                    rewards[ref].append(RewardItem(None, here_loc, value, self.where(at)))
                    self._parts.setdefault(ref, set()).add("state")

    # ------------------------------------------------------------------ properties
    def properties(self) -> list[Property]:
        """The document's own properties."""
        self._props = True
        return [self._property(p, ("properties", n))
                for n, p in enumerate(self.data.get("properties", []))]

    def _property(self, p: Any, at: Pointer) -> Property:
        name = self.get(p, "name", at)
        where = self.where(at)
        e, here = self.get(p, "expression", at), at + ("expression",)
        function, states = "values", '"init"'
        if isinstance(e, dict) and e.get("op") == "filter":
            fun = self.get(e, "fun", here)
            function = _FILTERS.get(fun, fun)
            over = self.get(e, "states", here)
            states = '"init"' if over == {"op": "initial"} else json.dumps(over)[:60]
            e, here = self.get(e, "values", here), here + ("values",)
        bound = None
        if isinstance(e, dict) and e.get("op") in _BOUNDS and isinstance(e.get("left"), dict) \
                and str(e["left"].get("op", ""))[:1] in "PES":
            limit = self.expr(e["right"], here + ("right",))
            if limit.op != "const" or limit.type == "bool":
                raise self.fail(here + ("right",), "a bound must be a constant number")
            bound = (_BOUNDS[e["op"]], mpq(limit.value))
            e, here = e["left"], here + ("left",)
        op = e.get("op") if isinstance(e, dict) else None
        operator, reward, shape = "other", None, "a state formula"
        left: Expr | None = None
        right: Expr | None = None
        steps: int | None = None
        if op in ("Pmin", "Pmax"):
            operator = "P"
            path, spot = self.get(e, "exp", here), here + ("exp",)
            shape, left, right, steps = self._path(path, spot)
        elif op in ("Emin", "Emax"):
            operator, reward, shape, right = self._expectation(e, here)
        elif op in ("Smin", "Smax"):
            operator, shape = "S", "S"
            right = self._state(self.get(e, "exp", here), here + ("exp",))
        text = self._text(operator, reward, bound, shape, left, right, steps)
        if function != "values" or states != '"init"':
            text = f"filter({function}, {text}, {states})"
        return Property(name=name, operator=operator, reward=reward, bound=bound, shape=shape,
                        left=left, right=right, right_text=show(right) if right is not None else "",
                        function=function, states=states, text=text, where=where,
                        left_text=show(left) if left is not None else "", steps=steps)

    def _path(self, path: Any, at: Pointer) -> tuple[str, Expr | None, Expr | None, int | None]:
        """A probability's path formula: its shape (``"U"``, ``"F"`` or what it is in
        words), its state formulas and its upper step bound (``step-bounds``: ``upper``,
        ``upper-exclusive``; None: unbounded)."""
        op = path.get("op") if isinstance(path, dict) else None
        if op not in ("U", "F"):
            return f"the path formula {op or json.dumps(path)[:40]}", None, None, None
        for bounds in ("time-bounds", "reward-bounds"):
            if bounds in path:
                return "a time or reward bound", None, None, None
        steps = None
        if "step-bounds" in path:
            limits = path["step-bounds"]
            spot = at + ("step-bounds",)
            if not isinstance(limits, dict) or "upper" not in limits or "lower" in limits:
                return "a lower or interval step bound", None, None, None
            k = self.expr(limits["upper"], spot + ("upper",))
            exclusive = limits.get("upper-exclusive") is True
            if k.op != "const" or k.type != "int" or k.value < (1 if exclusive else 0):
                raise self.fail(spot + ("upper",), "a step bound must be a constant integer "
                                f"{'>= 1' if exclusive else '>= 0'}")
            steps = int(k.value) - (1 if exclusive else 0)
        if op == "F":
            return "F", None, self._state(self.get(path, "exp", at), at + ("exp",)), steps
        left = self._state(self.get(path, "left", at), at + ("left",))
        return "U", left, self._state(self.get(path, "right", at), at + ("right",)), steps

    def _expectation(self, e: Any, at: Pointer) -> tuple[str, str | None, str, Expr | None]:
        """An expected reward: ``R`` with the reward variable's name (``T`` for one a
        step), its shape and its target."""
        of = self.get(e, "exp", at)
        if isinstance(of, str) and of in self.transient and self.transient[of][0] != "bool":
            operator, reward = "R", of
        elif of == 1:
            operator, reward = "T", None
        else:
            raise self.fail(at + ("exp",), "an expected value of an expression; ladders answers the "
                                           "expectation of a reward variable (or of 1 a step)")
        if "reach" not in e:
            kind = "an instantaneous reward (I=k)" if "step-instant" in e else \
                "a total or cumulative reward (C<=k)"
            return operator, reward, kind, None
        accumulate = set(e.get("accumulate", []))
        counted = {"state"} if "exit" in accumulate else set()
        counted |= {"step"} if "steps" in accumulate else set()
        earned = self._parts.get(reward, set()) if reward is not None else {"step"}
        if not counted or earned - counted:
            left_out = "on steps" if "step" in earned - counted else "in states"
            raise self.fail(at + ("accumulate",), f"{reward or 1!r} is earned {left_out}, which this "
                                                  "property does not accumulate; ladders adds a "
                                                  "reward's every part (accumulate steps and exit)")
        return operator, reward, "F", self._state(e["reach"], at + ("reach",))

    def _state(self, x: Any, at: Pointer) -> Expr:
        e = self.expr(x, at)
        if e.type != "bool":
            raise self.fail(at, "a state formula must be true or false")
        return e

    @staticmethod
    def _text(operator: str, reward: str | None, bound: tuple[str, Any] | None, shape: str,
              left: Expr | None, right: Expr | None, steps: int | None = None) -> str:
        """The property as PRISM writes it (for its question's text)."""
        head = {"P": "P", "T": "T", "S": "S"}.get(operator, f'R{{"{reward}"}}' if reward else "?")
        head += "=?" if bound is None else f"{bound[0]}{bound[1]}"
        if right is None:
            return f"{head} [{shape}]"
        if shape == "S":
            return f"{head} [{show(right)}]"
        within = "" if steps is None else f"<={steps}"
        if shape == "U" and not (left is not None and left.op == "const" and left.value is True):
            return f"{head} [{show(left) if left is not None else 'true'} U{within} {show(right)}]"
        return f"{head} [F{within} {show(right)}]"   # true U phi is F phi


def _unary(op: str, x: Expr) -> Expr:
    """``floor``, ``ceil`` and JANI's ``abs``, ``sgn``, ``trc`` by the operators
    ``symbolic`` knows."""
    if op in ("floor", "ceil"):
        return make(op, [x])
    negative = make("<", [x, const(0)])
    if op == "abs":
        return make("ite", [negative, make("neg", [x]), x])
    if op == "sgn":
        return make("ite", [negative, const(-1), make("ite", [make(">", [x, const(0)]), const(1),
                                                                const(0)])])
    return make("ite", [negative, make("ceil", [x]), make("floor", [x])])
