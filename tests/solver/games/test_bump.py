"""The bump rule's joint chain (:mod:`ladders.solver.games.bump`): a case solved by hand,
the independent race where pieces cannot meet, a plain-Python construction of the same
chain, a second exact formulation (two players, the mover's view), and a Monte Carlo
of the game played on the board itself."""

from __future__ import annotations

import hashlib
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples import truncated
from ladders.solver.chains.model import Chain, ChainBuilder
from ladders.solver.chains.questions import Question, answers, build_system, plan_question
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.exact import mpq
from ladders.solver.games.board import Board, make_board, preset_board, reachable_squares
from ladders.solver.games.bump import bump_chain
from ladders.solver.answers import one_player_stats
from ladders.solver.games.chain import build_chain
from race_solve import solve_race
from ladders.solver.system import LinearSystem
from strategies import small_boards

ABSORB = Question("absorb")
BOUNCE12 = make_board("bounce12", 0, 12, 4, "bounce", [(3, 9), (11, 1), (7, 10)])


def solve(chain: Chain, exact: str = "elimination") -> dict[str, mpq | str]:
    """Every answer of the ``absorb`` question, by ``eliminate_target`` or Dixon."""
    plan = plan_question(chain, ABSORB)
    system = build_system(chain, ABSORB, plan)
    values = eliminate_target(system) if exact == "elimination" else solve_dixon(system, seed=1).values
    return answers(plan, values)


def test_by_hand() -> None:
    # squares 0..3, a die of 2, no jumps, two players. With f(a, b) the mover's chance
    # on a against b: f(0,1) = (2 - f(1,2))/3, f(0,2) = (2 - f(2,1))/3,
    # f(1,2) = 1 - f(0,2)/2, f(2,1) = 1 - f(1,2)/2 give f(1,2) = 10/13, f(0,2) = 6/13,
    # f(2,1) = 8/13, f(0,1) = 16/39 and f(0,0) = 1 - (f(0,1) + f(0,2))/2 = 22/39;
    # the same steps for the expected moves give 6.
    chain = bump_chain(make_board("by-hand", 0, 3, 2, "stay", []), 2)
    # in the order of the mover's view: (0, 0), (0, 1) twice, (0, 2) twice, (1, 2), (2, 1)
    assert chain.states == ("0,0|1", "0,1|1", "1,0|2", "0,2|1", "2,0|2", "1,2|1", "2,1|2",
                            "2,1|1", "1,2|2", "seat 1 wins", "seat 2 wins")
    # seat 2 moves 0 -> 1 onto seat 1, which goes back to the start
    assert chain.row(chain.index["1,0|2"]) == [(chain.index["0,1|1"], mpq(1, 2)),
                                              (chain.index["1,2|1"], mpq(1, 2))]
    assert solve(chain) == {"seat 1 wins": mpq(22, 39), "seat 2 wins": mpq(17, 39),
                            "steps": mpq(6)}


def test_nothing_happens_on_the_start() -> None:
    # from 0: a roll of 1 takes the chute 1 -> 0, 2 lands on 2, 3 the ladder 3 -> 4 (the end)
    chain = bump_chain(make_board("safe", 0, 4, 3, "stay", [(1, 0), (3, 4)]), 2)
    at = chain.index
    # seat 1 down the chute to the start, where seat 2's piece stays
    assert chain.row(at["0,0|1"]) == [(at["0,0|2"], mpq(1, 3)), (at["2,0|2"], mpq(1, 3)),
                                      (at["seat 1 wins"], mpq(1, 3))]
    # seat 2 onto seat 1's square (seat 1's piece goes back), down the chute, or home
    assert chain.row(at["2,0|2"]) == [(at["0,2|1"], mpq(1, 3)), (at["2,0|1"], mpq(1, 3)),
                                      (at["seat 2 wins"], mpq(1, 3))]


def reference_chain(board: Board, players: int) -> Chain:
    """The same chain by a plain search over tuples with :meth:`Board.move`, through
    :class:`ChainBuilder`, with its states in the order of the module (the squares
    from the mover's on in turn order, then the mover; the winners last)."""
    rows: dict[tuple[tuple[int, ...], int], dict[object, int]] = {}
    todo = [((board.start,) * players, 0)]
    while todo:
        state = todo.pop()
        if state in rows:
            continue
        pos, t = state
        row: dict[object, int] = {}
        for r in range(1, board.die + 1):
            land = board.move(pos[t], r)
            if land == board.end:
                key: object = t
            else:
                key = (tuple(land if j == t else board.start if p == land != board.start else p
                             for j, p in enumerate(pos)), (t + 1) % players)
                todo.append(key)  # type: ignore[arg-type]
            row[key] = row.get(key, 0) + 1
        rows[state] = row
    order = sorted(rows, key=lambda state: (state[0][state[1]:] + state[0][:state[1]], state[1]))
    winners = sorted({key for row in rows.values() for key in row if isinstance(key, int)})
    builder = ChainBuilder("reference", "reference")
    builder.states([",".join(map(str, pos)) + f"|{t + 1}" for pos, t in order]
                   + [f"seat {t + 1} wins" for t in winners])
    index = {state: i for i, state in enumerate(order)}
    index.update({t: len(order) + c for c, t in enumerate(winners)})
    for state in order:
        for key, count in rows[state].items():
            builder.transition(index[state], index[key], mpq(count, board.die))
    for t in winners:
        builder.transition(index[t], index[t], mpq(1))
        builder.label(f"seat {t + 1} wins", [index[t]])
    builder.start_at(0)
    return builder.build()


@settings(max_examples=60, deadline=None)
@given(small_boards(max_end=8), st.integers(1, 3))
def test_same_chain_as_a_plain_search(board: Board, players: int) -> None:
    chain = bump_chain(board, players)
    reference = reference_chain(board, players)
    assert chain.states == reference.states
    assert chain.digest() == reference.digest()  # rows, start, labels: every integer


def test_one_player_is_the_board() -> None:
    board = preset_board("hasbro")
    chain = bump_chain(board, 1)
    assert chain.size == len(build_chain(board).states) + 1
    assert solve(chain) == {"seat 1 wins": 1,
                            "steps": one_player_stats(build_chain(board)).expected_length}


@pytest.mark.parametrize("players", [2, 3])
def test_the_race_where_pieces_cannot_meet(players: int) -> None:
    # every roll from the start takes the chute 1 -> 0, finishes, or overshoots (stay):
    # the pieces never leave the start, so nobody is ever bumped
    board = make_board("start-only", 0, 2, 3, "stay", [(1, 0)])
    chain = bump_chain(board, players)
    assert chain.size == players + players                # (0,...,0 | t) and the winners
    got = solve(chain)
    race = solve_race(build_chain(board), players).seats
    assert [got[f"seat {j + 1} wins"] for j in range(players)] == race
    assert got["steps"] == 3                              # one chance in 3 each throw


def mover_view(board: Board) -> LinearSystem:
    """Two players as the race's ``turn`` form with the bump: ``P(a, b)``, the mover
    on a wins against b, ``d P(a, b) + sum_r P(b', a') = d`` over the rolls r that do
    not finish (``a'`` where roll r takes a, ``b' = s0`` if ``b = a' != s0``)."""
    squares = sorted(s for s in reachable_squares(board) if s != board.end)
    index = {s: i for i, s in enumerate(squares)}
    n = len(squares)
    rows = []
    for a in squares:
        for b in squares:
            row = {index[a] * n + index[b]: board.die}
            for r in range(1, board.die + 1):
                land = board.move(a, r)
                if land != board.end:
                    other = board.start if b == land != board.start else b
                    j = index[other] * n + index[land]
                    row[j] = row.get(j, 0) + 1
            rows.append(list(row.items()))
    s0 = index[board.start]
    return LinearSystem.from_rows(rows, np.full((n * n, 1), board.die, dtype=np.int64),
                                  [(a, b) for a in squares for b in squares], s0 * n + s0,
                                  f"{board.name}: mover's view with the bump")


@pytest.mark.parametrize("board", [preset_board("tiny10"), truncated("hasbro", 16), BOUNCE12],
                         ids=lambda b: b.name)
def test_two_players_from_the_movers_view(board: Board) -> None:
    got = solve(bump_chain(board, 2))
    assert got["seat 1 wins"] == eliminate_target(mover_view(board))[0]
    assert got["seat 1 wins"] + got["seat 2 wins"] == 1


def play(board: Board, players: int, games: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``games`` games played on the board itself: the winning seat (0-based) and the
    number of moves of each. Every game has the same mover at the same time."""
    land = np.array([[board.move(s, r) for r in range(1, board.die + 1)]
                     for s in range(board.start, board.end + 1)])
    pos = np.full((games, players), board.start)
    winner = np.full(games, -1)
    moves = np.zeros(games, dtype=np.int64)
    live = np.arange(games)
    t = 0
    while live.size:
        seat = t % players
        new = land[pos[live, seat] - board.start, rng.integers(0, board.die, live.size)]
        done = new == board.end
        winner[live[done]], moves[live[done]] = seat, t + 1
        live, new = live[~done], new[~done]
        here = pos[live]
        bumped = (here == new[:, None]) & (new[:, None] != board.start)
        here[bumped] = board.start
        here[:, seat] = new
        pos[live] = here
        t += 1
    return winner, moves


@pytest.mark.parametrize("board,players", [
    (preset_board("tiny10"), 2), (preset_board("tiny10"), 3), (truncated("hasbro", 20), 2),
    (BOUNCE12, 3), (make_board("pass9", 0, 9, 3, "pass", [(2, 6), (8, 1)]), 4)],
    ids=lambda x: getattr(x, "name", str(x)))
def test_monte_carlo(board: Board, players: int) -> None:
    exact = solve(bump_chain(board, players), "dixon")
    games = 40_000
    winner, moves = play(board, players, games, np.random.default_rng(38))
    for j in range(players):
        p = float(exact[f"seat {j + 1} wins"])
        assert abs(np.mean(winner == j) - p) < 5 * math.sqrt(p * (1 - p) / games)
    assert abs(moves.mean() - float(exact["steps"])) < 5 * moves.std() / math.sqrt(games)


def test_refused() -> None:
    board = preset_board("tiny10")
    for players in (0, 7):
        with pytest.raises(ValueError, match="1 to 6 players"):
            bump_chain(board, players)
    with pytest.raises(ValueError, match="more than the 20,000,000"):
        bump_chain(preset_board("hasbro"), 4)


#: Seat 1's chance on ``hasbro`` with the bump rule, two players (docs/guide.md).
HASBRO_BUMP_SHA256 = "5320157f2845860307bc29f4bfd324764d0fd200427a41b937f5528053803346"


@pytest.mark.slow
def test_hasbro_two_players() -> None:
    sys.set_int_max_str_digits(0)
    board = preset_board("hasbro")
    chain = bump_chain(board, 2)
    assert chain.size == 12_803
    plan = plan_question(chain, Question("reach", target="seat 1 wins"))
    value = solve_dixon(build_system(chain, Question("reach", target="seat 1 wins"), plan),
                        seed=1).values[0]
    text = f"{value.numerator}/{value.denominator}"
    assert hashlib.sha256(text.encode()).hexdigest() == HASBRO_BUMP_SHA256
    assert len(str(value.numerator)) == len(str(value.denominator)) == 4_836
    assert value == solve_dixon(mover_view(board), seed=1).values[0]
