"""The system built from the chain's arrays (issue 52) is the one the per-row loop
built before it: the same integers, in the same places, for every question form.

The oracle is that loop, kept here as it was (one Python step a row and a transition):
``A x = B`` row by row from the definitions of ``questions.py``."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from chain_oracle import random_chain
from ladders.solver.chains.model import MAX_ROW_DENOMINATOR, chain_from_rows
from ladders.solver.chains.questions import Question, build_system, plan_question
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem


def loop_system(chain, question, plan) -> LinearSystem:
    """The per-row loop (``build_system`` before issue 52)."""
    n = chain.size
    pos = np.full(n, -1, dtype=np.int64)
    pos[plan.unknowns] = np.arange(len(plan.unknowns), dtype=np.int64)
    m = len(plan.columns)
    const = np.zeros((n, m), dtype=np.int64)
    for c, name in enumerate(plan.columns):
        if name in plan.hits:
            const[plan.hits[name], c] = 1
    rows_u = plan.unknowns
    den = chain.denominators[rows_u]
    scale = np.ones(len(rows_u), dtype=np.int64)
    reward_rhs = None
    if question.kind == "reward" or "steps" in plan.columns:
        if question.kind == "reward" and question.reward is not None:
            rnum, rden = chain.rewards[question.reward]
            scale = rden[rows_u].astype(np.int64)
            reward_rhs = [int(d) * int(r) for d, r in zip(den.tolist(), rnum[rows_u].tolist())]
        else:
            reward_rhs = den.tolist()
    rows = []
    rhs = np.zeros((len(rows_u) + (1 if plan.start_row else 0), max(m, 1)), dtype=object)
    steps_col = plan.columns.index("steps") if "steps" in plan.columns else (
        0 if question.kind == "reward" else -1)
    for r, i in enumerate(rows_u.tolist()):
        f = int(scale[r])
        lo, hi = int(chain.indptr[i]), int(chain.indptr[i + 1])
        row = {r: int(den[r]) * f}
        for j, c in zip(chain.indices[lo:hi].tolist(), chain.numerators[lo:hi].tolist()):
            pj = int(pos[j])
            if pj >= 0:
                row[pj] = row.get(pj, 0) - c * f
            else:
                for col in range(m):
                    if const[j, col]:
                        rhs[r, col] += c * f * int(const[j, col])
        if steps_col >= 0 and reward_rhs is not None:
            rhs[r, steps_col] += reward_rhs[r]
        rows.append(list(row.items()))
    target = pos[plan.start[0][0]] if not plan.start_row else len(rows_u)
    if plan.start_row:
        d = 1
        for _, p in plan.start:
            d = math.lcm(d, int(p.denominator))
        row = {len(rows_u): d}
        r = len(rows_u)
        for k, p in plan.start:
            w = int(p.numerator) * (d // int(p.denominator))
            pk = int(pos[k])
            if pk >= 0:
                row[pk] = row.get(pk, 0) - w
            else:
                for col in range(m):
                    rhs[r, col] += w * int(const[k, col])
        rows.append(list(row.items()))
    if any(abs(v) > MAX_ROW_DENOMINATOR for row in rows for _, v in row) or \
            any(abs(int(v)) > MAX_ROW_DENOMINATOR for v in rhs.flat):
        raise OverflowError("beyond 62 bits")
    labels = [(int(i),) for i in rows_u.tolist()] + ([(n,)] if plan.start_row else [])
    return LinearSystem.from_rows(rows, rhs.astype(np.int64), labels, int(target),
                                  f"{chain.name}: {question.describe()}")


def same_system(a: LinearSystem, b: LinearSystem) -> bool:
    return (a.digest() == b.digest() and a.description == b.description
            and a.indptr.dtype == b.indptr.dtype == np.int64
            and a.data.dtype == b.data.dtype == a.rhs.dtype == b.rhs.dtype == np.int64)


def project_chain(c, reward_scale: int = 1):
    """The project's chain of an oracle chain (``chain_oracle.RandomChain``), its reward
    ``r`` divided by ``reward_scale`` (large: the Python-integer path)."""
    rows = [{j: mpq(p.numerator, p.denominator) for j, p in row.items()} for row in c.rows]
    rewards = {"r": {i: mpq(v.numerator, v.denominator * reward_scale)
                     for i, v in c.reward.items()}} if c.reward else None
    return chain_from_rows("random", c.names, rows,
                           start=[(i, mpq(p.numerator, p.denominator))
                                  for i, p in sorted(c.start.items())],
                           labels={name: sorted(s) for name, s in c.labels.items()},
                           rewards=rewards)


def questions(chain):
    asked = [Question()]
    overs = (None, "min", "max") if len(chain.start) > 1 else (None,)
    for label in chain.labels:
        for over in overs:
            asked.append(Question("reach", label, over=over))
            for reward in (None, "r") if chain.rewards else (None,):
                asked.append(Question("reward", label, reward=reward, over=over))
    return asked


@pytest.mark.parametrize("scale", [1, 3 ** 30, 3 ** 38])
def test_same_system_as_the_loop_on_random_chains(scale):
    built = 0
    for seed in range(200):
        chain = project_chain(random_chain(random.Random(seed)), scale)
        for question in questions(chain):
            plan = plan_question(chain, question)
            if not plan.columns:
                continue
            try:
                expected = loop_system(chain, question, plan)
            except OverflowError:
                with pytest.raises(OverflowError):
                    build_system(chain, question, plan)
                continue
            assert same_system(build_system(chain, question, plan), expected), (seed, question)
            built += 1
    assert built > 300


def test_entries_beyond_62_bits_are_refused():
    """A reward whose denominator times the row's passes 62 bits: refused, as before."""
    chain = chain_from_rows("big", ["a", "b"], [{0: mpq(1, 3), 1: mpq(2, 3)}, {1: 1}], start=0,
                            labels={"done": [1]}, rewards={"r": {0: mpq(1, 1 << 61)}})
    question = Question("reward", "done", reward="r")
    plan = plan_question(chain, question)
    with pytest.raises(OverflowError):
        loop_system(chain, question, plan)
    with pytest.raises(OverflowError):
        build_system(chain, question, plan)


def test_labels_are_made_when_read_and_read_as_the_tuple():
    """A chain question's labels are its unknowns' states as 1-tuples, the start row
    last as the chain's size: read by index, slice, iteration and length as the
    tuple of them reads."""
    from ladders.solver.chains.questions import StateLabels
    states = np.array([2, 5, 7], dtype=np.int64)
    for start, expected in ((None, ((2,), (5,), (7,))), (9, ((2,), (5,), (7,), (9,)))):
        labels = StateLabels(states, start)
        assert len(labels) == len(expected) and tuple(labels) == expected
        assert [labels[i] for i in range(-len(expected), len(expected))] == list(expected) * 2
        assert labels[1:] == expected[1:] and labels[::-1] == expected[::-1]
        with pytest.raises(IndexError):
            labels[len(expected)]
