"""The docs run, and agree with the code.

The API reference is generated from the docstrings and must match them. Every code
block of the README and docs/*.md says what it is (its fence's language) and is run as
a user runs it, in a fresh process in a folder of its own: ``sh`` (and ``console``'s
``$`` lines) one command at a time through the installed ``ladders``; ``python`` as a
script; a ``toml`` or ``text`` block with a file name (```` ```toml my-board.toml ````)
is that file, loaded by the project's loaders, and every block's folder holds it (the
README's ``ladders show my-board.toml`` is the guide's board). ``text`` without a name
is no code (diagrams, layouts). What the default suite leaves out, and why, is
:data:`LEFT_OUT`: the long commands run with ``--runslow``, the ones that need a
cluster, a bucket or an hour never here. The rest take under a minute on 2 cores.

Every package's ``__init__.py`` names its modules, and only modules it has.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The fence languages a block may have; a block with none is refused.
KINDS = ("sh", "console", "python", "toml", "text")
#: The QVBS models (as tests/solver/chains/formats/test_prism.py): the README's brp.prism.
QVBS = Path(os.environ.get("LADDERS_QVBS", "/work/shared/qvbs"))
#: Seconds any one command of the default suite may take before it counts as hung.
COMMAND_LIMIT_S = 120


def test_the_api_page_is_the_one_the_code_gives() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_docs.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


# ---------------------------------------------------------------------------- the blocks
@dataclass(frozen=True)
class Block:
    """One fenced code block: where it opens, its language, its file name (if it is a
    file) and its text (dedented as far as its fence is)."""

    where: str
    kind: str
    name: str
    text: str


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown page, in order."""
    found, opened, body = [], None, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fence = re.match(r"^( *)```(.*)$", line)
        if opened is None and fence:
            indent, info = len(fence.group(1)), fence.group(2).split()
            opened, body = (number, indent, info), []
        elif opened is not None and line.strip() == "```":
            start, indent, info = opened
            found.append(Block(f"{path.relative_to(ROOT)}:{start}", info[0] if info else "",
                               info[1] if len(info) > 1 else "",
                               "\n".join(x[indent:] for x in body) + "\n"))
            opened = None
        elif opened is not None:
            body.append(line)
    return found


ALL = [b for page in DOCS for b in blocks(page)]
FILES = [b for b in ALL if b.name]


@dataclass(frozen=True)
class LeftOut:
    """Commands (or Python blocks) that match ``pattern`` are not run by default:
    ``slow`` ones with ``--runslow``, the others never here, for ``reason``."""

    pattern: str
    reason: str
    slow: bool = False


#: The first that matches decides.
LEFT_OUT = [
    LeftOut(r"python3\.11 -m venv", "makes a virtual environment and installs into it from the "
            "network; tests/test_packaging.py checks what the wheel holds"),
    LeftOut(r"s3://|AWS_", "needs an S3 bucket and its credentials; "
            "tests/checkpoints/test_backend.py runs stores on S3 (moto)"),
    LeftOut(r"dask_jobqueue", "starts a SLURM cluster from a login node"),
    LeftOut(r"tcp://|--scheduler-file|/shared/", "needs a Dask cluster of its own (a scheduler's "
            "address or file, a shared folder)"),
    LeftOut(r" \.\.\.( |$)", "elided arguments: a pattern, not a command"),
    LeftOut(r"--players 4|runs/h4", "the 4-player full board: about 22 min on 2 quiet cores "
            "(docs/benchmarks.md), more than --runslow's whole budget"),
    LeftOut(r"--engine elimination", "about 7 min on 2 local workers (docs/benchmarks.md); "
            "tests/test_full_board.py solves the full board by elimination with --runslow"),
    LeftOut(r"--engine crt", "about 90 s on 2 local workers (docs/benchmarks.md)", slow=True),
    LeftOut(r"runs/h\b", "the store of the crt run above", slow=True),
    LeftOut(r'solve hasbro --players 3|solve\("hasbro", players=3',
            "the 3-player full board on a local Dask cluster: 11-14 s on 2 quiet cores, "
            "much more on a busy machine", slow=True),
    LeftOut(r"hasbro --meet bump", "the 2-piece joint chain of the full board: about 40 s",
            slow=True),
]


def left_out(text: str) -> LeftOut | None:
    """The entry of :data:`LEFT_OUT` that ``text`` matches, if any."""
    return next((x for x in LEFT_OUT if re.search(x.pattern, text)), None)


def runs(block: Block, text: str, ident: str) -> object:
    """``pytest.param`` of one command or script of ``block``, marked by :data:`LEFT_OUT`."""
    entry = left_out(text)
    marks = ([] if entry is None else [pytest.mark.slow(reason=entry.reason)] if entry.slow else
             [pytest.mark.skip(reason=entry.reason)])
    return pytest.param(block, text, id=ident, marks=marks)


def commands() -> list[object]:
    """Every command of the ``sh`` and ``console`` blocks."""
    out = []
    for b in ALL:
        for line in b.text.splitlines():
            if b.kind == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if b.kind in ("sh", "console") and line.strip() and not line.startswith("#"):
                out.append(runs(b, line, f"{b.where} {line.split('#')[0].strip()}"))
    return out


@pytest.fixture(scope="module")
def folders() -> dict[str, Path]:
    """A folder per block (its commands run one after another there), made on first use."""
    return {}


def folder(folders: dict[str, Path], block: Block, factory: pytest.TempPathFactory) -> Path:
    """The block's folder: the docs' example files and every file block, as a user who
    read the docs has them beside the checkout's ``docs/examples``; brp.prism and
    brp.props from the QVBS where they are."""
    if block.where not in folders:
        where = factory.mktemp("block")
        shutil.copytree(ROOT / "docs" / "examples", where / "docs" / "examples")
        for f in FILES:
            (where / f.name).write_text(f.text)
        for name in ("brp.prism", "brp.props"):
            if (QVBS / "brp" / name).is_file():
                shutil.copy(QVBS / "brp" / name, where / name)
        folders[block.where] = where
    return folders[block.where]


def check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, f"{what}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def test_every_block_says_what_it_is() -> None:
    """A block with no language, or one this test does not know, would go unchecked."""
    unknown = [f"{b.where}: {b.kind or '(none)'}" for b in ALL if b.kind not in KINDS]
    assert not unknown, f"blocks whose fence names none of {KINDS}: {unknown}"
    files = [b for b in FILES if b.kind not in ("toml", "text")]
    assert not files, f"only toml and text blocks can be files: {files}"


@pytest.mark.parametrize(("block", "line"), commands())
def test_a_command_of_the_docs_runs(block: Block, line: str, folders: dict[str, Path],
                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    where = folder(folders, block, tmp_path_factory)
    for name in ("brp.prism", "brp.props"):
        if name in line and not (where / name).exists():
            pytest.skip(f"needs {name}: the QVBS models (LADDERS_QVBS={QVBS} has none)")
    ladders = Path(sys.executable).parent / "ladders"
    assert ladders.is_file(), f"no installed ladders beside {sys.executable}"
    env = {**os.environ, "PATH": f"{ladders.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    limit = None if left_out(line) else COMMAND_LIMIT_S
    proc = subprocess.run(["bash", "-c", line], cwd=where, env=env, capture_output=True,
                          text=True, timeout=limit)
    check(proc, f"{block.where}: {line}")


@pytest.mark.parametrize(("block", "text"),
                         [runs(b, b.text, b.where) for b in ALL if b.kind == "python"])
def test_a_python_block_of_the_docs_runs(block: Block, text: str, folders: dict[str, Path],
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    where = folder(folders, block, tmp_path_factory)
    for name in ("brp.prism", "brp.props"):
        if name in text and not (where / name).exists():
            pytest.skip(f"needs {name}: the QVBS models (LADDERS_QVBS={QVBS} has none)")
    if "import stormpy" in text:
        pytest.importorskip("stormpy")
    (where / "block.py").write_text(text)
    limit = None if left_out(text) else COMMAND_LIMIT_S
    proc = subprocess.run([sys.executable, "block.py"], cwd=where, capture_output=True,
                          text=True, timeout=limit)
    check(proc, f"{block.where} as a script")


@pytest.mark.parametrize("block", FILES, ids=[f"{b.where} {b.name}" for b in FILES])
def test_a_file_of_the_docs_loads(block: Block, tmp_path: Path) -> None:
    """A board by ``load_board``, a chain by ``load_chain`` (a .lab block beside its .tra
    is read with it): what ``ladders solve FILE`` does first."""
    from ladders.solver.chains.formats import format_of, load_chain
    from ladders.solver.games.board import load_board
    for f in FILES:
        (tmp_path / f.name).write_text(f.text)
    path = str(tmp_path / block.name)
    if block.name.endswith(".lab"):
        assert (tmp_path / block.name).with_suffix(".tra").name in {f.name for f in FILES}
        path = str((tmp_path / block.name).with_suffix(".tra"))
    if format_of(path) is None:
        load_board(path)
    else:
        assert load_chain(path).chain is not None


# ---------------------------------------------------------------------------- the help
def test_the_help_says_early_what_it_answers_and_the_docs_every_picture() -> None:
    """``ladders --help`` spoke only of boards; the README and the guide left out a
    kind of picture that ``plot --help`` offers (issue 55, item 7)."""
    from ladders.cluster.cli import cli
    head = " ".join(CliRunner().invoke(cli, ["--help"]).output.split("Options:")[0].split())
    for words in ("any absorbing Markov chain", "PRISM", "JANI", ".tra"):
        assert words in head, head
    readme, guide = (ROOT / "README.md").read_text(), (ROOT / "docs" / "guide.md").read_text()
    kinds = next(p for p in cli.commands["plot"].params if p.name == "kind").type.choices
    for kind in kinds:
        assert f"`{kind}`" in readme and f"ladders plot {kind}" in guide, kind


def test_verify_help_names_the_engine_each_run_is_compared_with() -> None:
    """``ladders verify --help`` says, for each engine that has a cross-check, the engine
    that :meth:`Engine.cross_for` gives for a race and for any other chain question."""
    from ladders.cluster.cli import cli
    from ladders.cluster.engines import engines
    from ladders.solver.chains.formats import load_chain
    from ladders.solver.chain_problem import ChainProblem
    from ladders.solver.chains.questions import Question
    from ladders.solver.games.board import load_board
    from ladders.solver.problem import Problem
    race = Problem.build(load_board("tiny10"), 2)
    chain = ChainProblem(load_chain(str(ROOT / "docs" / "examples" / "ruin.toml")).chain, Question())
    text = " ".join(CliRunner().invoke(cli, ["verify", "--help"]).output.split())
    for name, engine in engines().items():
        on_race, on_chain = engine.cross_for(race), engine.cross_for(chain)
        if on_race is None and on_chain is None:
            continue
        said = f"{name} runs: {on_race}" + (f", {on_chain} for a chain question"
                                             if on_chain != on_race else "")
        assert said in text, f"{said!r} is not in: {text}"


# ---------------------------------------------------------------------------- the packages
PACKAGES = sorted(p.parent for p in ROOT.rglob("__init__.py")
                  if p.parent != ROOT and not {".venv", "tests", "build"} & set(p.parts)
                  and not any(part.endswith(".egg-info") for part in p.parts))


@pytest.mark.parametrize("package", PACKAGES, ids=[str(p.relative_to(ROOT)) for p in PACKAGES])
def test_a_package_docstring_names_its_modules(package: Path) -> None:
    """Each module and subpackage as ``:mod:`.NAME```, and no module it does not have."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    have = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    have |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    named = set(re.findall(r":mod:`\.(\w+)", doc))
    assert not named - have, f"{package}/__init__.py names modules it has not: {named - have}"
    assert not have - named, f"{package}/__init__.py does not name {sorted(have - named)}"
