"""The component solve (issue 52): Tarjan's components in topological order, and the
topological solve modulo word primes, against plain definitions and the fraction-free
elimination, with ``==``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from chain_oracle import random_chain
from ladders.cluster.engines import choose_engine
from ladders.solver.chains.components import strong_components
from ladders.solver.chains.model import chain_from_rows
from ladders.solver.chain_problem import ChainProblem
from ladders.solver.chains.questions import Question, build_system, plan_question
from ladders.solver.engines.components import solve_topological, structure
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem


def reach_sets(adjacency: list[list[int]]) -> list[set[int]]:
    out = []
    for s in range(len(adjacency)):
        seen, todo = {s}, [s]
        while todo:
            for w in adjacency[todo.pop()]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        out.append(seen)
    return out


def csr(adjacency: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.cumsum([0] + [len(a) for a in adjacency]).astype(np.int64)
    return indptr, np.array([w for a in adjacency for w in a], dtype=np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_components_are_mutual_reachability_in_topological_order(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    adjacency = [sorted(rng.sample(range(n), rng.randint(0, min(3, n)))) for _ in range(n)]
    found = strong_components(*csr(adjacency))
    reach = reach_sets(adjacency)
    for i in range(n):
        for j in range(n):
            assert (found.of[i] == found.of[j]) == (j in reach[i] and i in reach[j])
            if j in adjacency[i]:
                assert found.of[j] <= found.of[i]   # edges go to earlier components
    assert sorted(found.order.tolist()) == list(range(n))
    assert found.sizes.sum() == n and found.count == len(set(found.of.tolist()))


def test_a_path_of_a_million_needs_no_call_stack():
    n = 1_000_000
    indptr = np.arange(n + 1, dtype=np.int64).clip(max=n - 1)   # i -> i + 1, the last none
    indices = np.arange(1, n, dtype=np.int64)
    found = strong_components(indptr, indices)
    assert found.count == n and found.largest == 1
    assert found.of[n - 1] == 0 and found.of[0] == n - 1   # the sink is solved first


def random_system(rng: random.Random, n: int, columns: int) -> LinearSystem:
    """A diagonally dominant integer system with cycles of a few unknowns and long
    acyclic stretches (nonsingular), entries of any sign and size up to 2^40."""
    rows = []
    for i in range(n):
        row = {}
        for j in rng.sample(range(n), rng.randint(0, 3)):
            if j != i and (j < i or rng.random() < 0.15):
                row[j] = rng.choice([-1, 1]) * rng.randint(1, 1 << rng.choice([3, 20, 40]))
        row[i] = sum(abs(v) for v in row.values()) + rng.randint(1, 9)
        rows.append(list(row.items()))
    rhs = np.array([[rng.randint(-50, 50) for _ in range(columns)] for _ in range(n)],
                   dtype=np.int64)
    return LinearSystem.from_rows(rows, rhs, [(i,) for i in range(n)], rng.randrange(n), "random")


@pytest.mark.parametrize("seed", range(12))
def test_topological_solve_equals_the_elimination(seed):
    rng = random.Random(seed)
    system = random_system(rng, rng.randint(2, 60), rng.randint(1, 3))
    found = structure(system)
    wanted = sorted({system.target, *rng.sample(range(system.size), 2 if system.size > 2 else 1)})
    result = solve_topological(system, found, wanted, seed=seed)
    exact = eliminate_target(system)
    assert result.values[wanted.index(system.target)] == exact
    for w in wanted:   # every wanted unknown, by a system whose target it is
        again = LinearSystem(system.indptr, system.indices, system.data, system.rhs,
                             system.labels, w, "again")
        assert result.values[wanted.index(w)] == eliminate_target(again)


def test_a_singular_system_is_refused():
    system = LinearSystem.from_rows([[(0, 1), (1, -1)], [(0, -1), (1, 1)]],
                                    np.array([[1], [0]]), [(0,), (1,)], 0, "singular")
    with pytest.raises(ArithmeticError):
        solve_topological(system, structure(system), [0], seed=1)


def project_chain(c):
    rows = [{j: mpq(p.numerator, p.denominator) for j, p in row.items()} for row in c.rows]
    return chain_from_rows("random", c.names, rows,
                           start=[(i, mpq(p.numerator, p.denominator))
                                  for i, p in sorted(c.start.items())],
                           labels={name: sorted(s) for name, s in c.labels.items()})


def test_chosen_for_a_chain_question_and_equal_to_the_elimination():
    chosen = 0
    for seed in range(60):
        chain = project_chain(random_chain(random.Random(seed)))
        for question in [Question(), *(Question("reach", label) for label in chain.labels)]:
            problem = ChainProblem(chain, question)
            if not problem.solvable:
                continue
            assert choose_engine(problem).name == "components"
            plan = plan_question(chain, question)
            system = build_system(chain, question, plan)
            result = solve_topological(system, problem.structure, [system.target], seed=seed)
            assert result.values[0] == eliminate_target(system)
            chosen += 1
    assert chosen > 50


def test_not_chosen_where_a_component_is_large():
    """A ring of 700 states is one component: 3.4e8 products a prime, a factorization's job."""
    n = 700
    rows = [{(i + 1) % n: mpq(1, 2), n: mpq(1, 2)} for i in range(n)] + [{n: 1}]
    chain = chain_from_rows("ring", [str(i) for i in range(n + 1)], rows, start=0,
                            labels={"out": [n]})
    problem = ChainProblem(chain, Question("reach", "out"))
    assert problem.structure.largest == n and not problem.topological
    assert choose_engine(problem).name != "components"


def test_a_store_asked_for_stays_with_the_component_solve():
    """--checkpoint with no --engine: the component solve keeps one (batches of primes),
    so the chain question stays with it (before: the elimination engine, an LU of the
    whole system); --table, which needs every unknown, goes to an engine that gives it."""
    from ladders.cluster.engines import SolveRequest
    chain = project_chain(random_chain(random.Random(3)))
    problem = ChainProblem(chain, Question())
    assert choose_engine(problem).name == "components"
    assert choose_engine(problem, SolveRequest(seed=5)).name == "components"
    assert choose_engine(problem, SolveRequest(checkpoint="/tmp/run")).name == "components"
    assert choose_engine(problem, SolveRequest(table=True)).name != "components"


def rings(count: int, size: int):
    """``count`` rings of ``size`` states, each state stepping along its ring or on to
    the next ring's first state (the last ring's: out), one half each: ``count``
    components of ``size`` unknowns in a row."""
    n = count * size
    rows = []
    for r in range(count):
        for i in range(size):
            onward = n if r == count - 1 else (r + 1) * size
            rows.append({r * size + (i + 1) % size: mpq(1, 2), onward: mpq(1, 2)})
    rows.append({n: 1})
    return chain_from_rows("rings", [str(i) for i in range(n + 1)], rows, start=0,
                           labels={"out": [n]})


def test_many_small_components_are_taken_past_the_dense_work(monkeypatch):
    """Components of at most SMALL_COMPONENT unknowns are the component solve's up to
    SMALL_DENSE_WORK products a prime (crowds 6-20: 21,252 of 60); a large one is not
    (here with the limits scaled down, so that the chains stay small)."""
    from ladders.solver.engines import components
    monkeypatch.setattr(components, "DENSE_WORK", 10 ** 5)
    monkeypatch.setattr(components, "SMALL_DENSE_WORK", 2 * 10 ** 6)
    many = ChainProblem(rings(12, 40), Question())
    found = many.structure
    assert found.largest == 40 and found.dense_work == 12 * 40 ** 3
    assert many.topological and choose_engine(many).name == "components"
    result = solve_topological(many.system, found, [many.system.target], seed=1)
    assert result.values[0] == eliminate_target(many.system)
    one = ChainProblem(rings(1, components.SMALL_COMPONENT + 1), Question())
    assert one.structure.dense_work <= 2 * 10 ** 6 and not one.topological
    too_many = ChainProblem(rings(40, 40), Question())   # 2.56e6 products a prime
    assert not too_many.topological
