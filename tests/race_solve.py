"""A race solved in this process by the elimination engine, for the tests: every seat
and, for two players, the whole table ``P(a, b)`` (the product solves races through
``ladders.solve``; this is the short way to an exact answer for a test's small boards)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ladders.solver.engines.elimination import eliminate_target, solve_all
from ladders.solver.exact import mpq
from ladders.solver.games.chain import AbsorbingChain
from ladders.solver.games.race import race_system, seats_from_values


@dataclass(frozen=True)
class RaceResult:
    """Exact win probability of every seat, and (when asked) the two-player table."""

    players: int
    seats: list[mpq]
    table: dict[tuple[int, int], mpq] | None = None


def solve_race(chain: AbsorbingChain, players: int, *, table: bool = False,
               formulation: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> RaceResult:
    """Exact race in this process (small problems): every seat, optionally P(a, b)."""
    system = race_system(chain, players, formulation)
    if table:
        if players != 2 or system.columns != 1:
            raise ValueError("the full table P(a, b) is defined for two players (turn form)")
        x = solve_all(system)[0]
        tab = {system.labels[i]: x[i] for i in range(system.size)}
        return RaceResult(players, seats_from_values(system, players, [x[system.target]]), tab)
    values = eliminate_target(system, progress=progress)
    return RaceResult(players, seats_from_values(system, players, values))
