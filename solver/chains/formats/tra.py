"""PRISM's and Storm's explicit model files: ``.tra`` with the ``.lab`` beside it.

PRISM writes them with ``-exportmodel model.tra,lab,srew,trew`` (or ``-exporttrans``,
``-exportlabels``)::

    # Transitions (DTMC)         <- optional comment lines; PRISM 4.9 names the type
    4 5                          <- states transitions
    0 1 1/2                      <- from to probability (a decimal or a/b), then an
    0 2 1/2                         optional action name
    1 3 1
    2 2 1
    3 3 1

    0="init" 1="deadlock" 2="goal"        (model.lab: label indices, then state: labels)
    0: 0
    3: 2

Storm's own explicit files start with the model type instead of the counts (``dtmc``)
and declare the labels between ``#DECLARATION`` and ``#END`` (then ``3 goal`` lines);
both are read. States are named by their numbers. The start is the state labelled
``init`` (state 0 without a ``.lab``, as PRISM has it); several are refused, since
PRISM answers for the first of them and Storm for each, never for a uniform start.
Rewards come from ``model.srew`` (``state reward`` lines) and ``model.trew`` (``from to
reward`` lines, folded into the source's state reward as ``P(i, j) r(i, j)``) beside
the ``.tra``, named by PRISM's ``# Reward structure "name"`` line (else ``reward``).

Values are read exactly (:func:`~ladders.solver.chains.model.parse_exact`), so a file
exported with rounded decimals (``0.3333333333333333``) has rows that miss 1; export it
with exact values instead. MDPs (a ``states choices transitions`` header or ``mdp``)
and continuous-time chains (``ctmc``, ``ma``, or rates above 1) are refused by name.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import (MAX_STATES, MAX_TRANSITIONS, ChainBuilder, ChainError,
                                         ascii_digits, brief, check_name, parse_exact,
                                         where)
from ladders.solver.exact import mpq

SUFFIXES = (".tra",)
DESCRIPTION = "PRISM's or Storm's explicit model files (.tra, with .lab, .srew, .trew beside it)"
TAKES = ("properties",)

#: What is said of the model types ladders does not answer.
REFUSED = {
    "mdp": "a nondeterministic model (MDP): ladders answers Markov chains (DTMCs)",
    "pomdp": "a partially observable nondeterministic model (POMDP): ladders answers Markov "
             "chains (DTMCs)",
    "ctmc": "a continuous time Markov chain (CTMC): ladders answers discrete-time Markov chains "
            "(DTMCs)",
    "ma": "a Markov automaton (MA), nondeterministic and continuous time: ladders answers "
          "discrete-time Markov chains (DTMCs)",
    "ctmdp": "a continuous-time MDP: ladders answers discrete-time Markov chains (DTMCs)",
}

_TYPE_HEADER = re.compile(r"#\s*Transitions\s*\((\w+)\)")
_REWARD_NAME = re.compile(r'#\s*Reward structure\s*"([^"]*)"')
_PRISM_LABEL = re.compile(r'(\d+)="([^"]*)"')


def _records(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """``(line number, line, tokens)`` of every line of ``path`` that is not blank."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for number, raw in enumerate(fh, start=1):
                tokens = raw.split()
                if tokens:
                    yield number, raw.strip(), tokens
    except UnicodeDecodeError as exc:
        raise ChainError(f"{path}: not text (byte {exc.start:,} is not UTF-8)") from None
    except OSError as exc:
        raise ChainError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def _int(token: str, at: str, what: str) -> int:
    if not ascii_digits(token):
        raise ChainError(f"{at}: {what} {token[:40]!r} is not a state number (0, 1, ...)")
    return int(token)


def _value(token: str, at: str, what: str) -> mpq:
    try:
        return parse_exact(token)
    except ValueError as exc:
        raise ChainError(f"{at}: {what}: {exc}") from None


def _reward(token: str, at: str, what: str) -> mpq:
    """A reward, checked here so that the message names the rewards file."""
    value = _value(token, at, what)
    if value < 0:
        raise ChainError(f"{at}: {what} is {value}, negative; rewards here are at least 0")
    return value


class _States:
    """The builder's states ``"0" .. "n-1"``, added as the file names them."""

    def __init__(self, builder: ChainBuilder, declared: int | None, source: str) -> None:
        self.builder, self.declared, self.source = builder, declared, source

    def __call__(self, k: int, line: int) -> int:
        if self.declared is not None and k >= self.declared:
            raise ChainError(f"{where(self.source, line)}: no state {k}; the header declares "
                             f"{self.declared:,} states (0 to {self.declared - 1:,})")
        while self.builder.size <= k:
            self.builder.state(str(self.builder.size), line)
        return k


def load(path: str, properties: str | None = None) -> Loaded:
    """The chain in the explicit files ``path`` (``.tra``) and those beside it (see the
    module docstring), checked, with the questions of the properties file
    ``properties`` (:mod:`~ladders.solver.chains.formats.chain_properties`)."""
    tra = Path(path)
    builder = ChainBuilder(tra.stem, path)
    records = _records(tra)
    header, first = _header(records, path)
    declared = None if header is None else header[0]
    states = _States(builder, declared, path)
    trew = _transition_rewards(tra.with_suffix(".trew"), declared is not None)
    acted = {name for name, _, _ in trew.values()}  # rewards with a transition part
    given = 0
    sums: dict[int, mpq] = {}
    row_line: dict[int, int] = {}
    initial: list[tuple[int, int]] = []
    pending = [first] if first is not None else []
    for number, _, tokens in itertools.chain(pending, records):
        at = where(path, number)
        if tokens[0].startswith("#"):
            continue
        if tokens[0] == "-":               # PRISM 4.9: an initial state, "- state ..."
            initial.append((_int(tokens[1] if len(tokens) > 1 else "", at, "the initial state"),
                            number))
            continue
        if len(tokens) not in (3, 4) or (len(tokens) == 4 and declared is None):
            raise ChainError(f"{at}: expected 'from to probability', found {len(tokens)} "
                             f"fields{_mdp_hint(tokens)}")
        i = states(_int(tokens[0], at, "the source"), number)
        j = states(_int(tokens[1], at, "the target"), number)
        p = _value(tokens[2], at, f"the probability from {i} to {j}")
        if p > 1:
            raise ChainError(f"{at}: the value {tokens[2][:40]} from {i} to {j} is above 1: a rate, "
                             f"so this is {REFUSED['ctmc']}")
        builder.transition(i, j, p, number)
        given += 1
        sums[i] = sums.get(i, mpq(0)) + p
        row_line.setdefault(i, number)
        r = trew.pop((i, j), None)
        if r is not None:
            builder.reward(r[0], i, p * r[1], r[2])
    if header is not None:
        _check_count(path, header[2], "transitions", header[1], given)
        states(declared - 1, 1)
    if trew:
        (i, j), (_, _, line) = next(iter(trew.items()))
        raise ChainError(f"{where(str(tra.with_suffix('.trew')), line)}: a reward for the "
                         f"transition from {i} to {j}, which the .tra does not have")
    for i, total in sums.items():
        if total != 1:
            raise ChainError(f"{where(path, row_line[i])}: the transitions from state {i} sum to "
                             f"{brief(total)}, not 1{_sum_hint(total)}")
    _state_rewards(tra.with_suffix(".srew"), declared is not None, builder)
    note = _labels(tra.with_suffix(".lab"), builder, states, initial, path)
    chain = builder.build()
    if note:
        chain = dataclasses.replace(chain, notes=chain.notes + (note,))
    from ladders.solver.chains.formats.chain_properties import with_properties
    return with_properties(Loaded(chain), properties, acted)


def _mdp_hint(tokens: list[str]) -> str:
    return (f": 'state choice to probability' is {REFUSED['mdp']}" if len(tokens) in (4, 5)
            else "")


def _sum_hint(total: mpq) -> str:
    if total > 1:
        return f"; if these are rates, this is {REFUSED['ctmc']}"
    if abs(total - 1) < mpq(1, 10**9):
        return ("; the values look rounded: export the model with exact values "
                "(PRISM -exact, or Storm's DRN of an exact build)")
    return "; make them sum to exactly 1"


def _header(records: Iterator[tuple[int, str, list[str]]],
            path: str) -> tuple[tuple[int, int, int] | None, tuple[int, str, list[str]] | None]:
    """The declared numbers of states and transitions and the header's line (PRISM's
    ``states transitions``; None for Storm's files, which give the type instead), and
    the first transition line when the file has no header. Models other than DTMCs
    are refused here by name."""
    for number, line, tokens in records:
        at = where(path, number)
        if tokens[0].startswith("#"):
            m = _TYPE_HEADER.match(line)
            if m and m.group(1).lower() != "dtmc":
                raise ChainError(f"{at}: {REFUSED.get(m.group(1).lower(), m.group(1))}")
            continue
        if len(tokens) == 1 and not ascii_digits(tokens[0]):
            kind = tokens[0].lower()
            if kind == "dtmc":
                return None, None
            raise ChainError(f"{at}: {REFUSED.get(kind, f'an unknown model type {kind[:20]!r}')}")
        if len(tokens) == 2 and all(ascii_digits(t) for t in tokens):
            n, m = int(tokens[0]), int(tokens[1])
            if n > MAX_STATES:
                raise ChainError(f"{at}: {n:,} states; the limit of one chain is {MAX_STATES:,}")
            if m > MAX_TRANSITIONS:
                raise ChainError(f"{at}: {m:,} transitions; the limit of one chain is "
                                 f"{MAX_TRANSITIONS:,}")
            _plausible(path, at, n, m)
            return (n, m, number), None
        if len(tokens) in (3, 4) and all(ascii_digits(t) for t in tokens) and _counts(tokens):
            raise ChainError(f"{at}: the header '{line[:60]}' (states choices transitions) is of "
                             f"{REFUSED['mdp' if len(tokens) == 3 else 'pomdp']}")
        if len(tokens) == 3:
            return None, (number, line, tokens)   # Storm's files may omit the type
        raise ChainError(f"{at}: expected the header 'states transitions' (PRISM) or the model "
                         f"type 'dtmc' (Storm), found {line[:60]!r}")
    raise ChainError(f"{path}: no transitions; the file is empty")


#: Fewest bytes a transition line takes (``"0 1 1\n"``).
_LINE_BYTES = 6
#: Declared counts up to this size are read and then counted (the error names what
#: the file gives); beyond, a header the file cannot hold is refused before reading.
_COUNT_FIRST = 100_000


def _plausible(path: str, at: str, n: int, m: int) -> None:
    """Refuse at once a header that declares far more than the file can hold (a
    40-byte file declaring 20 million states would otherwise cost minutes and
    gigabytes before its count is found wrong): ``m`` transition lines need
    :data:`_LINE_BYTES` bytes each, and they name at most ``2 m`` states (a chain of
    one state may have none)."""
    if max(n, m) <= _COUNT_FIRST:
        return
    size = Path(path).stat().st_size
    if m * _LINE_BYTES > size:
        raise ChainError(f"{at}: the header declares {m:,} transitions, and the file's {size:,} "
                         f"bytes hold at most {size // _LINE_BYTES:,}; the file is cut short or "
                         "the header is wrong")
    if n > max(2 * m, 1):
        raise ChainError(f"{at}: the header declares {n:,} states, and its {m:,} transitions "
                         f"name at most {max(2 * m, 1):,}; correct the header")


def _check_count(path: str, line: int, what: str, declared: int, given: int) -> None:
    """A header's count against the lines the file holds: a truncated file (a copy
    cut short, a disk that filled) would otherwise read as a chain whose missing rows
    are absorbing states."""
    if declared != given:
        state = "cut short" if given < declared else "longer than its header"
        raise ChainError(f"{where(path, line)}: the header declares {declared:,} {what} and the "
                         f"file gives {given:,}; the file is {state}: export it again")


def _counts(tokens: list[str]) -> bool:
    """Whether integers read as PRISM's ``states choices transitions [observations]``
    (each count at least the one before) rather than a first transition."""
    n, c, m = (int(t) for t in tokens[:3])
    return 1 <= n <= c <= m


def _reward_name(line: str, name: str) -> str:
    m = _REWARD_NAME.match(line)
    return m.group(1) if m and m.group(1) else name


def _transition_rewards(path: Path, counted: bool) -> dict[tuple[int, int], tuple[str, mpq, int]]:
    """``(i, j) -> (reward name, r(i, j), line)`` from a ``.trew`` file, if there is one
    (``counted``: PRISM's, whose first line is ``states transitions``)."""
    if not path.is_file():
        return {}
    name, found, header = "reward", {}, counted
    count: tuple[int, int] | None = None     # PRISM's header: (line, entries declared)
    for number, line, tokens in _records(path):
        at = where(str(path), number)
        if tokens[0].startswith("#"):
            name = _reward_name(line, name)
            continue
        if header or (len(tokens) == 1 and not ascii_digits(tokens[0])):
            if header:
                count = _declared_entries(tokens, number, at, "'states transitions'")
            header = False
            continue
        if len(tokens) != 3:
            raise ChainError(f"{at}: expected 'from to reward', found {len(tokens)} fields")
        i, j = _int(tokens[0], at, "the source"), _int(tokens[1], at, "the target")
        if (i, j) in found:
            raise ChainError(f"{at}: a second reward for the transition from {i} to {j} (first "
                             f"at line {found[(i, j)][2]}); give each once")
        found[(i, j)] = (check_name(name, "reward", at),
                         _reward(tokens[2], at, f"the reward of {i} -> {j}"), number)
    if count is not None:
        _check_count(str(path), count[0], "rewards", count[1], len(found))
    return found


def _declared_entries(tokens: list[str], number: int, at: str, form: str) -> tuple[int, int]:
    """The line and the entry count of a reward file's PRISM header (``states
    entries``)."""
    if len(tokens) != 2 or not all(ascii_digits(t) for t in tokens):
        raise ChainError(f"{at}: expected the header {form}, found {' '.join(tokens)[:60]!r}")
    return number, int(tokens[1])


def _state_rewards(path: Path, counted: bool, builder: ChainBuilder) -> None:
    """The state rewards of a ``.srew`` file beside the ``.tra``, if there is one."""
    if not path.is_file():
        return
    name, header, seen = "reward", counted, {}
    count: tuple[int, int] | None = None
    for number, line, tokens in _records(path):
        at = where(str(path), number)
        if tokens[0].startswith("#"):
            name = _reward_name(line, name)
            continue
        if header:
            count = _declared_entries(tokens, number, at, "'states rewards'")
            header = False
            continue
        if len(tokens) != 2:
            raise ChainError(f"{at}: expected 'state reward', found {len(tokens)} fields")
        i = _int(tokens[0], at, "the state")
        if i >= builder.size:
            raise ChainError(f"{at}: no state {i}; the .tra has {builder.size:,} states")
        if i in seen:
            raise ChainError(f"{at}: a second reward for state {i} (first at line {seen[i]}); "
                             "give each once")
        seen[i] = number
        builder.reward(check_name(name, "reward", at), i,
                       _reward(tokens[1], at, f"the reward of state {i}"), number)
    if count is not None:
        _check_count(str(path), count[0], "rewards", count[1], len(seen))


def _labels(path: Path, builder: ChainBuilder, states: _States,
            initial: list[tuple[int, int]], tra: str) -> str | None:
    """The labels of the ``.lab`` file (PRISM's or Storm's) and the start; a note where
    the start is state 0 for want of an ``init`` label."""
    if path.exists() and not path.is_file():
        raise ChainError(f"{path}: not a regular file; the labels of {Path(tra).name} are a "
                         ".lab file beside it")
    members: dict[str, list[int]] = {}
    lines: dict[str, int] = {}          # label -> the line declaring it
    names: dict[str, str] = {}          # how the file refers to a label -> its name
    mode = "header" if path.is_file() else "absent"
    for number, line, tokens in (_records(path) if path.is_file() else ()):
        at = where(str(path), number)
        if mode == "header":
            if tokens[0] == "#DECLARATION":          # Storm: the names, up to #END
                mode, tokens = "declaring", tokens[1:]
            elif tokens[0].startswith("#"):
                continue
            else:                                    # PRISM: 0="init" 1="deadlock" ...
                names = dict(_PRISM_LABEL.findall(line))
                if not names:
                    raise ChainError(f"{at}: expected the label names ('0=\"init\" 1=\"goal\"'), "
                                     f"found {line[:60]!r}")
                lines = {check_name(v, "label", at): number for v in names.values()}
                mode = "states"
                continue
        if mode == "declaring":
            for t in tokens:
                if t == "#END":
                    mode = "states"
                    break
                names[t], lines[t] = check_name(t, "label", at), number
            continue
        if tokens[0].startswith("#"):
            continue
        i = _int(tokens[0].rstrip(":"), at, "the state")
        if i >= builder.size:
            raise ChainError(f"{at}: no state {i}; the .tra has {builder.size:,} states")
        for t in tokens[1:]:
            if t not in names:
                known = " ".join(sorted(names))
                raise ChainError(f"{at}: the label {t[:40]!r} is not declared (the labels: "
                                 f"{known[:200]})")
            members.setdefault(names[t], []).append(i)
    if mode == "declaring":
        raise ChainError(f"{path}: #DECLARATION without #END; list the labels between them")
    for label in lines:
        builder.label(label, members.get(label, []), lines[label])
    starts = sorted(set(members.get("init", []))) if "init" in lines else None
    if initial:
        listed = sorted({i for i, _ in initial})
        if starts is not None and listed != starts:
            raise ChainError(f"{where(tra, initial[0][1])}: the initial states here ({listed[:5]}) "
                             f"are not those labelled init in {path.name} ({starts[:5]})")
        starts = listed
    note = None
    if starts is None:
        starts = [states(0, 1)]
        why = (f"no {path.name} beside {Path(tra).name}: no labels" if not path.is_file()
               else f"{path.name} labels no state init")
        note = f"{why}, so the start is state 0 (as PRISM has it)"
    if not starts:
        raise ChainError(f"{path}: no state is labelled init; label the start state init")
    if len(starts) > 1:
        shown = ", ".join(str(i) for i in starts[:5]) + (", ..." if len(starts) > 5 else "")
        raise ChainError(f"{path}: {len(starts):,} states are labelled init ({shown}); PRISM "
                         "answers for the first of them and Storm for each, never for a uniform "
                         "start: keep one init state, or write the chain in TOML with a start "
                         "distribution")
    builder.start_at(starts[0], mpq(1))
    return note
