"""Chain: any finite discrete-time Markov chain with exact transition probabilities.

Notation (as in SPEC.md, for a general chain rather than one player's board):

- ``S``          the states, ``0 .. n-1``, each with a name;
- ``P(i, j)``    the transition probability from i to j, an exact rational. Row i is
                 kept as integers over the row's own common denominator:
                 ``P(i, j) = numerators[k] / denominators[i]`` for the k-th entry of the
                 row (CSR arrays ``indptr``, ``indices``), so a row of sixths stays
                 ``1/6`` and a row of ``0.98`` / ``0.02`` stays over 50;
- ``pi_0``       the start distribution, ``(state, probability)`` pairs summing to 1;
- ``labels``     named sets of states (``"goal"``, ``"elected"``, ``"s=5"``);
- ``rewards``    named state rewards ``rho(i)``, exact, earned on leaving state i
                 (transition rewards are folded in by their source as
                 ``rho(i) += sum_j P(i, j) r(i, j)``, which gives the same expectation).

A state is *absorbing* when its row is ``P(i, i) = 1``. A state with no transitions
(a deadlock) is made absorbing when the chain is built, as PRISM and Storm do, and the
chain's ``notes`` say so.

Every source of chains (a board, the chain TOML, PRISM's explicit ``.tra``/``.lab``,
Storm's DRN, a PRISM or JANI model through stormpy) builds one with
:class:`ChainBuilder`, which checks the input once: rows that do not sum to exactly 1,
values outside ``[0, 1]``, duplicate transitions, unknown states, names with control
characters, and the size limits, each with the file and line where one is known.
The questions asked of a chain, and the linear systems that answer them, are in
:mod:`ladders.solver.chains.questions`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ladders.solver.exact import mpq, mpz

#: Most states a chain may have: the linear-system engines keep a few arrays of this
#: length, and the sources build their rows in Python first.
MAX_STATES = 20_000_000
#: Most transitions (nonzero ``P(i, j)``) a chain may have.
MAX_TRANSITIONS = 100_000_000
#: Largest common denominator of one row (and of one state's reward): the engines
#: keep the system's integers in 64-bit words.
MAX_ROW_DENOMINATOR = (1 << 62) - 1
#: Longest name of a state, label or reward.
MAX_NAME = 200

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", re.ASCII)
_FRACTION = re.compile(r"([+-]?\d+)\s*/\s*(\d+)", re.ASCII)


class ChainError(ValueError):
    """Bad chain input: the message names the file and line where they are known."""


def where(source: str, line: int | None) -> str:
    """``file:line`` (or ``file``) for messages."""
    return f"{source}:{line}" if line is not None else source


def parse_exact(text: str) -> mpq:
    """An exact rational from ``"1/6"``, ``"3"``, ``"0.25"`` or ``"2.5e-3"``: a decimal
    is the exact decimal it spells (``0.1`` is ``1/10``, not the float nearest it).
    ``ValueError`` names the text."""
    s = text.strip()
    if "/" in s:
        m = _FRACTION.fullmatch(s)
        if m is None:
            raise ValueError(f"not an exact number: {text[:60]!r} (write a/b with digits 0-9, "
                             "the sign on a only, an integer or a decimal)")
        n, d = mpz(m.group(1)), mpz(m.group(2))
        if d == 0:
            raise ValueError(f"not an exact number: {text[:60]!r} (zero denominator)")
        return mpq(n, d)
    m = _DECIMAL.fullmatch(s)
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"not an exact number: {text[:60]!r} (write a/b, an integer or a "
                         "decimal)")
    sign, whole, frac, exp = m.group(1), m.group(2) or "0", m.group(3) or "", m.group(4)
    e = int(exp) if exp else 0
    if abs(e) > 10_000:
        raise ValueError(f"not an exact number: {text[:60]!r} (exponent beyond 10,000)")
    value = mpq(mpz(whole + frac), mpz(10) ** len(frac))
    value = value * mpz(10) ** e if e >= 0 else value / mpz(10) ** -e
    return -value if sign == "-" else value


def brief(value: mpq) -> str:
    """An exact value for a message: ``p/q (~decimal)``, or where the fraction is long
    (a row of a thousand distinct sevenths), the decimal and its size only."""
    text = str(value)
    if len(text) <= 40:
        return f"{text} (~{float(value):.6g})"
    return (f"~{float(value):.6g} (a fraction of {len(str(abs(value.numerator))):,} digits over "
            f"{len(str(value.denominator)):,})")


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is a whole number written with the digits 0-9 only (Python's
    ``isdigit`` also takes other scripts' digits and superscripts)."""
    return text.isascii() and text.isdigit()


def check_name(name: str, what: str, at: str) -> str:
    """``name`` if it is a usable name (no control characters, at most
    :data:`MAX_NAME` characters), else a :class:`ChainError` naming it."""
    if _CONTROL.search(name):
        raise ChainError(f"{at}: the {what} name {name[:40]!r} holds a control character; "
                         "use printable characters")
    if len(name) > MAX_NAME:
        raise ChainError(f"{at}: the {what} name {name[:40]!r}... has {len(name):,} characters; "
                         f"the limit is {MAX_NAME}")
    if not name:
        raise ChainError(f"{at}: an empty {what} name")
    return name


@dataclass(frozen=True, eq=False)
class Chain:
    """A finite Markov chain with exact probabilities (see the module docstring).

    Build one with :class:`ChainBuilder` (or, for a built model, with its rows
    checked by :func:`rows_from_entries`); it is never changed afterwards. ``states``
    is any sequence of names: a tuple, or one that names a state when asked."""

    name: str
    states: Sequence[str]
    indptr: np.ndarray
    indices: np.ndarray
    numerators: np.ndarray
    denominators: np.ndarray
    start: tuple[tuple[int, mpq], ...]
    labels: Mapping[str, np.ndarray] = field(default_factory=dict)
    rewards: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        """Number of states n."""
        return len(self.states)

    @property
    def nnz(self) -> int:
        """Number of transitions (nonzero ``P(i, j)``)."""
        return int(self.indptr[-1])

    def row(self, i: int) -> list[tuple[int, mpq]]:
        """Row i as ``(j, P(i, j))`` pairs."""
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        d = int(self.denominators[i])
        return [(int(j), mpq(int(c), d)) for j, c in
                zip(self.indices[lo:hi].tolist(), self.numerators[lo:hi].tolist())]

    @cached_property
    def absorbing(self) -> np.ndarray:
        """Boolean mask: ``P(i, i) = 1``."""
        counts = np.diff(self.indptr)
        single = counts == 1
        out = np.zeros(self.size, dtype=bool)
        rows = np.flatnonzero(single)
        first = self.indptr[rows]
        out[rows] = (self.indices[first] == rows) & (self.numerators[first] == self.denominators[rows])
        return out

    @cached_property
    def index(self) -> dict[str, int]:
        """State name -> index."""
        return {s: i for i, s in enumerate(self.states)}

    def label_mask(self, name: str) -> np.ndarray:
        """Boolean mask of the states labelled ``name`` (a :class:`ChainError` naming
        the labels there are: a user's mistake, not a bug)."""
        if name not in self.labels:
            known = ", ".join(sorted(self.labels)) or "none"
            raise ChainError(f"no label {name!r} in {self.name}; its labels: {known}")
        mask = np.zeros(self.size, dtype=bool)
        mask[self.labels[name]] = True
        return mask

    @cached_property
    def end_names(self) -> dict[str, np.ndarray]:
        """Every absorbing state grouped by the name of the answer "the chain ends
        there", by the one rule every answer of where a chain ends follows:

        - its labels other than ``init`` and ``deadlock``, joined by ``+`` in sorted
          order (``goal``, ``done+won``);
        - else, unlabelled, its own name (``heads``);
        - else, where its own name is also a label's, ``state NAME``: the label keeps
          the bare name.

        Returns name -> sorted state indices, in the order of each group's first
        state. The answer of a name is the probability
        of ending in *any* of its states: a label's answer sums every absorbing state
        that carries exactly those labels, reachable or not (an unreachable one adds
        0). A :class:`ChainError` where two groups would still share a name (an
        unlabelled state named ``a+b`` beside labels ``a`` and ``b``)."""
        ends = np.flatnonzero(self.absorbing)
        names = [name for name in self.labels if name not in ("init", "deadlock")]
        bits = np.zeros((len(ends), len(names)), dtype=bool)
        for k, name in enumerate(names):
            bits[:, k] = np.isin(ends, self.labels[name])
        keys, inverse = np.unique(bits, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        groups: dict[str, np.ndarray] = {}

        def add(name: str, members: np.ndarray) -> None:
            if name in groups:
                raise ChainError(f"{self.name}: an absorbing state's name and a group of labels "
                                 f"both give the answer name {name!r}; rename the state or the "
                                 "labels")
            groups[name] = members

        for r, key in enumerate(keys.tolist()):
            members = ends[inverse == r]
            if any(key):
                add("+".join(n for n, b in zip(names, key) if b), members)
                continue
            for i in members.tolist():
                own = self.states[i]
                add(f"state {own}" if own in self.labels else own, np.array([i], dtype=np.int64))
        return dict(sorted(groups.items(), key=lambda item: int(item[1][0])))

    def digest(self) -> str:
        """SHA-256 of the whole chain: the same chain, the same digest."""
        import hashlib  # here: OpenSSL's import costs a build that never asks a digest
        h = hashlib.sha256()
        for arr in (self.indptr, self.indices, self.numerators, self.denominators):
            h.update(np.ascontiguousarray(arr, dtype=np.int64).tobytes())
            h.update(b"|")
        h.update(repr([(i, str(p)) for i, p in self.start]).encode())
        for name in sorted(self.labels):
            h.update(name.encode() + b"=" + np.asarray(self.labels[name], np.int64).tobytes())
        for name in sorted(self.rewards):
            num, den = self.rewards[name]
            h.update(name.encode() + b"~" + np.asarray(num, np.int64).tobytes()
                     + np.asarray(den, np.int64).tobytes())
        return h.hexdigest()


class ChainBuilder:
    """Collects a chain's states, transitions, start, labels and rewards, then checks
    and freezes them (:meth:`build`). ``source`` names the input in messages (a file
    path); the ``line`` arguments say where each item came from."""

    def __init__(self, name: str, source: str) -> None:
        self.name, self.source = name, source
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._rows: list[dict[int, mpq]] = []
        self._lines: list[dict[int, int | None]] = []
        self._row_line: list[int | None] = []
        self._start: list[tuple[int, mpq]] = []
        self._labels: dict[str, set[int]] = {}
        self._rewards: dict[str, dict[int, mpq]] = {}
        self._transitions = 0
        self._bulk: tuple[np.ndarray, np.ndarray, Sequence[mpq], np.ndarray] | None = None

    # ------------------------------------------------------------------ states
    def state(self, name: str, line: int | None = None) -> int:
        """The index of state ``name``, added if new."""
        i = self._index.get(name)
        if i is not None:
            return i
        check_name(name, "state", where(self.source, line))
        if len(self._names) >= MAX_STATES:
            raise ChainError(f"{where(self.source, line)}: more than {MAX_STATES:,} states, "
                             "the limit of one chain")
        i = len(self._names)
        self._names.append(name)
        self._index[name] = i
        self._rows.append({})
        self._lines.append({})
        self._row_line.append(line)
        return i

    def states(self, names: Iterable[str]) -> None:
        """Add states in this order (their indices follow it). Into an empty builder, a
        list of distinct names is checked as one (a model checker's million states)."""
        names = list(names)
        if (self._names or len(names) > MAX_STATES or len(set(names)) != len(names)
                or _CONTROL.search(" ".join(names)) or "" in names
                or max(map(len, names), default=0) > MAX_NAME):
            for name in names:  # one by one: the error names the state
                self.state(name)
            return
        self._names = names
        self._index = {name: i for i, name in enumerate(names)}
        self._rows = [{} for _ in names]
        self._lines = [{} for _ in names]
        self._row_line = [None] * len(names)

    def known(self, name: str, line: int | None = None) -> int:
        """The index of an existing state (a :class:`ChainError` naming it otherwise)."""
        i = self._index.get(name)
        if i is None:
            raise ChainError(f"{where(self.source, line)}: no state {name[:60]!r}")
        return i

    @property
    def size(self) -> int:
        return len(self._names)

    # ------------------------------------------------------------------ contents
    def transition(self, i: int, j: int, value: mpq, line: int | None = None) -> None:
        """``P(i, j) = value`` (a second transition from i to j is refused, naming
        both lines; a zero is dropped)."""
        at = where(self.source, line)
        if value < 0 or value > 1:
            raise ChainError(f"{at}: the probability {value} from {self._names[i]!r} to "
                             f"{self._names[j]!r} is {'negative' if value < 0 else 'above 1'}; a "
                             "probability is between 0 and 1")
        row = self._rows[i]
        if j in row:
            first = self._lines[i].get(j)
            also = f" (first at line {first})" if first is not None else ""
            raise ChainError(f"{at}: a second transition from {self._names[i]!r} to "
                             f"{self._names[j]!r}{also}; give each transition once")
        if value == 0:
            return
        self._transitions += 1
        if self._transitions > MAX_TRANSITIONS:
            raise ChainError(f"{at}: more than {MAX_TRANSITIONS:,} transitions, the limit of "
                             "one chain")
        row[j] = value
        self._lines[i][j] = line
        if self._row_line[i] is None:
            self._row_line[i] = line

    def entries(self, indptr: np.ndarray, indices: np.ndarray, values: Sequence[mpq],
                value_ids: np.ndarray) -> None:
        """Every row at once, in CSR form over the states added so far, each entry's
        value ``values[value_ids[k]]``; checked by :func:`rows_from_entries` when the
        chain is built (instead of :meth:`transition`, not beside it)."""
        if self._transitions:
            raise ValueError("give the rows either by transition() or by entries(), not both")
        self._bulk = (np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64),
                      values, np.asarray(value_ids, dtype=np.int64))

    def start_at(self, i: int, probability: mpq = mpq(1), line: int | None = None) -> None:
        """Put ``probability`` of the start distribution on state i."""
        if probability <= 0 or probability > 1:
            raise ChainError(f"{where(self.source, line)}: the start probability {probability} "
                             f"of {self._names[i]!r} is not in (0, 1]")
        self._start.append((i, mpq(probability)))

    def label(self, name: str, members: Iterable[int], line: int | None = None) -> None:
        """Label the states ``members`` with ``name`` (added to any earlier ones)."""
        check_name(name, "label", where(self.source, line))
        self._labels.setdefault(name, set()).update(members)

    def labelled(self, name: str) -> frozenset[int] | None:
        """The states of label ``name`` so far, or None where there is none (a source
        that makes up labels, for an expression, must not add to one of the input's
        own)."""
        members = self._labels.get(name)
        return None if members is None else frozenset(members)

    def reward(self, name: str, i: int, value: mpq, line: int | None = None) -> None:
        """Add ``value`` to state i's reward ``name``."""
        check_name(name, "reward", where(self.source, line))
        if value < 0:
            raise ChainError(f"{where(self.source, line)}: the reward {value} of "
                             f"{self._names[i]!r} is negative; rewards here are at least 0")
        rewards = self._rewards.setdefault(name, {})
        rewards[i] = rewards.get(i, mpq(0)) + value

    # ------------------------------------------------------------------ the chain
    def build(self) -> Chain:
        """The checked, frozen :class:`Chain`: every row sums to exactly 1 (a row with
        no transitions is made absorbing and noted), the start distribution sums to 1."""
        if not self._names:
            raise ChainError(f"{self.source}: a chain needs at least one state")
        notes: list[str] = []
        deadlocks: list[int] = []
        n = len(self._names)
        if self._bulk is not None:
            indptr, indices, numerators, denominators, empty = rows_from_entries(
                self.source, self._names, *self._bulk)
            return self._freeze(indptr, indices, numerators, denominators, empty.tolist(),
                                notes)
        indptr = np.zeros(n + 1, dtype=np.int64)
        indices = np.empty(self._transitions + n, dtype=np.int64)
        numerators = np.empty(self._transitions + n, dtype=np.int64)
        denominators = np.empty(n, dtype=np.int64)
        k = 0
        for i, row in enumerate(self._rows):
            if not row:
                deadlocks.append(i)
                row = {i: mpq(1)}
            total = sum(row.values(), mpq(0))
            if total != 1:
                raise ChainError(f"{where(self.source, self._row_line[i])}: the transitions "
                                 f"from {self._names[i]!r} sum to {brief(total)}, not 1; make "
                                 "them sum to exactly 1")
            den = 1
            for value in row.values():
                den = math.lcm(den, int(value.denominator))
            if den > MAX_ROW_DENOMINATOR:
                raise ChainError(f"{where(self.source, self._row_line[i])}: the transitions "
                                 f"from {self._names[i]!r} need a common denominator of "
                                 f"{den.bit_length()} bits; the limit is 62 bits")
            denominators[i] = den
            for j in sorted(row):
                value = row[j]
                indices[k] = j
                numerators[k] = int(value.numerator) * (den // int(value.denominator))
                k += 1
            indptr[i + 1] = k
        return self._freeze(indptr, indices[:k].copy(), numerators[:k].copy(), denominators,
                            deadlocks, notes)

    def _freeze(self, indptr: np.ndarray, indices: np.ndarray, numerators: np.ndarray,
                denominators: np.ndarray, deadlocks: list[int], notes: list[str]) -> Chain:
        """The :class:`Chain` of checked rows, with its start, labels and rewards."""
        n = len(self._names)
        if deadlocks:
            shown = ", ".join(repr(self._names[i]) for i in deadlocks[:3])
            more = f" and {len(deadlocks) - 3:,} more" if len(deadlocks) > 3 else ""
            notes.append(f"{len(deadlocks):,} state(s) without transitions ({shown}{more}) "
                         "made absorbing, as PRISM and Storm do")
            self._labels.setdefault("deadlock", set()).update(deadlocks)
        start = self._start_distribution()
        labels = {name: np.array(sorted(members), dtype=np.int64)
                  for name, members in sorted(self._labels.items())}
        rewards = {name: _reward_arrays(values, n, self.source, name)
                   for name, values in sorted(self._rewards.items())}
        return Chain(name=self.name, states=tuple(self._names), indptr=indptr,
                     indices=indices, numerators=numerators,
                     denominators=denominators, start=start, labels=labels, rewards=rewards,
                     notes=tuple(notes))

    def _start_distribution(self) -> tuple[tuple[int, mpq], ...]:
        if not self._start:
            raise ChainError(f"{self.source}: no start state; name one (or a distribution)")
        merged: dict[int, mpq] = {}
        for i, p in self._start:
            merged[i] = merged.get(i, mpq(0)) + p
        total = sum(merged.values(), mpq(0))
        if total != 1:
            raise ChainError(f"{self.source}: the start distribution sums to {brief(total)}, not 1")
        return tuple(sorted(merged.items()))


def _reward_arrays(values: Mapping[int, mpq], n: int, source: str,
                   name: str) -> tuple[np.ndarray, np.ndarray]:
    """A reward as per-state numerators and denominators (int64)."""
    num = np.zeros(n, dtype=np.int64)
    den = np.ones(n, dtype=np.int64)
    for i, value in values.items():
        if value.denominator > MAX_ROW_DENOMINATOR or value.numerator > MAX_ROW_DENOMINATOR:
            raise ChainError(f"{source}: the reward {name!r} of state {i} ({value}) needs more "
                             "than 62 bits")
        num[i], den[i] = int(value.numerator), int(value.denominator)
    return num, den


def rows_from_entries(source: str, states: Sequence[str], indptr: np.ndarray, indices: np.ndarray,
                      values: Sequence[mpq], value_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """A chain's rows from CSR entries whose values are given once each (``values``:
    the distinct exact values, ``value_ids``: each entry's index into them), checked as
    :meth:`ChainBuilder.transition` and :meth:`ChainBuilder.build` check rows, in NumPy:
    the bulk path of sources whose models repeat a few probabilities over millions of
    transitions (Storm's matrices). Returns ``indptr, indices, numerators,
    denominators`` of :class:`Chain` (an empty row made absorbing) and the empty rows."""
    n = len(states)
    if len(indices) > MAX_TRANSITIONS:
        raise ChainError(f"{source}: {len(indices):,} transitions, more than the {MAX_TRANSITIONS:,} "
                         "of one chain")
    for k, value in enumerate(values):
        if value < 0 or value > 1:
            j = int(np.flatnonzero(value_ids == k)[0])
            i = int(np.searchsorted(indptr, j, side="right") - 1)
            raise ChainError(f"{source}: the probability {value} from {states[i]!r} to "
                             f"{states[int(indices[j])]!r} is {'negative' if value < 0 else 'above 1'}")
    fast = _rows_int64(n, indptr, indices, values, value_ids)
    if fast is not None:
        return fast
    num_of = np.array([int(v.numerator) for v in values], dtype=object)
    den_of = np.array([int(v.denominator) for v in values], dtype=object)
    counts = np.diff(indptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    order = np.lexsort((indices, rows))
    indices, value_ids = indices[order], value_ids[order]
    same = (np.diff(indices) == 0) & (np.diff(rows) == 0)
    if np.any(same):
        j = int(np.flatnonzero(same)[0])
        raise ChainError(f"{source}: a second transition from {states[int(rows[j])]!r} to "
                         f"{states[int(indices[j])]!r}; give each transition once")
    keep = num_of[value_ids] != 0
    indices, value_ids, rows = indices[keep], value_ids[keep], rows[keep]
    empty = np.flatnonzero(np.bincount(rows, minlength=n) == 0)
    # an empty row becomes P(i, i) = 1 (value 1/1, appended and sorted in)
    if len(empty):
        rows = np.concatenate([rows, empty])
        indices = np.concatenate([indices, empty])
        one = len(values)
        num_of = np.append(num_of, 1)
        den_of = np.append(den_of, 1)
        value_ids = np.concatenate([value_ids, np.full(len(empty), one, dtype=value_ids.dtype)])
        order = np.lexsort((indices, rows))
        rows, indices, value_ids = rows[order], indices[order], value_ids[order]
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=new_indptr[1:])
    # each row's common denominator: the lcm of its values' (Python integers, exact)
    row_den = np.ones(n, dtype=object)
    dens = den_of[value_ids]
    starts = new_indptr[:-1]
    row_den = np.lcm.reduceat(dens, starts) if len(dens) else row_den
    nums = num_of[value_ids] * (np.repeat(row_den, np.diff(new_indptr)) // dens)
    sums = np.add.reduceat(nums, starts) if len(nums) else np.zeros(n, dtype=object)
    bad = np.flatnonzero(sums != row_den)
    if len(bad):
        i = int(bad[0])
        total = mpq(int(sums[i]), int(row_den[i]))
        raise ChainError(f"{source}: the transitions from {states[i]!r} sum to {brief(total)}, "
                         "not 1; make them sum to exactly 1")
    if any(int(d) > MAX_ROW_DENOMINATOR for d in set(row_den.tolist())):
        i = next(i for i, d in enumerate(row_den.tolist()) if int(d) > MAX_ROW_DENOMINATOR)
        raise ChainError(f"{source}: the transitions from {states[i]!r} need a common denominator "
                         f"of {int(row_den[i]).bit_length()} bits; the limit is 62 bits")
    return (new_indptr, indices.astype(np.int64), nums.astype(np.int64),
            row_den.astype(np.int64), empty)


def _rows_int64(n: int, indptr: np.ndarray, indices: np.ndarray, values: Sequence[mpq],
                value_ids: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """:func:`rows_from_entries` in 64-bit integers, for rows that pass every check
    (values in ``[0, 1]`` already checked); None where any row does not (a second
    transition to one state, a row not summing to 1, a denominator past 62 bits), and
    the caller's exact path then finds and names it. About ten times faster than
    that path's Python integers on millions of transitions.

    Why 64 bits are enough: a row's common denominator ``L`` is computed by
    ``np.lcm`` and accepted only if ``0 < L <= 2**62 - 1`` and every denominator of
    the row divides it; a wrapped result cannot pass, since a positive common multiple
    is at least the least one, which would then fit and not have wrapped. Each
    numerator is at most ``L``, so a row's sum cannot wrap past 2**63 unless its
    length times ``L`` reaches it; only then are the sums also added in floating
    point, so that a wrapped sum is not taken for ``L``."""
    if any(v.denominator > MAX_ROW_DENOMINATOR for v in values):
        return None
    num_of = np.array([int(v.numerator) for v in values] + [1], dtype=np.int64)
    den_of = np.array([int(v.denominator) for v in values] + [1], dtype=np.int64)
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    value_ids = np.asarray(value_ids, dtype=np.int64)
    counts = np.diff(indptr)
    # rows already in order, without zeros or empty rows (a built model's): no row
    # index a transition is needed
    rising = np.diff(indices) > 0
    rising[indptr[1:-1][(indptr[1:-1] > 0) & (indptr[1:-1] < len(indices))] - 1] = True
    if n and counts.min() > 0 and rising.all() and (num_of[value_ids] != 0).all():
        return _row_denominators(n, indptr, counts, indices, value_ids, num_of, den_of,
                                 np.zeros(0, dtype=np.int64))
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    ordered = (np.diff(indices) > 0) | (np.diff(rows) > 0)
    if not ordered.all():
        order = np.lexsort((indices, rows))
        rows, indices, value_ids = rows[order], indices[order], value_ids[order]
        if np.any((np.diff(indices) == 0) & (np.diff(rows) == 0)):
            return None
    keep = num_of[value_ids] != 0
    if not keep.all():
        rows, indices, value_ids = rows[keep], indices[keep], value_ids[keep]
    counts = np.bincount(rows, minlength=n)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        # an empty row becomes P(i, i) = 1 (the value 1/1, last in num_of), sorted in
        rows = np.concatenate([rows, empty])
        indices = np.concatenate([indices, empty])
        value_ids = np.concatenate([value_ids, np.full(len(empty), len(values), dtype=np.int64)])
        order = np.lexsort((indices, rows))
        rows, indices, value_ids = rows[order], indices[order], value_ids[order]
        counts = np.bincount(rows, minlength=n)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=new_indptr[1:])
    return _row_denominators(n, new_indptr, counts, indices, value_ids, num_of, den_of, empty)


def _row_denominators(n: int, indptr: np.ndarray, counts: np.ndarray, indices: np.ndarray,
                      value_ids: np.ndarray, num_of: np.ndarray, den_of: np.ndarray,
                      empty: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """The 64-bit rows of :func:`_rows_int64` from rows in order, none empty: each
    row's common denominator and its numerators over it, checked (None where one
    does not pass)."""
    starts = indptr[:-1]
    dens = den_of[value_ids]
    row_den = np.lcm.reduceat(dens, starts)
    if row_den.min() <= 0 or row_den.max() > MAX_ROW_DENOMINATOR:
        return None
    spread = np.repeat(row_den, counts)
    if np.any(spread % dens):
        return None
    nums = num_of[value_ids] * (spread // dens)
    if np.any(np.add.reduceat(nums, starts) != row_den):
        return None
    if int(counts.max()) * int(row_den.max()) >= 1 << 63 and \
            np.any(np.abs(np.add.reduceat(nums / spread, starts) - 1) > 1e-6):
        return None
    return indptr, indices, nums, row_den, empty


def chain_from_rows(name: str, states: Sequence[str], rows: Sequence[Mapping[int, mpq]],
                    start: int | Sequence[tuple[int, mpq]] = 0,
                    labels: Mapping[str, Iterable[int]] | None = None,
                    rewards: Mapping[str, Mapping[int, mpq]] | None = None) -> Chain:
    """A chain from Python data (tests, the API, sources that hold their rows already):
    ``rows[i]`` maps j to ``P(i, j)``."""
    b = ChainBuilder(name, name)
    b.states(states)
    for i, row in enumerate(rows):
        for j, value in row.items():
            b.transition(i, j, mpq(value))
    for i, p in ([(start, mpq(1))] if isinstance(start, int) else start):
        b.start_at(i, mpq(p))
    for label, members in (labels or {}).items():
        b.label(label, members)
    for reward, values in (rewards or {}).items():
        for i, value in values.items():
            b.reward(reward, i, mpq(value))
    return b.build()
