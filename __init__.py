"""ladders: exact answers for games of pure chance that are absorbing Markov chains.

The Python API, for notebooks and scripts (the ``ladders`` command line calls the same
functions)::

    import ladders

    out = ladders.solve("hasbro")                 # two players, exact, certified
    out.seats[0]                                  # an mpq: 4,453 digits over 4,453
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
    from ladders.cluster.session import Outcome
    from ladders.solver.checks.bounds import Bounds
    from ladders.solver.games.board import Board
    from ladders.solver.games.chain import OnePlayerStats

__all__ = ["Board", "load_board", "solve", "bounds", "stats"]


def load_board(board: str | Board, rule: str | None = None, die: int | None = None) -> Board:
    """A preset name or a board file (plain text or TOML), checked; ``rule`` and ``die``
    override the board's own."""
    from ladders.solver.games.board import Board, load_board, with_overrides
    b = board if isinstance(board, Board) else load_board(board)
    return with_overrides(b, rule=rule, die=die)


def solve(board: str | Board, players: int = 2, engine: str | None = None,
          **options: Any) -> Outcome:
    """The exact win probability of every seat (``.seats``, a list of ``mpq``), verified
    (``.verified``), with the engine's figures (``.details``, ``.seconds``).

    ``engine``: ``modular``, ``crt``, ``elimination`` or any other registered one
    (default: the fastest for the problem). ``options`` are those of ``ladders solve``:
    ``checkpoint=``, ``seed=``, ``table=True`` (two players: ``.table`` holds every
    ``P(a, b)``), ``spec=ClusterSpec(...)``, ``executor=``...
    """
    from ladders.cluster.runs import solve as run_solve
    from ladders.solver.problem import Problem
    return run_solve(Problem.build(load_board(board), players), engine, **options)


def bounds(board: str | Board, players: int = 2, moves: int | None = None,
           digits: int | None = None) -> Bounds:
    """Exact Markov bounds on every seat after ``moves`` throws, or after the fewest
    throws whose bounds agree to ``digits`` decimals (give one of the two)."""
    from ladders.solver.checks.bounds import bounds_to_digits, markov_bounds
    from ladders.solver.games.chain import build_chain
    if (moves is None) == (digits is None):
        raise ValueError("give exactly one of moves or digits")
    chain = build_chain(load_board(board))
    return markov_bounds(chain, players, moves) if moves else bounds_to_digits(chain, players, digits)


def stats(board: str | Board) -> OnePlayerStats:
    """One player's exact answers: ``expected_length`` (L), ``variance``,
    ``expected_remaining`` (E(s)) and ``min_throws`` (D(s)) for every square."""
    from ladders.solver.games.chain import build_chain, one_player_stats
    return one_player_stats(build_chain(load_board(board)))


def __getattr__(name: str) -> Any:
    """``ladders.Board`` without importing the solver at ``import ladders``."""
    if name == "Board":
        from ladders.solver.games.board import Board
        return Board
    raise AttributeError(f"module 'ladders' has no attribute {name!r}")
