"""The long run, ``S=? [phi]``: the share of time a chain spends in ``phi`` in the
long run, as Storm gives it for a Markov chain, made into a ``reach`` question.

A finite chain ends, with probability 1, in one of its bottom strongly connected
components ``B_1 .. B_m`` (components no transition leaves), and in ``B_i`` it spends
the share ``w_i = sum_{s in B_i, s in phi} pi_i(s)`` of its time, ``pi_i`` the unique
stationary distribution of ``B_i`` (``pi_i P = pi_i``, ``sum pi_i = 1``: the Cesaro
limit, periodic components included). So

``S(phi) = sum_i P(F B_i) w_i``

(Baier and Katoen, *Principles of Model Checking*, 2008, section 10.5). That is the
probability of reaching ``yes`` in the *long-run chain*: the chain with two absorbing
states added, ``yes`` and ``no``, and every state of ``B_i`` moving to ``yes`` with
probability ``w_i`` and to ``no`` otherwise (:func:`long_run_chain`;
:func:`~ladders.solver.chain_problem.ask_chain` asks it of that chain),
so the engines, the bounds and the residue check answer and check the reach part as
any other; the ``w_i`` are found here, exactly:

- a component wholly inside ``phi`` (or outside) has ``w_i = 1`` (``0``), no
  distribution needed (an absorbing state is one);
- otherwise, up to :data:`REDUCTION_STATES` states, ``pi_i`` by the state reduction of
  Grassmann, Taksar and Heyman (1985), in exact rationals: no subtraction, no pivot to
  choose, sparse rows; then checked exactly, ``pi_i P = pi_i`` and ``sum pi_i = 1``,
  before it is used; beyond, ``w_i`` alone as the target of a sparse integer system
  that the caller's engine solves (the problems pass the modular engine, whose
  solution is certified: :func:`share_by_system`).

A component of more than :data:`MAX_COMPONENT` states is refused with its size, and
so is a share whose denominator is beyond a row's 62 bits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from ladders.solver.chains.model import MAX_ROW_DENOMINATOR, Chain, ChainError
from ladders.solver.chains.questions import Question, search, start_mask
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem

#: Most states of a bottom component whose stationary distribution is found by state
#: reduction (it costs up to the cube of its size in rational operations: a product of
#: a 3-state cycle and a 100-state ring, 300 states, took 4.3 s on this project's
#: loaded 2-core machine, 150 states 0.15 s); a larger one's share is solved for as a
#: sparse integer system by the modular engine (:func:`share_by_system`: 150 states
#: 0.11 s, 9,000 states 30 s on the same machine).
REDUCTION_STATES = 100
#: Most states of a bottom component whose share is found at all.
MAX_COMPONENT = 20_000
#: The label of the long-run chain's ``yes`` state.
LONG_RUN = "long run"
#: The names of the two states added.
YES, NO = "(long run: in phi)", "(long run: not in phi)"


class _Named(Sequence[str]):
    """A chain's state names and two more (a chain's names may be made on demand)."""

    def __init__(self, base: Sequence[str], extra: tuple[str, ...]) -> None:
        self.base, self.extra = base, extra

    def __len__(self) -> int:
        return len(self.base) + len(self.extra)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        n = len(self.base)
        return self.base[i] if i < n else self.extra[i - n]

    def __iter__(self) -> Iterator[str]:
        yield from self.base
        yield from self.extra


def bottom_components(chain: Chain) -> list[np.ndarray]:
    """The bottom strongly connected components reachable from the start, each as its
    sorted state indices (Tarjan's components, :mod:`.components`)."""
    from ladders.solver.chains.components import strong_components
    reachable = search(chain.indptr, chain.indices, start_mask(chain))
    parts = strong_components(np.asarray(chain.indptr, dtype=np.int64),
                              np.asarray(chain.indices, dtype=np.int64))
    of = parts.of
    owner = np.repeat(np.arange(chain.size, dtype=np.int64), np.diff(chain.indptr))
    leaves = np.zeros(parts.count, dtype=bool)
    leaves[of[owner[of[owner] != of[chain.indices]]]] = True
    out = []
    for c in np.unique(of[reachable]).tolist():
        if not leaves[c]:
            out.append(np.sort(parts.order[parts.start[c]:parts.start[c + 1]]))
    return out


def stationary(chain: Chain, states: np.ndarray) -> dict[int, mpq]:
    """The stationary distribution of the closed, irreducible set ``states``, by state
    reduction (Grassmann, Taksar and Heyman), checked exactly (``pi P = pi``,
    ``sum pi = 1``)."""
    members = states.tolist()
    place = {s: k for k, s in enumerate(members)}
    n = len(members)
    rows: list[dict[int, mpq]] = []
    for s in members:
        row = {place[j]: p for j, p in chain.row(s) if j != s}
        rows.append(row)
    cols: list[set[int]] = [set() for _ in range(n)]
    for i, row in enumerate(rows):
        for j in row:
            cols[j].add(i)
    exits: list[mpq] = [mpq(0)] * n
    # reduce the states n-1 .. 1 in turn: state m's mass is handed to the states left
    for m in range(n - 1, 0, -1):
        row = {j: p for j, p in rows[m].items() if j < m}
        total = sum(row.values(), mpq(0))
        exits[m] = total
        for i in [i for i in cols[m] if i < m]:
            through = rows[i][m] / total  # kept: the distribution is read back from it
            for j, p in row.items():
                if j != i:
                    rows[i][j] = rows[i].get(j, mpq(0)) + through * p
                    cols[j].add(i)
    pi = [mpq(0)] * n
    pi[0] = mpq(1)
    for m in range(1, n):
        pi[m] = sum((pi[i] * rows[i][m] for i in cols[m] if i < m and m in rows[i]), mpq(0)) / exits[m]
    total = sum(pi, mpq(0))
    pi = [p / total for p in pi]
    # the check: pi P = pi on the set, exactly
    inflow = [mpq(0)] * n
    for k, s in enumerate(members):
        for j, p in chain.row(s):
            if j not in place:
                raise ChainError(f"{chain.name}: state {chain.states[s]!r} leaves its bottom "
                                 "component")
            inflow[place[j]] += pi[k] * p
    if inflow != pi or sum(pi, mpq(0)) != 1:
        raise RuntimeError(f"{chain.name}: the stationary distribution of a bottom component "
                           "fails pi P = pi; report this as a bug")
    return dict(zip(members, pi))


def share_by_system(chain: Chain, part: np.ndarray, inside: np.ndarray,
                    solve: Callable[[LinearSystem], mpq]) -> mpq:
    """The long-run share ``w = sum_{s in part, inside} pi(s)`` of the closed,
    irreducible set ``part``, the target of a sparse integer system that ``solve``
    solves exactly (the caller's engine: the problems pass the modular engine's p-adic
    lifting, certified ``A x = b`` in integers; the chains rank below the engines): with
    ``y_i = pi_i / d_i`` (``d_i`` row i's denominator, so every coefficient is one of
    the chain's integers), the balance of every state but the first,
    ``sum_i c_ij y_i - d_j y_j = 0``, the normalisation ``sum_i d_i y_i = 1``, and the
    target row ``w - sum_{i inside} d_i y_i = 0``."""
    members = part.tolist()
    place = {s: k for k, s in enumerate(members)}
    n = len(members)
    dens = [int(d) for d in chain.denominators[part].tolist()]
    balance: list[dict[int, int]] = [{} for _ in range(n)]
    for k, s in enumerate(members):
        lo, hi = int(chain.indptr[s]), int(chain.indptr[s + 1])
        for j, c in zip(chain.indices[lo:hi].tolist(), chain.numerators[lo:hi].tolist()):
            row = balance[place[j]]
            row[k] = row.get(k, 0) + int(c)
    for k in range(n):
        balance[k][k] = balance[k].get(k, 0) - dens[k]
    balance[0] = {k: d for k, d in enumerate(dens)}  # the first balance is implied: normalise
    target = {k: -dens[k] for k in np.flatnonzero(inside).tolist()}
    target[n] = 1
    rows = [list(row.items()) for row in balance] + [list(target.items())]
    rhs = np.zeros((n + 1, 1), dtype=np.int64)
    rhs[0, 0] = 1
    system = LinearSystem.from_rows(rows, rhs, [(k,) for k in range(n + 1)], n,
                                    f"{chain.name}: the long-run share of a bottom component")
    return mpq(solve(system))


def long_run_chain(chain: Chain, question: Question,
                   solve: Callable[[LinearSystem], mpq] | None = None) -> Chain:
    """The long-run chain of ``question`` (``steady``, its ``target`` phi; module
    docstring), whose ``yes`` state is labelled :data:`LONG_RUN`; ``solve``: the exact
    solver of a system's target for a component beyond :data:`REDUCTION_STATES`
    states (None: such a component is refused)."""
    phi = chain.label_mask(question.target)  # type: ignore[arg-type]
    n = chain.size
    yes, no = n, n + 1
    share: dict[int, mpq] = {}
    components = bottom_components(chain)
    solved = 0
    for part in components:
        inside = phi[part]
        if inside.all() or not inside.any():
            w = mpq(1 if inside.all() else 0)
        else:
            if len(part) > MAX_COMPONENT:
                raise ChainError(f"{chain.name}: {question.describe()}: a bottom component of "
                                 f"{len(part):,} states, part in phi and part not; ladders finds "
                                 f"the long run of components up to {MAX_COMPONENT:,} states")
            if len(part) <= REDUCTION_STATES:
                pi = stationary(chain, part)
                w = sum((pi[s] for s in part[inside].tolist()), mpq(0))
            elif solve is None:
                raise ChainError(f"{chain.name}: {question.describe()}: a bottom component of "
                                 f"{len(part):,} states, part in phi and part not, and no solver "
                                 f"for it given (up to {REDUCTION_STATES:,} states without one)")
            else:
                w = share_by_system(chain, part, inside, solve)
            solved += 1
        if w.denominator > MAX_ROW_DENOMINATOR:
            raise ChainError(f"{chain.name}: {question.describe()}: a bottom component's long-run "
                             f"share has a denominator of {len(str(w.denominator))} digits, "
                             "beyond the 62 bits of a row of the chain")
        for s in part.tolist():
            share[s] = w
    # the rows: every state outside the bottom components keeps its own; a state in one
    # moves to yes with its component's share, to no with the rest; yes and no stay
    lengths = np.diff(chain.indptr).astype(np.int64)
    in_bottom = np.zeros(n, dtype=bool)
    in_bottom[list(share)] = True
    new_rows = {s: [(yes, w), (no, 1 - w)] for s, w in share.items()}
    new_rows = {s: [(j, p) for j, p in row if p] for s, row in new_rows.items()}
    counts = lengths.copy()
    for s, row in new_rows.items():
        counts[s] = len(row)
    counts = np.concatenate([counts, [1, 1]])
    indptr = np.zeros(n + 3, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int64)
    numerators = np.empty(int(indptr[-1]), dtype=np.int64)
    denominators = np.concatenate([np.asarray(chain.denominators, dtype=np.int64), [1, 1]])
    kept = np.flatnonzero(~in_bottom)
    k_len = lengths[kept]
    total = int(k_len.sum())
    shift = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(k_len) - k_len, k_len)
    old = np.repeat(chain.indptr[kept], k_len) + shift
    new = np.repeat(indptr[kept], k_len) + shift
    indices[new] = chain.indices[old]
    numerators[new] = chain.numerators[old]
    for s, row in new_rows.items():
        den = int(share[s].denominator)
        denominators[s] = den
        at = int(indptr[s])
        for k, (j, p) in enumerate(row):
            indices[at + k] = j
            numerators[at + k] = int(p.numerator) * (den // int(p.denominator))
    indices[indptr[n]], numerators[indptr[n]] = yes, 1
    indices[indptr[n + 1]], numerators[indptr[n + 1]] = no, 1
    rewards = {name: (np.concatenate([np.asarray(num), [0, 0]]).astype(np.asarray(num).dtype),
                      np.concatenate([np.asarray(den), [1, 1]]).astype(np.asarray(den).dtype))
               for name, (num, den) in chain.rewards.items()}
    labels = {**chain.labels, LONG_RUN: np.array([yes], dtype=np.int64)}
    note = (f"{question.describe()}: {len(components):,} bottom component(s) reachable, "
            f"{solved:,} with phi on part of it, its long-run share exact (by state reduction, "
            "checked pi P = pi, or a certified system); answered as the probability of reaching "
            f"{YES!r} (\"{LONG_RUN}\"), whose chain has 2 states more")
    return dataclasses.replace(chain, states=_Named(chain.states, (YES, NO)), indptr=indptr,
                               indices=indices, numerators=numerators, denominators=denominators,
                               labels=labels, rewards=rewards, notes=chain.notes + (note,))


def long_run_question(question: Question) -> Question:
    """The ``reach`` question the long-run chain answers for ``question``."""
    return dataclasses.replace(question, kind="reach", target=LONG_RUN,
                               text=question.text or question.describe())
