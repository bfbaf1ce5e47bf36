"""The games' own small questions, answered in this process by an engine.

A game (:mod:`ladders.solver.games`) writes its equations and an engine solves them;
the games rank below the engines (``tests/test_layers.py``), so the solve that joins the
two lives here, above both: one player's exact statistics (:func:`one_player_stats`,
the moment system of :func:`ladders.solver.games.chain.moment_system` by fraction-free
elimination) and Another Game (:func:`solve_coins`, the system of
:func:`ladders.solver.games.coins.coins_system` by Dixon lifting).
"""

from __future__ import annotations

from collections.abc import Callable

from ladders.solver.engines.elimination import solve_all
from ladders.solver.engines.modular import solve_dixon
from ladders.solver.exact import mpq
from ladders.solver.games.chain import AbsorbingChain, OnePlayerStats, min_throws, moment_system
from ladders.solver.games.coins import CoinAnswers, CoinGame, coins_system, cycle_distribution


def one_player_stats(chain: AbsorbingChain) -> OnePlayerStats:
    """Solve ``(I - Q) E = 1`` and ``(I - Q) M = 1 + 2 Q E`` exactly, and D(s) by search.

    ``M(s) = E[T^2]`` from s: with ``T = 1 + T'``, ``T^2 = 1 + 2T' + T'^2``.
    """
    system = moment_system(chain)
    e_values = solve_all(system)[0]
    d = chain.die
    # Right-hand side of the second moment, scaled by d: d + 2 * sum_s' C[s,s'] E(s').
    rhs2 = [mpq(d) + 2 * sum((c * e_values[j] for j, c in chain.moves[i]), mpq(0))
            for i in range(len(chain.states))]
    m_values = solve_all(system, rhs=[rhs2])[0]
    squares = chain.states
    return OnePlayerStats(
        expected_remaining={s: e_values[i] for i, s in enumerate(squares)},
        second_moment={s: m_values[i] for i, s in enumerate(squares)},
        min_throws=min_throws(chain),
        start=chain.board.start,
    )


def solve_coins(game: CoinGame, cycles: int = 60,
                progress: Callable[[int, int], None] | None = None) -> CoinAnswers:
    """Exact expected cycles and win probabilities from every start, final-state
    probabilities and ``P(N = n)`` for n = 1..``cycles`` from the game's start
    (``progress(n, cycles)`` as the distribution is computed).

    The system (``2 (total+1)(total+2)/2`` unknowns) is solved by the modular engine
    (:func:`~ladders.solver.engines.modular.solve_dixon`: certified, every unknown):
    exact elimination in fractions took 14 s for 18 coins and hours for 22; this
    takes a tenth of a second for 22 (see :data:`ladders.solver.games.coins.MAX_COINS`)."""
    equations = coins_system(game)
    labels, rhs = equations.labels, equations.final_rhs
    x = [column.solution() for column in solve_dixon(equations.system, seed=0).columns]
    visits = solve_dixon(equations.transposed, seed=0).columns[0].solution()
    final_states = {name: sum((visits[i] * int(rhs[i, k]) for i in range(len(labels))
                               if rhs[i, k]), mpq(0)) for k, name in enumerate(equations.finals)}
    a_rows = [(i, key) for i, key in enumerate(labels) if key[0] == 0]
    return CoinAnswers(
        game=game,
        expected_cycles={(a, b): x[0][i] for i, (_m, a, b) in a_rows},
        win_a={(a, b): x[1][i] for i, (_m, a, b) in a_rows},
        final_states={name: p for name, p in final_states.items() if p},
        distribution=cycle_distribution(game, cycles, progress),
    )
