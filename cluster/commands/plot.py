"""``ladders plot``: pictures of the answers (matplotlib, optional)."""

from __future__ import annotations

import time
from typing import Any

import click

from ladders.cluster.commands import EPILOG_BOARD, emit, json_option, meet_option, open_board
from ladders.cluster.errors import EXIT_BAD_INPUT

PLOT_KINDS = ("board", "lengths", "diagonal", "convergence", "coins", "seats")

# Which of the kind-specific options each KIND reads: any other one given is refused,
# not silently ignored.
_PLOT_OPTIONS = {
    "board": {"rule", "die", "meet"},
    "lengths": {"rule", "die", "throws", "games", "seed", "meet"},
    "diagonal": {"rule", "die", "throws", "meet"},
    "convergence": {"rule", "die", "throws", "games", "seed", "players", "meet"},
    "coins": {"coins_a", "coins_b", "pot"},
    "seats": {"results"},
}
#: The kinds that draw no BOARD.
_NO_BOARD = {"coins": "--a, --b, --pot", "seats": "--result"}


class _PlotSetupError(click.ClickException):
    """A missing optional dependency: one line, exit 2 like other bad setups."""

    exit_code = EXIT_BAD_INPUT


@click.command()
@click.argument("kind", type=click.Choice(PLOT_KINDS))
@click.argument("board", required=False)
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="Picture file; the format comes from the suffix: .png or .svg.")
@click.option("--rule", type=click.Choice(["stay", "bounce", "pass"]), default=None,
              help="Override the overshoot rule.")
@click.option("--die", type=click.IntRange(min=1), default=None,
              help="Override the die size (faces 1..N).")
@click.option("--throws", type=click.IntRange(min=1, max=500), default=None,
              help="lengths: t = 1..THROWS [default: until F(t) >= 0.99]; diagonal: strips "
              "drawn [default: 40]; convergence: moves [default: until 16 digits agree]. At "
              "most 500 (a picture shows no more; 2,000 diagonal strips took 19 s).")
@click.option("--games", "-n", type=click.IntRange(min=2, max=1_000_000), default=None,
              help="lengths: also simulate N games, bars beside the exact ones; "
              "convergence: N simulated races [default: 100000]. At most 1,000,000: a "
              "picture keeps every length in memory (10 million took 1 GB).")
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Random seed of --games [default: 1960].")
@click.option("--players", "-k", type=click.IntRange(2, 6), default=None,
              help="convergence: number of players (seats) [default: 2].")
@click.option("--a", "coins_a", type=click.IntRange(min=0), default=None,
              help="coins: A's starting coins [default: 4].")
@click.option("--b", "coins_b", type=click.IntRange(min=0), default=None,
              help="coins: B's starting coins [default: 4].")
@click.option("--pot", type=click.IntRange(min=0), default=None,
              help="coins: coins in the pot at the start [default: 2].")
@click.option("--result", "results", type=click.Path(dir_okay=False, exists=True), multiple=True,
              help="seats: a file written by 'ladders solve --output' (give one per player "
              "count).")
@click.option("--dpi", type=click.IntRange(50, 600), default=100, show_default=True,
              help="Resolution of a PNG (dots per inch).")
@click.option("--palette", is_flag=True,
              help="PNG with a 256-colour palette: looks the same, about a third of the bytes.")
@meet_option
@json_option
def plot(kind: str, board: str | None, output: str, rule: str | None, die: int | None,
         throws: int | None, games: int | None, seed: int | None, players: int | None,
         coins_a: int | None, coins_b: int | None, pot: int | None, results: tuple[str, ...],
         dpi: int, palette: bool, meet: str | None, as_json: bool) -> None:
    """Draw a picture of the answers (needs matplotlib: pip install '.[plot]' from the checkout).

    \b
    board        the board, squares shaded by E(s) with D(s), ladders and chutes as arrows
    lengths      f(t) as bars, F(t) on a second axis, mean and sd; --games adds simulation
    diagonal     the diagonal squares of the first player's advantage (two players)
    convergence  Markov bounds against moves, Monte Carlo error against N (N^-1/2 line)
    coins        Another Game: expected cycles from every start (takes no BOARD)
    seats        every seat's exact chance and the first mover's edge, from the files
                 of 'ladders solve --output' (--result, one per player count; no BOARD)

    \b
    Examples:
      ladders plot board hasbro -o board.png
      ladders plot lengths hasbro --games 100000 -o lengths.svg
      ladders plot convergence hasbro --players 3 -o convergence.png
      ladders plot coins --a 4 --b 4 --pot 2 -o coins.png
      ladders plot seats --result r2.json --result r3.json.gz -o seats.png
    """
    given = {name for name, value in (("rule", rule), ("die", die), ("throws", throws),
                                      ("games", games), ("seed", seed), ("players", players),
                                      ("coins_a", coins_a), ("coins_b", coins_b), ("pot", pot),
                                      ("results", results or None), ("meet", meet))
             if value is not None}
    stray = sorted(given - _PLOT_OPTIONS[kind])
    if stray:
        names = ", ".join("--" + {"coins_a": "a", "coins_b": "b", "results": "result"}.get(s, s)
                          for s in stray)
        raise click.UsageError(f"plot {kind} does not take {names}")
    if kind in _NO_BOARD and board is not None:
        raise click.UsageError(f"plot {kind} takes no BOARD (use {_NO_BOARD[kind]})")
    if kind == "seats" and not results:
        raise click.UsageError("plot seats needs --result FILE (from 'ladders solve --output FILE'), "
                               "one per player count")
    if kind not in _NO_BOARD and board is None:
        raise click.UsageError(f"plot {kind} needs a BOARD, e.g. ladders plot {kind} hasbro "
                               f"-o {kind}.png")
    from ladders.cluster import plots
    try:
        plots.require_matplotlib()
    except plots.MatplotlibMissing as exc:
        raise _PlotSetupError(str(exc)) from None
    try:
        fmt = plots.picture_format(output)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    from ladders.checkpoints.files import check_output_path
    check_output_path(output)  # before drawing, not after
    if palette and fmt != "png":
        raise click.UsageError("--palette is for .png pictures")
    t0 = time.perf_counter()
    name = None
    if kind == "coins":
        from ladders.solver.games.coins import CoinGame
        game = CoinGame(4 if coins_a is None else coins_a, 4 if coins_b is None else coins_b,
                        2 if pot is None else pot)
        fig = plots.plot_coins(game)
    elif kind == "seats":
        fig = plots.plot_seats([read_result(path) for path in results])
    else:
        b = open_board(board, rule, die, meet)
        name = b.name
        seed = 1960 if seed is None else seed
        if kind in ("diagonal", "convergence") and b.meet != "none":
            raise click.UsageError(f"the {kind} picture is of a race of pieces that never meet; "
                                   f"on {name} they meet (meet = \"{b.meet}\"): 'ladders solve "
                                   f"{board}{' --meet ' + meet if meet else ''}' answers that race")
        if kind == "board":
            fig = plots.plot_board(b)
        elif kind == "lengths":
            fig = plots.plot_lengths(b, throws=throws, games=games, seed=seed)
        elif kind == "diagonal":
            fig = plots.plot_diagonal(b, throws=throws or 40)
        else:
            fig = plots.plot_convergence(b, players=players or 2, moves=throws,
                                         games=games or 100_000, seed=seed)
    info = plots.save_figure(fig, output, dpi=dpi, palette=palette)
    data = {"kind": kind, "board": name, **info, "seconds": round(time.perf_counter() - t0, 3)}
    unit = "px" if fmt == "png" else "pt"
    emit(data, as_json, f"wrote {kind} picture{f' of {name}' if name else ''} to {output} "
         f"({info['width']}x{info['height']} {unit}, {info['bytes'] / 1024:.0f} KB)")


plot.epilog = EPILOG_BOARD


def read_result(path: str) -> dict[str, Any]:
    """A ``ladders solve --output`` document (gzip-compressed for ``.gz``), its shape
    checked so that a wrong file is one line naming it."""
    import gzip
    import json
    try:
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        data = json.loads(raw)
        ok = (isinstance(data, dict) and isinstance(data.get("players"), int)
              and isinstance(data.get("seats"), list) and len(data["seats"]) == data["players"]
              and all("exact" in s for s in data["seats"]) and "name" in data.get("board", {}))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise click.UsageError(f"{path}: not a file of 'ladders solve --output' ({exc})") from None
    if not ok:
        raise click.UsageError(f"{path}: not a file of 'ladders solve --output' (no seats)")
    return data
