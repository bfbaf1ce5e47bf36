"""``ladders coins``: Another Game, exact."""

from __future__ import annotations


import click

from ladders.cluster.commands import emit, json_option, task_bar


@click.command()
@click.option("--a", "coins_a", type=click.IntRange(min=0), default=4, show_default=True,
              help="A's starting coins (A's, B's and the pot's together at most 40).")
@click.option("--b", "coins_b", type=click.IntRange(min=0), default=4, show_default=True,
              help="B's starting coins.")
@click.option("--pot", type=click.IntRange(min=0), default=2, show_default=True,
              help="Coins in the pot at the start.")
@click.option("--cycles", type=click.IntRange(min=1, max=1000), default=60, show_default=True,
              help="Distribution P(N = n) of the number of cycles for n = 1..CYCLES (at most 1,000).")
@json_option
def coins(coins_a: int, coins_b: int, pot: int, cycles: int, as_json: bool) -> None:
    """Another Game (coins and a die), exact.

    \b
    A and B alternate (A first), one die each turn: 1 nothing; 2 take the pot;
    3 take half the pot (rounded down); 4-6 pay one coin into the pot, and a player
    who must pay with no coin loses. A cycle is A's turn then B's. At most 40 coins
    in play (about 2 s; the exact solve grows as the fifth power of the coins).

    Example: ladders coins --a 4 --b 4 --pot 2
    """
    from ladders.solver.answers import solve_coins
    from ladders.solver.games.coins import CoinGame
    from ladders.solver.exact import fraction_to_decimal as dec
    from ladders.solver.exact import fraction_to_str as exact
    game = CoinGame(coins_a, coins_b, pot)
    with task_bar(("cycles", "cycle")) as bar:
        ans = solve_coins(game, cycles, progress=lambda n, total: bar(n, total, 0))
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
