"""Markov bounds on race win probabilities: the published "diagonal squares" argument.

Two players (seat 1 moves first): seat 1 wins iff ``T1 <= T2``, so
``P = 1/2 + 1/2 sum_t f(t)^2`` and, after n moves,

    lower(n) = 1/2 + 1/2 sum_{t<=n} f(t)^2,   upper(n) = lower(n) + (1 - F(n))^2 / 2,

because ``sum_{t>n} f(t)^2 <= (sum_{t>n} f(t))^2``. Seat 2 gets ``[1 - upper, 1 - lower]``.

k players, seat j (1-based): seat j wins on throw t when it finishes then, the seats
before it have not finished within t throws and those after it not within t - 1:

    P_j = sum_t f(t) (1 - F(t))^(j-1) S(t)^(k-j),   S(t) = 1 - F(t-1),

lower(n) is the sum to n, and ``upper(n) = lower(n) + (1 - F(n))^k`` (nobody finished
within n rounds). Exactly, ``sum_j lower_j(n) + (1 - F(n))^k = 1``.

Everything is integer-scaled (see :mod:`ladders.solver.games.chain`): with ``f(t) = a_t/d^t`` and
``1 - F(t) = s_t/d^t`` the partial sums are kept as one integer over ``d^(nk)``, so a
step costs a few big-integer multiplications instead of fraction arithmetic.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import islice

from ladders.solver.forked import cores
from ladders.solver.games.chain import AbsorbingChain, iter_throws
from ladders.solver.exact import fraction_to_decimal, mpq, mpz, release_gil, releasing_gil

#: Decimal digits of the common denominator ``d^(nk)`` of the bounds after n moves up
#: to which ``ladders bounds`` computes them: the cost of a move grows with them (hasbro
#: with two players: 64,254 moves, about 35 s), and the exact output is that long.
MAX_BOUND_DIGITS = 100_000

#: Decimals past the ``D`` asked to which the bounds pin an answer that is itself a
#: decimal of at most ``D`` places. The bounds of 3/5 (two players, end 2, die 3) are
#: 0.5999... and 0.6000... after any number of moves: their digits never agree, and a
#: search for agreement walked to its move limit (hours). Bounds narrower than
#: ``10^-(D + PIN_DIGITS)`` that straddle such a decimal stop the search instead.
PIN_DIGITS = 16


def _same_digits(lo: mpq, up: mpq, scale: mpz) -> bool:
    """``floor(lo scale) == floor(up scale)``: lo and up agree in their decimals down to
    ``1/scale`` (no decimal strings: this runs at every move of a search)."""
    return (lo.numerator * scale) // lo.denominator == (up.numerator * scale) // up.denominator


@dataclass(frozen=True)
class Bounds:
    """``lower[j] <= P_j <= upper[j]`` for every seat j, after ``moves`` throws per player
    (``budget``: the seconds after which the walk stopped before the bounds agreed, and
    ``cpu``: the CPU seconds this process had in them, which tell a busy machine from
    bounds that converge slowly)."""

    players: int
    moves: int
    lower: list[mpq]
    upper: list[mpq]
    budget: float | None = None
    cpu: float | None = None

    def busy(self) -> bool:
        """The walk stopped at its budget having had under half of it as CPU: the
        machine was busy (the same test as the chain bounds')."""
        return self.budget is not None and self.cpu is not None and self.cpu < self.budget / 2

    def agree_digits(self, digits: int) -> bool:
        """True when lower and upper agree in their first ``digits`` decimals, every seat."""
        scale = mpz(10) ** digits
        return all(_same_digits(lo, up, scale) for lo, up in zip(self.lower, self.upper))

    def pinned_seats(self, digits: int) -> list[int]:
        """Seats whose bounds straddle a decimal ``c`` of at most ``digits`` places
        (``lower < c <= upper``, so their first ``digits`` decimals differ) and are
        narrower than ``10^-(digits + PIN_DIGITS)``: the answer is ``c`` or that close to
        it, and no more moves make the digits agree if it is ``c`` (see :data:`PIN_DIGITS`)."""
        scale, fine = mpz(10) ** digits, mpz(10) ** (digits + PIN_DIGITS)
        return [j for j, (lo, up) in enumerate(zip(self.lower, self.upper))
                if not _same_digits(lo, up, scale) and (up - lo) * fine < 1]

    def settled(self, digits: int) -> bool:
        """Every seat's bounds agree to ``digits`` decimals or pin a decimal of at most
        ``digits`` places (:meth:`pinned_seats`): more moves would tell nothing new."""
        if self.agree_digits(digits):
            return True
        scale, pinned = mpz(10) ** digits, set(self.pinned_seats(digits))
        return all(j in pinned or _same_digits(lo, up, scale)
                   for j, (lo, up) in enumerate(zip(self.lower, self.upper)))

    def agreeing_digits(self, most: int) -> int:
        """How many leading decimals (at most ``most``) lower and upper share, every seat."""
        agree = most
        for lo, up in zip(self.lower, self.upper):
            a, b = fraction_to_decimal(lo, most), fraction_to_decimal(up, most)
            same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
            agree = min(agree, max(0, same - a.index(".") - 1))
        return agree


def moves_limit(chain: AbsorbingChain, players: int) -> int:
    """Moves whose bounds have denominators of :data:`MAX_BOUND_DIGITS` digits."""
    return max(1, int(MAX_BOUND_DIGITS / (players * math.log10(max(chain.die, 2)))))


def digits_per_move(chain: AbsorbingChain, players: int, moves: int = 4096) -> float:
    """About how many decimal digits of agreement one more move adds to the bounds:
    ``-players log10(lambda)``, with ``lambda`` the rate at which one player's
    probability of not having finished shrinks per throw, measured in floating point
    over the second half of ``moves`` throws (inf when every game ends by then)."""
    import numpy as np
    rows = np.array([i for i, mv in enumerate(chain.moves) for _ in mv], dtype=np.int64)
    cols = np.array([j for mv in chain.moves for j, _ in mv], dtype=np.int64)
    probs = np.array([c for mv in chain.moves for _, c in mv], dtype=np.float64) / chain.die
    v = np.zeros(len(chain.states))
    v[chain.start_index] = 1.0
    log_survival = 0.0  # log10 of the survival since the half-way throw
    for t in range(moves):
        v = np.bincount(cols, weights=v[rows] * probs, minlength=len(v))
        total = float(v.sum())
        if total == 0.0:
            return math.inf
        if t >= moves // 2:
            log_survival += math.log10(total)
        v /= total
    return -players * log_survival / (moves - moves // 2)


def check_digits(chain: AbsorbingChain, players: int, digits: int, flags: bool = False) -> None:
    """Refuse ``digits`` the bounds reach only beyond :func:`moves_limit`, by the
    estimate of :func:`digits_per_move` (``ValueError`` naming the limit and the fix),
    and anything but a whole number of at least 1. ``flags``: the message names the
    command line's ``--digits D``, else the API's ``digits=D``."""
    _whole("digits", digits, 1, flags)
    rate = digits_per_move(chain, players)
    limit = moves_limit(chain, players)
    if rate * limit < digits:
        need = f"about {digits / rate:,.0f} moves" if rate > 0 else "more moves than any limit"
        raise ValueError(f"{_named('digits', digits, flags)}: the bounds agree to that many digits only after "
                         f"{need}, beyond the limit of {limit:,} (fractions of "
                         f"{MAX_BOUND_DIGITS:,} digits); ask for at most {int(rate * limit):,} "
                         f"digits on this board with {players} players")


def _named(name: str, value: object, flags: bool) -> str:
    """``--moves 1,000`` (the command line) or ``moves=1000`` (the API)."""
    if flags:
        return f"--{name} {value:,}" if isinstance(value, int) else f"--{name} {value!r}"
    return f"{name}={value!r}"


def _whole(name: str, value: object, least: int, flags: bool) -> None:
    """``ValueError`` unless ``value`` is an int (not a bool) of at least ``least``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{_named(name, value, flags)}: give a whole number of at least {least}")


def check_moves(chain: AbsorbingChain, players: int, moves: int, flags: bool = False) -> None:
    """Refuse bounds after more moves than :func:`moves_limit` (``ValueError`` naming
    the limit, the value and the fix), and anything but a whole number of at least 0
    (after 0 moves the bounds are the trivial bracket). ``flags``: as
    :func:`check_digits`."""
    _whole("moves", moves, 0, flags)
    limit = moves_limit(chain, players)
    if moves > limit:
        digits = moves * players * math.log10(max(chain.die, 2))
        raise ValueError(f"{_named('moves', moves, flags)}: bounds after that many moves are fractions of "
                         f"{digits:,.0f} digits, beyond the limit of {MAX_BOUND_DIGITS:,} digits; "
                         f"ask for at most {limit:,} moves on this board with {players} players")


@dataclass
class _Walked:
    """The bounds after n throws as integers over ``denom = d^(nk)``, the costly parts
    made only when asked for (a search needs them at the last few throws only).

    Two players: ``sums = [S_n]`` with ``lower = (d^{2n} + S_n) / (2 d^{2n})`` and
    ``gap = s_n^2`` (so ``upper = lower + gap / (2 d^{2n})``). k players: ``sums[j]``
    with ``lower_j = sums[j] / d^{nk}`` and ``gap = s_n^k``; the middle seat's sum is
    ``None`` until :meth:`bounds` derives it from ``sum_j sums[j] + gap = d^{nk}``."""

    players: int
    n: int
    sums: list[mpz | None]
    s: mpz
    denom: mpz

    @cached_property
    def gap(self) -> mpz:
        """``s_n^k``: the chance, times ``d^{nk}``, that nobody finished in n rounds."""
        return self.s ** self.players

    def narrower_than(self, scale: mpz) -> bool:
        """``upper - lower < 1/scale`` (every seat's bounds are that far apart). The bit
        lengths decide it without ``gap`` while the gap is wide: ``gap >= 2^(k (b - 1))``
        for an s of b >= 1 bits."""
        half = 2 if self.players == 2 else 1
        least = self.players * (self.s.bit_length() - 1) + scale.bit_length() - 1
        if self.s and least >= (half * self.denom).bit_length():
            return False
        return self.gap * scale < half * self.denom

    def _ends(self) -> tuple[list[tuple[mpz, mpz]], mpz]:
        """Every seat's ``(lower, upper)`` numerators over one common denominator."""
        k, denom, gap = self.players, self.denom, self.gap
        if k == 2:
            lo = denom + self.sums[0]
            return [(lo, lo + gap), (denom - self.sums[0] - gap, denom - self.sums[0])], 2 * denom
        known = [v for v in self.sums if v is not None]
        sums = [denom - gap - sum(known, mpz(0)) if v is None else v for v in self.sums]
        return [(v, v + gap) for v in sums], denom

    def may_settle(self, digits: int) -> bool:
        """False when :meth:`Bounds.settled` is surely False: some seat's decimals differ
        and its bounds are wider than a pinned decimal allows. Integer divisions, without
        the gcds of lowest terms (3 players to 1,000 digits: 25 moves between the first
        narrow enough gap and agreement, 22 ms each in fractions)."""
        ends, den = self._ends()
        scale = mpz(10) ** digits
        if all((lo * scale) // den == (up * scale) // den for lo, up in ends):
            return True
        return self.narrower_than(mpz(10) ** (digits + PIN_DIGITS))

    def bounds(self) -> Bounds:
        """The exact :class:`Bounds` (fractions in lowest terms)."""
        ends, den = self._ends()
        return Bounds(self.players, self.n, [mpq(lo, den) for lo, _ in ends],
                      [mpq(up, den) for _, up in ends])


#: Throws whose big products one task of the walk's thread pool makes (:func:`_terms`).
TERMS_BATCH = 64
#: Batches in flight ahead of the one the walk is summing.
TERMS_AHEAD = 4
#: Throws the walk makes alone before it starts its threads: until then the numbers are
#: small and threads cost more than they save (3 players to 100 digits: 1,923 throws).
THREADS_AFTER = 2048


def _terms(players: int, throws: list[tuple[mpz, mpz]], s_before: mpz, d: mpz) -> list[list[mpz]]:
    """The big products of a run of throws: for each ``(a_t, s_t)`` the terms
    ``a_t s_t^j (d s_(t-1))^(k-1-j)`` of every seat j but the middle one, ``k // 2``
    (two players: ``[a_t^2]``); ``s_before`` is the ``s`` of the throw before the first.

    The powers of ``d s_(t-1)`` are the last throw's powers of s times powers of d (3
    players: a throw costs a square of b bits and two products of b by 2b bits), so
    runs of throws are independent of each other: the walk hands them to threads
    (:func:`_iter_terms`)."""
    k = players
    if k == 2:
        return [[a * a] for a, _ in throws]
    mid = k // 2
    d_pow = [d ** m for m in range(k)]
    s_pow = [s_before ** m for m in range(k)]
    out = []
    for a, s in throws:
        last = [s_pow[m] * d_pow[m] for m in range(k)]          # (d s_(t-1))^m
        s_pow = [mpz(1), s]
        for _ in range(k - 2):
            s_pow.append(s_pow[-1] * s)                         # s_t^0 .. s_t^(k-1)
        row = []
        for j in range(k):
            if j == mid:
                continue
            if j == 0:
                row.append(a * last[k - 1])
            elif j == k - 1:
                row.append(a * s_pow[k - 1])
            else:
                row.append(a * (s_pow[j] * last[k - 1 - j]))
        out.append(row)
    return out


def _iter_terms(chain: AbsorbingChain, players: int,
                threads: bool = True) -> Iterator[tuple[mpz, list[mpz]]]:
    """Yield ``(s_t, terms)`` for t = 1, 2, ... (:func:`_terms`), the terms made
    :data:`TERMS_BATCH` throws at a time; after :data:`THREADS_AFTER` throws by a pool of
    two threads where the process has two cores or more.

    gmpy2 lets go of the interpreter lock inside its operations when the thread's context
    says so (``allow_release_gil``), so the pool's products run beside each other and
    beside this thread's walk, the recurrence of :func:`iter_throws`. Its products are
    small, but they let go of the lock too: the pool's threads then get it back between
    their products at once instead of after the interpreter's switch interval (with the
    walk keeping the lock, two players to 1,000 digits took 2.8-2.9 s against 2.5 s
    alone; letting go, 2.0 s). On hasbro to 1,000 digits, with 3 players the walk is
    0.8 s and the products 2.6 s of one core; the two cores of this machine slow each
    other's products by about 1.3x.
    """
    d = mpz(chain.die)
    throws = iter_throws(chain)
    alone = not threads or cores() < 2
    s_before, made = mpz(1), 0
    while alone or made < THREADS_AFTER:
        batch = list(islice(throws, TERMS_BATCH))
        for (_, s), row in zip(batch, _terms(players, batch, s_before, d)):
            yield s, row
        s_before, made = batch[-1][1], made + len(batch)
    pending: deque[tuple[list[tuple[mpz, mpz]], Future]] = deque()
    with releasing_gil(), ThreadPoolExecutor(2, thread_name_prefix="ladders-bounds",
                                             initializer=release_gil) as pool:
        try:
            while True:
                while len(pending) < TERMS_AHEAD:
                    batch = list(islice(throws, TERMS_BATCH))
                    pending.append((batch, pool.submit(_terms, players, batch, s_before, d)))
                    s_before = batch[-1][1]
                batch, future = pending.popleft()
                for (_, s), row in zip(batch, future.result()):
                    yield s, row
        finally:
            for _, future in pending:
                future.cancel()


def _iter_bounds(chain: AbsorbingChain, players: int, threads: bool = True) -> Iterator[_Walked]:
    """Yield the bounds after n = 1, 2, ... throws (:class:`_Walked`).

    Seat j's term at throw t is ``a_t s_t^j (d s_(t-1))^(k-1-j)`` (:func:`_terms`), and
    one seat in the middle, whose term would cost two products, follows from the
    identity ``sum_j sums[j] + s_n^k = d^{nk}`` when the bounds are made, as does the
    gap: a throw costs ``2k - 4`` products of big numbers and a square (3 players: 2 and
    1, where each seat's own term and the gap took 10), made in threads
    (:func:`_iter_terms`); here they are summed, Horner's way, over ``d^{nk}``.
    """
    k = players
    dk = mpz(chain.die) ** k
    denom = mpz(1)
    sums: list[mpz | None] = [mpz(0)] * (1 if k == 2 else k)
    seats = [0] if k == 2 else [j for j in range(k) if j != k // 2]
    if k > 2:
        sums[k // 2] = None
    terms = _iter_terms(chain, k, threads)
    with closing(terms):
        for n, (s, row) in enumerate(terms, start=1):
            denom *= dk
            for j, term in zip(seats, row):
                sums[j] = sums[j] * dk + term
            yield _Walked(k, n, list(sums), s, denom)


def _trivial(players: int) -> Bounds:
    """After 0 moves nothing is known: seat 1 in [1/2, 1] (two players), else [0, 1]."""
    if players == 2:
        return Bounds(2, 0, [mpq(1, 2), mpq(0)], [mpq(1), mpq(1, 2)])
    return Bounds(players, 0, [mpq(0)] * players, [mpq(1)] * players)


def check_players(players: int) -> None:
    """Races have 2 to 6 seats (SPEC 1.4); bounds and exact solves share this check."""
    if not isinstance(players, int) or isinstance(players, bool) or not 2 <= players <= 6:
        raise ValueError(f"players must be a whole number from 2 to 6, got {players!r}")


def markov_bounds(chain: AbsorbingChain, players: int, moves: int,
                  progress: Callable[[int, int], None] | None = None) -> Bounds:
    """Exact bounds for every seat after ``moves`` throws per player
    (``progress(n, moves)`` every few moves). After 0 moves nothing is known: the
    trivial bracket (two players: seat 1 in [1/2, 1]; more: every seat in [0, 1])."""
    check_players(players)
    if moves < 0:
        raise ValueError(f"moves must be at least 0, got {moves}")
    if moves == 0:
        return _trivial(players)
    with closing(_iter_bounds(chain, players)) as walk:
        for walked in walk:
            if progress is not None and walked.n % 64 == 0:
                progress(walked.n, moves)
            if walked.n == moves:
                return walked.bounds()
    raise AssertionError("unreachable: iter_throws never ends")


def bounds_sequence(chain: AbsorbingChain, players: int, moves: int) -> list[Bounds]:
    """Exact bounds after every n = 1..``moves`` throws per player, in one pass.

    Calling :func:`markov_bounds` for each n would redo the first n throws every time;
    this walks the chain once (the convergence picture needs every n).
    """
    check_players(players)
    if moves < 1:
        raise ValueError(f"moves must be at least 1, got {moves}")
    out = []
    with closing(_iter_bounds(chain, players)) as walk:
        for walked in walk:
            out.append(walked.bounds())
            if walked.n == moves:
                return out
    raise AssertionError("unreachable: iter_throws never ends")


def bounds_to_digits(chain: AbsorbingChain, players: int, digits: int,
                     max_moves: int = 1_000_000,
                     progress: Callable[[int, int], None] | None = None) -> Bounds:
    """Bounds after the smallest n at which lower and upper agree to ``digits`` decimals,
    or pin a decimal of at most ``digits`` places (:meth:`Bounds.pinned_seats`)
    (``ValueError`` if neither within ``max_moves``).

    Agreement is only tested once the gap is below ``10^-digits`` (before that it is
    impossible), so most steps cost no division. ``progress(n, digits_so_far)`` is
    called every few moves (digits: those the gap allows so far).
    """
    bounds = _search(chain, players, digits, max_moves, None, progress)
    if not bounds.settled(digits):
        raise ValueError(f"the bounds did not agree to {digits:,} digits within {max_moves:,} moves; "
                         "ask for fewer digits")
    return bounds


def bounds_within(chain: AbsorbingChain, players: int, digits: int, seconds: float,
                  threads: bool = True) -> Bounds:
    """Bounds after the smallest n at which they agree to ``digits`` decimals, or, if
    that takes longer than ``seconds``, the bounds after the last n reached: still
    exact bounds, which agree to fewer digits (:meth:`Bounds.agreeing_digits`), with the
    budget and the CPU seconds spent (:meth:`Bounds.busy`). For
    verification, whose cost must stay bounded on boards where the bounds converge
    slowly (31 squares that only a 6 advances: 16 digits need 18,599 moves, a minute).
    ``threads=False``: the walk's products in this thread only, for a caller whose
    cores are busy anyway (the threads cost a fifth more CPU: 3 players on hasbro to
    1,000 digits, 4.0 s of CPU in 2.4 s against 3.3 s in 3.3 s)."""
    cpu = time.process_time()
    bounds = _search(chain, players, digits, None, time.monotonic() + seconds, None, threads)
    return bounds if bounds.settled(digits) else replace(bounds, budget=seconds,
                                                         cpu=time.process_time() - cpu)


def _search(chain: AbsorbingChain, players: int, digits: int, max_moves: int | None,
            deadline: float | None, progress: Callable[[int, int], None] | None,
            threads: bool = True) -> Bounds:
    """The loop of :func:`bounds_to_digits` and :func:`bounds_within`: it stops at
    agreement (or a pinned decimal), at ``max_moves`` or after ``deadline``
    (``time.monotonic``)."""
    check_players(players)
    if digits < 1:
        raise ValueError(f"digits must be at least 1, got {digits}")
    scale = mpz(10) ** digits
    log2_10 = math.log2(10)
    with closing(_iter_bounds(chain, players, threads)) as walk:
        for walked in walk:
            n = walked.n
            if walked.narrower_than(scale) and walked.may_settle(digits):
                bounds = walked.bounds()
                if bounds.settled(digits):
                    return bounds
            if n % 64 == 0:
                if progress is not None:
                    gap_bits = walked.gap.bit_length()
                    progress(n, max(0, int((walked.denom.bit_length() - gap_bits) / log2_10)))
                if deadline is not None and time.monotonic() > deadline:
                    return walked.bounds()
            if max_moves is not None and n >= max_moves:
                return walked.bounds()
    raise AssertionError("unreachable: iter_throws never ends")
