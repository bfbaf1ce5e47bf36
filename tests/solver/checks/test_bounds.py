"""Markov bounds: SPEC 3 reference values, the exact identity, and bracketing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from examples import EXAMPLES
from ladders.solver.games.board import make_board, preset_board
from ladders.solver.checks import bounds as bounds_module
from ladders.solver.checks.bounds import (TERMS_BATCH, bounds_sequence, bounds_to_digits,
                                          bounds_within, markov_bounds)
from ladders.solver.checks.verify import check_against_bounds
from ladders.solver.games.chain import build_chain, length_distribution
from ladders.solver.exact import fraction_to_decimal, mpq
from race_solve import solve_race
from strategies import small_boards

HASBRO = build_chain(preset_board("hasbro"))


def rounded(x: mpq, digits: int) -> str:
    """Decimal of x rounded half up to ``digits`` places (how SPEC 3 prints them)."""
    return fraction_to_decimal(x + mpq(5, 10 ** (digits + 1)), digits)


def test_hasbro_reference_bounds() -> None:
    b9 = markov_bounds(HASBRO, 2, 9)
    assert rounded(b9.lower[0], 16) == "0.5000354014697371"
    assert rounded(b9.upper[0], 16) == "0.9871574175503698"
    b100 = markov_bounds(HASBRO, 2, 100)
    assert rounded(b100.lower[0], 16) == "0.5077919995055961"
    assert rounded(b100.upper[0], 15) == "0.508324577264544"
    b500 = markov_bounds(HASBRO, 2, 500)
    assert fraction_to_decimal(b500.lower[0], 16) == fraction_to_decimal(b500.upper[0], 16) == "0.5078027734609139"


def test_digits_finds_the_smallest_n() -> None:
    b = bounds_to_digits(HASBRO, 2, 16)
    assert b.agree_digits(16)
    assert not markov_bounds(HASBRO, 2, b.moves - 1).agree_digits(16)
    assert b.moves <= 500


def test_seats_and_gap_add_up_to_one_exactly() -> None:
    survive = 1 - length_distribution(HASBRO, 60)[-1][1]
    for k in (2, 3, 4, 6):
        b = markov_bounds(HASBRO, k, 60)
        gap = b.upper[0] - b.lower[0]
        if k == 2:
            assert gap == survive ** 2 / 2
            assert b.lower[1] == 1 - b.upper[0]
        else:
            assert gap == survive ** k
            assert sum(b.lower, mpq(0)) + gap == 1
            assert all(up - lo == gap for lo, up in zip(b.lower, b.upper))


def test_bounds_bracket_the_exact_examples() -> None:
    for ex in EXAMPLES.values():
        chain = build_chain(ex.board)
        seats = solve_race(chain, ex.players).seats
        for n in (1, 5, 30, 200):
            b = markov_bounds(chain, ex.players, n)
            assert all(lo <= p <= up for lo, p, up in zip(b.lower, seats, b.upper)), (ex.name, n)


@settings(max_examples=25, deadline=None)
@given(board=small_boards(max_end=8), players=st.integers(2, 3), n=st.integers(1, 60))
def test_bounds_bracket_random_boards(board, players: int, n: int) -> None:
    chain = build_chain(board)
    seats = solve_race(chain, players).seats
    b = markov_bounds(chain, players, n)
    assert all(lo <= p <= up for lo, p, up in zip(b.lower, seats, b.upper))


def test_bounds_pin_an_answer_that_is_a_short_decimal():
    """3/5 = 0.6 (two players, end 2, die 3): the bounds are 0.5999... and 0.6000... after
    any number of moves, so their digits never agree; the searches stop once they pin it
    (before: the exact search walked towards its million-move limit, for hours)."""
    chain = build_chain(make_board("threefifths", 0, 2, 3, "stay", []))
    assert solve_race(chain, 2).seats == [mpq(3, 5), mpq(2, 5)]
    for bounds in (bounds_to_digits(chain, 2, 16), bounds_within(chain, 2, 16, 5.0)):
        assert not bounds.agree_digits(16) and bounds.settled(16) and bounds.budget is None
        assert bounds.pinned_seats(16) == [0, 1] and bounds.moves < 200
        assert bounds.lower[0] < mpq(3, 5) < bounds.upper[0]
    report = check_against_bounds(chain, 2, [mpq(3, 5), mpq(2, 5)])
    assert report["passed"] and report["digits"] == 16 and "0.6" in report["pinned"]
    # a wrong answer 1e-20 from 0.6 is outside bounds that narrow: refused
    assert not check_against_bounds(chain, 2, [mpq(3, 5) + mpq(1, 10**20), mpq(2, 5)])["passed"]


def test_every_seat_is_its_defining_sum() -> None:
    """lower_j(n) = sum_{t<=n} f(t) (1-F(t))^(j-1) S(t)^(k-j), term by term with
    fractions: the integer walk derives one seat from the others and the gap, and its
    products come in runs of TERMS_BATCH throws (n on both sides of the runs' ends)."""
    for chain in (HASBRO, build_chain(EXAMPLES["tiny10-2"].board)):
        dist = length_distribution(chain, 2 * TERMS_BATCH + 1)
        for k in (2, 3, 4, 5, 6):
            for n in (1, 2, 7, TERMS_BATCH, TERMS_BATCH + 1, 2 * TERMS_BATCH + 1):
                b = markov_bounds(chain, k, n)
                f = [mpq(0)] + [x for x, _ in dist[:n]]
                F = [mpq(0)] + [x for _, x in dist[:n]]
                if k == 2:
                    lower = mpq(1, 2) + sum((x * x for x in f), mpq(0)) / 2
                    assert b.lower[0] == lower and b.upper[0] == lower + (1 - F[n]) ** 2 / 2
                    continue
                for j in range(1, k + 1):
                    lower = sum((f[t] * (1 - F[t]) ** (j - 1) * (1 - F[t - 1]) ** (k - j)
                                 for t in range(1, n + 1)), mpq(0))
                    assert b.lower[j - 1] == lower, (k, n, j)
                    assert b.upper[j - 1] == lower + (1 - F[n]) ** k


def test_one_core_walks_as_the_threads_do(monkeypatch) -> None:
    """Where the process has one core the walk makes its products itself, run by run,
    instead of in a pool of threads after THREADS_AFTER throws: the same bounds, every
    seat, k = 2..6, at every n around the runs' ends (the pool's first runs included)."""
    monkeypatch.setattr(bounds_module, "THREADS_AFTER", 2 * TERMS_BATCH)
    moves = 7 * TERMS_BATCH + 3
    threaded = [bounds_sequence(HASBRO, k, moves) for k in range(2, 7)]
    monkeypatch.setattr(bounds_module, "cores", lambda: 1)
    assert [bounds_sequence(HASBRO, k, moves) for k in range(2, 7)] == threaded


@settings(max_examples=30, deadline=None)
@given(board=small_boards(), players=st.integers(2, 4), digits=st.integers(1, 12))
def test_the_search_stops_where_the_bounds_first_settle(board, players: int, digits: int) -> None:
    """The search skips the gap and the fractions while they cannot settle: it must
    still stop at the first n whose exact bounds settle (every n checked in fractions)."""
    chain = build_chain(board)
    found = bounds_to_digits(chain, players, digits, max_moves=400)
    every = bounds_sequence(chain, players, found.moves)
    assert [b.settled(digits) for b in every].index(True) == found.moves - 1
    assert every[-1] == found


BUSY_CHILD = """
import os, signal, threading
from ladders.solver.checks.bounds import bounds_within
from ladders.solver.checks.verify import check_against_bounds
from ladders.solver.games.board import make_board
from ladders.solver.games.chain import build_chain
chain = build_chain(make_board("slow", 0, 100, 1000, "stay", []))
print("ready", flush=True)
# 0.3 s into the bounds' 4 s this process stops itself; the parent continues it 4 s later
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGSTOP)).start()
b = bounds_within(chain, 2, 16, 4.0)
print(check_against_bounds(chain, 2, b.lower, 16, b)["stopped"], flush=True)
"""


def test_bounds_stopped_on_a_busy_machine_say_so() -> None:
    # issue 40: bounds stopped by their budget on a busy machine said "the bounds
    # converge slowly"; here the process gets no CPU for 4 s of their 4 s
    import signal
    import subprocess
    import sys
    import time
    child = subprocess.Popen([sys.executable, "-c", BUSY_CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        time.sleep(4.3)
        child.send_signal(signal.SIGCONT)
        said, _ = child.communicate(timeout=120)
    finally:
        child.kill()
    assert child.returncode == 0
    assert said.startswith("the machine was busy: after 4 s ("), said
    assert "moves they agree to" in said and "of the 16 digits asked" in said
