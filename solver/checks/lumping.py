"""The exact check that a quotient chain answers its question as the chain it came from.

:mod:`ladders.solver.chains.lumping` finds a partition by refinement with hashed
signatures and builds the quotient from one representative a block. This module
trusts neither: given the original chain, the block ``f(s)`` of every state and the
quotient, it checks, with no code shared with the refinement,

1. that ``f`` maps onto the quotient's states (every block has a state);
2. that ``f`` keeps what the question reads: where the question stops (absorbing
   states for ``absorb``, the target's states otherwise) is the same on ``s`` and
   ``f(s)``; for ``absorb`` the name of the answer of an absorbing state
   (:func:`~ladders.solver.checks.chain_bounds.ending_groups`, the check's own rule);
   for ``reward`` the reward of every state outside the target, exactly;
3. that every state where the question does not stop moves to every block with the
   quotient's probability, exactly: ``sum_{j : f(j) = C} P(s, j) = Q(f(s), C)`` for
   all C, both sides in lowest terms;
4. that the quotient's start is the original's, summed per block.

Then ``f`` is an ordinary lumping of the chain stopped where the question stops
(Kemeny and Snell, *Finite Markov Chains*, 1960, theorem 6.3.2): ``f(X_t)`` is a
Markov chain with the quotient's transitions until it stops, with the same start, so
every probability of where and whether it stops, and every expected reward
accumulated until then, is the same from ``s`` as from ``f(s)``. An answer the
residue check and the Markov bounds prove for the quotient is then the original's,
for every question ``ladders`` asks (also the least or greatest over several start
states: their values are the values of their blocks).

Cost: one pass over the transitions of the states where the question does not stop
(a ``np.unique`` of ``(state, block)`` keys and ``np.add.at``): about a second for
a ring of 15 (14 million transitions).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import Question
from ladders.solver.exact import mpq


def _stops(chain: Chain, question: Question) -> np.ndarray:
    """Where ``question`` stops on ``chain``: its absorbing states, or its target's."""
    if question.kind == "absorb":
        return chain.absorbing
    mask = np.zeros(chain.size, dtype=bool)
    mask[np.asarray(chain.labels.get(question.target, []), dtype=np.int64)] = True  # type: ignore[arg-type]
    return mask


def _failed(why: str) -> dict[str, Any]:
    return {"check": "lumping", "passed": False, "why": why}


def _lowest(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    g = np.gcd(num, den)
    g[g == 0] = 1
    return num // g, den // g


def check_lumping(original: Chain, quotient: Chain, blocks: np.ndarray,
                  question: Question) -> dict[str, Any]:
    """Whether ``blocks`` (block of each state of ``original``) makes ``quotient``
    answer ``question`` as ``original`` does (the module docstring's four
    conditions): a JSON-ready report, ``passed`` and what failed (``why``)."""
    n, m = original.size, quotient.size
    blocks = np.asarray(blocks, dtype=np.int64)
    if blocks.shape != (n,) or (n and (blocks.min() < 0 or blocks.max() >= m)):
        return _failed("the block numbers do not map the chain's states onto the quotient's")
    if np.any(np.bincount(blocks, minlength=m) == 0):
        return _failed("a state of the quotient has no state of the chain")
    stop, stop_q = _stops(original, question), _stops(quotient, question)
    if np.any(stop != stop_q[blocks]):
        s = int(np.flatnonzero(stop != stop_q[blocks])[0])
        return _failed(f"state {original.states[s]!r} and its block differ in where the "
                       "question stops")
    if question.kind == "absorb":
        from ladders.solver.checks.chain_bounds import ending_groups
        named = {i: name for name, members in ending_groups(original).items() for i in members}
        named_q = {b: name for name, members in ending_groups(quotient).items() for b in members}
        bad = [i for i, name in named.items() if named_q.get(int(blocks[i])) != name]
        if bad:
            return _failed(f"the absorbing state {original.states[bad[0]]!r} ends the chain "
                           "under another name than its block")
    if question.kind == "reward" and question.reward is not None:
        if question.reward not in quotient.rewards:
            return _failed(f"the quotient has no reward {question.reward!r}")
        num, den = _lowest(*(np.asarray(a, dtype=np.int64) for a in original.rewards[question.reward]))
        num_q, den_q = _lowest(*(np.asarray(a, dtype=np.int64) for a in quotient.rewards[question.reward]))
        differ = ~stop & ((num != num_q[blocks]) | (den != den_q[blocks]))
        if np.any(differ):
            s = int(np.flatnonzero(differ)[0])
            return _failed(f"state {original.states[s]!r} and its block differ in the reward")
    why = _rows_differ(original, quotient, blocks, stop)
    if why is not None:
        return _failed(why)
    pushed: dict[int, mpq] = {}
    for i, p in original.start:
        pushed[int(blocks[i])] = pushed.get(int(blocks[i]), mpq(0)) + p
    if pushed != dict(quotient.start):
        return _failed("the quotient's start is not the chain's summed per block")
    return {"check": "lumping", "passed": True, "states": n, "blocks": m,
            "what": "the chain's rows summed per block are the quotient's, and where the "
                    "question stops, its reward and the start agree, exactly"}


def _rows_differ(original: Chain, quotient: Chain, blocks: np.ndarray,
                 stop: np.ndarray) -> str | None:
    """Condition 3 of the module docstring, or what breaks it."""
    m = quotient.size
    counts = np.diff(original.indptr)
    source = np.repeat(np.arange(original.size, dtype=np.int64), counts)
    read = ~stop[source]
    source = source[read]
    if len(source) == 0:
        return None
    keys, where = np.unique(source * m + blocks[np.asarray(original.indices, dtype=np.int64)[read]],
                            return_inverse=True)
    sums = np.zeros(len(keys), dtype=np.int64)
    np.add.at(sums, where.reshape(-1), np.asarray(original.numerators, dtype=np.int64)[read])
    state, block = keys // m, keys % m
    num, den = _lowest(sums, np.asarray(original.denominators, dtype=np.int64)[state])
    # the quotient's row of each state's block, entry by entry, in the same order
    q_ptr = np.asarray(quotient.indptr, dtype=np.int64)
    lengths = np.diff(q_ptr)
    wanted = np.flatnonzero(~stop)
    own = blocks[wanted]
    have = np.bincount(state, minlength=original.size)[wanted]
    if np.any(have != lengths[own]):
        s = int(wanted[np.flatnonzero(have != lengths[own])[0]])
        return (f"state {original.states[s]!r} reaches {int(np.bincount(state, minlength=original.size)[s])} "
                f"blocks, its block's row in the quotient {int(lengths[blocks[s]])}")
    at = np.repeat(q_ptr[own], lengths[own]) + (
        np.arange(int(lengths[own].sum()), dtype=np.int64)
        - np.repeat(np.cumsum(lengths[own]) - lengths[own], lengths[own]))
    q_den = np.repeat(np.asarray(quotient.denominators, dtype=np.int64)[own], lengths[own])
    q_num, q_den = _lowest(np.asarray(quotient.numerators, dtype=np.int64)[at], q_den)
    q_block = np.asarray(quotient.indices, dtype=np.int64)[at]
    differ = (block != q_block) | (num != q_num) | (den != q_den)
    if np.any(differ):
        s = int(state[np.flatnonzero(differ)[0]])
        return (f"state {original.states[s]!r} moves to the blocks with other probabilities "
                "than its block's row in the quotient")
    return None
