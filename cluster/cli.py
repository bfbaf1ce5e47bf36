"""The ``ladders`` command line: parse, call a plain function, print.

Every command takes ``--json``: stdout then holds exactly one JSON document, progress
goes to stderr. Exact numbers are strings ``"p/q"`` next to a ``decimal`` string.
Errors become one line on stderr and an exit code (2 for bad usage or input), never a
traceback. Heavy imports live inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from checkpoints.errors import SegmentError, StoreError
from cluster.errors import ClusterError

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1

EPILOG_BOARD = ("BOARD is a preset (hasbro, milton-bradley, snakes-2016, tiny10; see "
                "'ladders boards') or a board file (plain text or .toml).")


class LaddersGroup(click.Group):
    """A click group whose errors are one line on stderr with a fitting exit code."""

    def main(self, args: Any = None, prog_name: str | None = None, **extra: Any) -> Any:
        extra.pop("standalone_mode", None)
        try:
            rv = super().main(args, prog_name or "ladders", standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            click.echo(f"ladders: error: {exc.format_message()}{hint}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except click.ClickException as exc:
            click.echo(f"ladders: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("ladders: interrupted", err=True)
            sys.exit(130)
        except (ValueError, OSError) as exc:  # BoardError is a ValueError
            click.echo(f"ladders: error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except (StoreError, SegmentError, ClusterError) as exc:
            click.echo(f"ladders: error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT if isinstance(exc, StoreError) else EXIT_FAILED)
        except ArithmeticError as exc:
            click.echo(f"ladders: error: exact arithmetic failed: {exc}", err=True)
            sys.exit(EXIT_FAILED)
        except Exception as exc:  # a bug: still one line, with a way to see the traceback
            if os.environ.get("LADDERS_DEBUG"):
                raise
            click.echo(f"ladders: internal error: {type(exc).__name__}: {exc} (please report it; "
                       "LADDERS_DEBUG=1 shows the traceback)", err=True)
            sys.exit(EXIT_FAILED)
        sys.exit(rv if isinstance(rv, int) else 0)


def emit(data: dict[str, Any], as_json: bool, text: str) -> None:
    """Print ``data`` as one JSON document, or ``text`` for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(text)


def board_options(func: Any) -> Any:
    """BOARD plus the ``--rule`` and ``--die`` overrides shared by the board commands."""
    func = click.option("--die", type=click.IntRange(min=1), default=None,
                        help="Override the die size (faces 1..N).")(func)
    func = click.option("--rule", type=click.Choice(["stay", "bounce", "pass"]), default=None,
                        help="Override the overshoot rule.")(func)
    return click.argument("board")(func)


def json_option(func: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON document on stdout (progress goes to stderr).")(func)


def open_board(board: str, rule: str | None, die: int | None):  # -> Board
    from solver.board import load_board, with_overrides
    return with_overrides(load_board(board), rule=rule, die=die)


def write_atomically(path: Path, payload: bytes) -> None:
    """Write ``payload`` to a temporary file beside ``path``, fsync, then rename over it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@click.group(cls=LaddersGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Example: ladders solve hasbro --players 2")
@click.version_option(package_name="ladders", prog_name="ladders")
def cli() -> None:
    """Exact answers for Chutes and Ladders, Snakes and Ladders and Another Game.

    Every probability is an exact fraction (all digits), with Markov bounds and Monte
    Carlo to check it against.
    """


@cli.command()
@json_option
def boards(as_json: bool) -> None:
    """List the preset boards.

    Example: ladders boards
    """
    from solver.board import PRESET_NOTES, preset_board
    items = []
    lines = []
    for name, note in PRESET_NOTES.items():
        b = preset_board(name)
        items.append({"name": name, "start": b.start, "end": b.end, "die": b.die, "rule": b.rule,
                      "jumps": [list(j) for j in b.jumps], "note": note})
        lines.append(f"{name:15} {b.start}..{b.end}, die {b.die}, {len(b.jumps):2} jumps, "
                     f"rule {b.rule}: {note}")
    emit({"boards": items}, as_json, "\n".join(lines))


@cli.command()
@board_options
@json_option
def show(board: str, rule: str | None, die: int | None, as_json: bool) -> None:
    """Show BOARD after checking it (every error names the file and line).

    Example: ladders show hasbro --rule bounce
    """
    from solver.chain import build_chain
    b = open_board(board, rule, die)
    chain = build_chain(b)
    data = {"name": b.name, "start": b.start, "end": b.end, "die": b.die, "rule": b.rule,
            "jumps": [list(j) for j in b.jumps], "transient_squares": len(chain.states)}
    emit(data, as_json, b.describe() + f"\nstates   {len(chain.states)} squares a piece can "
         "stand on before the end\ncheck    ok: every reachable square can finish")


show.epilog = EPILOG_BOARD


@cli.command()
@board_options
@click.option("--throws", type=click.IntRange(min=1), default=100, show_default=True,
              help="Length distribution f(t), F(t) for t = 1..THROWS.")
@json_option
def stats(board: str, rule: str | None, die: int | None, throws: int, as_json: bool) -> None:
    """One-player answers: f(t), F(t), L, sd, D(s), E(s), all exact.

    \b
    f(t)  probability the game ends exactly on throw t; F(t) = f(1) + ... + f(t)
    L     expected number of throws; sd its standard deviation
    D(s)  fewest throws to finish from square s; E(s) expected throws left from s

    Example: ladders stats hasbro --throws 20
    """
    from solver.chain import build_chain, length_distribution, one_player_stats
    from solver.exact import fraction_to_decimal as dec
    from solver.exact import fraction_to_str as exact
    from solver.exact import sqrt_to_decimal
    chain = build_chain(open_board(board, rule, die))
    st = one_player_stats(chain)
    dist = length_distribution(chain, throws)
    sd_text = sqrt_to_decimal(st.variance, 20)
    data = {
        "expected_length": exact(st.expected_length),
        "expected_length_decimal": dec(st.expected_length, 20),
        "variance": exact(st.variance),
        "sd_decimal": sd_text,
        "min_throws": {str(s): v for s, v in st.min_throws.items()},
        "expected_remaining": {str(s): exact(v) for s, v in st.expected_remaining.items()},
        "distribution": [{"t": t, "f": exact(f), "F": exact(F)}
                         for t, (f, F) in enumerate(dist, start=1)],
    }
    lines = [chain.board.describe(), "",
             f"L  = {dec(st.expected_length, 12)} expected throws  (exact: "
             f"{_short(exact(st.expected_length))})",
             f"sd = {sd_text[:12]}   Var = {dec(st.variance, 6)}",
             f"D({chain.board.start}) = {st.min_throws[chain.board.start]} fewest throws", "",
             "square  D(s)  E(s)"]
    lines += [f"{s:6}  {st.min_throws[s]:4}  {dec(v, 6)}" for s, v in st.expected_remaining.items()]
    lines += ["", "   t  f(t)           F(t)"]
    lines += [f"{t:4}  {dec(f, 10)}   {dec(F, 10)}" for t, (f, F) in enumerate(dist, start=1)]
    emit(data, as_json, "\n".join(lines))


stats.epilog = EPILOG_BOARD


def _short(text: str, keep: int = 40) -> str:
    """Long exact fractions shortened for the human table (JSON keeps every digit)."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}...({len(text)} chars)"


def players_option(default: int = 2) -> Any:
    return click.option("--players", "-k", type=click.IntRange(1 if default == 1 else 2, 6),
                        default=default, show_default=True, help="Number of players (seats).")


@cli.command()
@board_options
@players_option()
@click.option("--moves", type=click.IntRange(min=1), default=None,
              help="Bounds after N throws per player.")
@click.option("--digits", type=click.IntRange(min=1), default=None,
              help="Smallest N whose lower and upper bounds agree to D decimals.")
@json_option
def bounds(board: str, rule: str | None, die: int | None, players: int, moves: int | None,
           digits: int | None, as_json: bool) -> None:
    """Exact Markov bounds lower(n) <= P <= upper(n) on the win probability of each seat.

    \b
    Two players:  lower(n) = 1/2 + 1/2 sum_{t<=n} f(t)^2
                  upper(n) = lower(n) + (1 - F(n))^2 / 2
    k players:    seat j: sum_{t<=n} f(t) (1-F(t))^(j-1) (1-F(t-1))^(k-j), gap (1-F(n))^k

    Example: ladders bounds hasbro --moves 500;  ladders bounds hasbro -k 3 --digits 100
    """
    from solver.bounds import bounds_to_digits, markov_bounds
    from solver.chain import build_chain
    from solver.exact import fraction_to_decimal as dec
    from solver.exact import fraction_to_str as exact
    if (moves is None) == (digits is None):
        raise click.UsageError("give exactly one of --moves N or --digits D")
    chain = build_chain(open_board(board, rule, die))
    t0 = time.perf_counter()
    b = markov_bounds(chain, players, moves) if moves else bounds_to_digits(chain, players, digits)
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
    if digits:
        lines.append(f"lower and upper agree to {digits} digits from n = {b.moves}")
    emit(data, as_json, "\n".join(lines))


bounds.epilog = EPILOG_BOARD


@cli.command()
@board_options
@players_option(default=1)
@click.option("--games", "-n", type=click.IntRange(min=2), required=True,
              help="Number of simulated games (races when --players > 1).")
@click.option("--seed", type=int, default=1960, show_default=True, help="Random seed.")
@click.option("--convergence", is_flag=True,
              help="Also print the error against N beside the exact value (N^-1/2 law).")
@json_option
def simulate(board: str, rule: str | None, die: int | None, players: int, games: int, seed: int,
             convergence: bool, as_json: bool) -> None:
    """Monte Carlo estimates with standard errors and 95% intervals (seeded, reproducible).

    One player: the mean game length. k players: each seat's win probability from
    simulated races; for two players also the diagonal-squares estimator built from
    one-player lengths (far smaller error for the same number of games).

    Example: ladders simulate hasbro --players 2 --games 100000 --convergence
    """
    import numpy as np

    from solver.chain import build_chain
    from solver.simulate import (diagonal_estimate, mean_estimate, race_winners, seat_estimates,
                                 simulate_lengths)
    chain = build_chain(open_board(board, rule, die))
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    lengths = simulate_lengths(chain, games * players, rng)
    data: dict[str, Any] = {"games": games, "players": players, "seed": seed}
    if players == 1:
        est = mean_estimate(lengths)
        data.update(estimate=est.value, stderr=est.stderr, ci95=list(est.ci95),
                    mean_length=est.value)
        lines = [f"{chain.board.name}: {games:,} one-player games (seed {seed})",
                 f"mean length {est.value:.4f} +- {est.stderr:.4f} (95% CI "
                 f"{est.ci95[0]:.4f} .. {est.ci95[1]:.4f})"]
    else:
        races = lengths.reshape(games, players)
        seats = seat_estimates(race_winners(races), players)
        data.update(estimate=seats[0].value, stderr=seats[0].stderr, ci95=list(seats[0].ci95),
                    seats=[{"seat": j + 1, "estimate": s.value, "stderr": s.stderr,
                            "ci95": list(s.ci95)} for j, s in enumerate(seats)])
        lines = [f"{chain.board.name}: {games:,} races of {players} players (seed {seed})"]
        lines += [f"seat {j + 1}: {s.value:.6f} +- {s.stderr:.6f} (95% CI {s.ci95[0]:.6f} .. "
                  f"{s.ci95[1]:.6f})" for j, s in enumerate(seats)]
        if players == 2:
            diag = diagonal_estimate(lengths)
            data["diagonal"] = {"estimate": diag.value, "stderr": diag.stderr,
                                "ci95": list(diag.ci95)}
            lines.append(f"diagonal squares from {lengths.size:,} one-player lengths: "
                         f"{diag.value:.8f} +- {diag.stderr:.8f}")
    data["seconds"] = round(time.perf_counter() - t0, 3)
    if convergence:
        table, exact_text = _convergence_table(chain, players, lengths)
        data["convergence"] = table
        data["exact_decimal"] = exact_text
        lines += ["", f"exact value {exact_text}", "        N  estimate        |error|     "
                  "stderr      |error|*sqrt(N)"]
        lines += [f"{r['n']:9,}  {r['estimate']:.10f}  {r['error']:.3e}  {r['stderr']:.3e}  "
                  f"{r['scaled_error']:.4f}" for r in table]
    emit(data, as_json, "\n".join(lines))


simulate.epilog = EPILOG_BOARD


def _convergence_table(chain: Any, players: int, lengths: Any) -> tuple[list[dict[str, Any]], str]:
    """Error of the estimate from the first N games, N = 100, 1000, ..., beside the exact value.

    The exact value is L for one player and, for races, seat 1's probability from Markov
    bounds that agree to 20 digits (exact to every digit shown).
    """
    from solver.bounds import bounds_to_digits
    from solver.chain import one_player_stats
    from solver.exact import fraction_to_decimal
    from solver.simulate import mean_estimate, race_winners, seat_estimates
    if players == 1:
        exact = one_player_stats(chain).expected_length
    else:
        exact = bounds_to_digits(chain, players, 20).lower[0]
    target = float(exact)
    games = lengths.size // players
    sizes = []
    n = 100
    while n < games:
        sizes.append(n)
        n *= 10
    sizes.append(games)
    rows = []
    for n in sizes:
        if players == 1:
            est = mean_estimate(lengths[:n])
        else:
            est = seat_estimates(race_winners(lengths[: n * players].reshape(n, players)), players)[0]
        err = abs(est.value - target)
        rows.append({"n": n, "estimate": est.value, "error": err, "stderr": est.stderr,
                     "scaled_error": err * n ** 0.5})
    return rows, fraction_to_decimal(exact, 20)


def cluster_options(func: Any) -> Any:
    """Where tasks run: ``--scheduler``, ``--scheduler-file``, ``--workers``."""
    func = click.option("--workers", type=click.IntRange(min=1), default=None,
                        help="Worker processes of the local Dask cluster [default: cores].")(func)
    func = click.option("--scheduler-file", type=click.Path(dir_okay=False), default=None,
                        help="Scheduler file of an existing Dask cluster.")(func)
    return click.option("--scheduler", default=None, metavar="ADDR",
                        help="Existing Dask scheduler, e.g. tcp://10.0.0.5:8786.")(func)


def make_spec(scheduler: str | None, scheduler_file: str | None, workers: int | None) -> Any:
    from cluster.executor import ClusterSpec
    if scheduler and scheduler_file:
        raise click.UsageError("give --scheduler or --scheduler-file, not both")
    if workers and (scheduler or scheduler_file):
        raise click.UsageError("--workers sizes the local cluster; a remote cluster has its own workers")
    return ClusterSpec(scheduler=scheduler, scheduler_file=scheduler_file, workers=workers)


@cli.command()
@board_options
@players_option()
@click.option("--engine", type=click.Choice(["modular", "elimination", "crt"]), default="modular",
              show_default=True,
              help="Exact engine: modular = p-adic lifting in this process, certified (seconds "
              "on the full board); elimination = column-block fraction-free elimination as Dask "
              "tasks; crt = batches of primes as Dask tasks, Chinese remaindering, certified.")
@click.option("--executor", type=click.Choice(["auto", "serial", "dask"]), default="auto",
              show_default=True, help="elimination and crt: where the tasks run; auto = in "
              "memory for small problems, else a Dask cluster.")
@click.option("--seed", type=int, default=None,
              help="modular and crt: seed of the random primes (default: fresh ones).")
@click.option("--checkpoint", type=click.Path(file_okay=False), default=None,
              help="Run store folder (Zarr): the solve survives interruption, see 'ladders resume'.")
@cluster_options
@click.option("--block-size", type=click.IntRange(min=1), default=None,
              help="Pivots per column block [default: blocks of equal symbolic cost, sized to the problem].")
@click.option("--order", type=click.Choice(["auto", "far", "labels"]), default="auto",
              show_default=True, help="Pivot order: far = farthest states first, labels = "
              "the published right-to-left order, auto = whichever needs fewer updates.")
@click.option("--exact", is_flag=True,
              help="Print every seat's exact fraction in full (thousands of digits on big boards).")
@click.option("--save-every", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="modular with --checkpoint: seconds between saved lifting states [default: 10].")
@click.option("--batch-primes", type=click.IntRange(min=1), default=None,
              help="crt: primes per task [default: 32, about 5 s of work on hasbro].")
@click.option("--table", "table_path", type=click.Path(dir_okay=False), default=None,
              help="Two players: also write every P(a,b) as JSON lines (.gz to compress); "
              "modular and crt engines.")
@json_option
def solve(board: str, rule: str | None, die: int | None, players: int, engine: str, executor: str,
          seed: int | None, checkpoint: str | None, scheduler: str | None,
          scheduler_file: str | None, workers: int | None, block_size: int | None,
          order: str | None, exact: bool, save_every: float | None, batch_primes: int | None,
          table_path: str | None, as_json: bool) -> int:
    """Exact win probability of every seat, certified and checked against the bounds.

    The race becomes a sparse integer system (two players: P(a,b), the published
    formulation; more: the round formulation). The default modular engine factors it
    once modulo a word-size prime, lifts the solution p-adically, reconstructs the
    fractions and certifies them: A x = b is checked exactly for every unknown.

    The elimination engine eliminates fraction-free in column blocks with the wanted
    unknown last; the crt engine solves modulo batches of primes. Both run as Dask
    tasks on a local cluster (or --scheduler) and checkpoint into --checkpoint DIR, so
    that a crash or Ctrl-C loses at most the tasks in flight; 'ladders resume DIR'
    continues.

    \b
    Examples:
      ladders solve hasbro --exact                        # all 4,453 digits in seconds
      ladders solve hasbro --table p.jsonl.gz             # ... and all 6,561 P(a,b)
      ladders solve tiny10 --players 3
      ladders solve hasbro --engine elimination --checkpoint runs/hasbro --workers 2
      ladders solve hasbro --engine crt --scheduler tcp://10.0.0.5:8786 --checkpoint /shared/h
    """
    from cluster.run import Problem
    from cluster.run import solve as run_solve
    b = open_board(board, rule, die)
    spec = make_spec(scheduler, scheduler_file, workers)
    if engine == "modular" and (spec.remote or workers or executor != "auto"):
        raise click.UsageError("the modular engine runs in this process: --scheduler, --workers "
                               "and --executor are for --engine elimination or crt")
    if engine != "elimination" and (block_size or order != "auto"):
        raise click.UsageError("--block-size and --order are for --engine elimination")
    if batch_primes and engine != "crt":
        raise click.UsageError("--batch-primes is for --engine crt")
    if save_every is not None and (engine != "modular" or not checkpoint):
        raise click.UsageError("--save-every is for --engine modular with --checkpoint")
    if table_path:
        if players != 2:
            raise click.UsageError("--table is for two players")
        if engine == "elimination":
            raise click.UsageError("--table needs every unknown: use --engine modular (the default) or crt")
    problem = Problem.build(b, players)
    click.echo(f"solving {problem.system.description}: {problem.system.size:,} unknowns, "
               f"{problem.system.nnz:,} nonzeros ({engine} engine)", err=True)
    with _interruptible() as stop, _task_bar(engine) as bar:
        outcome = run_solve(problem, engine=engine, checkpoint=checkpoint, spec=spec,
                            executor=executor, block_size=block_size, order=order,
                            table=bool(table_path), seed=seed, batch_primes=batch_primes,
                            save_every=save_every, progress=bar, should_stop=stop)
    code = _report(outcome, as_json, exact)
    if table_path and outcome.table is not None:
        _write_table(Path(table_path), outcome.table)
        click.echo(f"table: {len(outcome.table):,} values of P(a,b) written to {table_path}", err=True)
    return code


solve.epilog = EPILOG_BOARD


@cli.command()
@board_options
@players_option()
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Workers to size the crt engine for (per-worker figures are per core).")
@json_option
def plan(board: str, rule: str | None, die: int | None, players: int, workers: int,
         as_json: bool) -> None:
    """Dry run: how big an exact race is and what each engine would cost, before solving.

    Unknowns are exact; nonzeros are counted (small systems) or estimated from sampled
    rows; the digits of the answer come from a measured fit (see solver/estimate.py).
    Systems up to 20,000 unknowns are factored once modulo a prime to measure the fill
    and the factorization time; bigger ones get lower bounds (no fill assumed).

    \b
    Examples:
      ladders plan hasbro --players 3
      ladders plan hasbro --players 2 --json
    """
    from solver.chain import build_chain
    from solver.estimate import (NS_PER_NONZERO, crt_seconds, modular_bytes, modular_seconds,
                                 race_size)
    chain = build_chain(open_board(board, rule, die))
    size = race_size(chain, players)
    lu_nnz, factor_s, measured = size.nonzeros, size.nonzeros * NS_PER_NONZERO * 1e-9 * 4, False
    nonzeros = size.nonzeros
    if size.unknowns <= 20_000:
        import random

        from solver.dixon import Lifter
        from solver.plan import pivot_order
        from solver.race import race_system
        from solver.system import LinearSystem
        system = race_system(chain, players)
        nonzeros = system.nnz
        order = pivot_order(system, "labels")
        # load the compiled kernels on a 1 x 1 system, so the timing below is the factorization
        Lifter.factor(LinearSystem.from_rows([[(0, 1)]], [0], [(0,)], 0, "warm-up"), [0],
                      random.Random(0))
        t0 = time.perf_counter()
        lifter = Lifter.factor(system, order, random.Random(1))
        factor_s, lu_nnz, measured = time.perf_counter() - t0, lifter.lu.nnz, True
    secs = modular_seconds(size, lu_nnz, factor_s)
    mem = modular_bytes(size, lu_nnz)
    crt = crt_seconds(size, factor_s, workers)
    day, memory = 86_400.0, 20e9  # a day of wall time; what a 24 GiB machine can give
    need = next((w for w in (16, 64, 256, 1024) if crt_seconds(size, factor_s, w) <= day), None)
    if mem > memory:
        verdict = (f"out of reach: the certificate alone needs {mem / 1e9:,.0f} GB "
                   "on one machine")
    elif not measured:
        verdict = ("not decided: the fill of L + U (not measured for a system this size) "
                   "multiplies the lower bounds above; see docs/frontier.md")
    elif secs <= day:
        verdict = "one machine: the modular engine"
    elif need:
        verdict = f"a cluster of {need} workers: the crt engine, within a day"
    else:
        verdict = "out of reach: more than a day even on 1,024 workers"
    bound = "" if measured else "at least "
    data = {"players": players, "formulation": size.formulation, "states": size.states,
            "recurrent_states": size.recurrent, "unknowns": size.unknowns, "nonzeros": nonzeros,
            "nonzeros_exact": measured or size.nonzeros_exact, "digits_estimate": size.digits,
            "lu_nonzeros": lu_nnz, "lu_measured": measured,
            "factor_seconds": round(factor_s, 3),
            "modular": {"steps": size.steps, "seconds": round(secs, 1), "bytes": mem,
                        "lower_bound": not measured},
            "crt": {"primes": size.primes, "workers": workers, "seconds": round(crt, 1),
                    "lower_bound": not measured},
            "verdict": verdict}

    def human(seconds: float) -> str:
        for unit, width in (("days", day), ("h", 3600.0), ("min", 60.0)):
            if seconds >= width:
                return f"{seconds / width:,.1f} {unit}"
        return f"{seconds:.1f} s"
    lines = [f"{chain.board.name}, {players} players ({size.formulation} formulation)",
             f"  one player    {size.states} squares, {size.recurrent} of them can recur",
             f"  unknowns      {size.unknowns:,}",
             f"  nonzeros      {'' if data['nonzeros_exact'] else '~'}{nonzeros:,}",
             f"  digits        ~{size.digits:,} over ~{size.digits:,} (measured fit, within a factor of 3)",
             f"  L + U         {bound}{lu_nnz:,} nonzeros"
             + (f" (factored mod p in {factor_s:.2f} s)" if measured else " (too big to factor for a plan)"),
             f"  modular       {size.steps:,} lifting steps: {bound}{human(secs)} on one core, "
             f"{bound}{mem / 1e9:,.1f} GB",
             f"  crt           {size.primes:,} primes, one LU each: {bound}{human(crt)} on {workers} workers",
             f"  verdict       {verdict}"]
    emit(data, as_json, "\n".join(lines))


plan.epilog = EPILOG_BOARD


@cli.command()
@click.argument("store", type=click.Path(file_okay=False))
@cluster_options
@click.option("--executor", type=click.Choice(["serial", "dask"]), default=None,
              help="Override the executor the run was started with.")
@json_option
def resume(store: str, scheduler: str | None, scheduler_file: str | None, workers: int | None,
           executor: str | None, as_json: bool) -> int:
    """Continue an interrupted solve from its last committed manifest.

    Example: ladders resume runs/hasbro --workers 2
    """
    from cluster.run import resume as run_resume
    spec = make_spec(scheduler, scheduler_file, workers)
    from checkpoints.store import RunStore
    engine = RunStore.open(store).engine
    with _interruptible() as stop, _task_bar(engine) as bar:
        outcome = run_resume(store, spec=spec, executor=executor, progress=bar, should_stop=stop)
    return _report(outcome, as_json)


@cli.command()
@click.argument("store", type=click.Path(file_okay=False))
@json_option
def status(store: str, as_json: bool) -> None:
    """State of a run store, read from its files (no cluster needed).

    Example: ladders status runs/hasbro
    """
    from cluster.run import status as run_status
    st = run_status(store)
    b = st["problem"]["board"]
    if st["engine"] == "elimination":
        done = (f"{st['tasks_done']}/{st['tasks_total']} tasks, "
                f"{st['blocks_done']}/{st['blocks_total']} blocks")
        digits = f"up to {st['digits_so_far']:,} in the rows so far"
    elif st["engine"] == "crt":
        done = f"{st['batches_done']} batches ({st['primes_done']:,} primes)"
        digits = f"modulus of {st['digits_so_far']:,} digits so far"
    else:
        done = ("solved" if st["tasks_done"] else
                f"right-hand side {st['column'] + 1}: {st['steps']:,} lifting steps "
                f"({st['columns_done']} certified)")
        digits = f"modulus of {st['digits_so_far']:,} digits so far"
    lines = [f"store     {st['store']}",
             f"problem   {b['name']}, {st['problem']['players']} players, {st['unknowns']:,} unknowns",
             f"engine    {st['engine']}",
             f"state     {st['state']}",
             f"progress  {done}",
             f"digits    {digits}",
             f"elapsed   {st['elapsed_seconds']:.1f} s of solving",
             f"size      {st['store_bytes'] / 1e6:.1f} MB"]
    if st["result"]:
        lines.append(f"answer    seat 1 = {_short(st['result']['seats'][0])}")
    elif st["state"].startswith("interrupted"):
        lines.append(f"resume    ladders resume {st['store']}")
    emit(st, as_json, "\n".join(lines))


@cli.command()
@click.argument("store", type=click.Path(file_okay=False))
@click.option("--primes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Independent solves modulo random 61-bit primes.")
@click.option("--cross/--no-cross", default=None,
              help="Solve again with the other kind of engine and compare: modular for an "
              "elimination run (seconds), elimination for a modular or crt run [default: "
              "always for elimination runs, for the others only where elimination is quick].")
@json_option
def verify(store: str, primes: int, cross: bool | None, as_json: bool) -> None:
    """Check a finished run again: Markov bounds, modular solves and the other engine.

    Example: ladders verify runs/hasbro --primes 3
    """
    from cluster.run import verify_stored
    from solver.exact import fraction_to_decimal
    t0 = time.perf_counter()
    res = verify_stored(store, primes=primes, cross=cross)
    rep = res["report"]
    data = {"seats": [{"seat": j + 1, "decimal": fraction_to_decimal(p, 50)}
                      for j, p in enumerate(res["seats"])], "engine": res["engine"],
            "verified": rep, "seconds": round(time.perf_counter() - t0, 2)}
    lines = [f"seat 1 = {data['seats'][0]['decimal']}... ({res['engine']} engine)"]
    lines += verification_lines(rep)
    emit(data, as_json, "\n".join(lines))
    if not rep["passed"]:
        raise click.ClickException(f"verification of {store} failed")


class _interruptible:
    """SIGINT/SIGTERM set a flag that the driver polls; it then stops submitting, keeps
    its committed manifest, and the command exits with ``EXIT_INTERRUPTED``."""

    def __enter__(self) -> Any:
        import signal
        self.flag = False
        self.old: dict[int, Any] = {}

        def handler(signum: int, frame: Any) -> None:
            self.flag = True
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.old[sig] = signal.signal(sig, handler)
        return lambda: self.flag

    def __exit__(self, *exc: Any) -> None:
        import signal
        for sig, old in self.old.items():
            signal.signal(sig, old)


class _task_bar:
    """tqdm bar on stderr: tasks (or lifting steps) done, elapsed, estimate, digits so far."""

    UNITS = {"elimination": ("tasks", "task"), "crt": ("batches", "batch"),
             "modular": ("lifting", "step")}

    def __init__(self, engine: str = "elimination") -> None:
        self.desc, self.unit = self.UNITS.get(engine, self.UNITS["elimination"])

    def __enter__(self) -> Any:
        self.bar = None

        def step(done: int, total: int, digits: int) -> None:
            if self.bar is None:
                from tqdm import tqdm
                self.bar = tqdm(total=total or None, desc=self.desc, unit=self.unit,
                                file=sys.stderr, mininterval=0.5, dynamic_ncols=True)
            if digits:
                self.bar.set_postfix_str(f"{digits:,} digits", refresh=False)
            self.bar.update(done - self.bar.n)
        return step

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()


def _report(outcome: Any, as_json: bool, exact: bool = False) -> int:
    """Print a solve's result; an interrupted solve prints how to resume."""
    from cluster.run import EXIT_INTERRUPTED
    from solver.exact import digit_counts, fraction_to_decimal, fraction_to_str
    if outcome.interrupted:
        if as_json:
            click.echo(json.dumps({"interrupted": True, "store": str(outcome.store),
                                   "resume": f"ladders resume {outcome.store}"}))
        unit = "lifting steps" if outcome.engine == "modular" else "tasks"
        where = (f"the store is consistent. Resume with: ladders resume {outcome.store}"
                 if outcome.store else "nothing was kept (no --checkpoint)")
        click.echo(f"interrupted after {outcome.tasks_run} {unit}; {where}", err=True)
        return EXIT_INTERRUPTED
    seats = outcome.seats
    verified = outcome.verified
    data: dict[str, Any] = {
        "players": outcome.problem.players,
        "seats": [{"seat": j + 1, "exact": fraction_to_str(p), "decimal": fraction_to_decimal(p, 50)}
                  for j, p in enumerate(seats)],
        "digits": digit_counts(seats[0]),
        "engine": outcome.engine,
        "executor": outcome.executor,
        "seconds": round(outcome.seconds, 3),
        "startup_seconds": round(outcome.startup_seconds, 3),
        "verified": verified,
        **({"details": outcome.details} if outcome.details else {}),
    }
    if outcome.store is not None:
        data["store"] = {"path": str(outcome.store), "bytes": outcome.store_bytes,
                         "tasks_run": outcome.tasks_run, "tasks_total": outcome.tasks_total}
    dg = data["digits"]
    lines = [f"{outcome.problem.board.name}, {outcome.problem.players} players "
             f"(exact, {outcome.engine} engine, {outcome.seconds:.2f} s):"]
    lines += [f"  seat {s['seat']}: {s['decimal']}" for s in data["seats"]]
    lines.append(f"seat 1 exactly: a fraction of {dg['numerator']:,} digits over {dg['denominator']:,}")
    if exact:
        lines += [f"seat {s['seat']} = {s['exact']}" for s in data["seats"]]
    else:
        lines.append(f"seat 1 = {_short(data['seats'][0]['exact'])}   (--exact prints every digit)")
    lines += ["verified:"] + [f"  {line}" for line in verification_lines(verified)]
    emit(data, as_json, "\n".join(lines))
    if not verified["passed"]:
        raise click.ClickException("verification FAILED: the result is not trustworthy")
    return 0


def verification_lines(report: dict[str, Any]) -> list[str]:
    """One line per check that ran (see ``cluster.run.verify_answer``), then the verdict."""
    def mark(ok: bool) -> str:
        return "PASS" if ok else "FAIL"
    lines = []
    b = report["bounds"]
    lines.append(f"bounds       inside the Markov bounds after {b['moves']} moves, {b['digits']} "
                 f"digits agree: {mark(b['passed'])}")
    if "modular" in report:
        m = report["modular"]
        lines.append("modular      " + ", ".join(f"p={x['prime']} {'agrees' if x['agree'] else 'DISAGREES'}"
                                                for x in m["primes"]) + f": {mark(m['passed'])}")
    if "certificate" in report:
        c = report["certificate"]
        lines.append(f"certificate  {c['what']}, D of {c['denominator_digits']:,} digits: "
                     f"{mark(c['passed'])}")
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


def _write_table(path: Path, table: dict[tuple[int, int], Any]) -> None:
    """P(a,b) as JSON lines, gzip-compressed for ``.gz``; written atomically."""
    from solver.exact import fraction_to_str
    text = "".join(json.dumps({"a": a, "b": b, "exact": fraction_to_str(v)}) + "\n"
                   for (a, b), v in sorted(table.items()))
    payload = text.encode()
    if path.suffix == ".gz":
        # level 1: decimal digits compress to ~50% at any level, and level 9 takes 5x longer
        payload = gzip.compress(payload, compresslevel=1, mtime=0)
    write_atomically(path, payload)


@cli.command()
@click.option("--a", "coins_a", type=click.IntRange(min=0), default=4, show_default=True,
              help="A's starting coins.")
@click.option("--b", "coins_b", type=click.IntRange(min=0), default=4, show_default=True,
              help="B's starting coins.")
@click.option("--pot", type=click.IntRange(min=0), default=2, show_default=True,
              help="Coins in the pot at the start.")
@click.option("--cycles", type=click.IntRange(min=1), default=60, show_default=True,
              help="Distribution P(N = n) of the number of cycles for n = 1..CYCLES.")
@json_option
def coins(coins_a: int, coins_b: int, pot: int, cycles: int, as_json: bool) -> None:
    """Another Game (coins and a die), exact.

    \b
    A and B alternate (A first), one die each turn: 1 nothing; 2 take the pot;
    3 take half the pot (rounded down); 4-6 pay one coin into the pot, and a player
    who must pay with no coin loses. A cycle is A's turn then B's.

    Example: ladders coins --a 4 --b 4 --pot 2
    """
    from solver.coins import CoinGame, solve_coins
    from solver.exact import fraction_to_decimal as dec
    from solver.exact import fraction_to_str as exact
    game = CoinGame(coins_a, coins_b, pot)
    ans = solve_coins(game, cycles)
    e = ans.expected_cycles[ans.start]
    wa = ans.win_a[ans.start]
    data = {
        "expected_cycles": exact(e),
        "expected_cycles_decimal": dec(e, 20),
        "win_a": exact(wa),
        "win_b": exact(1 - wa),
        "by_start": {f"A{a}B{b}": exact(v) for (a, b), v in sorted(ans.expected_cycles.items())},
        "final_states": {k: exact(v) for k, v in ans.final_states.items()},
        "distribution": [{"n": n, "p": exact(p)} for n, p in enumerate(ans.distribution, 1)],
    }
    lines = [f"Another Game from A{coins_a}B{coins_b}, pot {pot} ({game.total} coins), A first",
             f"expected cycles  {dec(e, 12)}",
             f"A wins           {dec(wa, 12)}",
             f"B wins           {dec(1 - wa, 12)}", "",
             "expected cycles by start (A to move; rows A's coins, columns B's coins):",
             "      " + "".join(f"B{b:<7}" for b in range(game.total + 1))]
    for a in range(game.total + 1):
        cells = [f"{float(ans.expected_cycles[(a, b)]):<8.2f}" if (a, b) in ans.expected_cycles
                 else " " * 8 for b in range(game.total + 1)]
        lines.append(f"A{a:<4} " + "".join(cells))
    lines += ["", "most likely final states:"]
    top = sorted(ans.final_states.items(), key=lambda kv: -kv[1])[:6]
    lines += [f"  {k:28} {dec(v, 6)}" for k, v in top]
    emit(data, as_json, "\n".join(lines))


PLOT_KINDS = ("board", "lengths", "diagonal", "convergence", "coins")

# Which of the kind-specific options each KIND reads: any other one given is refused,
# not silently ignored.
_PLOT_OPTIONS = {
    "board": {"rule", "die"},
    "lengths": {"rule", "die", "throws", "games", "seed"},
    "diagonal": {"rule", "die", "throws"},
    "convergence": {"rule", "die", "throws", "games", "seed", "players"},
    "coins": {"coins_a", "coins_b", "pot"},
}


class _PlotSetupError(click.ClickException):
    """A missing optional dependency: one line, exit 2 like other bad setups."""

    exit_code = EXIT_BAD_INPUT


@cli.command()
@click.argument("kind", type=click.Choice(PLOT_KINDS))
@click.argument("board", required=False)
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="Picture file; the format comes from the suffix: .png or .svg.")
@click.option("--rule", type=click.Choice(["stay", "bounce", "pass"]), default=None,
              help="Override the overshoot rule.")
@click.option("--die", type=click.IntRange(min=1), default=None,
              help="Override the die size (faces 1..N).")
@click.option("--throws", type=click.IntRange(min=1), default=None,
              help="lengths: t = 1..THROWS [default: until F(t) >= 0.99]; diagonal: strips "
              "drawn [default: 40]; convergence: moves [default: until 16 digits agree].")
@click.option("--games", "-n", type=click.IntRange(min=2), default=None,
              help="lengths: also simulate N games, bars beside the exact ones; "
              "convergence: N simulated races [default: 100000].")
@click.option("--seed", type=int, default=None, help="Random seed of --games [default: 1960].")
@click.option("--players", "-k", type=click.IntRange(2, 6), default=None,
              help="convergence: number of players (seats) [default: 2].")
@click.option("--a", "coins_a", type=click.IntRange(min=0), default=None,
              help="coins: A's starting coins [default: 4].")
@click.option("--b", "coins_b", type=click.IntRange(min=0), default=None,
              help="coins: B's starting coins [default: 4].")
@click.option("--pot", type=click.IntRange(min=0), default=None,
              help="coins: coins in the pot at the start [default: 2].")
@click.option("--dpi", type=click.IntRange(50, 600), default=100, show_default=True,
              help="Resolution of a PNG (dots per inch).")
@click.option("--palette", is_flag=True,
              help="PNG with a 256-colour palette: looks the same, about a third of the bytes.")
@json_option
def plot(kind: str, board: str | None, output: str, rule: str | None, die: int | None,
         throws: int | None, games: int | None, seed: int | None, players: int | None,
         coins_a: int | None, coins_b: int | None, pot: int | None, dpi: int, palette: bool,
         as_json: bool) -> None:
    """Draw a picture of the answers (needs matplotlib: pip install 'ladders[plot]').

    \b
    board        the board, squares shaded by E(s) with D(s), ladders and chutes as arrows
    lengths      f(t) as bars, F(t) on a second axis, mean and sd; --games adds simulation
    diagonal     the diagonal squares of the first player's advantage (two players)
    convergence  Markov bounds against moves, Monte Carlo error against N (N^-1/2 line)
    coins        Another Game: expected cycles from every start (takes no BOARD)

    \b
    Examples:
      ladders plot board hasbro -o board.png
      ladders plot lengths hasbro --games 100000 -o lengths.svg
      ladders plot convergence hasbro --players 3 -o convergence.png
      ladders plot coins --a 4 --b 4 --pot 2 -o coins.png
    """
    given = {name for name, value in (("rule", rule), ("die", die), ("throws", throws),
                                      ("games", games), ("seed", seed), ("players", players),
                                      ("coins_a", coins_a), ("coins_b", coins_b), ("pot", pot))
             if value is not None}
    stray = sorted(given - _PLOT_OPTIONS[kind])
    if stray:
        names = ", ".join("--" + {"coins_a": "a", "coins_b": "b"}.get(s, s) for s in stray)
        raise click.UsageError(f"plot {kind} does not take {names}")
    if kind == "coins" and board is not None:
        raise click.UsageError("plot coins takes no BOARD (use --a, --b, --pot)")
    if kind != "coins" and board is None:
        raise click.UsageError(f"plot {kind} needs a BOARD, e.g. ladders plot {kind} hasbro "
                               f"-o {kind}.png")
    from cluster import plots
    try:
        plots.require_matplotlib()
    except plots.MatplotlibMissing as exc:
        raise _PlotSetupError(str(exc)) from None
    try:
        fmt = plots.picture_format(output)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if palette and fmt != "png":
        raise click.UsageError("--palette is for .png pictures")
    t0 = time.perf_counter()
    name = None
    if kind == "coins":
        from solver.coins import CoinGame
        game = CoinGame(4 if coins_a is None else coins_a, 4 if coins_b is None else coins_b,
                        2 if pot is None else pot)
        fig = plots.plot_coins(game)
    else:
        b = open_board(board, rule, die)
        name = b.name
        seed = 1960 if seed is None else seed
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


def main() -> None:
    """Console entry point."""
    cli.main(prog_name="ladders")


if __name__ == "__main__":
    main()
