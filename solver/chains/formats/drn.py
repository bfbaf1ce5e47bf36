"""Storm's explicit DRN format (``.drn``), as ``storm --exportbuild model.drn`` and
``stormpy.io.export_to_drn`` write it::

    // Exported by storm
    @type: DTMC
    @value_type: rational
    @parameters

    @reward_models
    flips
    @nr_states
    3
    @nr_choices
    3
    @model
    state 0 [1] init
        action 0
            1 : 1/2
            2 : 1/2
    state 1 [0] "six" done
        action 0 [0]
            1 : 1
    ...

States are named by their numbers; labels follow the state (quoted when they hold
spaces); the start is the state labelled ``init`` (several are refused: Storm answers
for each of them, not for a uniform start). ``[..]`` after a state or an action gives
one value per reward model of ``@reward_models`` (``rew0``, ``rew1``, ... past its
end, as Storm names them); a DTMC's one action a state makes its action reward part of
the state's reward, earned on leaving it. ``@placeholders`` (``$name : value``) are
read. Values are exact (``1/3``, ``0.25``): a file of ``@value_type: double`` has
rounded rows that miss 1, and is refused with that said. MDPs, CTMCs, Markov automata,
POMDPs, games, parametric and interval models are refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import (MAX_STATES, ChainBuilder, ChainError, ascii_digits,
                                         brief, parse_exact, where)
from ladders.solver.exact import mpq

SUFFIXES = (".drn",)
DESCRIPTION = "Storm's DRN model (@type: DTMC, exact values)"
TAKES = ("properties",)

#: What is said of the model types ladders does not answer.
REFUSED = {
    "MDP": "a nondeterministic model (MDP): ladders answers Markov chains (DTMCs)",
    "POMDP": "a partially observable nondeterministic model (POMDP): ladders answers Markov "
             "chains (DTMCs)",
    "CTMC": "a continuous time Markov chain (CTMC): ladders answers discrete-time Markov chains "
            "(DTMCs)",
    "MA": "a Markov automaton (MA), nondeterministic and continuous time: ladders answers "
          "discrete-time Markov chains (DTMCs)",
    "SMG": "a stochastic game (SMG): ladders answers Markov chains (DTMCs)",
    "S2PG": "a stochastic two-player game (S2PG): ladders answers Markov chains (DTMCs)",
}

# a label: quoted (may hold spaces), or a run of other characters (Storm's rule)
_LABEL = re.compile(r'"([^"]+?)"(?=\s|$|")|([^\s"]+)')


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for number, raw in enumerate(fh, start=1):
                yield number, raw.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise ChainError(f"{path}: not text (byte {exc.start:,} is not UTF-8)") from None


class _Header:
    """What the lines before ``@model`` say."""

    def __init__(self) -> None:
        self.type: str | None = None
        self.value_type = "rational"
        self.states: int | None = None
        self.choices: tuple[int, int] | None = None     # @nr_choices: (its line, the count)
        self.rewards: list[str] = []
        self.placeholders: dict[str, mpq] = {}


#: Fewest bytes a state takes in the model (``"state 0\n"``): a count far beyond the
#: file is refused before millions of states are made.
_STATE_BYTES = 8
#: Declared states up to this many are made and then counted (the error names what
#: the file gives).
_COUNT_FIRST = 100_000


def _header(lines: Iterator[tuple[int, str]], path: str) -> _Header:
    """Read the header up to ``@model``, refusing the models ladders does not answer."""
    h = _Header()

    def following(what: str, number: int) -> str:
        nxt = next(lines, None)
        if nxt is None:
            raise ChainError(f"{where(path, number)}: {what} without the line that gives it")
        return nxt[1].strip()

    placeholders = False
    for number, raw in lines:
        line = raw.strip()
        at = where(path, number)
        if not line or line.startswith("//"):
            continue
        if placeholders and line.startswith("$"):       # $name : value
            name, sep, value = line[1:].partition(":")
            if not sep:
                raise ChainError(f"{at}: ':' missing in the placeholder {line[:60]!r}")
            h.placeholders[name.strip()] = _value(value.strip(), at, h, line[:40])
            continue
        placeholders = line == "@placeholders"
        if placeholders:
            continue
        if line.startswith("@type:"):
            h.type = line[6:].strip()
            if h.type != "DTMC":
                raise ChainError(f"{at}: @type: {h.type[:20]} is "
                                 f"{REFUSED.get(h.type, 'not a model type ladders reads (DTMC)')}")
        elif line.startswith("@value_type:"):
            h.value_type = line[12:].strip()
            if h.value_type not in ("rational", "double"):
                raise ChainError(f"{at}: @value_type: {h.value_type[:20]} is not a model with "
                                 "exact probabilities; ladders reads rational (or double) values")
        elif line == "@parameters":
            names = following("@parameters", number)
            if names:
                raise ChainError(f"{at}: a parametric model (parameters {names[:60]}); give the "
                                 "parameters values and export it again")
        elif line == "@reward_models":
            h.rewards = following("@reward_models", number).split()
        elif line in ("@nr_states", "@nr_choices"):
            count = following(line, number)
            if not ascii_digits(count):
                raise ChainError(f"{where(path, number + 1)}: {line} is {count[:40]!r}, not a "
                                 "number")
            if line == "@nr_choices":
                h.choices = (number + 1, int(count))
            if line == "@nr_states":
                h.states = int(count)
                if h.states > MAX_STATES:
                    raise ChainError(f"{where(path, number + 1)}: {h.states:,} states; the limit "
                                     f"of one chain is {MAX_STATES:,}")
                size = Path(path).stat().st_size
                if h.states > _COUNT_FIRST and h.states * _STATE_BYTES > size:
                    raise ChainError(f"{where(path, number + 1)}: @nr_states declares "
                                     f"{h.states:,} states, and the file's {size:,} bytes hold "
                                     f"at most {size // _STATE_BYTES:,}; the file is cut short "
                                     "or the count is wrong")
        elif line == "@model":
            if h.type is None or h.states is None:
                raise ChainError(f"{at}: @model before {'@type' if h.type is None else '@nr_states'}"
                                 "; a DRN file declares both first")
            return h
        else:
            raise ChainError(f"{at}: unexpected line {line[:60]!r} before @model")
    raise ChainError(f"{path}: no @model line; not a DRN file")


def _value(text: str, at: str, h: _Header, what: str) -> mpq:
    if text.startswith("$"):
        if text[1:] not in h.placeholders:
            raise ChainError(f"{at}: the placeholder {text[:40]} is not defined in @placeholders")
        return h.placeholders[text[1:]]
    try:
        return parse_exact(text)
    except ValueError as exc:
        raise ChainError(f"{at}: {what}: {exc}") from None


def load(path: str, properties: str | None = None) -> Loaded:
    """The DTMC in the DRN file ``path`` (see the module docstring), checked, with the
    questions of the properties file ``properties``
    (:mod:`~ladders.solver.chains.formats.chain_properties`)."""
    acted: set[str] = set()  # the rewards with an action part
    lines = _lines(Path(path))
    h = _header(lines, path)
    builder = ChainBuilder(Path(path).stem, path)
    builder.states(str(i) for i in range(h.states))
    labels: dict[str, list[int]] = {}
    label_lines: dict[str, int] = {}
    sums: dict[int, mpq] = {}
    row_line: dict[int, int] = {}
    state, action = -1, None
    actions = 0
    empty: int | None = None        # the line of an action with no transition yet
    for number, raw in lines:
        line = raw.strip()
        at = where(path, number)
        if not line or line.startswith("//"):
            continue
        if line.startswith("state "):
            _no_empty_action(path, empty, state)
            state, action, empty = state + 1, None, None
            fields = line[6:].split(None, 1)
            rest = fields[1] if len(fields) > 1 else ""
            if fields[0] != str(state):
                raise ChainError(f"{at}: state {fields[0][:20]} where state {state} was due; a DRN "
                                 "file lists its states 0, 1, ... in order")
            if state >= h.states:
                raise ChainError(f"{at}: a state {state} beyond @nr_states ({h.states:,})")
            rest = _rewards(rest, at, h, builder, state, number)
            for quoted, bare in _LABEL.findall(rest):
                label = quoted or bare
                labels.setdefault(label, []).append(state)
                label_lines.setdefault(label, number)
        elif line.startswith("action "):
            if state < 0:
                raise ChainError(f"{at}: an action before the first state")
            if action is not None:
                raise ChainError(f"{at}: state {state} has a second action (the first at line "
                                 f"{action}); a DTMC has one, {REFUSED['MDP']}")
            action = empty = number
            actions += 1
            fields = line[7:].split(None, 1)
            _rewards(fields[1] if len(fields) > 1 else "", at, h, builder, state, number, acted)
        else:
            target, sep, value = line.partition(":")
            if not sep or not ascii_digits(target.strip()):
                raise ChainError(f"{at}: expected 'target : probability', found {line[:60]!r}")
            if state < 0:
                raise ChainError(f"{at}: a transition before the first state")
            j = int(target)
            if j >= h.states:
                raise ChainError(f"{at}: the target {j} is not a state; @nr_states is "
                                 f"{h.states:,} (0 to {h.states - 1:,})")
            p = _value(value.strip(), at, h, f"the probability from {state} to {j}")
            builder.transition(state, j, p, number)
            empty = None
            sums[state] = sums.get(state, mpq(0)) + p
            row_line.setdefault(state, number)
    _no_empty_action(path, empty, state)
    if state + 1 != h.states:
        raise ChainError(f"{path}: @nr_states declares {h.states:,} states, the model lists "
                         f"{state + 1:,}; the file is cut short: export it again")
    if h.choices is not None and actions and actions != h.choices[1]:
        raise ChainError(f"{where(path, h.choices[0])}: @nr_choices declares {h.choices[1]:,} "
                         f"choices, the model lists {actions:,} actions; export it again")
    for i, total in sums.items():
        if total != 1:
            hint = ("; the file's values are doubles (@value_type: double): export the model "
                    "built with exact values (stormpy.build_model[stormpy.Rational], storm --exact)"
                    if h.value_type == "double" else "; make them sum to exactly 1")
            raise ChainError(f"{where(path, row_line[i])}: the transitions from state {i} sum to "
                             f"{brief(total)}, not 1{hint}")
    for label, members in labels.items():
        builder.label(label, members, label_lines[label])
    starts = labels.get("init", [])
    if not starts:
        raise ChainError(f"{path}: no state is labelled init; add init after the start state")
    if len(starts) > 1:
        shown = ", ".join(str(i) for i in starts[:5]) + (", ..." if len(starts) > 5 else "")
        raise ChainError(f"{where(path, label_lines['init'])}: {len(starts):,} states are "
                         f"labelled init ({shown}); Storm answers for each of them, not for a "
                         "uniform start: keep one init state, or write the chain in TOML with a "
                         "start distribution")
    builder.start_at(starts[0], mpq(1))
    from ladders.solver.chains.formats.chain_properties import with_properties
    return with_properties(Loaded(builder.build()), properties, acted)


def _no_empty_action(path: str, empty: int | None, state: int) -> None:
    """Refuse an action without transitions (``empty``: its line): Storm gives even a
    deadlock a self-loop, so the file was cut short after it."""
    if empty is not None:
        raise ChainError(f"{where(path, empty)}: the action of state {state} has no transitions; "
                         "a file cut short? export it again")


def _rewards(rest: str, at: str, h: _Header, builder: ChainBuilder, state: int,
             line: int, earned: set[str] | None = None) -> str:
    """Add the ``[r0, r1, ...]`` at the start of ``rest`` to ``state``'s rewards (one per
    reward model, in @reward_models' order); the text after them. ``earned``: where given,
    the names of the rewards with a value here are added to it."""
    if not rest.startswith("["):
        return rest
    end = rest.find("]")
    if end < 0:
        raise ChainError(f"{at}: ']' missing after the rewards {rest[:40]!r}")
    texts = rest[1:end].split(",")
    if len(texts) != len(h.rewards):
        raise ChainError(f"{at}: {len(texts)} reward value(s) for state {state}, and @reward_models "
                         f"declares {len(h.rewards)} ({' '.join(h.rewards)[:60] or 'none'}); give "
                         "one value for each")
    for name, text in zip(h.rewards, texts):
        value = _value(text.strip(), at, h, f"the reward {name!r} of state {state}")
        if value:
            builder.reward(name, state, value, line)
            if earned is not None:
                earned.add(name)
    return rest[end + 1:].strip()
