"""Monte Carlo: simulated games (vectorized, seeded) and the diagonal-squares estimator.

One-player games are simulated a chunk at a time with NumPy: every live game takes one
throw per step through the chain's ``next_table``; finished games drop out. A run of any
size is reduced chunk by chunk to a :class:`Tally` (games per length, races per winning
seat), which is all the estimates need, so memory does not grow with the games. A k-player race is
k independent one-player games per race (players do not interact); seat j wins when its
length is the smallest, ties going to the earlier seat (it throws first in that round).

The diagonal-squares estimator (two players) uses one-player lengths only:
``P = 1/2 + 1/2 sum_t f(t)^2``, with ``sum_t f(t)^2`` estimated without bias by the
U-statistic ``sum_t c_t (c_t - 1) / (M (M - 1))`` over M lengths (``c_t``: how many
games lasted t throws). Its variance is ``(sum f^3 - (sum f^2)^2) / M`` to first order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
    return _diagonal(np.bincount(lengths).astype(np.float64), lengths.size)


def _diagonal(counts: np.ndarray, m: int) -> Estimate:
    """:func:`diagonal_estimate` from ``counts[t]``, the games of t throws among ``m``."""
    counts = counts.astype(np.float64)
    pairs = float((counts * (counts - 1)).sum()) / (m * (m - 1))
    freq = counts / m
    var = max(float((freq ** 3).sum()) - float((freq ** 2).sum()) ** 2, 0.0) / m
    return Estimate(0.5 + 0.5 * pairs, math.sqrt(var))


#: One-player games simulated at once: memory stays at tens of MB whatever the count.
CHUNK_GAMES = 1 << 20
#: Most one-player games (races x players) one command simulates: about half an hour
#: at a million games a second on this 2-core machine.
MAX_GAMES = 10 ** 9


@dataclass
class Tally:
    """Simulated games reduced to what every estimate needs: ``lengths[t]`` one-player
    games of t throws, ``wins[j]`` races seat j won (one player: ``wins[0]`` games)."""

    players: int
    lengths: np.ndarray
    wins: np.ndarray

    @classmethod
    def empty(cls, players: int) -> Tally:
        return cls(players, np.zeros(1, dtype=np.int64), np.zeros(players, dtype=np.int64))

    def add(self, races: np.ndarray) -> None:
        """Count an (N, players) array of one-player lengths."""
        counts = np.bincount(races.ravel())
        if counts.size > self.lengths.size:
            counts[:self.lengths.size] += self.lengths
            self.lengths = counts
        else:
            self.lengths[:counts.size] += counts
        self.wins += np.bincount(race_winners(races), minlength=self.players)

    def copy(self) -> Tally:
        return Tally(self.players, self.lengths.copy(), self.wins.copy())

    @property
    def races(self) -> int:
        return int(self.wins.sum())

    def mean(self) -> Estimate:
        """Mean one-player length with its standard error (:func:`mean_estimate`)."""
        n = int(self.lengths.sum())
        t = np.arange(self.lengths.size, dtype=np.float64)
        mean = float(t @ self.lengths) / n
        var = max(float((t - mean) ** 2 @ self.lengths) / (n - 1), 0.0) if n > 1 else 0.0
        return Estimate(mean, math.sqrt(var / n))

    def seats(self) -> list[Estimate]:
        """Each seat's share of the races (:func:`seat_estimates`)."""
        n = self.races
        return [Estimate(p, math.sqrt(p * (1 - p) / n)) for p in (float(w) / n for w in self.wins)]

    def diagonal(self) -> Estimate:
        """Two players: the diagonal-squares estimate from every one-player length."""
        return _diagonal(self.lengths, int(self.lengths.sum()))


def simulate_tally(chain: AbsorbingChain, players: int, races: int, seed: int,
                   snapshots: Sequence[int] = (),
                   progress: Callable[[int, int], None] | None = None,
                   chunk: int = CHUNK_GAMES) -> tuple[Tally, dict[int, Tally]]:
    """``races`` simulated races of ``players`` seats (one player: games), in chunks of
    about ``chunk`` one-player games, so memory stays bounded; chunk i draws
    from its own generator seeded by ``(seed, i)``: reproducible. Returns the tally of
    all of them and, for each n of ``snapshots``, the tally of the first n races.
    ``progress(races_done, races)`` after every chunk."""
    per = max(1, chunk // players)
    total = Tally.empty(players)
    kept: dict[int, Tally] = {}
    wanted = sorted(set(snapshots))
    for i, lo in enumerate(range(0, races, per)):
        hi = min(races, lo + per)
        rng = np.random.default_rng([seed, i])
        block = simulate_lengths(chain, (hi - lo) * players, rng).reshape(hi - lo, players)
        while wanted and wanted[0] <= hi:
            n = wanted.pop(0)
            part = total.copy()
            part.add(block[:n - lo])
            kept[n] = part
        total.add(block)
        if progress is not None:
            progress(hi, races)
    return total, kept


def check_games(races: int, players: int) -> None:
    """Refuse more than :data:`MAX_GAMES` one-player games (``ValueError`` naming the
    limit, the value and the fix)."""
    if races * players > MAX_GAMES:
        raise ValueError(f"--games {races:,} with {players} player(s) is {races * players:,} simulated "
                         f"games; the limit is {MAX_GAMES:,} (about half an hour): ask for fewer; "
                         "the error shrinks only as 1/sqrt(games)")


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
    """How far the estimate from the first N games lies from ``exact``, for each N
    (:func:`error_row` of the tally of the first N games or races)."""
    rows = []
    for n in sizes:
        tally = Tally.empty(players)
        tally.add(lengths[: n * players].reshape(n, players))
        rows.append(error_row(tally, exact))
    return rows


def error_row(tally: Tally, exact: float) -> dict[str, float]:
    """One row of a convergence table: ``n``, ``estimate``, ``error``, ``stderr`` and
    ``scaled_error = error * sqrt(N)`` (about constant: the N^-1/2 law). One player: the
    mean length; k players: seat 1's share of the races; two players also the
    diagonal-squares estimator from the same one-player lengths (``diagonal_error``)."""
    n = tally.races
    est = tally.mean() if tally.players == 1 else tally.seats()[0]
    err = abs(est.value - exact)
    row = {"n": int(n), "estimate": est.value, "error": err, "stderr": est.stderr,
           "scaled_error": err * math.sqrt(n)}
    if tally.players == 2:
        row["diagonal_error"] = abs(tally.diagonal().value - exact)
    return row
