"""Where a run store's bytes live: every file operation of the store behind one small
interface, so that the store's protocol (exclusive create for numbered manifests, an
atomically replaced ``CURRENT``, a ``LOCK`` that one driver holds) is written once and
stands on any storage that offers these operations.

:class:`Backend` is that interface: keys are ``/``-separated paths relative to the
store's root (``run.json``, ``manifest/000012.json``, ``rows/g3/b2-ab12.../zarr.json``).
:class:`LocalBackend` puts them in a folder of a local or shared POSIX filesystem with
the guarantees of :mod:`ladders.checkpoints.files` (fsync, atomic rename, a hard link
that refuses to replace). :class:`ObjectBackend` implements the same methods on object storage
with conditional writes (create-only PUT, compare-and-swap on the ETag); see
docs/architecture.md.

:func:`open_backend` turns the user's ``--checkpoint`` text into a backend. A plain path
or a ``file://`` URL is a folder; ``s3://``, ``gs://``, ``az://`` (``abfs://``) and
``memory://`` are object storage; any other ``scheme://`` is refused with a clear
error, never taken as a relative path (``s3://bucket/run`` once became a local folder
``./s3:/bucket/run``).
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.files import write_atomically


class Backend(Protocol):
    """The file operations of a run store. Keys are relative ``/`` paths."""

    #: what users type to reach the store again (a path, or a URL)
    url: str
    #: what another process (a Dask worker) opens to reach the same store
    worker_url: str

    def read(self, key: str) -> bytes:
        """The bytes of ``key`` (``FileNotFoundError`` when there is no such key)."""

    def exists(self, key: str) -> bool:
        """Whether ``key`` holds an object."""

    def create(self, key: str, data: bytes) -> None:
        """Write ``key`` only if it does not exist (``FileExistsError`` otherwise);
        whole or not at all."""

    def replace(self, key: str, data: bytes) -> None:
        """Write ``key`` whole or not at all, replacing what it held."""

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing happens when it is gone already)."""

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key under ``prefix/`` (a segment)."""

    def list(self, prefix: str = "") -> Iterator[str]:
        """Every key under ``prefix/`` (all keys for ``""``), in no particular order."""

    def entries(self, prefix: str, depth: int) -> set[str]:
        """The paths of ``depth`` components under ``prefix`` that hold anything (a
        segment's root, e.g. ``rows/g3/b2-x`` for depth 3), however little of it was
        written (a folder a writer made before it was stopped counts)."""

    def age(self, key: str) -> float:
        """Seconds since ``key`` was last written (``FileNotFoundError`` if absent)."""

    def size_bytes(self) -> int:
        """Bytes the store holds."""

    def is_empty(self) -> bool:
        """Whether nothing is stored under the root yet."""

    def check(self) -> None:
        """Refuse, before any work, a place that cannot hold a store (a file where a
        folder should be, an unreachable bucket): ``StoreError``."""

    def prepare(self) -> None:
        """Make the root ready to hold a new store (``StoreError`` when it cannot)."""

    def remove_all(self) -> None:
        """Remove every key under the root (a store that was never complete)."""

    def zarr_store(self, prefix: str, mode: str) -> Any:
        """A Zarr v3 store rooted at ``prefix`` (a segment), opened with ``mode``."""


class LocalBackend:
    """A store in a folder: one file per key, written by
    :func:`~ladders.checkpoints.files.write_atomically` (temporary file, fsync, rename,
    fsync of the folder). Every Dask worker must see the folder at the same path."""

    def __init__(self, root: str | Path) -> None:
        self._made = False
        self.root = Path(root)
        self.url = str(self.root)
        self.worker_url = str(self.root.resolve())

    def _path(self, key: str) -> Path:
        return self.root / key

    def read(self, key: str) -> bytes:
        return self._path(key).read_bytes()

    def exists(self, key: str) -> bool:
        return self._path(key).exists()

    def create(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data, exclusive=True)

    def replace(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, data)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> None:
        shutil.rmtree(self._path(prefix), ignore_errors=True)
        parent = self._path(prefix).parent
        while parent != self.root and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()  # an emptied group folder of an elimination run
            parent = parent.parent

    def list(self, prefix: str = "") -> Iterator[str]:
        base = self._path(prefix) if prefix else self.root
        if not base.is_dir():
            return
        for folder, _dirs, files in os.walk(base):
            rel = Path(folder).relative_to(self.root)
            for name in files:
                yield (rel / name).as_posix()

    def entries(self, prefix: str, depth: int) -> set[str]:
        start = len(Path(prefix).parts)
        pattern = "/".join(["*"] * (depth - start))
        base = self._path(prefix)
        return {p.relative_to(self.root).as_posix() for p in base.glob(pattern)} if base.is_dir() else set()

    def age(self, key: str) -> float:
        return time.time() - self._path(key).stat().st_mtime

    def size_bytes(self) -> int:
        # a late worker (a cancelled task still running) may rename or remove its
        # temporary file between the listing and the stat: it is not counted
        total = 0
        for folder, _, names in os.walk(self.root):
            for name in names:
                try:
                    total += os.stat(os.path.join(folder, name)).st_size
                except FileNotFoundError:
                    pass
        return total

    def check(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"{self.root} is a file; --checkpoint needs a folder")

    def is_empty(self) -> bool:
        self.check()
        return not self.root.exists() or not any(self.root.iterdir())

    def prepare(self) -> None:
        self._made = not self.root.exists()
        self.root.mkdir(parents=True, exist_ok=True)

    def remove_all(self) -> None:
        if self._made:
            shutil.rmtree(self.root, ignore_errors=True)
            return
        for child in self.root.iterdir() if self.root.exists() else []:
            shutil.rmtree(child) if child.is_dir() else child.unlink(missing_ok=True)

    def zarr_store(self, prefix: str, mode: str) -> Any:
        from zarr.storage import LocalStore
        return LocalStore(self._path(prefix), read_only=mode == "r")


class ObjectBackend:
    """A store under a prefix of a bucket (S3, GCS, Azure Blob) or in memory, through
    obstore (the Rust ``object_store`` crate). The store's protocol stands on the
    conditional writes those services offer: :meth:`create` is a PUT with
    ``If-None-Match: *`` (two drivers can never commit the same manifest number) and
    :meth:`swap` a PUT with ``If-Match`` on the ETag (the LOCK is a lease taken over
    only by compare-and-swap). Credentials and the endpoint come from each cloud's
    usual environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_ALLOW_HTTP``; ``GOOGLE_*``;
    ``AZURE_STORAGE_*``), read by obstore in every process that opens the store, the
    Dask workers included; nothing of them is ever written to the store."""

    #: objects whose keys a listing gathers per delete request
    DELETE_BATCH = 1000

    def __init__(self, url: str) -> None:
        try:
            from obstore.store import from_url
        except ImportError:
            raise StoreError(f"{url}: run stores on object storage need obstore: "
                             "pip install 'ladders[cloud]'") from None
        self.url = self.worker_url = url.rstrip("/")
        try:
            if self.url.lower().startswith("memory://"):
                # one memory store per URL and process, so that reopening finds it
                self._store = _MEMORY.setdefault(self.url, from_url("memory:///"))
            else:
                self._store = from_url(self.url)
        except Exception as exc:  # obstore's configuration errors name the missing setting
            raise StoreError(f"{url}: cannot open this object store ({type(exc).__name__}: "
                             f"{exc}); see 'Running on a cluster' in docs/guide.md") from None

    def _errors(self) -> Any:
        import obstore.exceptions
        return obstore.exceptions

    def read(self, key: str) -> bytes:
        return self.read_versioned(key)[0]

    def read_versioned(self, key: str) -> tuple[bytes, str | None]:
        """The bytes of ``key`` and its ETag (what :meth:`swap` compares)."""
        import obstore
        try:
            got = obstore.get(self._store, key)
        except (FileNotFoundError, self._errors().NotFoundError):
            raise FileNotFoundError(key) from None
        return bytes(got.bytes()), got.meta.get("e_tag")

    def exists(self, key: str) -> bool:
        import obstore
        try:
            obstore.head(self._store, key)
        except (FileNotFoundError, self._errors().NotFoundError):
            return False
        return True

    def create(self, key: str, data: bytes) -> None:
        import obstore
        try:
            obstore.put(self._store, key, data, mode="create")
        except self._errors().AlreadyExistsError:
            raise FileExistsError(key) from None

    def replace(self, key: str, data: bytes) -> None:
        import obstore
        obstore.put(self._store, key, data, mode="overwrite")

    def swap(self, key: str, data: bytes, etag: str | None) -> bool:
        """Write ``key`` only if its ETag is still ``etag``; False when it changed."""
        import obstore
        try:
            obstore.put(self._store, key, data, mode={"e_tag": etag})
        except (self._errors().PreconditionError, FileNotFoundError, self._errors().NotFoundError):
            return False
        return True

    def delete(self, key: str) -> None:
        import obstore
        try:
            obstore.delete(self._store, key)
        except (FileNotFoundError, self._errors().NotFoundError):
            pass

    def delete_prefix(self, prefix: str) -> None:
        import obstore
        keys = list(self.list(prefix))
        for i in range(0, len(keys), self.DELETE_BATCH):
            obstore.delete(self._store, keys[i:i + self.DELETE_BATCH])

    def _metas(self, prefix: str = "") -> Iterator[dict[str, Any]]:
        import obstore
        stream = obstore.list(self._store, prefix=f"{prefix.rstrip('/')}/" if prefix else None)
        for batch in stream:
            yield from batch

    def list(self, prefix: str = "") -> Iterator[str]:
        return (meta["path"] for meta in self._metas(prefix))

    def entries(self, prefix: str, depth: int) -> set[str]:
        return {"/".join(key.split("/")[:depth]) for key in self.list(prefix)}

    def age(self, key: str) -> float:
        import obstore
        try:
            meta = obstore.head(self._store, key)
        except (FileNotFoundError, self._errors().NotFoundError):
            raise FileNotFoundError(key) from None
        return time.time() - meta["last_modified"].timestamp()

    def size_bytes(self) -> int:
        return sum(int(meta["size"]) for meta in self._metas())

    def is_empty(self) -> bool:
        return next(iter(self.list()), None) is None

    def prepare(self) -> None:
        """Nothing to make (prefixes need no folders): :meth:`check`."""
        self.check()

    def check(self) -> None:
        """An unreachable bucket fails here, before any work, with the store's own
        message and the settings to look at."""
        try:
            self.is_empty()
        except Exception as exc:
            raise StoreError(f"{self.url}: the object store cannot be reached ({type(exc).__name__}: "
                             f"{exc}); check the bucket, the endpoint and the credentials "
                             "(AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...)") from None

    def remove_all(self) -> None:
        self.delete_prefix("")

    def zarr_store(self, prefix: str, mode: str) -> Any:
        """A Zarr store rooted at the segment itself: given a path inside the run's
        store, Zarr would read and write every parent group on the way (19 requests to
        write a segment of one array instead of 3)."""
        from zarr.storage import ObjectStore, StorePath
        if self.url.lower().startswith("memory://"):  # one store per process: a path in it
            return StorePath(ObjectStore(self._store, read_only=mode == "r"), prefix)
        from obstore.store import from_url
        return ObjectStore(from_url(f"{self.url}/{prefix}"), read_only=mode == "r")


#: The stores of ``memory://`` URLs in this process.
_MEMORY: dict[str, Any] = {}


#: The variable that sets a lease's length, its default, and the lengths it may take.
LEASE_VARIABLE = "LADDERS_LEASE_SECONDS"
DEFAULT_LEASE, SHORTEST_LEASE, LONGEST_LEASE = 60.0, 1.0, 86400.0


def lease_seconds() -> float:
    """The length in seconds of a driver's lease on a store on object storage
    (``LADDERS_LEASE_SECONDS``, default 60; longer where the store answers slowly). A value that is not a
    number from 1 to 86,400 (``inf``, ``nan``, ``0``, ``-5``, ``abc``) is a
    ``StoreError`` naming the variable: a lease of 0 s would be renewed without pause,
    an endless one would lock a crashed driver's store for ever."""
    text = os.environ.get(LEASE_VARIABLE, "").strip()
    if not text:
        return DEFAULT_LEASE
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not SHORTEST_LEASE <= value <= LONGEST_LEASE:  # nan is refused too
        raise StoreError(f"{LEASE_VARIABLE}={text[:40]!r}: not a lease length; give seconds from "
                         f"{SHORTEST_LEASE:g} to {LONGEST_LEASE:g} (default {DEFAULT_LEASE:g}), "
                         "or unset it")
    return value


#: URL schemes of object storage (obstore's), and what each stands for in messages.
OBJECT_SCHEMES = {"s3": "Amazon S3 or an S3-compatible server", "gs": "Google Cloud Storage",
                  "az": "Azure Blob Storage", "abfs": "Azure Blob Storage",
                  "memory": "this process's memory (tests)"}


def open_backend(where: str | Path | Backend) -> Backend:
    """The backend for ``--checkpoint`` text: a plain path or ``file://`` URL is a
    folder (:class:`LocalBackend`); ``s3://``, ``gs://``, ``az://``, ``abfs://`` and
    ``memory://`` are object storage (:class:`ObjectBackend`); any other ``scheme://``
    is refused, naming it."""
    if not isinstance(where, (str, Path)):
        return where
    text = str(where)
    if "://" not in text:
        return LocalBackend(text)
    scheme = text.split("://", 1)[0].lower()
    if scheme == "file":
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise StoreError(f"{text}: a file:// URL names a folder on this machine "
                             f"(file:///path/to/run), not on host {parsed.netloc!r}")
        return LocalBackend(unquote(parsed.path))
    if scheme in OBJECT_SCHEMES:
        if scheme != "memory" and not urlparse(text).netloc:
            raise StoreError(f"{text}: name the bucket ({scheme}://BUCKET/PREFIX)")
        return ObjectBackend(text)
    raise StoreError(f"{text}: unknown storage scheme {scheme!r}; give a folder, or a URL of "
                     f"{', '.join(s + '://' for s in OBJECT_SCHEMES)} or file://")
