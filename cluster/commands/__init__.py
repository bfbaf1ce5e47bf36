"""What every ``ladders`` command shares: the board, player, cluster and ``--json``
options, printing, and the Ctrl-C handling and progress bar of long solves.

Each command is a small module beside this one that parses, calls one library
function and prints (as dask's CLI does); heavy imports live inside the commands so
``ladders --help`` stays fast: :mod:`.solve`, :mod:`.plan`, :mod:`.runs` (``resume``,
``status``, ``verify``), :mod:`.bounds`, :mod:`.stats`, :mod:`.simulate`, :mod:`.coins`,
:mod:`.boards` (``boards``, ``show``) and :mod:`.plot`.
"""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
from typing import Any

import click

from ladders.solver.games import MEETS
from ladders.solver.games.board import RULES, preset_names

EPILOG_BOARD = (f"BOARD is a preset ({', '.join(preset_names())}; see 'ladders boards') or a "
                "board file (plain text or .toml).")


#: Whether this command printed its JSON document (:func:`emit`): an error after it
#: (a failed verification) adds no second one.
_emitted = [False]


def emit(data: dict[str, Any], as_json: bool, text: str) -> None:
    """Print ``data`` as one JSON document, or ``text`` for people."""
    if as_json:
        click.echo(json.dumps(data, indent=2))
        _emitted[0] = True
    else:
        click.echo(text)


def emitted(reset: bool = False) -> bool:
    """Whether :func:`emit` printed a JSON document since the last ``reset`` (a command
    line's start)."""
    was = _emitted[0]
    if reset:
        _emitted[0] = False
    return was


def board_options(func: Any) -> Any:
    """BOARD plus the ``--rule`` and ``--die`` overrides shared by the board commands."""
    func = click.option("--die", type=click.IntRange(min=1), default=None,
                        help="Override the die size (faces 1..N).")(func)
    func = click.option("--rule", type=click.Choice(RULES), default=None,
                        help="Override the overshoot rule.")(func)
    return click.argument("board")(func)


def meet_option(func: Any) -> Any:
    """``--meet``: the rule for pieces that meet, one of
    :data:`ladders.solver.games.MEETS` with its line (overrides a board file's ``meet``)."""
    rules = "; ".join(f"{name}: {line}" for name, line in MEETS.items())
    return click.option("--meet", type=click.Choice(tuple(MEETS)), default=None,
                        help=f"Boards: what happens when pieces meet ({rules}; any rule but "
                        "none makes the race one joint chain) [default: the board's own, "
                        "else none].")(func)


def chain_formats() -> dict[str, dict[str, Any]]:
    """Each chain file format of :mod:`ladders.solver.chains.formats` by name: its
    ``suffixes``, ``description`` and what it ``takes`` beyond the file (the module's
    ``SUFFIXES``, ``DESCRIPTION`` and ``TAKES``), read from the modules' text, so that
    the help lists them without importing the formats (and NumPy). A module is a format
    where it defines ``SUFFIXES`` and ``load``, as the registry's ``formats()`` finds
    them; its folders are the package's ``__path__`` where it is imported (a format
    added there is listed too), else where it would be imported from."""
    import importlib.util
    name = "ladders.solver.chains.formats"
    package = sys.modules.get(name)
    spec = importlib.util.find_spec(name) if package is None else None
    folders = package.__path__ if package is not None else (
        spec.submodule_search_locations if spec is not None else None) or []
    return _catalogue(tuple(folders))


@functools.cache
def _catalogue(folders: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """:func:`chain_formats` of these folders. Only the statements from ``SUFFIXES`` to
    the module's next definition are parsed (the three names stand together at the top
    of a format's module; 2 ms for the formats here, against 36 ms for whole modules)."""
    import ast
    import re
    from pathlib import Path
    found: dict[str, dict[str, Any]] = {}
    keys = {"SUFFIXES": "suffixes", "DESCRIPTION": "description", "TAKES": "takes"}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            start = re.search(r"^SUFFIXES\b", text, re.M)
            if start is None or path.stem in found or not re.search(r"^def load\(", text, re.M):
                continue
            end = re.compile(r"^(def|class|@)", re.M).search(text, start.start())
            try:
                tree = ast.parse(text[start.start():end.start() if end else len(text)])
            except SyntaxError:
                tree = ast.parse(text)
            values = {keys[node.targets[0].id]: ast.literal_eval(node.value)
                      for node in tree.body if isinstance(node, ast.Assign)
                      and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                      and node.targets[0].id in keys}
            found[path.stem] = {"suffixes": tuple(values["suffixes"]),
                                "description": values.get("description", path.stem),
                                "takes": tuple(values.get("takes", ()))}
    return dict(sorted(found.items()))


def formats_taking(keyword: str) -> str:
    """The chain files that take ``keyword`` (``properties``, ``constants``), named by
    their suffixes, for an option's help (``.prism, .pm, .jani``)."""
    return ", ".join(s for f in chain_formats().values() if keyword in f["takes"]
                     for s in f["suffixes"]) or "no chain file"


def epilog_chains() -> str:
    """What BOARD may also be for the commands that read chains: every chain format's
    description, from the registry."""
    return ("Or a chain file: " + "; ".join(f["description"] for f in chain_formats().values())
            + ".")


def json_option(func: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON document on stdout (progress goes to stderr).")(func)


def open_board(board: str, rule: str | None, die: int | None,
               meet: str | None = None):  # -> Board
    """The board BOARD names, with the overrides; a chain file is refused by name (a
    board command cannot answer it)."""
    from ladders.solver.chains.formats import format_of
    from ladders.solver.games.board import load_board, with_overrides
    if format_of(board) is not None:
        raise click.UsageError(f"{board} is a chain file: 'ladders solve', 'ladders simulate' "
                               "and 'ladders plan' take chains; this command is for boards")
    return with_overrides(load_board(board), rule=rule, die=die, meet=meet)


def short(text: str, keep: int = 40) -> str:
    """Long exact fractions shortened for the human table (JSON keeps every digit)."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}...({len(text)} chars)"


def players_option(default: int = 2) -> Any:
    return click.option("--players", "-k", type=click.IntRange(1 if default == 1 else 2, 6),
                        default=default, show_default=True, help="Number of players (seats).")


def cluster_options(func: Any) -> Any:
    """Where tasks run: ``--scheduler``, ``--scheduler-file``, ``--workers``."""
    func = click.option("--workers", type=click.IntRange(min=1), default=None,
                        help="Worker processes of the local Dask cluster [default: cores].")(func)
    func = click.option("--scheduler-file", type=click.Path(dir_okay=False), default=None,
                        help="Scheduler file of an existing Dask cluster.")(func)
    return click.option("--scheduler", default=None, metavar="ADDR",
                        help="Existing Dask scheduler, e.g. tcp://10.0.0.5:8786.")(func)


#: Local worker processes allowed per core: more only queue for the cores.
WORKERS_PER_CORE = 4


def local_worker_limit() -> int:
    """Most worker processes ``--workers`` may start on this machine."""
    import os
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def make_spec(scheduler: str | None, scheduler_file: str | None, workers: int | None) -> Any:
    """The cluster options as a ``ClusterSpec``; a scheduler file is read now, so that a
    missing or garbled one is refused before any work."""
    from ladders.cluster.connect import ClusterSpec, scheduler_address
    if scheduler and scheduler_file:
        raise click.UsageError("give --scheduler or --scheduler-file, not both")
    if workers and (scheduler or scheduler_file):
        raise click.UsageError("--workers sizes the local cluster; a remote cluster has its own workers")
    if workers and workers > local_worker_limit():
        raise click.UsageError(
            f"--workers {workers:,}: a local cluster runs at most {local_worker_limit()} worker "
            f"processes here ({WORKERS_PER_CORE} per core; each takes ~150 MB); for more, start "
            "dask workers on other machines and give --scheduler")
    if scheduler_file:
        from ladders.cluster.errors import ClusterError
        try:
            scheduler_address(scheduler_file)
        except ClusterError as exc:
            raise click.UsageError(str(exc)) from None
    return ClusterSpec(scheduler=scheduler, scheduler_file=scheduler_file, workers=workers)


class interruptible:
    """The first Ctrl-C or SIGTERM sets a flag that the driver polls: it then stops
    submitting, keeps its committed manifest, and the command exits with
    ``EXIT_INTERRUPTED``. A second Ctrl-C ends the process at once (the signal's default
    action); a store it leaves is resumed from its last commit. It is acted on as soon
    as this process runs Python (numba compiling the kernels, a wait for the cluster),
    and inside a compiled kernel once the driver has polled the flag (the default action
    is then armed: it works even there). Signals sent to the whole process group arrive
    twice, once directly and once through the group (``timeout``, SLURM's scancel,
    Kubernetes, a second one that ended the process left the store's LOCK behind):
    further SIGTERMs are the same request (their way to end a process at once is
    SIGKILL), and a second SIGINT counts only from :data:`GROUP_SECONDS` after the first
    (no hand presses Ctrl-C twice within that)."""

    #: Seconds after the first SIGINT in which another is the same signal sent to the group.
    GROUP_SECONDS = 0.5

    def __enter__(self) -> Any:
        import os
        import signal
        self.flag = False
        self.armed = False
        self.when = 0.0
        self.old: dict[int, Any] = {}

        def stop_now() -> None:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            self.armed = True
            os.kill(os.getpid(), signal.SIGINT)

        def handler(signum: int, frame: Any) -> None:
            if self.flag:
                if signum == signal.SIGINT and time.monotonic() - self.when > self.GROUP_SECONDS:
                    stop_now()  # the second Ctrl-C
                return  # the same request, through the group
            self.flag = True
            self.when = time.monotonic()
            click.echo("ladders: stopping (Ctrl-C again to stop at once)" if signum == signal.SIGINT
                       else "ladders: stopping (SIGTERM; Ctrl-C to stop at once)", err=True)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for sig in (signal.SIGINT, signal.SIGTERM):
            self.old[sig] = signal.signal(sig, handler)

        def should_stop() -> bool:
            # after the group's copies have come, a second Ctrl-C ends the process at
            # once, also inside a compiled kernel, where no Python handler runs (signal
            # handlers can be set from the main thread only)
            if (self.flag and not self.armed and time.monotonic() - self.when > self.GROUP_SECONDS
                    and threading.current_thread() is threading.main_thread()):
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                self.armed = True
            return self.flag
        return should_stop

    def __exit__(self, *exc: Any) -> None:
        import signal
        for sig, old in self.old.items():
            if sig == signal.SIGTERM and self.flag:
                continue  # stopping: the group's SIGTERM may still come (exit 75, not -15)
            signal.signal(sig, old)


class task_bar:
    """Progress on stderr: work done (an engine's ``unit``: description and unit),
    elapsed, estimate, digits so far. On a terminal a tqdm bar; off a terminal (a log
    file, a pipe) one plain line every ``LOG_EVERY`` seconds and one at the end, never
    carriage-return updates (clig.dev's advice).

    The step function is ``step(done, total, digits, stage=None, note=None,
    tail=None)``: a ``stage`` (a description and unit, e.g. the factorization before
    the lifting) different from the current one ends the current bar and starts one for
    that stage; a ``note`` says what the run waits for until the next unit is done (the
    first batches of a 5-player run: minutes), shown at once and with every line until
    then. The lines go on while nothing is done (a thread keeps them coming: a run
    waiting for its first batches is not silent for minutes).

    The time left (:meth:`left`) is the units still to do at the rate measured in this
    session from its first unit done (not from its start: a cluster's start, a first
    compile of the kernels and a resumed run's units are no part of the rate), plus the
    ``tail`` the run expects after its last unit. It is given once as much time has
    passed since that unit as before it: the first wave of a cluster's workers ends
    together, and its last units would make the rate too fast."""

    #: Seconds between two progress lines off a terminal.
    LOG_EVERY = 30.0

    def __init__(self, unit: tuple[str, str] = ("tasks", "task")) -> None:
        self.desc, self.unit = unit

    def __enter__(self) -> Any:
        self.bar: Any = None
        self.last: tuple[int, int, int] | None = None
        self.note: tuple[int, str] | None = None   # (done when it was given, the note)
        self.t0 = self.logged = time.monotonic()
        self.lock = threading.Lock()
        self.ended = threading.Event()
        self.ticking = False
        self.first: tuple[float, int] | None = None  # (when, done) the rate counts from
        self.moved = self.start = self.t0
        self.tail: float | None = None
        terminal = sys.stderr.isatty()

        def step(done: int, total: int, digits: int, stage: tuple[str, str] | None = None,
                 note: str | None = None, tail: float | None = None) -> None:
            with self.lock:
                if not self.ticking:
                    # started at the first step, not before: the session forks the
                    # bounds' process first, where this process has no other thread
                    self.ticking = True
                    threading.Thread(target=self._tick, args=(terminal,),
                                     name="ladders-progress", daemon=True).start()
                if stage is not None and stage != (self.desc, self.unit):
                    self._close()
                    (self.desc, self.unit), self.last = stage, None
                    self.t0 = self.logged = time.monotonic()
                    self.first = None
                if self.last is None:
                    self.start = time.monotonic()
                elif done != self.last[0]:
                    self.moved = time.monotonic()  # when the count last changed
                    if self.first is None:
                        self.first = (self.moved, done)  # the rate counts from here
                self.last = (done, total, digits)
                self.tail = tail
                if note is not None:
                    self.note = (done, note)
                elif self.note is not None and self.note[0] != done:
                    self.note = None  # the unit it waited for is done
                if not terminal:
                    if note is not None or time.monotonic() - self.logged >= self.LOG_EVERY:
                        self._line()
                    return
                if self.bar is None:
                    from tqdm import tqdm
                    # tqdm's own estimate smooths the rate from the bar's start; the
                    # time left is this bar's (see left())
                    self.bar = tqdm(total=total or None, desc=self.desc, unit=self.unit,
                                    file=sys.stderr, mininterval=0.5, dynamic_ncols=True,
                                    bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} "
                                               "[{elapsed}{postfix}]")
                if total and self.bar.total != total:
                    self.bar.total = total
                self.bar.set_postfix_str(self._postfix(), refresh=False)
                self.bar.update(done - self.bar.n)
                if note is not None:
                    self.bar.refresh()

        return step

    def _tick(self, terminal: bool) -> None:
        """Between steps: the bar's elapsed time on a terminal, a line every
        ``LOG_EVERY`` seconds off one."""
        while not self.ended.wait(min(1.0, self.LOG_EVERY)):
            with self.lock:
                if terminal and self.bar is not None:
                    self.bar.refresh()
                elif (not terminal and self.last is not None
                      and time.monotonic() - self.logged >= self.LOG_EVERY):
                    self._line()

    def left(self) -> float | None:
        """Seconds left: the units still to do at this session's measured seconds a
        unit (up to the last unit done), plus the tail, less the time since that unit;
        None before a unit was done in this session, or with no total."""
        if self.last is None or self.first is None:
            return None
        done, total, _ = self.last
        t1, d1 = self.first
        if not total or done <= d1 or self.moved - t1 < t1 - self.start:
            return None
        per = (self.moved - t1) / (done - d1)
        ahead = max(0, total - done) * per + (self.tail or 0.0)
        return max(0.0, ahead - (time.monotonic() - self.moved))

    def _postfix(self) -> str:
        """The bar's words after the count: the note, or the digits and the time left."""
        if self.note is not None:
            return self.note[1]
        from ladders.cluster.engines import human_seconds
        assert self.last is not None
        parts = [f"{self.last[2]:,} digits"] if self.last[2] else []
        left = self.left()
        if left is not None:
            parts.append(f"about {human_seconds(left)} left")
        return ", ".join(parts)

    def _line(self) -> None:
        assert self.last is not None
        done, total, digits = self.last
        of = f"/{total:,}" if total else ""
        more = f", {digits:,} digits" if digits else ""
        left = self.left()
        if left is not None and self.note is None:
            from ladders.cluster.engines import human_seconds
            more += f", {time.monotonic() - self.t0:,.0f} s, about {human_seconds(left)} left"
        else:
            more += f", {time.monotonic() - self.t0:,.0f} s"
        note = f" ({self.note[1]})" if self.note is not None else ""
        click.echo(f"{self.desc}: {done:,}{of}{more}{note}", err=True)
        self.logged = time.monotonic()

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.last is not None and self.logged > self.t0:
            self._line()  # the final count, after the periodic lines

    def __exit__(self, *exc: Any) -> None:
        self.ended.set()
        with self.lock:
            self._close()
