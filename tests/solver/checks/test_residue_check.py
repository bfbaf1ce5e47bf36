"""Tier 2, the race system solved again modulo primes (``ladders.solver.checks.residue_check``):
the residues equal the exact answer reduced mod p, a vanishing pivot gives None, and
check_residues refuses a wrong answer."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ladders.solver.checks.residue_check import check_residues, random_prime, solve_target_mod
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
