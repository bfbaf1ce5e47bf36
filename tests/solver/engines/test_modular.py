"""The modular engine (Dixon lifting + certificate) against the elimination engine and the
oracle, and the ways its certificate must refuse a wrong answer."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings

from examples import EXAMPLES
from oracle import oracle_seats
from ladders.solver.games.chain import build_chain
from ladders.solver.engines.modular import (Interrupted, digits_to_integers, padic_to_integers,
                          random_lifting_prime, rational_reconstruction, solve_dixon)
from ladders.solver.engines.elimination import eliminate_target, solve_all
from ladders.solver.exact import mpq, mpz
from ladders.solver.engines.modp import MAX_PRIME, lu_factor_mod, lu_solve_mod, permute_csr, residual_is_zero
from ladders.solver.games.race import race_system, seats_from_values
from ladders.solver.system import LinearSystem
from strategies import small_boards


@pytest.mark.parametrize("ex", EXAMPLES.values(), ids=lambda e: e.name)
def test_modular_equals_elimination_and_oracle(ex) -> None:
    system = race_system(build_chain(ex.board), ex.players)
    values = solve_dixon(system, seed=3).values
    assert values == eliminate_target(system)
    assert seats_from_values(system, ex.players, values) == oracle_seats(ex.board, ex.players)
    if ex.seat1 is not None:
        assert values[0] == ex.seat1


@settings(max_examples=25, deadline=None)
@given(small_boards())
def test_random_boards_every_unknown(board) -> None:
    system = race_system(build_chain(board), 2)
    result = solve_dixon(system, seed=0)
    assert result.columns[0].solution() == solve_all(system)[0]


def test_whole_table_satisfies_every_equation() -> None:
    system = race_system(build_chain(EXAMPLES["hasbro20-2"].board), 2)
    column = solve_dixon(system, seed=1).columns[0]
    x = column.solution()
    for i in range(system.size):
        assert sum((v * x[c] for c, v in system.row(i)), mpq(0)) == int(system.rhs[i, 0])


def test_a_wrong_candidate_is_never_returned() -> None:
    # a margin of -10,000 bits accepts every reconstruction, however early: the
    # certificate alone must stand between those candidates and the answer
    system = race_system(build_chain(EXAMPLES["hasbro20-2"].board), 2)
    forced = solve_dixon(system, seed=2, chunk=1, margin_bits=-10_000)
    assert forced.rejected > 0
    assert forced.values == eliminate_target(system)


def test_target_denominator_not_common_to_all_unknowns() -> None:
    # x0 = 1/2, x1 = 1/3 (coupled only through the order): the target's denominator 2
    # does not cover x1, the common denominator is 6
    system = LinearSystem.from_rows([[(0, 2)], [(1, 3)], [(0, 4), (2, 5)]],
                                    np.array([1, 1, 7]), [(0,), (1,), (2,)], target=2,
                                    description="toy")
    result = solve_dixon(system, seed=0)
    assert result.values == [mpq(1, 1)]
    assert result.columns[0].solution() == [mpq(1, 2), mpq(1, 3), mpq(1)]


def test_certificate_rejects_a_corrupted_solution() -> None:
    system = race_system(build_chain(EXAMPLES["tiny10-2"].board), 2)
    result = solve_dixon(system, seed=4)
    column = result.columns[0]
    a = permute_csr(system.indptr, system.indices, system.data, column.order)
    ddig = []
    d = column.denominator
    while d:
        d, r = divmod(d, column.prime)
        ddig.append(int(r))
    rhs = np.outer(np.array(ddig, dtype=np.int64), system.rhs[column.order, 0])
    assert residual_is_zero(*a, column.digits, rhs, column.prime)
    bad = column.digits.copy()
    bad[0, 5] += 1
    assert not residual_is_zero(*a, bad, rhs, column.prime)
    bad = column.digits.copy()
    bad[-1, 0] += column.prime  # same residue mod p, different integer
    assert not residual_is_zero(*a, bad, rhs, column.prime)


def test_prime_dividing_a_pivot_is_replaced() -> None:
    # the first prime that seed 5 draws is the system's first pivot: the factorization
    # must fail with it, and solve_dixon must go on with another prime
    first = random_lifting_prime(random.Random(5))
    system = LinearSystem.from_rows([[(0, first)], [(0, 1), (1, 1)]], np.array([1, 1]),
                                    [(0,), (1,)], target=1, description="pivot p")
    with pytest.raises(ZeroDivisionError):
        lu_factor_mod(system.indptr, system.indices, system.data, np.array([0, 1]), first)
    result = solve_dixon(system, seed=5)
    assert result.prime != first
    assert result.values == [mpq(first - 1, first)]
    lu = lu_factor_mod(system.indptr, system.indices, system.data, np.array([0, 1]), result.prime)
    x = lu_solve_mod(lu, system.rhs[:, 0])
    assert x[0] * first % result.prime == 1


def test_rational_reconstruction_and_digit_conversion() -> None:
    m = mpz(10007) ** 8
    for u, v in [(3, 7), (-12345, 679), (0, 1)]:
        x = mpz(u) * pow(v, -1, int(m)) % m
        assert rational_reconstruction(x, m) == (u, v)
    rng = np.random.default_rng(0)
    for steps in (1, 2, 3, 7, 33):
        digits = rng.integers(0, MAX_PRIME, size=(steps, 5))
        expected = [sum(mpz(int(digits[s, j])) * mpz(MAX_PRIME) ** s for s in range(steps))
                    for j in range(5)]
        assert padic_to_integers(digits, MAX_PRIME) == expected
        signed = digits - MAX_PRIME // 2
        assert digits_to_integers(signed, MAX_PRIME) == [
            sum(mpz(int(signed[s, j])) * mpz(MAX_PRIME) ** s for s in range(steps)) for j in range(5)]


def test_interrupted_lifting_resumes_from_its_state() -> None:
    system = race_system(build_chain(EXAMPLES["tiny10-3"].board), 3)  # three right-hand sides
    whole = solve_dixon(system, seed=8, chunk=2).values
    calls = {"n": 0}

    def stop_soon() -> bool:
        calls["n"] += 1
        return calls["n"] > 5  # one poll before the factorization's only chunk, then 4 in the lifting
    saved = []
    with pytest.raises(Interrupted) as stop:
        solve_dixon(system, seed=8, chunk=2, should_stop=stop_soon, save=saved.append)
    state = stop.value.state
    assert state.steps > 0 and saved and saved[-1].steps == state.steps
    assert state.columns  # stopped after the first right-hand side was certified
    assert solve_dixon(system, seed=8, chunk=2, state=state).values == whole
    with pytest.raises(ValueError, match="resume with the seed"):
        solve_dixon(system, seed=9, chunk=2, state=state)


def test_a_stop_during_the_factorization_keeps_the_state_it_had() -> None:
    system = race_system(build_chain(EXAMPLES["tiny10-3"].board), 3)
    rows = []
    solve_dixon(system, seed=8, factor_progress=lambda done, total: rows.append((done, total)))
    assert rows and rows[-1] == (system.size, system.size)
    with pytest.raises(Interrupted) as stop:
        solve_dixon(system, seed=8, should_stop=lambda: True)
    assert stop.value.state is None  # nothing lifted yet: nothing new to keep
    calls = {"n": 0}

    def once() -> bool:
        calls["n"] += 1
        return calls["n"] > 3
    with pytest.raises(Interrupted) as first:
        solve_dixon(system, seed=8, chunk=2, should_stop=once)
    with pytest.raises(Interrupted) as again:
        solve_dixon(system, seed=8, chunk=2, state=first.value.state, should_stop=lambda: True)
    assert again.value.state is first.value.state
