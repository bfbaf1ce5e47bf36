"""Monte Carlo of a chain question: walks from the start distribution, and a test of the
exact answers against them.

Each walk starts at a state drawn from ``pi_0`` and steps until it enters a state that
ends it (:class:`~ladders.solver.checks.chain_bounds.Targets`: an absorbing state for
``absorb``, the target for ``reach`` and ``reward``, or a state that cannot reach one:
it *missed*), or until ``max_steps`` or the time budget (it is *unfinished*). It earns
``rho(X_t)`` on leaving each state (1 a step for ``steps`` and ``T=?``).

Walkers move together (NumPy, one step of every live walker at a time, a seeded
:class:`numpy.random.Generator` per chunk of walkers): a walker at state s with a
uniform ``u`` takes the first transition k of row s with ``s + C_k > s + u``, where
``C_k`` is the row's cumulative probability in float64, the rows laid end to end
(``s + C_k``, one sorted array: one ``searchsorted`` for every walker). Near state
``n`` a float spaces ``s + u`` by ``n 2^-52``, a bias under ``2^-30`` a transition on a
million states: far below any standard error here.

The test (:func:`check_chain_simulation`): a probability ``p0`` passes when the
fraction of walks that ended in it lies within ``sigmas`` binomial standard errors
``sqrt(p0 (1 - p0) / N)`` of it (unfinished walks may count either way); an
expectation ``x0`` when the walks' mean reward lies within ``sigmas`` standard errors
``sd / sqrt(N)`` (one-sided, below, when walks were unfinished: their rewards are
partial), and no walk missed the target. ``Infinity`` is confirmed when a walk missed
it, and untested when none did (the miss may be rarer than ``1/N``). Five standard
errors: a correct answer fails with probability about ``6e-7`` per answer, a wrong one
passes only while it is within a few standard errors of the truth.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ladders.solver.chains.model import Chain
from ladders.solver.chains.questions import INFINITY, Plan, Question
from ladders.solver.checks.chain_bounds import Targets, question_targets
from ladders.solver.exact import fraction_to_decimal, mpq

#: Walks a check simulates by default.
WALKS = 100_000
#: Steps after which a walk is left unfinished.
MAX_STEPS = 1_000_000
#: Seconds a simulation may take; walks still live then are unfinished.
SIMULATE_SECONDS = 10.0
#: Walkers simulated at once: memory stays at tens of MB whatever the count.
CHUNK_WALKS = 1 << 20
#: Standard errors within which an exact answer must lie.
SIGMAS = 5.0


@dataclass
class ChainTally:
    """Walks reduced to what the estimates need: ``ended[k]`` walks that ended in
    slot k of the targets (the last two: other targets, and missed), ``unfinished``,
    and the rewards' sum and sum of squares over all walks (partial for unfinished
    ones); ``steps``: the most steps a walk took; ``stopped``: why walks were left
    unfinished (None: none were, or at ``max_steps``)."""

    ended: np.ndarray
    unfinished: int = 0
    reward_sum: float = 0.0
    reward_squares: float = 0.0
    steps: int = 0
    stopped: str | None = None
    walks: int = field(init=False, default=0)

    @property
    def missed(self) -> int:
        """Walks that entered a state from which no target can be reached."""
        return int(self.ended[-1])


class _Stepper:
    """The chain laid out for vectorized steps (module docstring)."""

    def __init__(self, chain: Chain, targets: Targets) -> None:
        n = chain.size
        self.indptr, self.indices = chain.indptr, chain.indices
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(chain.indptr))
        probs = chain.numerators / chain.denominators[rows].astype(np.float64)
        cum = np.cumsum(probs)
        row_start = np.concatenate([[0.0], cum])[chain.indptr[:-1]]
        within = np.minimum(cum - row_start[rows], 1.0)
        last = chain.indptr[1:] - 1
        within[last[np.diff(chain.indptr) > 0]] = 1.0
        self.keys = rows + within
        self.slot = np.full(n, -1, dtype=np.int64)
        for k, (_, states) in enumerate(targets.slots):
            self.slot[states] = k
        self.slot[targets.stop & (self.slot < 0)] = len(targets.slots)
        self.slot[targets.lost & (self.slot < 0)] = len(targets.slots) + 1
        if targets.rho is None:
            self.rho = np.ones(n)
        else:
            self.rho = targets.rho[0] / targets.rho[1].astype(np.float64)
        starts = np.array([i for i, _ in targets.start], dtype=np.int64)
        cum_start = np.cumsum([float(p) for _, p in targets.start])
        self.start_states, self.start_cum = starts, cum_start / cum_start[-1]

    def step(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One transition of every walker in ``state``."""
        k = np.searchsorted(self.keys, state + rng.random(state.size), side="right")
        return self.indices[np.minimum(k, self.indptr[state + 1] - 1)]

    def run(self, walks: int, rng: np.random.Generator, max_steps: int, deadline: float,
            tally: ChainTally) -> None:
        """``walks`` walks into ``tally``."""
        pick = np.searchsorted(self.start_cum, rng.random(walks), side="right")
        state = self.start_states[np.minimum(pick, len(self.start_states) - 1)]
        reward = np.zeros(walks)
        t = 0
        while True:
            slot = self.slot[state]
            done = slot >= 0
            if np.any(done):
                tally.ended += np.bincount(slot[done], minlength=tally.ended.size)
                tally.reward_sum += float(reward[done].sum())
                tally.reward_squares += float((reward[done] ** 2).sum())
                keep = ~done
                state, reward = state[keep], reward[keep]
            if not state.size:
                break
            if t >= max_steps or time.monotonic() > deadline:
                tally.unfinished += int(state.size)
                tally.reward_sum += float(reward.sum())
                tally.reward_squares += float((reward ** 2).sum())
                if t < max_steps:
                    tally.stopped = "the time budget ran out"
                break
            reward += self.rho[state]
            state = self.step(state, rng)
            t += 1
        tally.steps = max(tally.steps, t)
        tally.walks += walks


def simulate_chain(chain: Chain, question: Question, plan: Plan, walks: int = WALKS,
                   seed: int = 0, max_steps: int = MAX_STEPS,
                   seconds: float = SIMULATE_SECONDS,
                   targets: Targets | None = None) -> ChainTally:
    """``walks`` walks of ``question`` (module docstring), in chunks of
    :data:`CHUNK_WALKS`, chunk i drawing from its own generator seeded by
    ``(seed, i)``: reproducible unless the time budget cuts walks short
    (``targets``: the question's, found beforehand)."""
    if not isinstance(walks, int) or isinstance(walks, bool) or walks < 2:
        raise ValueError(f"walks must be a whole number of at least 2, got {walks!r}")
    targets = targets or question_targets(chain, question, plan.names)
    stepper = _Stepper(chain, targets)
    tally = ChainTally(np.zeros(len(targets.slots) + 2, dtype=np.int64))
    deadline = time.monotonic() + seconds
    for i, lo in enumerate(range(0, walks, CHUNK_WALKS)):
        stepper.run(min(walks, lo + CHUNK_WALKS) - lo, np.random.default_rng([seed, i]),
                    max_steps, deadline, tally)
    return tally


def check_chain_simulation(chain: Chain, question: Question, plan: Plan,
                           values: dict[str, mpq | str], walks: int = WALKS, seed: int = 0,
                           max_steps: int = MAX_STEPS, budget: float = SIMULATE_SECONDS,
                           sigmas: float = SIGMAS) -> dict[str, Any]:
    """Test the exact answers ``values`` (name -> ``mpq`` or :data:`INFINITY`) against
    ``walks`` simulated walks (module docstring for the test).

    Returns a JSON-ready report: ``check``, ``question``, ``walks``, ``seed``,
    ``steps`` (the longest walk), ``unfinished``, ``missed``, ``sigmas``, ``seconds``,
    ``cpu_seconds``, ``stopped`` when the budget cut walks short, and per answer its
    ``exact`` decimal, ``estimate`` and ``stderr`` (None for an infinite expectation),
    ``z`` (``(estimate - exact) / stderr``; None where the standard error is 0 or the
    answer infinite), ``within``
    (True, False, or None: untested) and a ``note`` where one applies; ``passed``: no
    answer is outside.
    """
    t0, c0 = time.monotonic(), time.process_time()
    targets = question_targets(chain, question, plan.names)
    tally = simulate_chain(chain, question, plan, walks, seed, max_steps, budget, targets)
    slot_of = {name: k for k, (name, _) in enumerate(targets.slots)}
    report = []
    for name in plan.names:
        if name in slot_of:
            report.append(_probability(name, values[name], tally, int(tally.ended[slot_of[name]]),
                                       sigmas))
        else:
            report.append(_expectation(name, values[name], tally, sigmas))
    out: dict[str, Any] = {"check": "simulation", "question": question.describe(),
                           "walks": tally.walks, "seed": seed, "steps": tally.steps,
                           "unfinished": tally.unfinished, "missed": tally.missed,
                           "sigmas": sigmas, "answers": report,
                           "passed": all(e["within"] is not False for e in report),
                           "seconds": round(time.monotonic() - t0, 3),
                           "cpu_seconds": round(time.process_time() - c0, 3)}
    if tally.stopped is not None:
        out["stopped"] = tally.stopped
    return out


def _probability(name: str, value: mpq | str, tally: ChainTally, hits: int,
                 sigmas: float) -> dict[str, Any]:
    """A probability's entry: the fraction of walks that ended in it against ``value``."""
    n = tally.walks
    entry: dict[str, Any] = {"name": name, "exact": _decimal(value), "estimate": hits / n}
    if value == INFINITY:
        entry.update(stderr=None, z=None, within=False, note="a probability cannot be Infinity")
        return entry
    p0 = mpq(value)
    sd = math.sqrt(float(p0 * (1 - p0)) / n)
    low, high = mpq(hits, n), mpq(hits + tally.unfinished, n)
    entry["stderr"] = sd
    entry["z"] = None if sd == 0 else (hits / n - float(p0)) / sd
    entry["within"] = bool(float(low) - sigmas * sd <= float(p0) <= float(high) + sigmas * sd
                           if sd else low <= p0 <= high)
    if tally.unfinished:
        entry["note"] = f"{tally.unfinished:,} unfinished walks counted either way"
    return entry


def _expectation(name: str, value: mpq | str, tally: ChainTally, sigmas: float) -> dict[str, Any]:
    """An expectation's entry: the walks' mean reward against ``value``."""
    n = tally.walks
    mean = tally.reward_sum / n
    var = max(tally.reward_squares / n - mean * mean, 0.0) * n / (n - 1)
    se = math.sqrt(var / n)
    entry: dict[str, Any] = {"name": name, "exact": _decimal(value), "estimate": mean,
                             "stderr": se, "z": None}
    if value == INFINITY:
        entry.update(estimate=None, stderr=None, within=True if tally.missed else None)
        entry["note"] = (f"{tally.missed:,} walks missed the target" if tally.missed else
                         "untested: no walk missed the target (the miss may be rarer than "
                         f"1/{n:,})")
        return entry
    x0 = float(value)
    if se:
        entry["z"] = (mean - x0) / se
    # a walk's float sum of t rewards is off by at most t 2^-53 of it (Higham's gamma_t)
    rounding = abs(mean) * tally.steps * 2.0 ** -53
    below = mean - sigmas * se - rounding <= x0
    above = x0 <= mean + sigmas * se + rounding
    if tally.missed:
        entry.update(within=False, note=f"{tally.missed:,} walks missed the target: the "
                                        "expectation is infinite")
    elif tally.unfinished:
        entry.update(within=bool(below), note=f"{tally.unfinished:,} unfinished walks: their "
                                             "rewards are partial, so only the lower side is "
                                             "tested")
    else:
        entry["within"] = bool(below and above)
    return entry


def _decimal(value: mpq | str) -> str:
    """An exact answer as text: 12 decimals, or ``Infinity``."""
    return INFINITY if value == INFINITY else fraction_to_decimal(mpq(value), 12)
