"""``ladders plan``: how big an exact race is and what each engine would cost."""

from __future__ import annotations

from typing import Any

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, epilog_chains,
                                      formats_taking, json_option, meet_option, open_board,
                                      players_option)


@click.command()
@board_options
@meet_option
@players_option()
@click.option("--target", metavar="LABEL", default=None,
              help="Chain files: plan the probability of reaching LABEL.")
@click.option("--properties", metavar="FILE", default=None,
              help=f"Chain files ({formats_taking('properties')}): "
              "plan each property of a properties file.")
@click.option("--constants", metavar="N=16,MAX=2", default=None,
              help=f"Chain files ({formats_taking('constants')}): "
              "values of the open constants.")
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
         target: str | None, properties: str | None, constants: str | None,
         workers: int, per_machine: int | None, force: bool, as_json: bool) -> None:
    """Dry run: how big an exact race or chain is and what each engine would cost, before solving.

    A chain file, or a board whose pieces meet (one joint chain): its states and
    transitions, and for each question the unknowns left after the graph search, the
    strongly connected components, the engine 'ladders solve' picks and its time from
    the chain engines' cost model (ladders/solver/estimate.py, chain_seconds).

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
      ladders plan docs/examples/ruin.toml              # a chain file
    """
    from ladders.cluster.engines import busy_note, engines, human_seconds, verdict
    from ladders.solver.estimate import race_figures
    from ladders.solver.games.chain import build_chain
    from ladders.solver.problem import Problem
    from ladders.cluster.commands.solve import chain_problems
    asked = chain_problems(board, rule, die, players, meet, target, properties, constants)
    if asked is not None:
        problems, refused = asked
        for line in refused:
            click.echo(f"ladders: refused: {line}", err=True)
        return chain_plan(problems, as_json)
    chain = build_chain(open_board(board, rule, die))
    problem = Problem(chain.board, players, chain)
    data = race_figures(chain, players)
    rows = {name: engine.plan(problem, workers, per_machine) for name, engine in engines().items()}
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


plan.epilog = EPILOG_BOARD + " " + epilog_chains()


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


def chain_plan(problems: list[Any], as_json: bool) -> None:
    """The size of a chain (a chain file, or a board whose pieces meet: one joint chain)
    and, for each question, its unknowns after the graph search, nonzeros, answers, the
    strongly connected components, whether the fraction-free elimination in one process
    is cheap, each engine's row (:meth:`~ladders.cluster.engines.Engine.plan`, the same
    call as for a race: the chain engines' cost model,
    :func:`ladders.solver.estimate.chain_seconds`, or why an engine declines) and the
    engine 'ladders solve' picks, with its time, on the quotient where 'ladders solve'
    lumps (each question says whether it does, from how many states to how many).
    With one question its figures are also the document's own keys (as before chain
    files could be planned)."""
    from ladders.cluster.engines import choose_engine, engines
    first = problems[0]
    chain = first.original
    source = first.source if isinstance(first.source, dict) else {}
    board = source.get("board")
    data: dict[str, Any] = (
        {"board": board["name"], "players": source["players"], "meet": board["meet"]}
        if board is not None else {"chain": chain.name})
    data.update(states=chain.size, transitions=chain.nnz)
    head = (f"{board['name']}, {source['players']} players, {board['meet']} rule: one joint chain"
            if board is not None else f"{chain.name}: a chain")
    lines = [head, f"  states       {chain.size:,} ({chain.nnz:,} transitions)"]
    questions = []
    for problem in problems:
        if not problem.solvable:
            questions.append({"question": problem.question.describe(), "unknowns": 0,
                              "engine": None, "seconds_estimate": 0.0})
            lines.append(f"{problem.question.describe()}: every answer is known from the graph "
                         "search alone (no system to solve)")
            continue
        size, found = problem.size, problem.structure
        engine = choose_engine(problem)
        rows = {name: e.plan(problem, 1) for name, e in engines().items()}
        seconds = rows[engine.name].seconds
        figures = {"question": problem.question.describe(), "unknowns": size.unknowns,
                   "nonzeros": size.nonzeros, "answers": size.columns, "sparse": problem.sparse,
                   "engine": engine.name, "components": found.components.count,
                   "largest_component": found.largest, "topological": problem.topological,
                   "seconds_estimate": None if seconds is None else round(seconds, 3),
                   "engines": {name: row.text for name, row in rows.items()},
                   "lumped": None if problem.lumping is None else problem.lumping.to_json()}
        questions.append(figures)
        if len(problems) > 1:
            lines.append(f"{problem.question.describe()}:")
        width = max(12, *(len(name) + 1 for name in rows))
        lines += [f"  {'lumping':<{width}} " + (
                      problem.lumping.describe() if problem.lumping is not None else
                      "not used (no quotient of at most half the states, or the solve too "
                      "cheap to try)"),
                  f"  {'unknowns':<{width}} {size.unknowns:,} after the graph search, at most "
                  f"{size.nonzeros:,} nonzeros, {size.columns} answer{'s' if size.columns != 1 else ''}",
                  f"  {'structure':<{width}} {found.describe()}: " + (
                      "the component solve applies" if problem.topological else
                      f"too large for the component solve ({found.dense_work:,} products a "
                      "prime in its dense solves)"),
                  f"  {'fill':<{width}} " + (
                      "cheap in one process (its symbolic fill is within budget)"
                      if problem.sparse else "past the budget of one process's "
                      "fraction-free elimination")]
        lines += [f"  {name:<{width}} {row.text}" for name, row in rows.items()]
        lines.append(f"  {'verdict':<{width}} the {engine.name} engine" + (
            f": {rows[engine.name].text}" if seconds is not None else ""))
    if len(questions) == 1:
        data.update({k: v for k, v in questions[0].items() if k != "question"})
    data["questions"] = questions
    emit(data, as_json, "\n".join(lines))
