"""k-player races as sparse integer systems (an engine solves them), and as a chain.

Players do not interact, so a race is built from one player's chain (:mod:`ladders.solver.games.chain`).
A race is a chain (:func:`race_chain`: the joint chain of its pieces, ``n^k k`` states,
absorbing in ``seat j wins``); its own systems below are smaller, and the series engine
and the race bounds need only the one piece's chain. Three formulations:

``turn`` (two players; the published one). Unknown ``P(a, b)``: the player to move, on
a, wins against the opponent on b. One throw gives
``P(a, b) = sum_r 1/d [a' = end ? 1 : 1 - P(b, a')]``, i.e. in integers
``d P(a, b) + sum_a' C[a, a'] P(b, a') = d``. Target ``P(start, start)``; seat 2 is
``1 - P``. The whole table P(a, b) is the solution vector.

``round`` (any k). Unknown ``V_j(s)`` for positions ``s = (s_1..s_k)`` at the start of a
round: seat j wins. In a round, seat j wins if seats before it do not finish and it
does: ``c_j(s) = prod_{i<j} (1 - R[s_i]) R[s_j]``; nobody finishes with the Kronecker
transition ``Q (x) ... (x) Q``. So ``(I - Q^(x)k) V_j = c_j``: one matrix, k right-hand
sides (scaled by ``d^k`` to integers), and the seats must sum to 1 exactly.

``sym`` (any k; the default for three or more). Only ``V_j`` at the start is wanted,
and the start ``(s0, ..., s0)`` is the same for every seat. Unrolling the round form,
``V_j(start) = sum_t pi^(x)k M^(t-1) c_j`` with ``M = Q^(x)k`` and ``pi`` the start
square: a symmetric tensor on the left, and ``M`` commutes with every permutation of
the k factors. So ``c_j`` may be replaced by its symmetrization ``Sym c_j`` (the mean
over the k! orders of its factors), and the solution ``Y = (I - M)^-1 Sym c_j`` is then
a symmetric tensor: ``Y(s)`` depends only on the *multiset* of squares. One unknown per
multiset: ``C(n + k - 1, k)`` instead of ``n^k`` (3 players on ``hasbro``: 91,881 instead
of 531,441), equations ``k! d^k Y(m) - k! sum_t C^(x)k[m, t] Y(sort t) = sum_sigma
c_j(m_sigma) d^k`` at each multiset m in sorted order, and ``V_j(start) = Y(s0, ..., s0)``.
Only seats 1..k-1 are solved; the last seat's chance is what is left.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.exact import mpq
from ladders.solver.games.board import Board
from ladders.solver.games.chain import AbsorbingChain
from ladders.solver.system import LinearSystem

FORMULATIONS = ("turn", "round", "sym")


def race_unknowns(states: int, players: int) -> int:
    """Unknowns of the race system in its default formulation (``turn`` for two
    players, n^2; ``sym`` for more, C(n + k - 1, k)), known without building it."""
    return states * states if players == 2 else math.comb(states + players - 1, players)


def race_chain(board: Board, players: int) -> Chain:
    """The race of ``players`` pieces that never meet on ``board`` as one chain: the
    joint chain of :func:`~ladders.solver.games.bump.joint_chain` without the bump,
    whose probability of ending in ``seat j wins`` is seat j's chance, the same
    fraction as the race's systems give. A pieces-that-meet rule changes only the move
    (:data:`~ladders.solver.games.MEETS`). Its ``n^k k`` states are for the engines and
    checks that take a chain; the race's systems solve the same seats with ``n^2`` and
    ``C(n + k - 1, k)`` unknowns."""
    from ladders.solver.games.bump import joint_chain
    return joint_chain(board, players, bump=False)


def race_system(chain: AbsorbingChain, players: int, formulation: str | None = None) -> LinearSystem:
    """The LinearSystem of a ``players``-seat race on ``chain`` (see module docstring).

    ``formulation`` defaults to ``turn`` for two players and ``sym`` otherwise.
    """
    if players < 2:
        raise ValueError(f"a race needs at least 2 players, got {players}")
    formulation = formulation or ("turn" if players == 2 else "sym")
    if formulation == "sym":
        return _sym_system(chain, players)
    if formulation == "turn":
        if players != 2:
            raise ValueError("the 'turn' formulation is for two players; use 'round'")
        return _turn_system(chain)
    if formulation == "round":
        return _round_system(chain, players)
    raise ValueError(f"unknown formulation {formulation!r}; use one of {', '.join(FORMULATIONS)}")


def _turn_system(chain: AbsorbingChain) -> LinearSystem:
    n = len(chain.states)
    d = chain.die
    rows = []
    labels = []
    for a in range(n):
        for b in range(n):
            i = a * n + b
            row = {i: d}
            for a2, c in chain.moves[a]:
                j = b * n + a2
                row[j] = row.get(j, 0) + c
            rows.append(list(row.items()))
            labels.append((chain.states[a], chain.states[b]))
    s0 = chain.start_index
    return LinearSystem.from_rows(rows, np.full((n * n, 1), d, dtype=np.int64), labels,
                                  target=s0 * n + s0,
                                  description=f"{chain.board.name}: 2-player race, turn form")


def _round_system(chain: AbsorbingChain, k: int) -> LinearSystem:
    n = len(chain.states)
    d = chain.die
    e = chain.finish
    size = n ** k
    if size > 2_000_000:
        raise ValueError(f"{size:,} unknowns ({n}^{k}) is too large to build in memory")
    rows = []
    rhs = np.zeros((size, k), dtype=np.int64)
    labels = []
    for idx, combo in enumerate(itertools.product(range(n), repeat=k)):
        row: dict[int, int] = {idx: d ** k}
        for targets in itertools.product(*(chain.moves[s] for s in combo)):
            j = 0
            weight = 1
            for t, c in targets:
                j = j * n + t
                weight *= c
            row[j] = row.get(j, 0) - weight
        rows.append(list(row.items()))
        stay = 1
        for seat, s in enumerate(combo):
            rhs[idx, seat] = stay * e[s] * d ** (k - 1 - seat)
            stay *= d - e[s]
        labels.append(tuple(chain.states[s] for s in combo))
    s0 = chain.start_index
    target = sum(s0 * n ** p for p in range(k))
    return LinearSystem.from_rows(rows, rhs, labels, target=target,
                                  description=f"{chain.board.name}: {k}-player race, round form")


def _sym_system(chain: AbsorbingChain, k: int) -> LinearSystem:
    n = len(chain.states)
    d = chain.die
    e = chain.finish
    size = math.comb(n + k - 1, k)
    if size > 5_000_000:
        raise ValueError(f"{size:,} unknowns (multisets of {k} of {n} squares) is too large "
                         "to build in memory")
    multisets = list(itertools.combinations_with_replacement(range(n), k))
    index = {m: i for i, m in enumerate(multisets)}
    scale = math.factorial(k)
    rows = []
    # seats 1..k-1 only: the last seat wins with what is left, and every right-hand side
    # costs a whole lifting (a third of the work for three players)
    rhs = np.zeros((size, k - 1), dtype=np.int64)
    for i, m in enumerate(multisets):
        row: dict[int, int] = {i: scale * d ** k}
        for targets in itertools.product(*(chain.moves[s] for s in m)):
            weight = scale
            for _, c in targets:
                weight *= c
            j = index[tuple(sorted(t for t, _ in targets))]
            row[j] = row.get(j, 0) - weight
        rows.append(list(row.items()))
        for order in itertools.permutations(m):
            # seat j finishes, the seats before it do not, the seats after it have not
            # thrown yet: prod_{i<j} (d - e) * e * prod_{i>j} d, summed over the k! orders
            stay = 1
            for seat, s in enumerate(order[:-1]):
                rhs[i, seat] += stay * e[s] * d ** (k - 1 - seat)
                stay *= d - e[s]
    s0 = chain.start_index
    labels = [tuple(sorted((chain.states[s] for s in m), reverse=True)) for m in multisets]
    return LinearSystem.from_rows(rows, rhs, labels, target=index[(s0,) * k],
                                  description=f"{chain.board.name}: {k}-player race, "
                                              "symmetric round form")


def seats_from_values(system: LinearSystem, players: int, values: list[mpq]) -> list[mpq]:
    """Per-seat probabilities from the target values an engine returned for ``system``.

    Turn form: one value ``P`` (seat 1), seat 2 is ``1 - P``. Symmetric form: seats 1 to
    k - 1, and the last seat is what is left (someone finishes with probability 1).
    Round form: one value per seat, checked to sum to exactly 1 (anything else means a
    wrong solve).
    """
    if system.columns == players - 1:
        last = 1 - sum(values, mpq(0))
        if last < 0:
            raise ArithmeticError("the seats' win probabilities add up to more than 1")
        return [*values, last]
    if sum(values, mpq(0)) != 1:
        raise ArithmeticError("the seats' win probabilities do not sum to 1")
    return list(values)
