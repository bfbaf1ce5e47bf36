"""Problem: what a race solve is asked, built once into the system every engine consumes.

``Problem.build(board, players)`` checks the player count, builds one player's chain
(:mod:`ladders.solver.games.chain`) and the race's sparse integer system
(:mod:`ladders.solver.games.race`: ``turn`` for two players, ``sym`` for more).
``to_json``/``from_json`` carry a problem through a run store's run.json, so a resumed
run and every worker rebuild the same system (the store keeps its digest to check).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ladders.solver.checks.bounds import check_players
from ladders.solver.estimate import RaceSize, race_size
from ladders.solver.games.board import Board, board_from_json, board_to_json
from ladders.solver.games.chain import AbsorbingChain, build_chain
from ladders.solver.games.race import race_system, race_unknowns
from ladders.solver.system import LinearSystem


@dataclass
class Problem:
    """A race to solve: board, players, one player's chain, and (built when first
    asked for) the race's linear system."""

    board: Board
    players: int
    chain: AbsorbingChain

    @classmethod
    def build(cls, board: Board, players: int) -> Problem:
        check_players(players)
        return cls(board, players, build_chain(board))

    @cached_property
    def size(self) -> RaceSize:
        """What the race's system amounts to, estimated without building it
        (:func:`ladders.solver.estimate.race_size`)."""
        return race_size(self.chain, self.players)

    @property
    def unknowns(self) -> int:
        """Unknowns of the race's system, counted without building it."""
        return race_unknowns(len(self.chain.states), self.players)

    @cached_property
    def system(self) -> LinearSystem:
        """The race's sparse integer system (see :func:`ladders.solver.games.race.race_system`)."""
        return race_system(self.chain, self.players)

    def to_json(self) -> dict[str, Any]:
        return {"board": board_to_json(self.board), "players": self.players}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        return cls.build(board_from_json(data["board"]), int(data["players"]))
