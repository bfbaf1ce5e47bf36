"""PRISM (``.prism``, ``.pm``) and JANI (``.jani``) models.

A model is built by ladders itself by default (:mod:`.prism_native`, no stormpy
needed); ``builder="storm"`` (``--builder storm``) takes the route below, built exactly
by Storm.

Storm (through its Python bindings, stormpy) reads the model, defines its open
constants (``--constants N=16,MAX=2``) and builds its states and transitions in exact
rational arithmetic; this module copies them into a :class:`~ladders.solver.chains.model.Chain`
through :class:`~ladders.solver.chains.model.ChainBuilder`, which checks them once more:

- states are named by their valuations (``s=5,srep=2``; a Boolean as ``u`` or ``!u``),
  or by number where the names would be longer than a name may be;
- labels are the model's (``init`` and ``deadlock`` included) and one per expression a
  property asks about (``(s = 5)``, as Storm writes it);
- rewards are the model's reward structures, each state's reward plus its action's
  (a Markov chain has one action a state) plus its transition rewards' expectation
  ``sum_j P(i, j) r(i, j)``, as Storm folds them;
- the start is the initial state; where the model has several, each with the same
  probability (their average), and the chain's notes say so.

Only discrete-time Markov chains (``dtmc``): an MDP, a CTMC, a Markov automaton are
refused by name. The properties (``--properties FILE``, or a JANI file's own) become
:class:`~ladders.solver.chains.questions.Question`\\ s:

- ``P=? [F phi]`` (JANI's ``P=? [true U phi]``), ``P=? [phi U psi]`` and the bounded
  ``F<=k``, ``F<k``, ``U<=k``: ``reach`` (with ``through`` and ``steps``);
- ``R{"name"}=? [C<=k]`` and ``[I=k]`` (a literal k): ``cumulative``, ``instant`` (of a
  structure without action or transition rewards: Storm counts state rewards there);
- ``S=? [phi]``: ``steady`` (the long run);
- ``R{"name"}=? [F phi]``, ``R=? [F phi]`` (the model's only reward): ``reward``;
- ``T=? [F phi]``, Storm's expected time (steps, for a DTMC): ``reward`` with one a step;
- ``P>=1 [F phi]`` and the other bounds: the same, with ``Question.compare``;
- ``min``/``max`` (``Pmin=?``) are the value itself in a Markov chain;
- ``filter(f, prop, "init")``, as QVBS writes every property, and a plain property
  (Storm's ``filter(values, prop, "init")``), as Storm 2.0 answers them
  (:func:`_filter_over`): ``min``, ``max``, ``sum``, ``avg`` of a value (``P=?``),
  ``forall``, ``exists`` of a bound (``P>=b``); ``values`` where the model has one
  initial state (with several, Storm's answer is one value for each: refused, as are
  ``count``, ``argmin`` and ``argmax``, and the forms Storm itself refuses).

``phi`` is any propositional formula over labels and expressions
(``s=5 & srep=2``, ``!"knowA" & "knowB"``): Storm finds its states on the built model.
Other shapes (next ``X``, which stormpy 2.0 does not bind, a lower step bound, ``G``,
LTL, nested ``P``, conditional, long-run rewards, multi-objective) are refused by name,
each by itself (the others are answered); the default builder (:mod:`.prism_native`)
answers ``X`` too.

stormpy is optional (binary wheels for CPython >= 3.11 on Linux with glibc >= 2.34
and macOS 15 on arm64): it is imported when a model is loaded, and its absence is a
:class:`ChainError` that says how to install it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import MAX_NAME, MAX_STATES, ChainBuilder, ChainError
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq

SUFFIXES = (".prism", ".pm", ".jani")
DESCRIPTION = ("PRISM or JANI model (.prism, .pm, .jani), built by ladders itself (or with "
               "--builder storm exactly by Storm, stormpy)")
TAKES = ("constants", "properties", "builder", "max_states")
#: What :func:`load` reports while it works (see :func:`~ladders.solver.chains.formats.load_chain`).
FOLLOWS = ("progress",)
#: Who builds the chain of a PRISM or JANI model: ladders itself (the default; no
#: stormpy needed, :mod:`.prism_native`) or Storm (``--builder storm``).
BUILDERS = ("ladders", "storm")

#: How to install stormpy: "pip install 'ladders[prism]'" would fetch another project
#: of that name from PyPI, so the extra is named with the checkout.
INSTALL = ("pip install stormpy (wheels for CPython >= 3.11 on Linux with glibc >= 2.34 and "
           "macOS 15 on arm64), or pip install '.[prism]' from the ladders checkout")

#: The name of a model's unnamed reward structure (Storm's ``""``).
UNNAMED_REWARD = "(unnamed)"

#: Storm's words for a filter's function (``FilterExpression`` printed; Storm 2.0
#: spells the minimum "minumum"), by PRISM's name.
_FILTERS = {
    "the minumum": "min", "the minimum": "min", "the maximum": "max", "the sum": "sum",
    "the average": "avg", "the number of": "count", "whether for all states in": "forall",
    "whether there exists a state in": "exists", "the argmin": "argmin",
    "the argmax": "argmax", "the values": "values",
}
_COMPARISONS = {"GEQ": ">=", "GREATER": ">", "LEQ": "<=", "LESS": "<"}
_MODEL_TYPES = {
    "MDP": "a nondeterministic model (MDP)", "CTMC": "a continuous-time model (CTMC)",
    "MA": "a Markov automaton (MA)", "POMDP": "a partially observable model (POMDP)",
    "CTMDP": "a continuous-time nondeterministic model (CTMDP)", "SMG": "a game (SMG)",
}
_QUOTED = re.compile(r'"[^"]*"')


def _stormpy(path: str) -> ModuleType:
    """stormpy, imported here (optional, and slow to import); a :class:`ChainError`
    saying how to install it where it is missing."""
    try:
        import stormpy
    except ImportError as exc:
        raise ChainError(f"{path}: PRISM and JANI models need stormpy ({exc}); {INSTALL}") from None
    return stormpy


@contextlib.contextmanager
def _storm_errors(stormpy: ModuleType, what: str) -> Iterator[None]:
    """Storm quiet (its log repeats on stderr what the :class:`ChainError` says), and
    its errors as one-line :class:`ChainError`\\ s starting with ``what``."""
    developer = stormpy.developer
    level = developer.get_log_level()
    developer.set_log_level(developer.LogLevel.OFF)
    try:
        yield
    except (RuntimeError, stormpy.exceptions.StormError) as exc:
        raise ChainError(f"{what}: {_one_line(str(exc))}") from None
    finally:
        developer.set_log_level(level)


def _one_line(message: str) -> str:
    """Storm's message on one line, without its exception's name."""
    first = re.sub(r"^\w+Exception: ", "", message.strip())
    return " ".join(first.split())[:300]


def load(path: str, constants: str | None = None, properties: str | None = None,
         builder: str | None = None, max_states: int | str | None = None,
         progress: Callable[[int, int, int], None] | None = None) -> Loaded:
    """The Markov chain of the PRISM or JANI model ``path``, built by ``builder``
    (:data:`BUILDERS`; by default ladders builds it itself). Built here, it has at most
    ``max_states`` states (default :data:`~ladders.solver.chains.model.MAX_STATES`), and
    ``progress(states, transitions, levels)`` follows the build."""
    if builder not in (None, *BUILDERS):
        raise ChainError(f"{path}: --builder {builder}: use {' or '.join(BUILDERS)}")
    limit = MAX_STATES if max_states is None else _positive(path, max_states)
    if builder != "storm":
        from ladders.solver.chains.formats import prism_native
        from ladders.solver.chains.symbolic import INT_BOUND
        try:
            return prism_native.load(path, constants, properties, _filter_over,
                                     UNNAMED_REWARD, limit, progress)
        except OverflowError as exc:  # a constant no 64-bit integer holds, met in the build
            raise ChainError(f"{path}: a value beyond the 64-bit integers ladders builds with "
                             f"({exc}); keep the integer constants within "
                             f"+-{INT_BOUND - 1:,}") from None
    if max_states is not None:
        raise ChainError(f"{path}: --max-states is for the models ladders builds; Storm's "
                         "build has no limit to raise (leave out --builder storm)")
    return load_storm(path, constants=constants, properties=properties)


def _positive(path: str, value: int | str) -> int:
    """``--max-states``: a positive whole number."""
    text = str(value).replace(",", "").replace("_", "")
    if not (text.isascii() and text.isdigit() and int(text) > 0):
        raise ChainError(f"{path}: --max-states {value}: give a positive whole number of states")
    return int(text)


def load_storm(path: str, constants: str | None = None, properties: str | None = None) -> Loaded:
    """The Markov chain Storm builds from the PRISM or JANI model ``path`` (see the
    module docstring), with ``constants`` (``"N=16,MAX=2"``) for its open constants,
    and the questions of the properties file ``properties`` (for JANI, without it:
    the file's own properties)."""
    stormpy = _stormpy(path)
    is_jani = Path(path).suffix.lower() == ".jani"
    with _storm_errors(stormpy, f"{path}: Storm cannot read the model"):
        if is_jani:
            model, props = stormpy.parse_jani_model(path)
        else:
            # read as PRISM reads it: Storm's stricter reading refuses, say, a PRISM
            # CTMC's commands before the model's type can be named
            model, props = stormpy.parse_prism_program(path, prism_compatibility=True), []
    _check_type(path, model)
    if properties is not None:
        props = _parse_properties(stormpy, properties, model)
    model, props = _instantiate(stormpy, path, model, props, constants)
    # the properties' expressions become labels (Storm finds their states by them); a
    # lone formula would also make its target states terminal, unexplored, and the
    # chain would then hang on how many properties are asked: given twice, it does not
    options = stormpy.BuilderOptions(props * 2 if len(props) == 1 else props) if props \
        else stormpy.BuilderOptions()
    options.set_build_all_labels()
    options.set_build_all_reward_models()
    options.set_build_state_valuations()
    with _storm_errors(stormpy, f"{path}: Storm cannot build the model"):
        built = _stoppable(stormpy.build_model[stormpy.Rational], model, options)
    name = Path(path).stem + (f" ({constants})" if constants else "")
    # the reward structures with action or transition parts, before Storm folds them
    acted = {_reward_name(n) for n, r in built.reward_models.items()
             if r.has_state_action_rewards or r.has_transition_rewards}
    builder, notes = _chain_builder(path, name, built)
    questions, refused = [], []
    for prop in props:
        try:
            questions.append(_question(stormpy, path, built, builder, prop, acted))
        except ChainError as exc:
            refused.append(str(exc))  # this property alone; the others are answered
    chain = builder.build()
    if notes:
        chain = dataclasses.replace(chain, notes=chain.notes + tuple(notes))
    return Loaded(chain, tuple(questions), refused=tuple(refused))


def _stoppable(build: Callable[..., Any], model: Any, options: Any) -> Any:
    """``build(model, options=options)`` in a thread, the main thread waiting for it in
    short joins: a signal's Python handler (Ctrl-C's ``KeyboardInterrupt``) runs only
    in the main thread, between bytecodes, and Storm's build holds that thread in C++
    for minutes otherwise (it releases the GIL while it builds, so the waiting thread
    runs). Interrupted, the command ends with the build still running in its daemon
    thread: the CLI leaves with ``os._exit``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["model"] = build(model, options=options)
        except BaseException as exc:  # handed to the main thread as it is
            outcome["error"] = exc
    worker = threading.Thread(target=run, name="storm-build", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["model"]


def _check_type(path: str, model: Any) -> None:
    """Refuse a model that is not a DTMC before Storm builds it."""
    kind = model.model_type.name
    if kind != "DTMC":
        raise ChainError(f"{path}: {_MODEL_TYPES.get(kind, f'a {kind} model')}: ladders answers "
                         "Markov chains (dtmc)")


def _parse_properties(stormpy: ModuleType, properties: str, model: Any) -> list[Any]:
    """The properties in the file ``properties``, over ``model``'s names."""
    try:
        text = Path(properties).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ChainError(f"{properties}: no such properties file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ChainError(f"{properties}: cannot read the properties file ({exc})") from None
    with _storm_errors(stormpy, f"{properties}: Storm cannot read the properties"):
        return list(stormpy.parse_properties(text, model))


def _undefined(model: Any) -> list[str]:
    """The names of ``model``'s constants without a value."""
    return [c.name for c in model.constants if not c.defined]


def _instantiate(stormpy: ModuleType, path: str, model: Any, props: list[Any],
                 constants: str | None) -> tuple[Any, list[Any]]:
    """``model`` and ``props`` with ``constants`` defined; every open constant, the
    model's and the properties', needs one."""
    if constants:
        given = ", ".join(_undefined(model)) or "none"
        with _storm_errors(stormpy, f"{path}: --constants {constants}: the model's open "
                                    f"constants: {given}; Storm says"):
            model, props = stormpy.instantiate_constants(model, constants, props)
    missing = _undefined(model)
    # the properties file's own constants (const double lambda;): Storm would read an
    # undefined one as 0 when it builds their labels
    for prop in props:
        missing += [c.name for c in prop.get_undefined_constants() if c.name not in missing]
    if missing:
        form = ",".join(f"{c}=..." for c in missing)
        raise ChainError(f"{path}: the constant{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no value; "
                         f"give {'them' if len(missing) > 1 else 'it'} with --constants {form}")
    return model, props


def _state_names(built: Any) -> list[str] | None:
    """Each state's valuation (``s=5,srep=2``, without the variables that never
    change), or None where Storm has none, or the names are too long or not distinct
    (the states are then named by number)."""
    if not built.has_state_valuations():
        return None
    valuations = built.state_valuations
    by_name = {v.name: v for v in valuations.get_all_variables()}
    # the variables in the model's order, as Storm writes a valuation: "[!u1\t& c=1\t& ...]"
    order = [token.lstrip("!").partition("=")[0]
             for token in valuations.to_string(0).strip("[]").split("\t& ")]
    if sorted(order) != sorted(by_name):
        return None
    values = {variable: valuations.get_values_states(by_name[variable]) for variable in order}
    # a variable with one value in every state (a JANI automaton's only location) names
    # none of them apart
    varying = [variable for variable in order if len(set(values[variable])) > 1] or order
    # each part of a name holds at least the variable's name, and a comma
    if sum(len(variable) + 1 for variable in varying) - 1 > MAX_NAME:
        return None
    columns = [[variable if v else "!" + variable for v in values[variable]]
               if by_name[variable].has_boolean_type()
               else [f"{variable}={v}" for v in values[variable]]
               for variable in varying]
    names = [",".join(parts) for parts in zip(*columns)]
    if any(len(name) > MAX_NAME for name in names) or len(set(names)) != len(names):
        return None
    return names


def _reward_name(storm_name: str) -> str:
    """The chain's name of a Storm reward structure."""
    return storm_name or UNNAMED_REWARD


def _exact(value: Any) -> mpq:
    """A Storm rational as an ``mpq``."""
    return mpq(str(value))


def _chain_builder(path: str, name: str, built: Any) -> tuple[ChainBuilder, list[str]]:
    """A :class:`ChainBuilder` holding Storm's states, transitions, start, labels and
    rewards, and the notes for the chain."""
    builder = ChainBuilder(name, path)
    n = built.nr_states
    builder.states(_state_names(built) or [str(i) for i in range(n)])
    builder.entries(*_rows(built, n))
    notes = []
    initial = list(built.initial_states)
    for i in initial:
        builder.start_at(i, mpq(1, len(initial)))
    if len(initial) > 1:
        notes.append(f"{len(initial):,} initial states: the start is each with probability "
                     f"1/{len(initial):,} (an average over them; filter(min|max) the least or "
                     "greatest of their values)")
    labeling = built.labeling
    for label in sorted(labeling.get_labels()):
        builder.label(label, list(labeling.get_states(label)))
    deadlocks = labeling.get_states("deadlock").get_number_of_set_bits() \
        if labeling.contains_label("deadlock") else 0
    if deadlocks:
        notes.append(f"{deadlocks:,} state(s) without transitions made absorbing by Storm "
                     "(label \"deadlock\")")
    # Storm folds each state's action reward (one action a state) and its transition
    # rewards (sum_j P(i, j) r(i, j)) into the state's reward
    built.reduce_to_state_based_rewards()
    for storm_name, model in built.reward_models.items():
        _add_reward(builder, _reward_name(storm_name), model)
    return builder, notes


#: A transition in Storm's DRN text: ``\t\t<target> : <value>``.
_DRN_ENTRY = re.compile(rb"\n\t\t(\d+) : ([^\n]+)")


def _rows(built: Any, n: int) -> tuple[np.ndarray, np.ndarray, list[mpq], np.ndarray]:
    """Storm's matrix as CSR entries over its distinct values (for
    :meth:`ChainBuilder.entries`), by Storm's own DRN writer: reading the matrix entry by
    entry through stormpy costs about 9 us a transition (each value printed anew), the
    DRN text about 1 us all told (crowds 4-15, 345,965 transitions: 0.4 s against 3.1 s),
    and a model repeats a few probabilities, each parsed once."""
    import tempfile

    from stormpy import io as storm_io
    with tempfile.TemporaryDirectory(prefix="ladders-drn-") as tmp:
        path = Path(tmp) / "model.drn"
        options = storm_io.DirectEncodingExporterOptions()
        options.allow_placeholders = False
        storm_io.export_to_drn(built, str(path), options=options)
        text = path.read_bytes()
    body = text[text.index(b"@model"):]
    states = body.split(b"\nstate ")[1:]
    if len(states) != n:
        raise ChainError(f"Storm's DRN export has {len(states):,} states, the model {n:,}")
    counts = np.fromiter((chunk.count(b"\n\t\t") for chunk in states), dtype=np.int64, count=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    found = _DRN_ENTRY.findall(body)
    columns = np.fromiter((int(j) for j, _ in found), dtype=np.int64, count=len(found))
    seen: dict[bytes, int] = {}
    ids = np.fromiter((seen.setdefault(v, len(seen)) for _, v in found), dtype=np.int64,
                      count=len(found))
    values = [mpq(v.decode().strip()) for v in seen]
    return indptr, columns, values, ids


def _add_reward(builder: ChainBuilder, name: str, model: Any) -> None:
    """Storm's reward structure ``model``, reduced to state rewards, as the reward
    ``name``."""
    if model.has_state_rewards:
        for i, r in enumerate(model.state_rewards):
            value = _exact(r)
            if value:
                builder.reward(name, i, value)


# --------------------------------------------------------------------- properties

def _filter_of(prop: Any, where: str) -> tuple[str, str]:
    """The property's filter: its function (``"values"``, ``"min"``, ``"forall"``...)
    and the text of its states formula (``'"init"'``). stormpy 2.0 binds no accessor
    for a filter, and Storm writes a property as ``(name): Obtain <function> of the
    '<states>'-states with values described by '<formula>'``."""
    text = str(prop)
    head = f"({prop.get_name()}): Obtain "
    tail = f"-states with values described by '{prop.get_raw_formula()}'"
    if text.startswith(head) and text.endswith(tail):
        function, sep, states = text[len(head):-len(tail)].partition(" of the '")
        if sep and states.endswith("'") and function in _FILTERS:
            return _FILTERS[function], states[:-1]
    raise ChainError(f"{where}: cannot read its filter from {text[:80]!r}; use stormpy 2.0")


def _question(stormpy: ModuleType, path: str, built: Any, builder: ChainBuilder,
              prop: Any, acted: set[str]) -> Question:
    """The :class:`Question` of the property ``prop``; a label in ``builder`` for its
    target (and an until's left side) where that is an expression; a
    :class:`ChainError` naming the file, the property and what ladders asks instead
    where it cannot be one. ``acted``: the reward structures with action or
    transition rewards (``I=k`` of them is refused: Storm counts state rewards only)."""
    name = prop.get_name()
    formula = prop.get_raw_formula()
    # Storm names a property without a name by its number
    named = not name.isdigit()
    shown = f'property "{name}" ({formula})' if named else f"property {formula}"
    where = f"{path}: {shown}"
    ask = ("on this route ladders answers P=? [F psi], [phi U psi], [phi U<=k psi]; R=? [F psi], "
           "[C<=k], [I=k]; T=? [F psi]; S=? [psi] (the default builder also X)")
    logic = stormpy.logic
    function, states = _filter_of(prop, where)
    if states != '"init"':
        raise ChainError(f"{where}: a filter over the states {states}; filter over \"init\"")
    left, steps, target = None, None, None
    if isinstance(formula, logic.ProbabilityOperatorFormula):
        kind, reward = "reach", None
    elif isinstance(formula, logic.RewardOperatorFormula):
        kind, reward = "reward", _reward_of(built, formula, where)
    elif isinstance(formula, logic.TimeOperatorFormula):
        kind, reward = "reward", None
    elif isinstance(formula, logic.LongRunAverageOperatorFormula):
        kind, reward, target = "steady", None, formula.subformula
    else:
        raise ChainError(f"{where}: {_shape(logic, formula)}; {ask}")
    path_formula = formula.subformula
    if kind == "steady":
        pass
    elif isinstance(path_formula, logic.EventuallyFormula):
        target = path_formula.subformula
    elif kind == "reach" and isinstance(path_formula, logic.BoundedUntilFormula) and \
            not path_formula.has_lower_bound and not path_formula.is_multi_dimensional:
        # Storm prints the bound as written after instantiation: U<k is U<=k-1
        strict = re.search(r" U<(?!=)", str(path_formula)) is not None
        steps = int(path_formula.upper_bound_expression.evaluate_as_int()) - int(strict)
        left, target = path_formula.left_subformula, path_formula.right_subformula
    elif (kind == "reach" and isinstance(path_formula, logic.UntilFormula)
          and not isinstance(path_formula, logic.BoundedUntilFormula)):
        left, target = path_formula.left_subformula, path_formula.right_subformula
    elif kind == "reward" and reward is not None and isinstance(
            path_formula, (logic.CumulativeRewardFormula, logic.InstantaneousRewardFormula)):
        found = re.fullmatch(r"(C<=|I=)(\d+)", str(path_formula))
        if found is None:
            raise ChainError(f"{where}: {_shape(logic, path_formula)} with a bound that is not a "
                             f"number ({path_formula}); {ask}")
        kind, steps = ("cumulative" if found[1] == "C<=" else "instant"), int(found[2])
        if kind == "instant" and reward in acted:
            raise ChainError(f"{where}: an instantaneous reward (I=k) of a reward structure with "
                             "action or transition rewards; Storm counts only its state rewards "
                             "there, and the chain holds them folded together: ask it of a "
                             "structure of state rewards")
    else:
        raise ChainError(f"{where}: {_shape(logic, path_formula)}; {ask}")
    for part in (target, left):
        if part is None:
            continue
        if not isinstance(part, logic.StateFormula):
            raise ChainError(f"{where}: a path formula inside F (LTL); {ask}")
        if "[" in _QUOTED.sub("", str(part)):
            raise ChainError(f"{where}: a P, R or T operator inside F (nested); {ask}")
    compare = None
    if formula.has_bound:
        op = _COMPARISONS[formula.comparison_type.name]
        # the threshold's own value is evaluated as an integer where it is a
        # quotient of integers (P>=1/3 gives 0): evaluate its expression
        compare = (op, _exact(formula.threshold_expr.evaluate_as_rational()))
    over = _filter_over(function, compare, len(list(built.initial_states)), where)
    shown_formula = str(formula) if function == "values" else f'filter({function}, {formula}, "init")'
    text = f"{name}: {shown_formula}" if named else shown_formula
    through = None if left is None or str(left) == "true" else \
        _target(stormpy, built, builder, left, name)
    return Question(kind=kind, reward=reward, text=text, compare=compare, over=over,
                    target=None if target is None else _target(stormpy, built, builder, target, name),
                    through=through, steps=steps)


def _shape(logic: ModuleType, formula: Any) -> str:
    """What a formula ladders does not answer is, in words."""
    shapes = [
        (logic.BoundedUntilFormula, "a bounded until with a lower bound or several bounds "
                                    "(F>=k, F[a,b])"),
        (logic.UntilFormula, "an until inside R or T"),
        (logic.GloballyFormula, "globally (G)"),
        (logic.ConditionalFormula, "a conditional probability"),
        (logic.CumulativeRewardFormula, "a cumulative reward (C<=k)"),
        (logic.InstantaneousRewardFormula, "an instantaneous reward (I=k)"),
        (logic.LongRunAverageRewardFormula, "a long-run average reward (LRA)"),
        (logic.DiscountedCumulativeRewardFormula, "a discounted reward"),
        (logic.DiscountedTotalRewardFormula, "a discounted reward"),
        (logic.LongRunAverageOperatorFormula, "a steady-state probability (S=?, LRA=?)"),
        (logic.MultiObjectiveFormula, "a multi-objective query"),
        (logic.GameFormula, "a game formula"),
        (logic.StateFormula, "a state formula without P, R or T"),
        (logic.PathFormula, f"the path formula {formula}"),
    ]
    for cls, words in shapes:
        if isinstance(formula, cls):
            return words
    return f"the formula {formula} (next X, total reward C or another shape)"


def _reward_of(built: Any, formula: Any, where: str) -> str:
    """The chain's name of the reward structure ``R{...}`` asks for (``R`` alone: the
    model's only one)."""
    names = list(built.reward_models)
    if formula.has_reward_model_name():
        wanted = formula.reward_name
        if wanted not in names:
            known = ", ".join(f'"{n}"' for n in names) or "none"
            raise ChainError(f'{where}: no reward structure "{wanted}"; the model\'s: {known}')
        return _reward_name(wanted)
    if len(names) != 1:
        known = ", ".join(f'"{n}"' for n in names) or "none"
        raise ChainError(f"{where}: R without a name needs a model with one reward structure; "
                         f"this one has {known}: write R{{\"name\"}}")
    return _reward_name(names[0])


def _filter_over(function: str, compare: tuple[str, mpq] | None, starts: int,
                 where: str) -> str | None:
    """How ``filter(function, prop, "init")`` over a model's ``starts`` initial states
    is answered, as Storm 2.0 answers it (its command line applies the filter to the
    initial states' values: ``printFilteredResult``): None, the value from the start
    (one initial state, or their average: ``avg``, and the start is uniform over
    them); ``"min"``, ``"max"`` or ``"sum"`` over them (:attr:`Question.over`); a
    :class:`ChainError` with the reason where Storm gives no single value or no answer.

    ``forall`` and ``exists`` (of a bound, as Storm asks) are the bound on the least or
    greatest value: every value is ``>= b`` exactly when the least is. ``count`` over
    several initial states needs each one's truth, which ladders does not keep."""
    if function in ("argmin", "argmax"):
        raise ChainError(f"{where}: filter({function}, ...) asks for states, not a value (Storm "
                         "answers it with 'Outputting states is not supported'); ask "
                         "filter(min|max, ...) for the value")
    if compare is None and function in ("forall", "exists", "count"):
        raise ChainError(f"{where}: filter({function}, ...) needs a bound (P>=1 [...]): Storm "
                         "defines it for truths only; give one")
    if compare is not None and function in ("min", "max", "sum", "avg"):
        raise ChainError(f"{where}: filter({function}, ...) of a bound is a truth per state: "
                         f"Storm defines {function} for values only (P=?, R=?); drop the "
                         "bound, or ask filter(forall|exists, ...)")
    if function == "count":
        raise ChainError(f"{where}: filter(count, ...) is how many initial states meet the "
                         "bound; ladders answers a value or a truth, not a count: ask "
                         "filter(forall|exists, ...)")
    if starts == 1 or function == "avg":
        return None
    if function in ("min", "max", "sum"):
        return function
    if function in ("forall", "exists"):
        above = compare is not None and compare[0] in (">=", ">")
        return "min" if above == (function == "forall") else "max"
    asks = "one truth for each" if compare is not None else "one value for each"
    raise ChainError(f"{where}: the model has {starts:,} initial states, and Storm's answer is "
                     f"{asks} ({{v1, v2, ...}}), not a single one: ask filter(min|max|avg|sum, "
                     "..., \"init\") of a value (P=?, R=?), or filter(forall|exists, ...) of a "
                     "bound")


def _target(stormpy: ModuleType, built: Any, builder: ChainBuilder, target: Any,
            prop_name: str) -> str:
    """The label of the states where ``target`` holds: the model's own for a label, else
    one named by the formula as Storm writes it (``(s = 5)``), added to ``builder``."""
    if isinstance(target, stormpy.logic.AtomicLabelFormula):
        return target.label
    text = str(target)
    label = text if len(text) <= MAX_NAME else f"target of {prop_name}"
    with _storm_errors(stormpy, f"{builder.source}: Storm cannot find the states of {text}"):
        states = list(stormpy.model_checking(built, target).get_truth_values_vector())
    # a Boolean variable's name prints as the bare name, which a label of the model may
    # also have: never add the expression's states to another label (the same
    # expression asked twice finds its own)
    while builder.labelled(label) not in (None, frozenset(states)):
        label = f"({label})"
    builder.label(label, states)
    return label
