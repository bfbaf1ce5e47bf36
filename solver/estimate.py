"""Sizing a race before solving it: unknowns, nonzeros, digits, and what each engine costs.

Everything here is cheap (no exact solve, no prime of the series engine). The figures
that are *measured fits* on this project's 2-core machine are named constants below,
with the data behind them in docs/frontier.md; the estimates are only as good as those
fits. Times are CPU time on an idle core (``time.process_time``), never the wall clock:
a busy machine does not move them.

Digits. One estimate of the answer's size serves every engine, the plan's headline and
the refusals (:func:`digits_estimate`): the series engine's fit, 0.93 of the resultant
bound on the denominators (within 0.2 % on hasbro for 2 to 4 players; boards whose
chutes cancel come out smaller, up to ten times on toy boards, so on those it is an
upper estimate).

Modular engine. Lifting needs ``(2 digits log2(10) + 64) / log2(p)`` steps per
right-hand side to reconstruct, the certificate ``digits log2(10) / log2(p)`` more;
each step costs about ``NS_PER_NONZERO`` per nonzero of L + U and A.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ladders.solver.games.chain import AbsorbingChain
from ladders.solver.games.race import race_unknowns
from ladders.solver.system import LinearSystem, pivot_order

if TYPE_CHECKING:
    from ladders.solver.calibrate import Unit

#: Measured cost of one lifting step per nonzero of L + U + A (2-core machine, one core).
NS_PER_NONZERO = 3.0
#: Bits of the answer one lifting step or one prime adds (primes just below 2^28).
BITS_PER_STEP = 27.9
#: Memory per stored nonzero of L or U (int32 column and value) plus row pointers.
BYTES_PER_NONZERO = 8
#: What one machine can give a solve (a 24 GiB machine): beyond it a solve is out of reach.
MACHINE_BYTES = 20e9


def recurrent_states(chain: AbsorbingChain) -> list[int]:
    """States of one player that can recur: on a cycle of the chain (self-loops excluded)."""
    n = len(chain.states)
    succ = [[t for t, _ in chain.moves[i] if t != i] for i in range(n)]
    out = []
    for i in range(n):
        seen: set[int] = set()
        stack = list(succ[i])
        while stack:
            x = stack.pop()
            if x not in seen:
                seen.add(x)
                stack.extend(succ[x])
        if i in seen:
            out.append(i)
    return out


@dataclass(frozen=True)
class RaceSize:
    """What a k-player race on a board amounts to, before solving it."""

    players: int
    formulation: str
    states: int          # one player's transient squares n
    recurrent: int       # of which can recur, m
    unknowns: int
    nonzeros: int        # exact for small systems, else estimated from sampled rows
    nonzeros_exact: bool
    digits: int          # estimated digits of the denominator (and of the numerator):
                         # :func:`digits_estimate`
    columns: int         # right-hand sides the engines solve

    @property
    def steps(self) -> int:
        """Modular engine: lifting plus certificate steps, all columns."""
        bits = self.digits * math.log2(10)
        return self.columns * math.ceil((3 * bits + 64) / BITS_PER_STEP)

    @property
    def primes(self) -> int:
        """crt engine: primes needed to reconstruct the answer."""
        return math.ceil((2 * self.digits * math.log2(10) + 64) / BITS_PER_STEP)


#: Races up to this many unknowns have their nonzeros counted row by row; bigger ones
#: are estimated from sampled rows.
COUNT_LIMIT = 1_000_000
#: Sampled rows stop once the mean's standard error is below this share of the mean
#: (after at least ``MIN_SAMPLE`` rows, checked every ``MIN_SAMPLE // 4``): on hasbro
#: about 100 rows for 3 to 6 players (their spread is a third of their mean). The
#: figure only sizes the engines that build the system, out of reach by orders of
#: magnitude where rows are sampled; a row of 6 players enumerates up to 6^6 moves
#: (450 rows at 2 % took ``plan -k 6`` 13 s, 2,000 rows took ``plan -k 5`` 17 s).
SAMPLE_PRECISION = 0.05
MIN_SAMPLE = 80


def _row_nonzeros(chain: AbsorbingChain, squares: list[int]) -> int:
    """Nonzeros of the race row of ``squares`` (a state of each seat): itself and every
    state one round (two players: one move of the mover) leads to."""
    if len(squares) == 2:
        a, b = squares
        return len({(a, b)} | {(b, t) for t, _ in chain.moves[a]})
    targets: set[tuple[int, ...]] = {()}
    for s in sorted(squares):
        targets = {tuple(sorted(t + (x,))) for t in targets for x, _ in chain.moves[s]}
    return len(targets | {tuple(sorted(squares))})


def race_size(chain: AbsorbingChain, players: int, sample: int = 2000, seed: int = 0) -> RaceSize:
    """Size of the ``players``-seat race on ``chain`` (formulation: turn for two, else sym).

    Nonzeros are counted exactly up to :data:`COUNT_LIMIT` unknowns (two players), else
    estimated from at most ``sample`` random rows (see :data:`SAMPLE_PRECISION`). Costs
    no system: ``ladders solve`` calls it to refuse what is out of reach."""
    n = len(chain.states)
    m = len(recurrent_states(chain))
    k = players
    unknowns = race_unknowns(n, k)
    formulation, columns = ("turn", 1) if k == 2 else ("sym", k - 1)
    if k == 2 and unknowns <= COUNT_LIMIT:
        nonzeros = sum(_row_nonzeros(chain, [a, b]) for a in range(n) for b in range(n))
        exact = True
    else:
        rng = random.Random(seed)
        counts: list[int] = []
        while len(counts) < min(sample, unknowns):
            counts.append(_row_nonzeros(chain, [rng.randrange(n) for _ in range(k)]))
            if len(counts) >= MIN_SAMPLE and len(counts) % (MIN_SAMPLE // 4) == 0:
                mean = sum(counts) / len(counts)
                var = sum((c - mean) ** 2 for c in counts) / (len(counts) - 1)
                if math.sqrt(var / len(counts)) <= SAMPLE_PRECISION * mean:
                    break
        nonzeros, exact = round(sum(counts) / len(counts) * unknowns), False
    return RaceSize(k, formulation, n, m, unknowns, nonzeros, exact,
                    digits_estimate(chain, k), columns)


def digits_estimate(chain: AbsorbingChain, players: int) -> int:
    """Digits expected in each seat's numerator and denominator: the series engine's
    fit (:func:`~ladders.solver.engines.series.expected_digits`; module docstring), the
    one estimate of ``ladders plan``, the engines' rows and the solve's refusals."""
    from ladders.solver.engines.series import chain_data, expected_digits
    return expected_digits(chain_data(chain), players)


def modular_seconds(size: RaceSize, lu_nonzeros: int, factor_seconds: float) -> float:
    """Estimated wall time of the modular engine on one core."""
    return factor_seconds + size.steps * (lu_nonzeros + size.nonzeros) * NS_PER_NONZERO * 1e-9


def modular_bytes(size: RaceSize, lu_nonzeros: int) -> int:
    """Estimated peak memory of the modular engine: L + U, the certificate's digits and
    the system (pass ``size.nonzeros`` as ``lu_nonzeros`` for a lower bound: no fill)."""
    cert_steps = math.ceil(size.digits * math.log2(10) / BITS_PER_STEP) + 16
    return lu_nonzeros * BYTES_PER_NONZERO + cert_steps * size.unknowns * 8 + system_bytes(size)


def system_bytes(size: RaceSize) -> int:
    """Memory the race's sparse system alone takes once built (its CSR arrays and the
    rows they are built from), before any fill: what every engine that builds it needs."""
    return size.nonzeros * 24


def crt_seconds(size: RaceSize, factor_seconds: float, workers: int) -> float:
    """Estimated wall time of the crt engine on ``workers`` workers (one LU per prime)."""
    return size.primes * factor_seconds / workers


#: Bits a word prime of the series engine adds to the modulus (log2 of a prime of
#: [2^61, 2^62) is 61.5 on average), and how far the reconstruction's attempts overshoot
#: the primes needed: the first near attempt comes at 1.002 times the fitted size, the
#: next 2 % later (:func:`~ladders.solver.engines.series.run_stream`).
SERIES_PRIME_BITS = 61.5
SERIES_OVERSHOOT = 1.02


#: Seconds of one modelled unit of the series kernel (``split_cost``) on one core:
#: the geometric mean of the two 2-core machines this project runs on, so that a plan
#: is within 1.11x of a prime's time on either (scripts/bench_kernel.py, hasbro with 3
#: to 6 players, ms a prime of CPU against the model's units): an AMD EPYC
#: (2026-11-26 09:30 UTC, 1.82, 4.84, 81.5 and 242 ms, 1.63e-9 s a unit) and an Intel
#: Xeon (2026-11-27 11:25 UTC, 1.45, 3.99, 64.5 and 198 ms, 1.31e-9). It is the
#: default only: ``ladders plan`` measures the unit on the machine it runs on, in CPU
#: time (a prime timed in wall time moved 5 to 15 times with the load, issue 40), and
#: keeps it per machine and version for the solve's forecast too
#: (:mod:`ladders.solver.calibrate`; a 16-core Xeon was 1.43x off this figure).
SERIES_UNIT_SECONDS = 1.46e-9
#: Seconds a run takes to start its Dask cluster (or reach a remote one) before the
#: first batch: 1.05 s for 2 local workers (``startup_seconds`` of ``ladders solve
#: hasbro -k 3 --workers 2 --json``, 2026-11-27), part of the wall time the plan gives.
SERIES_START_SECONDS = 1.0


def series_primes(data: Any, players: int) -> int:
    """Primes a run of the series engine is expected to need: the bits of its modulus
    (:func:`~ladders.solver.engines.series.needed_bits`: three players, the
    denominator multiple; more, both halves of every seat's fraction) at
    :data:`SERIES_PRIME_BITS` bits a prime, with the overshoot of the reconstruction's
    growing attempts (0 for two players: solved over Q)."""
    from ladders.solver.engines.series import needed_bits
    if players == 2:
        return 0
    return math.ceil(needed_bits(data, players) / SERIES_PRIME_BITS * SERIES_OVERSHOOT)


#: Bytes the series driver holds per bit of a seat's fraction (numerator and
#: denominator together) in its attempt at full size, and what any driver holds besides:
#: 3.69 GB at most for 625 million bits of six seats, the groups on two workers reading
#: the store (``scripts/bench_driver.py --players 6 --scale 0.0625 --workers 2``,
#: 2026-11-27, 3002903: 0.66 GB before the last attempt, the primes, each batch's product
#: of primes and the last batch's residues; 3.44 GB before the batches' products and the
#: levels' products side by side, 3.97 GB when the driver kept every residue and
#: combined the last seat's column), 0.6 GB in the largest process of the 4-player run
#: (31 million).
SERIES_DRIVER_BYTES_PER_BIT = 5.1
SERIES_DRIVER_BASE_BYTES = 0.5e9


#: A worker's memory for the series engine: what a process holds with ladders and the
#: kernels loaded (and Dask's worker around it), and the kernel's arrays, by the terms
#: of the split's two sides (``m_a + L``, :class:`~ladders.solver.engines.series.algebra.Split`).
#: Measured on hasbro (2026-11-26, one process computing 4 primes, its peak): 3 and 4
#: players (3,088 and 6,014 terms) 167 MB, 5 players (82,090) 185 MB, 6 (158,166) 189
#: MB; the Dask workers of the 4-player run held about 125 MB each.
SERIES_WORKER_BASE_BYTES = 0.2e9
SERIES_WORKER_BYTES_PER_TERM = 150.0


def series_worker_bytes(data: Any, players: int) -> float:
    """A series worker's peak memory (:data:`SERIES_WORKER_BYTES_PER_TERM`)."""
    from ladders.solver.engines.series import choose_split
    sp = choose_split(data, players)
    return SERIES_WORKER_BASE_BYTES + SERIES_WORKER_BYTES_PER_TERM * (sp.m_a + sp.length)


def series_driver_bytes(data: Any, players: int) -> float:
    """The series driver's peak memory, by the size of the fractions it reconstructs:
    6 players on hasbro, fractions of 10 billion bits, about 51 GB (a large node's, see
    docs/frontier.md)."""
    from ladders.solver.engines.series import expected_digits
    bits = 2 * expected_digits(data, players) * math.log2(10)
    return SERIES_DRIVER_BASE_BYTES + SERIES_DRIVER_BYTES_PER_BIT * bits


#: How much slower a prime is with n workers busy on one machine than alone:
#: ``1 + SERIES_CONTENTION log2(n)`` (the kernels' transforms share the memory bandwidth
#: and the last-level cache). Fit to the prime's cost on a busy core against one alone:
#: on this project's 2-core machine, a 4-player run's workers 5.39 ms against 4.84 (1.11;
#: the kernels alone side by side show none here, ``scripts/bench_load.py``: the driver's
#: share of the cores); on a 16-core machine (issue 39, Python 3.12), 4 players 8.04
#: ms in Dask workers against 6.04 alone (1.33), 5 players 123 against 103 (1.19). The
#: model says 1.08 and 1.32.
SERIES_CONTENTION = 0.08
#: Workers a machine holds when ``ladders plan`` is not told (the 16-core machine of the
#: measurements above).
MACHINE_WORKERS = 16
#: The reconstruction that succeeds, after the last batch the run needs (the CRT of
#: every residue but the last seat's, the half-gcd of one seat, the others through its
#: denominator, the lowest terms), measured in one process with 2 threads on a 2-core
#: Intel Xeon (2026-11-27, bcb6aa7): 13.9 s at 31.6 million bits (4 players on hasbro,
#: the last attempt replayed from the run's store, ``scripts/bench_driver.py --replay``)
#: and 522 s at 617 million (five seats of known fractions at five players' full size:
#: ``scripts/crt_stages.py --attempt --workers 1``, 325 s, and its 64 groups one after
#: the other, 197 s):
#: ``SERIES_TAIL_SECONDS x (bits / SERIES_TAIL_BITS) ^ SERIES_TAIL_POWER`` passes
#: through both. Three players, over the denominator multiple, take no rational
#: reconstruction: 0.23 s at 614,000 bits (:data:`SERIES_TAIL_MULTIPLE_SECONDS_PER_BIT`).
SERIES_TAIL_SECONDS = 13.9
SERIES_TAIL_BITS = 31.6e6
SERIES_TAIL_POWER = 1.22
SERIES_TAIL_MULTIPLE_SECONDS_PER_BIT = 4e-7
#: Of that reconstruction, the share of the CRT's groups (the tree below its top
#: levels, in about 64 groups): tasks on the workers in a cluster run (32 % of the 4-
#: player attempt above, 38 % of the five seats').
SERIES_TAIL_GROUPS = 0.35
#: With workers enough that the driver hands the lower levels of its remainders over to
#: the groups (``subproducts.hand_over``), its part shrinks by this factor and the
#: longest group grows by ``SERIES_TAIL_PATH`` against the mean group without its path:
#: at five players' full size (``crt_stages.py --attempt``, ``--workers 64`` against
#: ``--workers 1``) 283 s against 325 s, and 8.6 s against 197 s / 64.
SERIES_TAIL_HANDED = 0.87
SERIES_TAIL_PATH = 2.8


def tail_seconds(bits: float, multiple: bool, workers: int = 1) -> float:
    """The series driver's reconstruction at ``bits`` (:data:`SERIES_TAIL_SECONDS`),
    its CRT's groups (:data:`SERIES_TAIL_GROUPS`) shared by ``workers`` (1: all in
    the driver)."""
    return sum(tail_parts(bits, multiple, workers))


def tail_parts(bits: float, multiple: bool, workers: int = 1,
               threads: int = 2) -> tuple[float, float]:
    """``(driver, groups)``: the seconds of :func:`tail_seconds` that stay in the driver
    (with ``threads`` threads), and those of the CRT's groups on ``workers`` (what more
    workers shorten, down to one group each: an attempt has about 64; with many workers
    each group also goes down its own path, :data:`SERIES_TAIL_HANDED`)."""
    from ladders.solver.engines.series.reconstruct import ReconstructionStream
    from ladders.solver.engines.series.subproducts import hand_over
    if multiple:
        return bits * SERIES_TAIL_MULTIPLE_SECONDS_PER_BIT, 0.0
    whole = SERIES_TAIL_SECONDS * (bits / SERIES_TAIL_BITS) ** SERIES_TAIL_POWER
    if workers <= 1:
        return whole, 0.0
    count = ReconstructionStream.groups
    groups = whole * SERIES_TAIL_GROUPS
    driver = whole - groups
    if hand_over(count, workers, threads) < count:
        driver, groups = driver * SERIES_TAIL_HANDED, groups * SERIES_TAIL_PATH
    return driver, groups / min(workers, count)


def contention(per_machine: int) -> float:
    """The factor a prime's time grows by with ``per_machine`` workers busy on one
    machine (:data:`SERIES_CONTENTION`)."""
    return 1.0 + SERIES_CONTENTION * math.log2(max(1, per_machine))


def series_forecast(chain: AbsorbingChain, players: int, workers: int = 1,
                    per_machine: int | None = None, unit: Unit | None = None) -> dict[str, Any]:
    """The series engine's run from the cost model alone, in no time (no prime is run):
    ``primes``, ``seconds_per_prime`` (CPU of one core alone: the model's units times
    ``unit``, by default this machine's as measured before, else
    :data:`SERIES_UNIT_SECONDS`: :func:`~ladders.solver.calibrate.machine_unit`; its
    ``unit_source`` in words, and ``compile_seconds``, the kernels' first compile where
    numba's cache has none, counted in the start),
    ``core_seconds``, their product, and ``driver_bytes`` (:func:`series_driver_bytes`);
    on ``workers`` workers, ``per_machine`` of them on each machine (default: up to
    :data:`MACHINE_WORKERS`): ``contention`` (:func:`contention`), ``start_seconds``
    (the cluster's start, :data:`SERIES_START_SECONDS`), ``tail_seconds`` (the
    reconstruction after the last batch, :func:`tail_seconds`, its groups on the
    workers) and ``serial_seconds`` (of which the driver's own, :func:`tail_parts`),
    ``seconds`` (the wall time: ``start + primes seconds_per_prime contention / workers
    + tail``), ``core_hours`` (what the workers are held for) and ``busy_core_hours``
    (what they compute, before the tail). What a solve states
    before it starts, what decides that a run is out of reach, and the figures of
    ``ladders plan`` (:func:`series_figures`): one figure everywhere."""
    from ladders.solver.calibrate import machine_unit
    from ladders.solver.engines.series import chain_data, choose_split, needed_bits, split_cost
    data = chain_data(chain)
    primes = series_primes(data, players)
    split = choose_split(data, players)
    unit = unit or machine_unit(SERIES_UNIT_SECONDS, may_measure=False)
    per = split_cost(split) * unit.seconds if primes else 0.0
    factor = contention(min(workers, per_machine or MACHINE_WORKERS))
    serial, shared = tail_parts(needed_bits(data, players), split.multiple, workers) \
        if primes else (0.0, 0.0)
    busy = primes * per * factor / workers
    tail = serial + shared
    start = SERIES_START_SECONDS + unit.compile_seconds if primes else 0.0
    return {"primes": primes, "seconds_per_prime": per, "core_seconds": primes * per,
            "unit_seconds": unit.seconds, "unit_source": unit.source,
            "compile_seconds": unit.compile_seconds if primes else 0.0,
            "driver_bytes": series_driver_bytes(data, players) if primes else 0.0,
            "contention": factor, "start_seconds": start, "tail_seconds": tail,
            "serial_seconds": serial, "seconds": start + busy + tail,
            "core_hours": (start + busy + tail) * workers / 3600,
            "busy_core_hours": busy * workers / 3600}


def series_figures(chain: AbsorbingChain, players: int, workers: int = 2,
                   per_machine: int | None = None) -> dict[str, Any]:
    """The series engine's plan: degrees, digits and primes expected, the CPU time of a
    prime, the driver's and a worker's memory, all from :func:`series_forecast` (the
    calibrated model, its unit measured on this machine once where the kernels are
    compiled: :func:`~ladders.solver.calibrate.machine_unit`), and the wall time and
    core-hours on ``workers`` (``per_machine`` on each machine)."""
    from ladders.solver.calibrate import machine_unit
    from ladders.solver.engines.series import plan_series
    plan = plan_series(chain, players)
    digits = digits_estimate(chain, players)
    if players == 2:
        return {"degrees": [plan.degree_a, plan.degree_b], "split": plan.split,
                "digits_estimate": digits, "primes": 0, "ms_per_prime": 0.0,
                "seconds": 0.0, "how": "over Q in this process (flint), no primes"}
    fc = series_forecast(chain, players, workers, per_machine,
                         machine_unit(SERIES_UNIT_SECONDS, may_measure=True))
    primes = int(fc["primes"])
    return {"degrees": [plan.degree_a, plan.degree_b], "split": plan.split,
            "digits_estimate": digits, "primes": primes,
            "ms_per_prime": round(1000 * fc["seconds_per_prime"], 3),
            "unit_seconds": fc["unit_seconds"], "unit_source": fc["unit_source"],
            "compile_seconds": fc["compile_seconds"],
            "core_seconds": round(fc["core_seconds"], 1),
            "contention": round(fc["contention"], 3),
            "start_seconds": round(fc["start_seconds"], 1),
            "tail_seconds": round(fc["tail_seconds"], 1),
            "serial_seconds": round(fc["serial_seconds"], 1),
            "seconds": round(fc["seconds"], 1),
            "core_hours": round(fc["core_hours"], 2),
            "busy_core_hours": round(fc["busy_core_hours"], 2),
            "bytes": int(fc["driver_bytes"]),
            "worker_bytes": int(series_worker_bytes(plan.data, players)),
            "how": f"{primes:,} primes of {SERIES_PRIME_BITS} bits on {workers} workers"}


#: Terms (unknowns x moves per square ^ players) up to which ``ladders plan`` builds the
#: system to measure it: building is pure Python (5 players on 15 squares: 11,628
#: unknowns but 90 million terms, minutes).
BUILD_LIMIT = 5e6
#: CPU seconds of one term of that build: tiny10 with 5 players, 1.27 million terms in
#: 1.16 s; with 6, 12.0 million in 12.4 s (2026-11-26).
BUILD_SECONDS_PER_TERM = 1.0e-6


def build_terms(chain: AbsorbingChain, players: int) -> float:
    """Terms the race system's build enumerates: unknowns x moves per square ^ players."""
    mean_moves = sum(len(m) for m in chain.moves) / max(len(chain.moves), 1)
    return race_unknowns(len(chain.states), players) * mean_moves ** players
#: Most unknowns of a system ``ladders plan`` builds and factors or plans symbolically.
MEASURE_UNKNOWNS = 20_000


@dataclass(frozen=True)
class Measured:
    """The race's size, and what building its system measured where that is cheap
    (:data:`BUILD_LIMIT`): the system itself, the fill of L + U modulo a prime and
    the CPU seconds of that factorization; else lower bounds (no fill assumed)."""

    size: RaceSize
    system: LinearSystem | None
    lu_nonzeros: int
    factor_seconds: float

    @property
    def measured(self) -> bool:
        return self.system is not None


_MEASURED: dict[tuple[int, int], tuple[AbsorbingChain, Measured]] = {}


def measure(chain: AbsorbingChain, players: int) -> Measured:
    """:class:`Measured` of the race, computed once per chain and player count (every
    engine's row of a plan shares it)."""
    key = (id(chain), players)
    if key in _MEASURED and _MEASURED[key][0] is chain:
        return _MEASURED[key][1]
    size = race_size(chain, players)
    out = Measured(size, None, size.nonzeros, size.nonzeros * NS_PER_NONZERO * 1e-9 * 4)
    if size.unknowns <= MEASURE_UNKNOWNS and build_terms(chain, players) <= BUILD_LIMIT:
        from ladders.solver.engines.modular import Lifter
        from ladders.solver.games.race import race_system
        system = race_system(chain, players)
        order = pivot_order(system, "labels")
        # load the compiled kernels on a 1 x 1 system, so the timing below is the factorization
        Lifter.factor(LinearSystem.from_rows([[(0, 1)]], [0], [(0,)], 0, "warm-up"), [0],
                      random.Random(0))
        t0 = time.process_time()
        lifter = Lifter.factor(system, order, random.Random(1))
        out = Measured(size, system, lifter.lu.nnz, time.process_time() - t0)
    _MEASURED[key] = (chain, out)
    return out


def modular_figures(chain: AbsorbingChain, players: int) -> dict[str, Any]:
    """The modular engine's plan: lifting steps, seconds on one core, peak bytes
    (lower bounds where the fill was not measured)."""
    m = measure(chain, players)
    return {"steps": m.size.steps, "seconds": round(modular_seconds(m.size, m.lu_nonzeros,
                                                                   m.factor_seconds), 1),
            "bytes": modular_bytes(m.size, m.lu_nonzeros), "lower_bound": not m.measured,
            "lu_nonzeros": m.lu_nonzeros, "factor_seconds": round(m.factor_seconds, 3)}


def modular_memory_seconds(chain: AbsorbingChain, players: int) -> float:
    """CPU seconds of the modular engine's solve in this process, the build of the race
    system included (:data:`BUILD_SECONDS_PER_TERM`): what a cross-check by it costs
    (tiny10 with 6 players: 12 s to build, 1 s to solve)."""
    m = measure(chain, players)
    return (build_terms(chain, players) * BUILD_SECONDS_PER_TERM
            + modular_seconds(m.size, m.lu_nonzeros, m.factor_seconds))


def crt_figures(chain: AbsorbingChain, players: int, workers: int) -> dict[str, Any]:
    """The crt engine's plan: primes (one LU each) and seconds on ``workers`` workers;
    ``size`` is the race's :class:`RaceSize` (not JSON: the caller drops it)."""
    m = measure(chain, players)
    return {"primes": m.size.primes, "workers": workers,
            "seconds": round(crt_seconds(m.size, m.factor_seconds, workers), 1),
            "lower_bound": not m.measured, "size": m.size}


#: The elimination engine's CPU seconds per row update of the plan at an answer of
#: :data:`ELIMINATION_DIGITS` digits, and how that cost grows with the digits: a fit
#: to two measured runs on this project's 2-core machine (hasbro: 28.3 M updates, 4,453
#: digits, 496-557 s on the workers; hasbro cut at 60: 1.65 M updates, 1,313 digits,
#: about 4 s), so read it as a rough figure.
ELIMINATION_SECONDS_PER_UPDATE = 18.7e-6
ELIMINATION_DIGITS = 4453
ELIMINATION_EXPONENT = 1.6
#: Most nonzeros of L + U (measured modulo a prime) for which ``ladders plan`` makes the
#: elimination's symbolic plan: hasbro cut at 60 (111,696) takes 0.2 s, the full board
#: (638,398) 2.9 s, too long for a plan that should take about a second.
ELIMINATION_PLAN_FILL = 200_000


def elimination_figures(chain: AbsorbingChain, players: int, workers: int) -> dict[str, Any]:
    """The elimination engine's plan: its tasks, row updates and fill from the symbolic
    plan (where the system is cheap to build), and the seconds on ``workers`` workers
    from the fit above; ``size`` is the race's :class:`RaceSize` (not JSON)."""
    m = measure(chain, players)
    if m.system is None or m.lu_nonzeros > ELIMINATION_PLAN_FILL:
        what = (f"{m.size.unknowns:,} unknowns" if m.system is None
                else f"{m.lu_nonzeros:,} nonzeros in L + U")
        return {"seconds": None, "size": m.size,
                "how": f"a system of {what} takes too long to plan symbolically here "
                       "(measured runs: docs/benchmarks.md)"}
    from ladders.solver.engines.elimination_plan import make_plan
    plan = make_plan(m.system)
    per = ELIMINATION_SECONDS_PER_UPDATE * (m.size.digits / ELIMINATION_DIGITS) ** ELIMINATION_EXPONENT
    return {"tasks": len(plan.tasks()), "updates": plan.updates, "fill": plan.fill,
            "seconds": round(plan.updates * per / workers, 1), "size": m.size}


def race_figures(chain: AbsorbingChain, players: int) -> dict[str, Any]:
    """What ``ladders plan`` reports of the race itself, before any engine's row."""
    m = measure(chain, players)
    size = m.size
    return {"players": players, "formulation": size.formulation, "states": size.states,
            "recurrent_states": size.recurrent, "unknowns": size.unknowns,
            "nonzeros": m.system.nnz if m.system is not None else size.nonzeros,
            "nonzeros_exact": m.measured or size.nonzeros_exact, "digits_estimate": size.digits,
            "lu_nonzeros": m.lu_nonzeros, "lu_measured": m.measured,
            "factor_seconds": round(m.factor_seconds, 3)}


# ---------------------------------------------------------------- chains
#: The chain engines' cost model (``ladders plan CHAIN``): the seconds of the engine's
#: solve in this process, ``CHAIN_FIXED_SECONDS`` plus rates times the work it counts.
#: Fitted by timing each engine's in-process call (structure and ``solve_topological``;
#: ``make_plan`` and ``eliminate_target``; ``solve_dixon``), one fresh process a chain,
#: on the 2-core machine while other work ran: random chains of 1,000 to 200,000
#: states stepping to 3 of their next 5 states (no cycle, or a step back every 4 or 8
#: states), and the bump chains of tiny10 for 2 to 4 pieces. The answer's digits,
#: unknown before the solve, move every engine's time, so this is a rough fit: within
#: a factor of 3 (components) and 5 (elimination, modular) on those chains.
CHAIN_FIXED_SECONDS = 0.02
#: Components engine: a nonzero of ``A`` (1e-5 s; 0.2 s at 3,944 nonzeros, 15 s at
#: 791,445 for the chain without cycles, whose answers are long) and a product of its
#: dense solves (``Structure.dense_work``: tiny10 bump 2, 885,329 products, 0.18 s).
COMPONENTS_SECONDS_PER_NONZERO = 1.2e-5
COMPONENTS_SECONDS_PER_PRODUCT = 2.0e-7
#: Elimination engine (where the chain is sparse): a row-entry update of the symbolic
#: elimination times the unknowns, which stand for the growth of the fractions' digits
#: (29,688 updates of 9,899 unknowns: 1.6 s; 1,420,960 of 904: 2.4 s).
ELIMINATION_SECONDS_PER_UPDATE_UNKNOWN = 5e-9
#: Modular engine (chosen where the chain is neither topological nor sparse: the fill
#: of its LU is large): the square of the unknowns (904: 0.16 s, 6,413: 21 s).
MODULAR_SECONDS_PER_UNKNOWN_SQUARED = 4e-7


def chain_seconds(problem: Any, engine: str) -> float | None:
    """The seconds of ``engine``'s solve of a chain question
    (:class:`~ladders.solver.chain_problem.ChainProblem`) in this process, from the
    cost model above; None where it has none (the elimination on a chain that is not
    sparse, or another engine)."""
    size = problem.size
    if engine == "components":
        work = (COMPONENTS_SECONDS_PER_NONZERO * size.nonzeros
                + COMPONENTS_SECONDS_PER_PRODUCT * problem.structure.dense_work)
    elif engine == "elimination" and problem.symbolic is not None:
        updates = sum(problem.symbolic[1][1])
        work = ELIMINATION_SECONDS_PER_UPDATE_UNKNOWN * updates * size.unknowns
    elif engine == "modular":
        work = MODULAR_SECONDS_PER_UNKNOWN_SQUARED * size.unknowns ** 2
    else:
        return None
    return CHAIN_FIXED_SECONDS + work
