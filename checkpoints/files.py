"""Files written whole or not at all: the one atomic write of `ladders`.

Every file `ladders` writes (a store's run.json, manifests and CURRENT, COMPLETE.json,
a ``--table`` or ``--output`` file, a picture) goes through :func:`write_atomically`:
a temporary file beside the target, fsync, then a rename over it (or a hard link that
refuses to replace, for a manifest that must be new), then fsync of the folder. A crash
leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomically(path: str | Path, payload: bytes, exclusive: bool = False) -> None:
    """Write ``payload`` to ``path`` whole or not at all.

    ``exclusive``: fail with ``FileExistsError`` if ``path`` exists (a hard link is
    atomic and never replaces). The file gets the usual permissions (``0666 & ~umask``),
    not the private ones of a temporary file.
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if exclusive:
            os.link(tmp, path)
        else:
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_json_atomically(path: str | Path, data: Any, exclusive: bool = False) -> None:
    """:func:`write_atomically` of compact JSON."""
    write_atomically(path, json.dumps(data, separators=(",", ":")).encode(), exclusive)
