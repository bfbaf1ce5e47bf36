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

import functools
import math
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote, urlparse

from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.files import named, write_atomically


class Backend(Protocol):
    """The file operations of a run store. Keys are relative ``/`` paths."""

    #: what users type to reach the store again (a path, or a URL)
    url: str
    #: what another process (a Dask worker) opens to reach the same store
    worker_url: str
    #: the capabilities the store's protocol asks of a backend, declared (as zarr's
    #: stores declare ``supports_writes``) rather than guessed from its methods:
    #: ``leases``: the LOCK is a lease taken over by compare-and-swap on its ETag
    #: (:meth:`ObjectBackend.swap`, :meth:`ObjectBackend.read_versioned`), for stores that no
    #: pid on this host can vouch for; else a LOCK file holding the driver's pid and host.
    #: ``round_trips``: each request is a round trip over the network, so the steps that
    #: only tidy up go to a background thread, off a commit's critical path.
    leases: bool
    round_trips: bool

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

    leases = False
    round_trips = False

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
        """zarr's ``LocalStore`` at the segment's folder, whose failed writes name their
        file (a full disk)."""
        return _named_local_store()(self._path(prefix), read_only=mode == "r")


@functools.cache
def _named_local_store() -> type:
    """zarr's ``LocalStore`` whose writes that fail without a file name (``[Errno 28] No
    space left on device``) name the file (:func:`~ladders.checkpoints.files.named`);
    made on first use, since importing zarr takes a while."""
    from zarr.storage import LocalStore

    class NamedLocalStore(LocalStore):
        async def set(self, key: str, value: Any) -> None:
            with named(self.root / key):
                await super().set(key, value)

        async def set_if_not_exists(self, key: str, value: Any) -> None:
            with named(self.root / key):
                await super().set_if_not_exists(key, value)

    return NamedLocalStore


class StoreUnavailable(StoreError):
    """The object store did not answer for as long as a lease lasts
    (:func:`lease_seconds`): the command stops; what was committed is kept."""


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
    Dask workers included; nothing of them is ever written to the store. Without
    credentials the store is refused before any request (:func:`check_settings`): no
    cloud metadata address is ever asked.

    A store that does not answer (refused or stalled connections, 5xx answers) is
    tried again, with one line on stderr saying so, for as long as a lease lasts
    (``patience``: :func:`lease_seconds`); beyond that the request ends in
    :class:`StoreUnavailable`. A missing bucket and refused credentials are a
    :class:`~ladders.checkpoints.errors.StoreError` of one line."""

    #: objects whose keys a listing gathers per delete request
    DELETE_BATCH = 1000
    leases = True
    round_trips = True
    #: seconds between tries while the store does not answer: the first, and the longest
    FIRST_WAIT, LONGEST_WAIT = 0.2, 5.0

    def __init__(self, url: str, patience: float | None = None) -> None:
        try:
            from obstore.store import from_url
        except ImportError:
            from ladders.solver.extras import install_hint
            raise StoreError(f"{url}: run stores on object storage need obstore: "
                             f"{install_hint('cloud')}") from None
        self.url = self.worker_url = url.rstrip("/")
        self.patience = lease_seconds() if patience is None else patience
        self._guard = threading.Lock()
        self._down_since: float | None = None
        try:
            if self.url.lower().startswith("memory://"):
                # one memory store per URL and process, so that reopening finds it
                self._store = _MEMORY.setdefault(self.url, from_url("memory:///"))
            else:
                check_settings(self.url)
                self._store = from_url(self.url, **self._options(tries=0))
        except StoreError:
            raise
        except Exception as exc:  # obstore's configuration errors name the missing setting
            raise StoreError(f"{url}: cannot open this object store ({describe(exc)}); see "
                             "'Running on a cluster' in docs/guide.md") from None

    def _options(self, tries: int) -> dict[str, Any]:
        """obstore's options for this store: the client's settings from the environment
        (obstore takes none of them from there once any is given) with a timeout, so
        that a stalled connection is a failure to try again, and ``tries`` retries of
        obstore's own (0: :meth:`_call` retries)."""
        scheme = self.url.split("://", 1)[0].lower()
        prefix = _ENV_PREFIX[scheme]
        client = {key: os.environ[f"{prefix}_{key.upper()}"] for key in _CLIENT_KEYS
                  if os.environ.get(f"{prefix}_{key.upper()}")}
        wait = max(5.0, min(30.0, self.patience / 2))
        client.setdefault("timeout", f"{wait:.0f}s")
        client.setdefault("connect_timeout", "5s")
        retry = {"max_retries": tries, "retry_timeout": timedelta(seconds=self.patience)}
        return {"client_options": client, "retry_config": retry}

    def _call(self, request: Callable[[], T], failed: list[str] | None = None) -> T:
        """``request`` (one obstore call) with the store's errors made ours: a missing
        bucket, refused credentials and other refusals a one-line ``StoreError``; a
        store that does not answer tried again until it has not answered for
        ``patience`` seconds (counted from the first failure of any request of this
        backend), then :class:`StoreUnavailable`. Each failed try is appended to
        ``failed``. Other errors (not found, already exists, precondition) pass."""
        wait = self.FIRST_WAIT
        while True:
            try:
                result = request()
            except Exception as exc:
                kind = _failure(exc)
                if kind is None:
                    raise
                if kind != "unavailable":
                    raise StoreError(self._refusal(kind, exc)) from None
                waited = self._outage(exc)
                if failed is not None:
                    failed.append(describe(exc))
                time.sleep(min(wait, max(0.0, self.patience - waited)))
                wait = min(2 * wait, self.LONGEST_WAIT)
                continue
            if self._down_since is not None:
                with self._guard:
                    since, self._down_since = self._down_since, None
                if since is not None:
                    sys.stderr.write(f"ladders: {self.url}: the object store answers again, after "
                                     f"{time.monotonic() - since:.0f} s\n")
            return result

    def _outage(self, exc: BaseException) -> float:
        """Seconds this store has not answered, said on stderr when it starts;
        :class:`StoreUnavailable` once they reach ``patience``."""
        now = time.monotonic()
        with self._guard:
            if self._down_since is None:
                self._down_since = now
                sys.stderr.write(f"ladders: {self.url}: the object store does not answer "
                                 f"({describe(exc)}); trying again for up to {self.patience:.0f} s "
                                 f"(the length of a lease, {LEASE_VARIABLE})\n")
            waited = now - self._down_since
        if waited >= self.patience:
            raise StoreUnavailable(
                f"{self.url}: the object store has not answered for {waited:.0f} s ({describe(exc)}), "
                f"the length of a lease ({LEASE_VARIABLE}={self.patience:g}): stopped, and what was "
                f"committed is kept; once the store answers, continue with "
                f"'ladders resume {self.url}'") from None
        return waited

    def _refusal(self, kind: str, exc: BaseException) -> str:
        """The one-line message of a store that answers but refuses."""
        bucket = urlparse(self.url).netloc
        if kind == "no-bucket":
            return (f"{self.url}: no such bucket {bucket!r} at the endpoint "
                    f"({describe(exc)}); create it, or check the URL and the endpoint"
                    f"{_ENDPOINT_HINT.get(self.url.split('://')[0].lower(), '')}")
        if kind == "denied":
            return (f"{self.url}: the object store refused these credentials ({describe(exc)}); "
                    f"check {_CREDENTIAL_HINT[self.url.split('://')[0].lower()]} and the bucket's "
                    "permissions")
        return f"{self.url}: the object store refused the request ({describe(exc)})"

    def read(self, key: str) -> bytes:
        return self.read_versioned(key)[0]

    def read_versioned(self, key: str) -> tuple[bytes, str | None]:
        """The bytes of ``key`` and its ETag (what :meth:`swap` compares)."""
        import obstore

        def get() -> tuple[bytes, str | None]:
            got = obstore.get(self._store, key)
            return bytes(got.bytes()), got.meta.get("e_tag")
        try:
            return self._call(get)
        except (FileNotFoundError, self._errors().NotFoundError):
            raise FileNotFoundError(key) from None

    def _errors(self) -> Any:
        import obstore.exceptions
        return obstore.exceptions

    def _holds(self, key: str, data: bytes) -> bool:
        """Whether ``key`` holds ``data``: a write that failed to answer may have been
        done all the same (then a retried create finds it, a retried swap finds its
        own ETag gone)."""
        try:
            return self.read(key) == data
        except FileNotFoundError:
            return False

    def exists(self, key: str) -> bool:
        import obstore
        try:
            self._call(lambda: obstore.head(self._store, key))
        except (FileNotFoundError, self._errors().NotFoundError):
            return False
        return True

    def create(self, key: str, data: bytes) -> None:
        import obstore
        failed: list[str] = []
        try:
            self._call(lambda: obstore.put(self._store, key, data, mode="create"), failed)
        except self._errors().AlreadyExistsError:
            if not (failed and self._holds(key, data)):
                raise FileExistsError(key) from None

    def replace(self, key: str, data: bytes) -> None:
        import obstore
        self._call(lambda: obstore.put(self._store, key, data, mode="overwrite"))

    def swap(self, key: str, data: bytes, etag: str | None) -> bool:
        """Write ``key`` only if its ETag is still ``etag``; False when it changed."""
        import obstore
        failed: list[str] = []
        try:
            self._call(lambda: obstore.put(self._store, key, data, mode={"e_tag": etag}), failed)
        except (self._errors().PreconditionError, FileNotFoundError, self._errors().NotFoundError):
            return bool(failed) and self._holds(key, data)
        return True

    def delete(self, key: str) -> None:
        import obstore
        try:
            self._call(lambda: obstore.delete(self._store, key))
        except (FileNotFoundError, self._errors().NotFoundError):
            pass

    def delete_prefix(self, prefix: str) -> None:
        import obstore
        keys = list(self.list(prefix))
        for i in range(0, len(keys), self.DELETE_BATCH):
            batch = keys[i:i + self.DELETE_BATCH]
            self._call(lambda: obstore.delete(self._store, batch))

    def _metas(self, prefix: str = "") -> list[dict[str, Any]]:
        import obstore
        where = f"{prefix.rstrip('/')}/" if prefix else None
        return self._call(lambda: [m for batch in obstore.list(self._store, prefix=where) for m in batch])

    def list(self, prefix: str = "") -> Iterator[str]:
        return (meta["path"] for meta in self._metas(prefix))

    def entries(self, prefix: str, depth: int) -> set[str]:
        return {"/".join(key.split("/")[:depth]) for key in self.list(prefix)}

    def age(self, key: str) -> float:
        import obstore
        try:
            meta = self._call(lambda: obstore.head(self._store, key))
        except (FileNotFoundError, self._errors().NotFoundError):
            raise FileNotFoundError(key) from None
        return time.time() - meta["last_modified"].timestamp()

    def size_bytes(self) -> int:
        return sum(int(meta["size"]) for meta in self._metas())

    def is_empty(self) -> bool:
        import obstore
        return not self._call(lambda: next(iter(obstore.list(self._store, chunk_size=1)), []))

    def prepare(self) -> None:
        """Nothing to make (prefixes need no folders): :meth:`check`."""
        self.check()

    def check(self) -> None:
        """A missing bucket, refused credentials or a store that does not answer fail
        here, before any work, with one line that says which."""
        self.is_empty()

    def remove_all(self) -> None:
        self.delete_prefix("")

    def zarr_store(self, prefix: str, mode: str) -> Any:
        """A Zarr store rooted at the segment itself: given a path inside the run's
        store, Zarr would read and write every parent group on the way (19 requests to
        write a segment of one array instead of 3). Its requests go through obstore's
        own retries, for as long as a lease lasts."""
        from zarr.storage import ObjectStore, StorePath
        if self.url.lower().startswith("memory://"):  # one store per process: a path in it
            return StorePath(ObjectStore(self._store, read_only=mode == "r"), prefix)
        from obstore.store import from_url
        return ObjectStore(from_url(f"{self.url}/{prefix}", **self._options(tries=1000)),
                           read_only=mode == "r")


T = TypeVar("T")

#: The stores of ``memory://`` URLs in this process.
_MEMORY: dict[str, Any] = {}
#: Whether ``memory://`` URLs are accepted: a Python caller reopens one in its own
#: process; on the command line (:func:`command_line_stores`) it would end with the command.
_memory_allowed = True


#: URL schemes of object storage (obstore's), and what each stands for in messages.
OBJECT_SCHEMES = {"s3": "Amazon S3 or an S3-compatible server", "gs": "Google Cloud Storage",
                  "az": "Azure Blob Storage", "abfs": "Azure Blob Storage",
                  "memory": "this process's memory (tests)"}
#: The prefix of each scheme's environment variables.
_ENV_PREFIX = {"s3": "AWS", "gs": "GOOGLE", "az": "AZURE", "abfs": "AZURE"}
#: obstore's client settings that its builders would read from ``PREFIX_KEY`` variables.
_CLIENT_KEYS = ("allow_http", "allow_invalid_certificates", "connect_timeout", "timeout",
                "proxy_url", "proxy_ca_certificate", "proxy_excludes", "user_agent",
                "http1_only", "http2_only", "pool_idle_timeout", "pool_max_idle_per_host")
#: Per scheme: sets of variables of which one set, all given, names credentials (or
#: their source) without asking a cloud's metadata address that the user did not name.
_CREDENTIALS: dict[str, tuple[tuple[str, ...], ...]] = {
    "s3": (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), ("AWS_SKIP_SIGNATURE",),
           ("AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"), ("AWS_CONTAINER_CREDENTIALS_FULL_URI",),
           ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",), ("AWS_METADATA_ENDPOINT",)),
    "gs": (("GOOGLE_SERVICE_ACCOUNT",), ("GOOGLE_SERVICE_ACCOUNT_PATH",),
           ("GOOGLE_SERVICE_ACCOUNT_KEY",), ("GOOGLE_APPLICATION_CREDENTIALS",),
           ("GOOGLE_SKIP_SIGNATURE",)),
    "az": (("AZURE_STORAGE_ACCOUNT_KEY",), ("AZURE_STORAGE_ACCESS_KEY",), ("AZURE_STORAGE_MASTER_KEY",),
           ("AZURE_STORAGE_SAS_KEY",), ("AZURE_STORAGE_SAS_TOKEN",), ("AZURE_STORAGE_TOKEN",),
           ("AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID"),
           ("AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_ID", "AZURE_TENANT_ID"),
           ("AZURE_STORAGE_USE_EMULATOR",), ("AZURE_USE_AZURE_CLI",), ("AZURE_SKIP_SIGNATURE",),
           ("AZURE_MSI_ENDPOINT",)),
}
#: What to set, per scheme, in messages.
_CREDENTIAL_HINT = {
    "s3": "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (an instance's role: AWS_METADATA_ENDPOINT)",
    "gs": "GOOGLE_SERVICE_ACCOUNT or GOOGLE_APPLICATION_CREDENTIALS (the path of a service "
          "account's key file)",
    "az": "AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN (or AZURE_CLIENT_ID, "
          "AZURE_CLIENT_SECRET and AZURE_TENANT_ID)",
}
_CREDENTIAL_HINT["abfs"] = _CREDENTIAL_HINT["az"]
#: Where the endpoint is set, per scheme, in messages.
_ENDPOINT_HINT = {"s3": " (AWS_ENDPOINT_URL)", "az": " (AZURE_STORAGE_ACCOUNT_NAME)",
                  "abfs": " (AZURE_STORAGE_ACCOUNT_NAME)"}
#: The variable that sets a lease's length, its default, and the lengths it may take.
LEASE_VARIABLE = "LADDERS_LEASE_SECONDS"
DEFAULT_LEASE, SHORTEST_LEASE, LONGEST_LEASE = 60.0, 1.0, 86400.0


def lease_seconds() -> float:
    """The length in seconds of a driver's lease on a store on object storage
    (``LADDERS_LEASE_SECONDS``, default 60; longer where the store answers slowly), which
    is also how long a store that does not answer is waited for. A value that is not a
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


def _is_set(name: str) -> bool:
    value = os.environ.get(name, "").strip()
    return bool(value) and value.lower() not in ("0", "false", "no", "off")


def check_settings(url: str) -> None:
    """Refuse, before any request, an object store whose credentials are not in the
    environment (or, for Azure, whose account is not named): without them obstore asks
    the cloud's metadata address (169.254.169.254), a host the user never named. The
    ``StoreError`` names the variables to set."""
    scheme = url.split("://", 1)[0].lower()
    if scheme not in _CREDENTIALS and scheme != "abfs":
        return
    host = urlparse(url).netloc
    if scheme in ("az", "abfs") and not ("@" in host or "." in host) and not (
            _is_set("AZURE_STORAGE_ACCOUNT_NAME") or _is_set("AZURE_STORAGE_USE_EMULATOR")):
        raise StoreError(f"{url}: name the storage account: set AZURE_STORAGE_ACCOUNT_NAME "
                         f"(and {_CREDENTIAL_HINT[scheme]})")
    sets = _CREDENTIALS["az" if scheme == "abfs" else scheme]
    adc = Path.home() / ".config" / "gcloud" / "application_default_credentials.json"
    if any(all(_is_set(name) for name in names) for names in sets) or (scheme == "gs" and adc.is_file()):
        return
    raise StoreError(f"{url}: no credentials for {OBJECT_SCHEMES[scheme]} in the environment: set "
                     f"{_CREDENTIAL_HINT[scheme]}; ladders never asks a cloud's metadata address "
                     "that was not named")


def describe(exc: BaseException) -> str:
    """One line for an error of the object store: the HTTP status with the service's
    code and message, or the connection's reason; never obstore's ``Debug source`` dump."""
    text = str(exc)
    head = text.split("\n\nDebug source:", 1)[0].strip()
    found = [m.group(1).strip() for m in (re.search(r"status code: (\d{3}[^:<\n]*)", head),
                                          re.search(r"<Code>([^<]*)</Code>", head),
                                          re.search(r"<Message>([^<]*)</Message>", head)) if m]
    if found:
        return ": ".join(found)
    reason = re.search(r'message: "([^"]+)"', text)
    if reason:
        return reason.group(1)
    if re.search(r"timed? ?out|Timeout", text, re.IGNORECASE):
        return "timed out"
    first = head.splitlines()[0] if head else type(exc).__name__
    return first.split(" - ")[-1].strip() or type(exc).__name__


def _failure(exc: BaseException) -> str | None:
    """What an error of obstore means for the store: ``no-bucket``, ``denied``,
    ``unavailable`` (worth trying again), ``refused`` (any other answer), or None for
    the errors each operation handles (not found, already exists, precondition)."""
    import obstore.exceptions as errors
    text = str(exc).split("\n\nDebug source:", 1)[0]
    if re.search(r"NoSuchBucket|ContainerNotFound|bucket does not exist", text):
        return "no-bucket"
    if isinstance(exc, (errors.PermissionDeniedError, errors.UnauthenticatedError)):
        return "denied"
    if type(exc) is not errors.GenericError:
        return None
    status = re.search(r"status code: (\d{3})", text)
    if status:
        code = int(status.group(1))
        return ("unavailable" if code >= 500 or code in (408, 429)
                else "denied" if code in (401, 403) else "refused")
    return "unavailable" if re.search(r"HTTP error|timed? ?out", text, re.IGNORECASE) else "refused"


@contextmanager
def command_line_stores() -> Iterator[None]:
    """While a command of the command line runs: ``memory://`` stores are refused (such
    a store would end with the command)."""
    global _memory_allowed
    before, _memory_allowed = _memory_allowed, False
    try:
        yield
    finally:
        _memory_allowed = before


#: A path that begins like a URL with a slash missing (``s3:/bucket/run``).
_ONE_SLASH = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(?!//)")


def check_url(text: str) -> None:
    """Refuse, before any request, text that is not one place of a store or an output:
    a URL with a slash missing (``s3:/bkt/x`` would be a local folder ``./s3:``); in an
    object store's URL a ``#`` or ``?`` (obstore drops what follows, so that two URLs
    would name one store), no bucket, or an empty, ``.`` or ``..`` part of the path
    (``s3://bkt/a//b``, ``s3://bkt/../up``); ``memory://`` on the command line."""
    if "://" not in text:
        start = _ONE_SLASH.match(text)
        if start and (text[len(start.group(0)):].startswith("/")
                      or start.group(1).lower() in {*OBJECT_SCHEMES, "file"}):
            raise StoreError(f"{text}: a URL needs two slashes ({start.group(1)}://...); for a "
                             f"local folder or file of that name, write ./{text}")
        return
    scheme, rest = text.split("://", 1)
    scheme = scheme.lower()
    if scheme not in OBJECT_SCHEMES:
        return
    if scheme == "memory" and not _memory_allowed:
        raise StoreError(f"{text}: a memory:// store lives only as long as one Python process; "
                         "give a folder or an object store's URL (s3://BUCKET/PREFIX)")
    bad = sorted({c for c in "#?" if c in text})
    if bad:
        raise StoreError(f"{text}: {' and '.join(repr(c) for c in bad)} cannot be part of a "
                         "store's or an object's URL (obstore would drop what follows, and two URLs "
                         "would name one place); choose a name without them")
    bucket, _, path = rest.partition("/")
    if scheme != "memory" and not bucket:
        raise StoreError(f"{text}: name the bucket ({scheme}://BUCKET/PREFIX)")
    parts = path.rstrip("/").split("/") if path.rstrip("/") else []
    if any(part in ("", ".", "..") for part in parts):
        raise StoreError(f"{text}: the path has an empty, '.' or '..' part; write each part "
                         f"of it ({scheme}://{bucket or 'BUCKET'}/A/B)")


def open_backend(where: str | Path | Backend) -> Backend:
    """The backend for ``--checkpoint`` text: a plain path or ``file://`` URL is a
    folder (:class:`LocalBackend`); ``s3://``, ``gs://``, ``az://``, ``abfs://`` and
    ``memory://`` are object storage (:class:`ObjectBackend`); any other ``scheme://``
    is refused, naming it, and so is text that :func:`check_url` refuses."""
    if not isinstance(where, (str, Path)):
        return where
    text = str(where)
    if isinstance(where, str):
        check_url(text)
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
        return ObjectBackend(text)
    raise StoreError(f"{text}: unknown storage scheme {scheme!r}; give a folder, or a URL of "
                     f"{', '.join(s + '://' for s in OBJECT_SCHEMES)} or file://")
