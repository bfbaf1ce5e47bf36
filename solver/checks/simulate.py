"""Monte Carlo: simulated games (vectorized, seeded) and the diagonal-squares estimator.

One-player games are simulated all at once with NumPy: every live game takes one throw
per step through the chain's ``next_table``; finished games drop out. A k-player race is
k independent one-player games per race (players do not interact); seat j wins when its
length is the smallest, ties going to the earlier seat (it throws first in that round).

The diagonal-squares estimator (two players) uses one-player lengths only:
``P = 1/2 + 1/2 sum_t f(t)^2``, with ``sum_t f(t)^2`` estimated without bias by the
U-statistic ``sum_t c_t (c_t - 1) / (M (M - 1))`` over M lengths (``c_t``: how many
games lasted t throws). Its variance is ``(sum f^3 - (sum f^2)^2) / M`` to first order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ladders.solver.games.chain import AbsorbingChain

Z95 = 1.959963984540054


def simulate_lengths(chain: AbsorbingChain, games: int, rng: np.random.Generator) -> np.ndarray:
    """Lengths (number of throws) of ``games`` independent one-player games."""
    table = chain.next_table
    lengths = np.zeros(games, dtype=np.int64)
    live = np.arange(games)
    pos = np.full(games, chain.start_index, dtype=np.int64)
    t = 0
    while live.size:
        t += 1
        pos = table[pos, rng.integers(0, chain.die, size=live.size)]
        done = pos < 0
        lengths[live[done]] = t
        keep = ~done
        live, pos = live[keep], pos[keep]
    return lengths


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate with its standard error and 95% interval."""

    value: float
    stderr: float

    @property
    def ci95(self) -> tuple[float, float]:
        return (self.value - Z95 * self.stderr, self.value + Z95 * self.stderr)


def mean_estimate(samples: np.ndarray) -> Estimate:
    """Sample mean with standard error ``sd / sqrt(N)``."""
    n = samples.size
    sd = float(samples.std(ddof=1)) if n > 1 else 0.0
    return Estimate(float(samples.mean()), sd / math.sqrt(n))


def race_winners(lengths: np.ndarray) -> np.ndarray:
    """Winning seat (0-based) of each race from an (N, k) array of one-player lengths."""
    return np.argmin(lengths, axis=1)  # argmin takes the first minimum: earlier seat wins ties


def seat_estimates(winners: np.ndarray, players: int) -> list[Estimate]:
    """Fraction of races each seat won, with binomial standard errors."""
    n = winners.size
    out = []
    for seat in range(players):
        p = float(np.count_nonzero(winners == seat)) / n
        out.append(Estimate(p, math.sqrt(p * (1 - p) / n)))
    return out


def diagonal_estimate(lengths: np.ndarray) -> Estimate:
    """Two-player ``P(seat 1 wins)`` from one-player lengths (diagonal squares, unbiased)."""
    m = lengths.size
    counts = np.bincount(lengths).astype(np.float64)
    pairs = float((counts * (counts - 1)).sum()) / (m * (m - 1))
    freq = counts / m
    var = max(float((freq ** 3).sum()) - float((freq ** 2).sum()) ** 2, 0.0) / m
    return Estimate(0.5 + 0.5 * pairs, math.sqrt(var))


def decade_sizes(games: int) -> list[int]:
    """N = 100, 1000, ... below ``games``, then ``games``: the rows of a convergence table."""
    sizes = []
    n = 100
    while n < games:
        sizes.append(n)
        n *= 10
    return sizes + [games]


def estimate_errors(lengths: np.ndarray, players: int, exact: float,
                    sizes: list[int]) -> list[dict[str, float]]:
    """How far the estimate from the first N games lies from ``exact``, for each N.

    One player: the mean length. k players: seat 1's share of N simulated races; for
    two players also the diagonal-squares estimator from the first 2N one-player
    lengths (``diagonal_error``). Each row: ``n``, ``estimate``, ``error``, ``stderr``
    and ``scaled_error = error * sqrt(N)`` (about constant: the N^-1/2 law).
    """
    rows = []
    for n in sizes:
        if players == 1:
            est = mean_estimate(lengths[:n])
        else:
            est = seat_estimates(race_winners(lengths[: n * players].reshape(n, players)), players)[0]
        err = abs(est.value - exact)
        row = {"n": int(n), "estimate": est.value, "error": err, "stderr": est.stderr,
               "scaled_error": err * math.sqrt(n)}
        if players == 2:
            row["diagonal_error"] = abs(diagonal_estimate(lengths[: 2 * n]).value - exact)
        rows.append(row)
    return rows
