"""The ``ladders`` command line: the group, the map from errors to exit codes, ``main``.

The commands live in :mod:`ladders.cluster.commands`, one small module each. Every
command takes ``--json``: stdout then holds exactly one JSON document, progress goes to
stderr. Exact numbers are strings ``"p/q"`` next to a ``decimal`` string. Errors become
one line on stderr and an exit code (2 for bad usage or input), never a traceback; with
``--json`` also the document ``{"error": ..., "exit_code": ...}``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, NoReturn

import click

from ladders.checkpoints.backend import StoreUnavailable, command_line_stores, describe
from ladders.checkpoints.errors import SegmentError, StoreError
from ladders.cluster.commands import (boards, bounds, coins, plan, plot, runs, simulate, solve,
                                      stats)
from ladders.cluster.errors import (EXIT_BAD_INPUT, EXIT_CTRL_C, EXIT_FAILED, EXIT_INTERRUPTED,
                                    ClusterError)

#: Characters of one word of an error message shown in full; longer ones (an option
#: value of 5,000 digits, a line of junk) are cut to an excerpt.
LONGEST_WORD = 120
#: Where obstore's errors begin their dump of the Rust error (20 to 40 lines).
DEBUG_DUMP = "\n\nDebug source:"


def excerpt(message: str) -> str:
    """``message`` on one line (click lists a choice's values one a line), with every
    word longer than :data:`LONGEST_WORD` cut to its ends and its length: an error names
    the value, it never echoes megabytes of input."""
    def cut(match: re.Match[str]) -> str:
        word = match.group(0)
        return f"{word[:40]}...{word[-20:]} ({len(word):,} characters)"
    return re.sub(r"\S{%d,}" % (LONGEST_WORD + 1), cut, re.sub(r"\s*\n\s*", " ", message.strip()))


def from_object_store(exc: BaseException) -> bool:
    """Whether ``exc`` is an error of obstore that came past the store's backend (through
    zarr, in a segment): its text ends in a dump of many lines that one line replaces
    (:func:`~ladders.checkpoints.backend.describe`)."""
    return type(exc).__module__.split(".")[0] == "obstore" or DEBUG_DUMP in str(exc)


def asks_json(args: list[str]) -> bool:
    """Whether the command line asks for ``--json`` (before a ``--``)."""
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def fail(message: str, code: int, as_json: bool) -> NoReturn:
    """End the command: ``message`` as one line on stderr (``ladders: MESSAGE``), and
    with ``--json``, unless the command printed its document already, one JSON document
    on stdout, ``{"error": MESSAGE, "exit_code": CODE}``: a script reading stdout gets
    JSON whatever happened."""
    from ladders.cluster.commands import emitted
    click.echo(f"ladders: {message}", err=True)
    if as_json and not emitted():
        click.echo(json.dumps({"error": message.removeprefix("error: "), "exit_code": code},
                              indent=2))
    sys.exit(code)


class LaddersGroup(click.Group):
    """A click group whose errors are one line on stderr with a fitting exit code (and
    with ``--json``, a JSON document on stdout that says so: :func:`fail`)."""

    def main(self, args: Any = None, prog_name: str | None = None, **extra: Any) -> Any:
        from ladders.cluster.commands import emitted
        extra.pop("standalone_mode", None)
        as_json = asks_json(list(sys.argv[1:] if args is None else args))
        emitted(reset=True)
        try:
            with command_line_stores():
                rv = super().main(args, prog_name or "ladders", standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(0)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            fail(f"error: {excerpt(exc.format_message())}{hint}", EXIT_BAD_INPUT, as_json)
        except click.ClickException as exc:
            fail(f"error: {excerpt(exc.format_message())}", exc.exit_code, as_json)
        except click.Abort:
            fail("interrupted", EXIT_CTRL_C, as_json)
        except StoreUnavailable as exc:  # the store did not answer for a lease: try again later
            fail(f"error: {exc}", EXIT_INTERRUPTED, as_json)
        except (ValueError, OSError) as exc:  # BoardError is a ValueError
            if from_object_store(exc):
                fail(f"error: the object store failed: {describe(exc)}", EXIT_FAILED, as_json)
            fail(f"error: {excerpt(str(exc))}", EXIT_BAD_INPUT, as_json)
        except (StoreError, SegmentError, ClusterError) as exc:
            # a segment's error may quote obstore's: its Debug dump is cut
            fail(f"error: {str(exc).split(DEBUG_DUMP)[0]}",
                 EXIT_BAD_INPUT if isinstance(exc, StoreError) else EXIT_FAILED, as_json)
        except ArithmeticError as exc:
            fail(f"error: exact arithmetic failed: {exc}", EXIT_FAILED, as_json)
        except Exception as exc:  # a bug: still one line, with a way to see the traceback
            if os.environ.get("LADDERS_DEBUG"):
                raise
            if from_object_store(exc):
                fail(f"error: the object store failed: {describe(exc)}", EXIT_FAILED, as_json)
            fail(f"internal error: {type(exc).__name__}: {exc} (please report it; "
                 "LADDERS_DEBUG=1 shows the traceback)", EXIT_FAILED, as_json)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=LaddersGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Examples: ladders solve hasbro --players 2;  ladders solve ruin.toml;  "
                    "ladders solve brp.prism --properties brp.props --constants N=16,MAX=2")
@click.version_option(package_name="ladders", prog_name="ladders")
def cli() -> None:
    """Exact answers for Chutes and Ladders, Snakes and Ladders, Another Game, and any
    absorbing Markov chain: a chain file of your own (TOML), PRISM's explicit .tra/.lab,
    Storm's DRN, or a PRISM (or JANI) model with its properties file.

    Every probability is an exact fraction (all digits), checked against Markov bounds
    and solved again modulo a prime, with Monte Carlo beside it.
    """


for _command in (boards.boards, boards.show, stats.stats, bounds.bounds, simulate.simulate,
                 solve.solve, plan.plan, runs.resume, runs.status, runs.verify, coins.coins,
                 plot.plot):
    cli.add_command(_command)


def main() -> None:
    """Console entry point.

    A command leaves with ``os._exit`` once its output is flushed: every command has
    finished its work and its (atomic) writes when it returns, a local cluster is closed
    and its workers joined by then, and the threads still alive are libraries' idle
    ones (zarr's I/O loop, Dask's offload pool). What the interpreter's exit does for
    child processes is done first (:func:`~ladders.cluster.connect.end_local_processes`).
    Tearing the interpreter down would free numba's, flint's and Dask's objects one by
    one: 0.15 s after ``ladders solve hasbro --table``, 0.17 s after a solve on a local
    cluster.
    """
    try:
        cli.main(prog_name="ladders")
    except SystemExit as exc:
        if not (exc.code is None or isinstance(exc.code, int)):
            raise
        if "multiprocessing" in sys.modules:
            from ladders.cluster.connect import end_local_processes
            end_local_processes()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:                                   # a closed pipe: the usual ending
            raise exc from None
        os._exit(exc.code or 0)


if __name__ == "__main__":
    main()
