"""``ladders plan``: how big an exact race is and what each engine would cost."""

from __future__ import annotations

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option, open_board,
                                      players_option)


@click.command()
@board_options
@players_option()
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Workers to size the engines that run on a cluster for (per-worker figures "
              "are per core).")
@json_option
def plan(board: str, rule: str | None, die: int | None, players: int, workers: int,
         as_json: bool) -> None:
    """Dry run: how big an exact race is and what each engine would cost, before solving.

    Unknowns are exact; nonzeros are counted (small systems) or estimated from sampled
    rows; the digits of the answer come from a measured fit (see
    ladders/solver/estimate.py). Systems up to 20,000 unknowns that are quick to
    build (5 million terms) are factored once modulo a prime to measure the fill and
    the factorization time; the others get lower bounds (no fill assumed). Each engine
    gives its own row, and the verdict names the preferred engine that can do the solve.

    \b
    Examples:
      ladders plan hasbro --players 3
      ladders plan hasbro --players 2 --json
    """
    from ladders.cluster.engines import engines, verdict
    from ladders.solver.estimate import race_figures
    from ladders.solver.games.chain import build_chain
    from ladders.solver.problem import Problem
    chain = build_chain(open_board(board, rule, die))
    problem = Problem(chain.board, players, chain)
    data = race_figures(chain, players)
    rows = {name: engine.plan(chain, players, workers) for name, engine in engines().items()}
    order = sorted((pref, name) for name, e in engines().items()
                   if (pref := e.preference(problem)) is not None)
    data["verdict"] = verdict(rows, order_names(order), workers)
    for name, row in rows.items():
        data[name] = {k: v for k, v in row.figures.items() if k != "size"}
    bound = "" if data["lu_measured"] else "at least "
    # one estimate of the answer's size: that of the engine the verdict names, where it
    # makes one (the series engine's fit came within 0.2 % on hasbro), else the
    # race system's fit
    chosen = next((name for name in order_names(order) if f"the {name} engine" in data["verdict"]
                   and "digits_estimate" in rows[name].figures), None)
    if chosen is not None:
        data["digits_estimate"] = rows[chosen].figures["digits_estimate"]
        how = f"the {chosen} engine's fit"
    else:
        how = "measured fit of the race system, within a factor of 3"
    data["digits_from"] = chosen or "race system"
    digits = data["digits_estimate"]
    width = max(len(name) for name in rows) + 2
    lines = [f"{chain.board.name}, {players} players ({data['formulation']} formulation)",
             f"  {'one player':<{width}}{data['states']} squares, {data['recurrent_states']} of them can recur",
             f"  {'unknowns':<{width}}{data['unknowns']:,}",
             f"  {'nonzeros':<{width}}{'' if data['nonzeros_exact'] else '~'}{data['nonzeros']:,}",
             f"  {'digits':<{width}}~{digits:,} over ~{digits:,} ({how})",
             f"  {'L + U':<{width}}{bound}{data['lu_nonzeros']:,} nonzeros"
             + (f" (factored mod p in {data['factor_seconds']:.2f} s)" if data["lu_measured"]
                else " (too big to factor for a plan)")]
    lines += [f"  {name:<{width}}{row.text}" for name, row in rows.items()]
    lines.append(f"  {'verdict':<{width}}{data['verdict']}")
    emit(data, as_json, "\n".join(lines))


plan.epilog = EPILOG_BOARD


def order_names(order: list[tuple[float, str]]) -> list[str]:
    """The engines' names, most preferred first."""
    return [name for _, name in order]
