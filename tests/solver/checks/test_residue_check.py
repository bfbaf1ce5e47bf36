"""Tier 2, the race system solved again modulo primes (``ladders.solver.checks.residue_check``):
the residues equal the exact answer reduced mod p, a vanishing pivot gives None, and
check_residues refuses a wrong answer."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ladders.solver.checks.residue_check import (PEEL_BITS, NotPeelable, check_residues,
                                                 peel_target_mod, random_prime, solve_target_mod)
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import mpq
from ladders.solver.games.board import preset_board
from ladders.solver.games.chain import build_chain
from ladders.solver.games.race import race_system
from ladders.solver.system import LinearSystem
from strategies import small_boards


def reduced(value: mpq, p: int) -> int:
    return int(value.numerator) * pow(int(value.denominator), -1, p) % p


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(board=small_boards(max_end=8, dice=(2, 6)), players=st.integers(2, 3),
       formulation=st.sampled_from([None, "round"]), seed=st.integers(0, 2 ** 32))
def test_residues_are_the_exact_answer_reduced(board, players, formulation, seed):
    system = race_system(build_chain(board), players, formulation)
    exact = eliminate_target(system)
    p = random_prime(random.Random(seed))
    assert solve_target_mod(system, p) == [reduced(v, p) for v in exact]


def test_a_vanishing_pivot_gives_none():
    # 3 x0 + x1 = 1, x0 + 2 x1 = 1, target x1 (label (0,): eliminated last): the first
    # pivot is 3, the second 2 - 1/3 = 5/3, and x1 = 2/5
    system = LinearSystem.from_rows([[(0, 3), (1, 1)], [(0, 1), (1, 2)]], [1, 1],
                                    [(1,), (0,)], 1, "two unknowns")
    assert solve_target_mod(system, 3) is None          # the first pivot vanishes
    assert solve_target_mod(system, 5) is None          # the last one does
    assert solve_target_mod(system, 7) == [reduced(mpq(2, 5), 7)] == [6]


def test_check_residues_refuses_a_wrong_answer():
    system = race_system(build_chain(preset_board("tiny10")), 3)
    exact = eliminate_target(system)
    good = check_residues(system, exact, primes=2, seed=3)
    assert good["passed"] and [u["agree"] for u in good["primes"]] == [True, True]
    wrong = [exact[0] + mpq(1, 10 ** 40)] + exact[1:]
    bad = check_residues(system, wrong, primes=2, seed=3)
    assert not bad["passed"] and [u["agree"] for u in bad["primes"]] == [False, False]


def acyclic_system(rng: random.Random, n: int) -> LinearSystem:
    """A system whose unknowns depend only on later ones (Kahn's peeling solves it),
    entries of either sign, two right-hand sides; the target is unknown 0."""
    rows = []
    for i in range(n):
        row = {j: rng.choice([-1, 1]) * rng.randint(1, 1 << 40)
               for j in rng.sample(range(i + 1, n), min(3, n - i - 1))}
        row[i] = rng.randint(1, 1 << 20)
        rows.append(list(row.items()))
    rhs = [[rng.randint(-9, 9), rng.randint(0, 9)] for _ in range(n)]
    return LinearSystem.from_rows(rows, rhs, [(i,) for i in range(n)], 0, "acyclic")


def test_peeling_gives_the_exact_answer_reduced():
    rng = random.Random(5)
    for _ in range(20):
        system = acyclic_system(rng, rng.randint(1, 40))
        exact = eliminate_target(system)
        p = random_prime(rng, PEEL_BITS)
        assert peel_target_mod(system, [p]) in ([[reduced(v, p) for v in exact]], None)
        report = check_residues(system, exact, primes=1, seed=rng.randrange(1 << 30))
        assert report["passed"] and report["method"] == "peeling" and len(report["primes"]) == 2
        wrong = check_residues(system, [exact[0] + 1, exact[1]], primes=1, seed=1)
        assert not wrong["passed"]


def test_a_cycle_stops_the_peeling_and_the_elimination_answers():
    system = race_system(build_chain(preset_board("tiny10")), 2)
    with pytest.raises(NotPeelable):
        peel_target_mod(system, [random_prime(random.Random(1), PEEL_BITS)])
    report = check_residues(system, eliminate_target(system), primes=1, seed=2)
    assert report["passed"] and report["method"] == "elimination" and len(report["primes"]) == 1


def test_a_zero_diagonal_leaves_the_peeling_for_the_elimination():
    # x1 = 2 (no x0 in row 0: a zero on the diagonal), x0 + x1 = 3: x0 = 1; no row
    # names only its own unknown, so the peeling cannot start, and the elimination
    # (which pivots on the rows as they come) answers
    system = LinearSystem.from_rows([[(1, 1)], [(0, 1), (1, 1)]], [2, 3], [(1,), (0,)], 0,
                                    "zero diagonal")
    report = check_residues(system, [mpq(1)], primes=1, seed=4)
    assert report["passed"] and report["method"] == "elimination"
