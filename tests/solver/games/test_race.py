"""Exact races: the example table and random boards against the python-flint oracle."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples import EXAMPLES
from oracle import oracle_seats
from race_solve import solve_race
from ladders.solver.games.chain import build_chain
from ladders.solver.exact import mpq
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.games.race import race_system, seats_from_values
from strategies import small_boards


def test_turn_and_round_forms_agree() -> None:
    for ex in EXAMPLES.values():
        if ex.players == 2:
            chain = build_chain(ex.board)
            assert solve_race(chain, 2, formulation="turn").seats == solve_race(chain, 2, formulation="round").seats


def test_table_is_the_full_solution() -> None:
    chain = build_chain(EXAMPLES["tiny10-2"].board)
    result = solve_race(chain, 2, table=True)
    assert result.table[(0, 0)] == mpq(30799, 57720)
    n = len(chain.states)
    assert len(result.table) == n * n
    # certificate: every P(a,b) satisfies its own equation exactly
    d = chain.die
    for a_i, a in enumerate(chain.states):
        for b in chain.states:
            rhs = mpq(chain.finish[a_i], d) + sum((mpq(c, d) * (1 - result.table[(b, chain.states[j])])
                                                  for j, c in chain.moves[a_i]), mpq(0))
            assert result.table[(a, b)] == rhs


@settings(max_examples=30, deadline=None)
@given(board=small_boards(max_end=7), players=st.integers(2, 3))
def test_random_boards_match_the_oracle(board, players: int) -> None:
    seats = solve_race(build_chain(board), players).seats
    assert sum(seats, mpq(0)) == 1
    assert seats == oracle_seats(board, players)


@pytest.mark.parametrize("ex", EXAMPLES.values(), ids=lambda e: e.name)
def test_every_formulation_gives_the_same_seats(ex) -> None:
    chain = build_chain(ex.board)
    forms = ["round", "sym"] + (["turn"] if ex.players == 2 else [])
    answers = {f: solve_race(chain, ex.players, formulation=f).seats for f in forms}
    assert all(a == answers["round"] for a in answers.values())


def test_symmetric_form_has_one_unknown_per_multiset() -> None:
    chain = build_chain(EXAMPLES["tiny10-3"].board)
    n = len(chain.states)
    for k in (2, 3, 4):
        system = race_system(chain, k, "sym")
        assert system.size == math.comb(n + k - 1, k)
        assert system.labels[system.target] == (chain.board.start,) * k
        assert all(list(lab) == sorted(lab, reverse=True) for lab in system.labels)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_symmetric_form_matches_the_oracle_for_many_players(data: st.DataObject) -> None:
    # the oracle is dense: 4 players on 5 squares is a 2,500-unknown rational solve (the
    # test took 2 to 24 s by the boards drawn); on 4 squares 1,024
    players = data.draw(st.integers(3, 4))
    board = data.draw(small_boards(max_end=5 if players == 3 else 4))
    seats = seats_from_values(race_system(build_chain(board), players, "sym"), players,
                              solve_dixon(race_system(build_chain(board), players, "sym"), seed=0).values)
    assert seats == oracle_seats(board, players)


@pytest.mark.parametrize("name", ["tiny10-2", "tiny10-3", "bounce12-2", "pass15-2", "d3-4"])
def test_a_race_is_a_chain(name: str) -> None:
    """The race's joint chain (issue 53: a race is a chain) ends in ``seat j wins``
    with seat j's chance, the same fraction (==) as the race's own system; its moves
    are the bump chain's without the bump."""
    from ladders.solver.chain_problem import ChainProblem
    from ladders.solver.chains.questions import Question
    from ladders.solver.games.race import race_chain
    ex = EXAMPLES[name]
    chain = race_chain(ex.board, ex.players)
    problem = ChainProblem(chain, Question())
    values = solve_dixon(problem.system).values
    answers = problem.named([mpq(v) for v in values])
    seats = solve_race(build_chain(ex.board), ex.players).seats
    assert [answers.get(f"seat {j + 1} wins", mpq(0)) for j in range(ex.players)] == seats
    assert chain.name.endswith("pieces that never meet") and chain.size > len(seats)


def test_a_race_problem_offers_its_chain_and_question() -> None:
    """A race problem offers what a chain question has, a :class:`Chain` and a
    :class:`Question` (the joint chain, where it ends), built only when asked, beside
    its one piece's chain (``pieces``) that the series engine and the race bounds take."""
    from ladders.solver.chains.model import Chain
    from ladders.solver.chains.questions import Question
    from ladders.solver.problem import Problem
    problem = Problem.build(EXAMPLES["tiny10-3"].board, 3)
    assert "chain" not in vars(problem)  # not built with the problem
    assert problem.pieces is problem.piece and problem.question == Question()
    assert isinstance(problem.chain, Chain) and problem.chain.size == 887
