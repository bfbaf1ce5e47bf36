"""The run store: everything a long exact solve needs to survive a crash and resume.

```
RUN/run.json         immutable: problem, engine, system digest, plan token, parameters, versions
RUN/<engine files>   immutable, e.g. the elimination plan (plan.json), hashed by its token
RUN/<segments>       Zarr v3 segments, written once, one writer each (see segments.py)
RUN/manifest/NNNNNN.json   numbered manifests, created exclusively, never rewritten
RUN/manifest/pages/PPPPPP-<digest>.json   pages of a manifest's long list (immutable)
RUN/manifest/CURRENT       the number of the newest manifest (replaced atomically)
RUN/LOCK             exclusive create: one driver per store
RUN/COMPLETE.json    written last, only after verification passed
```

A manifest is the only truth of what is done. Its common fields are the same for every
engine (sequence number, elapsed time of solving, bits of the biggest number so far);
what is done is the engine's own typed payload (a :class:`ManifestState`, defined and
validated by the engine's module beside this one), which also names the segments it
needs. A segment counts only if a committed manifest lists it with its digest; anything
else under the engine's segment folders is a leftover of an interrupted task and is
cleared on resume (:meth:`RunStore.clear_leftovers`).

A payload's long list (a prime-batch run's batches: 10,000 at 5 players) is not
written whole at every commit: its entries go, by key, into pages of :data:`PAGE`
entries, immutable objects named by their digest, and a manifest lists its pages with
their digests. A commit writes the pages that changed (in a run that adds batches in
order, the last one) and a manifest whose size grows by one short reference per
:data:`PAGE` entries: at 10,000 batches a manifest of 11.7 KB and 16 KB written a
commit, where the whole list made a manifest of 1.4 MB (quadratic in all: about 6 GB
over a 5-player run). A page is trusted only through the digest a manifest gives, like
a segment.

Every file operation goes through a :class:`~ladders.checkpoints.backend.Backend`: the
protocol here needs create-if-absent, atomic replace, read, list and delete, nothing
more (no rename, no listing as the source of truth).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ladders.checkpoints.backend import Backend, open_backend
from ladders.checkpoints.errors import StoreError, damaged_store
from ladders.checkpoints.files import compact_json
from ladders.checkpoints.locks import StoreLock, driver_gone, identity, parse_lock
from ladders.checkpoints.manifests import (HISTORY, PAGE, Manifest, ManifestState, Survey,
                                          manifest_key, page_key)
from ladders.checkpoints.segments import RowsCache, SegmentRef, read_segment, write_segment

#: Layout version of a store; 3: manifests hold an engine's typed payload under "state";
#: 4: a payload's long list (:attr:`ManifestState.PAGED`) is kept in pages.
FORMAT = 4
#: Formats this version reads (and continues in their own layout).
READS = (3, 4)
#: Encoded bytes of segments one process keeps decoded in memory (see :meth:`RunStore.read`).
CACHE_BYTES = 256 * 2**20
class _Unreadable(StoreError):
    """A file of the manifests (a numbered manifest, a page) that cannot be read whole:
    its ``key`` and the ``reason``, worded to follow the file's name."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key} {reason}")
        self.key, self.reason = key, reason


class RunStore:
    """One run. Create with :meth:`create`, reopen with :meth:`open`; ``state_type`` is
    the engine's :class:`ManifestState` (needed to read manifests)."""

    def __init__(self, backend: Backend, run: dict[str, Any],
                 state_type: type[ManifestState] | None = None) -> None:
        self.backend = backend
        self.run = run
        self.state_type = state_type
        #: the store's LOCK (:mod:`.locks`: a pid LOCK in a folder, a lease on object
        #: storage)
        self.lock = StoreLock(backend)
        self._janitor: ThreadPoolExecutor | None = None
        #: what an engine derives from the store's files once per process (e.g. its plan)
        self.memo: dict[str, Any] = {}
        self._rows = RowsCache(CACHE_BYTES)
        #: pages this process knows to exist, with their entries (see :meth:`_paged`)
        self._pages: dict[str, dict[str, Any]] = {}
        #: the pages the last manifest written or read referenced, and per commit the
        #: pages it stopped referencing (deleted with the manifests that still do)
        self._last_pages: set[str] = set()
        self._retired: list[tuple[int, set[str]]] = []
        #: per commit, the segments it stopped referencing: deleted with the last
        #: manifest that references them, so that every manifest kept can be resumed from
        self._retired_segments: list[tuple[int, set[str]]] = []
        #: the paged list this process last committed (its entries are compared by
        #: identity: a commit encodes only the pages whose entries changed), and the
        #: digest of each of its pages by number
        self._last_items: dict[int, Any] | None = None
        self._refs: dict[int, str] = {}

    @property
    def url(self) -> str:
        """The store as the user named it (a folder, or a URL)."""
        return self.backend.url

    @property
    def worker_url(self) -> str:
        """The store as a task on another process opens it."""
        return self.backend.worker_url

    @property
    def engine(self) -> str:
        """The name of the exact engine the run uses (see ``ladders.cluster.engines``)."""
        return str(self.run["engine"])

    def damaged(self) -> str:
        """The way out of a file that defines the run (run.json, plan.json, a manifest)
        damaged beyond repair: what its segments mean is lost with it."""
        return damaged_store(self.url)

    # ----------------------------------------------------------------- create / open
    @classmethod
    def create(cls, where: str | Backend, run: dict[str, Any], state_type: type[ManifestState],
               initial: Callable[[RunStore], ManifestState], files: dict[str, Any] | None = None,
               ) -> RunStore:
        """A new store for ``run`` (run.json), with the engine's own immutable JSON
        ``files`` (e.g. the elimination plan) and a first manifest whose payload
        ``initial(store)`` makes (it may write the initial segments).

        Refuses a place that already holds a run (resume it instead) or other files.
        Its first write claims the place: the LOCK, created only if absent. Of two
        drivers that create one store at once, the one whose claim fails is refused
        having written nothing, so it deletes nothing; the other writes the store and
        gives the LOCK back once manifest 0 is committed (the session takes it again).
        """
        backend = open_backend(where)
        if backend.exists("run.json"):
            raise StoreError(f"{backend.url} already holds a run: use 'ladders resume "
                             f"{backend.url}' or choose another --checkpoint folder")
        if not backend.is_empty() and _dead_creator(backend) is not None:
            # a solve killed while it created a store here (SIGKILL, a power cut): no
            # run.json, so nothing of it can be resumed; everything here is its own
            backend.remove_all()
        if not backend.is_empty():
            raise StoreError(_being_created(backend) or f"{backend.url} is not empty and holds no "
                             "run (or another solve is creating one there right now); choose "
                             "an empty or new folder")
        backend.prepare()
        claim = {**identity(), "since": time.time(), "creating": True}
        try:
            backend.create("LOCK", compact_json(claim))
        except FileExistsError:
            raise StoreError(_being_created(backend) or f"{backend.url}: another solve is "
                             "creating a run here right now; choose another --checkpoint "
                             "folder") from None
        try:
            for name, data in (files or {}).items():
                backend.create(name, compact_json(data))
            store = cls(backend, {**run, "format": FORMAT, "created": time.time()}, state_type)
            state = initial(store)
            backend.create("run.json", compact_json(store.run))
            store.commit(Manifest(0, state))
            store.flush()
        except BaseException:
            # a store that was never complete holds nothing to resume (a full disk,
            # Ctrl-C): leave the place as it was, so the same command can run again.
            # Everything here is this driver's own: no other driver writes past the claim
            backend.remove_all()
            raise
        backend.delete("LOCK")
        return store

    @classmethod
    def open(cls, where: str | Backend, state_type: type[ManifestState] | None = None) -> RunStore:
        """Open an existing store (its engine checks its own files, see ``read_json``)."""
        backend = open_backend(where)
        try:
            raw = backend.read("run.json")
        except FileNotFoundError:
            dead = _dead_creator(backend)
            if dead is not None:
                raise StoreError(f"{backend.url}: the solve that was creating a run here (pid "
                                 f"{dead['pid']}) was stopped before its store was complete, so "
                                 "there is nothing to resume; run that solve again with the same "
                                 "--checkpoint: it starts over here") from None
            raise StoreError(f"{backend.url}: no run store here (no run.json); start one with "
                             "'ladders solve BOARD --checkpoint DIR'") from None
        except NotADirectoryError:  # a model or a result file given for the store's folder
            raise StoreError(f"{backend.url} is a file, not a run store (the folder that "
                             "'ladders solve BOARD --checkpoint DIR' makes); give that "
                             "folder") from None
        except OSError as exc:
            raise StoreError(f"{backend.url}: run.json is unreadable ({exc}); "
                             f"{damaged_store(backend.url)}") from exc
        try:
            run = json.loads(raw)
        except ValueError as exc:
            raise StoreError(f"{backend.url}: run.json is unreadable ({exc}); "
                             f"{damaged_store(backend.url)}") from exc
        if not isinstance(run, dict) or not isinstance(run.get("problem"), dict) \
                or not isinstance(run.get("engine"), str):
            raise StoreError(f"{backend.url}/run.json: not a run of this store format (no problem "
                             f"or engine); {damaged_store(backend.url)}")
        if run.get("format") not in READS:
            raise StoreError(f"{backend.url}: store format {run.get('format')} was written by "
                             f"another ladders version (this one reads formats "
                             f"{', '.join(map(str, READS))}); finish it with that version or "
                             "start a new run")
        return cls(backend, run, state_type)

    def read_json(self, name: str) -> Any:
        """One of the run's immutable JSON files (``StoreError`` if it is unreadable)."""
        try:
            return json.loads(self.backend.read(name))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.url}: {name} is unreadable ({exc}); {self.damaged()}") from exc

    # ----------------------------------------------------------------------- manifests
    def current(self) -> Manifest:
        """The manifest CURRENT names; where CURRENT or that manifest cannot be read, the
        one the next driver continues from (:meth:`survey`)."""
        self.flush()  # this process's own commits first
        try:
            return self._read_manifest(int(self.backend.read("manifest/CURRENT").decode().strip()))
        except (OSError, ValueError, StoreError):
            return self.survey().manifest

    def _read_manifest(self, seq: int) -> Manifest:
        """Manifest ``seq`` with its pages, its shape checked (:class:`_Unreadable`, a
        ``StoreError`` naming the file, when it cannot be read whole)."""
        if self.state_type is None:
            raise TypeError("open the store with its engine's state type to read manifests")
        key = manifest_key(seq)
        try:
            data = json.loads(self.backend.read(key))
        except FileNotFoundError:
            raise _Unreadable(key, "is missing") from None
        except (OSError, ValueError) as exc:
            raise _Unreadable(key, f"is unreadable ({type(exc).__name__}: {exc})") from exc
        try:
            pages = self._unpage(data)
            manifest = Manifest.from_json(data, self.state_type)
        except _Unreadable as exc:
            raise _Unreadable(key, f"is damaged: its page {exc.key} {exc.reason}") from exc
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _Unreadable(key, "is not a manifest of this store format "
                              f"({type(exc).__name__}: {exc})") from exc
        self._last_pages = pages
        return manifest

    def _unpage(self, data: dict[str, Any]) -> set[str]:
        """Put a manifest's paged list back in its payload (each page checked against
        the digest the manifest gives); returns the pages' keys."""
        state = data["state"]
        pages = state.pop("pages", None)
        if pages is None:
            return set()
        entries: dict[str, Any] = {}
        keys = set()
        for number, digest in pages["refs"]:
            key = page_key(int(number), str(digest))
            entries.update(self._page(key, str(digest)))
            keys.add(key)
        state[str(pages["field"])] = entries
        return keys

    def _page(self, key: str, digest: str) -> dict[str, Any]:
        """The entries of page ``key``, read once per process and checked."""
        hit = self._pages.get(key)
        if hit is not None:
            return hit
        try:
            raw = self.backend.read(key)
        except FileNotFoundError:
            raise _Unreadable(key, "is missing") from None
        except OSError as exc:
            raise _Unreadable(key, f"is unreadable ({exc})") from exc
        if hashlib.sha256(raw).hexdigest() != digest:
            raise _Unreadable(key, "does not match the digest its manifest gives")
        entries = json.loads(raw)
        if not isinstance(entries, dict):
            raise TypeError(f"page {key} is not an object")
        self._pages[key] = entries
        return entries

    def _paged(self, manifest: Manifest) -> tuple[bytes, set[str]]:
        """``manifest`` encoded with its payload's long list in pages (new pages
        written first, create-only: a page's name holds its digest, so one that exists
        holds the same entries); returns the bytes and the pages' keys.

        A page whose entries are the very objects this process committed last is not
        encoded again: a commit costs one pass over the list (by identity), and the JSON
        of the pages that changed."""
        state = manifest.state
        field = getattr(type(state), "PAGED", None)
        if field is None or self.run.get("format", FORMAT) < 4:
            return compact_json(manifest.to_json()), set()
        items: dict[int, Any] = getattr(state, field)
        data = Manifest(manifest.seq, dataclasses.replace(state, **{field: {}}),  # type: ignore[type-var]
                        manifest.elapsed, manifest.max_bits).to_json()
        del data["state"][field]
        last = self._last_items
        if last is None:
            numbers = {k // PAGE for k in items}
            self._refs = {}
        else:  # the entries that are not the very objects of the last commit, or are gone
            changed = {k for k, entry in items.items() if last.get(k) is not entry}
            numbers = {k // PAGE for k in changed | (last.keys() - items.keys())}
        for number in numbers:
            group = {k: items[k] for k in range(number * PAGE, (number + 1) * PAGE) if k in items}
            if not group:
                self._refs.pop(number, None)
                continue
            entries = {str(k): entry.to_json() for k, entry in group.items()}
            raw = compact_json(entries)
            digest = hashlib.sha256(raw).hexdigest()
            key = page_key(number, digest)
            if key not in self._pages:
                try:
                    self.backend.create(key, raw)
                except FileExistsError:
                    # the same digest: the same entries, written by an earlier commit;
                    # unless damaged since (then no manifest could be read through it)
                    if hashlib.sha256(self._read_or_empty(key)).hexdigest() != digest:
                        self.backend.replace(key, raw)
                self._pages[key] = entries
            self._refs[number] = digest
        self._last_items = items
        refs = [[number, self._refs[number]] for number in sorted(self._refs)]
        data["state"]["pages"] = {"field": field, "refs": refs}
        return compact_json(data), {page_key(number, digest) for number, digest in refs}

    def commit(self, manifest: Manifest) -> None:
        """Commit ``manifest`` as the new truth: numbered file (created only if absent,
        so two drivers can never commit the same number), then CURRENT."""
        key = manifest_key(manifest.seq)
        if self.lease_lost():
            raise StoreError(f"{self.url}: this driver's lease on the store ran out (it was not "
                             "renewed in time) and another driver may hold it now; this run "
                             "stops here: see 'ladders status' before resuming")
        raw, pages = self._paged(manifest)
        try:
            self.backend.create(key, raw)
        except FileExistsError as exc:
            raise StoreError(f"{self.url}/{key} exists already: another driver is writing this "
                             "store") from exc
        self._later(self.backend.replace, "manifest/CURRENT", str(manifest.seq).encode())
        self._later(self.backend.delete, manifest_key(manifest.seq - HISTORY))
        # pages the previous manifest referenced and this one does not go with the last
        # manifest that references them (HISTORY commits from now)
        self._retired.append((manifest.seq, self._last_pages - pages))
        self._last_pages = pages
        while self._retired and self._retired[0][0] <= manifest.seq - HISTORY + 1:
            for page in self._retired.pop(0)[1]:
                self._pages.pop(page, None)
                self._later(self.backend.delete, page)

    def _later(self, step: Callable[..., Any], *args: Any) -> None:
        """``step(*args)`` now in a folder; on object storage in a background thread, in
        order, off the critical path of a commit (each is a round trip): what goes there
        only tidies up or moves a hint (CURRENT, which the next driver rolls forward by
        listing anyway; deletes, whose leftovers a resume clears). :meth:`flush` waits."""
        if not self.backend.round_trips:
            step(*args)
            return
        if self._janitor is None:
            self._janitor = ThreadPoolExecutor(1, thread_name_prefix="ladders-janitor")
        self._janitor.submit(step, *args)

    def flush(self) -> None:
        """Wait for the steps :meth:`_later` put off."""
        if self._janitor is not None:
            self._janitor.shutdown(wait=True)
            self._janitor = None

    # ------------------------------------------------------------------------ segments
    def write(self, path: str, rows: dict[int, dict]) -> SegmentRef:
        """Write ``rows`` as a new segment and keep them in this process's cache."""
        ref = write_segment(self.backend, path, rows)
        self._rows.put(ref, rows)
        return ref

    def read(self, ref: SegmentRef) -> dict[int, dict]:
        """The rows of a committed segment: from this process's cache
        (:class:`~.segments.RowsCache`) when it wrote or read the same digest lately, else
        from the store, checked."""
        rows = self._rows.get(ref)
        if rows is None:
            rows = read_segment(self.backend, ref)
            self._rows.put(ref, rows)
        return rows

    def clear_leftovers(self, manifest: Manifest) -> int:
        """Delete the segments under the engine's folders that neither ``manifest`` nor
        an older manifest still kept references (superseded versions, leftovers of
        interrupted tasks or of a driver that died before committing): each manifest
        kept stays one a run can go back to where a newer one is lost. Returns how many."""
        keep = manifest.referenced() | self._kept_references(manifest)
        found = {path for folder, depth in type(manifest.state).FOLDERS.items()
                 for path in self.backend.entries(folder, depth)}
        gone = sorted(found - keep)
        for path in gone:
            self.backend.delete_prefix(path)
        return len(gone) + self._clear_pages()

    def _kept_references(self, manifest: Manifest) -> set[str]:
        """The segments the numbered manifests older than ``manifest`` reference, those
        that read whole (a damaged one is no way back)."""
        return set().union(*(older.referenced() for older in self.older(manifest)))

    def older(self, manifest: Manifest) -> list[Manifest]:
        """The numbered manifests before ``manifest`` that read whole, newest first: the
        ways back where ``manifest``'s segments turn out damaged (the store keeps
        :data:`HISTORY` of them, and the segments they reference)."""
        found: list[Manifest] = []
        pages = self._last_pages  # the next commit retires from the newest's pages, not these
        for seq in sorted(self._numbered(), reverse=True):
            if seq < manifest.seq:
                try:
                    found.append(self._read_manifest(seq))
                except _Unreadable:
                    continue
        self._last_pages = pages
        return found

    def _numbered(self) -> set[int]:
        """The numbers of the store's numbered manifests (``manifest/NNNNNN.json``)."""
        return {int(name[:-5]) for key in self.backend.list("manifest")
                if (name := key.rsplit("/", 1)[-1]).endswith(".json") and name[:-5].isdigit()}

    def _clear_pages(self) -> int:
        """Delete the pages no numbered manifest in the store references (those a
        driver that died wrote before its manifest, or retired and not yet deleted)."""
        pages = set(self.backend.list("manifest/pages"))
        if not pages:
            return 0
        keep: set[str] = set()
        for seq in self._numbered():
            try:
                data = json.loads(self.backend.read(manifest_key(seq)))
                keep.update(page_key(int(number), str(digest))
                            for number, digest in data["state"]["pages"]["refs"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # not ours to judge here: _roll_forward sets bad ones aside
        gone = sorted(pages - keep)
        for key in gone:
            self.backend.delete(key)
            self._pages.pop(key, None)
        return len(gone)

    def drop_superseded(self, before: Manifest, after: Manifest) -> None:
        """Retire the segments ``before`` referenced and ``after`` no longer does (the
        cheap per-commit cleanup; :meth:`clear_leftovers` scans for everything else):
        they are deleted with the last manifest that references them, :data:`HISTORY`
        commits later, so that a run whose newest manifests are lost goes on from an
        older one instead of starting again."""
        self._retired_segments.append((after.seq, before.referenced() - after.referenced()))
        while self._retired_segments and self._retired_segments[0][0] <= after.seq - HISTORY + 1:
            for path in self._retired_segments.pop(0)[1]:
                self._later(self.backend.delete_prefix, path)

    def size_bytes(self) -> int:
        return self.backend.size_bytes()

    # ---------------------------------------------------------------- lock / complete
    def acquire_lock(self) -> None:
        """Take the store's LOCK (:meth:`.locks.StoreLock.acquire`: or say who holds it
        and the way out), then roll forward to the manifest the run continues from."""
        self.lock.acquire()
        self._locked_roll_forward()

    def release_lock(self) -> None:
        """Give the LOCK back, CURRENT final first while this driver still holds it."""
        self.flush()
        self.lock.release()

    def lease_lost(self) -> bool:
        """Whether this driver's lease was taken over (:meth:`.locks.StoreLock.lost`)."""
        return self.lock.lost()

    def locked_by(self) -> dict[str, Any] | None:
        """Who holds the LOCK (:meth:`.locks.StoreLock.locked_by`)."""
        return self.lock.locked_by()

    def _locked_roll_forward(self) -> None:
        """:meth:`_roll_forward` once the LOCK is taken; the LOCK given back if the store
        cannot go on (nothing to hold it for). A store opened without its engine's
        payload type (only to lock it) cannot judge its manifests and leaves them be."""
        if self.state_type is None:
            return
        try:
            self._roll_forward()
        except BaseException:
            self.release_lock()
            raise

    def _roll_forward(self) -> None:
        """Make CURRENT name the manifest the run continues from (:meth:`survey`), and say
        on stderr, in one line, what was lost and what is done about it.

        A driver killed between writing manifest N+1 and moving CURRENT left N+1
        complete (it is written whole, after every segment it lists): it is adopted, not
        deleted, so that nothing a committed manifest may still need is ever lost (a
        CURRENT set back by hand rolls forward the same way). Numbered files newer than
        that manifest that do not read whole are moved aside as ``NNNNNN.json.bad``, so
        the next commit can take their numbers; a manifest rebuilt from the segments is
        committed here.
        """
        survey = self.survey()
        for key in survey.unreadable:
            try:
                self.backend.replace(key + ".bad", self.backend.read(key))
            except FileNotFoundError:
                continue
            self.backend.delete(key)
        if survey.rebuilt:
            self._last_pages = set()
            self.commit(survey.manifest)
            self.flush()
        elif survey.current != survey.manifest.seq:
            self.backend.replace("manifest/CURRENT", str(survey.manifest.seq).encode())
        if survey.lost:
            print(f"ladders: {self.url}: {survey.lost}", file=sys.stderr, flush=True)

    def survey(self) -> Survey:
        """Where the run stands, read-only: the newest numbered manifest that reads whole
        (its pages checked by digest). CURRENT is a hint: it names one more candidate,
        and a newer complete manifest is preferred to it. A manifest that is missing or
        damaged is passed over for the one before it, if that one's segments are all
        still there (not superseded since: the store lists them); where none is left, a
        payload type that can rebuild its state from its segments' names
        (``from_segments``, e.g. the batches of crt and series runs) does so. Anything
        passed over is named in ``lost``; a store that cannot go on is a ``StoreError``
        that says what was lost."""
        self.flush()
        problems: list[str] = []
        try:
            current: int | None = int(self.backend.read("manifest/CURRENT").decode().strip())
        except FileNotFoundError:
            current = None
            problems.append("manifest/CURRENT is missing")
        except (OSError, ValueError) as exc:
            current = None
            problems.append(f"manifest/CURRENT is unreadable ({type(exc).__name__}: {exc})")
        listed = self._numbered()
        candidates = sorted(listed | ({current} if current is not None else set()), reverse=True)
        passed: list[str] = []
        unreadable: list[str] = []
        present: set[str] | None = None
        for seq in candidates:
            key = manifest_key(seq)
            try:
                manifest = self._read_manifest(seq)
            except _Unreadable as exc:
                passed.append(f"{key} {exc.reason}" + (" (manifest/CURRENT names it)"
                                                         if seq not in listed else ""))
                if seq in listed:
                    unreadable.append(key)
                continue
            if passed and present is None:  # an older manifest: its segments may have been
                # superseded since; one listing of the segment folders serves every candidate
                present = {path for folder, depth in type(manifest.state).FOLDERS.items()
                           for path in self.backend.entries(folder, depth)}
            gone = sorted(manifest.referenced() - present) if passed else []
            if gone:
                passed.append(f"{key} {SUPERSEDED} ({len(gone):,}, e.g. {gone[0]})")
                continue
            if passed:
                problems.append(_passed_over(passed))
                after = candidates[0] - seq
                lost = (f"{'; '.join(problems)}: the run continues from {key}, the newest intact "
                        f"manifest, and computes again the work of the {after:,} "
                        f"commit{'s' if after > 1 else ''} after it")
            elif problems:
                lost = f"{'; '.join(problems)}: the run continues from {key}, the newest manifest (nothing lost)"
            else:
                lost = None
            return Survey(manifest, lost, tuple(unreadable), current=current)
        return self._rebuilt(problems + ([_passed_over(passed)] if passed else
                                         ["no numbered manifest is left"]),
                             max(candidates, default=-1) + 1, tuple(unreadable), current)

    def _rebuilt(self, problems: list[str], seq: int, unreadable: tuple[str, ...],
                 current: int | None) -> Survey:
        """The survey of a store none of whose manifests can be used: manifest ``seq``
        rebuilt from the segments, where the payload type can (``from_segments``)."""
        assert self.state_type is not None
        what = "; ".join(problems)
        rebuild = getattr(self.state_type, "from_segments", None)
        if rebuild is None:
            raise StoreError(f"{self.url}: no manifest can be used ({what}), and the "
                             f"{self.engine} engine's segments cannot be put back together "
                             f"without one; {self.damaged()}")
        state, refused = rebuild(self.backend)
        whole = len(list(state.segments()))
        folders = ", ".join(f"{folder}/" for folder in type(state).FOLDERS)
        lost = (f"{what}: the run continues from the {whole:,} whole "
                f"segment{'' if whole == 1 else 's'} under {folders} (their names say what "
                "each holds)" + (f", deletes {len(refused):,} partial or repeated ones" if refused
                                 else "") + " and computes the rest again")
        return Survey(Manifest(seq, state), lost, unreadable, rebuilt=True, current=current)

    def newest(self) -> Manifest:
        """What the next driver continues from, read-only (:meth:`survey`): CURRENT's
        manifest, a newer complete one that a driver killed between writing it and
        moving CURRENT left, or the newest intact one before a damaged one."""
        return self.survey().manifest

    def mark_complete(self, result: dict[str, Any]) -> None:
        """Write COMPLETE.json: ``result`` with the digest of its seats, so that a
        changed digit is found when the answer is read back, not printed."""
        digest = _seats_digest(result["seats"])
        self.backend.replace("COMPLETE.json", compact_json({**result, "seats_digest": digest}))

    def completed(self) -> dict[str, Any] | None:
        """COMPLETE.json (the verified answer), or None while the run is not complete.
        A damaged one (unreadable, of the wrong shape, or seats that do not match their
        digest) is a ``StoreError`` that says how to rebuild it from the stored work."""
        where = f"{self.url}/COMPLETE.json"
        way_out = (f"delete it and run 'ladders resume {self.url}' to rebuild the answer "
                   "from the stored work")
        try:
            data = json.loads(self.backend.read("COMPLETE.json"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreError(f"{where}: damaged, unreadable ({exc}); {way_out}") from exc
        if not (isinstance(data, dict) and isinstance(data.get("seats"), list)
                and all(isinstance(s, str) for s in data["seats"])):
            raise StoreError(f"{where}: damaged or not a COMPLETE.json of this store format "
                             f"(no list of seats); {way_out}")
        digest = data.get("seats_digest")
        if digest is not None and digest != _seats_digest(data["seats"]):
            raise StoreError(f"{where}: damaged: the seats do not match their digest; {way_out}")
        return data


def _dead_creator(backend: Backend) -> dict[str, Any] | None:
    """The LOCK of a solve that was creating a store here and is gone (it ran on this
    host and its process is not running: :func:`~ladders.checkpoints.locks.driver_gone`),
    or None (no such LOCK, or its creator may be alive)."""
    try:
        holder = parse_lock(backend.read("LOCK"))
    except FileNotFoundError:
        return None
    return holder if holder.get("creating") and driver_gone(holder) else None


def _being_created(backend: Backend) -> str | None:
    """The refusal for a place whose LOCK says a solve is creating a run there (or died
    doing so), naming it; None when there is no such LOCK."""
    try:
        holder = parse_lock(backend.read("LOCK"))
    except FileNotFoundError:
        return None
    if not holder.get("creating"):
        return None
    return (f"{backend.url}: another solve is creating a run here right now (pid "
            f"{holder['pid']} on host {holder['host']}); choose another --checkpoint folder, or "
            f"if that solve is gone, delete {backend.url}")


#: Why a survey passes over an intact older manifest.
SUPERSEDED = "needs segments that newer commits superseded and deleted"


def _passed_over(passed: list[str]) -> str:
    """The manifests a survey passed over, newest first: the first named with why, the
    others counted (with why, where it is the same for all of them)."""
    more = len(passed) - 1
    if not more:
        return passed[0]
    why = ((SUPERSEDED if more == 1 else SUPERSEDED.replace("needs", "need", 1))
           if all(SUPERSEDED in text for text in passed[1:]) else "cannot be used either")
    return f"{passed[0]}, and the {more} older one{'s' if more > 1 else ''} {why}"


def _seats_digest(seats: list[str]) -> str:
    """SHA-256 of the seats' fractions, one per line."""
    return hashlib.sha256("\n".join(seats).encode()).hexdigest()


#: The object a driver writes for its workers' probe (see :func:`probe_store`).
PROBE = ".probe"


def probe_store(url: str, modules: tuple[str, ...] = (), token: str = "") -> dict[str, Any]:
    """Run on a worker: prove it can import ``modules`` (what its tasks will run: a
    worker without them fails here, not at its first task, which then also starts
    without paying for the imports), that it sees the driver's store (it reads back the
    ``token`` the driver wrote as :data:`PROBE`: a worker whose path names another,
    empty folder fails here), and that it can write, read and delete an object there."""
    import importlib
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "module": name}
    key = f"{PROBE}-{socket.gethostname()}-{os.getpid()}"
    try:
        backend = open_backend(url)
        try:
            seen = backend.read(PROBE).decode()
        except FileNotFoundError:
            seen = ""
        if token and seen != token:
            return {"ok": False, "error": "it does not see the store this driver wrote (its "
                                          f"{url} is another place)"}
        backend.replace(key, b"ok")
        ok = backend.read(key) == b"ok"
        backend.delete(key)
    except Exception as exc:  # whatever the storage raised, the driver names it
        first = (str(exc).strip().splitlines() or [""])[0]
        return {"ok": False, "error": f"{type(exc).__name__}: {first}"}
    return {"ok": ok, "error": None if ok else "read back differs"}
