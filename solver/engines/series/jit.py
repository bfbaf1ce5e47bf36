"""numba for the series kernels, with a cache folder that can be written.

The kernels are compiled once and cached (``cache=True``): numba keeps the cache next
to the source (``__pycache__``), else in the user's cache folder (``~/.cache``). An
install that cannot be written, run by a user without a home (a read-only container,
the user ``nobody``), has neither, and numba refuses to compile at all ("cannot cache
function 'redc': no locator available"). In that case, before numba is imported, this
module points ``NUMBA_CACHE_DIR`` at a folder of the system's temporary directory that
only this user can write (compiled once per machine boot there, not once per process).
The kernels' modules import numba from here.
"""

from __future__ import annotations

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


_FOLDER = cache_folder()
if _FOLDER is not None:
    os.environ["NUMBA_CACHE_DIR"] = _FOLDER

import numba as nb  # noqa: E402  (after the cache folder is chosen)

if _FOLDER is not None:
    nb.core.config.reload_config()  # numba may have been imported before (by the caller)

__all__ = ["nb", "cache_folder"]
