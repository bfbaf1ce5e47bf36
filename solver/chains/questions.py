"""What is asked of a chain, and the sparse integer system that answers it.

The kinds of question (:data:`KINDS`), each from the start distribution ``pi_0``
(``P`` the matrix, ``rho`` a state reward, ``phi``, ``psi`` sets of states: labels):

- ``absorb``: the probability of ending in each named group ``a`` of absorbing states
  (a label's states, or one unlabelled state: :attr:`Chain.end_names` is the rule),
  ``x_a = P(F a)``, and the expected number of steps ``E[T]`` until absorption
  (``Infinity`` where the chain is not absorbed with probability 1, as Storm reports it);
  the ``x_a`` sum to 1 exactly when ``E[T]`` is finite;
- ``reach``: ``P(F psi)`` for a labelled set ``psi`` (PRISM's ``P=? [F psi]``), and with
  ``through`` the set ``phi`` a path may pass first, ``P(phi U psi)`` (``P=? [phi U psi]``:
  the same system over the states of ``phi`` only; a state outside ``phi`` and ``psi``
  is 0); with ``steps`` k, ``P(phi U<=k psi)`` (``F<=k``, ``U<=k``), stepped (below);
- ``reward``: the expected reward accumulated until ``phi`` is reached,
  ``R=? [F phi]`` (``T=? [F phi]``: a reward of 1 a step); ``Infinity`` where ``phi``
  is missed with positive probability. Over several initial states (``filter(min|max,
  ..., "init")``) each state's value is its own, ``Infinity`` included, and the least
  or greatest of them is the answer, as Storm gives it;
- stepped, no system (:mod:`ladders.solver.chains.steps`): ``next``,
  ``P(X psi) = sum_s pi_0(s) sum_{j in psi} P(s, j)``; ``cumulative``,
  ``R=? [C<=k] = sum_{t<k} pi_0 P^t rho``; ``instant``, ``R=? [I=k] = pi_0 P^k rho``;
- ``steady``: the long run ``S=? [psi] = sum_i P(F B_i) sum_{s in B_i cap psi} pi_i(s)``
  over the bottom components ``B_i`` and their stationary distributions ``pi_i``, asked
  as a ``reach`` question of another chain (:mod:`ladders.solver.chains.long_run`).

Each ``absorb``, ``reach`` and ``reward`` question becomes ``A x = B`` over the unknown states ``U`` (:class:`~ladders.solver.system.LinearSystem`):
row i of ``(I - Q) x = b`` scaled by its own denominator, ``d_i x_i - sum_{j in U}
c_ij x_j = sum_{j not in U} c_ij x_j + d_i rho_i``, with the values outside ``U``
known (1 on the target, 0 elsewhere). ``U`` is found first by graph search, as
probabilistic model checkers do (Baier and Katoen, *Principles of Model Checking*,
2008, section 10.1.1): the states reachable from the start, less those that cannot
reach the target (``Prob0``, value 0); for rewards, ``Prob1`` (reached with
probability 1) must hold the start. On ``U`` the matrix ``I - Q`` is nonsingular:
from every state of ``U`` a path leaves ``U``. Where the start is a distribution, or
not itself in ``U``, one more unknown ``x_s = sum pi_0(k) x_k`` is the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ladders.solver.chains.model import MAX_ROW_DENOMINATOR, Chain, ChainError
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem

if TYPE_CHECKING:
    from ladders.solver.chains.steps import Stepping

#: The kinds of question (see the module docstring).
KINDS = ("absorb", "reach", "reward", "next", "cumulative", "instant", "steady")
#: The kinds answered by stepping the chain, never by a system
#: (:mod:`ladders.solver.chains.steps`); a ``reach`` question with ``steps`` is one too.
STEPPED = ("next", "cumulative", "instant")

#: The most right-hand-side entries (unknowns times answers) a system may hold: 50
#: million int64 entries are 400 MB. Where the chain ends is one answer per absorbing
#: group, so a chain with tens of thousands of unlabelled absorbing states and as many
#: unknowns would need tens of GiB; such a question is refused with the fix (ask for
#: the answers wanted with a target label).
MAX_RHS_ENTRIES = 50_000_000


@dataclass(frozen=True)
class Question:
    """One question of a chain: its ``kind``, the label of its target set (``reach``,
    ``reward``), the name of the reward (``reward``; None: one a step, ``T=?``), and
    how the user wrote it (``text``, for the output). ``compare``: ``(op, bound)`` for
    PRISM's ``P>=b [...]`` forms, whose answer is true or false."""

    kind: str = "absorb"
    target: str | None = None
    reward: str | None = None
    text: str = ""
    compare: tuple[str, mpq] | None = None
    #: ``"min"`` or ``"max"``: the least or greatest value over the start's states
    #: (PRISM's ``filter(max, ..., "init")`` where a model has several initial states);
    #: ``"sum"``: the sum over them, the start being uniform over them (a model's
    #: initial states): their number times the value from the start; None: the value
    #: from the start distribution
    over: str | None = None
    #: ``reach``: the label of the states a path may pass before the target (PRISM's
    #: ``phi`` of ``phi U psi``); None: every state (``F psi``)
    through: str | None = None
    #: the number of steps ``k`` of ``U<=k``, ``F<=k`` (``reach``), ``C<=k``
    #: (``cumulative``) and ``I=k`` (``instant``); None: unbounded
    steps: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown question {self.kind!r}; use one of {', '.join(KINDS)}")
        if self.kind in ("reach", "reward", "next", "steady") and self.target is None:
            raise ValueError(f"a {self.kind} question needs a target label")
        if self.kind in ("cumulative", "instant") and self.steps is None:
            raise ValueError(f"a {self.kind} question needs a number of steps")
        if self.steps is not None and (self.kind not in ("reach", "cumulative", "instant")
                                       or self.steps < 0):
            raise ValueError(f"steps={self.steps!r}: a number of steps >= 0 bounds a reach, "
                             "cumulative or instant question")
        if self.through is not None and self.kind != "reach":
            raise ValueError("through= (phi U psi) is for a reach question")
        if self.over not in (None, "min", "max", "sum"):
            raise ValueError(f"over={self.over!r}: use min, max or sum")

    @property
    def extreme(self) -> bool:
        """Whether the answer is the least or greatest over the start's states (each
        state's own value needed, where there are several)."""
        return self.over in ("min", "max")

    @property
    def stepped(self) -> bool:
        """Whether the question is answered by stepping the chain a fixed number of
        steps (:mod:`ladders.solver.chains.steps`), not by a linear system."""
        return self.kind in STEPPED or (self.kind == "reach" and self.steps is not None)

    def describe(self) -> str:
        """The question in words, for output."""
        if self.text:
            return self.text
        if self.kind == "absorb":
            return "where the chain ends, and the expected steps"
        bound = "" if self.steps is None else f"<={self.steps}"
        if self.kind == "reach":
            left = "F" if self.through is None else f'"{self.through}" U'
            return f'P=? [{left}{bound} "{self.target}"]'
        if self.kind == "next":
            return f'P=? [X "{self.target}"]'
        if self.kind == "steady":
            return f'S=? ["{self.target}"]'
        what = f'R{{"{self.reward}"}}' if self.reward else "T"
        if self.kind == "cumulative":
            return f"{what}=? [C<={self.steps}]"
        if self.kind == "instant":
            return f"{what}=? [I={self.steps}]"
        return f'{what}=? [F "{self.target}"]'

    @property
    def answer_name(self) -> str:
        """How the answer of a ``reach`` or ``reward`` question is named: the property's
        own name (``p1`` of ``p1: P=? [F s=5]``), else the question in words."""
        head, sep, _ = self.text.partition(": ")
        if sep and head and " " not in head:
            return head
        return self.describe()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "target": self.target, "reward": self.reward,
                               "text": self.text}
        if self.compare is not None:
            out["compare"] = [self.compare[0], str(self.compare[1])]
        if self.over is not None:
            out["over"] = self.over
        if self.through is not None:
            out["through"] = self.through
        if self.steps is not None:
            out["steps"] = self.steps
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Question:
        from ladders.solver.exact import str_to_fraction
        compare = data.get("compare")
        return cls(kind=data["kind"], target=data.get("target"), reward=data.get("reward"),
                   text=data.get("text", ""),
                   compare=None if compare is None else (compare[0], str_to_fraction(compare[1])),
                   over=data.get("over"), through=data.get("through"), steps=data.get("steps"))


#: An answer known without solving: the chain misses its target with positive
#: probability, so the expectation diverges (Storm prints ``inf``; its exact mode and
#: ``--json`` here: ``"Infinity"``).
INFINITY = "Infinity"


@dataclass(frozen=True)
class Plan:
    """A question made into a system: ``unknowns`` (state indices of ``U`` in order,
    the start row last when there is one), the system's columns (``columns``: names of
    the answers the system solves for), and the answers known without it (``known``:
    name -> an ``mpq`` or :data:`INFINITY`), in the order ``names``. ``hits``: for each
    probability answer, the states where its value is 1 (its label's states, or the
    absorbing states of its name: :attr:`Chain.end_names`). ``start``: the
    distribution the system's target averages over (the chain's, or for a least
    expectation over several initial states, the chain's over those whose expectation
    is finite)."""

    unknowns: np.ndarray
    start_row: bool
    columns: tuple[str, ...]
    known: dict[str, mpq | str]
    names: tuple[str, ...]
    hits: dict[str, np.ndarray]
    start: tuple[tuple[int, mpq], ...]


def transpose(chain: Chain) -> tuple[np.ndarray, np.ndarray]:
    """The predecessors of every state (CSR of ``P^T``'s pattern), each list in
    increasing order (a counting sort, compiled)."""
    from ladders.solver.chains.components import transposed
    return transposed(np.asarray(chain.indptr, dtype=np.int64),
                      np.asarray(chain.indices, dtype=np.int64))


def search(indptr: np.ndarray, indices: np.ndarray, seeds: np.ndarray,
           through: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the states reached from ``seeds`` (a mask) along the pattern
    ``indptr, indices`` (forward: the chain's; backward: :func:`transpose`'s),
    expanding only states where ``through`` holds (None: all). Compiled: one pass,
    ``O(n + nnz)`` (a model checker's chain is hundreds of levels deep, and a step of
    NumPy a level cost more than the whole search)."""
    seen = seeds.copy()
    every = np.ones(len(seeds), dtype=np.bool_) if through is None else through
    from ladders.solver.chains.components import reach
    reach(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64), seen, every)
    return seen


def start_mask(chain: Chain) -> np.ndarray:
    mask = np.zeros(chain.size, dtype=bool)
    mask[[i for i, _ in chain.start]] = True
    return mask


def doomed_states(chain: Chain, target: np.ndarray, back: tuple[np.ndarray, np.ndarray],
                  can_reach: np.ndarray) -> np.ndarray:
    """Mask of the states whose expectation until ``target`` is infinite: outside the
    target, they reach, without passing it, a state that cannot reach it (``Prob1``
    fails there: Baier and Katoen, Algorithm 46)."""
    return search(*back, ~can_reach, ~target) & ~target


def plan_question(chain: Chain, question: Question) -> Plan:
    """The unknowns, columns and known answers of ``question`` (see the module
    docstring); a :class:`ChainError` names a label or reward the chain does not have."""
    back = transpose(chain)
    starts = start_mask(chain)
    if question.kind == "absorb":
        stop = chain.absorbing
        reachable = search(chain.indptr, chain.indices, starts, ~stop)
        can_end = search(*back, reachable & stop)
        unknowns = reachable & ~stop & can_end
        groups = chain.end_names
        names = [name for name, members in groups.items() if np.any(reachable[members])]
        # absorbed with probability 1 from the start: no reachable state is cut off
        # from every absorbing state
        certain = not np.any(reachable & ~stop & ~can_end)
        known: dict[str, mpq | str] = {}
        columns = list(names)
        if certain:
            columns.append("steps")
        else:
            known["steps"] = INFINITY
        entries = (int(unknowns.sum()) + 1) * len(columns)
        if entries > MAX_RHS_ENTRIES:
            raise ChainError(
                f"{chain.name}: where the chain ends is {len(names):,} answers (one for each "
                f"label of absorbing states, or unlabelled absorbing state) over "
                f"{int(unknowns.sum()):,} unknown states: {entries:,} right-hand-side entries, "
                f"past the limit of {MAX_RHS_ENTRIES:,}; ask for the answer you need with "
                "--target LABEL, or give the absorbing states you care about a label")
        return Plan(np.flatnonzero(unknowns), not _single_unknown(chain.start, unknowns),
                    tuple(columns), known, tuple([*names, "steps"]),
                    {name: groups[name] for name in names}, chain.start)
    if question.stepped:
        return _stepped_plan(chain, question)
    if question.kind == "steady":
        raise ValueError("a long-run question is a reach question of its long-run chain "
                         "(ladders.solver.chains.long_run; ask_chain makes it)")
    target = chain.label_mask(question.target)  # type: ignore[arg-type]
    name = question.answer_name
    if question.kind == "reach":
        # phi U psi: a path goes on through phi and not psi (F psi: through every state)
        alive = ~target if question.through is None else chain.label_mask(question.through) & ~target
        can_reach = search(*back, target, target | alive) & (target | alive)
        reachable = search(chain.indptr, chain.indices, starts, alive)
        unknowns = reachable & alive & can_reach
        return Plan(np.flatnonzero(unknowns), not _single_unknown(chain.start, unknowns),
                    (name,), {}, (name,), {name: np.flatnonzero(target)}, chain.start)
    _check_reward(chain, question)
    can_reach = search(*back, target)
    doomed = doomed_states(chain, target, back, can_reach)
    start = chain.start
    if question.over == "min" and len(start) > 1:
        # the least over the initial states: those with a finite expectation, if any
        finite = [(i, p) for i, p in start if not doomed[i]]
        if finite:
            total = sum((p for _, p in finite), mpq(0))
            start = tuple((i, p / total) for i, p in finite)
    if any(doomed[i] for i, _ in start):
        return Plan(np.empty(0, dtype=np.int64), False, (), {name: INFINITY}, (name,), {},
                    start)
    mask = np.zeros(chain.size, dtype=bool)
    mask[[i for i, _ in start]] = True
    unknowns = search(chain.indptr, chain.indices, mask, ~target) & ~target
    return Plan(np.flatnonzero(unknowns), not _single_unknown(start, unknowns), (name,), {},
                (name,), {}, start)


def _check_reward(chain: Chain, question: Question) -> None:
    """A :class:`ChainError` where the question names a reward the chain lacks."""
    if question.reward is not None and question.reward not in chain.rewards:
        known_rewards = ", ".join(sorted(chain.rewards)) or "none"
        raise ChainError(f"no reward {question.reward!r} in {chain.name}; its rewards: "
                         f"{known_rewards}")


def stepping_of(chain: Chain, question: Question) -> Stepping:
    """What a stepped question (:attr:`Question.stepped`) steps, from the chain's
    labels and rewards."""
    from ladders.solver.chains.steps import Stepping
    _check_reward(chain, question)
    goal = None if question.target is None else chain.label_mask(question.target)
    path = None if question.through is None else chain.label_mask(question.through)
    rho = None if question.reward is None else chain.rewards[question.reward]
    kind = "until" if question.kind == "reach" else question.kind
    return Stepping(kind, 1 if kind == "next" else int(question.steps),  # type: ignore[arg-type]
                    goal, path, rho)


def _stepped_plan(chain: Chain, question: Question) -> Plan:
    """The plan of a stepped question: no system, its answer known by stepping
    (:func:`~ladders.solver.chains.steps.stepped_values`): from the start
    distribution, or the least or greatest over the start states (``over``)."""
    from ladders.solver.chains.steps import stepped_values
    values = stepped_values(chain, stepping_of(chain, question))
    if question.extreme and len(chain.start) > 1:
        value = (min if question.over == "min" else max)(values.values())
    else:
        value = sum((p * values[i] for i, p in chain.start), mpq(0))
    name = question.answer_name
    return Plan(np.empty(0, dtype=np.int64), False, (), {name: value}, (name,), {}, chain.start)


def _single_unknown(start: tuple[tuple[int, mpq], ...], unknowns: np.ndarray) -> bool:
    """Whether the start is one state of ``U`` (no extra start row)."""
    return len(start) == 1 and bool(unknowns[start[0][0]])


class StateLabels(Sequence[tuple[int, ...]]):
    """The labels of a chain question's unknowns, made when read: unknown i is the
    1-tuple ``(states[i],)`` (its state), and where the system has a start row, that
    last unknown is ``(start,)`` (the chain's size, a state that is not one). A tuple
    of them cost 72 bytes and 0.25 us an unknown to make (nand 60-4: about 1.2 GB),
    and the engines read a few."""

    __slots__ = ("states", "start")

    def __init__(self, states: np.ndarray, start: int | None) -> None:
        self.states, self.start = states, start

    def __len__(self) -> int:
        return len(self.states) + (self.start is not None)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        k = len(self.states)
        if i < 0:
            i += len(self)
        if self.start is not None and i == k:
            return (self.start,)
        if not 0 <= i < k:
            raise IndexError(f"unknown {i} of {len(self):,}")
        return (int(self.states[i]),)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        yield from zip(self.states.tolist())
        if self.start is not None:
            yield (self.start,)


def build_system(chain: Chain, question: Question, plan: Plan) -> LinearSystem:
    """``A x = B`` of ``question`` on ``plan``'s unknowns (see the module docstring);
    ``OverflowError`` where an entry needs more than 62 bits.

    Whole arrays at once, no Python step a row or a transition: the transitions of
    ``U``'s rows are gathered from the chain's CSR arrays, an entry ``-f_i c_ij`` goes
    to ``A`` where ``j`` is in ``U`` and to ``B``'s column of every answer that is 1
    on ``j`` otherwise, and a self-loop ``c_ii`` is taken off the diagonal
    ``f_i d_i`` (``f_i``: the reward's denominator at i, else 1). The arithmetic is
    in ``int64`` where the largest ``d_i f_i`` and ``d_i rho_num(i)`` (every entry
    and right-hand side is at most one of them in size) fit in 62 bits, else in
    Python integers, checked entry by entry.

    Each entry is put in its place in ``A``'s rows by counting, not by a sort: a row
    of the chain is in increasing order of its states (then so are the unknowns it
    reaches), and its diagonal goes after the entries to its left (a chain whose rows
    are not in order is sorted first). The indices in between are 32-bit where the
    chain allows, and each is freed once read (nand 40-4: the system's stage peaked
    at 1.26 GB above its start, with a sort of every entry)."""
    n = chain.size
    index = np.int32 if max(n, chain.nnz) < 1 << 31 else np.int64
    rows_u = np.asarray(plan.unknowns, dtype=np.int64)
    k, m = len(rows_u), len(plan.columns)
    size = k + int(plan.start_row)
    pos = np.full(n, -1, dtype=index)
    pos[rows_u] = np.arange(k, dtype=index)
    den = chain.denominators[rows_u].astype(np.int64)
    # per-row scale f (the reward's denominator) and the expectation's right-hand side
    scale = None
    expect = None
    if question.kind == "reward" and question.reward is not None:
        rnum, rden = chain.rewards[question.reward]
        scale = rden[rows_u].astype(np.int64)
        expect = (den, rnum[rows_u].astype(np.int64))
    elif question.kind == "reward" or "steps" in plan.columns:
        expect = (den, np.ones(k, dtype=np.int64))
    steps_col = plan.columns.index("steps") if "steps" in plan.columns else (
        0 if question.kind == "reward" else -1)
    limit = MAX_ROW_DENOMINATOR
    widest = _largest(den) * max(1 if scale is None else _largest(scale),
                                 _largest(expect[1]) if expect else 1)
    kind = np.int64 if widest <= limit else object
    # the transitions of U's rows, row by row: owner r, destination j, numerator c
    starts = chain.indptr[rows_u]
    lengths = chain.indptr[rows_u + 1] - starts
    total = int(lengths.sum())
    owner = np.repeat(np.arange(k, dtype=index), lengths)
    flat = np.repeat((starts - np.cumsum(lengths) + lengths).astype(index), lengths)
    flat += np.arange(total, dtype=index)
    del starts, lengths
    dest = pos[chain.indices[flat]]
    weight = chain.numerators[flat].astype(kind)
    if scale is not None:
        weight *= scale.astype(kind)[owner]
    inside = dest >= 0
    loop = inside & (dest == owner)
    diagonal = den.astype(kind) * (1 if scale is None else scale.astype(kind))
    np.subtract.at(diagonal, owner[loop], weight[loop])
    rhs = np.zeros((size, max(m, 1)), dtype=kind)
    hit_columns = [(c, plan.hits[name]) for c, name in enumerate(plan.columns)
                   if name in plan.hits]
    if hit_columns:
        outside = ~inside
        exits, exit_owner = chain.indices[flat[outside]], owner[outside]
        exit_weight = weight[outside]
        del outside
        for c, members in hit_columns:
            hit = np.zeros(n, dtype=bool)
            hit[members] = True
            chosen = hit[exits]
            np.add.at(rhs[:, c], exit_owner[chosen], exit_weight[chosen])
        del exits, exit_owner, exit_weight, hit, chosen
    del flat
    if expect is not None and steps_col >= 0:
        rhs[:k, steps_col] += expect[0].astype(kind) * expect[1].astype(kind)
    inside &= ~loop
    inside &= weight != 0
    del loop
    owner, dest, weight = owner[inside], dest[inside], weight[inside]
    del inside
    weight = -weight
    if len(owner) > 1 and np.any((np.diff(dest) <= 0) & (np.diff(owner) == 0)):
        order = np.lexsort((dest, owner))  # a chain whose rows are not in order
        owner, dest, weight = owner[order], dest[order], weight[order]
        del order
    # the start row, last: its entries at the start's unknowns, then its diagonal
    start_cols = np.empty(0, dtype=np.int64)
    start_values = np.empty(0, dtype=kind)
    start_diagonal = None
    if plan.start_row:
        d = 1
        for _, p in plan.start:
            d = math.lcm(d, int(p.denominator))
        starts_at = np.array([i for i, _ in plan.start], dtype=np.int64)
        w = [int(p.numerator) * (d // int(p.denominator)) for _, p in plan.start]
        if max([d, *w]) > limit:
            raise OverflowError(f"{chain.name}: the start distribution's common denominator "
                                "needs more than 62 bits")
        w = np.array(w, dtype=kind)
        at = pos[starts_at].astype(np.int64)
        for c, name in enumerate(plan.columns):
            if name in plan.hits:
                hit = np.zeros(n, dtype=bool)
                hit[plan.hits[name]] = True
                rhs[k, c] = w[(at < 0) & hit[starts_at]].sum()
        keep = (at >= 0) & (w != 0)
        order = np.argsort(at[keep], kind="stable")
        start_cols, start_values = at[keep][order], -w[keep][order]
        start_diagonal = np.array([d], dtype=kind)
    target = k if plan.start_row else int(pos[plan.start[0][0]])
    del pos
    keep_diagonal = diagonal != 0
    if kind is object:
        if max(_largest(weight), _largest(diagonal), _largest(start_values),
               _largest(rhs)) > limit:
            raise OverflowError(f"{chain.name}: an entry of the system needs more than 62 bits "
                                "(a row's denominator times a reward's); scale the rewards")
    counts = np.zeros(size, dtype=np.int64)
    counts[:k] = np.bincount(owner, minlength=k) + keep_diagonal
    if plan.start_row:
        counts[k] = len(start_cols) + 1
    indptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    del counts
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    data = np.empty(int(indptr[-1]), dtype=np.int64)
    # an entry's place: its row's start, its rank among the row's entries off the
    # diagonal, and one more where it lies right of the diagonal
    first = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=k), out=first[1:])
    right = dest > owner
    left = np.bincount(owner[~right], minlength=k)
    place = np.arange(len(owner), dtype=np.int64)
    place -= first[owner]
    place += indptr[owner]
    place += right
    del first, right
    indices[place] = dest
    data[place] = weight
    del place, owner, dest, weight
    rows = np.flatnonzero(keep_diagonal)
    place = indptr[rows] + left[rows]
    indices[place] = rows
    data[place] = diagonal[rows]
    if plan.start_row:
        lo = int(indptr[k])
        indices[lo:lo + len(start_cols)] = start_cols
        data[lo:lo + len(start_cols)] = start_values
        indices[-1], data[-1] = k, start_diagonal[0]
    labels = StateLabels(rows_u, n if plan.start_row else None)
    return LinearSystem(indptr=indptr, indices=indices, data=data, rhs=rhs.astype(np.int64, copy=False),
                        labels=labels, target=target,
                        description=f"{chain.name}: {question.describe()}")


def _largest(values: np.ndarray) -> int:
    """The largest magnitude among ``values`` as a Python integer (0 if none)."""
    return max((abs(int(v)) for v in (values.max(initial=0), values.min(initial=0))), default=0)


def answers(plan: Plan, values: list[mpq]) -> dict[str, mpq | str]:
    """Every answer by name, in order: the system's ``values`` (one per column) and
    the known ones."""
    solved = dict(zip(plan.columns, values))
    return {name: solved[name] if name in solved else plan.known[name] for name in plan.names}


def state_values(plan: Plan, column: int,
                 solution: Sequence[mpq] | Mapping[int, mpq]) -> list[mpq]:
    """The answer of ``column`` from each state of the plan's start, given the
    system's ``solution`` (one value per unknown, in ``plan.unknowns`` order, or only the
    start's unknowns by their position, as the component solve gives them): an
    unknown's value, or the known value outside ``U`` (1 on the answer's hits, 0
    elsewhere)."""
    pos = {int(i): k for k, i in enumerate(plan.unknowns.tolist())}
    name = plan.columns[column]
    hit = set(plan.hits[name].tolist()) if name in plan.hits else set()
    return [solution[pos[i]] if i in pos else mpq(1 if i in hit else 0)
            for i, _ in plan.start]
