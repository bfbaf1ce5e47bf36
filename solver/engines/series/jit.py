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

numba itself is imported when a kernel is first compiled, not with this module
(:class:`Kernel`): a command that compiles nothing, or a small chain whose kernels run
as Python, never pays its start.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from typing import Any


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


_NUMBA: Any = None
_NUMBA_LOCK = threading.Lock()
#: Held while a kernel's dispatcher is made (a kernel's callees' are made inside it).
_DISPATCHERS = threading.RLock()


def _load_numba() -> Any:
    """numba, imported once: its cache folder chosen first (:func:`cache_folder`), the
    cached code of this folder's kernels checked against their sources
    (:func:`refresh_cache`), and a :class:`Kernel` made known to numba's typing as its
    dispatcher (a compiled kernel calls the others by their module's names)."""
    global _NUMBA
    with _NUMBA_LOCK:
        if _NUMBA is None:
            folder = cache_folder()
            if folder is not None:
                os.environ["NUMBA_CACHE_DIR"] = folder
            import numba
            if folder is not None:
                numba.core.config.reload_config()  # numba may have been imported before
            refresh_cache(os.path.dirname(os.path.abspath(__file__)))
            from numba.core import types
            from numba.extending import typeof_impl

            @typeof_impl.register(Kernel)
            def _typeof_kernel(value: Kernel, context: Any) -> Any:
                return types.Dispatcher(value.dispatcher)

            _NUMBA = numba
    return _NUMBA


#: Whether this thread is running a kernel as Python (:class:`Kernel`): the kernels it
#: calls run so too.
_INTERPRETING = threading.local()
#: What a process may spend running kernels as Python, in microseconds of the
#: interpreter as the kernels' ``small`` estimates count them: about half of numba's
#: start (importing it and loading the first cached kernel: about 0.4 s of CPU), so
#: that a solve that turns out larger than its first calls looked loses at most that.
INTERPRETED_BUDGET = 200_000
_SPENT = [0]
_SPENT_LOCK = threading.Lock()


class Kernel:
    """A function compiled by numba (``nb.njit(...)``) when it is first called, not when
    its module is imported: importing numba and loading the first cached kernel cost
    about 0.4 s of CPU, most of a small solve's.

    ``small`` marks a kernel that may run as the Python it is written in (the same
    source, the same integers: no second copy of the algorithm): it estimates a call's
    time as Python, in microseconds, from the call's arguments (None: too large to
    try). While numba is not loaded and the process has spent less than
    :data:`INTERPRETED_BUDGET` so, the call runs as Python, and the kernels it calls
    with it; otherwise the compiled code runs (numba loaded then)."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any],
                 small: Callable[..., int | None] | None) -> None:
        functools.update_wrapper(self, func)
        self.py_func = func
        self._options = options
        self._small = small
        self._dispatcher: Any = None

    @property
    def dispatcher(self) -> Any:
        """numba's dispatcher of the function (numba imported on the first use). The
        kernels the function calls by its module's names are bound there to their
        dispatchers, as ``@numba.njit`` leaves them, so that numba compiles the calls
        as before (``inline="always"`` included)."""
        if self._dispatcher is None:
            numba = _load_numba()
            with _DISPATCHERS:
                if self._dispatcher is None:
                    self._dispatcher = numba.njit(**self._options)(self.py_func)
                    names = self.py_func.__globals__
                    for name in self.py_func.__code__.co_names:
                        value = names.get(name)
                        if isinstance(value, Kernel):
                            names[name] = value.dispatcher
        return self._dispatcher

    def __call__(self, *args: Any) -> Any:
        if getattr(_INTERPRETING, "on", False):
            return self.py_func(*args)
        if self._small is not None and _NUMBA is None and _afford(self._small(*args)):
            _INTERPRETING.on = True
            try:
                return _as_compiled(self.py_func(*args))
            finally:
                _INTERPRETING.on = False
        return self.dispatcher(*args)

    def __getattr__(self, name: str) -> Any:
        # numba's own attributes (its cache, for :func:`in_cache`)
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        # by name, as a function is pickled (a Dask task may carry one)
        return _kernel_named, (self.py_func.__module__, self.py_func.__qualname__)


def _as_compiled(value: Any) -> Any:
    """A kernel's result as numba returns it: a NumPy scalar as Python's (``int``,
    ``float``, ``bool``), in a tuple too; arrays as they are."""
    import numpy as np
    if isinstance(value, tuple):
        return tuple(_as_compiled(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def _afford(cost: int | None) -> bool:
    """Whether a call estimated at ``cost`` microseconds as Python fits what is left
    of :data:`INTERPRETED_BUDGET` (and take it)."""
    if cost is None:
        return False
    with _SPENT_LOCK:
        if _SPENT[0] + cost > INTERPRETED_BUDGET:
            return False
        _SPENT[0] += cost
        return True


def _kernel_named(module: str, name: str) -> Kernel:
    """The kernel ``name`` of ``module`` (unpickling a :class:`Kernel`)."""
    import importlib
    return getattr(importlib.import_module(module), name)


def elements(*args: Any) -> int:
    """The elements of the arrays among ``args`` (for a ``small`` estimate)."""
    return sum(getattr(a, "size", 0) for a in args)


class _Numba:
    """``nb``: ``nb.njit(...)`` makes a :class:`Kernel` (numba is imported when one is
    first compiled); any other name is numba's own (``nb.types``), imported then."""

    @staticmethod
    def njit(*, small: Callable[..., int | None] | None = None,
             **options: Any) -> Callable[[Callable[..., Any]], Kernel]:
        """A decorator: the function as a :class:`Kernel` compiled with numba's
        ``options`` (``cache=True``, ...), run as Python where ``small`` estimates a
        call cheap enough."""
        return lambda func: Kernel(func, options, small)

    def __getattr__(self, name: str) -> Any:
        return getattr(_load_numba(), name)


nb = _Numba()

__all__ = ["INTERPRETED_BUDGET", "Kernel", "nb", "cache_folder", "elements", "in_cache",
           "refresh_cache", "sources_digest"]
