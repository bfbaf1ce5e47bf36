"""Random labelled chains and their answers from first principles, for the differential
test (``test_differential.py``): plain :class:`fractions.Fraction` arithmetic and graph
searches written here, sharing no code with the project.

The meaning of every answer is the one docs/guide.md states:

- where a chain ends: for each name of absorbing states (their labels other than
  ``init`` and ``deadlock``, sorted and joined by ``+``; an unlabelled one by its own
  name, or ``state NAME`` where a label is called NAME), the probability of ending in
  any absorbing state of that name, for every name that a state reachable from the
  start carries; then ``steps``, the expected number of steps until absorption
  (``Infinity`` unless absorbed with probability 1);
- ``P(F L)``: the probability of ever being in a state labelled L (1 where the start
  is one);
- ``E[reward until L]``: the reward ``rho`` of each state left before the first state
  labelled L (1 a step for the time), ``Infinity`` where L is missed with positive
  probability;
- several initial states asked for their least or greatest value: each state's own
  value (``Infinity`` above every number), then the least or greatest.

From a distribution ``pi_0``, the answer is ``sum pi_0(s) x(s)`` (``Infinity`` where
any ``x(s)`` with ``pi_0(s) > 0`` is).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from fractions import Fraction

INFINITY = "Infinity"

#: Label names the generator draws from (no ``+``: an answer's name joins labels so).
LABELS = ("a", "b", "goal", "done")


@dataclass
class RandomChain:
    """A chain as plain Python data: ``names[i]``, ``rows[i]`` (``{j: P(i, j)}``, empty
    for a state without transitions, which becomes absorbing), ``start`` (``{i:
    probability}``), ``labels`` (``{name: set of states}``), ``reward`` (``{i: rho(i)}``,
    the reward ``"r"``)."""

    names: list[str]
    rows: list[dict[int, Fraction]]
    start: dict[int, Fraction]
    labels: dict[str, set[int]]
    reward: dict[int, Fraction] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.names)

    def step(self, i: int) -> dict[int, Fraction]:
        """Row i as the chain has it: an empty row is a self-loop."""
        return self.rows[i] or {i: Fraction(1)}

    def absorbing(self, i: int) -> bool:
        return self.step(i) == {i: Fraction(1)}


def random_chain(rng: random.Random) -> RandomChain:
    """A small chain drawn from ``rng``: absorbing states, states without transitions,
    labels shared by several states (absorbing, transient, unreachable), a labelled or
    absorbing start or a distribution over several states, a reward on some states,
    and now and then a state named like a label."""
    n = rng.randint(2, 8)
    names = [f"s{i}" for i in range(n)]
    labels = {name: set() for name in rng.sample(LABELS, rng.randint(0, 3))}
    if labels and rng.random() < 0.15:
        names[rng.randrange(n)] = rng.choice(sorted(labels))
    rows: list[dict[int, Fraction]] = []
    for i in range(n):
        kind = rng.random()
        if kind < 0.3:
            rows.append({i: Fraction(1)})
        elif kind < 0.36:
            rows.append({})
        else:
            targets = rng.sample(range(n), rng.randint(1, min(3, n)))
            weights = [rng.randint(1, 4) for _ in targets]
            total = sum(weights)
            rows.append({j: Fraction(w, total) for j, w in zip(targets, weights)})
    for members in labels.values():
        members.update(rng.sample(range(n), rng.randint(0, min(3, n))))
    if rng.random() < 0.6:
        start = {rng.randrange(n): Fraction(1)}
    else:
        chosen = rng.sample(range(n), rng.randint(2, min(3, n)))
        weights = [1] * len(chosen) if rng.random() < 0.5 else [rng.randint(1, 3) for _ in chosen]
        start = {i: Fraction(w, sum(weights)) for i, w in zip(chosen, weights)}
    values = (Fraction(0), Fraction(1, 2), Fraction(1), Fraction(3), Fraction(7, 3))
    reward = {i: v for i in range(n) if (v := rng.choice(values))}
    return RandomChain(names, rows, start, labels, reward)


def _backward(chain: RandomChain, seeds: set[int], through: set[int] | None = None) -> set[int]:
    """States that reach ``seeds`` (expanding only states in ``through``)."""
    preds: dict[int, set[int]] = {j: set() for j in range(chain.n)}
    for i in range(chain.n):
        for j in chain.step(i):
            preds[j].add(i)
    seen, todo = set(seeds), list(seeds)
    while todo:
        j = todo.pop()
        if through is not None and j not in through:
            continue
        for i in preds[j] - seen:
            seen.add(i)
            todo.append(i)
    return seen


def _forward(chain: RandomChain, seeds: set[int], stop: set[int]) -> set[int]:
    """States reached from ``seeds`` without leaving a state of ``stop``."""
    seen, todo = set(seeds), list(seeds)
    while todo:
        i = todo.pop()
        if i in stop:
            continue
        for j in chain.step(i):
            if j not in seen:
                seen.add(j)
                todo.append(j)
    return seen


def _solve(matrix: list[list[Fraction]], rhs: list[Fraction]) -> list[Fraction]:
    """``matrix x = rhs`` by Gauss-Jordan elimination over the rationals."""
    n = len(rhs)
    a = [row[:] + [b] for row, b in zip(matrix, rhs)]
    for c in range(n):
        p = next(r for r in range(c, n) if a[r][c] != 0)
        a[c], a[p] = a[p], a[c]
        inv = 1 / a[c][c]
        a[c] = [v * inv for v in a[c]]
        for r in range(n):
            if r != c and a[r][c] != 0:
                f = a[r][c]
                a[r] = [v - f * w for v, w in zip(a[r], a[c])]
    return [a[r][n] for r in range(n)]


def reach(chain: RandomChain, target: set[int]) -> list[Fraction]:
    """``P_s(F target)`` for every state s."""
    can = _backward(chain, target)
    unknown = sorted(can - target)
    pos = {s: k for k, s in enumerate(unknown)}
    matrix = [[Fraction(0)] * len(unknown) for _ in unknown]
    rhs = [Fraction(0)] * len(unknown)
    for k, i in enumerate(unknown):
        matrix[k][k] += 1
        for j, p in chain.step(i).items():
            if j in pos:
                matrix[k][pos[j]] -= p
            elif j in target:
                rhs[k] += p
    solved = _solve(matrix, rhs) if unknown else []
    return [Fraction(1) if s in target else solved[pos[s]] if s in pos else Fraction(0)
            for s in range(chain.n)]


def expectation(chain: RandomChain, target: set[int],
                rho: dict[int, Fraction] | None) -> list[Fraction | str]:
    """``E_s[sum of rho over the states left before target]`` for every state s
    (``rho`` None: 1 a step), :data:`INFINITY` where target is missed with positive
    probability."""
    p = reach(chain, target)
    finite = {s for s in range(chain.n) if p[s] == 1}
    unknown = sorted(finite - target)
    pos = {s: k for k, s in enumerate(unknown)}
    matrix = [[Fraction(0)] * len(unknown) for _ in unknown]
    rhs = [Fraction(1) if rho is None else rho.get(i, Fraction(0)) for i in unknown]
    for k, i in enumerate(unknown):
        matrix[k][k] += 1
        for j, q in chain.step(i).items():
            if j in pos:
                matrix[k][pos[j]] -= q
    solved = _solve(matrix, rhs) if unknown else []
    return [Fraction(0) if s in target else solved[pos[s]] if s in pos else INFINITY
            for s in range(chain.n)]


def from_start(chain: RandomChain, values: list[Fraction | str],
               over: str | None = None) -> Fraction | str:
    """The answer from the start: the average under ``start``, or (``over``) the
    least or greatest over its states."""
    mine = [values[s] for s in sorted(chain.start)]
    if over is not None:
        finite = [v for v in mine if v != INFINITY]
        if over == "max":
            return INFINITY if len(finite) < len(mine) else max(finite)
        return min(finite) if finite else INFINITY
    if any(v == INFINITY for v in mine):
        return INFINITY
    return sum((chain.start[s] * values[s] for s in chain.start), Fraction(0))


def end_name(chain: RandomChain, i: int) -> str:
    """The name of the answer "the chain ends in absorbing state i" (guide.md)."""
    own = sorted(name for name, members in chain.labels.items() if i in members)
    if own:
        return "+".join(own)
    return f"state {chain.names[i]}" if chain.names[i] in chain.labels else chain.names[i]


def where_it_ends(chain: RandomChain) -> dict[str, Fraction | str]:
    """Every answer of where the chain ends, by name, and ``steps``."""
    absorbing = {i for i in range(chain.n) if chain.absorbing(i)}
    reachable = _forward(chain, set(chain.start), absorbing)
    groups: dict[str, set[int]] = {}
    for i in sorted(absorbing):
        groups.setdefault(end_name(chain, i), set()).add(i)
    out: dict[str, Fraction | str] = {}
    for name, members in groups.items():
        if members & reachable:
            out[name] = from_start(chain, reach(chain, members))
    out["steps"] = from_start(chain, expectation(chain, absorbing, None))
    return out
