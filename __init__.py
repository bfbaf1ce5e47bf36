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
    model = ladders.load_chain("ruin.toml")       # any absorbing chain (.toml, .tra, .drn,
    ladders.solve(model).answers                  # .prism/.jani): {"broke": mpq(4,5), ...}
    ladders.solve(model, target="rich").answers   # P(F "rich")

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
    from ladders.solver.chains.formats import Loaded
    from ladders.solver.chains.model import Chain
    from ladders.solver.checks.bounds import Bounds
    from ladders.solver.checks.chain_bounds import ChainBounds
    from ladders.solver.games.board import Board
    from ladders.solver.games.chain import OnePlayerStats
    from ladders.solver.result import Solution

__all__ = ["Board", "Chain", "ClusterSpec", "Solution", "load_board", "load_chain", "solve",
           "solve_all", "resume", "bounds", "stats"]


def load_board(board: str | Board, rule: str | None = None, die: int | None = None,
               meet: str | None = None) -> Board:
    """A preset name or a board file (plain text or TOML), checked; ``rule``, ``die``
    and ``meet`` (``"bump"``: pieces that meet) override the board's own."""
    from ladders.solver.games.board import Board, load_board, with_overrides
    import os
    if isinstance(board, os.PathLike):
        board = os.fspath(board)
    if not isinstance(board, (str, Board)):
        raise TypeError(f"a board is a preset's name, a board file's path or a ladders.Board, "
                        f"not {type(board).__name__} ({board!r:.40}); 'ladders boards' lists the "
                        "presets")
    b = board if isinstance(board, Board) else load_board(board)
    return with_overrides(b, rule=rule, die=die, meet=meet)


def load_chain(path: str, constants: str | None = None, properties: str | None = None) -> Loaded:
    """A chain file, checked (errors name the file and line): the chain TOML (a
    ``[transitions]`` table), PRISM's explicit ``.tra`` with its ``.lab``, Storm's
    ``.drn``, or a PRISM / JANI model through stormpy (``constants="N=16,MAX=2"``,
    ``properties=`` a properties file). Returns the chain (``.chain``) and the
    questions the file asks (``.questions``); give it to :func:`solve`."""
    from ladders.solver.chains.formats import load_chain as load
    return load(path, constants=constants, properties=properties)


def _chain_problems(model: Any, players: int, target: str | None,
                    prop: str | None, lump: str = "auto") -> list[Any] | None:
    """The chain questions ``model`` asks (see :func:`solve`), each on the quotient of
    its chain where ``lump`` says so, or None for a race."""
    from ladders.solver.chains.formats import Loaded
    from ladders.solver.chain_problem import ChainProblem, ask_chain, lumped_problem
    from ladders.solver.chains.model import Chain
    from ladders.solver.chains.questions import Question
    if isinstance(model, Chain):
        model = Loaded(model)
    if not isinstance(model, Loaded):
        from ladders.solver.chain_problem import board_problem
        if target or prop:
            raise ValueError("target= and property= are for chains, not boards")
        problem = board_problem(load_board(model), players)
        return None if problem is None else [lumped_problem(problem, lump)]
    if target is not None:
        model.chain.label_mask(target)
        return [lumped_problem(ChainProblem(model.chain, Question("reach", target), model.source),
                               lump)]
    if model.refused and not model.questions:
        raise ValueError(f"no property of {model.chain.name} can be answered: "
                         + "; ".join(model.refused))
    questions = list(model.questions) or [Question()]
    if prop is not None:
        chosen = [q for q in questions if q.answer_name == prop]
        if not chosen:
            names = ", ".join(q.answer_name for q in questions) or "none"
            raise ValueError(f"no property {prop!r} in {model.chain.name}; its properties: {names}")
        questions = chosen
    return [lumped_problem(ask_chain(model.chain, q, model.source), lump) for q in questions]


def solve(board: str | Board | Chain | Loaded, players: int = 2, engine: str | None = None,
          target: str | None = None, property: str | None = None,  # noqa: A002
          lump: str = "auto", **options: Any) -> Solution:
    """The exact win probability of every seat, verified: a frozen :class:`Solution`
    (``.seats``, a tuple of ``mpq``; ``.passed``, whether every check passed;
    ``.verified``, the report of each check; ``.details``, ``.seconds``).

    ``board`` may also be a chain (:func:`load_chain`, or a :class:`Chain`), or a board
    whose pieces meet (``meet = "bump"``: one joint chain): ``.answers`` then names
    every answer (where the chain ends and the expected steps; ``target="LABEL"``:
    ``P(F LABEL)``; ``property="p1"``: that property of a PRISM properties file), each
    an ``mpq`` or ``"Infinity"``. :func:`solve_all` answers every property.
    ``lump``: ``"auto"`` solves a chain question on the quotient of its chain by the
    coarsest lumping that keeps its answers, where that pays (``.problem.lumping``
    says from how many states to how many); ``"on"`` always, ``"off"`` never.

    ``engine``: ``series``, ``modular``, ``crt``, ``elimination`` or any other
    registered one (default: the fastest for the problem). ``options`` are those of
    ``ladders solve``: ``checkpoint=``, ``seed=``, ``table=True`` (two players:
    ``.table`` holds every ``P(a, b)``), ``spec=ClusterSpec(...)`` (a Dask cluster),
    ``executor=``, and each engine's own (``batch_primes=``, ``block_size=``...).
    """
    solutions = solve_all(board, players, engine, target=target, property=property, lump=lump,
                          **options)
    if len(solutions) > 1:
        names = ", ".join(s.problem.question.answer_name for s in solutions)
        raise ValueError(f"{solutions[0].problem.name} asks {len(solutions)} properties ({names}): "
                         "pick one with property=, or call ladders.solve_all")
    return solutions[0]


def solve_all(board: str | Board | Chain | Loaded, players: int = 2, engine: str | None = None,
              target: str | None = None, property: str | None = None,  # noqa: A002
              lump: str = "auto", **options: Any) -> list[Solution]:
    """Every question of ``board`` solved in turn (see :func:`solve`): one solution for a
    race, one per property for a model with a properties file."""
    import time

    from ladders.cluster.runs import known_solution
    from ladders.cluster.runs import solve as run_solve
    from ladders.solver.problem import Problem
    problems = _chain_problems(board, players, target, property, lump)
    if problems is None:
        return [run_solve(Problem.build(load_board(board), players), engine, **options)]
    return [run_solve(p, engine, **options) if p.solvable else known_solution(p, time.perf_counter())
            for p in problems]


def resume(store: str, **options: Any) -> Solution:
    """Continue an interrupted run from its store (``spec=``, ``executor=``: where)."""
    from ladders.cluster.runs import resume as run_resume
    return run_resume(store, **options)


def bounds(board: str | Board, players: int = 2, moves: int | None = None,
           digits: int | None = None) -> Bounds | ChainBounds:
    """Exact Markov bounds on every seat after ``moves`` throws, or after the fewest
    throws whose bounds agree to ``digits`` decimals (give one of the two). A board
    whose pieces meet (``meet = "bump"``) is one joint chain: its bounds
    (``digits`` only) are a :class:`~ladders.solver.checks.chain_bounds.ChainBounds`,
    one pair for each seat's win and the expected steps (``.names``)."""
    from ladders.solver.checks.bounds import (bounds_to_digits, check_digits, check_moves,
                                              check_players, markov_bounds)
    from ladders.solver.games.chain import build_chain
    if (moves is None) == (digits is None):
        raise ValueError("give exactly one of moves or digits")
    check_players(players)
    opened = load_board(board)
    if opened.meet != "none":
        from ladders.solver.chain_problem import board_problem
        if digits is None:
            raise ValueError(f"{opened.name}: its pieces meet (meet = {opened.meet!r}), one joint "
                             "chain walked a step at a time: give digits, not moves")
        return board_problem(opened, players).bounds_within(digits, 600.0)  # type: ignore[union-attr]
    chain = build_chain(opened)
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
    from ladders.solver.answers import one_player_stats
    from ladders.solver.games.chain import build_chain
    return one_player_stats(build_chain(load_board(board)))


def __dir__() -> list[str]:
    """The API (:data:`__all__`), not this module's imports."""
    return sorted(__all__)


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
    if name == "Chain":
        from ladders.solver.chains.model import Chain
        return Chain
    raise AttributeError(f"module 'ladders' has no attribute {name!r}")
