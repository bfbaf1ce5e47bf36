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
from typing import Generic, TypeVar

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


class Forked(Generic[T]):
    """One call computed in a child process forked now; :meth:`result` waits for it.

    For work that should not share this process's interpreter lock with what it does
    meanwhile: the Markov bounds of a run on a local Dask cluster hold the lock through
    their walk, and beside them the thread that starts the cluster got it back only
    once per switch interval after each of its many short waits (3 players on hasbro:
    the workers started 4 s late). Fork from a process with no other thread running
    (a child gets only the forking thread; a lock another thread held stays held).
    Without ``fork``, the call runs in :meth:`result`. The child ignores SIGINT (this
    process stops it); a child whose parent was killed outright ends when it has its
    result and finds no one to send it to.
    """

    def __init__(self, call: Callable[[], T]) -> None:
        self._call: Callable[[], T] | None = call
        self._pid: int | None = None
        self._read: int | None = None
        if not hasattr(os, "fork"):
            return
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:                                       # the child: compute, send, leave
            os.close(read)
            # a terminal's Ctrl-C reaches the whole process group: the parent decides
            # whether to stop, and kills the child if so (:meth:`kill`, :meth:`cancel`)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                payload = pickle.dumps((True, call()), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                payload = pickle.dumps((False, f"{type(exc).__name__}: {exc}"))
            try:
                with os.fdopen(write, "wb") as pipe:
                    pipe.write(payload)
            finally:
                os._exit(0)                                # no atexit, no parent's buffers
        os.close(write)
        self._pid, self._read, self._call = pid, read, None

    def result(self) -> T:
        """The call's value; ``RuntimeError`` with what the child said if it failed."""
        if self._call is not None:
            call, self._call = self._call, None
            return call()
        if self._read is None:
            raise RuntimeError("a forked call's result was asked for twice, or after cancel()")
        read, self._read = self._read, None
        with os.fdopen(read, "rb") as pipe:
            payload = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if not payload:
            raise RuntimeError(f"a forked worker ended without a result (wait status {status})")
        ok, value = pickle.loads(payload)
        if not ok:
            raise RuntimeError(f"a forked worker failed: {value}")
        return value

    def kill(self) -> None:
        """Kill the child if it has not been reaped: a :meth:`result` waiting in another
        thread then raises ``RuntimeError`` (no result)."""
        pid = self._pid
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:                                # gone already
                pass

    def cancel(self) -> None:
        """Kill and reap the child if it is still there (its result is not wanted; no
        :meth:`result` may be waiting)."""
        pid, read, self._pid, self._read, self._call = self._pid, self._read, None, None, None
        if pid is not None:
            for step in (lambda: os.kill(pid, signal.SIGKILL), lambda: os.waitpid(pid, 0)):
                try:
                    step()
                except OSError:                            # gone already
                    pass
        if read is not None:
            os.close(read)


def run_forked(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Every call's result, in order: ``calls[0]`` runs in this process while each other
    call runs in a child forked for it (:class:`Forked`); a child's result is pickled
    back.

    A child that fails (an exception, a signal) makes this raise ``RuntimeError`` with
    what it said; if this process's own call fails, the children are killed and reaped
    before the exception goes on. With one call, or no ``fork``, the calls run here one
    after another.
    """
    if len(calls) <= 1 or not hasattr(os, "fork"):
        return [call() for call in calls]
    children: list[Forked[T]] = []
    # the objects that exist now are left alone by the garbage collector until the work
    # is done: a collection would touch every one of them and so copy, page by page,
    # the memory that parent and children share (Python's advice for fork, gc.freeze)
    gc.freeze()
    try:
        for call in calls[1:]:
            children.append(Forked(call))
        results = [calls[0]()]
        while children:
            results.append(children[0].result())
            children.pop(0)
        return results
    finally:
        gc.unfreeze()
        for child in children:                             # only after a failure here
            child.cancel()
