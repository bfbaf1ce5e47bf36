"""ladders: exact answers for games of pure chance that are absorbing Markov chains.

The Python API, for notebooks and scripts (the ``ladders`` command line calls the same
functions)::

    import ladders

    out = ladders.solve("hasbro")                 # two players, exact, certified
    out.seats[0]                                  # an mpq: 4,453 digits over 4,453
    out.passed                                    # True: every check passed (out.verified)
    ladders.solve("tiny10", players=3).seats      # every seat of a 3-player race
    b = ladders.bounds("hasbro", players=2, digits=30)
    b.lower[0] <= out.seats[0] <= b.upper[0]      # True
    ladders.stats("milton-bradley").expected_length
    board = ladders.load_board("my-board.toml")   # a Board, checked (errors name the line)

A board is a preset name, a file path, or a :class:`Board`. The layers are
``ladders.solver`` (the mathematics), ``ladders.checkpoints`` (the run store) and
``ladders.cluster`` (Dask, the engines' drivers, the command line).

This module imports nothing heavy until a function is called, so that ``import
ladders.cluster.cli`` (and ``ladders --help``) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ladders.cluster.connect import ClusterSpec
    from ladders.solver.checks.bounds import Bounds
    from ladders.solver.games.board import Board
    from ladders.solver.games.chain import OnePlayerStats
    from ladders.solver.result import Solution

__all__ = ["Board", "ClusterSpec", "Solution", "load_board", "solve", "resume", "bounds", "stats"]


def load_board(board: str | Board, rule: str | None = None, die: int | None = None) -> Board:
    """A preset name or a board file (plain text or TOML), checked; ``rule`` and ``die``
    override the board's own."""
    from ladders.solver.games.board import Board, load_board, with_overrides
    b = board if isinstance(board, Board) else load_board(board)
    return with_overrides(b, rule=rule, die=die)


def solve(board: str | Board, players: int = 2, engine: str | None = None,
          **options: Any) -> Solution:
    """The exact win probability of every seat, verified: a frozen :class:`Solution`
    (``.seats``, a tuple of ``mpq``; ``.passed``, whether every check passed;
    ``.verified``, the report of each check; ``.details``, ``.seconds``).

    ``engine``: ``series``, ``modular``, ``crt``, ``elimination`` or any other
    registered one (default: the fastest for the problem). ``options`` are those of
    ``ladders solve``: ``checkpoint=``, ``seed=``, ``table=True`` (two players:
    ``.table`` holds every ``P(a, b)``), ``spec=ClusterSpec(...)`` (a Dask cluster),
    ``executor=``, and each engine's own (``batch_primes=``, ``block_size=``...).
    """
    from ladders.cluster.runs import solve as run_solve
    from ladders.solver.problem import Problem
    return run_solve(Problem.build(load_board(board), players), engine, **options)


def resume(store: str, **options: Any) -> Solution:
    """Continue an interrupted run from its store (``spec=``, ``executor=``: where)."""
    from ladders.cluster.runs import resume as run_resume
    return run_resume(store, **options)


def bounds(board: str | Board, players: int = 2, moves: int | None = None,
           digits: int | None = None) -> Bounds:
    """Exact Markov bounds on every seat after ``moves`` throws, or after the fewest
    throws whose bounds agree to ``digits`` decimals (give one of the two)."""
    from ladders.solver.checks.bounds import (bounds_to_digits, check_digits, check_moves,
                                              check_players, markov_bounds)
    from ladders.solver.games.chain import build_chain
    if (moves is None) == (digits is None):
        raise ValueError("give exactly one of moves or digits")
    check_players(players)
    chain = build_chain(load_board(board))
    if moves is not None:
        check_moves(chain, players, moves)
        return markov_bounds(chain, players, moves)
    assert digits is not None
    check_digits(chain, players, digits)
    return bounds_to_digits(chain, players, digits)


def stats(board: str | Board) -> OnePlayerStats:
    """One player's exact answers: ``expected_length`` (L), ``variance``,
    ``expected_remaining`` (E(s)) and ``min_throws`` (D(s)) for every square. The
    first three are exact fractions (gmpy2 ``mpq``): ``float(...)`` for a float."""
    from ladders.solver.games.chain import build_chain, one_player_stats
    return one_player_stats(build_chain(load_board(board)))


def __getattr__(name: str) -> Any:
    """``ladders.Board``, ``ladders.ClusterSpec`` and ``ladders.Solution`` without
    importing the solver or Dask at ``import ladders``."""
    if name == "Board":
        from ladders.solver.games.board import Board
        return Board
    if name == "ClusterSpec":
        from ladders.cluster.connect import ClusterSpec
        return ClusterSpec
    if name == "Solution":
        from ladders.solver.result import Solution
        return Solution
    raise AttributeError(f"module 'ladders' has no attribute {name!r}")
