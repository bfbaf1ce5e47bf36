"""Boards: parse, validate once, and move a piece.

A board has a start square, an end square, a die with faces 1..d (equally likely), jumps
``from -> to`` (a ladder when to > from, a chute or snake when to < from) and an
overshoot rule for rolls that carry a piece past the end:

- ``stay``   the piece does not move (the published Chutes and Ladders analyses);
- ``bounce`` the piece walks to the end and back the rest;
- ``pass``   reaching or passing the end finishes the game.

After the roll, a piece that lands on the start of a jump moves to its other end (one
jump only; chained jumps are rejected). Landing on the end square finishes.

Pieces that meet follow the board's ``meet`` rule:

- ``none``   pieces share and pass squares freely (the published analyses; the race of
             independent pieces, :mod:`ladders.solver.games.race`);
- ``bump``   after a piece's move is complete, every other piece on its square goes
             back to the start square, except on the start and end squares (SPEC.md
             5.3; the joint chain of :mod:`ladders.solver.games.bump`).

Boards come from presets, from the plain-text format of the published analysis (one
integer per line for start, end and die size, then one ``from to`` pair per line) or
from TOML (``start``, ``end``, ``die``, ``rule``, ``meet``, ``jumps = [[from, to], ...]``). Every
problem is reported as a :class:`BoardError` naming the file, the line and the fix.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
import tomllib
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ladders.solver.games import MEETS

RULES = ("stay", "bounce", "pass")

#: Limits on what a board may ask for, so that an absurd file or option is refused at
#: once instead of running for hours: squares from start to end, faces of the die, and
#: the size of a board file. The exact two-player solve of a board of 10,000 squares
#: already needs 10^8 unknowns; one-player answers stay quick up to these limits.
MAX_SQUARES = 100_000
MAX_DIE = 1_000
MAX_FILE_BYTES = 1_000_000
#: Characters of a board's name: it heads every report (a name of 900 KB was printed).
MAX_NAME = 200
#: How much of a bad line an error message quotes.
EXCERPT = 60


def excerpt(text: str, keep: int = EXCERPT, quote: bool = True) -> str:
    """``text`` for an error message: printable, at most ``keep`` characters, quoted
    (``quote``) or as it is (a ``repr`` already)."""
    shown = clean_text(text)
    shown = shown if len(shown) <= keep else shown[:keep] + "..."
    return repr(shown) if quote else shown


def clean_text(text: str) -> str:
    """``text`` with control characters replaced by ``?``, so that a board's name or a
    line quoted from a file cannot drive the terminal."""
    return "".join(c if c.isprintable() else "?" for c in text)

_COMMON_LADDERS = ((1, 38), (4, 14), (9, 31), (21, 42), (28, 84), (51, 67), (71, 91), (80, 100))
_HASBRO_CHUTES = ((16, 6), (48, 26), (49, 11), (56, 53), (62, 19), (64, 60), (87, 24),
                  (93, 73), (95, 75), (98, 78))

PRESET_NOTES = {
    "hasbro": "the board of the published exact solution",
    "milton-bradley": "the 1960 Monte Carlo paper's board (chute 47->26)",
    "snakes-2016": "a blog analysis's board (ladder 36->45, no chute 62->19)",
    "tiny10": "a 10-square toy board for checking by hand",
}


class BoardError(ValueError):
    """A board that cannot be played: the message names the source, line and problem."""


@dataclass(frozen=True)
class Board:
    """A validated board. Build it with :func:`make_board` or :func:`load_board`.

    ``jumps`` maps the square a jump starts on to the square it ends on; ``meet`` is
    the rule for pieces that meet (:data:`MEETS`).
    """

    name: str
    start: int
    end: int
    die: int
    rule: str
    jumps: tuple[tuple[int, int], ...]
    meet: str = "none"

    @functools.cached_property
    def jump_map(self) -> dict[int, int]:
        """``jumps`` as a dict, built once: :meth:`move` looks a square up in it for
        every roll (built per call, a board of 5,000 squares took 11 s to check)."""
        return dict(self.jumps)

    def move(self, pos: int, roll: int) -> int:
        """Square reached from ``pos`` with ``roll``: overshoot rule, then one jump."""
        land = pos + roll
        if land > self.end:
            if self.rule == "stay":
                land = pos
            elif self.rule == "pass":
                land = self.end
            else:  # bounce: reflect off the end (and off the start, for huge dice)
                span = self.end - self.start
                offset = (land - self.start) % (2 * span)
                land = self.start + (offset if offset <= span else 2 * span - offset)
        return self.jump_map.get(land, land)

    def describe(self) -> str:
        """Human-readable summary used by ``ladders show``."""
        ladders = [f"{a}->{b}" for a, b in self.jumps if b > a]
        chutes = [f"{a}->{b}" for a, b in self.jumps if b < a]
        return "\n".join([
            f"board    {self.name}",
            f"squares  {self.start}..{self.end} (start {self.start}, end {self.end})",
            f"die      1..{self.die}",
            f"rule     {self.rule}",
            *([f"meet     {self.meet}"] if self.meet != "none" else []),
            f"ladders  {' '.join(ladders) or '-'}",
            f"chutes   {' '.join(chutes) or '-'}",
        ])


_PRESETS: dict[str, tuple[int, int, int, str, tuple[tuple[int, int], ...]]] = {
    "hasbro": (0, 100, 6, "stay", _COMMON_LADDERS + ((36, 44),) + _HASBRO_CHUTES),
    "milton-bradley": (0, 100, 6, "stay", _COMMON_LADDERS + ((36, 44),)
                       + tuple((47, 26) if j == (48, 26) else j for j in _HASBRO_CHUTES)),
    "snakes-2016": (0, 100, 6, "stay", _COMMON_LADDERS + ((36, 45),)
                    + tuple(j for j in _HASBRO_CHUTES if j not in ((62, 19), (48, 26)))
                    + ((47, 26),)),
    "tiny10": (0, 10, 6, "stay", ((4, 7), (9, 2))),
}


def board_to_json(board: Board) -> dict[str, object]:
    """The board as plain JSON data (for run stores): :func:`board_from_json` inverts it."""
    return {"name": board.name, "start": board.start, "end": board.end, "die": board.die,
            "rule": board.rule, "meet": board.meet, "jumps": [list(j) for j in board.jumps]}


def board_from_json(data: dict) -> Board:
    """Rebuild (and validate again) a board written by :func:`board_to_json`; stores
    written before the ``meet`` field hold boards whose pieces never meet."""
    return make_board(str(data["name"]), int(data["start"]), int(data["end"]), int(data["die"]),
                      str(data["rule"]), [(int(a), int(b)) for a, b in data["jumps"]],
                      meet=str(data.get("meet", "none")))


def preset_names() -> list[str]:
    """Names of the built-in boards."""
    return list(_PRESETS)


def make_board(name: str, start: int, end: int, die: int, rule: str,
               jumps: list[tuple[int, int]] | tuple[tuple[int, int], ...],
               *, meet: str = "none", source: str | None = None,
               lines: dict[str, int] | None = None,
               jump_lines: list[int | None] | None = None) -> Board:
    """Validate the parts of a board and return it; raise :class:`BoardError` if unplayable.

    ``source`` (a file name), ``lines`` (header field -> line) and ``jump_lines`` (one
    line per jump) only serve to make error messages point at the right place.
    """
    where_src = source or f"board {excerpt(name)}"
    lines = lines or {}
    jump_lines = list(jump_lines) if jump_lines is not None else [None] * len(jumps)

    def fail(problem: str, line: int | None = None, fix: str = "") -> BoardError:
        where = f"{where_src}:{line}" if line else where_src
        return BoardError(f"{where}: {problem}" + (f"; {fix}" if fix else ""))

    if len(name) > MAX_NAME:
        raise fail(f"the name {excerpt(name)} has {len(name):,} characters, more than "
                   f"{MAX_NAME}", lines.get("name"), f"give it a name of at most {MAX_NAME}")

    if rule not in RULES:
        raise fail(f"unknown overshoot rule {rule!r}", lines.get("rule"),
                   f"use one of {', '.join(RULES)}")
    if meet not in MEETS:
        raise fail(f"unknown meet rule {excerpt(meet)}", lines.get("meet"),
                   f"use one of {', '.join(MEETS)}")
    if die < 1:
        raise fail(f"die size {die} is less than 1", lines.get("die"), "a die needs at least one face")
    if die > MAX_DIE:
        raise fail(f"die size {die} is more than {MAX_DIE:,} faces", lines.get("die"),
                   f"use a die of at most {MAX_DIE:,} faces")
    if end <= start:
        raise fail(f"end square {end} is not after start square {start}", lines.get("end"),
                   "the end must be larger than the start")
    if end - start > MAX_SQUARES:
        raise fail(f"{end - start:,} squares from start {start} to end {end} is more than "
                   f"{MAX_SQUARES:,}", lines.get("end"),
                   f"use a board of at most {MAX_SQUARES:,} squares")
    seen: dict[int, int | None] = {}
    for (a, b), line in zip(jumps, jump_lines):
        if not (start <= a <= end and start <= b <= end):
            raise fail(f"jump {a} -> {b} leaves the board [{start}, {end}]", line,
                       "both ends of a jump must be squares of the board")
        if a in (start, end):
            kind = "start" if a == start else "end"
            raise fail(f"jump {a} -> {b} starts on the {kind} square", line,
                       "jumps may not start on the start or end square")
        if a == b:
            raise fail(f"jump {a} -> {b} goes nowhere", line, "remove it")
        if a in seen:
            first = seen[a]
            also = f" (first at line {first})" if first else ""
            raise fail(f"square {a} has two jumps{also}", line, "keep one jump per square")
        seen[a] = line
    starts = {a for a, _ in jumps}
    for (a, b), line in zip(jumps, jump_lines):
        if b in starts:
            raise fail(f"chained jumps: {a} -> {b} ends where another jump starts", line,
                       "a jump must end on a square that starts no jump")
    board = Board(name=clean_text(name), start=start, end=end, die=die, rule=rule,
                  jumps=tuple(sorted((int(a), int(b)) for a, b in jumps)), meet=meet)
    check_finishes(board, where_src)
    return board


def check_finishes(board: Board, where: str) -> None:
    """Raise :class:`BoardError` if some square reachable from the start can never finish.

    Such a board makes the game last forever with positive probability, so no
    expected length or win probability exists. A search backwards from the end, over
    the ranges of squares a throw reaches (:class:`_Squares`): linear in the squares,
    whatever the die (end 20,000 with a die of 1,000 took ``ladders show`` 47-60 s one
    throw at a time)."""
    reach = reachable_squares(board)
    can_finish = set()
    if board.end in reach:
        jumps_to: dict[int, list[int]] = defaultdict(list)
        for a, b in board.jumps:
            jumps_to[b].append(a)
        overshoot = _overshoot_sources(board)
        left = _Squares(s for s in range(board.start, board.end) if s not in board.jump_map)
        can_finish.add(board.end)
        todo = deque([board.end])
        while todo:
            t = todo.popleft()
            # a throw from s lands on t (or on a jump to t) for s within a die of it
            for landing in [t, *jumps_to[t]]:
                for s in left.take(landing - board.die, landing - 1):
                    can_finish.add(s)
                    todo.append(s)
            for s in overshoot.get(t, ()):
                if left.take_one(s):
                    can_finish.add(s)
                    todo.append(s)
    stuck = sorted(reach - can_finish)
    if stuck:
        shown = ", ".join(map(str, stuck[:8])) + (" ..." if len(stuck) > 8 else "")
        raise BoardError(f"{where}: the game can last forever: from square(s) {shown} the end "
                         f"{board.end} can never be reached (rule {board.rule}, die {board.die}); "
                         "change the jumps, the die or the overshoot rule")


def reachable_squares(board: Board) -> set[int]:
    """Squares a piece can occupy in some game (the end included when reachable): a
    search over the ranges of squares a throw reaches, each square taken once
    (:class:`_Squares`), and the throws past the end one by one."""
    jump_starts = sorted(board.jump_map)
    unseen_jumps = _Squares(jump_starts)
    unseen = _Squares(s for s in range(board.start, board.end + 1) if s not in board.jump_map)
    unseen.take_one(board.start)
    seen = {board.start}
    todo = deque([board.start])
    while todo:
        s = todo.popleft()
        if s == board.end:
            continue
        lo, hi = s + 1, min(s + board.die, board.end)
        found = list(unseen.take(lo, hi))
        found += [b for a in unseen_jumps.take(lo, hi) if unseen.take_one(b := board.jump_map[a])]
        found += [t for t in _past_end(board, s) if unseen.take_one(t)]
        seen.update(found)
        todo.extend(found)
    return seen


def _past_end(board: Board, s: int) -> set[int]:
    """Where the throws from ``s`` past the end lead (the overshoot rule, then a jump),
    where that is news to a search over the ranges of throws: ``stay`` leads back to
    ``s`` and ``pass`` to the end, which a throw of exactly the rest reaches anyway, so
    only ``bounce`` is asked, one throw at a time (at most a die of them, from the
    squares within a die of the end)."""
    if board.rule != "bounce" or s + board.die <= board.end:
        return set()
    return {board.move(s, r) for r in range(board.end - s + 1, board.die + 1)}


def _overshoot_sources(board: Board) -> dict[int, list[int]]:
    """For each square, the squares whose throws past the end lead to it
    (:func:`_past_end`)."""
    out: dict[int, list[int]] = defaultdict(list)
    for s in range(max(board.start, board.end - board.die + 1), board.end):
        if s not in board.jump_map:
            for t in _past_end(board, s):
                out[t].append(s)
    return out


class _Squares:
    """A set of squares from which whole ranges are taken, each square once: the next
    square still in the set, found by pointers that skip the ones taken (path halving),
    so that n ranges over n squares cost about n steps, not n times the die."""

    def __init__(self, squares: Iterable[int]) -> None:
        self.keys = sorted(squares)
        self.next = list(range(len(self.keys) + 1))  # self.next[i] == i: keys[i] is there

    def _find(self, i: int) -> int:
        nxt = self.next
        while nxt[i] != i:
            nxt[i] = nxt[nxt[i]]
            i = nxt[i]
        return i

    def take(self, lo: int, hi: int) -> Iterator[int]:
        """Remove and yield the squares of ``lo..hi`` still in the set, in order."""
        i = self._find(bisect.bisect_left(self.keys, lo))
        while i < len(self.keys) and self.keys[i] <= hi:
            yield self.keys[i]
            self.next[i] = i + 1
            i = self._find(i + 1)

    def take_one(self, square: int) -> bool:
        """Remove ``square``; whether it was still in the set."""
        i = bisect.bisect_left(self.keys, square)
        if i < len(self.keys) and self.keys[i] == square and self.next[i] == i:
            self.next[i] = i + 1
            return True
        return False


def preset_board(name: str) -> Board:
    """The built-in board ``name`` (see :data:`PRESET_NOTES`)."""
    start, end, die, rule, jumps = _PRESETS[name]
    return make_board(name, start, end, die, rule, list(jumps))


def with_overrides(board: Board, rule: str | None = None, die: int | None = None,
                   meet: str | None = None) -> Board:
    """``board`` with another overshoot rule, die size or meet rule, validated again."""
    if rule is None and die is None and meet is None:
        return board
    changed = dataclasses.replace(board, rule=rule or board.rule,
                                  die=die if die is not None else board.die,
                                  meet=meet or board.meet)
    label = ([board.name] + ([f"rule={rule}"] if rule else [])
             + ([f"die={die}"] if die is not None else []) + ([f"meet={meet}"] if meet else []))
    return make_board(" ".join(label), changed.start, changed.end, changed.die, changed.rule,
                      list(changed.jumps), meet=changed.meet,
                      source=f"board {board.name!r} with " + ", ".join(label[1:]))


def load_board(spec: str) -> Board:
    """A preset name, a plain-text board file or a ``.toml`` board file.

    A name that is both a preset and a file here is refused as ambiguous (``./NAME``
    names the file). Files of more than :data:`MAX_FILE_BYTES` are refused unread; a
    UTF-8 byte-order mark (as Notepad writes) is allowed.
    """
    path = Path(spec)
    if spec in _PRESETS:
        if path.is_file():
            raise BoardError(f"{spec}: is both a preset and a file here; write ./{spec} for "
                             "the file, or rename it")
        return preset_board(spec)
    if not path.exists():
        raise BoardError(f"{excerpt(spec)}: no such preset or board file; presets are "
                         f"{', '.join(_PRESETS)} (see 'ladders boards')")
    if path.is_dir():
        raise BoardError(f"{spec}: is a folder, not a board file")
    try:
        if not path.is_file():
            raise BoardError(f"{spec}: is not a regular file; give a board file")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise BoardError(f"{spec}: {size:,} bytes is more than a board file may hold "
                             f"({MAX_FILE_BYTES:,}); a board of {MAX_SQUARES:,} squares fits")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"{spec}: cannot read the board file ({exc})") from exc
    if path.suffix.lower() == ".toml":
        return parse_toml_board(text, str(path))
    return parse_text_board(text, str(path))


#: Digits of a board file's integer (no sign-less underscores, no exponents): more
#: would exceed every limit above.
_DIGITS = 18
_INTEGER = re.compile(rf"[+-]?[0-9]{{1,{_DIGITS}}}")


def parse_text_board(text: str, source: str) -> Board:
    """Parse the published plain-text format.

    Lines 1-3 hold start, end and die size (one integer each); every further line is a
    jump ``from to``. Blank lines and text after ``#`` are ignored.
    """
    header: list[tuple[int, int]] = []
    jumps: list[tuple[int, int]] = []
    jump_lines: list[int | None] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        bad = next((t for t in tokens if not _INTEGER.fullmatch(t)), None)
        if bad is not None:
            what = ("is not an integer" if not re.fullmatch(r"[+-]?[0-9]+", bad)
                    else f"has more than {_DIGITS} digits")
            raise BoardError(f"{source}:{number}: {excerpt(bad)} {what}; "
                             "every token of a board file is a whole number")
        values = [int(t) for t in tokens]
        if len(header) < 3:
            if len(values) != 1:
                field = ("start", "end", "die size")[len(header)]
                raise BoardError(f"{source}:{number}: expected one integer (the {field}), "
                                 f"found {len(values)}: {excerpt(line)}")
            header.append((values[0], number))
        else:
            if len(values) != 2:
                raise BoardError(f"{source}:{number}: a jump is two integers 'from to', "
                                 f"found {len(values)}: {excerpt(line)}")
            jumps.append((values[0], values[1]))
            jump_lines.append(number)
    if len(header) < 3:
        missing = ("start", "end", "die size")[len(header)]
        raise BoardError(f"{source}: the file ends before the {missing}; a board file starts "
                         "with three lines: start, end, die size")
    (start, ls), (end, le), (die, ld) = header
    return make_board(Path(source).stem, start, end, die, "stay", jumps, source=source,
                      lines={"start": ls, "end": le, "die": ld}, jump_lines=jump_lines)


def parse_toml_board(text: str, source: str) -> Board:
    """Parse a TOML board: ``start``, ``end``, ``die``, ``rule``, ``meet`` and
    ``jumps = [[a, b], ...]``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        where = f"{source}:{line.group(1)}" if line else source
        raise BoardError(f"{where}: not valid TOML ({exc})") from None
    except RecursionError:
        # tomllib parses nested arrays recursively: thousands of '[' exhaust the stack
        raise BoardError(f"{source}: arrays nested too deeply; a board needs two levels "
                         "(jumps = [[from, to], ...])") from None
    except ValueError:
        # Python refuses to convert integers of more than 4,300 digits
        long = re.search(rf"[0-9_]{{{_DIGITS + 1},}}", text)
        at = text.count("\n", 0, long.start()) + 1 if long else None
        digits = len(long.group().replace("_", "")) if long else 0
        raise BoardError(f"{source}{f':{at}' if at else ''}: an integer of {digits:,} digits; "
                         f"a board's numbers have at most {_DIGITS}") from None
    src_lines = text.splitlines()

    def line_of(pattern: str) -> int | None:
        rx = re.compile(pattern)
        for i, raw in enumerate(src_lines, start=1):
            if rx.search(raw.split("#", 1)[0]):
                return i
        return None

    unknown = sorted(set(data) - {"name", "start", "end", "die", "rule", "meet", "jumps"})
    if unknown:
        key = re.escape(unknown[0])
        at = line_of(r"^\s*" + key + r"\s*=") or line_of(r"^\s*\[+\s*" + key + r"\s*[\].]")
        where = f"{source}:{at}" if at else source
        raise BoardError(f"{where}: unknown field {excerpt(unknown[0])}; "
                         "fields are name, start, end, die, rule, meet, jumps")
    fields: dict[str, int] = {}
    lines: dict[str, int] = {}
    for key, default in (("start", 0), ("end", None), ("die", 6)):
        lines[key] = line_of(rf"^\s*{key}\s*=") or 0
        value = data.get(key, default)
        if value is None:
            raise BoardError(f"{source}: missing field {key!r}; add e.g. 'end = 100'")
        if not isinstance(value, int) or isinstance(value, bool):
            raise BoardError(f"{source}:{lines[key]}: {key} = {excerpt(repr(value), quote=False)} is not an integer")
        fields[key] = value
    rule = data.get("rule", "stay")
    lines["rule"] = line_of(r"^\s*rule\s*=") or 0
    if not isinstance(rule, str):
        raise BoardError(f"{source}:{lines['rule']}: rule = {rule!r} is not text; use one of "
                         + ", ".join(RULES))
    meet = data.get("meet", "none")
    lines["meet"] = line_of(r"^\s*meet\s*=") or 0
    if not isinstance(meet, str):
        raise BoardError(f"{source}:{lines['meet']}: meet = {excerpt(repr(meet), quote=False)} "
                         f"is not text; use one of {', '.join(MEETS)}")
    raw_jumps = data.get("jumps", [])
    jumps_at = line_of(r"^\s*jumps\s*=")
    if not isinstance(raw_jumps, list):
        raise BoardError(f"{source}:{jumps_at}: jumps must be a list of [from, to] pairs")
    # where each pair is written: every "[a, b]" from the jumps line on, in order, so
    # that a pair written twice is found at its own line (one pass: linear in the file)
    written: dict[tuple[int, int], deque[int]] = defaultdict(deque)
    pair_rx = re.compile(r"\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]")
    for number, raw in enumerate(src_lines[(jumps_at or 1) - 1:], start=jumps_at or 1):
        for m in pair_rx.finditer(raw.split("#", 1)[0]):
            written[(int(m.group(1)), int(m.group(2)))].append(number)
    jumps: list[tuple[int, int]] = []
    jump_lines: list[int | None] = []
    for i, pair in enumerate(raw_jumps):
        ok = (isinstance(pair, list) and len(pair) == 2
              and all(isinstance(v, int) and not isinstance(v, bool) for v in pair))
        if not ok:
            raise BoardError(f"{source}:{jumps_at}: jumps[{i}] = {excerpt(repr(pair), quote=False)} is "
                             "not a pair of integers [from, to]")
        jumps.append((pair[0], pair[1]))
        seen_at = written.get((pair[0], pair[1]))
        jump_lines.append(seen_at.popleft() if seen_at else None)
    name = str(data.get("name", Path(source).stem))
    lines["name"] = line_of(r"^\s*name\s*=") or 0
    return make_board(name, fields["start"], fields["end"], fields["die"], rule, jumps,
                      meet=meet, source=source, lines=lines, jump_lines=jump_lines)
