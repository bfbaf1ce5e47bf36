"""Lumping (issue 52): the quotient answers every question as the chain does, ``==``.

- random chains of the differential test with every state split into copies (each copy
  moves as its state, its probability into a state shared among that state's copies at
  random): every question answered three ways, unlumped, lumped, and by the plain
  Fraction oracle of ``chain_oracle.py``;
- three pieces on a line, moving together: the quotient's states counted by hand;
- Herman's ring through the project's PRISM front end, against Storm's exact values
  published with QVBS (4/3, 16/5, 48/7 for rings of 3, 5, 7) and the unlumped solve;
- the exact check refuses a partition that is not a lumping, and a lumped run's
  problem is built again from its JSON with the same system.
"""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from chain_oracle import RandomChain, random_chain
from ladders.cluster.runs import known_solution
from ladders.cluster.runs import solve as run_solve
from ladders.solver.chains.formats import load_chain
from ladders.solver.chains.lumping import bisimulation, quotient, worth_lumping
from ladders.solver.chain_problem import ChainProblem, chain_problem_from_json, lumped_problem
from ladders.solver.chains.questions import Question
from ladders.solver.checks.lumping import check_lumping
from test_differential import as_fraction, project_chain, questions

#: Random chains split into copies (seeds), about 4 s.
CHAINS = 40


def split_into_copies(c: RandomChain, rng: random.Random) -> RandomChain:
    """``c`` with each state made 1 to 3 copies: a copy keeps its state's labels and
    reward, its row sends ``P(i, j)`` to j's copies in random shares, and the start's
    probability of a state is shared among its copies. An absorbing state's copies
    absorb each one into itself; a state without transitions stays without."""
    copies = [list(range(k)) for k in (rng.randint(1, 3) for _ in range(c.n))]
    index: list[list[int]] = []
    names: list[str] = []
    for i, ks in enumerate(copies):
        index.append([len(names) + k for k in ks])
        names += [c.names[i] if k == 0 else f"{c.names[i]}_{k}" for k in ks]

    def shares(total: Fraction, j: int) -> dict[int, Fraction]:
        weights = [rng.randint(1, 3) for _ in index[j]]
        return {s: total * w / sum(weights) for s, w in zip(index[j], weights)}

    rows: list[dict[int, Fraction]] = []
    for i in range(c.n):
        for s in index[i]:
            if c.absorbing(i) and c.rows[i]:
                rows.append({s: Fraction(1)})
                continue
            row: dict[int, Fraction] = {}
            for j, p in c.rows[i].items():
                row.update(shares(p, j))
            rows.append(row)
    start: dict[int, Fraction] = {}
    for i, p in c.start.items():
        start.update(shares(p, i))
    labels = {name: {s for i in members for s in index[i]} for name, members in c.labels.items()}
    reward = {s: v for i, v in c.reward.items() for s in index[i]}
    return RandomChain(names, rows, start, labels, reward)


def answered(problem: ChainProblem) -> tuple[dict[str, Fraction | str], bool]:
    solution = run_solve(problem) if problem.solvable else known_solution(problem, 0.0)
    return {name: as_fraction(v) for name, v in solution.answers.items()}, solution.passed


def test_random_chains_split_into_copies_lumped_unlumped_and_the_oracle_agree() -> None:
    wrong, lumped = [], 0
    for seed in range(CHAINS):
        rng = random.Random(seed)
        c = split_into_copies(random_chain(rng), rng)
        chain = project_chain(c)
        for question, expected in questions(c):
            plain = ChainProblem(chain, question)
            small = lumped_problem(plain, "on")
            lumped += small.lumping is not None
            got, passed = answered(small)
            whole, _ = answered(plain)
            if not got == whole == expected or not passed:
                wrong.append(f"chain {seed}, {question.describe()}: lumped {got}, unlumped "
                             f"{whole}, oracle {expected}, checks passed: {passed}")
    assert wrong == []
    assert lumped > 100  # most questions of split chains do lump


def pieces_chain(squares: int = 4) -> ChainProblem:
    """Three pieces on squares ``0 .. squares``, moving together each step: each one not
    home yet moves up one square with probability 1/2, else stays; ``home`` labels all
    three home, ``first`` the first piece home."""
    from ladders.solver.chains.model import chain_from_rows
    from ladders.solver.exact import mpq
    side = squares + 1
    states = [(a, b, c) for a in range(side) for b in range(side) for c in range(side)]
    number = {s: k for k, s in enumerate(states)}
    rows = []
    for s in states:
        row: dict[int, mpq] = {}
        outcomes = [[(x, mpq(1))] if x == squares else [(x, mpq(1, 2)), (x + 1, mpq(1, 2))]
                    for x in s]
        for a, pa in outcomes[0]:
            for b, pb in outcomes[1]:
                for c, pc in outcomes[2]:
                    j = number[(a, b, c)]
                    row[j] = row.get(j, mpq(0)) + pa * pb * pc
        rows.append(row)
    chain = chain_from_rows("pieces", [f"{a},{b},{c}" for a, b, c in states], rows, start=0,
                            labels={"home": [number[(squares,) * 3]],
                                    "first": [k for k, s in enumerate(states) if s[0] == squares]})
    return ChainProblem(chain, Question("reward", "home"))


def test_three_pieces_lump_by_hand_counts() -> None:
    problem = pieces_chain(4)
    # the expected steps until all three are home do not tell the pieces apart: a block
    # a multiset of three squares out of 0..4, C(4 + 3, 3) = 35 of the 125 states
    small = lumped_problem(problem, "on")
    assert (problem.chain.size, small.chain.size) == (125, 35)
    assert answered(small)[0] == answered(problem)[0]
    # whether the first piece gets home does not depend on the others at all: its four
    # squares before home, and home
    first = ChainProblem(problem.chain, Question("reward", "first"))
    small = lumped_problem(first, "on")
    assert small.chain.size == 5
    assert answered(small)[0] == answered(first)[0] == {'T=? [F "first"]': Fraction(8)}
    # where the chain ends names its one absorbing state: the same blocks as "home"
    ends = lumped_problem(ChainProblem(problem.chain, Question()), "on")
    assert ends.chain.size == 35 and answered(ends)[0] == answered(ChainProblem(problem.chain,
                                                                               Question()))[0]


def herman_prism(processes: int) -> str:
    """Herman's self-stabilising ring of ``processes`` (odd) as a PRISM model, written
    here from the protocol (Herman 1990): process i holds a bit; each step, where it
    equals its left neighbour's it is redrawn fairly, else it copies the neighbour's;
    every configuration is an initial one; ``stable``: exactly one token (a process
    whose bit equals its left neighbour's)."""
    n = processes
    lines = ["dtmc"]
    for i in range(1, n + 1):
        left = n if i == 1 else i - 1
        lines += [f"module p{i}", f"  x{i} : [0..1];",
                  f"  [step] x{i}=x{left} -> 1/2 : (x{i}'=0) + 1/2 : (x{i}'=1);",
                  f"  [step] x{i}!=x{left} -> (x{i}'=x{left});", "endmodule"]
    tokens = " + ".join(f"(x{i}=x{n if i == 1 else i - 1}?1:0)" for i in range(1, n + 1))
    lines += ['rewards "steps"', "  true : 1;", "endrewards", "init true endinit",
              f'label "stable" = {tokens} = 1;']
    return "\n".join(lines) + "\n"


def herman(tmp_path: Path, processes: int) -> ChainProblem:
    model = tmp_path / f"herman.{processes}.prism"
    model.write_text(herman_prism(processes))
    props = tmp_path / "herman.props"
    props.write_text('"steps": filter(max, R{"steps"}=? [ F "stable" ], "init");\n')
    loaded = load_chain(str(model), properties=str(props))
    return ChainProblem(loaded.chain, loaded.questions[0], loaded.source)


@pytest.mark.parametrize(("processes", "blocks", "steps"),
                         [(3, 2, Fraction(4, 3)), (5, 4, Fraction(16, 5)), (7, 9, Fraction(48, 7))])
def test_herman_rings_lumped_as_storm_and_unlumped(tmp_path: Path, processes: int, blocks: int,
                                                   steps: Fraction) -> None:
    problem = herman(tmp_path, processes)
    small = lumped_problem(problem, "on")
    # a ring of 3: its six one-token states (the target) and its two three-token ones
    assert (small.chain.size, problem.chain.size) == (blocks, 2 ** processes)
    got, passed = answered(small)
    assert passed and got == answered(problem)[0] == {"steps": steps}
    assert small.lumping is not None and small.lumping.check["passed"]


@pytest.mark.slow(reason="rings of 9 and 11 unlumped: about 15 s")
@pytest.mark.parametrize(("processes", "steps"), [(9, Fraction(12)), (11, Fraction(192, 11))])
def test_larger_herman_rings_lumped_equal_unlumped(tmp_path: Path, processes: int,
                                                  steps: Fraction) -> None:
    problem = herman(tmp_path, processes)
    small = lumped_problem(problem, "auto")
    assert small.lumping is not None
    assert answered(small)[0] == answered(problem)[0] == {"steps": steps}


def test_auto_lumps_a_ring_and_not_an_acyclic_chain(tmp_path: Path) -> None:
    assert worth_lumping(herman(tmp_path, 7))
    line = project_chain(RandomChain(["a", "b", "c"], [{1: Fraction(1)}, {2: Fraction(1)}, {}],
                                     {0: Fraction(1)}, {}))
    assert not worth_lumping(ChainProblem(line, Question()))
    assert lumped_problem(ChainProblem(line, Question()), "auto").lumping is None
    assert lumped_problem(herman(tmp_path, 7), "off").lumping is None


def test_the_check_refuses_a_partition_that_is_no_lumping() -> None:
    problem = pieces_chain(2)
    chain, question = problem.chain, problem.question
    blocks, _ = bisimulation(chain, question)
    good = quotient(chain, question, blocks)
    assert check_lumping(chain, good, blocks, question)["passed"]
    # the states 0,0,1 and 0,1,1 are not alike (one piece more to bring home): merged,
    # the quotient built the same way no longer moves as every state of its block
    wrong = blocks.copy()
    a, b = chain.index["0,0,1"], chain.index["0,1,1"]
    wrong[wrong == wrong[b]] = wrong[a]
    wrong = np.unique(wrong, return_inverse=True)[1].reshape(-1)
    report = check_lumping(chain, quotient(chain, question, wrong), wrong, question)
    assert not report["passed"]
    assert "0,0,1" in report["why"] or "0,1,1" in report["why"]
    # a quotient whose start is not the chain's summed per block
    from dataclasses import replace
    from ladders.solver.exact import mpq
    moved = replace(good, start=((int(blocks[-1]), mpq(1)),))
    report = check_lumping(chain, moved, blocks, question)
    assert not report["passed"] and "start" in report["why"]


def test_a_lumped_problem_is_built_again_from_its_json(tmp_path: Path) -> None:
    small = lumped_problem(herman(tmp_path, 5), "on")
    data = small.to_json()
    assert data["lump"] == "on"
    again = chain_problem_from_json(data)
    assert again.lumping is not None and again.chain.size == small.chain.size
    assert np.array_equal(again.lumping.blocks, small.lumping.blocks)
    for name in ("indptr", "indices", "numerators", "denominators"):
        assert np.array_equal(getattr(again.chain, name), getattr(small.chain, name))


def test_a_reward_the_chain_lacks_is_named_before_lumping() -> None:
    from ladders.solver.chains.model import ChainError
    problem = pieces_chain(2)
    with pytest.raises(ChainError, match="no reward 'nope' in pieces"):
        lumped_problem(ChainProblem(problem.chain, Question("reward", "home", reward="nope")), "on")
