"""The run store: everything a long exact solve needs to survive a crash and resume.

```
RUN/run.json         immutable: problem, engine, system digest, plan token, parameters, versions
RUN/plan.json        elimination engine: the plan (order, blocks, touches), hashed by its token
RUN/rows/...         Zarr v3 segments, written once, one writer each (see segments.py)
RUN/manifest/NNNNNN.json   numbered manifests, created exclusively, never rewritten
RUN/manifest/CURRENT       the number of the newest manifest (temp file, fsync, rename)
RUN/LOCK             exclusive create: one driver per store
RUN/COMPLETE.json    written last, only after verification passed
```

A manifest is the only truth of what is done: the newest version of every group of
rows still to be eliminated, the factored blocks still needed, and the finished tasks.
A segment counts only if a committed manifest lists it with its digest; anything else
under ``rows/`` is a leftover of an interrupted task and is cleared on resume.

Stores live on a local or shared POSIX path (every worker must see the same files):
manifests rely on exclusive create and atomic rename.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladders.checkpoints.errors import StoreError, damaged_store
from ladders.checkpoints.files import write_json_atomically
from ladders.checkpoints.segments import SegmentRef, read_segment, write_segment

#: Layout version of a store; 2: row segments are one Zarr array (see segments.py).
FORMAT = 2
#: Seconds after which an empty or unreadable LOCK is known to be left over.
LOCK_GRACE = 10.0
#: Encoded bytes of segments one process keeps decoded in memory (see :meth:`RunStore.read`).
CACHE_BYTES = 256 * 2**20


@dataclass
class Manifest:
    """What is done. ``groups[j]``: newest version of group j (block that last updated
    it, -1 for the initial rows) and its segment; ``factored[b]``: F(b)'s segment while
    some U(b, j) still needs it (the last block's stays: it holds the target row)."""

    seq: int
    groups: dict[int, tuple[int, SegmentRef]]
    factored: dict[int, SegmentRef]
    done: set[tuple[int, int]]
    elapsed: float = 0.0
    max_bits: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "groups": {str(j): {"version": v, "segment": ref.to_json()}
                       for j, (v, ref) in sorted(self.groups.items())},
            "factored": {str(b): ref.to_json() for b, ref in sorted(self.factored.items())},
            "done": sorted([b, j] for b, j in self.done),
            "elapsed": round(self.elapsed, 3),
            "max_bits": self.max_bits,
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            seq=int(data["seq"]),
            groups={int(j): (int(g["version"]), SegmentRef.from_json(g["segment"]))
                    for j, g in data["groups"].items()},
            factored={int(b): SegmentRef.from_json(r) for b, r in data["factored"].items()},
            done={(int(b), int(j)) for b, j in data["done"]},
            elapsed=float(data.get("elapsed", 0.0)),
            max_bits=int(data.get("max_bits", 0)),
            extra={k: v for k, v in data.items()
                   if k not in {"seq", "groups", "factored", "done", "elapsed", "max_bits"}},
        )

    def referenced(self) -> set[str]:
        """Segment paths this manifest needs."""
        return {ref.path for _, ref in self.groups.values()} | {r.path for r in self.factored.values()}


class RunStore:
    """One run directory. Create with :meth:`create`, reopen with :meth:`open`."""

    def __init__(self, root: Path, run: dict[str, Any]) -> None:
        self.root = root
        self.run = run
        #: what an engine derives from the store's files once per process (e.g. its plan)
        self.memo: dict[str, Any] = {}
        self._cache: OrderedDict[str, tuple[dict[int, dict], int]] = OrderedDict()
        self._cached_bytes = 0

    @property
    def engine(self) -> str:
        """The name of the exact engine the run uses (see ``ladders.cluster.engines``)."""
        return str(self.run.get("engine", "elimination"))

    # ----------------------------------------------------------------- create / open
    @classmethod
    def create(cls, root: str | Path, run: dict[str, Any], files: dict[str, Any] | None = None,
               groups: dict[int, tuple[int, SegmentRef]] | None = None,
               extra: dict[str, Any] | None = None,
               segments: Callable[[Path], dict[int, tuple[int, SegmentRef]]] | None = None) -> RunStore:
        """A new store for ``run`` (run.json), with the engine's own immutable JSON
        ``files`` (e.g. the elimination plan), the first manifest's ``extra`` and the
        initial segments that ``segments(root)`` writes (their references become the
        first manifest's groups).

        Refuses a folder that already holds a run (resume it instead) or other files.
        """
        root = Path(root)
        if (root / "run.json").exists():
            raise StoreError(f"{root} already holds a run: use 'ladders resume {root}' or "
                             "choose another --checkpoint folder")
        if root.exists() and not root.is_dir():
            raise StoreError(f"{root} is a file; --checkpoint needs a folder")
        if root.exists() and any(root.iterdir()):
            raise StoreError(f"{root} is not empty and holds no run; choose an empty or new folder")
        made = not root.exists()
        try:
            (root / "manifest").mkdir(parents=True, exist_ok=True)
            for name, data in (files or {}).items():
                write_json_atomically(root / name, data, exclusive=True)
            groups = segments(root) if segments is not None else {}
            write_json_atomically(root / "run.json", {**run, "format": FORMAT, "created": time.time()},
                                  exclusive=True)
            store = cls(root, json.loads((root / "run.json").read_text()))
            store.commit(Manifest(seq=0, groups=groups, factored={}, done=set(), extra=extra or {}))
        except BaseException:
            # a store that was never complete holds nothing to resume (a full disk,
            # Ctrl-C): leave the folder as it was, so the same command can run again
            if made:
                shutil.rmtree(root, ignore_errors=True)
            else:
                for child in root.iterdir():
                    shutil.rmtree(child) if child.is_dir() else child.unlink(missing_ok=True)
            raise
        return store

    @staticmethod
    def damaged(root: Path) -> str:
        """The way out of a file that defines the run (run.json, plan.json, a manifest)
        damaged beyond repair: what its segments mean is lost with it."""
        return damaged_store(root)

    @classmethod
    def open(cls, root: str | Path) -> RunStore:
        """Open an existing store (its engine checks its own files, see ``read_json``)."""
        root = Path(root)
        if not (root / "run.json").exists():
            raise StoreError(f"{root}: no run store here (no run.json); start one with "
                             "'ladders solve BOARD --checkpoint DIR'")
        try:
            run = json.loads((root / "run.json").read_text())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{root}: run.json is unreadable ({exc}); {cls.damaged(root)}") from exc
        if not isinstance(run, dict) or "problem" not in run \
                or not isinstance(run.get("engine", ""), str):
            raise StoreError(f"{root}/run.json: not a run of this store format (no problem); "
                             f"{cls.damaged(root)}")
        if run.get("format") != FORMAT:
            raise StoreError(f"{root}: store format {run.get('format')} was written by another "
                             f"ladders version (this one reads format {FORMAT}); finish it with "
                             "that version or start a new run")
        return cls(root, run)

    def read_json(self, name: str) -> Any:
        """One of the run's immutable JSON files (``StoreError`` if it is unreadable)."""
        try:
            return json.loads((self.root / name).read_text())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.root}: {name} is unreadable ({exc}); "
                             f"{self.damaged(self.root)}") from exc

    # ----------------------------------------------------------------------- manifests
    def current(self) -> Manifest:
        """The newest committed manifest."""
        try:
            seq = int((self.root / "manifest" / "CURRENT").read_text().strip())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.root}: no readable manifest/CURRENT ({exc}); the store "
                             "cannot be resumed: start a new run") from exc
        return self._read_manifest(seq)

    def _read_manifest(self, seq: int) -> Manifest:
        """Manifest ``seq``, its shape checked (``StoreError`` naming the file)."""
        path = self.root / "manifest" / f"{seq:06d}.json"
        try:
            return Manifest.from_json(json.loads(path.read_text()))
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path}: unreadable ({exc}); {self.damaged(self.root)}") from exc
        except (KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{path}: not a manifest of this store format "
                             f"({type(exc).__name__}: {exc}); {self.damaged(self.root)}") from exc

    def commit(self, manifest: Manifest) -> None:
        """Commit ``manifest`` as the new truth: numbered file (exclusive), then CURRENT."""
        path = self.root / "manifest" / f"{manifest.seq:06d}.json"
        try:
            write_json_atomically(path, manifest.to_json(), exclusive=True)
        except FileExistsError as exc:
            raise StoreError(f"{path} exists already: another driver is writing this store") from exc
        write_json_atomically(self.root / "manifest" / "CURRENT", manifest.seq)
        old = self.root / "manifest" / f"{manifest.seq - 3:06d}.json"
        old.unlink(missing_ok=True)  # keep a short history for inspection

    # ------------------------------------------------------------------------ segments
    def write(self, path: str, rows: dict[int, dict]) -> SegmentRef:
        """Write ``rows`` as a new segment and keep them in this process's cache."""
        ref = write_segment(self.root, path, rows)
        self._remember(ref, rows)
        return ref

    def read(self, ref: SegmentRef) -> dict[int, dict]:
        """The rows of a committed segment: from this process's cache when it wrote or
        read the same digest lately (a Dask worker often runs the next task on the group
        it just updated, and every ``U(b, .)`` needs ``F(b)``), else from disk, checked.

        The rows are shared, not copied: the kernels never change rows in place."""
        hit = self._cache.get(ref.digest)
        if hit is not None:
            self._cache.move_to_end(ref.digest)
            return hit[0]
        rows = read_segment(self.root, ref)
        self._remember(ref, rows)
        return rows

    def _remember(self, ref: SegmentRef, rows: dict[int, dict]) -> None:
        if ref.nbytes > CACHE_BYTES // 2:
            return
        old = self._cache.pop(ref.digest, None)  # the same rows written twice: count them once
        if old is not None:
            self._cached_bytes -= old[1]
        self._cache[ref.digest] = (rows, ref.nbytes)
        self._cached_bytes += ref.nbytes
        while self._cached_bytes > CACHE_BYTES:
            _, (_, nbytes) = self._cache.popitem(last=False)
            self._cached_bytes -= nbytes

    def collect_garbage(self, manifest: Manifest, writing: frozenset[str] = frozenset()) -> int:
        """Delete segments the manifest does not reference (superseded versions, factored
        blocks no task needs any more, leftovers of interrupted tasks), except those whose
        path starts with a prefix in ``writing`` (tasks still running). Returns the count."""
        keep = manifest.referenced()
        removed = 0
        rows = self.root / "rows"
        for group_dir in rows.iterdir() if rows.exists() else []:
            for seg in group_dir.iterdir():
                rel = f"rows/{group_dir.name}/{seg.name}"
                if rel not in keep and not any(rel.startswith(w) for w in writing):
                    shutil.rmtree(seg, ignore_errors=True)
                    removed += 1
            if not any(group_dir.iterdir()):
                group_dir.rmdir()
        return removed

    def drop_superseded(self, before: Manifest, after: Manifest) -> None:
        """Delete the segments ``before`` referenced and ``after`` no longer does (the
        cheap per-commit cleanup; :meth:`collect_garbage` scans for everything else)."""
        for path in before.referenced() - after.referenced():
            shutil.rmtree(self.root / path, ignore_errors=True)

    def remove_unlisted(self, folder: str, keep: set[str]) -> int:
        """Delete the segments under ``folder`` whose path (``folder/name``) is not in
        ``keep``: leftovers of tasks or drivers that died before a manifest listed them.
        Returns how many."""
        removed = 0
        for seg in (self.root / folder).iterdir() if (self.root / folder).exists() else []:
            if f"{folder}/{seg.name}" not in keep:
                shutil.rmtree(seg, ignore_errors=True)
                removed += 1
        return removed

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    # ---------------------------------------------------------------- lock / complete
    def acquire_lock(self) -> None:
        """Take the store's LOCK or explain who holds it and the way out.

        A lock left by a dead driver on this host (kill -9, power loss of the process)
        is taken over, and so is an empty or unreadable one older than
        :data:`LOCK_GRACE` seconds (a driver writes its pid within microseconds of
        creating the file). A lock held from another host cannot be checked from here:
        the message says which file to delete once that solve is known to be gone.
        """
        lock = self.root / "LOCK"
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self.locked_by()
                if holder is None:
                    try:
                        age = time.time() - lock.stat().st_mtime
                    except FileNotFoundError:
                        continue
                    if age > LOCK_GRACE:
                        lock.unlink(missing_ok=True)  # garbage, and no driver is writing it
                        continue
                    raise StoreError(f"{self.root} is being locked by another solve right now; "
                                     "try again in a few seconds") from None
                if holder["host"] == me["host"] and not pid_alive(holder["pid"]):
                    lock.unlink(missing_ok=True)  # stale: its driver is gone
                    continue
                where = "this host" if holder["host"] == me["host"] else f"host {holder['host']}"
                raise StoreError(f"{self.root} is locked by a running solve (pid {holder['pid']} on "
                                 f"{where}); wait for it or stop it first; if it is gone, delete "
                                 f"{lock}") from None
            with os.fdopen(fd, "w") as fh:
                json.dump(me, fh)
            self._roll_forward()
            return
        raise StoreError(f"{self.root}: could not take the LOCK; if no solve is running, delete {lock}")

    def _roll_forward(self) -> None:
        """Make CURRENT name the newest complete manifest.

        A driver killed between writing manifest N+1 and moving CURRENT left N+1
        complete (it is written whole, after every segment it lists): it is adopted, not
        deleted, so that nothing a committed manifest may still need is ever lost (a
        CURRENT set back by hand rolls forward the same way). A numbered file that does
        not parse is moved aside as ``NNNNNN.json.bad``, so the next commit can take its
        number.
        """
        folder = self.root / "manifest"
        try:
            seq = int((folder / "CURRENT").read_text().strip())
        except (OSError, ValueError):
            return
        newest, bad = self._beyond(seq)
        for path in bad:
            path.replace(path.with_name(path.name + ".bad"))
        if newest != seq:
            write_json_atomically(folder / "CURRENT", newest)

    def _beyond(self, seq: int) -> tuple[int, list[Path]]:
        """The newest complete manifest number from ``seq`` on, and the numbered files
        beyond ``seq`` that do not parse."""
        newest, bad = seq, []
        for path in sorted((self.root / "manifest").glob("[0-9]*.json"), key=lambda p: p.stem):
            if not path.stem.isdigit() or int(path.stem) <= seq:
                continue
            try:
                self._read_manifest(int(path.stem))
            except StoreError:
                bad.append(path)
                continue
            newest = max(newest, int(path.stem))
        return newest, bad

    def newest(self) -> Manifest:
        """What the next driver resumes from, read-only: CURRENT's manifest, or a newer
        complete one that a driver killed between writing it and moving CURRENT left
        (:meth:`_roll_forward` adopts it)."""
        return self._read_manifest(self._beyond(self.current().seq)[0])

    def release_lock(self) -> None:
        (self.root / "LOCK").unlink(missing_ok=True)

    def locked_by(self) -> dict[str, Any] | None:
        """Who holds the LOCK (``pid``, ``host``, ``since``), or None when there is no
        readable lock of the right shape."""
        try:
            holder = json.loads((self.root / "LOCK").read_text())
        except (OSError, ValueError):
            return None
        ok = (isinstance(holder, dict) and isinstance(holder.get("pid"), int)
              and isinstance(holder.get("host"), str))
        return holder if ok else None

    def mark_complete(self, result: dict[str, Any]) -> None:
        """Write COMPLETE.json: ``result`` with the digest of its seats, so that a
        changed digit is found when the answer is read back, not printed."""
        write_json_atomically(self.root / "COMPLETE.json",
                              {**result, "seats_digest": _seats_digest(result["seats"])})

    def completed(self) -> dict[str, Any] | None:
        """COMPLETE.json (the verified answer), or None while the run is not complete.
        A damaged one (unreadable, of the wrong shape, or seats that do not match their
        digest) is a ``StoreError`` that says how to rebuild it from the stored work."""
        path = self.root / "COMPLETE.json"
        if not path.exists():
            return None
        way_out = (f"delete it and run 'ladders resume {self.root}' to rebuild the answer "
                   "from the stored work")
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path}: damaged, unreadable ({exc}); {way_out}") from exc
        if not (isinstance(data, dict) and isinstance(data.get("seats"), list)
                and all(isinstance(s, str) for s in data["seats"])):
            raise StoreError(f"{path}: damaged or not a COMPLETE.json of this store format "
                             f"(no list of seats); {way_out}")
        digest = data.get("seats_digest")
        if digest is not None and digest != _seats_digest(data["seats"]):
            raise StoreError(f"{path}: damaged: the seats do not match their digest; {way_out}")
        return data


def _seats_digest(seats: list[str]) -> str:
    """SHA-256 of the seats' fractions, one per line."""
    return hashlib.sha256("\n".join(seats).encode()).hexdigest()


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def probe_store(root: str, modules: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run on a worker: prove it can import ``modules`` (what its tasks will run: a
    worker without them fails here, not at its first task, which then also starts
    without paying for the imports) and write, read and delete a file in the store."""
    import importlib
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "module": name}
    path = Path(root) / f".probe-{socket.gethostname()}-{os.getpid()}"
    try:
        path.write_text("ok")
        ok = path.read_text() == "ok"
        path.unlink()
    except OSError as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": ok, "error": None if ok else "read back differs"}
