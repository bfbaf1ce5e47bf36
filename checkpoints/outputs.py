"""The files a solve writes for people and other programs, beside its run store:
``--output`` (every seat's exact fraction as one JSON document) and ``--table`` (two
players: every ``P(a, b)`` as JSON lines). Both are gzip-compressed when the name ends
in ``.gz`` and written whole or not at all: a local file atomically
(:mod:`ladders.checkpoints.files`), an object (``s3://bucket/h3.json.gz``) by one PUT.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ladders.checkpoints.backend import check_url, open_backend
from ladders.checkpoints.files import MEMBER_BYTES, check_output_path, gzip_members, write_atomically

if TYPE_CHECKING:
    from ladders.solver.exact import FractionTable
    from ladders.solver.result import Solution


def check_output(target: str) -> None:
    """Refuse, before any work, an output that cannot be written: text that
    :func:`~ladders.checkpoints.backend.check_url` refuses as it refuses a store's (a
    ``#`` or ``?`` in a URL, ``s3:/bkt/x``), a local path that
    :func:`~ladders.checkpoints.files.check_output_path` refuses, or a URL whose scheme
    is unknown or whose object store cannot be reached (``ValueError`` / ``StoreError``)."""
    check_url(target)
    if "://" not in target:
        check_output_path(target)
        return
    folder, _, name = target.rpartition("/")
    if not name or "://" not in folder:
        raise ValueError(f"{target}: name the object to write (SCHEME://BUCKET/PREFIX/NAME)")
    open_backend(folder).check()


def _write(target: str | Path, payload: bytes) -> None:
    """``payload`` to a local file (atomically) or an object (one PUT)."""
    text = str(target)
    if "://" not in text:
        write_atomically(text, payload)
        return
    folder, _, name = text.rpartition("/")
    open_backend(folder).replace(name, payload)


def write_solution(path: str | Path, solution: Solution) -> None:
    """Every seat's exact fraction as one JSON document: the board, the players, the
    engine, the seats (exact, decimal, digits) and the checks. ``ladders plot seats``
    reads these files."""
    from ladders.solver.exact import digit_counts, fraction_to_decimal, fraction_to_str
    from ladders.solver.games.board import board_to_json
    data = {"board": board_to_json(solution.problem.board), "players": solution.problem.players,
            "engine": solution.engine, "seconds": round(solution.seconds, 3),
            "seats": [{"seat": j + 1, "exact": fraction_to_str(p), "decimal": fraction_to_decimal(p, 50),
                       "digits": digit_counts(p)} for j, p in enumerate(solution.seats)],
            "verified": solution.verified}
    payload = json.dumps(data).encode()
    if str(path).endswith(".gz"):
        payload = gzip_members(payload[i:i + MEMBER_BYTES] for i in range(0, len(payload), MEMBER_BYTES))
    _write(path, payload)


def write_chain_answers(path: str | Path, solutions: Sequence[Solution]) -> None:
    """Every answer of a chain's questions as one JSON document: the chain, each
    question with its answers (exact ``"p/q"`` or ``"Infinity"``, decimal, digits),
    engine and checks."""
    from ladders.solver.exact import digit_counts, fraction_to_decimal, fraction_to_str
    chain = solutions[0].problem.chain
    results = []
    for sol in solutions:
        answers = {name: ({"exact": v} if isinstance(v, str) else
                          {"exact": fraction_to_str(v), "decimal": fraction_to_decimal(v, 50),
                           "digits": digit_counts(v)}) for name, v in sol.answers.items()}
        results.append({"question": sol.problem.question.describe(), "answers": answers,
                        "engine": sol.engine, "seconds": round(sol.seconds, 3),
                        "verified": sol.verified})
    payload = json.dumps({"chain": chain.name, "source": solutions[0].problem.source,
                          "results": results}).encode()
    if str(path).endswith(".gz"):
        payload = gzip_members(payload[i:i + MEMBER_BYTES] for i in range(0, len(payload), MEMBER_BYTES))
    _write(path, payload)


def write_table(path: str | Path, table: FractionTable) -> None:
    """P(a,b) as JSON lines, ``{"a": 11, "b": 67, "exact": "p/q"}``.

    The 6,561 lines of ``hasbro`` are 57 MB of digits: two threads compress them
    (:func:`~ladders.checkpoints.files.gzip_members`) while the next lines are
    formatted from the table's decimal texts (:meth:`~ladders.solver.exact.FractionTable.texts`:
    no fraction built, each distinct denominator converted to decimal once)."""

    def chunks() -> Iterator[bytes]:
        lines: list[str] = []
        for count, ((a, b), p, q) in enumerate(table.texts(), start=1):
            lines += ('{"a": ', str(a), ', "b": ', str(b), ', "exact": "', p)
            lines += ('"}\n',) if q is None else ("/", q, '"}\n')
            if count % 256 == 0:
                yield "".join(lines).encode()
                lines.clear()
        if lines:
            yield "".join(lines).encode()

    _write(path, gzip_members(chunks()) if str(path).endswith(".gz") else b"".join(chunks()))
