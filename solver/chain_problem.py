"""ChainProblem: a question of any chain, in the shape every linear-system engine takes.

A race of pieces that never meet is a :class:`~ladders.solver.problem.Problem` (board
and players); everything else (a chain from a file, a PRISM model, a board whose
pieces meet) is a :class:`ChainProblem`: a :class:`~ladders.solver.chains.model.Chain`
and one :class:`~ladders.solver.chains.questions.Question`. Both offer what the run
session, the engines and the checks ask of a problem: ``name``, ``system``,
``unknowns``, ``size``, ``seats_from_values``, ``named``, the bounds and their
report, ``pieces`` (one piece's chain where pieces never meet: only races), and ``to_json`` (what a
run store keeps to build it again: :func:`chain_problem_from_json`).

"Seats" of a chain problem are the values of the answers its system solves for (one
per column of ``B``), in order; :meth:`ChainProblem.named` adds the answers known
without solving (``Infinity``) and names each.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ladders.solver.chains.lumping import (AUTO_ROUNDS, LUMP_MODES, LUMP_SHARE, Lumping,
                                           bisimulation, quotient, worth_lumping)
from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import (INFINITY, Plan, Question, answers, build_system,
                                             plan_question, state_values)
from ladders.solver.checks.lumping import check_lumping
from ladders.solver.exact import mpq
from ladders.solver.system import LinearSystem

if TYPE_CHECKING:
    from ladders.solver.engines.components import Structure
    from ladders.solver.engines.elimination_plan import Analysis


#: Most unknowns a chain question solves by fraction-free elimination in this process
#: by default (see :attr:`ChainProblem.sparse`); beyond, the modular engine, or a Dask
#: run with --engine elimination or crt and --checkpoint. QVBS's nand 40-1 (629,595
#: unknowns) takes 16 s and 1.5 GB so, where the modular engine's factorization mod p
#: alone took 33 s (2026-11-26; it was 200,000 then).
SPARSE_UNKNOWNS = 1_000_000
#: Most nonzeros a row, on average, for that: a dense chain (herman: every state moves
#: to hundreds) fills in; its integers grow with the fill, the lifting's do not.
SPARSE_ROW = 12
#: Most row-entry updates of a symbolic elimination for that (about a second of the
#: fraction-free elimination on small integers).
SPARSE_UPDATES = 5_000_000


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
    (see :func:`load_source`), None for a chain built in Python (kept in memory only);
    ``lumping``: where ``chain`` is the quotient of the source's chain for this question
    (:func:`~ladders.solver.chains.lumping.lumped_problem`), how it was lumped."""

    chain: Chain
    question: Question
    source: dict[str, Any] | None = None
    lumping: Lumping | None = None

    #: not a race: no seats, no two-player table
    players = None
    #: pieces that meet, or no pieces at all: no one piece's chain to offer the series
    #: engine and the race bounds, which need a race of independent pieces
    pieces = None

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

    @cached_property
    def reference_system(self) -> LinearSystem | str:
        """The residue check's own system of the question, built from the chain and the
        question without the plan (:mod:`ladders.solver.checks.reference`), or why
        there is none to solve (too many unknowns)."""
        from ladders.solver.checks.reference import reference_system
        return reference_system(self.chain, self.question, self.plan.names, self.plan.columns)

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

    @cached_property
    def structure(self) -> Structure:
        """The strongly connected components of the system's pattern, in topological
        order, and their pivots (:func:`~ladders.solver.engines.components.structure`):
        one pass over the system (nand 40-1: 0.16 s)."""
        from ladders.solver.engines.components import structure
        return structure(self.system)

    @property
    def topological(self) -> bool:
        """Whether the component solve fits: the dense solves of the components of more
        than one unknown stay small (:func:`~ladders.solver.engines.components.fits`;
        the model checkers' chains: nand has no cycle, crowds' largest component has 30
        to 60 states; pieces that meet and herman's rings are one large component)."""
        from ladders.solver.engines.components import fits
        return fits(self.structure)

    @cached_property
    def symbolic(self) -> tuple[list[int], Analysis] | None:
        """The default pivot order and its symbolic elimination, where the elimination in
        this process is cheap (:attr:`sparse`); None where it is not. The elimination's
        plan reuses it (:func:`~ladders.solver.engines.elimination_plan.make_plan`)."""
        from ladders.solver.engines.elimination_plan import symbolic_elimination
        from ladders.solver.system import default_order
        size = self.size
        if size.unknowns > SPARSE_UNKNOWNS or size.nonzeros > SPARSE_ROW * max(size.unknowns, 1):
            return None
        order = default_order(self.system)
        analysis = symbolic_elimination(self.system, order, budget=SPARSE_UPDATES)
        if sum(analysis[1]) > SPARSE_UPDATES:
            return None
        return order, analysis

    @property
    def sparse(self) -> bool:
        """Whether the fraction-free elimination in this process is cheap here: few
        unknowns (:data:`SPARSE_UNKNOWNS`), sparse rows (:data:`SPARSE_ROW`), and a
        symbolic elimination in the order it pivots that stays within
        :data:`SPARSE_UPDATES` row-entry updates (it stops there). The model checkers'
        chains are (egl 5-2, 33,789 unknowns: 34,810 updates, solved in 0.67 s against
        5.4 s for the p-adic lifting, most of which is loading its compiled kernels);
        pieces that meet are not (hasbro, 2 players: 260 million updates)."""
        return self.symbolic is not None

    @property
    def original(self) -> Chain:
        """The chain the question was asked of (before any lumping)."""
        return self.chain if self.lumping is None else self.lumping.original

    def describe(self) -> str:
        chain = self.original
        lumped = "" if self.lumping is None else f"; lumped into {self.chain.size:,}"
        return (f"{chain.name} ({chain.size:,} states, {chain.nnz:,} transitions{lumped}): "
                f"{self.question.describe()}")

    def heading(self) -> dict[str, Any]:
        """What was asked, as a report of its answers opens
        (:func:`~ladders.solver.report.answers_document`): the chain (before any
        lumping), its size, its notes and where it was loaded from (None: built in
        Python, or a long-run question's chain)."""
        chain = self.original
        return {"chain": chain.name, "states": chain.size, "transitions": chain.nnz,
                "notes": list(chain.notes), "source": self.source}

    @property
    def every(self) -> bool:
        """Whether the answer is the least or greatest over several start states
        (:attr:`Question.over`): an engine must give the value at every unknown."""
        return self.question.extreme and len(self.chain.start) > 1

    def seats_from_values(self, values: list[mpq]) -> list[mpq]:
        """The answers the system solves for, in column order (nothing derived)."""
        if self.every:
            raise ValueError(f"{self.describe()}: the answer is the {self.question.over} over "
                             f"{len(self.chain.start):,} start states; it needs every unknown "
                             "(seats_from_solution)")
        return list(values)

    def seats_from_solution(self, values: list[mpq],
                            solution: Callable[[int], Sequence[mpq] | Mapping[int, mpq]]
                            ) -> list[mpq]:
        """The answers from an engine that gives every unknown (``solution(k)``: column
        k's whole solution): for a question :attr:`over` several start states, the
        column values from the start distribution (their average, what the system's
        target is and what the bounds and residues check) followed by each column's
        least or greatest value over the start states."""
        if not self.every:
            return self.seats_from_values(values)
        pick = min if self.question.over == "min" else max
        extremes = [pick(state_values(self.plan, k, solution(k)))
                    for k in range(len(values))]
        return [*values, *extremes]

    def _columns_part(self, seats: tuple[mpq, ...] | list[mpq]) -> list[mpq]:
        """The values of the system's columns among ``seats`` (the averages, for a
        question over several start states)."""
        return list(seats)[:len(self.plan.columns)]

    def named(self, seats: tuple[mpq, ...] | list[mpq]) -> dict[str, mpq | str]:
        """Every answer by name: the solved ones and the known ones (``Infinity``);
        for a question over several start states, their least or greatest, or their
        sum (``over="sum"``: the start is uniform over them, the sum their number times
        the value from it, which the checks check)."""
        seats = list(seats)
        if self.every and seats:
            seats = seats[len(self.plan.columns):]
        named = answers(self.plan, seats)
        if self.question.over == "sum":
            n = len(self.original.start)
            named = {name: v if v == INFINITY else n * v for name, v in named.items()}
        return named

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
        # over several start states: the bounds walk from their average, which the
        # system's target is, and from each start state for the least or greatest
        extremes = dict(zip(self.plan.columns, list(seats)[len(self.plan.columns):])) \
            if self.every else None
        return check_chain_answers(self.chain, self.question, self.plan,
                                   answers(self.plan, self._columns_part(seats)),
                                   digits, VERIFY_SECONDS, bounds=bounds, extremes=extremes)

    # ------------------------------------------------------------------ a store
    def to_json(self) -> dict[str, Any]:
        if self.source is None:
            raise ValueError(f"{self.chain.name}: a chain built in Python has no file to load "
                             "it from; a run store needs one (save it as a chain file)")
        out = {"kind": "chain", "source": self.source, "question": self.question.to_json()}
        if self.lumping is not None:
            out["lump"] = "on"  # the same quotient again: the refinement is deterministic
        return out


def _compare(value: mpq | None, op: str, bound: mpq) -> bool:
    if value is None:  # an infinite expectation
        return op in (">", ">=")
    return {"<": value < bound, "<=": value <= bound, ">": value > bound,
            ">=": value >= bound}[op]


def ask_chain(chain: Chain, question: Question, source: dict[str, Any] | None = None
              ) -> ChainProblem:
    """The problem of asking ``question`` of ``chain``: a long-run question (``S=?``)
    is asked as reaching ``yes`` of its long-run chain
    (:mod:`ladders.solver.chains.long_run`; kept in memory only, no ``source``), any
    other of the chain itself."""
    if question.kind == "steady":
        from ladders.solver.chains.long_run import long_run_chain, long_run_question
        return ChainProblem(long_run_chain(chain, question, target_value), long_run_question(question))
    return ChainProblem(chain, question, source)


def target_value(system: LinearSystem) -> mpq:
    """The target of ``system`` (one right-hand side), solved by the modular engine
    (p-adic lifting, certified ``A x = b`` in integers)."""
    from ladders.solver.engines.modular import solve_dixon
    return mpq(solve_dixon(system).values[0])


def meeting_chain(board: Any, players: int) -> Chain:
    """The joint chain of ``players`` pieces on ``board`` under its ``meet`` rule: the
    module ``ladders.solver.games.RULE`` builds it with ``RULE_chain(board, players)``
    (``bump``: :func:`ladders.solver.games.bump.bump_chain`). A new rule is that module
    and its name in :data:`ladders.solver.games.MEETS`, nothing else."""
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
    problem = ChainProblem(load_source(source), Question.from_json(data["question"]), source)
    if data.get("lump") == "on":
        problem = lumped_problem(problem, "on")
    return problem


def lumped_problem(problem: ChainProblem, mode: str = "auto") -> ChainProblem:
    """``problem`` on the quotient of its chain (its :attr:`ChainProblem.lumping` says
    from how many states to how many), or ``problem`` itself: ``mode`` ``off``;
    ``auto`` where :func:`~ladders.solver.chains.lumping.worth_lumping` says no, or the
    quotient keeps more than :data:`~ladders.solver.chains.lumping.LUMP_SHARE` of the
    states; and wherever the exact check of the quotient
    (:func:`~ladders.solver.checks.lumping.check_lumping`) fails, or the lumping merges
    nothing; and for a question over a fixed number of steps or a path through a set
    (``phi U psi``), which the partition does not keep. It sits with the problems, above the chains' ranks: it joins the lumping
    (:mod:`~ladders.solver.chains.lumping`) and its check (:mod:`~ladders.solver.checks.lumping`)."""
    if mode not in LUMP_MODES:
        raise ValueError(f"lump={mode!r}: use one of {', '.join(LUMP_MODES)}")
    if mode == "off" or problem.lumping is not None:
        return problem
    if problem.question.stepped or problem.question.through is not None:
        # the partition keeps what a question of ending or reaching reads; a path
        # through phi (phi U psi) or a count of steps reads more: solved whole
        return problem
    if mode == "auto" and not worth_lumping(problem):
        return problem
    chain, question = problem.chain, problem.question
    t0 = time.perf_counter()
    found = bisimulation(chain, question,
                         max_rounds=AUTO_ROUNDS if mode == "auto" else None,
                         max_blocks=int(chain.size * LUMP_SHARE) if mode == "auto" else None)
    if found is None:
        return problem
    blocks, rounds = found
    if int(blocks.max()) + 1 == chain.size:
        return problem
    small = quotient(chain, question, blocks)
    report = check_lumping(chain, small, blocks, question)
    if not report["passed"]:
        return problem
    lumping = Lumping(chain, blocks, rounds, time.perf_counter() - t0, report)
    return dataclasses.replace(problem, chain=small, lumping=lumping)
