"""A run store's manifests in pages (:mod:`ladders.checkpoints.manifests`): at 10,000
batches a commit writes one page and a short manifest, retired pages go with the last
manifest that references them, a damaged page is named, pages a dead driver left are
cleared, and a store of format 3 keeps its manifests whole."""

from __future__ import annotations

import json
from pathlib import Path

from ladders.checkpoints.store import RunStore


def _batch_store(tmp_path: Path, fmt: int | None = None) -> RunStore:
    from ladders.checkpoints.batches import BatchState
    run = {"problem": {"board": "fake"}, "engine": "series"}
    store = RunStore.create(str(tmp_path / "run"), run, BatchState, lambda _: BatchState())
    if fmt is not None:
        store.run["format"] = fmt  # as a store of that format was opened
    return store


def _ref(k: int):
    from ladders.checkpoints.segments import SegmentRef
    return SegmentRef(f"residues/b{k:05d}-{k * 7919 % 10007:04x}", f"{k:064x}", 64, 4096 + k)


def test_a_commit_writes_one_page_and_a_short_manifest_at_10000_batches(tmp_path: Path) -> None:
    """The issue's goal: at 10,000 batches a commit writes at most two objects (the page
    that changed and the manifest), the manifest at most 20 KB (the whole list is 1.2
    MB); reopened, the state is the same; retired pages go with the last manifest
    that references them."""
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.manifests import HISTORY, Manifest
    store = _batch_store(tmp_path)
    state = BatchState({k: _ref(k) for k in range(10_000)})
    manifest = store.current().next(state)
    store.commit(manifest)
    root = Path(store.url)
    pages = root / "manifest" / "pages"
    assert len(list(pages.iterdir())) == 157
    for k in range(10_000, 10_005):
        before = {p.name for p in root.rglob("*") if p.is_file()}
        state = state.with_batch(k, _ref(k))
        manifest = manifest.next(state)
        store.commit(manifest)
        after = {p.name for p in root.rglob("*") if p.is_file()}
        assert len(after - before) == 2 and f"{manifest.seq:06d}.json" in after - before
        assert (root / "manifest" / f"{manifest.seq:06d}.json").stat().st_size <= 20_000
    whole = len(json.dumps(Manifest(0, state).to_json()))
    assert whole > 1_000_000
    again = RunStore.open(store.url, BatchState)
    assert again.current().state == state and again.current().seq == manifest.seq
    # the last page's versions of the first commits were retired, then deleted
    assert len(list(pages.iterdir())) == 156 + HISTORY  # the last page: one version a kept manifest
    # a damaged page is named, like a segment: here every manifest shares it, so the
    # state comes back from the segments (none here: the references are made up)
    page = next(iter(sorted(pages.iterdir())))
    page.write_bytes(page.read_bytes().replace(b'"rows":64', b'"rows":65', 1))
    survey = RunStore.open(store.url, BatchState).survey()
    assert survey.rebuilt and survey.manifest.state == BatchState()
    assert f"its page manifest/pages/{page.name} does not match the digest" in survey.lost


def test_pages_a_dead_driver_left_are_cleared_and_format_3_stays_whole(tmp_path: Path) -> None:
    from ladders.checkpoints.batches import BatchState
    store = _batch_store(tmp_path)
    state = BatchState({k: _ref(k) for k in range(200)})
    store.commit(store.current().next(state))
    stray = Path(store.url) / "manifest" / "pages" / "000009-00000000deadbeef.json"
    stray.write_text("{}")  # written by a driver that died before its manifest
    assert store.clear_leftovers(store.current()) == 1 and not stray.exists()
    assert store.current().state == state
    old = _batch_store(tmp_path / "old", fmt=3)
    old.commit(old.current().next(state))
    assert not (Path(old.url) / "manifest" / "pages").exists()
    assert json.loads((Path(old.url) / "manifest" / "000001.json").read_text())["state"]["batches"]
