"""Tier 2, the race system solved again modulo primes (``ladders.solver.checks.residue_check``):
the residues equal the exact answer reduced mod p, a vanishing pivot gives None, and
check_residues refuses a wrong answer."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ladders.solver.checks.residue_check import (BLOCK_BITS, BlocksTooLarge, block_target_mod,
                                                 check_residues, random_prime, solve_target_mod)
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
    # its components are small: two 31-bit primes for each 61-bit one, by blocks
    assert good["method"] == "blocks" and len(good["primes"]) == 4
    assert good["passed"] and all(u["agree"] for u in good["primes"])
    wrong = [exact[0] + mpq(1, 10 ** 40)] + exact[1:]
    bad = check_residues(system, wrong, primes=2, seed=3)
    assert not bad["passed"] and not any(u["agree"] for u in bad["primes"])


def blocky_system(rng: random.Random, n: int) -> LinearSystem:
    """A nonsingular system (diagonally dominant) whose unknowns depend on later ones and
    now and then on earlier ones (cycles of a few unknowns), entries of either sign, two
    right-hand sides; the target is unknown 0."""
    rows = []
    for i in range(n):
        row = {j: rng.choice([-1, 1]) * rng.randint(1, 1 << 30)
               for j in rng.sample(range(n), min(3, n)) if j != i and (j > i or rng.random() < 0.1)}
        row[i] = sum(abs(v) for v in row.values()) + rng.randint(1, 1 << 20)
        rows.append(list(row.items()))
    rhs = [[rng.randint(-9, 9), rng.randint(0, 9)] for _ in range(n)]
    return LinearSystem.from_rows(rows, rhs, [(i,) for i in range(n)], 0, "blocks")


def test_the_block_solve_gives_the_exact_answer_reduced():
    rng = random.Random(5)
    for _ in range(30):
        system = blocky_system(rng, rng.randint(1, 40))
        exact = eliminate_target(system)
        p = random_prime(rng, BLOCK_BITS)
        assert block_target_mod(system, [p]) in ([[reduced(v, p) for v in exact]], None)
        report = check_residues(system, exact, primes=1, seed=rng.randrange(1 << 30))
        assert report["passed"] and report["method"] == "blocks" and len(report["primes"]) == 2
        wrong = check_residues(system, [exact[0] + 1, exact[1]], primes=1, seed=1)
        assert not wrong["passed"]


def test_a_large_component_is_left_to_the_elimination(monkeypatch):
    from ladders.solver.checks import residue_check
    system = race_system(build_chain(preset_board("tiny10")), 2)
    monkeypatch.setattr(residue_check, "BLOCK_LIMIT", 4)
    with pytest.raises(BlocksTooLarge):
        block_target_mod(system, [random_prime(random.Random(1), BLOCK_BITS)])
    report = check_residues(system, eliminate_target(system), primes=1, seed=2)
    assert report["passed"] and report["method"] == "elimination" and len(report["primes"]) == 1


def test_a_zero_diagonal_in_a_cycle_is_solved_by_its_block():
    # row 0: x1 = 2 (no x0: a zero on the diagonal), row 1: x0 + x1 = 3, so x0 = 1; the
    # two unknowns are one component, whose block pivots on the first nonzero
    system = LinearSystem.from_rows([[(1, 1)], [(0, 1), (1, 1)]], [2, 3], [(1,), (0,)], 0,
                                    "zero diagonal")
    report = check_residues(system, [mpq(1)], primes=1, seed=4)
    assert report["passed"] and report["method"] == "blocks"
