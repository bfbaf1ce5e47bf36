"""numba for the series kernels, with a cache folder that can be written.

The kernels are compiled once and cached (``cache=True``): numba keeps the cache next
to the source (``__pycache__``), else in the user's cache folder (``~/.cache``). An
install that cannot be written, run by a user without a home (a read-only container,
the user ``nobody``), has neither, and numba refuses to compile at all ("cannot cache
function 'redc': no locator available"). In that case, before numba is imported, this
module points ``NUMBA_CACHE_DIR`` at a folder of the system's temporary directory that
only this user can write (compiled once per machine boot there, not once per process).
The kernels' modules import numba from here.

numba's cache of a function is invalidated by changes to that function's own source
file only: a cached ``_batch`` of ``kernels.py`` keeps the machine code of the ``hgcd.py``
and ``polyarith.py`` functions it was compiled with after those files change (an
upgrade in place, a ``git pull`` of an editable install), and runs the old code (numba
issue 6845). So, before the kernels load, :func:`refresh_cache` drops the cached code of
every module of this folder when any of their sources differs from the sources it was
compiled from (a digest kept beside the cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile


def _writable(folder: str) -> bool:
    """Whether a file can be created in ``folder`` (created if missing)."""
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def cache_folder() -> str | None:
    """The ``NUMBA_CACHE_DIR`` to set, or None where numba's own choice works (or the
    user chose one)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _writable(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")):
        return None
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if _writable(xdg):
        return None
    # a folder of our own: a cache another user planted there would be loaded as code
    shared = os.path.join(tempfile.gettempdir(), f"ladders-numba-{os.getuid()}")
    try:
        os.makedirs(shared, mode=0o700, exist_ok=True)
        info = os.lstat(shared)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022:
            return shared
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="ladders-numba-")


#: The file, in numba's cache folder of a package, that holds the digest of the
#: package's sources its cached code was compiled from.
STAMP = "ladders-sources.sha256"


def sources_digest(folder: str) -> str:
    """SHA-256 over the names and contents of the ``.py`` files of ``folder``."""
    digest = hashlib.sha256()
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        digest.update(name.encode() + b"\0")
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


def _cache_path(folder: str) -> str | None:
    """The folder where numba caches the functions of the modules in ``folder``: its
    own choice of locator, asked for a module of that folder (None where numba would
    not cache, or its internals are not what this expects)."""
    from numba.core import caching, config
    if config.CACHE_LOCATOR_CLASSES:
        return None
    probe = os.path.join(folder, "__init__.py")
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    for cls in getattr(impl, "_locator_classes", ()):
        try:
            locator = cls.from_function(sources_digest, probe)
        except (AttributeError, NotImplementedError, OSError, TypeError):
            continue
        if locator is not None:
            return locator.get_cache_path()
    return None


def refresh_cache(folder: str) -> bool:
    """Drop numba's cached code of the modules in ``folder`` if their sources are not
    the ones it was compiled from (:data:`STAMP`); True if it did. The next call of each
    kernel compiles it again (about 45 s for the series engine, once)."""
    cache = _cache_path(folder)
    if cache is None:
        return False
    stamp, digest = os.path.join(cache, STAMP), sources_digest(folder)
    try:
        with open(stamp) as f:
            if f.read().strip() == digest:
                return False
    except OSError:
        pass
    modules = {n[:-3] for n in os.listdir(folder) if n.endswith(".py")}
    dropped = False
    for name in os.listdir(cache):
        if name.endswith((".nbi", ".nbc")) and name.split(".", 1)[0] in modules:
            try:
                os.remove(os.path.join(cache, name))
                dropped = True
            except OSError:     # another process dropped it first, or it is not ours
                pass
    written = ""
    try:
        with tempfile.NamedTemporaryFile("w", dir=cache, delete=False) as f:
            written = f.name
            f.write(digest + "\n")
        os.replace(written, stamp)
    except OSError:             # no stamp: the next process looks again
        if written:
            with contextlib.suppress(OSError):
                os.remove(written)
    return dropped


def in_cache(kernel: object) -> bool:
    """Whether numba's cache holds the compiled code of ``kernel`` (a function with
    ``cache=True``): where it does not, its first call compiles, which a driver says
    before it starts. True where the cache cannot be asked (numba's layout is its own),
    so that nothing is claimed that may not happen."""
    try:
        index = kernel._cache._cache_file._index_path  # type: ignore[attr-defined]
    except AttributeError:
        return True
    return os.path.exists(index)


_FOLDER = cache_folder()
if _FOLDER is not None:
    os.environ["NUMBA_CACHE_DIR"] = _FOLDER

import numba as nb  # noqa: E402  (after the cache folder is chosen)

if _FOLDER is not None:
    nb.core.config.reload_config()  # numba may have been imported before (by the caller)
refresh_cache(os.path.dirname(os.path.abspath(__file__)))

__all__ = ["nb", "cache_folder", "in_cache", "refresh_cache", "sources_digest"]
