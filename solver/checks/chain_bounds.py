"""Markov bounds that bracket every answer of a chain question, proved.

Notation as in :mod:`ladders.solver.chains.questions`: ``U`` the plan's unknown states,
``Q = P|_U``, ``pi_0`` the start distribution, ``T`` the time the chain first leaves
``U``, ``x`` the answer as a function of the state (``x_a(s) = P_s(F a)``,
``x(s) = E_s[sum_{t<T} rho(X_t)]``). The check walks ``v_t = pi_0 Q^t`` forward:

- **probabilities**: ``P(F a) = sum_t (mass entering a at step t)``. The lower bound
  is the mass that entered ``a`` within N steps; the upper bound adds the mass not yet
  accounted for, ``u_N = 1 - sum_b (mass entered b)`` over every exit ``b`` (the
  targets, and the states that cannot reach one: Prob0, found again here by graph
  search, value 0). Every state of ``U`` leaves ``U`` with positive probability, so
  ``u_N`` goes to 0 geometrically.
- **expectations** (``steps``, ``R=? [F phi]``): the lower bound is the partial sum
  ``L_N = sum_{t<N} <v_t, rho>`` (``rho >= 0``); the upper bound is ``L_N + u_N M``
  with ``M >= max_{s in U} x(s)``, proved by a backward walk: ``w_t(s) = P_s(T > t)``
  and ``E_s[T] = sum_t w_t(s)`` give ``E_s[T] <= sum_{t<m} w_t(s) + w_m(s) max E[T]``,
  so once ``h = max_s w_m(s) < 1``, ``max_s E_s[T] <= max_s sum_{t<m} w_t(s) / (1 - h)``
  (at most ``m / (1 - h)``), and ``M = max_U rho`` times that. Where ``h`` is not below
  1 when the budget runs out the upper bound is unproved and the report says so.
  Infinite answers are checked by graph search: a state reachable from the start,
  before the target, cannot reach it.

Arithmetic: fixed point, Python integers scaled by ``2^B`` in NumPy object arrays,
rounded toward the bound. Forward, a term ``v_i P(i, j)`` becomes
``floor(v_i / d_i) c_ij <= v_i c_ij / d_i`` (the row's integers, exact; one division
a row); backward, ``ceil(sum_j c_sj w_j / d_s)``. Sums of integers are exact, so the
rounding needs no error analysis: with ``delta_t >= 0`` the mass the floors drop at
step t (it lies on states of ``U`` or exits), ``x(pi_0) = (entered mass, weighted) +
sum_t x(delta_t) + x(v_N)`` exactly, and ``sum_t |delta_t| + |v_N| = u_N``, the
start's mass less every exit's entered mass, an integer known exactly; each unit of it
is worth at most 1 (a probability) or ``M``. ``B`` (:func:`fixed_point_bits`) keeps
:data:`HEADROOM_BITS` bits of drops (under ``d_i`` units a row a step) below the
digits asked and :data:`~ladders.solver.checks.bounds.PIN_DIGITS` more.

**Pushed in topological order** (issue 52): the identity above holds for any order in
which mass is pushed, not only for synchronous steps. Pushing the mass ``m`` of state
i sends ``floor(m / e_i) c_ij`` to each ``j != i`` with ``e_i = d_i - c_ii`` (a
self-loop folded into the row: ``x(i) = sum_{j != i} c_ij x(j) / e_i``) and leaves
``m mod e_i < e_i`` units on i, worth at most ``x(i)``. So for a probability question
the walk's states are pushed component by component in topological order (Tarjan's
components of the walk's pattern, :mod:`ladders.solver.chains.components`; a wrong
order would only leave mass unpushed, so wider bounds, never wrong ones), sweeping a
component of several states until none of them holds ``e_i`` units or a work budget
runs out: a nearly acyclic chain is done in one pass over its transitions, compiled,
in 32-bit limbs (:func:`pushed_bounds`, :mod:`ladders.solver.checks.push`; denominators
below ``2^32``), where the
step-by-step walk costs a Python step a level (nand 40-1: 481 levels, about 1 s). The
mass left unpushed, the remainders included, is ``u`` as before. Questions with an
expectation keep the walk (their upper bound needs ``M``).

Floats were the alternative: with Higham's ``gamma_k`` for a sum of k nonnegative
terms, and ``P(i, j)`` rounded once, a step may lose ``(k + 2) 2^-53`` of its mass, so
N steps cap the agreement near ``16 - log10(N k)`` digits, short of the 16 the board
checks ask; int64 fixed point loses up to a unit ``2^-62`` per transition a step, in
all ``N nnz 2^-62``. Python integers cost about 70 ns a transition a step forward
(measured on this project's 2-core machine: 10^5 transitions, 7 ms), and as much again
backward until ``h <= 1/2``; a time budget bounds the walk, and the report says how
many digits the bounds reached within it, and whether the machine was busy.
"""

from __future__ import annotations

import math
import time
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import INFINITY, Plan, Question, search, transpose
from ladders.solver.checks.bounds import PIN_DIGITS
from ladders.solver.exact import fraction_to_decimal, mpq, mpz

#: Seconds the bounds may walk before they report the digits reached.
BOUNDS_SECONDS = 5.0
#: The forward step reads only the rows that hold mass while they are fewer than one
#: in this many unknowns (sorting their terms by destination costs more a term than the
#: whole step's precomputed grouping).
SPARSE_SUPPORT = 8
#: Bits of the fixed point beyond those of the digits asked (and :data:`PIN_DIGITS`):
#: the floors drop under ``d_i`` units per row a step, so ``2^48`` row-steps of drops
#: stay below the last digit asked.
HEADROOM_BITS = 48
#: The backward walk stops once ``h <= 1/2`` (``M`` within a factor 2 of ``max x``):
#: the upper bound is ``u_N M``, so a tighter ``M`` gains under a digit.
BACKWARD_ENOUGH = mpq(1, 2)


@dataclass(frozen=True)
class Targets:
    """What a check of ``question`` records, found from the chain and the question
    alone (:func:`question_targets`): ``slots`` (one per probability answer: its name
    and the indices of the states that end the walk with it), ``stop`` (every such
    state), ``lost`` (states that cannot reach ``stop``: value 0, and an infinite
    expectation), ``doomed`` (states whose expectation is infinite: they reach a lost
    state before ``stop``), the expectation answer ``expectation`` (its name, or None)
    with its reward ``rho`` (numerators and denominators; None: 1 a step), ``start``
    (the distribution the answers average over) and ``unknowns`` (the walk's states:
    reachable from ``start`` before ``stop``, able to reach it)."""

    slots: tuple[tuple[str, np.ndarray], ...]
    stop: np.ndarray
    lost: np.ndarray
    doomed: np.ndarray
    expectation: str | None
    rho: tuple[np.ndarray, np.ndarray] | None
    start: tuple[tuple[int, mpq], ...]
    unknowns: np.ndarray
    #: names of answers that no state answers to (a wrong name: the check fails)
    unknown_names: tuple[str, ...] = ()


def ending_groups(chain: Chain) -> dict[str, list[int]]:
    """The absorbing states by the name of their answer, found state by state: the
    rule of :attr:`~ladders.solver.chains.model.Chain.end_names` (labels other than
    ``init`` and ``deadlock`` joined by ``+``; else the state's name; else ``state
    NAME`` where a label has that name) written again on purpose, in a plain loop,
    so that the check does not read the answers' meaning from the solver's grouping."""
    members = {name: set(states.tolist()) for name, states in chain.labels.items()
               if name not in ("init", "deadlock")}
    groups: dict[str, list[int]] = {}
    for i in np.flatnonzero(chain.absorbing).tolist():
        own = sorted(name for name, states in members.items() if i in states)
        if own:
            name = "+".join(own)
        else:
            name = chain.states[i]
            if name in chain.labels:
                name = "state " + name
        groups.setdefault(name, []).append(i)
    return groups


#: The targets found for each chain (the bounds, their report and the residue check's
#: own system ask the same; on nand 40-1 each finding is about 0.2 s of searches), kept
#: as long as the chain is.
_FOUND: weakref.WeakKeyDictionary[Chain, dict[tuple[Any, ...], Targets]] = weakref.WeakKeyDictionary()


def question_targets(chain: Chain, question: Question, names: tuple[str, ...],
                     only: int | None = None) -> Targets:
    """The :class:`Targets` of ``question`` whose answers are called ``names`` (the
    absorbing states of each name by :func:`ending_groups`, then ``steps``; or the
    one answer of a ``reach`` or ``reward`` question), from the chain and the
    question alone: its own graph searches, its own start (for the least expectation
    over several initial states, those whose expectation is finite, if any; ``only``:
    the one state given). Found once a chain and question (the checks ask it up to
    three times)."""
    found = _FOUND.setdefault(chain, {})
    key = (question, tuple(names), only)
    if key not in found:
        found[key] = _find_targets(chain, question, names, only)
    return found[key]


def _find_targets(chain: Chain, question: Question, names: tuple[str, ...],
                  only: int | None) -> Targets:
    """:func:`question_targets`, found."""
    back = transpose(chain)
    unknown: list[str] = []
    if question.kind == "absorb":
        stop = chain.absorbing
        groups = ending_groups(chain)
        slots = []
        for name in names[:-1]:
            if name not in groups:
                unknown.append(name)
            slots.append((name, np.array(groups.get(name, []), dtype=np.int64)))
        expectation, rho = names[-1], None
    else:
        stop = chain.label_mask(question.target)  # type: ignore[arg-type]
        if question.kind == "reach":
            slots, expectation, rho = [(names[0], np.flatnonzero(stop))], None, None
        else:
            slots, expectation = [], names[0]
            rho = None if question.reward is None else chain.rewards[question.reward]
    goal = stop
    if question.through is not None:
        # phi U psi: a path also stops where phi fails, and is lost unless it can reach
        # psi through phi
        stop = goal | ~chain.label_mask(question.through)
    lost = ~search(*back, goal, goal | ~stop)
    doomed = search(*back, lost, ~stop) & ~stop
    start = chain.start if only is None else ((only, mpq(1)),)
    if question.kind == "reward" and question.over == "min" and len(start) > 1:
        finite = [(i, p) for i, p in start if not doomed[i]]
        if finite:
            total = sum((p for _, p in finite), mpq(0))
            start = tuple((i, p / total) for i, p in finite)
    seeds = np.zeros(chain.size, dtype=bool)
    seeds[[i for i, _ in start]] = True
    reachable = search(chain.indptr, chain.indices, seeds, ~stop)
    unknowns = np.flatnonzero(reachable & ~stop & ~lost)
    return Targets(tuple(slots), stop, lost, doomed, expectation, rho, start, unknowns,
                   tuple(unknown))


def missed_witness(chain: Chain, targets: Targets, every: bool = False) -> int | None:
    """A start state whose expectation is infinite (``targets.doomed``), or None;
    ``every``: only where every start state's is (the least over them is then
    infinite too)."""
    doomed = [i for i, _ in chain.start if targets.doomed[i]]
    if not doomed or (every and len(doomed) < len(chain.start)):
        return None
    return doomed[0]


def fixed_point_bits(chain: Chain, digits: int) -> int:
    """``B`` for ``digits`` decimals (see :data:`HEADROOM_BITS`)."""
    den_bits = int(chain.denominators.max()).bit_length() if chain.size else 1
    return math.ceil((digits + PIN_DIGITS + 2) * math.log2(10)) + den_bits + HEADROOM_BITS


def _row_entries(chain: Chain, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the CSR entries of ``rows`` (in order): the position of each entry's row in
    ``rows`` and the entry's index."""
    starts = chain.indptr[rows]
    lengths = chain.indptr[rows + 1] - starts
    src = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return src, offsets + np.arange(int(lengths.sum()), dtype=np.int64)


def _ints(values: np.ndarray) -> np.ndarray:
    """An object array of Python ints (exact, unbounded arithmetic)."""
    return values.astype(np.int64).astype(object)


def _layout(chain: Chain, targets: Targets) -> tuple[np.ndarray, np.ndarray, int]:
    """Where a walk keeps each state: ``pos`` (the state's place among the walk's
    unknowns, -1 outside them) and ``slot`` (outside them, the slot its mass is entered
    in: a probability answer's, then other targets', then the lost states', -1 for
    none), and the lost states' slot."""
    u = targets.unknowns
    pos = np.full(chain.size, -1, dtype=np.int64)
    pos[u] = np.arange(len(u), dtype=np.int64)
    slot = np.full(chain.size, -1, dtype=np.int64)
    for k, (_, states) in enumerate(targets.slots):
        slot[states] = k
    exit_slot, lost_slot = len(targets.slots), len(targets.slots) + 1
    slot[targets.stop & (slot < 0)] = exit_slot
    slot[targets.lost & (slot < 0) & (pos < 0)] = lost_slot
    return pos, slot, lost_slot


class _Walk:
    """The fixed-point walks of one question (module docstring): :meth:`forward` and
    :meth:`backward` each take one step; everything is in units of ``2^-bits``."""

    def __init__(self, chain: Chain, targets: Targets, bits: int) -> None:
        u = targets.unknowns
        nu = len(u)
        self.scale = 1 << bits
        self.nu = nu
        pos, slot, lost_slot = _layout(chain, targets)
        src, entries = _row_entries(chain, u)
        dst = chain.indices[entries]
        dst_pos, dst_slot = pos[dst], slot[dst]
        inside = dst_pos >= 0
        # every successor of U is in U, a target or lost (U is closed so by its search)
        code = np.where(inside, dst_pos, nu + dst_slot)
        self.den = _ints(chain.denominators[u])
        # forward: entries grouped by destination code (the unknowns first, then slots)
        order = np.argsort(code, kind="stable")
        sorted_code = code[order]
        self.f_src = src[order]
        self.f_c = _ints(chain.numerators[entries][order])
        self.f_starts = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]]) \
            if len(sorted_code) else np.empty(0, dtype=np.int64)
        group = sorted_code[self.f_starts]
        self.f_in_u = int(np.count_nonzero(group < nu))
        self.f_u = group[:self.f_in_u]
        self.f_slots = group[self.f_in_u:] - nu
        # forward from a few states: the entries grouped by source (CSR order)
        self.s_ptr = np.r_[0, np.cumsum(np.bincount(src, minlength=nu))].astype(np.int64)
        self.s_code = code
        self.s_c = _ints(chain.numerators[entries])
        # backward: the entries that stay in U, grouped by source (CSR order)
        b_src = src[inside]
        self.b_dst = dst_pos[inside]
        self.b_c = _ints(chain.numerators[entries][inside])
        self.b_starts = np.flatnonzero(np.r_[True, b_src[1:] != b_src[:-1]]) \
            if len(b_src) else np.empty(0, dtype=np.int64)
        self.b_rows = b_src[self.b_starts]
        # the start distribution, each probability floored to the fixed point
        self.v = np.zeros(nu, dtype=object)
        self.entered = np.zeros(lost_slot + 1, dtype=object)
        for i, p in targets.start:
            amount = (int(p.numerator) << bits) // int(p.denominator)
            if pos[i] >= 0:
                self.v[pos[i]] += amount
            else:
                self.entered[slot[i]] += amount
        self.occupied = np.zeros(nu, dtype=object)
        self.support = np.flatnonzero(self.v)
        self.steps = 0
        self.w = np.full(nu, self.scale, dtype=object)
        self.w_sum = np.zeros(nu, dtype=object)
        self.back_steps = 0
        self.h = mpq(1)
        self.most_steps: mpq | None = None if nu else mpq(0)

    @property
    def unaccounted(self) -> int:
        """``u_N`` in units: the start's mass less all mass entered in an exit."""
        return self.scale - int(self.entered.sum())

    def forward(self) -> None:
        """``v_{t+1}(j) = sum_i floor(v_i / d_i) c_ij``, the mass leaving ``U`` entered
        in its slot, ``v_t`` added to the occupation ``sum_{t<N} v_t``.

        Where the mass lies on few states (:data:`SPARSE_SUPPORT`; a model checker's
        chain moves it along a front: nand 20-2 holds it on 314 of 125,664 unknowns a
        step on average), only their rows are read; the sums are the same integers."""
        nz = self.support
        if len(nz) * SPARSE_SUPPORT >= self.nu:
            self.occupied += self.v
            v = np.zeros(self.nu, dtype=object)
            if len(self.f_c):
                sums = np.add.reduceat((self.v // self.den)[self.f_src] * self.f_c,
                                       self.f_starts)
                v[self.f_u] = sums[:self.f_in_u]
                self.entered[self.f_slots] += sums[self.f_in_u:]
            self.v = v
            self.support = np.flatnonzero(v)
        elif len(nz):
            self.occupied[nz] += self.v[nz]
            starts = self.s_ptr[nz]
            lengths = self.s_ptr[nz + 1] - starts
            total = int(lengths.sum())
            offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
            entries = offsets + np.arange(total, dtype=np.int64)
            terms = np.repeat(self.v[nz] // self.den[nz], lengths) * self.s_c[entries]
            code = self.s_code[entries]
            order = np.argsort(code, kind="stable")
            code = code[order]
            first = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if total else order
            sums = np.add.reduceat(terms[order], first) if total else terms
            code = code[first]
            inside = code < self.nu
            np.add.at(self.entered, code[~inside] - self.nu, sums[~inside])
            self.v[nz] = 0
            code, sums = code[inside], sums[inside]
            kept = sums != 0
            self.support = code[kept]
            self.v[self.support] = sums[kept]
        self.steps += 1

    def mass_left(self) -> bool:
        """Whether any mass is still inside ``U``."""
        return len(self.support) > 0

    def backward(self) -> None:
        """One backward step: ``w_{m+1}(s) = ceil(sum_j c_sj w_m(s) / d_s)`` (so
        ``w_m(s) >= P_s(T > m)``, ``w_0 = 1``) and ``S_m = sum_{t<m} w_t >= E_s[min(T, m)]``;
        then ``h = max_s w_m(s)`` and ``max_s E_s[T] <= max_s S_m(s) / (1 - h)``
        (:attr:`most_steps`; None while ``h >= 1``)."""
        self.w_sum += self.w
        w = np.zeros(self.nu, dtype=object)
        if len(self.b_c):
            w[self.b_rows] = np.add.reduceat(self.b_c * self.w[self.b_dst], self.b_starts)
        self.w = -((-w) // self.den)
        self.back_steps += 1
        if self.nu:
            top = int(self.w.max())
            self.h = mpq(top, self.scale)
            self.most_steps = (mpq(int(self.w_sum.max()), self.scale - top)
                               if top < self.scale else None)

    def reward_sum(self, rho: tuple[np.ndarray, np.ndarray] | None, unknowns: np.ndarray) -> mpq:
        """``L_N = sum_{t<N} <v_t, rho>`` exactly, grouped by the reward's denominators."""
        if rho is None:
            return mpq(int(self.occupied.sum()), self.scale)
        num, den = rho[0][unknowns], rho[1][unknowns]
        total = mpq(0)
        for d in np.unique(den).tolist():
            mask = den == d
            part = int((self.occupied[mask] * _ints(num[mask])).sum())
            total += mpq(part, self.scale * int(d))
        return total


#: Transitions the compiled push may read, as a multiple of the walk's own (one push of
#: each: a chain without cycles); sweeps of cyclic components that need more converge
#: slowly (crowds, forwarding with probability 0.8: some 500 sweeps), and the walk
#: takes the question instead, as before.
PUSH_WORK = 8
def pushed_bounds(chain: Chain, targets: Targets, bits: int) -> tuple[list[int], int, int] | None:
    """The mass entered in each slot of ``targets`` (the probability answers' slots,
    then the other exits and the lost states) and the mass left unaccounted, in units
    of ``2^-bits``, pushed in topological order (module docstring), and the
    transitions read; None where a denominator is not below ``2^32`` (the walk takes
    those)."""
    from ladders.solver.chains.components import strong_components
    from ladders.solver.checks.push import LIMB, from_limbs, push, to_limbs
    u = targets.unknowns
    nu = len(u)
    if nu and int(chain.denominators[u].max()) >> LIMB:
        return None
    pos, slot, lost_slot = _layout(chain, targets)
    # the walk's pattern among its own states, for its components (each array freed
    # once read: nand 40-4's bounds peaked 850 MB above their start)
    src, entries = _row_entries(chain, u)
    total = len(entries)
    dst = pos[chain.indices[entries]]
    del entries
    inside = dst >= 0
    sub_ptr = np.zeros(nu + 1, dtype=np.int64)
    np.cumsum(np.bincount(src[inside], minlength=nu), out=sub_ptr[1:])
    del src
    dst = dst[inside]
    del inside
    comps = strong_components(sub_ptr, dst)
    del sub_ptr, dst
    # the states renumbered in the order they are pushed, their rows gathered so: the
    # push then reads its arrays in order (Tarjan's post-order keeps a state's
    # successors near it), not the chain's rows in a jumping order
    order = comps.order
    number = np.empty(nu, dtype=np.int64)
    number[order] = np.arange(nu, dtype=np.int64)
    lengths = np.diff(chain.indptr)[u][order]
    ptr = np.zeros(nu + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    flat = np.repeat(chain.indptr[u][order] - ptr[:-1], lengths)
    start = comps.start
    del lengths, order, comps
    flat += np.arange(ptr[-1], dtype=np.int64)
    ends = chain.indices[flat]
    code = pos[ends]
    walked = code >= 0
    code[walked] = number[code[walked]]
    walked = ~walked
    code[walked] = nu + slot[ends[walked]]
    # where the start's mass goes: its states' numbers, or their slots outside
    at = {i: int(number[pos[i]]) if pos[i] >= 0 else -1 for i, _ in targets.start}
    slot_of = {i: int(slot[i]) for i, _ in targets.start}
    del ends, walked, number, pos, slot
    numerators = chain.numerators[flat].astype(np.int64, copy=False)
    del flat
    limbs = bits // LIMB + 2
    mass = np.zeros((nu, limbs), dtype=np.uint64)
    entered = np.zeros((lost_slot + 1, limbs), dtype=np.uint64)
    scale = 1 << bits
    outside = 0
    amounts: dict[int, int] = {}
    for i, p in targets.start:
        amount = (int(p.numerator) << bits) // int(p.denominator)
        if at[i] >= 0:
            k = at[i]
            mass[k] = to_limbs(from_limbs(mass[k]) + amount, limbs)
        else:
            amounts[int(slot_of[i])] = amounts.get(int(slot_of[i]), 0) + amount
            outside += amount
    read = push(ptr, code, numerators, start, mass, entered, PUSH_WORK * total + 1000)
    slots = [from_limbs(entered[k]) + amounts.get(k, 0) for k in range(lost_slot + 1)]
    return slots, scale - sum(slots), read


@dataclass(frozen=True)
class ChainBounds:
    """``lower[k] <= answer <= upper[k]`` for each answer ``names[k]`` the system
    solves for, after ``steps`` forward steps (``upper[k]`` None where unproved), in
    fixed point of ``bits`` bits; ``stopped``: why the walk ended before the bounds
    settled (None when they did); ``seconds`` and ``cpu_seconds`` it took."""

    names: tuple[str, ...]
    lower: tuple[mpq, ...]
    upper: tuple[mpq | None, ...]
    steps: int
    bits: int
    stopped: str | None
    seconds: float
    cpu_seconds: float
    #: ``walk`` (``steps`` synchronous steps) or ``push`` (pushed in topological order,
    #: ``steps`` transitions read)
    method: str = "walk"

    def agreeing(self, k: int, most: int) -> int:
        """Leading decimals (at most ``most``) that answer k's bounds share; -1 where
        their whole parts differ or the upper bound is unproved."""
        lo, up = self.lower[k], self.upper[k]
        if up is None:
            return -1
        a, b = fraction_to_decimal(lo, most), fraction_to_decimal(up, most)
        same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
        return min(most, same - a.index(".") - 1) if same > a.index(".") else -1

    def pinned(self, k: int, digits: int) -> bool:
        """Answer k's bounds straddle a decimal of at most ``digits`` places and are
        narrower than ``10^-(digits + PIN_DIGITS)`` (as
        :meth:`~ladders.solver.checks.bounds.Bounds.pinned_seats`: 1/2 pins 0.5)."""
        up = self.upper[k]
        return (up is not None and not _same(self.lower[k], up, digits)
                and (up - self.lower[k]) * mpz(10) ** (digits + PIN_DIGITS) < 1)

    def settled(self, digits: int) -> bool:
        """Every answer's bounds agree to ``digits`` decimals or pin a short decimal."""
        return all(up is not None and (_same(lo, up, digits) or self.pinned(k, digits))
                   for k, (lo, up) in enumerate(zip(self.lower, self.upper)))


def _same(lo: mpq, up: mpq, digits: int) -> bool:
    """``floor(lo 10^digits) == floor(up 10^digits)``."""
    scale = mpz(10) ** digits
    return (lo.numerator * scale) // lo.denominator == (up.numerator * scale) // up.denominator


def chain_bounds_within(chain: Chain, question: Question, plan: Plan, digits: int = 16,
                        seconds: float = BOUNDS_SECONDS, only: int | None = None) -> ChainBounds:
    """Bounds on every answer in ``plan.columns`` after the first step at which they
    agree to ``digits`` decimals (or pin a short decimal), or after ``seconds``, or when
    no mass is left to walk (module docstring). Checked about every ``N/32`` steps once
    the gap allows ``digits``; the cost is in :meth:`_Walk.forward`. Only the answers'
    names are read from ``plan``: what each means, the states walked and the start
    come from the chain and the question (:func:`question_targets`; ``only``: from
    that one state instead of the start)."""
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise ValueError(f"digits must be a whole number of at least 1, got {digits!r}")
    t0, c0 = time.monotonic(), time.process_time()
    bits = fixed_point_bits(chain, digits)
    if not plan.columns:  # every answer known without solving (Infinity): nothing to walk
        return ChainBounds((), (), (), 0, bits, None, 0.0, 0.0)
    targets = question_targets(chain, question, plan.names, only)
    expect = targets.expectation if targets.expectation in plan.columns else None
    if expect is None and (pushed := pushed_bounds(chain, targets, bits)) is not None:
        slots, left, read = pushed
        names = [name for name, _ in targets.slots]
        lower = tuple(mpq(slots[names.index(name)], 1 << bits) for name in plan.columns)
        done = ChainBounds(tuple(plan.columns), lower,
                           tuple(lo + mpq(left, 1 << bits) for lo in lower), read, bits, None,
                           time.monotonic() - t0, time.process_time() - c0, "push")
        if done.settled(digits):
            return done
    walk = _Walk(chain, targets, bits)
    rho_max = _most_reward(targets.rho, targets.unknowns)
    slot_of = {name: k for k, (name, _) in enumerate(targets.slots)}
    need = mpz(10) ** digits

    def bounds(stopped: str | None) -> ChainBounds:
        u = mpq(walk.unaccounted, walk.scale)
        lower, upper = [], []
        for name in plan.columns:
            if name == expect:
                lo = walk.reward_sum(targets.rho, targets.unknowns)
                m = mpq(0) if not u else (
                    None if walk.most_steps is None else rho_max * walk.most_steps)
                lower.append(lo)
                upper.append(None if m is None else lo + u * m)
            else:
                lo = mpq(int(walk.entered[slot_of[name]]), walk.scale)
                lower.append(lo)
                upper.append(lo + u)
        return ChainBounds(tuple(plan.columns), tuple(lower), tuple(upper), walk.steps, bits,
                           stopped, time.monotonic() - t0, time.process_time() - c0)

    def narrow() -> bool:
        """The gap allows ``digits`` decimals: ``u_N max(1, M) < 10^-digits``."""
        u = walk.unaccounted
        if not u:
            return True
        m = mpq(1)
        if expect is not None:
            if walk.most_steps is None:
                return False
            m = max(m, rho_max * walk.most_steps)
        return u * need * m.numerator < walk.scale * m.denominator

    deadline = t0 + seconds
    next_check = 0
    backward = expect is not None and walk.nu > 0
    while True:
        if walk.steps >= next_check and narrow():
            current = bounds(None)
            if current.settled(digits):
                return current
            next_check = walk.steps + max(1, walk.steps // 32)
        if time.monotonic() > deadline:
            return bounds(_budget_reason(seconds, time.process_time() - c0, walk))
        if walk.mass_left():
            walk.forward()
        elif not backward:
            current = bounds(None)
            return current if current.settled(digits) else bounds(
                "no mass is left to walk: the fixed point's drops bound the gap")
        if backward:
            walk.backward()
            backward = walk.h > BACKWARD_ENOUGH


def _most_reward(rho: tuple[np.ndarray, np.ndarray] | None, unknowns: np.ndarray) -> mpq:
    """``max_{s in U} rho(s)`` exactly (1: one a step)."""
    if rho is None:
        return mpq(1)
    num, den = rho[0][unknowns].tolist(), rho[1][unknowns].tolist()
    return max((mpq(a, b) for a, b in zip(num, den)), default=mpq(0))


def _budget_reason(seconds: float, cpu: float, walk: _Walk) -> str:
    """Why the budget ran out: the setup (a chain too big for it), a busy machine
    (this process got under half the wall time of CPU) or bounds that converge slowly."""
    spent = f"{seconds:g} s ({cpu:.1f} s of CPU) and {walk.steps:,} steps"
    if walk.steps <= 1:
        return f"the setup of the walk took the budget: {spent}; give it more time"
    if cpu < seconds / 2:
        return f"the machine was busy: {spent}"
    proved = ""
    if walk.back_steps and walk.most_steps is None:
        proved = (f"; the expectation's upper bound is unproved: after {walk.back_steps:,} "
                  f"backward steps h = max_s P_s(T > m) is still 1")
    return f"the bounds converge slowly: {spent}{proved}"


def check_chain_answers(chain: Chain, question: Question, plan: Plan,
                        values: dict[str, mpq | str], digits: int = 16,
                        budget: float = BOUNDS_SECONDS,
                        bounds: ChainBounds | None = None,
                        extremes: dict[str, mpq] | None = None) -> dict[str, Any]:
    """Compare a chain question's exact answers ``values`` (name -> ``mpq`` or
    :data:`INFINITY`) with bounds that agree to ``digits`` decimals, walked for at most
    ``budget`` seconds (``bounds``: computed beforehand, see :func:`chain_bounds_within`).

    Returns a JSON-ready report: ``check``, ``question``, ``steps``, ``bits``, the
    digits every answer's bounds agree to (``digits``; with ``digits_asked`` and
    ``stopped`` when the walk stopped first), ``seconds`` and ``cpu_seconds``, and per
    answer its ``lower_decimal`` and ``upper_decimal`` (None: unproved), ``inside``
    (``lower <= value <= upper``), ``digits`` (those its bounds share) and
    ``digits_agree`` (the value's truncated decimals equal the bounds'): a pass proves
    those digits. A short decimal pinned by its bounds passes by lying inside them
    (``pinned``). An infinite answer is checked by graph search (``checked``, with the
    state that cannot reach the target); ``passed``: every answer passed.
    """
    bounds = bounds or chain_bounds_within(chain, question, plan, digits, budget)
    settled = bounds.settled(digits)
    report: list[dict[str, Any]] = []
    passed = True
    targets = question_targets(chain, question, plan.names)
    least = question.over == "min" and len(chain.start) > 1
    for name in plan.names:
        value = values[name]
        if name in targets.unknown_names:
            entry = {"name": name, "inside": False, "digits_agree": False,
                     "checked": "no absorbing state of the chain answers to this name"}
        elif name in plan.known:
            entry = _known(chain, targets, name, value, plan.known[name], least)
        else:
            entry = _bounded(bounds, plan.columns.index(name), name, value, digits, settled)
            if name == targets.expectation and value != INFINITY:
                witness = next((i for i, _ in targets.start if targets.doomed[i]), None)
                if witness is not None:
                    entry.update(inside=False, checked=(
                        f"graph search: from {chain.states[witness]!r} a state that cannot "
                        "reach the target is reachable, so the expectation is infinite"))
        passed &= bool(entry["inside"] and entry["digits_agree"])
        report.append(entry)
    agreed = min((e["digits"] for e in report if "digits" in e), default=digits)
    out: dict[str, Any] = {"check": "chain_bounds", "question": question.describe(),
                           "steps": bounds.steps, "method": bounds.method, "bits": bounds.bits,
                           "digits": max(agreed, 0),
                           "answers": report, "passed": passed,
                           "seconds": round(bounds.seconds, 3),
                           "cpu_seconds": round(bounds.cpu_seconds, 3)}
    if question.kind == "absorb":
        out["ends"] = ends_invariant(values)
        out["passed"] = passed and out["ends"]["passed"]
    if extremes:
        out["extremes"] = check_extremes(chain, question, plan, targets, extremes, digits, budget)
        out["passed"] = out["passed"] and out["extremes"]["passed"]
    if agreed < digits:
        out.update(digits_asked=digits,
                   stopped=bounds.stopped or "the walk stopped before the bounds agreed")
    return out


#: Most start states whose least or greatest value is checked by a walk from each.
EXTREME_STARTS = 16


def check_extremes(chain: Chain, question: Question, plan: Plan, targets: Targets,
                   extremes: dict[str, mpq], digits: int, budget: float) -> dict[str, Any]:
    """The least or greatest value over the start states (``question.over``), each
    answer in ``extremes``, against bounds walked from each start state alone: the
    least lies between the least lower bound and the least upper bound (the greatest
    likewise), for at most :data:`EXTREME_STARTS` states, within ``budget`` seconds
    shared among them."""
    states = [i for i, _ in targets.start]
    if len(states) > EXTREME_STARTS:
        return {"skipped": True, "passed": True,
                "what": f"{len(states):,} start states, more than the {EXTREME_STARTS} walked one "
                        "by one"}
    pick = min if question.over == "min" else max
    walks = [chain_bounds_within(chain, question, plan, digits, budget / len(states), only=i)
             for i in states]
    entries, passed = [], True
    for name, value in extremes.items():
        k = plan.columns.index(name)
        lower = pick(w.lower[k] for w in walks)
        uppers = [w.upper[k] for w in walks]
        upper = None if any(u is None for u in uppers) and question.over == "max" else \
            pick(u for u in uppers if u is not None)
        inside = lower <= value and (upper is None or value <= upper)
        passed &= inside
        entries.append({"name": name, "value": str(value), "inside": inside,
                        "lower_decimal": fraction_to_decimal(lower, digits + 2),
                        "upper_decimal": None if upper is None else fraction_to_decimal(upper, digits + 2)})
    finite = " with a finite expectation" if len(states) < len(chain.start) else ""
    return {"passed": passed, "answers": entries, "states": len(states),
            "what": f"the {question.over} over {len(states)} start state"
                    f"{'s' if len(states) > 1 else ''}{finite} inside the {question.over} of "
                    "the bounds walked from each"}


def ends_invariant(values: dict[str, mpq | str]) -> dict[str, Any]:
    """Where a chain ends, the invariant of every absorbing chain: the probabilities
    of ending in each group of absorbing states (every answer but the last, the
    expected steps) sum to exactly 1 when the expected steps are finite (absorbed with
    probability 1), and to less than 1 when they are infinite (in a finite chain,
    ``E[T] < Infinity`` exactly when ``P(T < Infinity) = 1``)."""
    *ends, steps = values.values()
    total = sum((mpq(v) for v in ends), mpq(0))
    finite = steps != INFINITY
    ok = total == 1 if finite else total < 1
    return {"sum": str(total), "steps_finite": finite, "passed": ok,
            "what": ("the answers sum to 1" if finite else "the answers sum to less than 1")
            if ok else f"the answers sum to {total}, {'not 1' if finite else 'yet the steps are infinite'}"}


def _bounded(bounds: ChainBounds, k: int, name: str, value: mpq | str, digits: int,
             settled: bool) -> dict[str, Any]:
    """One answer's entry against its bounds (see :func:`check_chain_answers`)."""
    lo, up = bounds.lower[k], bounds.upper[k]
    pinned = settled and bounds.pinned(k, digits)
    agree = digits if settled else bounds.agreeing(k, digits)
    entry: dict[str, Any] = {"name": name, "lower_decimal": fraction_to_decimal(lo, digits + 2),
                             "upper_decimal": None if up is None
                             else fraction_to_decimal(up, digits + 2),
                             "digits": max(agree, 0)}
    if value == INFINITY:
        entry.update(inside=False, digits_agree=False,
                     note="the value is Infinity but every path reaches the target (graph search)")
        return entry
    finite = mpq(value)
    entry["inside"] = lo <= finite and (up is None or finite <= up)
    entry["digits_agree"] = pinned or agree < 0 or (
        fraction_to_decimal(finite, agree) == fraction_to_decimal(lo, agree))
    if up is None:
        entry["unproved"] = "no upper bound: h = max_s P_s(T > m) did not get below 1"
    if pinned:
        entry["pinned"] = fraction_to_decimal(up, digits).rstrip("0").rstrip(".")
    return entry


def _known(chain: Chain, targets: Targets, name: str, value: mpq | str,
           known: mpq | str, least: bool) -> dict[str, Any]:
    """An answer the plan knew without solving: Infinity, checked here by graph search
    (``least``: the least over several start states, infinite only where every one's
    is; ``ValueError`` for any other known answer, which plans do not make)."""
    if known != INFINITY:
        raise ValueError(f"{name}: the plan's answer {known} is not Infinity; only an "
                         "infinite answer is known without solving")
    witness = missed_witness(chain, targets, every=least)
    ok = value == INFINITY and witness is not None
    entry: dict[str, Any] = {"name": name, "value": str(value), "inside": ok, "digits_agree": ok}
    if witness is None:
        entry["checked"] = ("graph search: from every start state the target is reached with "
                            "probability 1" if not least else "graph search: from some start "
                            "state the target is reached with probability 1") + \
            ", so the plan's Infinity is wrong"
    else:
        entry["checked"] = (f"graph search: from {chain.states[witness]!r} a state that cannot "
                            "reach the target is reachable, so the expectation is infinite")
    return entry
