"""``ladders plan``: how big an exact race is and what each engine would cost."""

from __future__ import annotations

import time

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
    rows; the digits of the answer come from a measured fit (see solver/estimate.py).
    Systems up to 20,000 unknowns are factored once modulo a prime to measure the fill
    and the factorization time; bigger ones get lower bounds (no fill assumed).

    \b
    Examples:
      ladders plan hasbro --players 3
      ladders plan hasbro --players 2 --json
    """
    from ladders.solver.games.chain import build_chain
    from ladders.solver.checks.estimate import (NS_PER_NONZERO, crt_seconds, modular_bytes, modular_seconds,
                                 race_size)
    chain = build_chain(open_board(board, rule, die))
    size = race_size(chain, players)
    lu_nnz, factor_s, measured = size.nonzeros, size.nonzeros * NS_PER_NONZERO * 1e-9 * 4, False
    nonzeros = size.nonzeros
    if size.unknowns <= 20_000:
        import random

        from ladders.solver.engines.modular import Lifter
        from ladders.solver.system import pivot_order
        from ladders.solver.games.race import race_system
        from ladders.solver.system import LinearSystem
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
