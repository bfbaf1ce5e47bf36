"""The run store: manifests are the truth, damage is refused (the segments' own
encoding: ``test_segments.py``; manifests in pages: ``test_manifests.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ladders.checkpoints.errors import SegmentError, StoreError
from ladders.checkpoints.locks import identity
from ladders.checkpoints.store import RunStore
from ladders.checkpoints.elimination import EliminationState, create_store, plan_of, stored_answer
from ladders.cluster.engines.elimination import EliminationWork
from ladders.cluster.loops import run_serial
from examples import EXAMPLES

from ladders.solver.games.chain import build_chain
from ladders.solver.engines.elimination import eliminate_target
from ladders.solver.exact import mpz
from ladders.solver.engines.elimination_plan import make_plan
from ladders.solver.games.race import race_system


def small_system():
    return race_system(build_chain(EXAMPLES["hasbro20-2"].board), 2)  # hasbro cut at 20, 2 players


def new_store(tmp_path, block_size: int = 40):
    system = small_system()
    plan = make_plan(system, block_size)
    run = {"problem": {"board": "hasbro cut at 20"}, "engine": "elimination", "unknowns": system.size}
    store = create_store(str(tmp_path / "run"), run, system, plan)
    return system, plan, store


def reopen(store: RunStore) -> RunStore:
    """The store opened again, as another process would."""
    return RunStore.open(store.url, EliminationState)


def run_in_process(store: RunStore, stop_after: int | None = None):
    """The serial executor's loop over the store, stopped after ``stop_after`` tasks;
    returns the last committed manifest."""
    work = EliminationWork(store, small_system())
    run_serial(work, lambda: stop_after is not None and work.tally()[0] >= stop_after)
    return work.committed


def test_serial_over_store_equals_in_memory(tmp_path) -> None:
    system, plan, store = new_store(tmp_path)
    manifest = run_in_process(store)
    assert stored_answer(store, system, manifest.state) == eliminate_target(system, plan)
    # only the last factored block is left once every update is done
    assert set(manifest.state.factored) == {len(plan.blocks) - 1} and manifest.state.groups == {}


def test_interrupted_run_resumes_to_the_same_answer(tmp_path) -> None:
    system, plan, store = new_store(tmp_path, block_size=25)
    total = len(plan.tasks())
    run_in_process(store, stop_after=total // 2)
    reopened = reopen(store)
    assert total // 2 <= len(reopened.current().state.done) <= total // 2 + 1  # +1: a fused U+F
    manifest = run_in_process(reopened)
    assert len(manifest.state.done) == total
    assert stored_answer(reopened, system, manifest.state) == eliminate_target(system, plan)


def test_an_update_and_the_factorization_it_unblocks_commit_as_one_task(tmp_path) -> None:
    system, plan, store = new_store(tmp_path, block_size=25)
    assert plan.fuses(0, 1) and not plan.fuses(0, 2)
    run_in_process(store, stop_after=1)
    assert store.current().state.done == {(0, 0)}
    run_in_process(store, stop_after=1)
    manifest = store.current()
    assert manifest.seq == 2 and manifest.state.done == {(0, 0), (0, 1), (1, 1)}
    assert 1 in manifest.state.factored and 1 not in manifest.state.groups
    assert stored_answer(store, system, run_in_process(store).state) == eliminate_target(system, plan)


def test_a_complete_manifest_beyond_current_is_what_resume_and_status_see(tmp_path) -> None:
    # kill -9 after the numbered manifest, before CURRENT: the next driver adopts it, so
    # newest() (status, and what tests count at a kill) must name it, read-only
    system, plan, store = new_store(tmp_path)
    run_in_process(store, stop_after=2)
    before = store.current()
    ahead = run_in_process(store, stop_after=1)
    (Path(store.url) / "manifest" / "CURRENT").write_text(str(before.seq))
    reopened = reopen(store)
    assert reopened.current().seq == before.seq
    assert reopened.newest().seq == ahead.seq and reopened.newest().state.done == ahead.state.done
    assert reopened.current().seq == before.seq  # newest() moved nothing
    reopened.acquire_lock()
    assert reopened.current().seq == ahead.seq
    reopened.release_lock()


def test_a_manifest_written_but_never_made_current_is_dropped_on_resume(tmp_path) -> None:
    # kill -9 between the numbered manifest and CURRENT: the next driver must not trip on it
    system, plan, store = new_store(tmp_path)
    run_in_process(store, stop_after=2)
    seq = store.current().seq
    orphan = Path(store.url) / "manifest" / f"{seq + 1:06d}.json"
    orphan.write_text("{}")
    reopened = reopen(store)
    reopened.acquire_lock()
    assert not orphan.exists() and reopened.current().seq == seq
    manifest = run_in_process(reopened)
    reopened.release_lock()
    assert stored_answer(reopened, system, manifest.state) == eliminate_target(system, plan)


def test_the_segment_cache_counts_identical_rows_written_twice_once(tmp_path) -> None:
    _, _, store = new_store(tmp_path)
    rows = {1: {1: mpz(3)}}
    before = store._rows._bytes  # the initial rows the store was created with
    first, second = store.write("rows/g1/b0-a", rows), store.write("rows/g1/b0-b", rows)
    assert first.digest == second.digest
    assert store._rows._bytes == before + first.nbytes and store.read(second) == rows


def test_a_tampered_segment_is_refused_and_the_run_goes_back(tmp_path) -> None:
    """A segment changed after its commit is never read as rows: its reader refuses
    it, and the next run goes back to a manifest whose rows read whole (here the
    first), to the in-memory answer."""
    system, plan, store = new_store(tmp_path)
    run_in_process(store, stop_after=3)
    manifest = store.current()
    ref = next(iter(manifest.state.factored.values()))  # written by a task of this store
    original = reopen(store).read(ref)
    chunk = Path(store.url) / ref.path / "rows" / "0"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk.write_bytes(bytes(data))
    # the process that wrote it still holds the rows it wrote; a resumed run reads the disk
    assert store.read(ref) == original
    with pytest.raises(SegmentError):
        reopen(store).read(ref)
    manifest = run_in_process(reopen(store))
    assert stored_answer(store, system, manifest.state) == eliminate_target(system, plan)


def test_manifest_truth_ignores_leftovers(tmp_path) -> None:
    system, plan, store = new_store(tmp_path)
    run_in_process(store, stop_after=2)
    leftover = store.write("rows/g1/b0-leftover", {1: {1: mpz(1)}})
    assert (Path(store.url) / leftover.path).exists()
    # a writer stopped between making a segment's folder and its first file
    (Path(store.url) / "rows" / "g1" / "b0-stopped").mkdir()
    removed = store.clear_leftovers(store.current())
    assert removed >= 2 and not (Path(store.url) / leftover.path).exists()
    assert not (Path(store.url) / "rows" / "g1" / "b0-stopped").exists()
    manifest = run_in_process(store)
    assert stored_answer(store, system, manifest.state) == eliminate_target(system, plan)


def test_store_refuses_reuse_and_hand_edits(tmp_path) -> None:
    system, plan, store = new_store(tmp_path)
    with pytest.raises(StoreError, match="already holds a run"):
        RunStore.create(store.url, {}, EliminationState, lambda _: EliminationState())
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("hi")
    with pytest.raises(StoreError, match="not empty"):
        RunStore.create(str(tmp_path / "other"), {}, EliminationState, lambda _: EliminationState())
    plan_json = json.loads((Path(store.url) / "plan.json").read_text())
    plan_json["order"] = plan_json["order"][::-1]
    (Path(store.url) / "plan.json").write_text(json.dumps(plan_json))
    with pytest.raises(StoreError, match="plan token"):
        plan_of(reopen(store))
    with pytest.raises(StoreError, match="no run store"):
        RunStore.open(tmp_path / "nothing")


def test_lock_is_exclusive_but_stale_locks_are_taken_over(tmp_path) -> None:
    _, _, store = new_store(tmp_path)
    store.acquire_lock()
    with pytest.raises(StoreError, match="locked by a running solve"):
        reopen(store).acquire_lock()
    store.release_lock()
    lock = Path(store.url) / "LOCK"
    import socket
    lock.write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname()}))
    store.acquire_lock()  # the pid is not alive: stale
    store.release_lock()
    me = identity()  # this process: alive, and its pid means the same here
    if "start_ticks" in me:  # a host with /proc
        lock.write_text(json.dumps(me))
        with pytest.raises(StoreError, match="locked by a running solve"):
            store.acquire_lock()
        lock.write_text(json.dumps({**me, "start_ticks": me["start_ticks"] - 1}))
        store.acquire_lock()  # the pid runs a later process (reused): its driver is gone
        store.release_lock()


def test_manifests_are_created_exclusively(tmp_path) -> None:
    _, _, store = new_store(tmp_path)
    manifest = store.current()
    with pytest.raises(StoreError, match="another driver"):
        store.commit(manifest)  # same sequence number again
