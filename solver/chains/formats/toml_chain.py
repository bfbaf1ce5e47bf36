"""ladders' own chain file: a Markov chain written in TOML.

::

    name = "gambler's ruin"
    start = "2"                       # or a distribution: start = { "1" = "1/2", "3" = "1/2" }

    [transitions]                     # state = { next state = probability, ... }
    "1" = { "0" = "2/3", "2" = "1/3" }
    "2" = { "1" = "2/3", "3" = "1/3" }

    [labels]                          # named sets of states, for questions
    broke = ["0"]
    rich = ["3"]

    [rewards.cost]                    # optional state rewards, earned on leaving a state
    "1" = "1"
    "2" = 2

The states are the keys of ``[transitions]`` and every state named as a destination
(a state with no transitions of its own, "0" and "3" above, is made absorbing, with a
note). A row may also be its own table (``[transitions."1"]`` then ``"0" = "2/3"``
lines). Probabilities and rewards are exact: ``"1/6"``, ``"0.25"`` (the exact
decimal), a TOML integer, or an unquoted TOML decimal, read from the file's own digits
(``0.1`` is 1/10, never the float nearest it). Every error names the file and line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import ChainBuilder, ChainError, brief, parse_exact, where
from ladders.solver.exact import mpq

SUFFIXES = (".toml",)
DESCRIPTION = "a chain in TOML (ladders' own chain file: start, [transitions], [labels], [rewards])"
TAKES = ("properties",)

#: The top-level fields of a chain file.
FIELDS = ("name", "start", "transitions", "labels", "rewards")

# a line that opens the [transitions] table, or sets transitions (dotted or inline)
_CLAIM = re.compile(rb"""^[ \t]*(?:\[[ \t]*)?(?:transitions|"transitions"|'transitions')[ \t]*[\].=]""",
                    re.MULTILINE)
# the tokens of one line of TOML, enough to find where each key is written
_TOKEN = re.compile(r"""
    (?P<str>"(?:[^"\\]|\\.)*"|'[^']*')
  | (?P<word>[A-Za-z0-9_+\-.:]+)
  | (?P<punct>[=,{}\[\]])
  | (?P<comment>\#.*)
  | (?P<space>\s+)
  | (?P<other>.)
""", re.VERBOSE)


def claims(path: Path, head: bytes) -> bool:
    """A ``.toml`` file is a chain when it has a ``[transitions]`` table (a board file
    has ``start``, ``end``, ``die`` and ``jumps`` instead)."""
    return _CLAIM.search(head) is not None


class _Float:
    """An unquoted TOML decimal, kept as written (tomllib's ``parse_float`` hook)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _unquote(token: str) -> str:
    if token.startswith("'"):
        return token[1:-1]
    if "\\" not in token:
        return token[1:-1]
    return tomllib.loads(f"k = {token}")["k"]


class KeyLines:
    """Where each key of a TOML text is written: ``line((table, ..., key))``, and where
    each string of an array value is (``value_line(key_path, text)``). A light scan of
    the text (tomllib keeps no positions), exact for the shapes a chain file has:
    tables, dotted keys, inline tables and arrays, across lines."""

    def __init__(self, text: str) -> None:
        self._keys: dict[tuple[str, ...], int] = {}
        self._values: dict[tuple[tuple[str, ...], str], int] = {}
        table: tuple[str, ...] = ()
        depth = 0                       # open arrays of the current value, across lines
        key: tuple[str, ...] = ()       # the key whose value is being read
        for number, raw in enumerate(text.splitlines(), start=1):
            tokens = [(m.lastgroup, m.group()) for m in _TOKEN.finditer(raw)
                      if m.lastgroup not in ("space", "comment")]
            if depth == 0 and tokens and tokens[0] == ("punct", "["):
                parts = [p for kind, tok in tokens if kind in ("str", "word")
                         for p in _key_parts(kind, tok)]
                table = tuple(parts)
                self._keys.setdefault(table, number)
                continue
            prefixes = [table] if depth == 0 else [key[:-1]]
            pending: list[str] = []
            in_value = depth > 0
            for kind, tok in tokens:
                if in_value:
                    if tok == "[":
                        depth += 1
                    elif tok == "]":
                        depth -= 1
                    elif tok == "{" and depth == 0:
                        prefixes.append(key)
                        in_value = False
                    elif kind == "str":
                        self._values.setdefault((key, _unquote(tok)), number)
                    elif tok in (",", "}") and depth == 0:
                        in_value = False
                        if tok == "}" and len(prefixes) > 1:
                            prefixes.pop()
                    continue
                if kind in ("str", "word"):
                    pending.extend(_key_parts(kind, tok))
                elif tok == "=":
                    key = prefixes[-1] + tuple(pending)
                    self._keys.setdefault(key, number)
                    pending = []
                    in_value = True
                elif tok == "}" and len(prefixes) > 1:
                    prefixes.pop()
                elif tok == ",":
                    pending = []

    def line(self, path: tuple[str, ...]) -> int | None:
        """The line of the key ``path`` (tables and keys from the top), or of the
        nearest enclosing key written in the file."""
        while path:
            if path in self._keys:
                return self._keys[path]
            path = path[:-1]
        return None

    def value_line(self, path: tuple[str, ...], value: str) -> int | None:
        """The line of the string ``value`` in the array at key ``path``, else the key's."""
        return self._values.get((path, value)) or self.line(path)


def _key_parts(kind: str | None, token: str) -> list[str]:
    if kind == "str":
        return [_unquote(token)]
    return [p for p in token.split(".") if p]


def _exact(value: Any, at: str, what: str) -> mpq:
    """An exact number from a TOML value: a string (``"1/6"``, ``"0.25"``), an integer,
    or an unquoted decimal as written."""
    if isinstance(value, bool):
        raise ChainError(f"{at}: {what} is {str(value).lower()}; write a number such as \"1/6\"")
    if isinstance(value, int):
        return mpq(value)
    text = value.text.replace("_", "") if isinstance(value, _Float) else value
    if not isinstance(text, str):
        raise ChainError(f"{at}: {what} is not a number; write one such as \"1/6\" or \"0.25\"")
    try:
        return parse_exact(text)
    except ValueError as exc:
        fix = " (quote it as a fraction, e.g. \"1/6\")" if isinstance(value, _Float) else ""
        raise ChainError(f"{at}: {what}: {exc}{fix}") from None


def _state_name(value: Any, at: str, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    shown = value.text if isinstance(value, _Float) else str(value)
    raise ChainError(f"{at}: {what} {shown[:40]!r} is not a state name; write it as a "
                     "string, e.g. \"2\"")


def load(path: str, properties: str | None = None) -> Loaded:
    """The chain in the TOML file ``path`` (see the module docstring), checked, with the
    questions of the properties file ``properties``
    (:mod:`~ladders.solver.chains.formats.chain_properties`)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ChainError(f"{path}: not UTF-8 text (byte {exc.start:,}); a chain file is TOML, "
                         "which is UTF-8") from None
    try:
        data = tomllib.loads(text, parse_float=_Float)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        twice = re.search(r"Duplicate|overwrite", str(exc))
        fix = "; give each state, transition, label and reward once" if twice else ""
        raise ChainError(f"{where(path, int(line.group(1)) if line else None)}: not valid TOML "
                         f"({exc}){fix}") from None
    except RecursionError:
        raise ChainError(f"{path}: tables or arrays nested too deeply; a chain file needs "
                         "two levels") from None
    lines = KeyLines(text)

    def at(*key: str) -> str:
        return where(path, lines.line(key))

    unknown = [key for key in data if key not in FIELDS]
    if unknown:
        raise ChainError(f"{at(unknown[0])}: unknown field {unknown[0][:40]!r}; the fields of a "
                         f"chain file are {', '.join(FIELDS)}")
    name = data.get("name", Path(path).stem)
    if not isinstance(name, str):
        raise ChainError(f"{at('name')}: name is not text; write name = \"my chain\"")
    transitions = data.get("transitions")
    if not isinstance(transitions, Mapping) or not transitions:
        raise ChainError(f"{at('transitions')}: no transitions; add a [transitions] table with "
                         "lines such as \"a\" = { \"b\" = \"1/2\", \"c\" = \"1/2\" }")
    builder = ChainBuilder(name, path)
    for source in transitions:
        builder.state(source, lines.line(("transitions", source)))
    for source, row in transitions.items():
        if not isinstance(row, Mapping):
            raise ChainError(f"{at('transitions', source)}: the transitions from {source[:40]!r} "
                             "are not a table; write them as "
                             f"{source[:40]!r} = {{ \"next\" = \"1/2\", ... }}")
        i = builder.state(source)
        for target, value in row.items():
            line = lines.line(("transitions", source, target))
            j = builder.state(target, line)
            p = _exact(value, where(path, line), f"the probability from {source[:40]!r} to "
                       f"{target[:40]!r}")
            builder.transition(i, j, p, line)
    _start(builder, data, lines, path, next(iter(transitions)))
    labels = data.get("labels", {})
    if not isinstance(labels, Mapping):
        raise ChainError(f"{at('labels')}: labels is not a table; write [labels] then lines "
                         "such as goal = [\"3\"]")
    for label, members in labels.items():
        members = [members] if isinstance(members, (str, int)) else members
        if not isinstance(members, list):
            raise ChainError(f"{at('labels', label)}: the label {label[:40]!r} is not a list of "
                             "states; write e.g. goal = [\"3\", \"4\"]")
        found = []
        for member in members:
            state = _state_name(member, at("labels", label), f"the label {label[:40]!r} has")
            found.append(_known(builder, state, where(path, lines.value_line(("labels", label), state)),
                                f"the label {label[:40]!r}"))
        builder.label(label, found, lines.line(("labels", label)))
    rewards = data.get("rewards", {})
    if not isinstance(rewards, Mapping):
        raise ChainError(f"{at('rewards')}: rewards is not a table; write [rewards.NAME] then "
                         "lines such as \"a\" = \"1\"")
    for reward, values in rewards.items():
        if not isinstance(values, Mapping):
            raise ChainError(f"{at('rewards', reward)}: the reward {reward[:40]!r} is not a table "
                             f"of state = value; write [rewards.{reward[:40]}] then \"a\" = \"1\"")
        for state, value in values.items():
            line = lines.line(("rewards", reward, state))
            i = _known(builder, state, where(path, line), f"the reward {reward[:40]!r}")
            builder.reward(reward, i, _exact(value, where(path, line),
                                             f"the reward {reward[:40]!r} of {state[:40]!r}"), line)
    from ladders.solver.chains.formats.chain_properties import with_properties
    return with_properties(Loaded(builder.build()), properties)


def _known(builder: ChainBuilder, state: str, at: str, what: str) -> int:
    """The index of ``state``, or an error saying that ``what`` names a state the
    transitions never mention."""
    try:
        return builder.known(state)
    except ChainError:
        raise ChainError(f"{at}: {what} names the state {state[:60]!r}, which no transition "
                         "mentions; fix the name or give the state its transitions") from None


def _start(builder: ChainBuilder, data: Mapping[str, Any], lines: KeyLines, path: str,
           first: str) -> None:
    """The start: one state's name, or a table of state = probability (``first``: the
    first state, for the message when there is none)."""
    start = data.get("start")
    line = lines.line(("start",))
    if start is None:
        raise ChainError(f"{path}: no start; add e.g. start = \"{first[:40]}\" (or a "
                         "distribution: start = { \"a\" = \"1/2\", \"b\" = \"1/2\" })")
    if isinstance(start, Mapping):
        total = mpq(0)
        for state, value in start.items():
            at = where(path, lines.line(("start", state)))
            p = _exact(value, at, f"the start probability of {state[:40]!r}")
            total += p
            builder.start_at(_known(builder, state, at, "the start"), p, lines.line(("start", state)))
        if total != 1:
            raise ChainError(f"{where(path, line)}: the start probabilities sum to "
                             f"{brief(total)}, not 1; make them sum to exactly 1")
        return
    state = _state_name(start, where(path, line), "start =")
    builder.start_at(_known(builder, state, where(path, line), "start"), mpq(1), line)
