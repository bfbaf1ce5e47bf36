"""``ladders plan``: how big an exact race is and what each engine would cost."""

from __future__ import annotations

import click

from ladders.cluster.commands import (EPILOG_BOARD, board_options, emit, json_option, open_board,
                                       players_option)


@click.command()
@board_options
@players_option()
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Workers to size the crt engine for (per-worker figures are per core).")
@json_option
def plan(board: str, rule: str | None, die: int | None, players: int, workers: int,
         as_json: bool) -> None:
    """Dry run: how big an exact race is and what each engine would cost, before solving.

    Unknowns are exact; nonzeros are counted (small systems) or estimated from sampled
    rows; the digits of the answer come from a measured fit (see
    ladders/solver/checks/estimate.py). Systems up to 20,000 unknowns that are quick to
    build (5 million terms) are factored once modulo a prime to measure the fill and
    the factorization time; the others get lower bounds (no fill assumed).

    \b
    Examples:
      ladders plan hasbro --players 3
      ladders plan hasbro --players 2 --json
    """
    from ladders.solver.checks.estimate import race_plan
    from ladders.solver.games.chain import build_chain
    chain = build_chain(open_board(board, rule, die))
    data = race_plan(chain, players, workers)
    day = 86_400.0
    measured = data["lu_measured"]
    lu_nnz, factor_s = data["lu_nonzeros"], data["factor_seconds"]
    secs, mem, crt = data["modular"]["seconds"], data["modular"]["bytes"], data["crt"]["seconds"]
    bound = "" if measured else "at least "
    def human(seconds: float) -> str:
        for unit, width in (("days", day), ("h", 3600.0), ("min", 60.0)):
            if seconds >= width:
                return f"{seconds / width:,.1f} {unit}"
        return f"{seconds:.1f} s"
    digits = data["digits_estimate"]
    lines = [f"{chain.board.name}, {players} players ({data['formulation']} formulation)",
             f"  one player    {data['states']} squares, {data['recurrent_states']} of them can recur",
             f"  unknowns      {data['unknowns']:,}",
             f"  nonzeros      {'' if data['nonzeros_exact'] else '~'}{data['nonzeros']:,}",
             f"  digits        ~{digits:,} over ~{digits:,} (measured fit, within a factor of 3)",
             f"  L + U         {bound}{lu_nnz:,} nonzeros"
             + (f" (factored mod p in {factor_s:.2f} s)" if measured else " (too big to factor for a plan)"),
             f"  modular       {data['modular']['steps']:,} lifting steps: {bound}{human(secs)} on one core, "
             f"{bound}{mem / 1e9:,.1f} GB",
             f"  crt           {data['crt']['primes']:,} primes, one LU each: {bound}{human(crt)} "
             f"on {workers} workers",
             f"  series        degrees {data['series']['degrees'][0]:,} and "
             f"{data['series']['degrees'][1]:,}, up to ~{data['series']['digits_estimate']:,} digits: "
             + (f"{data['series']['primes']:,} primes at {data['series']['ms_per_prime']:.1f} ms "
                f"({'measured' if data['series']['ms_measured'] else 'scaled from 3 players'}): "
                f"{human(data['series']['seconds'])} on {workers} workers"
                if data["series"]["primes"] else data["series"]["how"]),
             f"  verdict       {data['verdict']}"]
    emit(data, as_json, "\n".join(lines))


plan.epilog = EPILOG_BOARD
