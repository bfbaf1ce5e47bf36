"""Random hostile input through the real CLI (hypothesis): board texts, TOML documents
and option values. Whatever comes in, the command exits 0 (it did the work) or 2 (one
line on stderr saying what is wrong), never prints a traceback, and finishes within a
few seconds. Most cases run in this process through ``cli.main`` (the same error
mapping as the ``ladders`` program, much faster than a new interpreter); a few run as
subprocesses."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ladders.cluster.cli import cli
from strategies import small_boards

LADDERS = [sys.executable, "-c", "from ladders.cluster.cli import main; main()"]

# ------------------------------------------------------------------ strategies
# Absurd means refused whatever else is drawn: 10^9 itself is a legal --games (the limit:
# half an hour of simulation), which hypothesis drew as a boundary value and then shrank
# towards for hours.
absurd_ints = st.one_of(st.integers(-10 ** 30, -1), st.integers(10 ** 10, 10 ** 40))
small_ints = st.integers(1, 6)
junk = st.sampled_from(["", "x", "1_0", "1e3", "0x10", "--", "nan", "-0", " 3", "\u0663", "9" * 5000,
                        "\x1b[2J", "1/2", "3.5"])
# mostly good values, so that most commands get past parsing and do their work
tokens = st.one_of(small_ints.map(str), small_ints.map(str), small_ints.map(str),
                   absurd_ints.map(str), junk)


@st.composite
def board_texts(draw: st.DrawFn) -> str:
    """Plain-text boards: half of them playable (:func:`strategies.small_boards`), the
    others with bad tokens, huge numbers, comments, blank lines and odd line ends."""
    if draw(st.booleans()):
        b = draw(small_boards(max_end=12))
        return f"{b.start}\n{b.end}\n{b.die}\n" + "".join(f"{a} {t}\n" for a, t in b.jumps)
    bad = tokens
    good = st.integers(1, 29).map(str)
    head = [draw(st.one_of(st.just("0"), bad)), draw(st.one_of(st.integers(5, 30).map(str), bad)),
            draw(st.one_of(st.integers(1, 6).map(str), bad))]
    jumps = draw(st.lists(st.tuples(st.one_of(good, bad), st.one_of(good, bad)), max_size=4))
    lines = head + [f"{a} {b}" for a, b in jumps]
    lines += draw(st.lists(st.sampled_from(["", "# note", "1 2 3", "\t", "7"]), max_size=2))
    text = draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines)
    return draw(st.sampled_from(["", "\ufeff"])) + text


toml_values = st.recursive(
    st.one_of(st.integers(-5, 40), absurd_ints, st.text(max_size=8), st.booleans(),
              st.floats(allow_nan=False, allow_infinity=False, width=32)),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


def toml_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + "".join(c if c.isalnum() or c in " -_" else f"\\u{ord(c):04x}" for c in value) + '"'
    return "[" + ", ".join(toml_literal(v) for v in value) + "]"  # type: ignore[attr-defined]


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    """TOML boards: the known fields with values of any type or size, unknown fields,
    nested tables, and now and then a syntax error."""
    fields = {"name": draw(st.one_of(st.text(max_size=10), toml_values)),
              "start": draw(st.one_of(st.just(0), toml_values)),
              "end": draw(st.one_of(st.integers(5, 30), toml_values)),
              "die": draw(st.one_of(st.integers(1, 6), toml_values)),
              "rule": draw(st.one_of(st.sampled_from(["stay", "bounce", "pass"]), toml_values)),
              "jumps": draw(st.one_of(st.lists(st.lists(st.integers(0, 30), min_size=2, max_size=2),
                                               max_size=4), toml_values))}
    keep = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, min_size=1))
    lines = [f"{k} = {toml_literal(fields[k])}" for k in keep]
    tail = draw(st.sampled_from(["", "\nextra = 1", "\n[table]\nx = 1", "\nend = 3", "\n= broken"]))
    return "\n".join(lines) + tail + "\n"


option_values = tokens


@st.composite
def command_lines(draw: st.DrawFn, board: str) -> list[str]:
    """A command on ``board`` with random option values (small, absurd or junk; half
    the commands only small ones)."""
    values = small_ints.map(str) if draw(st.booleans()) else option_values
    command = draw(st.sampled_from(["show", "stats", "bounds", "simulate", "solve", "plan", "coins"]))
    if command == "coins":
        names = ["--a", "--b", "--pot", "--cycles"]
        args = ["coins"]
    else:
        names = {"show": ["--die"], "stats": ["--die", "--throws"],
                 "bounds": ["--die", "--players", "--moves", "--digits"],
                 "simulate": ["--die", "--players", "--games", "--seed"],
                 "solve": ["--die", "--players", "--seed", "--block-size"],
                 "plan": ["--die", "--players", "--workers"]}[command]
        args = [command, board]
        if command == "bounds":
            args += [draw(st.sampled_from(["--moves", "--digits"])), draw(st.integers(1, 60).map(str))]
            names = ["--die", "--players"]
        if command == "simulate":
            args += ["--games", draw(st.one_of(st.integers(2, 2000).map(str), values))]
    for name in draw(st.lists(st.sampled_from(names), unique=True, max_size=3)):
        args += [name, draw(values)]
    if command == "solve":
        # two seats (three on 30 squares is minutes of legitimate work for elimination;
        # tests/checkpoints/test_store_machine.py solves three), and never a Dask cluster
        # inside the test process: the engines that take an executor run serially
        names = [n for n in names if n != "--players"]
        # (" 3" and "\u0663" are junk that int() reads as 3: a legitimate 3-player solve)
        args += ["--players", draw(st.one_of(st.just("2"), absurd_ints.map(str),
                                             junk.filter(lambda v: v.strip() not in ("3", "\u0663"))))]
        engines = ["series", "modular"] + (["crt", "elimination"] if board != "hasbro" else [])
        engine = draw(st.sampled_from(engines))  # crt and elimination on hasbro: minutes
        args += ["--engine", engine] + (["--executor", "serial"] if engine != "modular" else [])
    if command in ("show", "stats", "solve") and draw(st.booleans()):
        args += ["--rule", draw(st.sampled_from(["stay", "bounce", "pass", "sideways"]))]
    if draw(st.booleans()):
        args.append("--json")
    return args


# ------------------------------------------------------------------ checks
def run_in_process(args: list[str]) -> tuple[int, str, str]:
    """``ladders ARGS`` through ``cli.main`` in this process: exit code, stdout, stderr.

    The boards are small and the numbers either small or absurd (refused at once), and
    legitimately long work is not drawn: no clock is asserted (it fails on a shared
    machine), a command that runs away is stopped by the suite's per-test limit."""
    result = CliRunner().invoke(cli, args, prog_name="ladders", catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # escaped the CLI's error mapping: a bug
    return result.exit_code, result.stdout, result.stderr


def check(code: int, out: str, err: str, args: list[str]) -> None:
    """Exit 0 or 2; on 2 one line on stderr; never a traceback."""
    assert "Traceback" not in err and "internal error" not in err, (args, err[-2000:])
    assert code in (0, 2), (args, code, err[-2000:])
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (args, err[-2000:])
        assert len(err) < 1000, (args, err[:200])  # an excerpt, never the input echoed


def write(folder: str, name: str, text: str) -> str:
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8", newline="")
    return str(path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=board_texts())
def test_random_board_texts_and_options(data: st.DataObject, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        args = data.draw(command_lines(write(folder, "board.txt", text)))
        check(*run_in_process(args), args)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), doc=toml_documents())
def test_random_toml_documents_and_options(data: st.DataObject, doc: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        args = data.draw(command_lines(write(folder, "board.toml", doc)))
        check(*run_in_process(args), args)


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_random_options_on_presets(data: st.DataObject) -> None:
    args = data.draw(command_lines(data.draw(st.sampled_from(["tiny10", "hasbro", "nowhere"]))))
    check(*run_in_process(args), args)


@settings(max_examples=5, deadline=None)
@given(data=st.data(), text=board_texts())
def test_a_few_through_a_new_process(data: st.DataObject, text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        args = data.draw(command_lines(write(folder, "board.txt", text)))
        proc = subprocess.run([*LADDERS, *args], capture_output=True, text=True, timeout=300)
        check(proc.returncode, proc.stdout, proc.stderr, args)
