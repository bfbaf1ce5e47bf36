"""Independent pieces of one computation on the machine's cores, by ``fork``.

gmpy2 and python-flint hold the GIL through their big-integer work (gmpy2 lets go of it
only where a thread's context asks, as the Markov bounds' walk does), so threads do not
spread it; a forked child shares the parent's memory (the residues, the chain's data)
without copying or pickling it, and only its result comes back through a pipe. This is
for short bursts inside one command (the two-player table: a second of work, split in
two), not for long runs: those are Dask tasks (``ladders.cluster``).
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def cores() -> int:
    """How many processes :func:`run_forked` may use: the CPUs this process may run on,
    1 where ``fork`` does not exist."""
    if not hasattr(os, "fork"):
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def run_forked(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Every call's result, in order: ``calls[0]`` runs in this process while each other
    call runs in a child forked for it; a child's result is pickled back.

    A child that fails (an exception, a signal) makes this raise ``RuntimeError`` with
    what it said; if this process's own call fails, the children are killed and reaped
    before the exception goes on. With one call, or no ``fork``, the calls run here one
    after another.
    """
    if len(calls) <= 1 or not hasattr(os, "fork"):
        return [call() for call in calls]
    children: list[tuple[int, int]] = []
    # the objects that exist now are left alone by the garbage collector until the work
    # is done: a collection would touch every one of them and so copy, page by page,
    # the memory that parent and children share (Python's advice for fork, gc.freeze)
    gc.freeze()
    try:
        for call in calls[1:]:
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:                                   # the child: compute, send, leave
                os.close(read)
                try:
                    payload = pickle.dumps((True, call()), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:  # noqa: BLE001 - reported to the parent
                    payload = pickle.dumps((False, f"{type(exc).__name__}: {exc}"))
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
                os._exit(0)                                # no atexit, no parent's buffers
            os.close(write)
            children.append((pid, read))
        results = [calls[0]()]
        while children:
            pid, read = children[0]
            with os.fdopen(read, "rb") as pipe:
                payload = pipe.read()
            _, status = os.waitpid(pid, 0)
            children.pop(0)
            if not payload:
                raise RuntimeError(f"a forked worker ended without a result (wait status {status})")
            ok, value = pickle.loads(payload)
            if not ok:
                raise RuntimeError(f"a forked worker failed: {value}")
            results.append(value)
        return results
    finally:
        gc.unfreeze()
        for pid, read in children:                         # only after a failure here
            for step in (lambda: os.kill(pid, signal.SIGKILL), lambda: os.waitpid(pid, 0),
                         lambda: os.close(read)):
                try:
                    step()
                except OSError:                            # gone already, or closed
                    pass
