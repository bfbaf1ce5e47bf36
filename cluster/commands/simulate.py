"""``ladders simulate``: Monte Carlo estimates beside the exact values."""

from __future__ import annotations

import time
from typing import Any

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, epilog_chains,
                                       formats_taking, json_option, meet_option, open_board,
                                       task_bar)


@click.command()
@board_options
@click.option("--players", "-k", type=click.IntRange(1, 6), default=None,
              help="Number of players (seats) [default: 1; 2 on a board whose pieces meet].")
@click.option("--games", "-n", type=click.IntRange(min=2), required=True,
              help="Number of simulated games (races when --players > 1); games x players at "
              "most 1,000,000,000 (about half an hour, in chunks of bounded memory).")
@click.option("--seed", type=click.IntRange(min=0), default=1960, show_default=True, help="Random seed.")
@click.option("--convergence", is_flag=True,
              help="Also print the error against N beside the exact value (N^-1/2 law).")
@meet_option
@click.option("--target", metavar="LABEL", default=None,
              help="Chain files: the probability of reaching LABEL.")
@click.option("--properties", metavar="FILE", default=None,
              help=f"Chain files ({formats_taking('properties')}): "
              "a properties file.")
@click.option("--constants", metavar="N=16,MAX=2", default=None,
              help=f"Chain files ({formats_taking('constants')}): "
              "values of the open constants.")
@json_option
def simulate(board: str, rule: str | None, die: int | None, players: int | None, games: int, seed: int,
             convergence: bool, meet: str | None, target: str | None, properties: str | None,
             constants: str | None, as_json: bool) -> None:
    """Monte Carlo estimates with standard errors and 95% intervals (seeded, reproducible).

    One player: the mean game length. k players: each seat's win probability from
    simulated races; for two players also the diagonal-squares estimator built from
    one-player lengths (far smaller error for the same number of games). A chain file,
    or a board whose pieces meet (--meet bump): walks of the chain from its start, each
    answer's estimate (where it ends, the expected steps; --target, --properties).

    \b
    Examples:
      ladders simulate hasbro --players 2 --games 100000 --convergence
      ladders simulate hasbro -k 2 --meet bump --games 100000
      ladders simulate docs/examples/ruin.toml --games 100000
    """
    from ladders.cluster.commands.solve import chain_problems
    from ladders.solver.games.chain import build_chain
    from ladders.solver.checks.simulate import check_games, decade_sizes, error_row, simulate_tally
    # a chain file, or pieces that meet: one joint chain of as many pieces as --players
    # says (a race of two by default: one piece meets no other), walked whole (not
    # lumped: the games are a check that trusts no solver's work)
    asked = chain_problems(board, rule, die, players or 2,
                           meet, target, properties, constants, lump="off")
    if asked is not None:
        problems, refused = asked
        # a question over a fixed number of steps is stepped exactly ('ladders solve'),
        # not walked: refused here by itself, like any other property
        for problem in problems:
            if problem.question.stepped:
                refused += (f"{problem.question.describe()}: a question over a fixed number of "
                            "steps; 'ladders solve' steps it exactly",)
        problems = [p for p in problems if not p.question.stepped]
        for line in refused:
            click.echo(f"ladders: refused: {line}", err=True)
        if not problems:
            raise click.UsageError("no question of this file can be simulated")
        if convergence:
            raise click.UsageError("--convergence is for races of pieces that never meet")
        return simulate_chains(problems, games, seed, as_json)
    players = players or 1
    chain = build_chain(open_board(board, rule, die))
    check_games(games, players)
    t0 = time.perf_counter()
    with task_bar(("games" if players == 1 else "races", "game" if players == 1 else "race")) as bar:
        tally, prefixes = simulate_tally(chain, players, games, seed,
                                         decade_sizes(games) if convergence else (),
                                         progress=lambda done, total: bar(done, total, 0))
    data: dict[str, Any] = {"games": games, "players": players, "seed": seed}
    if players == 1:
        est = tally.mean()
        data.update(estimate=est.value, stderr=est.stderr, ci95=list(est.ci95),
                    mean_length=est.value)
        lines = [f"{chain.board.name}: {games:,} one-player games (seed {seed})",
                 f"mean length {est.value:.4f} +- {est.stderr:.4f} (95% CI "
                 f"{est.ci95[0]:.4f} .. {est.ci95[1]:.4f})"]
    else:
        seats = tally.seats()
        data.update(estimate=seats[0].value, stderr=seats[0].stderr, ci95=list(seats[0].ci95),
                    seats=[{"seat": j + 1, "estimate": s.value, "stderr": s.stderr,
                            "ci95": list(s.ci95)} for j, s in enumerate(seats)])
        lines = [f"{chain.board.name}: {games:,} races of {players} players (seed {seed})"]
        lines += [f"seat {j + 1}: {s.value:.6f} +- {s.stderr:.6f} (95% CI {s.ci95[0]:.6f} .. "
                  f"{s.ci95[1]:.6f})" for j, s in enumerate(seats)]
        if players == 2:
            diag = tally.diagonal()
            data["diagonal"] = {"estimate": diag.value, "stderr": diag.stderr,
                                "ci95": list(diag.ci95)}
            lines.append(f"diagonal squares from {2 * games:,} one-player lengths: "
                         f"{diag.value:.8f} +- {diag.stderr:.8f}")
    data["seconds"] = round(time.perf_counter() - t0, 3)
    if convergence:
        from ladders.solver.checks.bounds import bounds_to_digits
        from ladders.solver.exact import fraction_to_decimal
        from ladders.solver.answers import one_player_stats
        # the exact value: L, or seat 1 from bounds that agree to 20 digits (every digit shown)
        exact = (one_player_stats(chain).expected_length if players == 1
                 else bounds_to_digits(chain, players, 20).lower[0])
        exact_text = fraction_to_decimal(exact, 20)
        table = [{k: r[k] for k in ("n", "estimate", "error", "stderr", "scaled_error")}
                 for r in (error_row(prefixes[n], float(exact)) for n in decade_sizes(games))]
        data["convergence"] = table
        data["exact_decimal"] = exact_text
        lines += ["", f"exact value {exact_text}", "        N  estimate        |error|     "
                  "stderr      |error|*sqrt(N)"]
        lines += [f"{r['n']:9,}  {r['estimate']:.10f}  {r['error']:.3e}  {r['stderr']:.3e}  "
                  f"{r['scaled_error']:.4f}" for r in table]
    emit(data, as_json, "\n".join(lines))


simulate.epilog = EPILOG_BOARD + " " + epilog_chains()


def simulate_chains(problems: list[Any], games: int, seed: int, as_json: bool) -> None:
    """Walks of each chain question from its start: every probability's share of the
    walks and the expectation's mean, with standard errors (``Infinity`` where a walk
    missed the target)."""
    import math

    from ladders.solver.checks.chain_bounds import question_targets
    from ladders.solver.checks.simulate_chain import simulate_chain
    t0 = time.perf_counter()
    chain = problems[0].chain
    results = []
    lines = [f"{chain.name}: {games:,} walks a question (seed {seed})"]
    for problem in problems:
        targets = question_targets(chain, problem.question, problem.plan.names)
        tally = simulate_chain(chain, problem.question, problem.plan, games, seed,
                               targets=targets)
        n = tally.walks
        answers: dict[str, Any] = {}
        for k, (name, _) in enumerate(targets.slots):
            p = int(tally.ended[k]) / n
            answers[name] = {"estimate": p, "stderr": math.sqrt(p * (1 - p) / n)}
        if targets.expectation is not None:
            mean = tally.reward_sum / n
            var = max(tally.reward_squares / n - mean * mean, 0.0) * n / (n - 1)
            answers[targets.expectation] = ({"estimate": "Infinity", "stderr": None} if tally.missed
                                            else {"estimate": mean, "stderr": math.sqrt(var / n)})
        lines.append(f"{problem.question.describe()}:")
        for name, a in answers.items():
            shown = (a["estimate"] if a["stderr"] is None else
                     f"{a['estimate']:.6f} +- {a['stderr']:.6f}")
            lines.append(f"  {name} = {shown}")
        if tally.unfinished:
            lines.append(f"  ({tally.unfinished:,} walks unfinished"
                         + (f": {tally.stopped})" if tally.stopped else ")"))
        results.append({"question": problem.question.describe(), "walks": n,
                        "unfinished": tally.unfinished, "missed": tally.missed,
                        "answers": answers})
    emit({"chain": chain.name, "seed": seed, "results": results,
          "seconds": round(time.perf_counter() - t0, 3)}, as_json, "\n".join(lines))
