"""PRISM properties asked of a chain file (``--properties`` on the chain TOML, PRISM's
explicit ``.tra``/``.lab`` and Storm's DRN), read by the project's own property reader
(:func:`~ladders.solver.chains.formats.prism_lang.read_properties`, the one PRISM and
JANI models use) and made into the same
:class:`~ladders.solver.chains.questions.Question`\\ s:

- the atoms of a state formula are the chain's labels, in quotes (``"goal"``), with
  ``true``, ``false`` and the logical operators ``! & | => <=>``, ``=``, ``!=`` and
  ``? :`` over them (``"a" & !"b"``); a chain has no variables, so a bare name is
  refused with the labels there are; a formula of any length becomes a label (named by
  its text, or ``target of NAME`` where that is longer than a name may be);
- ``R{"name"}`` asks for the chain's own reward ``name`` (TOML ``[rewards.name]``, a
  ``.srew``/``.trew`` reward structure, a DRN reward model); ``R`` alone, the only one;
- the chain's start is a distribution: a plain query (and ``filter(avg, ...)``) is
  answered from it, ``filter(min|max, ..., "init")`` gives the least or greatest over
  its states and ``filter(forall|exists, ...)`` the bound on them;
- ``label "x" = ...;`` and ``const`` with a value in the properties file are read as
  in PRISM (a constant without one is refused: a chain file takes no ``--constants``).

A property that cannot be answered is refused by itself
(:attr:`~ladders.solver.chains.formats.Loaded.refused`); a file that cannot be read
(a syntax error) is refused whole, with its line and column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

import numpy as np

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import ChainError
from ladders.solver.chains.symbolic import Expr
from ladders.solver.exact import mpq


def with_properties(loaded: Loaded, properties: str | None,
                    acted: Collection[str] = ()) -> Loaded:
    """``loaded`` with the questions of the properties file ``properties`` (None: as
    it is), and the labels their state formulas need added to its chain; ``acted``:
    the rewards with action or transition parts, folded into the states' (``I=k`` of
    them is refused, as Storm counts only state rewards there)."""
    if properties is None:
        return loaded
    from ladders.solver.chains.formats.prism import UNNAMED_REWARD, _filter_over
    from ladders.solver.chains.formats.prism_lang import Scope, read_properties
    from ladders.solver.chains.formats.prism_native import _question
    chain = loaded.chain
    scope = Scope(properties)
    scope.labels = set(chain.labels)
    try:
        props, missing, defined = read_properties(properties, scope, {})
    except ChainError as exc:
        if "unknown name" in str(exc):
            quoted = ", ".join('"' + n + '"' for n in sorted(chain.labels)) or "none"
            raise ChainError(f"{exc}; a chain file has no variables: name its labels in quotes "
                             f"({quoted})") from None
        raise
    if missing:
        raise ChainError(f"{properties}: the constant{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no value; "
                         "a chain file takes no --constants: give the value in the properties "
                         "file (const int k = 3;)")
    masks = {name: chain.label_mask(name) for name in chain.labels}
    for name, formula in defined.items():
        masks[name] = _mask(formula, masks, chain.size)
    rewards = {name: name in acted for name in chain.rewards}
    questions, refused, added = [], [], {}

    def loose(function: str, compare: tuple[str, mpq] | None, starts: int,
              where: str) -> str | None:
        # the start is a distribution: a plain query is the value from it, as --target
        # asks; a sum over its states is not Storm's sum over initial states
        if starts > 1 and function == "sum":
            raise ChainError(f"{where}: filter(sum, ...) over a start distribution of "
                             f"{starts:,} states, not a set of initial states; ask "
                             "filter(avg|min|max, ...)")
        return _filter_over(function, compare, 1 if function == "values" else starts, where)

    for number, prop in enumerate(props):
        try:
            question, labels = _question(masks, rewards, prop, number, len(chain.start), loose,
                                         UNNAMED_REWARD)
            for name, formula in labels.items():
                added[name] = _mask(formula, masks, chain.size)
        except ChainError as exc:
            refused.append(str(exc))  # this property alone; the others are answered
            continue
        questions.append(question)
    own = {**{n: np.flatnonzero(m) for n, m in masks.items() if n not in chain.labels},
           **{n: np.flatnonzero(m) for n, m in added.items()}}
    chain = dataclasses.replace(chain, labels={**chain.labels, **own}) if own else chain
    return dataclasses.replace(loaded, chain=chain, questions=tuple(questions),
                               refused=tuple(refused))


def _mask(formula: Expr, masks: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The states where ``formula``, over the labels ``masks``, holds."""
    op = formula.op
    if op == "const":
        if formula.type != "bool":
            raise ChainError(f"a number ({formula.value}) where a chain file's state formula "
                             "needs a label, true or false")
        return np.full(n, bool(formula.value))
    if op == "label":
        return masks[str(formula.value)]
    args = [_mask(a, masks, n) for a in formula.args]
    if op == "not":
        return ~args[0]
    if op in ("&", "and"):
        return args[0] & args[1]
    if op in ("|", "or"):
        return args[0] | args[1]
    if op == "=>":
        return ~args[0] | args[1]
    if op in ("<=>", "="):
        return args[0] == args[1]
    if op == "!=":
        return args[0] != args[1]
    if op == "ite":
        return np.where(args[0], args[1], args[2])
    raise ChainError(f"'{op}' in a chain file's state formula: its atoms are labels")
