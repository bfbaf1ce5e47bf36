"""``ladders plan``: how big an exact race is and what each engine would cost."""

from __future__ import annotations

from typing import Any

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option, meet_option,
                                      open_board, players_option)


@click.command()
@board_options
@meet_option
@players_option()
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Workers to size the engines that run on a cluster for (per-worker figures "
              "are per core).")
@click.option("--per-machine", type=click.IntRange(min=1), default=None,
              help="Workers that share one machine: its busy cores slow each prime of the "
              "series engine [default: all of them, up to 16].")
@click.option("--force", is_flag=True,
              help="Plan as 'ladders solve --force' would run: an engine that one machine's "
              "memory refuses is planned anyway, and the verdict says what it needs.")
@json_option
def plan(board: str, rule: str | None, die: int | None, meet: str | None, players: int,
         workers: int, per_machine: int | None, force: bool, as_json: bool) -> None:
    """Dry run: how big an exact race is and what each engine would cost, before solving.

    Unknowns are exact; nonzeros are counted (small systems) or estimated from sampled
    rows; the digits of the answer come from one measured fit for every engine (see
    ladders/solver/estimate.py). Systems up to 20,000 unknowns that are quick to
    build (5 million terms) are factored once modulo a prime to measure the fill and
    the factorization's CPU time; the others get lower bounds (no fill assumed). The
    series engine's row is its calibrated cost model, the figures 'ladders solve'
    states before a long run: the CPU time of a prime on an idle core, whatever the
    load (a note says when the machine is busy), then the wall time on the workers,
    with the slowdown of a machine whose cores are all busy (1 + 0.08 log2 of the
    workers on it) and the reconstruction after the last batch, the core-hours, and
    the memory of a worker and of the driver. Each engine gives its own row, the verdict
    names the preferred engine that can do the solve, and 'checks' the cross-check
    its run spends after the answer.

    \b
    Examples:
      ladders plan hasbro --players 3
      ladders plan hasbro --players 2 --json
      ladders plan hasbro --players 5 --workers 256 --per-machine 16
      ladders plan hasbro --players 6 --workers 256 --force
      ladders plan hasbro --players 3 --meet bump       # pieces that meet: one joint chain
    """
    from ladders.cluster.engines import busy_note, engines, human_seconds, verdict
    from ladders.solver.estimate import race_figures
    from ladders.solver.games.chain import build_chain
    from ladders.solver.problem import Problem
    opened = open_board(board, rule, die, meet)
    if opened.meet != "none":
        return meeting_plan(opened, players, as_json)
    chain = build_chain(opened)
    problem = Problem(chain.board, players, chain)
    data = race_figures(chain, players)
    rows = {name: (engine.plan(chain, players, workers, per_machine) if engine.machine_model
                   else engine.plan(chain, players, workers))
            for name, engine in engines().items()}
    order = order_names(sorted((pref, name) for name, e in engines().items()
                               if (pref := e.preference(problem)) is not None))
    data["verdict"] = verdict(rows, order, workers, force, per_machine)
    for name, row in rows.items():
        data[name] = {k: v for k, v in row.figures.items() if k != "size"}
    chosen = next((name for name in order if f"the {name} engine" in data["verdict"]), None)
    data["cross_check"] = cross_figures(problem, chosen)
    bound = "" if data["lu_measured"] else "at least "
    digits = data["digits_estimate"]
    width = max(len(name) for name in rows) + 2
    lines = [f"{chain.board.name}, {players} players ({data['formulation']} formulation)",
             f"  {'one player':<{width}}{data['states']} squares, {data['recurrent_states']} of them can recur",
             f"  {'unknowns':<{width}}{data['unknowns']:,}",
             f"  {'nonzeros':<{width}}{'' if data['nonzeros_exact'] else '~'}{data['nonzeros']:,}",
             f"  {'digits':<{width}}~{digits:,} over ~{digits:,} (the series engine's fit, "
             "for every engine)",
             f"  {'L + U':<{width}}{bound}{data['lu_nonzeros']:,} nonzeros"
             + (f" (factored mod p in {data['factor_seconds']:.2f} s of CPU)" if data["lu_measured"]
                else " (too big to factor for a plan)")]
    lines += [f"  {name:<{width}}{row.text}" for name, row in rows.items()]
    lines.append(f"  {'verdict':<{width}}{data['verdict']}")
    cross = data["cross_check"]
    if cross is not None:
        lines.append(f"  {'checks':<{width}}" + (
            f"the cross-check by the {cross['engine']} engine is skipped ({cross['skipped']})"
            if "skipped" in cross else
            f"the cross-check by the {cross['engine']} engine, its solve in this process after "
            f"the answer: ~{human_seconds(cross['seconds'])} of CPU" if cross["seconds"] is not None
            else f"the cross-check by the {cross['engine']} engine (not estimated)"))
    data["busy"] = busy_note()
    if data["busy"]:
        lines.append(f"  {'note':<{width}}{data['busy']}")
    emit(data, as_json, "\n".join(lines))


plan.epilog = EPILOG_BOARD


def order_names(order: list[tuple[float, str]]) -> list[str]:
    """The engines' names, most preferred first."""
    return [name for _, name in order]


def cross_figures(problem: Any, chosen: str | None) -> dict[str, Any] | None:
    """The cross-check a run of the engine ``chosen`` spends after its answer (the
    in-memory solve of the engine it names, :meth:`~ladders.cluster.engines.Engine.run_cross`):
    its engine and CPU seconds (None: not estimated), or why the run skips it; None
    when the run has none."""
    from ladders.cluster.engines import get_engine
    checker = None if chosen is None else get_engine(chosen).run_cross(problem)
    if checker is None:
        return None
    skip = checker.cross_skip(problem)
    if skip is not None:
        return {"engine": checker.name, "skipped": skip}
    seconds = checker.memory_seconds(problem)
    return {"engine": checker.name, "seconds": None if seconds is None else round(seconds, 1)}


def meeting_plan(board: Any, players: int, as_json: bool) -> None:
    """The size of a board whose pieces meet, as one joint chain (its states,
    transitions and unknowns, whether the fraction-free elimination in one process is
    cheap, the engine 'ladders solve' picks): the race engines' cost models are for
    pieces that never meet and do not apply."""
    from ladders.cluster.engines import choose_engine
    from ladders.solver.chain_problem import board_problem
    problem = board_problem(board, players)
    chain, size = problem.chain, problem.size
    engine = choose_engine(problem)
    sparse = problem.sparse
    found = problem.structure
    data = {"board": board.name, "players": players, "meet": board.meet, "states": chain.size,
            "transitions": chain.nnz, "unknowns": size.unknowns, "nonzeros": size.nonzeros,
            "answers": size.columns, "sparse": sparse, "engine": engine.name,
            "components": found.components.count, "largest_component": found.largest,
            "topological": problem.topological}
    lines = [f"{board.name}, {players} players, {board.meet} rule: one joint chain",
             f"  states       {chain.size:,} ({chain.nnz:,} transitions)",
             f"  unknowns     {size.unknowns:,}, at most {size.nonzeros:,} nonzeros, "
             f"{size.columns} answers",
             f"  components   {found.describe()}: " + (
                 "the component solve applies" if problem.topological else
                 f"too large for the component solve ({found.dense_work:,} products a prime "
                 "in its dense solves)"),
             "  elimination  " + ("cheap in one process (its symbolic fill is within budget)"
                                  if sparse else "past the budget of one process's "
                                  "fraction-free elimination"),
             f"  verdict      the {engine.name} engine (no time model for joint chains: the race "
             "engines' models are for pieces that never meet)"]
    emit(data, as_json, "\n".join(lines))
