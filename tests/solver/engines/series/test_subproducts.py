"""The CRT without big inverses (groups, subproduct trees) against the pairwise CRT, its
groups on real Dask workers reading a real store, and the driver benchmark's own check
at a small scale."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladders.solver.engines.series import ntt_primes
from ladders.solver.engines.series.reconstruct import (ReconstructionStream,
                                                       crt_simple, crt_tree)
from ladders.solver.engines.series.subproducts import (Group, combine_up, crt_columns,
                                                       crt_grouped, product_tree, remainders_down)
from ladders.solver.exact import invert, mpq, mpz

PRIMES = [q for q, _ in zip(ntt_primes(11), range(300))]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 300), st.integers(1, 4), st.data())
def test_grouped_crt_is_the_pairwise_crt(n: int, cols: int, data: st.DataObject) -> None:
    rng = random.Random(data.draw(st.integers(0, 2 ** 32)))
    primes = PRIMES[:n]
    residues = np.array([[rng.randrange(q) for _ in range(cols)] for q in primes], dtype=np.uint64)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, n), max_size=6))) - {n})
    bounds = [0, *cuts, n]
    groups = [Group.of(np.array(primes[a:b], dtype=np.uint64), residues[a:b])
              for a, b in zip(bounds, bounds[1:])]
    xs, m = crt_grouped(groups)
    ys, m2 = crt_tree(residues, primes)
    assert (xs, m) == (ys, m2)
    assert xs[0] == crt_simple([int(r) for r in residues[:, 0]], primes)[0]


def test_groups_combine_only_the_columns_they_keep() -> None:
    """``Group.keep`` (a race's last seat left out, the multiple after it): those
    columns, in that order, as the whole CRT gives them."""
    rng = random.Random(9)
    residues = np.array([[rng.randrange(q) for _ in range(4)] for q in PRIMES[:90]],
                        dtype=np.uint64)
    groups = [Group.of(np.array(PRIMES[a:a + 30], dtype=np.uint64), residues[a:a + 30],
                       keep=(0, 1, 3)) for a in range(0, 90, 30)]
    xs, m = crt_grouped(groups)
    whole, m2 = crt_tree(residues, PRIMES[:90])
    assert (xs, m) == ([whole[0], whole[1], whole[3]], m2)


def test_columns_in_threads_are_the_same_crt() -> None:
    """The levels above the groups and each column's sum in a pool's threads, gmpy2
    letting go of the interpreter lock: the same values as in one thread."""
    from ladders.solver.exact import release_gil
    rng = random.Random(5)
    residues = np.array([[rng.randrange(q) for _ in range(5)] for q in PRIMES], dtype=np.uint64)
    groups = [Group.of(np.array(PRIMES[a:a + 37], dtype=np.uint64), residues[a:a + 37])
              for a in range(0, len(PRIMES), 37)]
    with ThreadPoolExecutor(3, initializer=release_gil) as pool:
        columns, m = crt_columns(groups, pool=pool)
        threaded = [c.result() for c in columns]
    assert (threaded, m) == crt_grouped(groups) == crt_tree(residues, PRIMES)


@pytest.mark.parametrize("count", [1, 2, 4, 5, 8, 9, 17, 40, 65])
def test_groups_below_the_hand_over_go_down_their_own_paths(count: int) -> None:
    """The remainders stop at the first level of at most HAND_OVER nodes; each group goes
    down its ancestor's path (odd nodes carried up included) to the same CRT."""
    from ladders.solver.engines.series.subproducts import (HAND_OVER, local_mapper, product_tree,
                                                           tops_of)
    rng = random.Random(count)
    primes = PRIMES[:4 * count]
    residues = np.array([[rng.randrange(q) for _ in range(2)] for q in primes], dtype=np.uint64)
    groups = [Group.of(np.array(primes[a:a + 4], dtype=np.uint64), residues[a:a + 4])
              for a in range(0, len(primes), 4)]
    columns, m = crt_columns(groups, local_mapper, None, HAND_OVER)
    assert ([c.result() for c in columns], m) == crt_grouped(groups) == crt_tree(residues, primes)
    tree = product_tree([mpz(np.prod([int(q) for q in g.primes], dtype=object)) for g in groups])
    assert all(top.path == () for top in tops_of(tree))     # (by default down to the groups)
    tops = tops_of(tree, stop_at=HAND_OVER)
    levels = max(len(top.path) for top in tops)
    assert (levels > 0) == (count > 2 * HAND_OVER)
    m = tree[-1][0]
    assert [top.at(g) for top, g in zip(tops, tree[0])] == [m % (g * g) for g in tree[0]]


def test_the_driver_keeps_the_levels_its_threads_do_faster_than_the_workers() -> None:
    """A level of N nodes stays with the driver while N / threads divisions take no
    longer than a worker's ceil(groups / workers) groups one more each."""
    from ladders.solver.engines.series.subproducts import HAND_OVER, hand_over
    assert hand_over(64, 2, 2) == 64 and hand_over(64, 0, 2) == 128     # down to the groups
    assert hand_over(64, 16, 2) == 8 and hand_over(64, 64, 2) == HAND_OVER == hand_over(64, 256, 4)


def test_a_groups_product_comes_from_its_parts_products_where_known() -> None:
    """A stream's groups carry their whole batches' products, taken as the batches came
    (a batch cut at the held-out primes has none); a group's product is the same either
    way."""
    stream = ReconstructionStream(2, holdout=3, groups=4)
    rng = random.Random(3)
    for a in range(0, 60, 6):
        primes = np.array(PRIMES[a:a + 6], dtype=np.uint64)
        stream.add(primes, np.array([[rng.randrange(q) for _ in range(2)] for q in primes.tolist()],
                                    dtype=np.uint64), attempt=False)
    groups = stream._groups(stream.snapshot(), 60 - 3)
    known = [k for g in groups for k in g.products]
    assert known[:-1] == [mpz(np.prod([int(q) for q in PRIMES[a:a + 6]], dtype=object))
                          for a in range(0, 54, 6)]
    assert known[-1] is None            # the last batch, cut before its held-out primes
    for g in groups:
        assert g.product() == Group(g.parts).product() == mpz(np.prod(
            [int(q) for q in g.primes], dtype=object))


def test_tree_passes() -> None:
    leaves = [mpz(q) for q in PRIMES[:7]]
    tree = product_tree(leaves)
    assert tree[-1] == [np.prod([int(q) for q in PRIMES[:7]], dtype=object)]
    value = mpz(123456789) ** 20
    assert remainders_down(value, tree) == [value % (q * q) for q in leaves]
    terms = [mpz(i + 1) for i in range(7)]
    assert combine_up(terms, tree) == sum(t * (tree[-1][0] // q) for t, q in zip(terms, leaves))
    with ThreadPoolExecutor(2) as pool:         # a level's products side by side
        assert combine_up(terms, tree, pool) == combine_up(terms, tree)


def test_seat_zero_is_checked_at_the_held_out_primes_first() -> None:
    # the build primes see one set of seats, the held-out primes another with a
    # different seat 0: its candidate is refused before the other seats are read
    truth = [mpq(2 ** 61 + 5, 3 ** 40), *(mpq(1, 9) for _ in range(4))]
    decoy = [mpq(2 ** 61 + 7, 3 ** 40), *truth[1:]]
    primes = PRIMES[:12]
    residues = [[int(v.numerator * invert(v.denominator, q) % q) for v in (decoy if i >= 9 else truth)]
                for i, q in enumerate(primes)]
    stream = ReconstructionStream(5, holdout=3, first_bits=10 ** 9)
    stream.add(primes, residues)
    candidate = stream.try_snapshot(stream.snapshot())
    assert (candidate.values, candidate.rejected) == (None, 1)


@pytest.mark.parametrize("workers, players, scale", [
    (0, 5, "0.0005"), (0, 6, "0.00003"), (2, 5, "0.0005")])
def test_driver_benchmark_at_a_small_scale(tmp_path: Path, workers: int, players: int,
                                           scale: str) -> None:
    # the script reduces known fractions, feeds them through the store and the stream
    # and exits non-zero unless the driver's fractions equal them; with workers, the
    # groups are tasks of a real local cluster reading the store, and the driver keeps
    # only the last batch's residues
    script = Path(__file__).resolve().parents[4] / "scripts" / "bench_driver.py"
    out = subprocess.run([sys.executable, str(script), "--scale", scale, "--store",
                          str(tmp_path / "s"), "--workers", str(workers),
                          "--players", str(players)],
                         capture_output=True, text=True, timeout=600, check=True)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    driver = doc["driver"]
    assert driver["attempts"][-1]["found"] and not any(a["found"] for a in driver["attempts"][:-1])
    assert driver["primes"] * 61 >= doc["bits"] > 0
    last = driver["attempts"][-1]
    # (parts that may overlap in threads: each within the attempt)
    assert all(0 < last[k] <= last["seconds"] for k in ("crt_seconds", "rr_seconds", "terms_seconds"))
    if workers == 0 and players == 5:
        # the CRT's stages of that last attempt, from the same store, in order
        stages = json.loads(subprocess.run(
            [sys.executable, str(script.with_name("crt_stages.py")), str(tmp_path / "s")],
            capture_output=True, text=True, timeout=600, check=True).stdout)
        assert (stages["bits"], stages["columns"]) == (last["bits"], players - 1)
        assert 0 <= stages["tree"] <= stages["tops"] <= stages["groups_done"] <= min(
            stages["columns_done"])
        # the whole attempt, its groups timed one by one, then served from their cache
        cache = tmp_path / "groups.pkl"
        for run in range(2):
            whole = json.loads(subprocess.run(
                [sys.executable, str(script.with_name("crt_stages.py")), str(tmp_path / "s"),
                 "--attempt", "--groups-cache", str(cache)],
                capture_output=True, text=True, timeout=600, check=True).stdout)
            marks = whole["marks"]
            assert whole["found"] and whole["bits"] == last["bits"] and cache.exists()
            assert 0 <= whole["group_seconds"]["max"] <= whole["group_seconds"]["sum"]
            assert whole["driver_seconds"] <= whole["seconds"]
            assert (marks["groups_out"] <= marks["groups_back"] <= marks["hgcd_start"]
                    <= marks["hgcd_end"] <= marks["terms_start"] <= marks["terms_end"])


def test_driver_benchmark_replays_a_three_player_store(tmp_path: Path) -> None:
    # a three-player run keeps the denominator multiple's residue as a last column; the
    # replay read it as a fourth seat and found no fractions. It now gives the run's own
    import hashlib

    store = tmp_path / "t3"
    solved = subprocess.run([sys.executable, "-m", "ladders.cluster.cli", "solve", "tiny10", "-k",
                             "3", "--engine", "series", "--workers", "1", "--checkpoint",
                             str(store), "--json"],
                            capture_output=True, text=True, timeout=600, check=True)
    seats = [s["exact"] for s in json.loads(solved.stdout)["seats"]]
    assert json.loads((store / "run.json").read_text())["multiple"] is True
    script = Path(__file__).resolve().parents[4] / "scripts" / "bench_driver.py"
    out = subprocess.run([sys.executable, str(script), "--phase", "replay", "--replay",
                          str(store)], capture_output=True, text=True, timeout=600, check=True)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["digests"] == [hashlib.sha256(str(mpq(s)).encode()).hexdigest()[:16]
                              for s in seats]
