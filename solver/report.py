"""One report of a solve's answers for races and chains alike (issue 53): the document
that ``ladders solve --json`` prints and ``--output`` writes (the same one, written by
:func:`ladders.checkpoints.outputs.write_answers`), and ``ladders resume`` again.

Every answer is written one way, :func:`answer_entry` (its exact text, 50 decimals and
the digits of its numerator and denominator, or ``"Infinity"`` alone), and every
solve's figures one way, :func:`run_fields` (engine, executor, time, checks, tasks,
store). What was asked comes from the problem (``heading``: a race's board and
players, a chain's name, size, notes and source). The answers of a race of pieces that
never meet are its seats, a list in seat order (``seats``, with seat 1's digits), one
solve; a chain's are named, one result a question (``results``). The two layouts are
the documents' keys from before they were one, kept for the scripts that read them
(``tests/cluster/commands/test_report.py`` pins them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ladders.solver.exact import fraction_to_decimal, fraction_to_str

if TYPE_CHECKING:
    from ladders.solver.exact import mpq
    from ladders.solver.result import Solution

#: Decimals of every answer in a document (cut off, not rounded).
DECIMALS = 50


def answer_entry(value: mpq | str) -> dict[str, Any]:
    """One answer: ``exact`` (``"p/q"``, ``"p"``, or ``"Infinity"`` alone where an
    expectation diverges), ``decimal`` and ``digits``, counted from the exact text
    (no second conversion of a number of millions of digits)."""
    if isinstance(value, str):
        return {"exact": value}
    text = fraction_to_str(value)
    numerator, _, denominator = text.partition("/")
    return {"exact": text, "decimal": fraction_to_decimal(value, DECIMALS),
            "digits": {"numerator": len(numerator.lstrip("-")),
                       "denominator": len(denominator) or 1}}


def run_fields(solution: Solution) -> dict[str, Any]:
    """How one solve went, the same for a race and a chain question: the engine, where
    it ran, its seconds, its checks, its tasks, the engine's own figures and its store."""
    out: dict[str, Any] = {
        "engine": solution.engine,
        "executor": solution.executor,
        "seconds": round(solution.seconds, 3),
        "startup_seconds": round(solution.startup_seconds, 3),
        "verified": solution.verified,
        "tasks": {"run": solution.tasks_run, "total": solution.tasks_total},
    }
    if solution.details:
        out["details"] = solution.details
    if solution.store is not None:
        out["store"] = {"path": str(solution.store), "bytes": solution.store_bytes,
                        "tasks_run": solution.tasks_run, "tasks_total": solution.tasks_total}
    return out


def answers_document(solutions: Sequence[Solution], seconds: float | None = None,
                     refused: Sequence[str] = ()) -> dict[str, Any]:
    """The document of ``solutions`` (the questions of one problem's source, in order;
    a race has one): what was asked, every answer, and how each was found and checked;
    ``seconds``: the whole command's (a chain's, over its questions), ``refused``: the
    properties answered by none (a line each)."""
    first = solutions[0]
    data = first.problem.heading()
    if first.problem.pieces is not None:  # a race of independent pieces: its seats
        seats = [{"seat": j + 1, **answer_entry(p)} for j, p in enumerate(first.seats)]
        return {**data, "seats": seats, "digits": seats[0]["digits"], **run_fields(first)}
    results = []
    for sol in solutions:
        problem = sol.problem
        result = {"question": problem.question.describe(), "kind": problem.question.kind,
                  "answers": {name: answer_entry(v) for name, v in sol.answers.items()},
                  **run_fields(sol)}
        if problem.lumping is not None:
            result["lumped"] = problem.lumping.to_json()
        holds = problem.comparisons(sol.seats)
        if holds is not None:
            result["holds"] = holds
        results.append(result)
    total = sum(s.seconds for s in solutions) if seconds is None else seconds
    return {**data, "results": results, "seconds": round(total, 3),
            **({"refused": list(refused)} if refused else {})}
