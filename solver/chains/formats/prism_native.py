"""PRISM and JANI models built by ladders itself, without Storm: the readers of
:mod:`~ladders.solver.chains.formats.prism_lang` and
:mod:`~ladders.solver.chains.formats.jani_lang`, the explorer of
:mod:`~ladders.solver.chains.explore`, and the properties made into
:class:`~ladders.solver.chains.questions.Question`\\ s the way the stormpy route
(:mod:`~ladders.solver.chains.formats.prism`) makes them:

- ``P=? [F psi]``, ``P=? [phi U psi]``, ``F<=k``, ``F<k``, ``U<=k``: ``reach`` (with its
  ``through`` and ``steps``); ``P=? [X psi]``: ``next``; ``R{"r"}=? [F psi]`` (``R``
  alone: the model's only reward structure) and ``T=? [F psi]``: ``reward``;
  ``R=? [C<=k]``: ``cumulative``; ``R=? [I=k]``: ``instant`` (of a structure of state
  rewards only, as Storm counts them); ``S=? [psi]``: ``steady``; a bound
  (``P>=1 [...]``) is the question's ``compare``; ``filter(f, prop, "init")`` as that
  route reads it;
- a state formula that is an expression becomes a label named by its text, or
  ``target of NAME`` (``path of NAME`` for ``phi``) where the text is longer than a
  name may be;
- a property ladders does not answer (``G``, LTL, ``R=? [S]``, a lower step bound,
  ...) is refused by itself, by its place, name and reason
  (:attr:`~ladders.solver.chains.formats.Loaded.refused`); the others are answered;
- every constant without a value, the model's or the properties file's, must be given
  by ``--constants``: those missing are refused together, by name.

The chain's states, transitions, labels (``init``, ``deadlock`` and the model's) and
rewards equal those Storm builds from the same model (the tests compare them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

import numpy as np

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.formats.prism_lang import (
    Property, parse_constants, read_model, read_properties,
)
from ladders.solver.chains.model import MAX_NAME, MAX_STATES, ChainError
from ladders.solver.chains.questions import Question
from ladders.solver.chains.symbolic import Expr
from ladders.solver.exact import mpq

#: Filter functions, by PRISM's name.
FILTERS = ("min", "max", "sum", "avg", "count", "forall", "exists", "argmin", "argmax", "values")
#: What the questions ladders answers look like, for refusals.
ASK = ("ladders answers P=? [F psi], [phi U psi], [X psi], [F<=k psi], [phi U<=k psi]; "
       "R=? [F psi], [C<=k], [I=k]; T=? [F psi]; S=? [psi]; phi, psi over labels and "
       "expressions")


#: How a filter over the initial states is answered: ``(function, compare, starts,
#: where)`` gives the question's ``over`` (:func:`.prism._filter_over`), or raises a
#: :class:`ChainError` where the value from the start does not answer it.
FilterOver = Callable[[str, "tuple[str, mpq] | None", int, str], "str | None"]


def load(path: str, constants: str | None, properties: str | None, filter_over: FilterOver,
         unnamed_reward: str, max_states: int = MAX_STATES,
         progress: Callable[[int, int, int], None] | None = None) -> Loaded:
    """The Markov chain of the PRISM model ``path``, built here, with ``constants``
    (``"N=16,MAX=2"``) for its open constants, and the questions of the properties
    file ``properties``. The stormpy route (:func:`.prism.load`) calls it and hands it
    its rules, so that both routes read properties alike: ``filter_over`` and the name
    of a model's unnamed reward structure. At most ``max_states`` states are built;
    ``progress`` follows the build (:meth:`~ladders.solver.chains.explore.Explorer.explore`)."""
    given = parse_constants(constants)
    props: list[Property] = []
    if Path(path).suffix.lower() == ".jani":
        from ladders.solver.chains.formats.jani_lang import read_jani  # JSON: only for JANI
        model, missing, props = read_jani(path, given)
    else:
        model, missing = read_model(path, given)
    extra: dict[str, Expr] = {}
    if properties is not None:
        if missing:
            # read the properties too: every missing constant is named at once
            props_missing = _constants_of(properties)
            missing += [c for c in props_missing if c not in given and c not in missing]
        else:
            props, props_missing, extra = read_properties(properties, model, given)
            missing += props_missing
    if missing:
        form = ",".join(f"{c}=..." for c in missing)
        many = len(missing) > 1
        raise ChainError(f"{path}: the constant{'s' if many else ''} {', '.join(missing)} "
                         f"{'have' if many else 'has'} no value; give {'them' if many else 'it'} "
                         f"with --constants {form}")
    unknown = [c for c in given if c not in model.scope.constants]
    if unknown:
        raise ChainError(f"{path}: --constants {constants}: {', '.join(unknown)} is not a constant "
                         "of the model or its properties")
    # the explorer's compiled code (numba) loads with the first model, not with the
    # format registry, which every command imports
    from ladders.solver.chains.explore import Explorer, label_states, to_chain
    program = model.program
    explorer = Explorer(program, max_states)
    explored = explorer.explore(progress)
    n = len(explored.states)
    init = np.zeros(n, dtype=bool)
    init[:explored.initial] = True
    deadlock = np.zeros(n, dtype=bool)
    deadlock[explored.deadlocks] = True
    own = label_states(explorer, explored.states, {**program.labels, **extra})
    masks = {"init": init, "deadlock": deadlock}
    for name, members in own.items():
        mask = np.zeros(n, dtype=bool)
        mask[members] = True
        masks[name] = mask
    questions, targets, refused = [], {}, []
    acted = {name: any(item.action is not None for item in items)
             for name, items in program.rewards.items()}
    for number, prop in enumerate(props):
        try:
            question, added = _question(program.labels, acted, prop, number, explored.initial,
                                        filter_over, unnamed_reward)
        except ChainError as exc:
            refused.append(str(exc))  # this property alone; the others are answered
            continue
        questions.append(question)
        targets.update(added)
    labels = {**own, **label_states(explorer, explored.states, targets, given=masks)}
    name = Path(path).stem + (f" ({constants})" if constants else "")
    explored = dataclasses.replace(explored, rewards={
        reward or unnamed_reward: ids for reward, ids in explored.rewards.items()})
    return Loaded(to_chain(name, path, explored, labels), tuple(questions), refused=tuple(refused))


def _constants_of(properties: str) -> list[str]:
    """The names of a properties file's constants without a value (read without the
    model, for the message that names every missing constant)."""
    from ladders.solver.chains.formats.prism_lang import Parser, _constant, _read

    p = Parser(_read(properties, "properties"), properties)
    out = []
    while p.tok.kind != "end":
        if p.accept("const"):
            tok, _, value = _constant(p)
            if value is None:
                out.append(tok.text)
        else:
            p.i += 1
    return out


def _question(known_labels: Collection[str], rewards: Mapping[str, bool], prop: Property,
              number: int, starts: int, filter_over: FilterOver,
              unnamed_reward: str) -> tuple[Question, dict[str, Expr]]:
    """The :class:`Question` of ``prop`` over a model or chain with the labels
    ``known_labels`` and the reward structures ``rewards`` (by name as the properties
    write it, ``""`` for an unnamed one: whether it has action rewards), and the labels
    to add for it where its state formulas are expressions (by name: the question's
    ``target`` and ``through``)."""
    named = prop.name is not None
    shown = f'property "{prop.name}" ({prop.text})' if named else f"property {prop.text}"
    where = f"{prop.where}: {shown}"
    if prop.states != '"init"':
        raise ChainError(f"{where}: a filter over {prop.states}; filter over \"init\"")
    if prop.function not in FILTERS:
        raise ChainError(f"{where}: filter({prop.function}, ...) is not a value ladders gives; "
                         "use min, max, avg, sum, forall, exists or values")
    reward = None
    shapes = {"P": ("F", "U", "X"), "R": ("F", "C", "I"), "T": ("F",), "S": ("S",)}
    if prop.operator not in shapes:
        raise ChainError(f"{where}: a state formula without P, R or T; {ASK}")
    if prop.shape not in shapes[prop.operator]:
        what = {"U": "an until (U) inside R or T", "X": "next (X) inside R or T",
                "C": "a cumulative reward (C<=k) inside P or T",
                "I": "an instantaneous reward (I=k) inside P or T"}.get(prop.shape, prop.shape)
        raise ChainError(f"{where}: {what}; {ASK}")
    if prop.operator == "R":
        reward = _reward_of(list(rewards), prop.reward, where, unnamed_reward)
    kind = {"P": "reach", "R": "reward", "T": "reward", "S": "steady"}[prop.operator]
    if prop.shape == "X":
        kind = "next"
    elif prop.shape in ("C", "I"):
        kind = "cumulative" if prop.shape == "C" else "instant"
        if kind == "instant" and rewards[prop.reward if prop.reward is not None else
                                         next(iter(rewards))]:
            # the chain keeps a state's action rewards folded into its state reward;
            # Storm counts only the state rewards at step k
            raise ChainError(f"{where}: an instantaneous reward (I=k) of a reward structure with "
                             "action or transition rewards; Storm counts only its state rewards "
                             "there, and the chain holds them folded together: ask it of a "
                             "structure of state rewards")
    elif kind == "reward" and prop.steps is not None:
        raise ChainError(f"{where}: a step bound on F inside R or T; {ASK}")
    compare = prop.bound
    over = filter_over(prop.function, compare, starts, where)
    text = f"{prop.name}: {prop.text}" if named else prop.text
    labels: dict[str, Expr] = {}
    own = prop.name if named else number

    def label_for(formula: Expr | None, written: str, role: str) -> str | None:
        """The label of a state formula: the model's, or one added, named by its text
        (or by its role and the property where that is too long or taken)."""
        if formula is None or (formula.op == "const" and formula.value is True and role == "path"):
            return None
        if formula.op == "label":
            return str(formula.value)
        name = written if 0 < len(written) <= MAX_NAME else f"{role} of {own}"
        if name in known_labels or name in ("init", "deadlock"):
            name = f"{role} of {own}"
        labels[name] = formula
        return name

    target = label_for(prop.right, prop.right_text, "target")
    through = label_for(prop.left, prop.left_text, "path") if prop.shape == "U" else None
    steps = prop.steps if kind in ("reach", "cumulative", "instant") else None
    return Question(kind=kind, target=target, reward=reward, text=text, compare=compare,
                    over=over, through=through, steps=steps), labels


def _reward_of(names: list[str], wanted: str | None, where: str, unnamed: str) -> str:
    """The chain's name of the reward structure ``R{...}`` asks for among ``names``
    (``R`` alone: the model's only one)."""
    if wanted is not None:
        if wanted not in names:
            known = ", ".join(f'"{n}"' for n in names) or "none"
            raise ChainError(f'{where}: no reward structure "{wanted}"; the model\'s: {known}')
        return wanted or unnamed
    if len(names) != 1:
        known = ", ".join(f'"{n}"' for n in names) or "none"
        raise ChainError(f"{where}: R without a name needs a model with one reward structure; "
                         f"this one has {known}: write R{{\"name\"}}")
    return names[0] or unnamed
