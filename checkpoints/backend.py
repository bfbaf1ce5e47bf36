"""Where a run store's bytes live: every file operation of the store behind one small
interface, so that the store's protocol (exclusive create for numbered manifests, an
atomically replaced ``CURRENT``, a ``LOCK`` that one driver holds) is written once and
stands on any storage that offers these operations.

:class:`Backend` is that interface: keys are ``/``-separated paths relative to the
store's root (``run.json``, ``manifest/000012.json``, ``rows/g3/b2-ab12.../zarr.json``).
:class:`LocalBackend` puts them in a folder of a local or shared POSIX filesystem with
the guarantees of :mod:`ladders.checkpoints.files` (fsync, atomic rename, a hard link
that refuses to replace). A backend for object storage implements the same methods on
conditional writes (create-only PUT, compare-and-swap on the ETag); see
docs/architecture.md.

:func:`open_backend` turns the user's ``--checkpoint`` text into a backend. A plain path
or a ``file://`` URL is a folder; any other ``scheme://`` is refused with a clear error,
never taken as a relative path (``s3://bucket/run`` once became a local folder
``./s3:/bucket/run``).
"""

from __future__ import annotations

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
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    def is_empty(self) -> bool:
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"{self.root} is a file; --checkpoint needs a folder")
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


#: URL schemes of object storage, refused until a backend for them is installed.
OBJECT_SCHEMES = ("s3", "gs", "gcs", "az", "abfs", "memory")


def open_backend(where: str | Path | Backend) -> Backend:
    """The backend for ``--checkpoint`` text: a plain path or ``file://`` URL is a
    folder (:class:`LocalBackend`); another ``scheme://`` is refused, naming it."""
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
        raise StoreError(f"{text}: run stores on object storage ({scheme}://) are not "
                         "supported by this ladders version; give a folder that every "
                         "worker sees at the same path")
    raise StoreError(f"{text}: unknown storage scheme {scheme!r}; give a folder path or "
                     "a file:// URL")
