"""The reachable Markov chain of a :class:`~ladders.solver.chains.symbolic.Program`,
built without a Python step per state or per transition.

- A state is its variables' values packed into 64-bit words (a bit field a variable,
  ``value - low`` in ``bits(high - low)`` bits; a variable never spans two words).
- Exploration is breadth first, a whole frontier (every state found but not yet
  expanded) at once: each guard is evaluated over the frontier's columns of values
  (NumPy), each enabled command's updates produce a column of successor states, and
  the successors are looked up in, or added to, a hash table (NumPy, no compiler to
  import: :mod:`~ladders.solver.chains.state_table`) that numbers states in the order
  they are found: the initial states first.
- States are named (:class:`StateNames`) only when a name is asked for.
- Probabilities are exact: every distinct value is an ``mpq`` kept once in
  :class:`Values`, and transitions carry its index. A probability expression is
  evaluated once per distinct valuation of the variables it reads, over the whole
  build; products and sums of values are computed once per distinct pair.

Storm's semantics, so that the states, the transitions and their probabilities equal
Storm's (``storm::generator::PrismNextStateGenerator``):

- a command without an action is a choice of its own; an action shared by modules is
  one choice for each combination of one enabled command with that action in every
  module whose commands use it (none where a module has none enabled), its
  distribution the product of the commands' distributions, its updates applied
  together (each evaluated in the state before the step);
- where a state has ``k`` choices, each is taken with probability ``1/k`` (a DTMC's
  choices are fused uniformly), and the same successor reached twice has the sum;
- an update of probability zero adds no successor;
- a state without a choice (a deadlock) gets a self-loop and the label ``deadlock``;
- a reward structure's value in a state is its state items' sum plus the average,
  over the state's ``k`` choices, of the action items matching each choice's action
  (Storm's state-action reward ``/ k``, then folded into the state's reward); a
  deadlock earns nothing, its state items included (Storm's rule).

A variable driven outside its range, a probability outside ``[0, 1]``, rows that do
not sum to 1, and a state space past :data:`~ladders.solver.chains.model.MAX_STATES`
are :class:`~ladders.solver.chains.model.ChainError`\\ s naming the command, the
state and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ladders.solver.chains.state_table import StateTable, valuation_names
from ladders.solver.chains.vector_code import VectorFunction, vector_functions
from ladders.solver.chains.model import (
    MAX_NAME, MAX_ROW_DENOMINATOR, MAX_STATES, Chain, ChainError, rows_from_entries,
)
from ladders.solver.chains.symbolic import (
    Command, Expr, ExprError, Program, Value, Variable, evaluate, show,
)
from ladders.solver.exact import mpq

#: Most valuations ``init ... endinit`` is tried on.
MAX_INIT_VALUATIONS = 1 << 24
#: Bits of a 64-bit word a state uses (the sign bit stays clear).
WORD_BITS = 63


class Values:
    """The distinct exact values of a build, each once, by index: a transition, a
    reward carries the index. Sums and products of two values are computed once per
    distinct pair of indices."""

    def __init__(self) -> None:
        self.values: list[mpq] = []
        self._index: dict[mpq, int] = {}
        self._pairs: dict[str, dict[int, int]] = {"+": {}, "*": {}}
        self.zero = self.id(mpq(0))
        self.one = self.id(mpq(1))

    def id(self, value: Value) -> int:
        """The index of ``value``, added if new."""
        q = mpq(value)
        i = self._index.get(q)
        if i is None:
            i = self._index[q] = len(self.values)
            self.values.append(q)
        return i

    def combine(self, op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Indices of ``values[a] op values[b]`` (``op``: ``"+"`` or ``"*"``), element by
        element."""
        if len(a) == 0:
            return a.copy()
        key = a.astype(np.int64) << 32 | b.astype(np.int64)
        uniq, inverse = np.unique(key, return_inverse=True)
        cache = self._pairs[op]
        out = np.empty(len(uniq), dtype=np.int64)
        for n, k in enumerate(uniq.tolist()):
            r = cache.get(k)
            if r is None:
                x, y = self.values[k >> 32], self.values[k & 0xFFFFFFFF]
                r = cache[k] = self.id(x + y if op == "+" else x * y)
            out[n] = r
        return out[inverse]


class Layout:
    """Where each variable's value lies in a packed state: its word, shift and mask."""

    def __init__(self, variables: Sequence[Variable]) -> None:
        self.variables = tuple(variables)
        self.position: dict[str, int] = {v.name: k for k, v in enumerate(variables)}
        self.word, self.shift, self.mask = [], [], []
        word, used = 0, 0
        for v in variables:
            bits = max(1, (v.high - v.low).bit_length())
            if used + bits > WORD_BITS:
                word, used = word + 1, 0
            self.word.append(word)
            self.shift.append(used)
            self.mask.append((1 << bits) - 1)
            used += bits
        self.words = word + 1

    def column(self, states: np.ndarray, k: int) -> np.ndarray:
        """Variable k's values in ``states`` (shape ``(m, words)``)."""
        v = self.variables[k]
        col = (states[:, self.word[k]] >> self.shift[k]) & self.mask[k]
        return col + v.low if v.low else col

    def put(self, states: np.ndarray, k: int, values: np.ndarray) -> None:
        """Write ``values`` as variable k in ``states`` (in place)."""
        w, s = self.word[k], self.shift[k]
        low = self.variables[k].low
        states[:, w] = (states[:, w] & ~(self.mask[k] << s)) | ((values - low) << s)

    def pack(self, valuation: Sequence[int]) -> np.ndarray:
        """One state from its variables' values, in the layout's order."""
        out = np.zeros(self.words, dtype=np.int64)
        for k, value in enumerate(valuation):
            out[self.word[k]] |= (int(value) - self.variables[k].low) << self.shift[k]
        return out


class Frame:
    """Expressions evaluated over a block of states at once: Booleans and integers as
    NumPy columns (by :func:`~ladders.solver.chains.vector_code.vector_functions`; a
    constant as a Python scalar), rationals as :class:`Values` indices."""

    def __init__(self, explorer: Explorer, states: np.ndarray,
                 parent: tuple[Frame, np.ndarray] | None = None,
                 labels: dict[str, np.ndarray] | None = None) -> None:
        self.ex, self.states, self.parent = explorer, states, parent
        self.m = len(states)
        self.labels = labels or {}
        self._cols: dict[int, np.ndarray] = {}
        self._words: dict[int, np.ndarray] = {}

    def col(self, k: int) -> np.ndarray:
        """Variable k's values in the block."""
        c = self._cols.get(k)
        if c is None:
            if self.parent is not None:
                frame, rows = self.parent
                c = frame.col(k)[rows]
            else:
                layout = self.ex.layout
                w = layout.word[k]
                word = self._words.get(w)
                if word is None:
                    # one contiguous copy of each word: each variable's column reads it
                    word = self._words[w] = np.ascontiguousarray(self.states[:, w])
                c = (word >> layout.shift[k]) & layout.mask[k]
                low = layout.variables[k].low
                if low:
                    c += low
            self._cols[k] = c
        return c

    def vec(self, e: Expr) -> np.ndarray:
        """A Boolean or integer expression's values (``bool`` or ``int64`` array)."""
        value = self.ex.code((e,))(self)[0]
        if isinstance(value, np.ndarray):
            return value
        return np.full(self.m, value, dtype=bool if e.type == "bool" else np.int64)

    def mod(self, a: object, b: object, e: Expr) -> object:
        """``mod(a, b)`` of integer columns or scalars, refusing a zero divisor."""
        if np.any(np.asarray(b) == 0):
            raise ExprError(f"{show(e)}: mod(_, 0)")
        return np.mod(a, b)

    def pow(self, a: object, b: object, e: Expr) -> object:
        """``pow(a, b)`` of integer columns or scalars, refusing a negative exponent."""
        if np.any(np.asarray(b) < 0):
            raise ExprError(f"{show(e)}: an integer to a negative power")
        return np.power(a, b)

    def _keys(self, e: Expr) -> tuple[np.ndarray, list[int]]:
        """One integer a state for the values of the variables ``e`` reads (a
        mixed-radix number), and those variables' positions."""
        if e.labels:
            raise ExprError(f"{show(e)}: a label inside a rational expression")
        layout = self.ex.layout
        ks = sorted(layout.position[name] for name in e.reads)
        key = np.zeros(self.m, dtype=np.int64)
        stride = 1
        for k in ks:
            v = layout.variables[k]
            key += (self.col(k) - v.low) * stride
            stride *= v.high - v.low + 1
            if stride >= 1 << 62:
                raise ExprError(f"{show(e)} reads variables with more than 2^62 valuations")
        return key, ks

    def distinct(self, e: Expr) -> np.ndarray:
        """``e``'s values by evaluating it exactly once per distinct valuation of the
        variables it reads (over the whole build: :attr:`Explorer.cache`); a rational
        ``e`` as :class:`Values` indices."""
        if not e.reads:
            value = evaluate(e, {})
            if e.type == "rat":
                return np.full(self.m, self.ex.values.id(value), dtype=np.int64)
            return np.full(self.m, value, dtype=bool if e.type == "bool" else np.int64)
        key, ks = self._keys(e)
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        cache = self.ex.cache.setdefault(id(e), {})
        out = []
        layout = self.ex.layout
        for u, f in zip(uniq.tolist(), first.tolist()):
            r = cache.get(u)
            if r is None:
                env = {layout.variables[k].name: self._value(k, f) for k in ks}
                value = evaluate(e, env)
                r = cache[u] = self.ex.values.id(value) if e.type == "rat" else value
            out.append(r)
        dtype = np.int64 if e.type != "bool" else bool
        return np.array(out, dtype=dtype)[inverse]

    def _value(self, k: int, row: int) -> Value:
        value = int(self.col(k)[row])
        return bool(value) if self.ex.layout.variables[k].boolean else value

    def ids(self, e: Expr) -> np.ndarray | int:
        """A number expression's exact values, as :class:`Values` indices (one index,
        a Python ``int``, for a constant)."""
        if e.op == "const":
            return self.ex.values.id(e.value)  # type: ignore[arg-type]
        if e.type == "rat":
            return self.distinct(e)
        ints = self.vec(e)
        uniq, inverse = np.unique(ints, return_inverse=True)
        ids = np.array([self.ex.values.id(int(u)) for u in uniq.tolist()], dtype=np.int64)
        return ids[inverse]


@dataclass(frozen=True)
class _UpdatePlan:
    """How one update of a command writes a successor: its probability, the words
    its constant assignments set (``word &= keep``, then ``word |= put``), and the
    other assignments (variable, expression, its place among the values the command's
    function computes), each checked against the variable's range."""

    probability: Expr
    words: tuple[tuple[int, int, int], ...]
    dynamic: tuple[tuple[int, Expr, int], ...]
    #: the probability's :class:`Values` index where it is a constant
    constant: int | None


@dataclass(frozen=True)
class Explored:
    """The reachable chain, in arrays: ``states`` (packed, in the order found, the
    initial ones first), CSR rows over :class:`Values` indices, the deadlocks, each
    reward structure's per-state value index, and the labels."""

    layout: Layout
    states: np.ndarray
    initial: int
    indptr: np.ndarray
    indices: np.ndarray
    value_ids: np.ndarray
    values: Values
    deadlocks: np.ndarray
    rewards: dict[str, np.ndarray]


class Explorer:
    """Breadth-first exploration of a :class:`Program` (see the module docstring)."""

    def __init__(self, program: Program, max_states: int = MAX_STATES) -> None:
        self.program = program
        self.layout = Layout(program.variables)
        #: each expression node's bounds (:meth:`bounds`), the node kept with its id
        self._bounds: dict[int, tuple[Expr, tuple[int, int] | None]] = {}
        self.values = Values()
        self.cache: dict[int, dict[int, object]] = {}
        self.max_states = max_states
        self._async = [c for c in program.commands if c.action is None]
        # each shared action's participants: per module taking part, its commands in it
        self._sync: list[tuple[str, list[list[Command]]]] = []
        vectors = program.synchronisations
        if vectors is None:
            actions: list[str] = []
            for c in program.commands:
                if c.action is not None and c.action not in actions:
                    actions.append(c.action)
            vectors = tuple((action, tuple((name, action) for name, used in program.modules
                                           if action in used)) for action in actions)
        for action, participants in vectors:
            per_module = [[c for c in program.commands if c.module == name and c.action == act]
                          for name, act in participants]
            self._sync.append((action, per_module))
        self._code: dict[tuple[int, ...], tuple[tuple[Expr, ...], VectorFunction]] = {}
        self._number = {id(c): i for i, c in enumerate(program.commands)}
        # each update's assignments of a constant (in its range) folded into one mask
        # and one value a word; the others computed by the command's function
        plans: list[list[_UpdatePlan]] = []
        computed: list[list[Expr]] = []
        for c in program.commands:
            plans.append([])
            computed.append([])
            for u in c.updates:
                words: dict[int, list[int]] = {}
                dynamic = []
                for name, expr in u.assignments:
                    k = self.layout.position[name]
                    v = self.layout.variables[k]
                    if expr.op == "const" and v.low <= int(expr.value) <= v.high:  # type: ignore[call-overload]
                        w, shift = self.layout.word[k], self.layout.shift[k]
                        keep_set = words.setdefault(w, [-1, 0])
                        keep_set[0] &= ~(self.layout.mask[k] << shift)
                        keep_set[1] |= (int(expr.value) - v.low) << shift  # type: ignore[call-overload]
                    else:
                        dynamic.append((k, expr, len(computed[-1])))
                        computed[-1].append(expr)
                fixed = tuple((w, keep, put) for w, (keep, put) in words.items())
                constant = self.values.id(u.probability.value) \
                    if u.probability.op == "const" and u.probability.type != "bool" else None
                plans[-1].append(_UpdatePlan(u.probability, fixed, tuple(dynamic), constant))
        for e in [c.guard for c in program.commands] + [e for part in computed for e in part]:
            self.bounds(e)
        guards, *updates = vector_functions(
            [[c.guard for c in program.commands]] + computed, self.layout.position)
        self._guards = guards
        self._assigned = {id(c): (tuple(plan), run)
                          for c, plan, run in zip(program.commands, plans, updates)}

    def code(self, exprs: tuple[Expr, ...]) -> VectorFunction:
        """The compiled function of ``exprs`` (:func:`vector_functions`), written once."""
        key = tuple(map(id, exprs))
        found = self._code.get(key)
        if found is None:
            # the expressions are kept with their function: their ids stay theirs
            for e in exprs:
                self.bounds(e)
            found = self._code[key] = (exprs, vector_functions([exprs], self.layout.position)[0])
        return found[1]

    def bounds(self, e: Expr) -> tuple[int, int] | None:
        """The least and greatest value the integer expression ``e`` can take over the
        variables' ranges (None: a Boolean, or one evaluated exactly, not in int64). The
        vector code evaluates integer arithmetic in NumPy's int64, which wraps around in
        silence (``x*N*N`` with ``N = 2^40`` gave 0 where Storm's build gives 2^80):
        an expression whose bounds, or any of its operands', pass 64-bit integers is a
        :class:`ChainError` before any of it runs. Memoized by node."""
        memo = self._bounds
        if id(e) in memo:
            return memo[id(e)][1]
        found = [self.bounds(a) for a in e.args]
        out: tuple[int, int] | None = None
        if e.type == "int" and e.integral:
            op = e.op
            if op == "const":
                out = (int(e.value), int(e.value))  # type: ignore[call-overload]
            elif op == "var":
                v = self.layout.variables[self.layout.position[e.value]]  # type: ignore[index]
                out = (v.low, v.high)
            elif op == "ite" and found[1] is not None and found[2] is not None:
                out = (min(found[1][0], found[2][0]), max(found[1][1], found[2][1]))
            elif all(b is not None for b in found):
                bs: list[tuple[int, int]] = found  # type: ignore[assignment]
                if op == "+":
                    out = (bs[0][0] + bs[1][0], bs[0][1] + bs[1][1])
                elif op == "-":
                    out = (bs[0][0] - bs[1][1], bs[0][1] - bs[1][0])
                elif op == "*":
                    corners = [a * b for a in bs[0] for b in bs[1]]
                    out = (min(corners), max(corners))
                elif op == "neg":
                    out = (-bs[0][1], -bs[0][0])
                elif op in ("min", "max"):
                    pick = min if op == "min" else max
                    out = (pick(b[0] for b in bs), pick(b[1] for b in bs))
                elif op in ("floor", "ceil"):
                    out = bs[0]
                elif op == "mod":
                    m = max(abs(bs[1][0]), abs(bs[1][1]))
                    out = (-m, m)
                elif op == "pow":
                    base = max(abs(bs[0][0]), abs(bs[0][1]))
                    top = max(bs[1][1], 0)
                    big = base ** top if base <= 1 or top < 64 else 1 << 64
                    out = (-big, big)
            if out is not None and not (-(1 << 63) <= out[0] and out[1] < 1 << 63):
                what = (f"the integer {e.value:,} is" if op == "const" else f"{show(e)} can reach "
                        f"{out[0] if out[0] < -(1 << 63) else out[1]:,} over the variables' "
                        "ranges, which is")
                raise ChainError(f"{self.program.source}: {what} beyond the 64-bit integers "
                                 "ladders builds with (it would wrap around); narrow the ranges "
                                 "or the constants, or build it with --builder storm")
        memo[id(e)] = (e, out)
        return out

    # ------------------------------------------------------------------ start
    def initial_states(self) -> np.ndarray:
        """The initial states, packed: the variables' initial values, or every
        valuation where ``init ... endinit`` holds."""
        p, layout = self.program, self.layout
        if p.init is None:
            return layout.pack([v.init for v in p.variables])[None, :]
        sizes = [v.high - v.low + 1 for v in p.variables]
        total = int(np.prod(sizes, dtype=object))
        if total > MAX_INIT_VALUATIONS:
            raise ChainError(f"{p.source}: init ... endinit over {total:,} valuations of the "
                             f"variables; ladders tries at most {MAX_INIT_VALUATIONS:,}")
        states = np.zeros((total, layout.words), dtype=np.int64)
        grid = np.indices(sizes, dtype=np.int64).reshape(len(sizes), -1) if sizes else \
            np.zeros((0, 1), dtype=np.int64)
        for k, v in enumerate(p.variables):
            layout.put(states, k, grid[k] + v.low)
        holds = self._checked(lambda: Frame(self, states).vec(p.init), "init ... endinit")  # type: ignore[arg-type]
        out = states[holds]
        if not len(out):
            raise ChainError(f"{p.source}: no state satisfies init ... endinit")
        return out

    def _checked(self, run, what: str):  # type: ignore[no-untyped-def]
        try:
            return run()
        except ExprError as exc:
            raise ChainError(f"{self.program.source}: {what}: {exc}") from None

    # ------------------------------------------------------------------ the build
    def explore(self, progress: Callable[[int, int, int], None] | None = None) -> Explored:
        """Every reachable state and its row (see the module docstring). ``progress(states,
        transitions, levels)`` is called after each breadth-first level: a model whose
        levels are narrow (brp: six levels a chunk) takes one level at a time, for minutes."""
        starts = self.initial_states()
        table = StateTable(self.layout.words, max(1024, 4 * len(starts)))
        table.add(starts)
        initial = table.count
        indptr_parts: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        index_parts: list[np.ndarray] = []
        value_parts: list[np.ndarray] = []
        deadlock_parts: list[np.ndarray] = []
        reward_parts: dict[str, list[np.ndarray]] = {name: [] for name in self.program.rewards}
        done, offset, levels = 0, 0, 0
        while done < table.count:
            hi = table.count
            block = table.states[done:hi]
            src, targets, probs, dead, rewards = self._expand(block)
            # number the successors in the order of their sources: breadth first
            order = np.argsort(src, kind="stable")
            src, targets, probs = src[order], targets[order], probs[order]
            tgt = table.add(targets)
            if table.count > self.max_states:
                raise ChainError(f"{self.program.source}: more than {self.max_states:,} states "
                                 f"after {levels + 1:,} breadth-first levels, the limit of one "
                                 "chain; --max-states N raises it")
            src, tgt, probs = self._merge(src, tgt, probs)
            counts = np.bincount(src, minlength=hi - done)
            indptr_parts.append(offset + np.cumsum(counts))
            offset += len(src)
            index_parts.append(tgt)
            value_parts.append(probs)
            deadlock_parts.append(dead + done)
            for name, ids in rewards.items():
                reward_parts[name].append(ids)
            done = hi
            levels += 1
            if progress is not None:
                progress(table.count, offset, levels)
        return Explored(
            layout=self.layout, states=table.states[:table.count].copy(), initial=initial,
            indptr=np.concatenate(indptr_parts), indices=np.concatenate(index_parts),
            value_ids=np.concatenate(value_parts), values=self.values,
            deadlocks=np.concatenate(deadlock_parts),
            rewards={name: np.concatenate(parts) for name, parts in reward_parts.items()})

    def _merge(self, src: np.ndarray, tgt: np.ndarray,
               probs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows sorted by target, a successor reached twice from one state given once
        with the sum of its probabilities."""
        order = np.lexsort((tgt, src))
        src, tgt, probs = src[order], tgt[order], probs[order]
        while len(src) > 1:
            same = (src[1:] == src[:-1]) & (tgt[1:] == tgt[:-1])
            if not same.any():
                break
            # the first pair of each run of equal entries: add the second into the first
            first = same & np.concatenate([[True], ~same[:-1]])
            j = np.flatnonzero(first)
            probs[j] = self.values.combine("+", probs[j], probs[j + 1])
            keep = np.ones(len(src), dtype=bool)
            keep[j + 1] = False
            src, tgt, probs = src[keep], tgt[keep], probs[keep]
        return src, tgt, probs

    def _choices(self, frame: Frame) -> list[tuple[tuple[Command, ...], str | None, np.ndarray]]:
        """The block's choices: the commands taken together, their action, and the
        states where all are enabled (only choices enabled somewhere)."""
        try:
            guards = self._guards(frame)
        except ExprError:
            # which guard: each alone, for the message
            for c in self.program.commands:
                try:
                    self.code((c.guard,))(frame)
                except ExprError as exc:
                    raise ChainError(f"{c.where}: the guard: {exc}") from None
            raise
        masks: list[np.ndarray | None] = [None] * len(guards)
        columns = [n for n, g in enumerate(guards) if isinstance(g, np.ndarray)]
        if columns:
            # which guards hold somewhere: one pass over them all
            somewhere = np.stack([guards[n] for n in columns]).any(axis=1).tolist()
            for n, anywhere in zip(columns, somewhere):
                if anywhere:
                    masks[n] = guards[n]
        for n, g in enumerate(guards):
            if not isinstance(g, np.ndarray) and g:
                masks[n] = np.ones(frame.m, dtype=bool)
        number = self._number
        out = []
        for c in self._async:
            mask = masks[number[id(c)]]
            if mask is not None:
                out.append(((c,), None, mask))
        for action, per_module in self._sync:
            partial: list[tuple[tuple[Command, ...], np.ndarray | None]] = [((), None)]
            for commands in per_module:
                grown = []
                for combo, mask in partial:
                    for c in commands:
                        guard = masks[number[id(c)]]
                        if guard is None:
                            continue
                        both = guard if mask is None else mask & guard
                        if mask is None or both.any():
                            grown.append((combo + (c,), both))
                partial = grown
                if not partial:
                    break
            out += [(combo, action, mask) for combo, mask in partial if mask is not None]
        return out

    def _expand(self, block: np.ndarray) -> tuple[np.ndarray, ...]:
        """The block's transitions (source row in the block, packed target, value
        index; a deadlock's self-loop included), its deadlocks (rows) and each reward
        structure's value index per row."""
        frame = Frame(self, block)
        choices = self._choices(frame)
        k = np.zeros(frame.m, dtype=np.int64)
        for _, _, mask in choices:
            k += mask
        srcs, targets, probs = [], [], []
        for combo, _, mask in choices:
            rows = np.flatnonzero(mask)
            s, t, p = self._outcomes(frame, combo, rows)
            srcs.append(s)
            targets.append(t)
            probs.append(p)
        dead = np.flatnonzero(k == 0)
        srcs.append(dead)
        targets.append(block[dead])
        probs.append(np.full(len(dead), self.values.one, dtype=np.int64))
        src = np.concatenate(srcs)
        target = np.concatenate(targets) if targets else np.zeros((0, self.layout.words), np.int64)
        prob = np.concatenate(probs)
        several = k[src] > 1
        if several.any():
            prob[several] = self.values.combine("*", prob[several], self._inverse(k[src[several]]))
        rewards = {name: self._reward(frame, name, items, choices, k)
                   for name, items in self.program.rewards.items()}
        return src, target, prob, dead, rewards

    def _inverse(self, k: np.ndarray) -> np.ndarray:
        """Indices of ``1/k``."""
        table = np.array([self.values.id(mpq(1, max(int(i), 1))) for i in range(int(k.max()) + 1)],
                         dtype=np.int64)
        return table[k]

    def _outcomes(self, frame: Frame, combo: tuple[Command, ...],
                  rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The successors of the states ``rows`` under the commands ``combo`` taken
        together: source rows, packed targets and probability indices (zero
        probabilities dropped)."""
        if len(combo) == 1:
            return self._alone(frame, combo[0], rows)
        sub = Frame(self, frame.states[rows], parent=(frame, rows))
        at = np.arange(len(rows))
        states = sub.states
        probs: np.ndarray | None = None
        for c in combo:
            plans, run = self._assigned[id(c)]
            assigned = self._assigned_values(c, run, sub)
            new_at, new_states, new_probs = [], [], []
            for plan in plans:
                p = self._probability(c, plan, sub)
                p = p[at] if isinstance(p, np.ndarray) else np.full(len(at), p, dtype=np.int64)
                p = p if probs is None else self.values.combine("*", probs, p)
                live = p != self.values.zero
                if not live.all():
                    p, rows_u, s = p[live], at[live], states[live]
                else:
                    rows_u, s = at, states.copy()
                self._write(c, plan, assigned, sub, rows_u, s)
                new_at.append(rows_u)
                new_states.append(s)
                new_probs.append(p)
            at = np.concatenate(new_at) if new_at else at[:0]
            states = np.concatenate(new_states) if new_states else states[:0]
            probs = np.concatenate(new_probs) if new_probs else np.zeros(0, dtype=np.int64)
        assert probs is not None
        return rows[at], states, probs

    def _alone(self, frame: Frame, c: Command,
               rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_outcomes` of one command: the common case, with fewer steps (a
        constant probability is one index until the end, the one update of a command
        writes the gathered states in place)."""
        plans, run = self._assigned[id(c)]
        states = frame.states[rows]
        sub = Frame(self, states, parent=(frame, rows))
        assigned = self._assigned_values(c, run, sub)
        zero = self.values.zero
        sources, targets, probs = [], [], []
        for plan in plans:
            p = self._probability(c, plan, sub)
            if isinstance(p, np.ndarray):
                live = p != zero
                if not live.all():
                    at = np.flatnonzero(live)
                    p, s = p[at], states[at]
                    self._write(c, plan, assigned, sub, at, s)
                    sources.append(rows[at])
                    targets.append(s)
                    probs.append(p)
                    continue
            elif p == zero:
                continue
            s = states if len(plans) == 1 else states.copy()
            self._write(c, plan, assigned, sub, None, s)
            sources.append(rows)
            targets.append(s)
            probs.append(p)
        if not sources:
            return rows[:0], states[:0], np.zeros(0, dtype=np.int64)
        probs = [np.full(len(src), p, dtype=np.int64) if not isinstance(p, np.ndarray) else p
                 for src, p in zip(sources, probs)]
        if len(sources) == 1:
            return sources[0], targets[0], probs[0]
        return np.concatenate(sources), np.concatenate(targets), np.concatenate(probs)

    def _assigned_values(self, c: Command, run: VectorFunction, sub: Frame) -> list:
        """The values of the command's computed assignments over ``sub``."""
        try:
            return run(sub)
        except ExprError as exc:
            raise ChainError(f"{c.where}: an update: {exc}") from None

    def _probability(self, c: Command, plan: _UpdatePlan, sub: Frame) -> np.ndarray | int:
        """An update's probability over ``sub``: one index where it is a constant."""
        if plan.constant is not None:
            return plan.constant
        try:
            return sub.ids(plan.probability)
        except ExprError as exc:
            raise ChainError(f"{c.where}: a probability: {exc}") from None

    def _write(self, c: Command, plan: _UpdatePlan, assigned: list, sub: Frame,
               at: np.ndarray | None, s: np.ndarray) -> None:
        """Apply an update to the successors ``s``, the states ``at`` of ``sub`` (None:
        all of them; ``s`` may be ``sub.states`` itself): its computed values, range
        checked before anything is written, then its constant words and those values."""
        values = []
        for k, expr, n in plan.dynamic:
            value = assigned[n]
            if isinstance(value, np.ndarray):
                value = (value if at is None else value[at]).astype(np.int64, copy=False)
            else:
                value = int(value)
            if len(s):
                self._in_range(c, k, expr, value, sub, at)
            values.append((k, value))
        for w, keep, put in plan.words:
            s[:, w] &= keep
            s[:, w] |= put
        for k, value in values:
            self.layout.put(s, k, value)

    def _in_range(self, c: Command, k: int, expr: Expr, value: np.ndarray | int, sub: Frame,
                  rows: np.ndarray | None) -> None:
        """A :class:`ChainError` naming the command, the state and the value where an
        update drives variable k outside its range (``value``: in the states ``rows``
        of ``sub``, None: all of them)."""
        v = self.layout.variables[k]
        if isinstance(value, np.ndarray):
            if value.min() >= v.low and value.max() <= v.high:
                return
            j = int(np.flatnonzero((value < v.low) | (value > v.high))[0])
            bad = int(value[j])
        elif v.low <= value <= v.high:
            return
        else:
            j, bad = 0, value
        state = sub.states[j if rows is None else rows[j]]
        raise ChainError(f"{c.where}: the update {v.name}'={show(expr)} gives {v.name} the value "
                         f"{bad} outside its range [{v.low}..{v.high}] in the state "
                         f"{self.describe(state)}")

    def _reward(self, frame: Frame, name: str, items: Sequence, choices: list,
                k: np.ndarray) -> np.ndarray:
        """One reward structure's value index in each state of the block: its state
        items plus the average over the state's choices of what each earns (its action
        items, and its commands' outcomes' rewards times their probabilities)."""
        v = self.values
        total = np.full(frame.m, v.zero, dtype=np.int64)
        action = np.full(frame.m, v.zero, dtype=np.int64)
        for item in items:
            try:
                guard = frame.vec(item.guard)
                if item.action is None:
                    rows = np.flatnonzero(guard)
                    if len(rows):
                        total[rows] = v.combine("+", total[rows], _at(frame.ids(item.value), rows))
                    continue
                for _, act, mask in choices:
                    if (act or "") != item.action:
                        continue
                    rows = np.flatnonzero(mask & guard)
                    if len(rows):
                        action[rows] = v.combine("+", action[rows], _at(frame.ids(item.value), rows))
            except ExprError as exc:
                raise ChainError(f"{item.where}: {exc}") from None
        for combo, _, mask in choices:
            rows = None
            for c in combo:
                for u in c.updates:
                    for reward, value in u.rewards:
                        if reward != name:
                            continue
                        rows = np.flatnonzero(mask) if rows is None else rows
                        try:
                            earned = v.combine("*", _at(frame.ids(value), rows),
                                               _at(frame.ids(u.probability), rows))
                        except ExprError as exc:
                            raise ChainError(f"{c.where}: the reward {name!r}: {exc}") from None
                        action[rows] = v.combine("+", action[rows], earned)
        several = np.flatnonzero(k > 1)
        if len(several):
            action[several] = v.combine("*", action[several], self._inverse(k[several]))
        busy = np.flatnonzero(action != v.zero)
        if len(busy):
            total[busy] = v.combine("+", total[busy], action[busy])
        # Storm gives a deadlock, whose self-loop it adds, no reward at all
        total[k == 0] = v.zero
        return total

    def describe(self, state: np.ndarray) -> str:
        """A packed state as ``x=1,b,!c``."""
        cols = [int(self.layout.column(state[None, :], k)[0]) for k in range(len(self.layout.variables))]
        return ",".join((v.name if c else "!" + v.name) if v.boolean else f"{v.name}={c}"
                        for v, c in zip(self.layout.variables, cols))


# ---------------------------------------------------------------------- into a Chain

class StateNames(Sequence[str]):
    """Each state's name: its valuation over the variables that vary (``s=5,srep=2``; a
    Boolean as ``u`` or ``!u``), or its number where the names would be longer than a
    name may be, as the stormpy route names them. Written when first asked for (one
    name, or all of them at once, a chunk of states at a time in NumPy), not by the
    build: a chain of millions of states mostly answers by label, and its names cost
    as much as its exploration. Even which variables vary, and whether the names fit,
    is found on the first name asked for."""

    def __init__(self, layout: Layout, states: np.ndarray) -> None:
        self._layout, self._states = layout, states
        self._n = len(states)
        self._all: list[str] | None = None

    @cached_property
    def _varying(self) -> list[int]:
        """The variables whose value is not the same in every state (all of them
        where none varies)."""
        layout, count = self._layout, len(self._layout.variables)
        varying = []
        if self._n:
            # the bits that differ from the first state's anywhere: one pass a word
            differ = np.bitwise_or.reduce(self._states ^ self._states[0], axis=0).tolist()
            varying = [k for k in range(count)
                       if (differ[layout.word[k]] >> layout.shift[k]) & layout.mask[k]]
        return varying or list(range(count))

    @cached_property
    def _numbered(self) -> bool:
        """Whether the states are named by number (a valuation past the longest name)."""
        return self._longest() > MAX_NAME

    def _longest(self) -> int:
        """The length of the longest name (0 without states); where the widest value
        of each variable's range fits, that bound (no pass over the states)."""
        if not self._n:
            return 0
        variables = [self._layout.variables[k] for k in self._varying]
        widest = len(variables) - 1 + sum(
            len(v.name) + 1 + (0 if v.boolean else len(str(max(-v.low, v.high))) + (v.low < 0))
            for v in variables)
        if widest <= MAX_NAME:
            return widest
        fixed = len(variables) - 1
        length = np.zeros(self._n, dtype=np.int64)
        for k, v in zip(self._varying, variables):
            if not v.boolean and v.low >= 0 and len(str(v.low)) == len(str(v.high)):
                fixed += len(v.name) + 1 + len(str(v.high))   # as wide in every state
                continue
            col = self._layout.column(self._states, k)
            if v.boolean:
                length += len(v.name) + (col == 0)
            else:
                digits = np.ones(self._n, dtype=np.int64) + (col < 0)
                size = np.abs(col)
                for power in range(1, len(str(int(size.max())))):
                    digits += size >= 10 ** power
                length += len(v.name) + 1 + digits
        return fixed + int(length.max())

    def __len__(self) -> int:
        return self._n

    def _names(self, rows: np.ndarray) -> list[str]:
        if self._numbered:
            return [str(i) for i in rows.tolist()]
        block = self._states[rows]
        variables = [self._layout.variables[k] for k in self._varying]
        columns = np.stack([self._layout.column(block, k) for k in self._varying], axis=1)
        return valuation_names(columns, [v.name for v in variables], [v.boolean for v in variables])

    def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
        if self._all is not None:
            return self._all[i]
        if isinstance(i, slice):
            return self._names(np.arange(self._n)[i])
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._names(np.array([i % self._n]))[0]

    def __iter__(self) -> Iterator[str]:
        if self._all is None:
            chunk = 1 << 18
            self._all = [name for lo in range(0, self._n, chunk)
                         for name in self._names(np.arange(lo, min(lo + chunk, self._n)))]
        return iter(self._all)


def to_chain(name: str, source: str, explored: Explored, labels: dict[str, np.ndarray],
             notes: Sequence[str] = ()) -> Chain:
    """The :class:`Chain` of an exploration, its rows checked by
    :func:`~ladders.solver.chains.model.rows_from_entries` (sums exactly 1, values in
    ``[0, 1]``, 62-bit denominators), its rewards by the same limits."""
    states = StateNames(explored.layout, explored.states)
    values = explored.values.values
    # the values transitions use, renumbered (a build also holds rewards, sums...)
    used, ids = _renumbered(explored.value_ids, len(values))
    indptr, indices, numerators, denominators, _ = rows_from_entries(
        source, states, explored.indptr, explored.indices, [values[i] for i in used.tolist()], ids)
    start = tuple((i, mpq(1, explored.initial)) for i in range(explored.initial))
    rewards = {}
    for reward, ids in explored.rewards.items():
        used = np.flatnonzero(np.bincount(ids, minlength=len(values)))
        num = np.zeros(len(values), dtype=np.int64)
        den = np.ones(len(values), dtype=np.int64)
        for i in used.tolist():
            q = values[i]
            if q < 0:
                j = int(np.flatnonzero(ids == i)[0])
                raise ChainError(f"{source}: the reward {reward!r} of the state {states[j]!r} is "
                                 f"{q}; rewards here are at least 0")
            if q.numerator > MAX_ROW_DENOMINATOR or q.denominator > MAX_ROW_DENOMINATOR:
                raise ChainError(f"{source}: the reward {reward!r} value {q} needs more than 62 bits")
            num[i], den[i] = int(q.numerator), int(q.denominator)
        rewards[reward] = (num[ids], den[ids])
    all_labels = dict(labels)
    all_labels["init"] = np.arange(explored.initial, dtype=np.int64)
    all_labels["deadlock"] = explored.deadlocks.astype(np.int64)
    notes = list(notes)
    if len(explored.deadlocks):
        shown = ", ".join(repr(states[i]) for i in explored.deadlocks[:3].tolist())
        more = f" and {len(explored.deadlocks) - 3:,} more" if len(explored.deadlocks) > 3 else ""
        notes.append(f"{len(explored.deadlocks):,} state(s) without transitions ({shown}{more}) "
                     "made absorbing, as PRISM and Storm do (label \"deadlock\")")
    if explored.initial > 1:
        notes.append(f"{explored.initial:,} initial states: the start is each with probability "
                     f"1/{explored.initial:,} (an average over them; filter(min|max) the least or "
                     "greatest of their values)")
    return Chain(name=name, states=states, indptr=indptr, indices=indices,
                 numerators=numerators, denominators=denominators, start=start,
                 labels={k: all_labels[k] for k in sorted(all_labels)}, rewards=rewards,
                 notes=tuple(notes))


def _at(ids: np.ndarray | int, rows: np.ndarray) -> np.ndarray:
    """Value indices at ``rows``: of a column, or of one index for every row."""
    return ids[rows] if isinstance(ids, np.ndarray) else np.full(len(rows), ids, dtype=np.int64)


def _renumbered(ids: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The indices below ``count`` that ``ids`` uses, in order, and ``ids`` as
    positions among them (``np.unique(ids, return_inverse=True)`` without a sort)."""
    used = np.flatnonzero(np.bincount(ids, minlength=count))
    position = np.zeros(count, dtype=np.int64)
    position[used] = np.arange(len(used))
    return used, position[ids]


def label_states(explorer: Explorer, states: np.ndarray, labels: dict[str, Expr],
                 given: dict[str, np.ndarray] | None = None, chunk: int = 1 << 15) -> dict[str, np.ndarray]:
    """The states (indices) where each of ``labels`` holds, evaluated a chunk of states
    at a time (small: a label may read every variable, a column of 8 bytes a state
    each); ``given``: label masks the expressions may use (``"init"``, a model's label
    in a property)."""
    out: dict[str, list[np.ndarray]] = {name: [] for name in labels}
    for lo in range(0, len(states), chunk):
        part = states[lo:lo + chunk]
        masks = {name: mask[lo:lo + chunk] for name, mask in (given or {}).items()}
        frame = Frame(explorer, part, labels=masks)
        for name, e in labels.items():
            try:
                out[name].append(np.flatnonzero(frame.vec(e)) + lo)
            except ExprError as exc:
                raise ChainError(f"{explorer.program.source}: the label \"{name}\": {exc}") from None
    return {name: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            for name, parts in out.items()}
