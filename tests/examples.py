"""One table of games with exact answers, looked up by name and run through every
engine and executor (``test_engines.py``).

Each example is a board (preset, or built from parts), a player count, and the exact
seat-1 probability where it is published (SPEC 3); ``None`` means "compare with the
python-flint oracle" (an independent dense exact solver on an independent formulation).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ladders.solver.games.board import Board, make_board, preset_board
from ladders.solver.exact import mpq


@dataclass(frozen=True)
class Example:
    name: str
    board: Board
    players: int
    seat1: mpq | None = None


def truncated(name: str, end: int) -> Board:
    """A preset cut after square ``end`` (jumps that leave it dropped)."""
    b = preset_board(name)
    return make_board(f"{name}-{end}", b.start, end, b.die, b.rule,
                      [(a, t) for a, t in b.jumps if a < end and t <= end])


def board_file(tmp_path: Path, end: int) -> str:
    """hasbro cut at ``end`` as a board file (jumps beyond dropped)."""
    jumps = [(a, b) for a, b in preset_board("hasbro").jumps if a < end and b <= end]
    path = tmp_path / f"hasbro{end}.txt"
    path.write_text(f"0\n{end}\n6\n" + "".join(f"{a} {b}\n" for a, b in jumps))
    return str(path)


EXAMPLES = {ex.name: ex for ex in [
    Example("tiny10-2", preset_board("tiny10"), 2, mpq(30799, 57720)),
    Example("tiny10-3", preset_board("tiny10"), 3),
    Example("bounce12-2", make_board("bounce12", 0, 12, 4, "bounce", [(3, 9), (11, 1), (7, 10)]), 2),
    Example("pass15-2", make_board("pass15", 0, 15, 6, "pass", [(2, 13), (14, 4), (8, 3)]), 2),
    Example("hasbro20-2", truncated("hasbro", 20), 2),
    Example("d3-4", make_board("d3", 0, 6, 3, "stay", [(2, 5), (4, 1)]), 4),
]}


def run_json(*args: str) -> dict:
    """``ladders ARGS --json`` through click's runner (this process): the parsed
    document, the command having exited 0."""
    import json

    from click.testing import CliRunner

    from ladders.cluster.cli import cli
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output + (result.stderr or "")
    return json.loads(result.stdout)
