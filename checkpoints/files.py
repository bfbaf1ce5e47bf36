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
import stat
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Bytes of input per gzip member of :func:`gzip_members`.
MEMBER_BYTES = 1 << 22


def check_output_path(path: str | Path) -> Path:
    """The file a command will write, checked before any work is done.

    A symlink is followed (its target is written, the link stays). A regular file or
    nothing is replaced atomically by :func:`write_atomically`; a character device
    (``/dev/null``, a terminal) is written through, never replaced; anything else (a
    folder, a FIFO, a socket, a block device) and a folder that does not exist or
    cannot be written are refused with ``ValueError`` naming the path.
    """
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ValueError(f"{path}: cannot be written ({exc.strerror})") from None
    if mode is not None and stat.S_ISCHR(mode):
        if not os.access(target, os.W_OK):
            raise ValueError(f"{path}: the device cannot be written (permission denied)")
        return target
    if mode is not None and not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "a block device"
                if stat.S_ISBLK(mode) else "not a regular file")
        raise ValueError(f"{path}: is {kind}; give the path of a regular file to write")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise ValueError(f"{path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{path}: the folder {folder} cannot be written (permission denied)")
    return target


@contextmanager
def named(path: str | Path) -> Iterator[None]:
    """Give an ``OSError`` without a file name (a full disk: ``[Errno 28] No space left
    on device``, from a write or an fsync) the name of ``path``, the file being written."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def write_atomically(path: str | Path, payload: bytes, exclusive: bool = False) -> None:
    """Write ``payload`` to ``path`` whole or not at all.

    ``exclusive``: fail with ``FileExistsError`` if ``path`` exists (a hard link is
    atomic and never replaces). The file gets the usual permissions (``0666 & ~umask``),
    not the private ones of a temporary file. Only a regular file (or nothing) is
    replaced: a symlink's target is written, a character device is written through,
    and other special files are refused (see :func:`check_output_path`).
    """
    path = check_output_path(path)
    if path.exists() and stat.S_ISCHR(path.stat().st_mode):
        with named(path), open(path, "wb") as fh:
            fh.write(payload)
        return
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with named(path), os.fdopen(fd, "wb") as fh:
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


def compact_json(data: Any) -> bytes:
    """``data`` as JSON without spaces: how the store writes its files (run.json,
    manifests, pages, the LOCK)."""
    return json.dumps(data, separators=(",", ":")).encode()


def write_json_atomically(path: str | Path, data: Any, exclusive: bool = False) -> None:
    """:func:`write_atomically` of :func:`compact_json`."""
    write_atomically(path, compact_json(data), exclusive)


def gzip_members(chunks: Iterable[bytes], threads: int = 2) -> bytes:
    """The gzip file of the concatenated ``chunks``, compressed by ``threads`` threads.

    Each run of about :data:`MEMBER_BYTES` input bytes becomes its own gzip member (RFC
    1952 lets a file hold several; ``gzip``, ``zcat`` and Python's :mod:`gzip` read them
    as one stream), so the members compress in parallel: the compressor releases the
    GIL, and the caller's generator formats the next chunks meanwhile. The compressor
    is ISA-L's deflate (``isal``), level 1: on ``hasbro``'s table (57 MB of JSON lines)
    0.12 s and 19.3 MB, against zlib's level 1 0.49 s and 22.7 MB (decimal digits
    compress to about 40 % at any level). The header's mtime is 0, so equal input gives
    equal bytes.
    """
    from isal import isal_zlib

    def pack(data: bytes) -> bytes:
        packer = isal_zlib.compressobj(1, isal_zlib.DEFLATED, 31)  # wbits 31: the gzip format
        return packer.compress(data) + packer.flush()

    with ThreadPoolExecutor(threads) as pool:
        members, pending = [], bytearray()
        for chunk in chunks:
            pending += chunk
            if len(pending) >= MEMBER_BYTES:
                members.append(pool.submit(pack, bytes(pending)))
                pending.clear()
        if pending or not members:
            members.append(pool.submit(pack, bytes(pending)))
        return b"".join(m.result() for m in members)
