"""``ladders solve``: the exact race, or any chain's answers, with any registered
engine, verified.

BOARD is a board (a race of pieces that never meet, or with ``--meet bump`` one joint
chain) or a chain file of any format in :mod:`ladders.solver.chains.formats`
(``.toml`` with ``[transitions]``, ``.tra``, ``.drn``, ``.prism``, ``.jani``): its
questions (``--target``, ``--properties``, or by default where it ends and the
expected steps) are solved one after the other.

The engines describe themselves (:mod:`ladders.cluster.engines`): ``--engine``'s
choices, the help of the options every engine may take and each engine's own options
are read from the registry, so an engine with a new option adds it here by itself."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ladders.checkpoints.outputs import check_output
from ladders.cluster.commands import (EPILOG_BOARD, board_options, cluster_options, emit,
                                      epilog_chains, formats_taking, interruptible, json_option,
                                      make_spec, meet_option, open_board, players_option, short,
                                      task_bar)
from ladders.cluster.engines import engines, takes

if TYPE_CHECKING:
    from ladders.cluster.engines import Engine, SolveRequest
    from ladders.solver.result import Solution


def _who(option: str) -> str:
    """The engines that take ``option``, for its help: "crt and series"."""
    names = [name for name, e in engines().items() if takes(e, option)]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """One click option per engine option (:class:`~ladders.cluster.engines.Option`):
    options of the same name are one flag whose help joins each engine's."""
    by_name: dict[str, list[tuple[str, Any]]] = {}
    for name, engine in engines().items():
        for option in engine.options:
            by_name.setdefault(option.name, []).append((name, option))
    for name, owners in sorted(by_name.items(), reverse=True):
        first = owners[0][1]
        helps = "; ".join(f"{engine}: {option.help}" for engine, option in owners)
        func = click.option(first.flag, name, type=first.type, default=None,
                            metavar=first.metavar, help=helps + ".")(func)
    return func


@click.command()
@board_options
@players_option()
@click.option("--engine", type=click.Choice(list(engines())), default=None,
              help="Exact engine [default: the fastest for the problem]: "
              + "; ".join(f"{name} = {e.summary}" for name, e in engines().items()) + ".")
@click.option("--executor", type=click.Choice(["auto", "serial", "dask"]), default="auto",
              show_default=True, help=f"{_who('executor')}: where the tasks run; auto = a Dask "
              "cluster when --scheduler or --workers is given or the problem is big, else this "
              "process.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help=f"{_who('seed')}: seed of the random primes (default: fresh ones).")
@click.option("--checkpoint", metavar="DIR|URL", default=None,
              help=f"{_who('checkpoint')}: run store folder (Zarr): the solve survives "
              "interruption, see 'ladders resume'.")
@cluster_options
@engine_options
@click.option("--exact", is_flag=True,
              help="Print every seat's exact fraction in full (thousands of digits on big boards).")
@click.option("--table", "table_path", metavar="FILE|URL", default=None,
              help=f"Two players: also write every P(a,b) as JSON lines (.gz to compress); "
              f"{_who('table')}.")
@click.option("--force", is_flag=True,
              help="Start a solve that its plan calls out of reach of the engine (more memory "
              "than one machine has; 'ladders plan' shows the figures), instead of refusing it.")
@click.option("--output", "output_path", metavar="FILE|URL", default=None,
              help="Also write every answer's exact fraction (a race's seats, a chain's "
              "answers by name) as one JSON document, the one --json prints (.gz to "
              "compress): what was asked, the answers, their digits, the checks.")
@meet_option
@click.option("--target", metavar="LABEL", default=None,
              help="Chain files: the probability of ever reaching the states labelled LABEL "
              "(instead of where the chain ends and the expected steps).")
@click.option("--properties", "properties", metavar="FILE", default=None,
              help="A PRISM properties file: P=? [F psi], [phi U psi], [X psi], [F<=k psi], "
              "[phi U<=k psi]; R=? [F psi], [C<=k], [I=k]; T=? [F psi]; S=? [psi]; P>=b forms "
              "and filter(..., \"init\"). On chain files "
              f"({formats_taking('properties')}): PRISM and JANI models (a .jani file's own "
              "properties are used without it), and the other chain files over their labels "
              "(\"a\" & !\"b\") and rewards. A property that cannot be answered is refused by "
              "itself; the others are answered.")
@click.option("--constants", metavar="N=16,MAX=2", default=None,
              help=f"Chain files ({formats_taking('constants')}): "
              "values of the model's open constants.")
@click.option("--builder", type=click.Choice(["ladders", "storm"]), default=None,
              help=f"Chain files ({formats_taking('builder')}): "
              "who builds the chain, ladders itself or "
              "Storm (stormpy) [default: ladders; JANI: storm].")
@click.option("--max-states", "max_states", type=click.IntRange(min=1), default=None,
              metavar="N",
              help=f"Chain files ({formats_taking('max_states')}) that ladders builds: the most "
              "states to build [default: 20,000,000]; a build past it stops at once, naming it.")
@click.option("--lump", type=click.Choice(["auto", "on", "off"]), default="auto",
              show_default=True,
              help="Chain questions: solve the quotient by the coarsest lumping (bisimulation) "
              "that keeps the question's answers, checked exactly against every transition; "
              "auto = where the chain's cycles are large and it at least halves the states.")
@json_option
def solve(board: str, rule: str | None, die: int | None, players: int, engine: str, executor: str,
          seed: int | None, checkpoint: str | None, scheduler: str | None,
          scheduler_file: str | None, workers: int | None, exact: bool, table_path: str | None,
          force: bool, output_path: str | None, meet: str | None, target: str | None,
          properties: str | None, constants: str | None, builder: str | None,
          max_states: int | None, lump: str, as_json: bool, **options: Any) -> int:
    """Exact win probability of every seat, or any chain's answers, certified and
    checked against the bounds.

    The default series engine never builds the race's system: it sums one player's
    generating functions (two players: polynomials of degree 81 over the rationals,
    the solve step checked exactly; three or more: every seat modulo word-size primes
    as Dask tasks, reconstructed and confirmed at primes not used to build it, and the
    Markov bounds to 1,000 digits). See docs/series.md.

    The other engines solve the race's sparse system: modular lifts its solution
    p-adically and certifies A x = b for every unknown; elimination eliminates
    fraction-free in column blocks with the wanted unknown last; crt solves modulo
    batches of primes. Runs with --checkpoint DIR survive a crash or Ctrl-C (at most
    the tasks in flight are lost); 'ladders resume DIR' continues.

    A chain file (any absorbing Markov chain, in any format listed below) is answered
    from its start: by default the probability of ending in each absorbing state and
    the expected number of steps ("Infinity" where it may never end); --target LABEL
    asks for the probability of reaching LABEL; --properties FILE evaluates a PRISM
    properties file. --meet bump makes a board's pieces meet: one joint chain.

    \b
    Examples:
      ladders solve hasbro --exact                        # all 4,453 digits in a second
      ladders solve hasbro --meet bump                    # pieces that meet: a joint chain
      ladders solve ruin.toml                             # any chain: where it ends, steps
      ladders solve model.tra --target goal               # P(reach "goal"), .lab beside it
      ladders solve brp.prism --properties brp.props --constants N=16,MAX=2
      ladders solve hasbro --table p.jsonl.gz             # ... and all 6,561 P(a,b)
      ladders solve hasbro --players 3 --output h3.json.gz --checkpoint runs/h3
      ladders solve hasbro --engine elimination --checkpoint runs/hasbro --workers 2
      ladders solve hasbro --engine crt --scheduler tcp://10.0.0.5:8786 --checkpoint /shared/h
    """
    from ladders.cluster.engines import SolveRequest, check_request, choose_engine, get_engine
    from ladders.cluster.runs import solve as run_solve
    from ladders.solver.problem import Problem
    t_start = time.perf_counter()
    outputs = {name: recorded_path(path) for name, path in (("output", output_path),
                                                             ("table", table_path)) if path}
    request = SolveRequest(checkpoint=checkpoint, spec=make_spec(scheduler, scheduler_file, workers),
                           executor=executor, seed=seed, table=bool(table_path), force=force,
                           options={k: v for k, v in options.items() if v is not None},
                           outputs=outputs)
    if table_path and players != 2:
        raise click.UsageError("--table is for two players")
    for path in (table_path, output_path):
        if path:
            check_output(path)  # before the work, not after it
    if checkpoint:
        from ladders.checkpoints.backend import open_backend
        open_backend(checkpoint).check()  # a file, an unknown scheme, an unreachable bucket
    asked = chain_problems(board, rule, die, players, meet, target, properties, constants,
                           builder, lump, max_states)
    if asked is None and lump != "auto":
        raise click.UsageError(f"--lump is for chain questions; {board} is a race of pieces "
                               "that never meet (the series engine's)")
    if asked is not None:
        chains, refused = asked
        if table_path:
            raise click.UsageError("--table is for races of two players, not chains")
        if checkpoint and any(c.source is None for c in chains):
            raise click.UsageError("--checkpoint keeps a run of a chain file's question, and a "
                                   "long-run question (S=?) is asked of a chain made from it; "
                                   "leave --checkpoint out (it needs no run store)")
        if checkpoint and len(chains) > 1:
            raise click.UsageError(f"--checkpoint keeps one question's run, and {board} asks "
                                   f"{len(chains)}: pick one with --target, or a properties "
                                   "file of one property")
        return solve_chains(chains, engine, request, t_start, as_json, exact, output_path,
                            refused)
    b = open_board(board, rule, die)
    problem = Problem.build(b, players)
    driver = get_engine(engine) if engine else choose_engine(problem)
    try:
        check_request(driver, problem, request)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"solving {driver.describe(problem)} ({driver.name} engine)", err=True)
    workers = None if request.spec.remote else request.spec.workers or os.cpu_count() or 1
    said = [driver.forecast(problem, workers), unkept(driver, problem, request, workers)]
    if any(said):
        click.echo("\n".join(line for line in said if line), err=True)
    with interruptible() as stop, task_bar(driver.unit) as bar:
        solution = run_solve(problem, driver.name, request, progress=bar, should_stop=stop,
                             started=t_start)
    return finish([solution], as_json, exact, output_path, table_path, request.spec.flags())


#: Seconds of a run (by the engine's cost model) beyond which a solve without
#: --checkpoint is warned that it keeps nothing.
LONG_RUN = 600.0


def unkept(driver: Engine, problem: Any, request: SolveRequest,
           workers: int | None) -> str | None:
    """The warning for a long run that keeps nothing (no ``--checkpoint`` where the
    engine takes one, and a plan beyond :data:`LONG_RUN` on ``workers``; None: a
    remote cluster's, not known), or None."""
    from ladders.cluster.engines import human_seconds
    if request.checkpoint or workers is None or not takes(driver, "checkpoint"):
        return None
    seconds = driver.run_seconds(problem, workers)
    if seconds is None or seconds <= LONG_RUN:
        return None
    return (f"ladders: warning: the plan puts this run at {human_seconds(seconds)}, and without "
            "--checkpoint it keeps nothing: a Ctrl-C, a crash or a reboot loses all of it; "
            "give --checkpoint DIR to make it resumable ('ladders resume DIR')")


def chain_forecast(problem: Any, driver: Engine) -> str | None:
    """What a long chain solve says before it starts, as a long race does
    (:meth:`~ladders.cluster.engines.Engine.forecast`): the plan's time for ``driver``
    from the chain engines' cost model (:func:`~ladders.solver.estimate.chain_seconds`)
    where it is beyond :data:`LONG_RUN`; None for a shorter one or one the model does
    not cover. A bump race of 1.5 million states went into days of work without it."""
    from ladders.cluster.engines import human_seconds
    from ladders.solver.estimate import chain_seconds
    seconds = chain_seconds(problem, driver.name)
    if seconds is None or seconds <= LONG_RUN:
        return None
    return (f"the plan: about {human_seconds(seconds)} in this process (the chain engines' cost "
            "model: a rough fit; 'ladders plan' gives every engine's figures)")


solve.epilog = EPILOG_BOARD + " " + epilog_chains()


class BuildLines:
    """``progress(states, transitions, levels)`` of a model's build: one line on stderr
    after :data:`FIRST` seconds, then one every :data:`EVERY` (a build that ends sooner
    says nothing), with the states found, the rate, and the limit with the way to raise
    it: a model too large for the machine shows where it is heading before it stops."""

    FIRST, EVERY = 5.0, 30.0

    def __init__(self, path: str, limit: int | None) -> None:
        from ladders.solver.chains.model import MAX_STATES
        self.path, self.limit = path, MAX_STATES if limit is None else limit
        self.t0 = time.perf_counter()
        self.next = self.FIRST

    def __call__(self, states: int, transitions: int, levels: int) -> None:
        elapsed = time.perf_counter() - self.t0
        if elapsed < self.next:
            return
        self.next = elapsed + self.EVERY
        click.echo(f"building {self.path}: {states:,} states, {transitions:,} transitions, "
                   f"{levels:,} breadth-first levels, {elapsed:.0f} s ({states / elapsed:,.0f} "
                   f"states a second; the limit {self.limit:,}: --max-states raises it)", err=True)


def chain_problems(board: str, rule: str | None, die: int | None, players: int,
                   meet: str | None, target: str | None, properties: str | None,
                   constants: str | None, builder: str | None = None,
                   lump: str = "auto", max_states: int | None = None
                   ) -> tuple[list[Any], tuple[str, ...]] | None:
    """The chain questions BOARD asks (a chain file, or a board whose pieces meet), each
    on the quotient of its chain where ``lump`` says so
    (:func:`~ladders.solver.chain_problem.lumped_problem`), and the properties refused
    (one line each, see :attr:`Loaded.refused`), or None for a race of pieces that
    never meet. A properties file none of whose properties can be answered is a
    :class:`ChainError` listing every refusal (exit code 2). A model that ladders
    builds (PRISM, JANI) has at most ``max_states`` states, and a build that lasts
    says how far it got (:class:`BuildLines`)."""
    from ladders.solver.chains.formats import format_of, load_chain
    from ladders.solver.chain_problem import ChainProblem, lumped_problem
    from ladders.solver.chains.questions import Question
    def lumped(problem: ChainProblem) -> ChainProblem:
        """``problem`` on its quotient where ``lump`` says so; where ``--lump on`` was
        asked and nothing could be lumped, a note says why (it said nothing)."""
        out = lumped_problem(problem, lump)
        if lump == "on" and out.lumping is None:
            question = problem.question
            why = ("a question over a number of steps or a path through a set is solved "
                   "whole" if question.stepped or question.through is not None else
                   "no two states behave alike for this question")
            click.echo(f"ladders: --lump on: nothing lumped for {question.describe()}: {why}",
                       err=True)
        return out

    for flag, value, what in (("--target", target, "a label's name, e.g. --target goal"),
                              ("--properties", properties, "a properties file")):
        if value is not None and not value.strip():  # '' asked the default question
            raise click.UsageError(f"{flag} is empty; give {what}")
    if format_of(board) is None:
        if target or properties or constants or builder or max_states:
            given = [f for f, v in (("--target", target), ("--properties", properties),
                                    ("--constants", constants), ("--builder", builder),
                                    ("--max-states", max_states)) if v]
            raise click.UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for "
                                   f"chain files; {board} is a board")
        from ladders.solver.chain_problem import board_problem
        from ladders.solver.games.board import with_overrides
        problem = board_problem(with_overrides(open_board(board, rule, die), meet=meet), players)
        return None if problem is None else ([lumped(problem)], ())
    given = [f for f, v in (("--rule", rule), ("--die", die), ("--meet", meet)) if v]
    context = click.get_current_context(silent=True)
    if context is not None and context.get_parameter_source("players") not in (
            None, click.core.ParameterSource.DEFAULT):
        given.append("--players")
    if given:
        raise click.UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for "
                               f"boards; {board} is a chain file")
    if target and properties:
        raise click.UsageError("give --target or --properties, not both")
    loaded = load_chain(board, BuildLines(board, max_states), properties=properties,
                        constants=constants, builder=builder, max_states=max_states)
    if target:
        loaded.chain.label_mask(target)  # a ChainError naming the labels there are
        questions = [Question("reach", target)]
    else:
        if properties and not loaded.questions and not loaded.refused:
            raise click.UsageError(f"{properties} asks no property; write one such as "
                                   '"p1": P=? [ F "goal" ];, or leave --properties out for '
                                   "where the chain ends")
        questions = list(loaded.questions) or ([] if loaded.refused else [Question()])
    if target:
        return [lumped(ChainProblem(loaded.chain, q, loaded.source)) for q in questions], ()
    from ladders.solver.chain_problem import ask_chain
    from ladders.solver.chains.model import ChainError
    problems, refused = [], list(loaded.refused)
    for question in questions:
        try:
            problems.append(lumped(ask_chain(loaded.chain, question, loaded.source)))
        except ChainError as exc:  # this question alone (a long run beyond reach)
            refused.append(f"property {question.text}: {exc}")
    if not problems:
        raise ChainError(f"{properties or board}: no property can be answered: "
                         + "; ".join(refused))
    return problems, tuple(refused)


def solve_chains(problems: list[Any], engine: str | None, request: Any, started: float,
                 as_json: bool, exact: bool, output_path: str | None,
                 refused: tuple[str, ...] = ()) -> int:
    """Solve each chain question in turn, then print them all through :func:`finish`
    (one JSON document with ``--json``, the one ``--output`` writes) and the properties
    ``refused`` (each also said on stderr before the solves start); the exit code of the
    first failure, if any. A refused property does not change the exit code where
    another is answered (Storm's users read each property's line; a file of which none
    is answered is refused before, exit 2)."""
    from ladders.cluster.engines import check_request, choose_engine, get_engine
    from ladders.cluster.runs import solve as run_solve
    # each chain's notes once (a long-run question's chain adds its own)
    for note in dict.fromkeys(note for problem in problems for note in problem.chain.notes):
        click.echo(f"note: {note}", err=True)
    for line in refused:
        click.echo(f"ladders: refused: {line}", err=True)
    solutions = []
    for problem in problems:
        t0 = time.perf_counter()
        if not problem.solvable:
            from ladders.cluster.runs import known_solution
            solutions.append(known_solution(problem, t0))
            continue
        driver = get_engine(engine) if engine else choose_engine(problem, request)
        try:
            check_request(driver, problem, request)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        why = driver.why(problem)
        click.echo(f"solving {problem.describe()}: {problem.unknowns:,} unknowns "
                   f"({driver.name} engine{': ' + why if why else ''})", err=True)
        forecast = chain_forecast(problem, driver)
        if forecast is not None:
            click.echo(forecast, err=True)
        with interruptible() as stop, task_bar(driver.unit) as bar:
            solution = run_solve(problem, driver.name, request, progress=bar, should_stop=stop,
                                 started=t0)
        solutions.append(solution)
        if solution.interrupted:
            break
    return finish(solutions, as_json, exact, output_path,
                  seconds=time.perf_counter() - started, refused=refused)


def _decimal(value: Any) -> str:
    """30 decimals (cut off, not rounded), or fewer where they are the whole value."""
    from ladders.solver.exact import fraction_to_decimal, mpq
    text = fraction_to_decimal(value, 30)
    if "." in text and mpq(text) == value:
        text = text.rstrip("0").rstrip(".")
    return text


def warn_unrecorded(solution: Solution) -> None:
    """Say on stderr where a verified answer could not be recorded in its store (a
    full disk): the answer is printed all the same."""
    if solution.details.get("not_recorded"):
        click.echo(f"ladders: warning: {solution.details['not_recorded']}", err=True)


def recorded_path(path: str) -> str:
    """An output's path as a run store keeps it: absolute, so that ``ladders resume``
    from another folder writes the same file (a URL as given)."""
    import os
    return path if "://" in path else os.path.abspath(path)


def finish(solutions: Sequence[Solution], as_json: bool, exact: bool = False,
           output_path: str | None = None, table_path: str | None = None, again: str = "",
           seconds: float | None = None, refused: Sequence[str] = ()) -> int:
    """Write the files asked for (verified answers only), then print the result, for a
    race and a chain's questions alike (``solutions``: one problem's, in order; a race
    has one): the document of :func:`~ladders.solver.report.answers_document` is what
    ``--json`` prints and ``--output`` writes. An interrupted solve prints how to
    resume (``again``: the options of the cluster it ran on, see
    :meth:`~ladders.cluster.connect.ClusterSpec.flags`)."""
    from ladders.checkpoints.outputs import write_answers, write_table
    from ladders.cluster.errors import EXIT_FAILED
    from ladders.solver.report import answers_document
    for solution in solutions:
        warn_unrecorded(solution)
    last = solutions[-1]
    if last.interrupted:
        return interrupted(last, as_json, again)
    data = answers_document(solutions, seconds, refused)
    passed = all(s.passed for s in solutions)
    target = None
    try:
        if table_path and last.table is not None and passed:
            target = table_path
            write_table(table_path, last.table)  # before the report: its success is final
            click.echo(f"table: {len(last.table):,} values of P(a,b) written to {table_path}",
                       err=True)
        if output_path and passed:
            target = output_path
            write_answers(output_path, data)
            count = sum(len(s.answers) for s in solutions)
            click.echo(f"output: {count} answers written to {output_path}", err=True)
    except OSError as exc:
        # a full disk, a folder gone: the answer of hours is not lost with the file
        report(solutions, data, as_json, True)
        kept = (f"it is kept in {last.store}: write it again with 'ladders resume "
                f"{last.store} --output {output_path or 'FILE'}'" if last.store
                else "every digit is printed above")
        click.echo(f"ladders: error: cannot write {target} ({exc.strerror or exc}); the answer "
                   f"is verified and {kept}", err=True)
        return EXIT_FAILED
    return report(solutions, data, as_json, exact)


def interrupted(outcome: Solution, as_json: bool, again: str = "") -> int:
    """Print how to resume an interrupted solve (with the cluster options ``again``)."""
    from ladders.cluster.engines import get_engine
    from ladders.cluster.errors import EXIT_INTERRUPTED
    if as_json:
        emit({"interrupted": True, "store": str(outcome.store),
              "resume": f"ladders resume {outcome.store}{again}"}, True, "")
    plural, single = get_engine(outcome.engine).unit
    unit = single if outcome.tasks_run == 1 else plural
    where = (f"the store is consistent. Resume with: ladders resume {outcome.store}{again}"
             if outcome.store else "nothing was kept (no --checkpoint)")
    click.echo(f"interrupted after {outcome.tasks_run} {unit} in this run; {where}", err=True)
    return EXIT_INTERRUPTED


def report(solutions: Sequence[Solution], data: dict[str, Any], as_json: bool,
           exact: bool = False) -> int:
    """Print ``data`` (the document of ``solutions``): one JSON document with
    ``--json``, else the answers by name for people (a race: its seats; a chain: each
    question's answers), every digit with ``exact``, and every check that ran."""
    from ladders.solver.exact import fraction_to_str
    if "seats" in data:  # a race's seats
        sol = solutions[0]
        dg = data["digits"]
        lines = [f"{data['board']['name']}, {data['players']} players "
                 f"(exact, {sol.engine} engine, {sol.seconds:.2f} s):"]
        lines += [f"  seat {s['seat']}: {s['decimal']}" for s in data["seats"]]
        lines.append(f"seat 1 exactly: a fraction of {dg['numerator']:,} digits over "
                     f"{dg['denominator']:,}")
        if exact:
            lines += [f"seat {s['seat']} = {s['exact']}" for s in data["seats"]]
        else:
            lines.append(f"seat 1 = {short(data['seats'][0]['exact'])}   "
                         "(--exact prints every digit)")
        lines += ["verified:"] + [f"  {line}" for line in verification_lines(sol.verified)]
    else:  # a chain's questions
        lines = [f"{data['chain']}: {data['states']:,} states, {data['transitions']:,} "
                 f"transitions ({data['seconds']:.2f} s in all)"]
        for sol, result in zip(solutions, data["results"]):
            problem = sol.problem
            lines.append(f"{result['question']}  (exact, {sol.engine}, {sol.seconds:.2f} s):")
            if problem.lumping is not None:
                lines.append(f"  {problem.lumping.describe()}")
            width = max(len(name) for name in sol.answers)
            for name, value in sol.answers.items():
                if isinstance(value, str):
                    lines.append(f"  {name:<{width}} = {value}")
                    continue
                text = result["answers"][name]["exact"]
                lines.append(f"  {name:<{width}} = {_decimal(value)}   "
                             f"({text if exact else short(text)})")
            lines += [f"  {name}: {'true' if ok else 'false'}"
                      for name, ok in result.get("holds", {}).items()]
            lines += [f"  {line}" for line in verification_lines(sol.verified)]
        lines += [f"refused: {line}" for line in data.get("refused", ())]
        if not exact and any(len(fraction_to_str(v)) > 80 for s in solutions
                             for v in s.answers.values() if not isinstance(v, str)):
            lines.append("(--exact prints every digit)")
    emit(data, as_json, "\n".join(lines))
    if not all(s.verified["passed"] for s in solutions):
        raise click.ClickException("verification FAILED: the result is not trustworthy")
    return 0


def verification_lines(report: dict[str, Any]) -> list[str]:
    """One line per check that ran (see :func:`ladders.solver.checks.verify.verify_answer`),
    then the verdict."""
    def mark(ok: bool) -> str:
        return "PASS" if ok else "FAIL"
    lines = []
    if "graph" in report:
        lines.append(f"graph        {report['graph']['what']}: {mark(report['graph']['passed'])}")
    if "stepped" in report:
        st = report["stepped"]
        lines.append(f"stepped      {st['what']}" + ("" if st.get("skipped") else
                                                      f": {mark(st['passed'])}"))
    b = report.get("bounds")
    if b is not None:
        walked = (f"{b['moves']:,} moves" if "moves" in b else
                  f"one push in topological order ({b['steps']:,} transitions read)"
                  if b.get("method") == "push" else f"{b['steps']:,} steps")
        lines.append(f"bounds       inside the Markov bounds after {walked}, {b['digits']} "
                     f"digits agree: {mark(b['passed'])}")
        lines += [f"             ({a['name']}: {a['unproved']})" for a in b.get("answers", ())
                  if "unproved" in a]
    for note in ("stopped", "pinned"):
        if b is not None and note in b:
            lines.append(f"             ({b[note]})")
    if b is not None and "ends" in b:
        lines.append(f"ends         {b['ends']['what']}: {mark(b['ends']['passed'])}")
    if b is not None and "extremes" in b:
        e = b["extremes"]
        lines.append(f"extremes     {e['what']}" + ("" if e.get("skipped") else f": {mark(e['passed'])}"))
    if "residues" in report:
        m = report["residues"]
        own = "the check's own system, " if m.get("system") == "independent" else ""
        lines.append("residues     " + own + (f"skipped ({m['reason']})" if m.get("skipped") else
                                              ", ".join(f"p={x['prime']} {'agrees' if x['agree'] else 'DISAGREES'}"
                                                        for x in m["primes"]) + f": {mark(m['passed'])}"))
    if "lumping" in report:
        q = report["lumping"]
        lines.append("lumping      " + (f"the quotient's {q['blocks']:,} states against the "
                                         f"chain's {q['states']:,}: {q['what']}: PASS"
                                         if q["passed"] else f"{q['why']}: FAIL"))
    if "certificate" in report:
        c = report["certificate"]
        label = "confirmation" if c.get("check") == "confirmation" else "certificate "
        size = f", D of {c['denominator_digits']:,} digits" if "denominator_digits" in c else ""
        odds = (f" (a wrong fraction passes with probability below {c['error_probability_below']:.0e})"
                if "error_probability_below" in c else "")
        lines.append(f"{label} {c['what']}{size}{odds}: {mark(c['passed'])}")
    if "cross" in report:
        x = report["cross"]
        lines.append(f"cross        the {x['engine']} engine: " +
                     (f"skipped ({x['reason']})" if x.get("skipped") else
                      f"{'same fraction' if x['passed'] else 'DIFFERENT fraction'} "
                      f"({x['seconds']:.1f} s): {mark(x['passed'])}"))
    if "matches_complete_json" in report:
        lines.append(f"store        COMPLETE.json holds the same fraction: {report['matches_complete_json']}")
    lines.append("verified" if report["passed"] else "VERIFICATION FAILED")
    return lines
