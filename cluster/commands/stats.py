"""``ladders stats``: one player's exact answers."""

from __future__ import annotations


import click

from ladders.cluster.commands import EPILOG_BOARD, board_options, emit, json_option, open_board, short


@click.command()
@board_options
@click.option("--throws", type=click.IntRange(min=1), default=100, show_default=True,
              help="Length distribution f(t), F(t) for t = 1..THROWS (at most 100,000; "
              "with --json, exact fractions: 5,668 for a six-sided die).")
@json_option
def stats(board: str, rule: str | None, die: int | None, throws: int, as_json: bool) -> None:
    """One-player answers: f(t), F(t), L, sd, D(s), E(s), all exact.

    \b
    f(t)  probability the game ends exactly on throw t; F(t) = f(1) + ... + f(t)
    L     expected number of throws; sd its standard deviation
    D(s)  fewest throws to finish from square s; E(s) expected throws left from s

    Example: ladders stats hasbro --throws 20
    """
    from ladders.solver.answers import one_player_stats
    from ladders.solver.games.chain import (build_chain, check_throws, length_decimals,
                                             length_distribution)
    from ladders.solver.exact import fraction_to_decimal as dec
    from ladders.solver.exact import fraction_to_str as exact
    from ladders.solver.exact import sqrt_to_decimal
    chain = build_chain(open_board(board, rule, die))
    check_throws(chain, throws, exact=as_json)
    st = one_player_stats(chain)
    sd_text = sqrt_to_decimal(st.variance, 20)
    if as_json:  # exact fractions asked for: every f(t) and F(t) in full
        emit({
            "expected_length": exact(st.expected_length),
            "expected_length_decimal": dec(st.expected_length, 20),
            "variance": exact(st.variance),
            "sd_decimal": sd_text,
            "min_throws": {str(s): v for s, v in st.min_throws.items()},
            "expected_remaining": {str(s): exact(v) for s, v in st.expected_remaining.items()},
            "distribution": [{"t": t, "f": exact(f), "F": exact(F)}
                             for t, (f, F) in enumerate(length_distribution(chain, throws), start=1)],
        }, True, "")
        return
    lines = [chain.board.describe(), "",
             f"L  = {dec(st.expected_length, 12)} expected throws  (exact: "
             f"{short(exact(st.expected_length))})",
             f"sd = {sd_text[:12]}   Var = {dec(st.variance, 6)}",
             f"D({chain.board.start}) = {st.min_throws[chain.board.start]} fewest throws", "",
             "square  D(s)  E(s)"]
    lines += [f"{s:6}  {st.min_throws[s]:4}  {dec(v, 6)}" for s, v in st.expected_remaining.items()]
    lines += ["", "   t  f(t)           F(t)"]
    # only decimals are printed: no fractions are built (length_decimals)
    lines += [f"{t:4}  {f}   {F}" for t, (f, F) in enumerate(length_decimals(chain, throws, 10), start=1)]
    emit({}, False, "\n".join(lines))


stats.epilog = EPILOG_BOARD
