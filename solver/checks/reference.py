"""The residue check's own system for a chain question, built without the solver's plan.

The engines solve the system :func:`ladders.solver.chains.questions.build_system` makes
from the plan: which states are unknown, which states each answer's value is 1 on, which
start the target averages over. An answer read from a wrong mapping (an answer named
after one absorbing state and solved for another) is then a right solution of a wrong
system, and solving that system again modulo a prime agrees with it. So the residue
check of a chain question (:func:`ladders.solver.checks.residue_check.check_residues`)
solves this system instead, written from the definitions alone:

- what each answer means comes from
  :func:`~ladders.solver.checks.chain_bounds.question_targets`: the absorbing states of
  each name found state by state, the target label's states, the reward, and the start
  (for the least expectation over several initial states, those whose expectation is
  finite), each by its own graph search;
- the unknowns are every state reachable from that start before a target that can
  still reach one (the plan drops none it need not, this keeps every one it may);
- row i is ``P(i, i)``'s complement against the row's own integers, in a plain loop
  over the chain's rows: ``f_i x_i - sum_{j in U} g_i c_ij x_j = g_i sum_{j in slot}
  c_ij`` for a probability, ``d_i rho_num(i)`` for an expectation, with ``g_i`` the
  reward's denominator at i (1 without one) and ``f_i = d_i g_i``; the start, where it
  is not one unknown state, is one more row ``D x_s - sum_k w_k x_k`` over its
  weights.

It shares no code with the plan or ``build_system``, only the chain's arrays and the
container :class:`~ladders.solver.system.LinearSystem`.
"""

from __future__ import annotations

import math

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import Question
from ladders.solver.checks.chain_bounds import question_targets
from ladders.solver.system import LinearSystem

#: Most unknowns of the check's own system: it is written in a plain loop over the
#: rows (about 13 us a row: nand 20-1's 49,054 unknowns in 0.66 s), and solved by
#: blocks in no time where the components are small (else by the column elimination,
#: within :data:`~ladders.solver.checks.residue_check.CHAIN_UPDATES`); beyond, the
#: residue tier solves the engines' system.
REFERENCE_UNKNOWNS = 100_000
#: Largest magnitude of an entry the system's int64 arrays hold.
_INT64 = (1 << 63) - 1


def reference_system(chain: Chain, question: Question, names: tuple[str, ...],
                     columns: tuple[str, ...]) -> LinearSystem | str:
    """The system whose target, column k, is the answer ``columns[k]`` of ``question``
    (answers called ``names`` in all), built from the definitions (module docstring);
    or, where there is none to solve, why (beyond :data:`REFERENCE_UNKNOWNS`, an
    entry beyond 63 bits, an answer no state answers to)."""
    targets = question_targets(chain, question, names)
    if targets.unknown_names:
        return f"no absorbing state answers to {', '.join(map(repr, targets.unknown_names))}"
    # the size first, from the array (a set of every unknown cost nand 40-1 0.1 s to
    # find that its 629,595 are too many)
    single = len(targets.start) == 1 and bool(np.isin(targets.start[0][0], targets.unknowns))
    size = len(targets.unknowns) + (0 if single else 1)
    if size > REFERENCE_UNKNOWNS:
        return (f"{size:,} unknowns, beyond the {REFERENCE_UNKNOWNS:,} of the check's own "
                "system")
    unknowns = targets.unknowns.tolist()
    slots = dict(targets.slots)
    hits = [set(slots[name].tolist()) if name in slots else None for name in columns]
    pos = {state: k for k, state in enumerate(unknowns)}
    reward_num = reward_den = None
    if targets.rho is not None:
        reward_num, reward_den = targets.rho[0].tolist(), targets.rho[1].tolist()
    rows: list[list[tuple[int, int]]] = []
    rhs: list[list[int]] = []
    for k, i in enumerate(unknowns):
        d = int(chain.denominators[i])
        g = 1 if reward_den is None or targets.expectation not in columns else reward_den[i]
        diagonal = d * g
        row: dict[int, int] = {}
        right = [0] * len(columns)
        for j, c in zip(chain.indices[chain.indptr[i]:chain.indptr[i + 1]].tolist(),
                        chain.numerators[chain.indptr[i]:chain.indptr[i + 1]].tolist()):
            if j in pos:
                row[pos[j]] = row.get(pos[j], 0) - g * c
            for col, hit in enumerate(hits):
                if hit is not None and j in hit:
                    right[col] += g * c
        row[k] = row.get(k, 0) + diagonal
        for col, name in enumerate(columns):
            if name == targets.expectation:
                right[col] = d * (1 if reward_num is None else reward_num[i])
        rows.append(list(row.items()))
        rhs.append(right)
    if single:
        target = pos[targets.start[0][0]]
    else:
        den = math.lcm(*(int(p.denominator) for _, p in targets.start))
        row = {len(unknowns): den}
        right = [0] * len(columns)
        for state, p in targets.start:
            w = int(p.numerator) * (den // int(p.denominator))
            if state in pos:
                row[pos[state]] = row.get(pos[state], 0) - w
            for col, hit in enumerate(hits):
                if hit is not None and state in hit:
                    right[col] += w
        rows.append(list(row.items()))
        rhs.append(right)
        target = len(unknowns)
    if any(abs(v) > _INT64 for row in rows for _, v in row) or \
            any(abs(v) > _INT64 for right in rhs for v in right):
        return "an entry of the system needs more than 63 bits"
    labels = [(state,) for state in unknowns] + ([] if single else [(chain.size,)])
    return LinearSystem.from_rows(rows, np.array(rhs, dtype=np.int64).reshape(size, len(columns)),
                                  labels, target, f"{chain.name}: {question.describe()} "
                                  "(the residue check's own system)")
