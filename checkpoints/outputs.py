"""The files a solve writes for people and other programs, beside its run store:
``--output`` (every answer's exact fraction as one JSON document, a race's or a
chain's) and ``--table`` (two players: every ``P(a, b)`` as JSON lines). Both are gzip-compressed when the name ends
in ``.gz`` and written whole or not at all: a local file atomically
(:mod:`ladders.checkpoints.files`), an object (``s3://bucket/h3.json.gz``) by one PUT.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ladders.checkpoints.backend import check_url, open_backend
from ladders.checkpoints.files import MEMBER_BYTES, check_output_path, gzip_members, write_atomically

if TYPE_CHECKING:
    from ladders.solver.exact import FractionTable


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


def write_answers(path: str | Path, document: dict[str, Any]) -> None:
    """A solve's answers as one JSON document, the one ``--json`` prints
    (:func:`~ladders.solver.report.answers_document`: a race's board, players and
    seats, a chain's questions and their answers by name; exact, decimal, digits, the
    checks), for a race and a chain alike. ``ladders plot seats`` reads a race's."""
    payload = json.dumps(document).encode()
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
