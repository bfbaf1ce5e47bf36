"""The command line's lists come from the registries (issue 53): a meeting rule is its
line in ``ladders.solver.games.MEETS`` and one module (2 files), a chain format one
module of ``ladders.solver.chains.formats`` (1 file). Each test adds one, in a fresh
process, by the registry's own hook (the package's ``__path__``, the ``MEETS``
table), and the CLI lists it in its help and uses it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ladders.solver.exact import mpq

#: A throwaway meeting rule: pieces pass through each other (nothing happens when they
#: meet), so its joint chain is the race of independent pieces, built state by state.
GHOST_RULE = '''"""A test's meeting rule: pieces pass through each other."""
from collections import deque

from ladders.solver.chains.model import ChainBuilder
from ladders.solver.exact import mpq
from ladders.solver.games.chain import build_chain


def ghost_chain(board, players):
    one = build_chain(board)
    builder = ChainBuilder(f"{board.name}: {players} ghosts", "ghost")
    start = (tuple([one.start_index] * players), 0)
    seen, todo = {start}, deque([start])
    builder.state(repr(start))
    while todo:
        pos, t = todo.popleft()
        i = builder.state(repr((pos, t)))
        if one.finish[pos[t]]:
            builder.transition(i, builder.state(f"seat {t + 1} wins"),
                               mpq(one.finish[pos[t]], one.die))
        for j, count in one.moves[pos[t]]:
            nxt = (pos[:t] + (j,) + pos[t + 1:], (t + 1) % players)
            builder.transition(i, builder.state(repr(nxt)), mpq(count, one.die))
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    builder.start_at(0)
    for seat in range(players):
        builder.label(f"seat {seat + 1} wins", [builder.known(f"seat {seat + 1} wins")])
    return builder.build()
'''

#: A throwaway chain format: one line per transition, ``from to probability``.
TINY_FORMAT = '''"""A test's chain format: one line per transition, "from to probability"."""
from pathlib import Path

from ladders.solver.chains.formats import Loaded
from ladders.solver.chains.model import ChainBuilder, parse_exact

SUFFIXES = (".tiny",)
DESCRIPTION = "a tiny test format (one transition a line)"
TAKES = ()


def load(path):
    builder = ChainBuilder(Path(path).stem, path)
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        a, b, p = line.split()
        builder.transition(builder.state(a), builder.state(b), parse_exact(p), number)
    builder.start_at(0)
    builder.label("end", [builder.known("end")])
    return Loaded(builder.build())
'''


def run_with(setup: str, *args: str) -> subprocess.CompletedProcess:
    """``ladders ARGS`` in a fresh process after the Python ``setup`` (the registration)."""
    code = (f"import sys\n{setup}\nfrom ladders.cluster.cli import main\n"
            f"sys.argv = ['ladders', *{list(args)!r}]\nmain()\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def test_a_meeting_rule_is_one_module_and_one_line(tmp_path: Path) -> None:
    (tmp_path / "ghost.py").write_text(GHOST_RULE)
    setup = ("import ladders.solver.games as games\n"
             f"games.__path__.append({str(tmp_path)!r})\n"
             "games.MEETS['ghost'] = 'pieces pass through each other'")
    help_text = " ".join(run_with(setup, "solve", "--help").stdout.split())
    assert "[none|bump|ghost]" in help_text and "pieces pass through each other" in help_text
    plan = run_with(setup, "plan", "tiny10", "--meet", "ghost", "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["meet"] == "ghost"
    solved = run_with(setup, "solve", "tiny10", "--meet", "ghost", "--json")
    assert solved.returncode == 0, solved.stderr
    answers = json.loads(solved.stdout)["results"][0]["answers"]
    race = run_with("", "solve", "tiny10", "--json")
    seats = [mpq(s["exact"]) for s in json.loads(race.stdout)["seats"]]
    # pieces that pass through each other race as independent pieces
    assert [mpq(answers[f"seat {j} wins"]["exact"]) for j in (1, 2)] == seats
    walked = run_with(setup, "simulate", "tiny10", "--meet", "ghost", "-n", "100", "--json")
    assert walked.returncode == 0, walked.stderr
    refused = run_with("", "solve", "tiny10", "--meet", "ghost")
    assert refused.returncode == 2 and "'ghost' is not one of 'none', 'bump'" in refused.stderr


def test_a_chain_format_is_one_module(tmp_path: Path) -> None:
    folder = tmp_path / "more_formats"
    folder.mkdir()
    (folder / "tinyformat_for_cli.py").write_text(TINY_FORMAT)
    walk = tmp_path / "walk.tiny"
    walk.write_text("start mid 1\nmid start 1/2\nmid end 1/2\n")
    setup = ("import ladders.solver.chains.formats as formats\n"
             f"formats.__path__.append({str(folder)!r})")
    help_text = " ".join(run_with(setup, "solve", "--help").stdout.split())
    assert "a tiny test format (one transition a line)" in help_text
    solved = run_with(setup, "solve", str(walk), "--json")
    assert solved.returncode == 0, solved.stderr
    answers = json.loads(solved.stdout)["results"][0]["answers"]
    assert {k: a["exact"] for k, a in answers.items()} == {"end": "1", "steps": "4"}
    planned = run_with(setup, "plan", str(walk), "--json")
    assert planned.returncode == 0 and json.loads(planned.stdout)["chain"] == "walk"
    refused = run_with(setup, "solve", str(walk), "--constants", "N=1")
    assert refused.returncode == 2
    assert "--constants is for prism files" in refused.stderr
