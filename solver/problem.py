"""Problem: what a race solve is asked, built once into the system every engine consumes.

A race of pieces that never meet (this module); any other chain question is a
:class:`~ladders.solver.chain_problem.ChainProblem` with the same methods (``name``,
``system``, ``seats_from_values``, ``named``, the bounds, ``heading``, ``to_json``,
and ``chain`` and ``question``: a race is a chain, its pieces' joint chain asked where
it ends, built only where asked), and :func:`problem_from_json` rebuilds either from a
run store's run.json.

``Problem.build(board, players)`` checks the player count, builds one player's chain
(:mod:`ladders.solver.games.chain`) and the race's sparse integer system
(:mod:`ladders.solver.games.race`: ``turn`` for two players, ``sym`` for more).
``to_json``/``from_json`` carry a problem through a run store's run.json, so a resumed
run and every worker rebuild the same system (the store keeps its digest to check).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import Question
from ladders.solver.checks.bounds import Bounds, bounds_within, check_players
from ladders.solver.estimate import RaceSize, race_size
from ladders.solver.games.board import Board, board_from_json, board_to_json
from ladders.solver.games.chain import AbsorbingChain, build_chain
from ladders.solver.exact import mpq
from ladders.solver.games.race import race_chain, race_system, race_unknowns, seats_from_values
from ladders.solver.system import LinearSystem

if TYPE_CHECKING:
    from ladders.solver.chain_problem import ChainProblem
    from ladders.solver.engines.components import Structure
    from ladders.solver.engines.elimination_plan import Analysis


@dataclass
class Problem:
    """A race to solve: board, players, one piece's chain (``piece``), and (built when
    first asked for) the race's linear system and its joint chain (:attr:`chain`: a race
    is a chain, asked where it ends, as a chain question is)."""

    board: Board
    players: int
    piece: AbsorbingChain

    #: What the engines' drivers ask of every problem, declared here as values where a
    #: :class:`~ladders.solver.chain_problem.ChainProblem` finds them from its chain
    #: (issue 53: no driver probes a problem for what it may lack): a race wants its
    #: seats only, never every unknown (``every``); its system is one large strongly
    #: connected component or few, no component solve (``topological``, ``structure``);
    #: and its fill is too large for the in-process elimination's cheap path
    #: (``sparse``, ``symbolic``: hasbro, 2 players, 260 million row updates); it is
    #: never lumped (``lumping``: its seats are not a question of one chain's labels).
    every: ClassVar[bool] = False
    topological: ClassVar[bool] = False
    structure: ClassVar[Structure | None] = None
    sparse: ClassVar[bool] = False
    symbolic: ClassVar[tuple[list[int], Analysis] | None] = None
    lumping: ClassVar[None] = None

    @classmethod
    def build(cls, board: Board, players: int) -> Problem:
        check_players(players)
        return cls(board, players, build_chain(board))

    @property
    def pieces(self) -> AbsorbingChain:
        """The one piece's chain that each piece of the race walks on its own (they never
        meet): what the series engine, the race bounds and the race's cost models take,
        offered as a value (a chain question offers None)."""
        return self.piece

    @cached_property
    def chain(self) -> Chain:
        """The race as one chain (:func:`~ladders.solver.games.race.race_chain`: the
        joint chain of its pieces, ``n^k k`` states, absorbing in ``seat j wins``), the
        :class:`~ladders.solver.chains.model.Chain` a chain question has, built only
        where it is asked for (the race's own system is smaller)."""
        return race_chain(self.board, self.players)

    @property
    def question(self) -> Question:
        """What a race asks of its chain: where it ends (``seat j wins``), as a board
        whose pieces meet is asked (:func:`~ladders.solver.chain_problem.board_problem`)."""
        return Question()

    @cached_property
    def size(self) -> RaceSize:
        """What the race's system amounts to, estimated without building it
        (:func:`ladders.solver.estimate.race_size`)."""
        return race_size(self.piece, self.players)

    @property
    def unknowns(self) -> int:
        """Unknowns of the race's system, counted without building it."""
        return race_unknowns(len(self.piece.states), self.players)

    @cached_property
    def system(self) -> LinearSystem:
        """The race's sparse integer system (see :func:`ladders.solver.games.race.race_system`)."""
        return race_system(self.piece, self.players)

    @property
    def reference_system(self) -> LinearSystem | str:
        """No second system: a race's answers are its seats, the system's columns by
        construction, checked against the board's own bounds and, modulo primes, the
        race system itself."""
        return "a race's seats are its system's columns"

    @property
    def name(self) -> str:
        return self.board.name

    def describe(self) -> str:
        """The race in one phrase, for messages (a chain question's names its question)."""
        return f"{self.board.name} with {self.players} players"

    def heading(self) -> dict[str, Any]:
        """What was asked, as a report of its answers opens
        (:func:`~ladders.solver.report.answers_document`): the board and the players."""
        return {"board": board_to_json(self.board), "players": self.players}

    def seats_from_values(self, values: list[mpq]) -> list[mpq]:
        """Every seat from the target values an engine returned for :attr:`system`."""
        return seats_from_values(self.system, self.players, values)

    def named(self, seats: tuple[mpq, ...] | list[mpq]) -> dict[str, mpq | str]:
        """Every seat's win probability by name (``seat 1``, ...)."""
        return {f"seat {j + 1}": p for j, p in enumerate(seats)}

    def comparisons(self, seats: tuple[mpq, ...] | list[mpq]) -> None:
        """A race asks no ``P>=b`` question."""
        return None

    def bounds_within(self, digits: int, budget: float, threads: bool = True) -> Bounds:
        """The race's Markov bounds to ``digits`` decimals, or those reached within
        ``budget`` seconds (:func:`ladders.solver.checks.bounds.bounds_within`)."""
        return bounds_within(self.piece, self.players, digits, budget, threads)

    def check_bounds(self, seats: list[mpq], digits: int,
                     bounds: Bounds | None = None) -> dict[str, Any]:
        """Tier 1: every seat inside the bounds, the digits agreeing
        (:func:`ladders.solver.checks.verify.check_against_bounds`)."""
        from ladders.solver.checks.verify import check_against_bounds
        return check_against_bounds(self.piece, self.players, seats, digits, bounds)

    def to_json(self) -> dict[str, Any]:
        return {"board": board_to_json(self.board), "players": self.players}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        return cls.build(board_from_json(data["board"]), int(data["players"]))


def problem_from_json(data: dict[str, Any]) -> Problem | ChainProblem:
    """The problem a run store's run.json names: a race (board and players) or a chain
    question (``"kind": "chain"``)."""
    if data.get("kind") == "chain":
        from ladders.solver.chain_problem import chain_problem_from_json
        return chain_problem_from_json(data)
    return Problem.from_json(data)
