"""``ladders simulate``: Monte Carlo estimates beside the exact values."""

from __future__ import annotations

import time
from typing import Any

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option, open_board,
                                       players_option, task_bar)


@click.command()
@board_options
@players_option(default=1)
@click.option("--games", "-n", type=click.IntRange(min=2), required=True,
              help="Number of simulated games (races when --players > 1); games x players at "
              "most 1,000,000,000 (about half an hour, in chunks of bounded memory).")
@click.option("--seed", type=click.IntRange(min=0), default=1960, show_default=True, help="Random seed.")
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
    from ladders.solver.games.chain import build_chain
    from ladders.solver.checks.simulate import check_games, decade_sizes, error_row, simulate_tally
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
        from ladders.solver.games.chain import one_player_stats
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


simulate.epilog = EPILOG_BOARD
