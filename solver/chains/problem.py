"""ChainProblem: a question of any chain, in the shape every linear-system engine takes.

A race of pieces that never meet is a :class:`~ladders.solver.problem.Problem` (board
and players); everything else (a chain from a file, a PRISM model, a board whose
pieces meet) is a :class:`ChainProblem`: a :class:`~ladders.solver.chains.model.Chain`
and one :class:`~ladders.solver.chains.questions.Question`. Both offer what the run
session, the engines and the checks ask of a problem: ``name``, ``system``,
``unknowns``, ``size``, ``seats_from_values``, ``named``, the bounds and their
report, ``independent`` (pieces that never meet: only races), and ``to_json`` (what a
run store keeps to build it again: :func:`chain_problem_from_json`).

"Seats" of a chain problem are the values of the answers its system solves for (one
per column of ``B``), in order; :meth:`ChainProblem.named` adds the answers known
without solving (``Infinity``) and names each.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import (INFINITY, Plan, Question, answers, build_system,
                                             plan_question)
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem


@dataclass(frozen=True)
class ChainSize:
    """What a chain question's system amounts to (the fields the engines' size checks
    read; ``digits`` is unknown before solving, so 0)."""

    unknowns: int
    nonzeros: int
    columns: int
    digits: int = 0


@dataclass
class ChainProblem:
    """A chain and the question asked of it; ``source``: how to load the chain again
    (see :func:`load_source`), None for a chain built in Python (kept in memory only)."""

    chain: Chain
    question: Question
    source: dict[str, Any] | None = None

    #: not a race: no seats, no two-player table
    players = None
    #: pieces that meet, or no pieces at all: the series engine and the race bounds
    #: need a race of independent pieces
    independent = False

    @property
    def name(self) -> str:
        return self.chain.name

    @cached_property
    def plan(self) -> Plan:
        """The unknowns, columns and known answers (graph search, no arithmetic)."""
        return plan_question(self.chain, self.question)

    @cached_property
    def system(self) -> LinearSystem:
        """``A x = B`` of the question (see :mod:`ladders.solver.chains.questions`)."""
        return build_system(self.chain, self.question, self.plan)

    @property
    def solvable(self) -> bool:
        """Whether any answer needs the system (else every one is known already)."""
        return bool(self.plan.columns)

    @property
    def unknowns(self) -> int:
        return len(self.plan.unknowns) + int(self.plan.start_row)

    @cached_property
    def size(self) -> ChainSize:
        rows = np.diff(self.chain.indptr)[self.plan.unknowns]
        nnz = int(rows.sum()) + len(self.plan.unknowns)  # at most: a diagonal in each row
        return ChainSize(self.unknowns, nnz, len(self.plan.columns))

    def describe(self) -> str:
        return (f"{self.chain.name} ({self.chain.size:,} states, {self.chain.nnz:,} transitions): "
                f"{self.question.describe()}")

    def seats_from_values(self, values: list[mpq]) -> list[mpq]:
        """The answers the system solves for, in column order (nothing derived)."""
        return list(values)

    def named(self, seats: tuple[mpq, ...] | list[mpq]) -> dict[str, mpq | str]:
        """Every answer by name: the solved ones and the known ones (``Infinity``)."""
        return answers(self.plan, list(seats))

    def comparisons(self, seats: tuple[mpq, ...] | list[mpq]) -> dict[str, bool] | None:
        """For a ``P>=b [...]`` question, whether its answer meets the bound."""
        if self.question.compare is None:
            return None
        op, bound = self.question.compare
        out = {}
        for name, value in self.named(seats).items():
            v = value if value != INFINITY else None
            out[name] = _compare(v, op, bound)
        return out

    # ------------------------------------------------------------------ checks
    def bounds_within(self, digits: int, budget: float, threads: bool = True) -> Any:
        """Markov bounds on every answer that agree to ``digits`` decimals, or those
        reached within ``budget`` seconds (:mod:`ladders.solver.checks.chain_bounds`)."""
        from ladders.solver.checks.chain_bounds import chain_bounds_within
        return chain_bounds_within(self.chain, self.question, self.plan, digits, budget)

    def check_bounds(self, seats: list[mpq], digits: int, bounds: Any = None) -> dict[str, Any]:
        """Tier 1 for a chain: every answer inside its bounds, the digits agreeing."""
        from ladders.solver.checks.chain_bounds import check_chain_answers
        from ladders.solver.checks.verify import VERIFY_SECONDS
        return check_chain_answers(self.chain, self.question, self.plan, self.named(seats),
                                   digits, VERIFY_SECONDS, bounds=bounds)

    # ------------------------------------------------------------------ a store
    def to_json(self) -> dict[str, Any]:
        if self.source is None:
            raise ValueError(f"{self.chain.name}: a chain built in Python has no file to load "
                             "it from; a run store needs one (save it as a chain file)")
        return {"kind": "chain", "source": self.source, "question": self.question.to_json()}


def _compare(value: mpq | None, op: str, bound: mpq) -> bool:
    if value is None:  # an infinite expectation
        return op in (">", ">=")
    return {"<": value < bound, "<=": value <= bound, ">": value > bound,
            ">=": value >= bound}[op]


def meeting_chain(board: Any, players: int) -> Chain:
    """The joint chain of ``players`` pieces on ``board`` under its ``meet`` rule: the
    module ``ladders.solver.games.RULE`` builds it with ``RULE_chain(board, players)``
    (``bump``: :func:`ladders.solver.games.bump.bump_chain`). A new rule is that module
    and its name in :data:`ladders.solver.games.board.MEETS`, nothing else."""
    import importlib
    module = importlib.import_module(f"ladders.solver.games.{board.meet}")
    return getattr(module, f"{board.meet}_chain")(board, players)


def board_problem(board: Any, players: int) -> ChainProblem | None:
    """A board whose pieces meet as a chain problem (where the race ends: each seat's
    win, and the expected moves), or None for pieces that never meet (a race)."""
    if board.meet == "none":
        return None
    from ladders.solver.games.board import board_to_json
    source = {"board": board_to_json(board), "players": players}
    return ChainProblem(meeting_chain(board, players), Question(), source)


def load_source(source: dict[str, Any]) -> Chain:
    """The chain a stored ``source`` names: a chain file (its format and keywords), or
    a board whose pieces meet (``board``, ``players``)."""
    if "board" in source:
        from ladders.solver.games.board import board_from_json
        return meeting_chain(board_from_json(source["board"]), int(source["players"]))
    from ladders.solver.chains.formats import load_chain
    taken = {k: v for k, v in source.items() if k not in ("path", "format")}
    return load_chain(source["path"], **taken).chain


def chain_problem_from_json(data: dict[str, Any]) -> ChainProblem:
    """The problem a run store's run.json names (see :meth:`ChainProblem.to_json`)."""
    source = data["source"]
    return ChainProblem(load_source(source), Question.from_json(data["question"]), source)
