"""``ladders bounds``: exact Markov bounds for every seat."""

from __future__ import annotations

import time
from typing import Any

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option,
                                       meet_option, open_board, players_option, task_bar)


@click.command()
@board_options
@meet_option
@players_option()
@click.option("--moves", type=click.IntRange(min=0), default=None,
              help="Bounds after N throws per player (at most the moves whose bounds are "
              "fractions of 100,000 digits: 64,254 on hasbro with two players).")
@click.option("--digits", type=click.IntRange(min=1, max=100_000), default=None,
              help="Smallest N whose lower and upper bounds agree to D decimals (D <= 100,000; "
              "the search stops at the --moves limit).")
@json_option
def bounds(board: str, rule: str | None, die: int | None, meet: str | None, players: int,
           moves: int | None, digits: int | None, as_json: bool) -> None:
    """Exact Markov bounds lower(n) <= P <= upper(n) on the win probability of each seat.

    With --digits D the search stops where lower and upper agree to D decimals, or
    where a seat's bounds straddle a decimal of at most D places within 1e-(D+16)
    (an answer like 3/5 = 0.6: bounds 0.5999... and 0.6000... never share digits).

    \b
    Two players:  lower(n) = 1/2 + 1/2 sum_{t<=n} f(t)^2
                  upper(n) = lower(n) + (1 - F(n))^2 / 2
    k players:    seat j: sum_{t<=n} f(t) (1-F(t))^(j-1) (1-F(t-1))^(k-j), gap (1-F(n))^k

    Example: ladders bounds hasbro --moves 500;  ladders bounds hasbro -k 3 --digits 100
    """
    from ladders.solver.checks.bounds import (PIN_DIGITS, bounds_to_digits, check_digits,
                                              check_moves, markov_bounds, moves_limit)
    from ladders.solver.games.chain import build_chain
    from ladders.solver.exact import fraction_to_decimal as dec
    from ladders.solver.exact import fraction_to_str as exact
    t0 = time.perf_counter()
    if (moves is None) == (digits is None):
        raise click.UsageError("give exactly one of --moves N or --digits D")
    opened = open_board(board, rule, die, meet)
    if opened.meet != "none":
        return meeting_bounds(opened, players, moves, digits, as_json, t0)
    chain = build_chain(opened)
    with task_bar(("bounds", "move")) as bar:
        if moves:
            check_moves(chain, players, moves, flags=True)
            b = markov_bounds(chain, players, moves, progress=lambda n, total: bar(n, total, 0))
        else:
            check_digits(chain, players, digits, flags=True)
            b = bounds_to_digits(chain, players, digits, max_moves=moves_limit(chain, players),
                                 progress=lambda n, agreed: bar(n, 0, agreed))
    seconds = time.perf_counter() - t0
    places = max(20, (digits or 0) + 5)
    seats = [{"seat": j + 1, "lower": exact(lo), "upper": exact(up),
              "lower_decimal": dec(lo, places), "upper_decimal": dec(up, places)}
             for j, (lo, up) in enumerate(zip(b.lower, b.upper))]
    data = {"moves": b.moves, "players": players, **{k: seats[0][k] for k in
            ("lower", "upper", "lower_decimal", "upper_decimal")}, "seats": seats,
            "seconds": round(seconds, 4)}
    lines = [f"{chain.board.name}, {players} players, after {b.moves} moves "
             f"({seconds:.3f} s, exact):"]
    for s in seats:
        lines.append(f"  seat {s['seat']}: {s['lower_decimal']}\n          {s['upper_decimal']}")
    pinned = b.pinned_seats(digits) if digits else []
    if pinned:  # the answer is (within 10^-(D+16) of) a decimal the bounds straddle
        data["pinned"] = {f"seat {j + 1}": dec(b.upper[j], digits).rstrip("0").rstrip(".")
                          for j in pinned}
        lines.append(f"from n = {b.moves} the bounds settle {digits} digits: "
                     + ", ".join(f"{seat} lies within 1e-{digits + PIN_DIGITS} of {c}"
                                 for seat, c in data["pinned"].items())
                     + " (its bounds straddle that decimal, so their digits cannot agree)")
    elif digits:
        lines.append(f"lower and upper agree to {digits} digits from n = {b.moves}")
    emit(data, as_json, "\n".join(lines))


bounds.epilog = EPILOG_BOARD


#: Seconds the bounds of a board whose pieces meet may walk before they report the
#: digits reached (the walk is of the joint chain, step by step).
MEETING_SECONDS = 600.0


def meeting_bounds(board: Any, players: int, moves: int | None, digits: int | None,
                   as_json: bool, t0: float) -> None:
    """Bounds on each seat's win of a board whose pieces meet: the Markov bounds of
    its joint chain (:mod:`ladders.solver.checks.chain_bounds`), walked step by step
    until they agree to ``digits`` decimals."""
    from ladders.solver.chain_problem import board_problem
    from ladders.solver.exact import fraction_to_decimal as dec
    from ladders.solver.exact import fraction_to_str as exact
    if digits is None:
        raise click.UsageError(f"--moves counts the throws of one piece in a race of pieces that "
                               f"never meet; on {board.name} (meet = \"{board.meet}\") the pieces "
                               "make one joint chain, walked a step at a time: give --digits D")
    problem = board_problem(board, players)
    click.echo(f"walking {problem.describe()} (at most {MEETING_SECONDS:g} s)", err=True)
    b = problem.bounds_within(digits, MEETING_SECONDS)
    seconds = time.perf_counter() - t0
    places = max(20, digits + 5)
    seats = [{"seat": j + 1, "name": name, "lower": exact(lo),
              "upper": None if up is None else exact(up), "lower_decimal": dec(lo, places),
              "upper_decimal": None if up is None else dec(up, places)}
             for j, (name, lo, up) in enumerate(zip(b.names, b.lower, b.upper))
             if name != "steps"]
    data: dict[str, Any] = {"steps": b.steps, "players": players, "meet": board.meet,
                            "seats": seats, "seconds": round(seconds, 4)}
    lines = [f"{board.name}, {players} players, {board.meet} rule, after {b.steps:,} steps of the "
             f"joint chain ({seconds:.3f} s, exact):"]
    lines += [f"  seat {s['seat']}: {s['lower_decimal']}\n          {s['upper_decimal']}"
              for s in seats]
    if b.settled(digits):
        lines.append(f"lower and upper agree to {digits} digits from step {b.steps:,}")
    else:
        data["stopped"] = b.stopped
        lines.append(f"stopped before {digits} digits agree: {b.stopped}")
    emit(data, as_json, "\n".join(lines))
