"""``ladders boards`` and ``ladders show``: the preset boards, and one board checked."""

from __future__ import annotations


import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option, meet_option,
                                      open_board)


@click.command()
@json_option
def boards(as_json: bool) -> None:
    """List the preset boards.

    Example: ladders boards
    """
    from ladders.solver.games.board import PRESET_NOTES, preset_board
    items = []
    lines = []
    for name, note in PRESET_NOTES.items():
        b = preset_board(name)
        items.append({"name": name, "start": b.start, "end": b.end, "die": b.die, "rule": b.rule,
                      "jumps": [list(j) for j in b.jumps], "note": note})
        lines.append(f"{name:15} {b.start}..{b.end}, die {b.die}, {len(b.jumps):2} jumps, "
                     f"rule {b.rule}: {note}")
    emit({"boards": items}, as_json, "\n".join(lines))


@click.command()
@board_options
@meet_option
@json_option
def show(board: str, rule: str | None, die: int | None, meet: str | None, as_json: bool) -> None:
    """Show BOARD after checking it (every error names the file and line).

    Example: ladders show hasbro --rule bounce --meet bump
    """
    from ladders.solver.games.board import reachable_squares
    b = open_board(board, rule, die, meet)
    # the squares, not the chain: a die of 1,000 on 20,000 squares is 20 million moves
    states = len(reachable_squares(b) - {b.end})
    data = {"name": b.name, "start": b.start, "end": b.end, "die": b.die, "rule": b.rule,
            "meet": b.meet, "jumps": [list(j) for j in b.jumps], "transient_squares": states}
    emit(data, as_json, b.describe() + f"\nstates   {states} squares a piece can "
         "stand on before the end\ncheck    ok: every reachable square can finish")


show.epilog = EPILOG_BOARD
