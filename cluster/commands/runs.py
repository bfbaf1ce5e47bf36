"""``ladders resume``, ``status`` and ``verify``: stored runs."""

from __future__ import annotations

import time

import click

from ladders.checkpoints.outputs import check_output
from ladders.cluster.commands import (cluster_options, emit, interruptible, json_option, make_spec,
                                      short, task_bar)
from ladders.cluster.commands.solve import finish, verification_lines
from ladders.cluster.engines import cross_help


@click.command()
@click.argument("store", metavar="STORE")
@cluster_options
@click.option("--executor", type=click.Choice(["serial", "dask"]), default=None,
              help="Override the executor the run was started with.")
@click.option("--output", "output_path", metavar="FILE|URL", default=None,
              help="Also write every answer's exact fraction as one JSON document (.gz to "
              "compress), as 'ladders solve --output' does.")
@json_option
def resume(store: str, scheduler: str | None, scheduler_file: str | None, workers: int | None,
           executor: str | None, output_path: str | None, as_json: bool) -> int:
    """Continue an interrupted solve from its last committed manifest; a finished
    one prints its stored answer (with --output, writes it too). The files that
    'ladders solve --output' and '--table' were asked to write are written when the run
    is answered, as they were asked (run.json keeps them); --output names another.

    Without --scheduler, --scheduler-file or --workers it runs on the cluster the run
    was started on (recorded in the store's run.json); the executor is the run's too.

    \b
    Examples:
      ladders resume runs/hasbro --workers 2
      ladders resume runs/h4 --output h4.json.gz    # finish, then write the fractions
    """
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import SolveRequest, get_engine
    from ladders.cluster.runs import on_recorded_cluster, resume as run_resume
    t_start = time.perf_counter()
    request = SolveRequest(spec=make_spec(scheduler, scheduler_file, workers),
                           executor=executor or "auto")
    if output_path:
        check_output(output_path)  # before the work, not after it
    opened = RunStore.open(store)
    asked = opened.run.get("outputs", {})
    table_path = asked.get("table")
    if table_path:
        import dataclasses
        request = dataclasses.replace(request, table=True)
    if output_path is None and asked.get("output"):
        output_path = asked["output"]
        click.echo(f"output: {output_path} (as 'ladders solve --output' asked when the run "
                   "started; --output writes another file)", err=True)
        check_output(output_path)
    if opened.completed():
        from ladders.cluster.runs import stored_solution
        solution = stored_solution(store, started=t_start)
        click.echo(f"{store} is finished already ({solution.details['stored']['seconds']:,.1f} s "
                   "of solving); its stored answer:", err=True)
        return finish([solution], as_json, output_path=output_path, table_path=table_path)
    given = request.spec
    request = on_recorded_cluster(opened, request)
    recorded = request.spec != given and (executor or opened.run.get("executor")) == "dask"

    def announce() -> None:
        """What is resumed, said once the store is this run's (its LOCK held): a resume
        refused for a live driver says only why."""
        click.echo(f"resuming {problem_line(opened.run['problem'])} ({opened.engine} engine) "
                   f"from {store}: {done_so_far(store)}", err=True)
        if recorded:
            click.echo(f"resuming on the cluster the run was started on "
                       f"({request.spec.describe()}, from its run.json); --scheduler, "
                       "--scheduler-file or --workers choose another", err=True)
    unit = get_engine(opened.engine).unit
    with interruptible() as stop, task_bar(unit) as bar:
        solution = run_resume(store, request, progress=bar, should_stop=stop, started=t_start,
                              announce=announce)
    return finish([solution], as_json, output_path=output_path, table_path=table_path,
                  again=request.spec.flags())


@click.command()
@click.argument("store", metavar="STORE")
@json_option
def status(store: str, as_json: bool) -> None:
    """State of a run store, read from its files (no cluster needed).

    Example: ladders status runs/hasbro
    """
    from ladders.cluster.runs import status as run_status
    st = run_status(store)
    done, digits = st["progress"], st["digits"]
    lines = [f"store     {st['store']}",
             f"problem   {problem_line(st['problem'])}, {st['size']}",
             f"engine    {st['engine']}",
             f"state     {st['state']}",
             f"progress  {done}",
             f"digits    {digits}",
             f"elapsed   {st['elapsed_seconds']:.1f} s of solving",
             f"size      {st['store_bytes'] / 1e6:.1f} MB"]
    if st["result"]:
        named = st["result"].get("answers") or {
            ("seat 1" if st["problem"].get("kind") != "chain" else "answer 1"):
            st["result"]["seats"][0]}  # a store finished before answers were named
        name, value = next(iter(named.items()))
        more = f" (and {len(named) - 1} more: ladders verify)" if len(named) > 1 else ""
        lines.append(f"answer    {name} = {short(value)}{more}")
    elif st["state"].startswith("interrupted"):
        lines.append(f"resume    ladders resume {st['store']}")
    emit(st, as_json, "\n".join(lines))


def done_so_far(path: str) -> str:
    """What a stored run has done, in a phrase (its engine's progress figures); a store
    that cannot go on is refused here, in the words ``ladders status`` uses."""
    from ladders.cluster.engines import get_engine
    from ladders.cluster.runs import open_store
    store = open_store(path)
    return f"{get_engine(store.engine).status(store, store.current())['progress']} done"


def problem_line(problem: dict) -> str:
    """What a store's run.json says it solves, in a phrase."""
    if problem.get("kind") != "chain":
        return f"{problem['board']['name']}, {problem['players']} players"
    source, question = problem["source"], problem["question"]
    what = (f"{source['board']['name']}, {source['players']} players, pieces that meet"
            if "board" in source else source["path"])
    return f"{what}: {question.get('text') or question['kind']}"


@click.command()
@click.argument("store", metavar="STORE")
@click.option("--primes", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Independent solves modulo random 61-bit primes (at most 64; each is a "
              "solve of the race system, about 10 s on the full board for 2 players). A "
              "series run whose system has over 20,000 unknowns (3 or more players on the "
              "full board) is checked instead against the series residues at as many fresh "
              "random 62-bit primes (0.03 s each for 3 players, 0.14 s for 4).")
@click.option("--cross/--no-cross", default=None,
              help="Solve again in memory with another engine and compare (" + cross_help()
              + ") [default: where that solve is quick].")
@json_option
def verify(store: str, primes: int, cross: bool | None, as_json: bool) -> None:
    """Check a finished run again: Markov bounds, modular solves and the other engine.

    A series run whose race system is too big to solve again (3 or more players on the
    full board) is checked against the series residues at fresh random primes instead
    of modular solves.

    Example: ladders verify runs/hasbro --primes 3
    """
    from ladders.cluster.runs import verify_stored
    from ladders.solver.exact import fraction_to_decimal, fraction_to_str
    t0 = time.perf_counter()
    res = verify_stored(store, primes=primes, cross=cross)
    rep = res["report"]
    data = {"seats": [{"seat": j + 1, "decimal": fraction_to_decimal(p, 50)}
                      for j, p in enumerate(res["seats"])], "engine": res["engine"],
            "verified": rep, "seconds": round(time.perf_counter() - t0, 2)}
    named = res["problem"].named(res["seats"])
    data["answers"] = {name: v if isinstance(v, str) else fraction_to_str(v)
                       for name, v in named.items()}
    lines = [f"{name} = {v if isinstance(v, str) else fraction_to_decimal(v, 50) + '...'}"
             for name, v in named.items()]
    lines[0] += f" ({res['engine']} engine)"
    lines += verification_lines(rep)
    emit(data, as_json, "\n".join(lines))
    if not rep["passed"]:
        raise click.ClickException(f"verification of {store} failed")
