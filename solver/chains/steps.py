"""Questions over a fixed number of steps, answered exactly by stepping the chain.

Notation as in :mod:`ladders.solver.chains.questions` (``P`` the matrix, ``pi_0`` the
start, ``rho`` a state reward, ``phi``/``psi`` sets of states). PRISM's forms and their
values, as Storm gives them for a Markov chain:

- ``P=? [X psi]``: ``sum_j P(s, j) [j in psi]``, one step, whether or not ``s`` is in ``psi``;
- ``P=? [phi U<=k psi]`` (``F<=k psi`` is ``true U<=k psi``): ``x_0 = [psi]``, and
  ``x_t(s) = 1`` on ``psi``, ``0`` outside ``phi`` and ``psi``, ``(P x_{t-1})(s)``
  elsewhere; the answer is ``x_k``;
- ``R=? [C<=k]``: the reward earned in the first ``k`` steps,
  ``x_t = rho + P x_{t-1}``, ``x_0 = 0`` (``sum_{t<k} pi_0 P^t rho``);
- ``R=? [I=k]``: the reward of the state at step ``k``, ``x_t = P x_{t-1}``,
  ``x_0 = rho`` (``pi_0 P^k rho``).

:func:`stepped_values` steps backward (``x_t`` from ``x_{t-1}``, every state's value
at once: the least or greatest over several initial states needs each one);
:func:`stepped_forward` steps the distribution ``pi_t = pi_0 P^t`` forward from the
start, the other way round, and the check (:mod:`ladders.solver.checks.stepped`)
compares the two. Both keep only the states reached within ``k`` steps of the start
(a state ``d`` steps away needs ``x_{k-d}``, which needs only states ``d + 1`` away),
and both stop early where nothing can change any more (backward: ``x_t = x_{t-1}``;
forward: no mass left on the way), and both are exact integer arithmetic: every row is scaled to the common denominator
``L`` of the rows kept, so ``x_t = X_t / (R L^t)`` with integers ``X_t`` (``R``: the
reward's common denominator), one multiplication and one addition a transition a step
over Python integers (``mpz``) in NumPy object arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.exact import mpq, mpz

#: Most steps times transitions kept a stepped question is taken on (about a minute of
#: Python integer arithmetic); beyond, it is refused with the figures.
MAX_STEP_WORK = 200_000_000


@dataclass(frozen=True)
class Stepping:
    """What a stepped question steps: ``kind`` (``next``, ``until``, ``cumulative``,
    ``instant``), ``k`` steps, the masks ``goal`` (``psi``) and ``path`` (``phi``; None:
    every state) and the reward ``rho`` (numerators, denominators; None: none, or one a
    step)."""

    kind: str
    k: int
    goal: np.ndarray | None = None
    path: np.ndarray | None = None
    rho: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class _Kept:
    """The states reached within ``k`` steps (``states``, in increasing order), their
    rows scaled to the common denominator ``scale`` (CSR over the kept states' places;
    a successor beyond them points at the extra place ``len(states)``, worth 0), and
    the start's places and probabilities."""

    states: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    scale: int
    start: tuple[tuple[int, mpq], ...]


def _kept(chain: Chain, k: int) -> _Kept:
    """The states within ``k`` steps of the start and their scaled rows."""
    seen = np.zeros(chain.size, dtype=bool)
    frontier = np.array(sorted({i for i, _ in chain.start}), dtype=np.int64)
    seen[frontier] = True
    for _ in range(k):
        if not len(frontier):
            break
        nxt = np.unique(chain.indices[_entries(chain, frontier)])
        frontier = nxt[~seen[nxt]]
        seen[frontier] = True
    states = np.flatnonzero(seen)
    n = len(states)
    pos = np.full(chain.size, n, dtype=np.int64)
    pos[states] = np.arange(n, dtype=np.int64)
    lengths = (chain.indptr[states + 1] - chain.indptr[states]).astype(np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    flat = _entries(chain, states)
    dens = [int(d) for d in chain.denominators[states].tolist()]
    scale = math.lcm(*dens) if dens else 1
    factor = np.repeat(np.array([mpz(scale // d) for d in dens], dtype=object), lengths)
    weights = np.array([mpz(int(c)) for c in chain.numerators[flat].tolist()], dtype=object) * factor
    start = tuple((int(pos[i]), p) for i, p in chain.start)
    return _Kept(states, indptr, pos[chain.indices[flat]], weights, scale, start)


def _entries(chain: Chain, rows: np.ndarray) -> np.ndarray:
    """The positions of ``rows``' transitions in the chain's CSR arrays, row by row."""
    starts = np.asarray(chain.indptr[rows], dtype=np.int64)
    lengths = np.asarray(chain.indptr[rows + 1], dtype=np.int64) - starts
    total = int(lengths.sum())
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total, dtype=np.int64)


def _work(chain: Chain, stepping: Stepping, kept: _Kept) -> None:
    """Refuse a question whose stepping would take too long, with the figures."""
    work = stepping.k * max(len(kept.indices), 1)
    if work > MAX_STEP_WORK:
        raise ChainError(f"{chain.name}: {stepping.k:,} steps over {len(kept.indices):,} "
                         f"transitions is {work:,} products, beyond the {MAX_STEP_WORK:,} a "
                         "stepped question is taken on; ask fewer steps")


def _reward(stepping: Stepping, kept: _Kept) -> tuple[np.ndarray, int]:
    """The reward of the kept states over a common denominator ``R``: integers
    ``rho * R`` (one a step where the question names no reward) and ``R``."""
    n = len(kept.states)
    if stepping.rho is None:
        return np.array([mpz(1)] * n + [mpz(0)], dtype=object), 1
    num, den = stepping.rho
    dens = [int(d) for d in den[kept.states].tolist()]
    common = math.lcm(*dens) if dens else 1
    values = [mpz(int(a) * (common // d)) for a, d in zip(num[kept.states].tolist(), dens)]
    return np.array(values + [mpz(0)], dtype=object), common


def _masks(stepping: Stepping, kept: _Kept) -> tuple[np.ndarray, np.ndarray]:
    """``goal`` and ``alive`` (``phi`` and not ``psi``: where an until goes on) on the
    kept states, with the extra place (False)."""
    n = len(kept.states)
    goal = np.zeros(n + 1, dtype=bool)
    alive = np.zeros(n + 1, dtype=bool)
    if stepping.goal is not None:
        goal[:n] = stepping.goal[kept.states]
        path = np.ones(n, dtype=bool) if stepping.path is None else stepping.path[kept.states]
        alive[:n] = path & ~goal[:n]
    return goal, alive


def _pick(mask: np.ndarray, yes: object, no: object) -> np.ndarray:
    """``yes`` where ``mask`` holds, else ``no`` (values or object arrays), as an
    object array of Python integers (NumPy would make scalars ``int64``)."""
    out = np.empty(len(mask), dtype=object)
    out[:] = no if not isinstance(no, np.ndarray) else no
    out[mask] = yes if not isinstance(yes, np.ndarray) else yes[mask]
    return out


def _row_sums(kept: _Kept, x: np.ndarray) -> np.ndarray:
    """``sum_j w_ij x_j`` for every kept row (the extra place: 0)."""
    n = len(kept.states)
    out = np.zeros(n + 1, dtype=object)
    out[:n] = mpz(0)
    if len(kept.indices):
        products = kept.weights * x[kept.indices]
        nonempty = np.flatnonzero(np.diff(kept.indptr) > 0)
        out[nonempty] = np.add.reduceat(products, kept.indptr[nonempty])
    out[n] = mpz(0)
    return out


def stepped_values(chain: Chain, stepping: Stepping) -> dict[int, mpq]:
    """The answer from each start state (by its state index), by stepping backward
    (module docstring)."""
    kept = _kept(chain, stepping.k)
    _work(chain, stepping, kept)
    n = len(kept.states)
    scale = mpz(kept.scale)
    goal, alive = _masks(stepping, kept)
    rho, common = _reward(stepping, kept)
    zero = np.array([mpz(0)] * (n + 1), dtype=object)
    if stepping.kind == "next":
        x, den = _row_sums(kept, _pick(goal, mpz(1), mpz(0))), scale
    elif stepping.kind == "until":
        # x_t = X_t / L^t: 1 on the goal is L^t there
        x, den = _pick(goal, mpz(1), mpz(0)), mpz(1)
        for _ in range(stepping.k):
            den *= scale
            last, x = x, _pick(alive, _row_sums(kept, x), _pick(goal, den, mpz(0)))
            if all(a == b * scale for a, b in zip(x.tolist(), last.tolist())):
                break  # x_t = x_{t-1}: every later step gives it again (an acyclic chain's depth)
    elif stepping.kind == "cumulative":
        x, den = zero.copy(), mpz(common)
        power = mpz(1)
        for _ in range(stepping.k):
            x = _row_sums(kept, x) + rho * (power * scale)
            power *= scale
            den *= scale
    elif stepping.kind == "instant":
        x, den = rho.copy(), mpz(common)
        for _ in range(stepping.k):
            x = _row_sums(kept, x)
            den *= scale
    else:
        raise ValueError(f"unknown stepped question {stepping.kind!r}")
    return {int(kept.states[p]): mpq(x[p], den) for p, _ in kept.start}


def stepped_forward(chain: Chain, stepping: Stepping,
                    start: tuple[tuple[int, mpq], ...] | None = None) -> mpq:
    """The answer from the start distribution (``start``: another one, by state
    index), by stepping ``pi_t = pi_0 P^t`` forward (module docstring)."""
    kept = _kept(chain, stepping.k)
    _work(chain, stepping, kept)
    n = len(kept.states)
    pos = {int(s): p for p, s in enumerate(kept.states.tolist())}
    begin = kept.start if start is None else tuple((pos[i], p) for i, p in start)
    goal, alive = _masks(stepping, kept)
    rho, common = _reward(stepping, kept)
    start_den = math.lcm(*(int(p.denominator) for _, p in begin))
    v = np.zeros(n + 1, dtype=object)
    v[:] = mpz(0)
    for p, prob in begin:
        v[p] += mpz(int(prob.numerator) * (start_den // int(prob.denominator)))
    den = mpz(start_den)
    scale = mpz(kept.scale)
    # the transitions by destination, for one step forward: v'_j = sum_i v_i w_ij
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(kept.indptr))
    order = np.argsort(kept.indices, kind="stable")
    dest = kept.indices[order]
    firsts = np.flatnonzero(np.r_[True, dest[1:] != dest[:-1]]) if len(dest) else \
        np.empty(0, dtype=np.int64)

    def step(v: np.ndarray) -> np.ndarray:
        out = np.zeros(n + 1, dtype=object)
        out[:] = mpz(0)
        if len(dest):
            sums = np.add.reduceat(v[owner[order]] * kept.weights[order], firsts)
            out[dest[firsts]] = sums
        out[n] = mpz(0)
        return out

    if stepping.kind == "next":
        return mpq(sum(step(v)[goal], mpz(0)), den * scale)
    if stepping.kind == "until":
        hit = sum(v[goal], mpz(0))
        v = _pick(alive, v, mpz(0))
        for _ in range(stepping.k):
            v = step(v)
            den *= scale
            hit = hit * scale + sum(v[goal], mpz(0))
            v = _pick(alive, v, mpz(0))
            if not any(v.tolist()):
                break  # no mass left on the way: no later step adds any
        return mpq(hit, den)
    if stepping.kind == "cumulative":
        total, total_den = mpq(0), den * common
        for _ in range(stepping.k):
            total += mpq(sum(v * rho, mpz(0)), total_den)
            v = step(v)
            total_den *= scale
        return total
    if stepping.kind == "instant":
        for _ in range(stepping.k):
            v = step(v)
            den *= scale
        return mpq(sum(v * rho, mpz(0)), den * common)
    raise ValueError(f"unknown stepped question {stepping.kind!r}")
