"""Reaching a Dask cluster: start a local one or connect to a running scheduler, and
check that its workers can do a run's tasks.

Default: ``LocalCluster(processes=True, threads_per_worker=1)`` (gmpy2 holds the GIL, so
parallel work needs processes). ``--scheduler tcp://HOST:PORT`` or ``--scheduler-file F``
use a cluster started with ``dask scheduler`` / ``dask worker``. :class:`ClusterStart`
reaches it in a background thread while the driver plans and writes its store;
:func:`connect_checked` then checks every worker (versions, the store, the modules its
tasks import). The loops that run tasks on it are :mod:`ladders.cluster.loops`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladders.cluster.errors import ClusterError


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: a scheduler address or file, else a local cluster of ``workers``.

    ``scheduler``: a running Dask scheduler's address (``tcp://host:8786``);
    ``scheduler_file``: the file ``dask scheduler --scheduler-file`` wrote (SLURM,
    dask-jobqueue); neither: a local cluster of ``workers`` processes (default: one per
    core). ``connect_timeout``: seconds to reach the scheduler; ``no_worker_limit``:
    seconds without any worker before a run stops with an error (its committed work is
    safe). ``ladders.solve(..., spec=ClusterSpec(scheduler="tcp://10.0.0.5:8786"))``.
    """

    scheduler: str | None = None
    scheduler_file: str | None = None
    workers: int | None = None
    connect_timeout: float = 10.0
    no_worker_limit: float = 120.0  # seconds without a worker before a run gives up

    @property
    def remote(self) -> bool:
        """Whether the cluster is reached (a scheduler), not started here."""
        return bool(self.scheduler or self.scheduler_file)

    def record(self) -> dict[str, Any]:
        """How a run was connected, for its run.json: the options given (a scheduler's
        address without any user or password in it), never a secret."""
        from urllib.parse import urlsplit
        out: dict[str, Any] = {}
        if self.scheduler:
            parts = urlsplit(self.scheduler)
            out["scheduler"] = (parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]).geturl()
                                if parts.netloc else self.scheduler)
        if self.scheduler_file:
            out["scheduler_file"] = os.path.abspath(self.scheduler_file)
        if self.workers:
            out["workers"] = self.workers
        return out

    @classmethod
    def from_record(cls, recorded: object) -> ClusterSpec:
        """The spec of a :meth:`record` read back (``ValueError`` if it is not one)."""
        kinds = {"scheduler": str, "scheduler_file": str, "workers": int}
        if not (isinstance(recorded, dict) and all(
                key in kinds and isinstance(value, kinds[key]) and not isinstance(value, bool)
                for key, value in recorded.items()) and recorded.get("workers", 1) > 0):
            raise ValueError(f"{recorded!r} is not what a run records")
        return cls(**recorded)

    def flags(self) -> str:
        """The command-line options that connect to the same cluster again (each
        starting with a space; empty for the default local cluster)."""
        rec = self.record()
        return "".join(f" --{key.replace('_', '-')} {shlex.quote(str(value))}"
                       for key, value in rec.items())

    def describe(self) -> str:
        """Where the run goes, in words (for the progress line)."""
        if self.scheduler:
            return f"scheduler {self.scheduler}"
        if self.scheduler_file:
            return f"scheduler file {self.scheduler_file}"
        count = self.workers or os.cpu_count() or 1
        return f"a local cluster of {count} worker process{'' if count == 1 else 'es'}"


@contextlib.contextmanager
def connect(spec: ClusterSpec, preload: tuple[str, ...] = ()) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec``; fails within ``connect_timeout`` seconds.
    A local cluster's workers start with the modules ``preload`` imported
    (:func:`preload_fork_server`)."""
    import dask
    from distributed import Client, LocalCluster

    if spec.remote:
        address = spec.scheduler or scheduler_address(spec.scheduler_file or "")
        try:
            client = Client(address, timeout=spec.connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            where = spec.scheduler or spec.scheduler_file
            raise ClusterError(f"cannot reach the Dask scheduler at {where} within "
                               f"{spec.connect_timeout:.0f} s ({type(exc).__name__}: {exc}); "
                               "check the address and that 'dask scheduler' is running") from None
        try:
            yield client
        finally:
            client.close()
        return
    workers = spec.workers or os.cpu_count() or 1
    with dask.config.set({**local_start_method(), **LOCAL_WORKERS}):
        preload_fork_server(preload)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


#: Dask configuration of a local cluster (its scheduler, nannies and workers): no
#: statistical profiler (it samples the task's thread every 10 ms for a dashboard nobody
#: opens here; 4 players on hasbro, two workers, 100 primes each: 7.0-7.3 ms of the
#: task's CPU a prime without it against 7.2-7.7 ms with it, 7.1-7.3 ms for the kernel
#: outside Dask), and the event loops' health check ("tick", a log warning when a loop
#: was blocked for seconds) and the system monitor (the dashboard's CPU and memory
#: figures) every 0.5 s and 2 s instead of every 20 ms and 0.5 s: an idle cluster of 2
#: workers took 0.27-0.33 s of CPU in 10 s against 1.02-1.10 s, on the cores the
#: workers compute on. The memory monitor, which restarts a worker that overruns its
#: memory limit, keeps Dask's interval.
LOCAL_WORKERS = {"distributed.worker.profile.enabled": False,
                 "distributed.admin.tick.interval": "500ms",
                 "distributed.admin.system-monitor.interval": "2s"}


def local_start_method() -> dict[str, str]:
    """Dask configuration for how a local cluster's worker processes start.

    Dask spawns each worker: a fresh interpreter that imports Dask (0.35 s of CPU each,
    while the driver plans and writes the store on the same cores). Where the platform
    has it, a fork server imports Dask once and forks the workers from it; they also
    end at once when the cluster closes (0.02 s against 0.2 s). On ``hasbro`` cut at
    60 with 2 workers: cluster up 0.45 s against 0.5 s. A start method set in the
    user's Dask configuration is kept.
    """
    import multiprocessing

    import dask
    key = "distributed.worker.multiprocessing-method"
    if dask.config.get(key) != "spawn" or "forkserver" not in multiprocessing.get_all_start_methods():
        return {}
    return {key: "forkserver"}


def preload_fork_server(modules: tuple[str, ...]) -> None:
    """Have the fork server of local workers import ``modules`` too before it forks them
    (with the start method of :func:`local_start_method` only; a server that runs
    already keeps what it has).

    Dask's own preload (``distributed.utils.get_mp_context``: Dask and the packages it
    can use) is set once per process, when the first worker starts; it is set here
    first, then replaced by ``distributed`` and ``modules``. A series run's workers then
    start with its kernels loaded (:mod:`ladders.solver.engines.series.warm`): 3 players
    on hasbro, each worker's first batch took 0.85 s more of CPU for its imports and
    numba's cache, while the bounds and the other worker shared the same two cores.
    """
    import dask
    if not modules or dask.config.get("distributed.worker.multiprocessing-method") != "forkserver":
        return
    from distributed.utils import get_mp_context
    get_mp_context().set_forkserver_preload(["distributed", *modules])


def end_local_processes() -> None:
    """At the end of the program, before ``os._exit``: what the interpreter's exit does
    for :mod:`multiprocessing` (children joined, its finalizers run: they remove the
    fork server's temporary folder), and the fork server of local workers ended.

    The fork server's workers were joined when their cluster closed. Left to itself,
    the server would notice that this process is gone and then tear down its imports
    (Dask's) while it still holds this program's stdout and stderr: a pipe reading
    ``ladders solve --json`` would wait 0.2 s more for its end. (The server's pid is an
    attribute of CPython's ``multiprocessing.forkserver``; without it, the server ends
    on its own, only later.)
    """
    import signal
    import sys
    server = getattr(sys.modules.get("multiprocessing.forkserver"), "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if isinstance(pid, int):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    util = sys.modules.get("multiprocessing.util")
    if util is not None:
        util._exit_function()


def scheduler_address(path: str) -> str:
    """The address in a scheduler file (``dask scheduler --scheduler-file``), read once:
    a missing or garbled file is an error now, not a wait for it to appear."""
    import json
    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except FileNotFoundError:
        raise ClusterError(f"{path}: no such scheduler file; start the scheduler with "
                           f"'dask scheduler --scheduler-file {path}' first") from None
    except (OSError, ValueError) as exc:
        raise ClusterError(f"{path}: not a Dask scheduler file ({exc})") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ClusterError(f"{path}: not a Dask scheduler file (no scheduler address in it)")
    return address


def check_workers(client: Any, root: str, modules: tuple[str, ...] = (), timeout: float = 30.0) -> int:
    """Every worker must run our code (import ``modules``), see the store and match our
    versions.

    Returns the number of workers. Raises :class:`ClusterError` with the reason.
    """
    from ladders.checkpoints.backend import open_backend
    from ladders.checkpoints.store import PROBE, probe_store

    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError) as exc:
        raise ClusterError(f"no Dask worker joined the scheduler within {timeout:.0f} s") from exc
    try:
        client.get_versions(check=True)
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "mismatch"
        raise ClusterError(f"package versions differ between this driver and the workers: {first}") from None
    backend = open_backend(root)
    token = os.urandom(8).hex()
    backend.replace(PROBE, token.encode())
    try:
        answers = client.run(probe_store, root, modules, token)
    except Exception as exc:  # a worker without our packages fails to unpickle the function
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ClusterError(f"the workers cannot run ladders tasks ({type(exc).__name__}: {first}); "
                           "install ladders in the workers' environment") from None
    finally:
        backend.delete(PROBE)
    bad = {w: a for w, a in answers.items() if not a["ok"]}
    if bad:
        address, answer = next(iter(bad.items()))
        name = client.scheduler_info().get("workers", {}).get(address, {}).get("name")
        worker = address if name in (None, "", address) else f"{name} ({address})"
        if answer.get("module"):
            raise ClusterError(f"worker {worker} cannot import {answer['module']} ({answer['error']}); "
                               "install ladders and its dependencies in the workers' environment")
        fix = ("every worker needs obstore (ladders' extra cloud) and the same credentials and "
               "endpoint in its environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
               "AWS_ENDPOINT_URL, ...; GOOGLE_* or AZURE_STORAGE_* for gs:// and az://)"
               if "://" in root else
               "every worker must see the checkpoint folder at the same path (a shared "
               "filesystem), or put the store on object storage (s3://...)")
        raise ClusterError(f"worker {worker} cannot use the store {root}: {answer['error']}; {fix}")
    return len(answers)


def check_main_guard() -> None:
    """Refuse, before any work, a local cluster started from a plain script's top level.

    A local cluster's worker processes are started by ``spawn``, which imports the
    parent's ``__main__`` script again in each of them: a script that calls
    ``ladders.solve`` at its top level, outside ``if __name__ == "__main__":``, would
    run again in every worker (its output three times, then pages of "Nanny failed to
    start"). The call's line is looked up in the script's syntax tree.
    """
    import ast
    import sys
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or not os.path.isfile(path):
        return  # an interactive session, python -c, a notebook: nothing is imported again
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals is not main.__dict__:
        frame = frame.f_back
    if frame is None or frame.f_code.co_name != "<module>":
        return  # called from a function: guarded or not, the import does not call it
    line = frame.f_lineno
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return
    raise ValueError(f"{path}:{line}: a local Dask cluster's workers import this script again "
                     "and would run this call too: put it under 'if __name__ == \"__main__\":' "
                     "(or solve with executor='serial')")


def _is_main_test(test: Any) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    import ast
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides)
            and any(isinstance(x, ast.Constant) and x.value == "__main__" for x in sides))


class ClusterStart:
    """The cluster being reached or started in a background thread, so that the driver
    plans and writes the store meanwhile; :meth:`client` waits for it. A context
    manager: leaving it closes the cluster."""

    def __init__(self, spec: ClusterSpec, preload: tuple[str, ...] = ()) -> None:
        self.spec, self.preload = spec, preload
        self.t0 = time.perf_counter()
        self._ready = threading.Event()
        self._done = threading.Event()
        self._client: Any = None
        self._error: BaseException | None = None
        self._quiet = not spec.remote  # a local cluster's workers: see _run
        self._thread = threading.Thread(target=self._run, name="ladders-cluster", daemon=True)

    def _run(self) -> None:
        if self._quiet:
            # Processes started from this thread, or from threads it starts (Dask's
            # event loop, which starts the workers and their fork server), inherit its
            # signal mask, through exec too: with SIGINT blocked there, a terminal's
            # Ctrl-C reaches the driver alone, which stops cleanly (its main thread
            # takes the signal), instead of every worker printing a traceback.
            # multiprocessing's resource tracker unblocks SIGINT in the thread that
            # starts it (bpo-33613's mask, undone after its spawn): started here first,
            # it is not started again in the event loop's thread.
            import signal
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with connect(self.spec, self.preload) as client:
                self._client = client
                self._ready.set()
                self._done.wait()
        except BaseException as exc:  # handed to the driver's thread by client()
            self._error = exc
        finally:
            self._ready.set()

    def __enter__(self) -> ClusterStart:
        self._thread.start()
        return self

    def up(self) -> bool:
        """Whether :meth:`client` would return (or raise) now, without waiting."""
        return self._ready.is_set()

    def client(self) -> Any:
        """The connected client (the cluster's error, if it failed to start)."""
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self._client

    def release(self) -> None:
        """Start closing the cluster in the background (the driver goes on verifying)."""
        self._done.set()

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join()


def connect_checked(started: ClusterStart, store_url: str,
                    modules: tuple[str, ...] = ()) -> tuple[Any, int]:
    """``(client, workers)``: the cluster ``started`` in the background, once it is up,
    checked to see the store at ``store_url`` and to import ``modules``."""
    client = started.client()
    return client, check_workers(client, store_url, modules)
