"""Independent exact answers for tests: python-flint's dense rational solver on an
independent formulation of the race (absolute seats, one unknown per position and
player to move), sharing no code with the engines beyond ``Board.move``."""

from __future__ import annotations

import itertools

import flint

from ladders.solver.games.board import Board, reachable_squares
from ladders.solver.exact import mpq


def oracle_seats(board: Board, players: int) -> list[mpq]:
    """Win probability of each seat from the start, solved densely with flint.

    Unknown W_j(s, t): seat j wins, positions s = (s_1..s_k), seat t to move.
    ``W_j(s, t) = sum_r 1/d [seat t finishes ? (t == j) : W_j(s', t + 1 mod k)]``.
    """
    squares = sorted(x for x in reachable_squares(board) if x != board.end)
    states = [(s, t) for s in itertools.product(squares, repeat=players) for t in range(players)]
    index = {st: i for i, st in enumerate(states)}
    n = len(states)
    d = board.die
    a = flint.fmpq_mat(n, n)
    b = flint.fmpq_mat(n, players)
    for i, (s, t) in enumerate(states):
        a[i, i] += 1
        for r in range(1, d + 1):
            land = board.move(s[t], r)
            if land == board.end:
                b[i, t] += flint.fmpq(1, d)
            else:
                s2 = s[:t] + (land,) + s[t + 1:]
                a[i, index[(s2, (t + 1) % players)]] -= flint.fmpq(1, d)
    x = a.solve(b)
    i0 = index[(tuple([board.start] * players), 0)]
    return [mpq(int(x[i0, j].p), int(x[i0, j].q)) for j in range(players)]
