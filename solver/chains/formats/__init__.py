"""Sources of chains: one module a format, found by the file's suffix.

A format is one module in this package that defines

- ``SUFFIXES``: the file suffixes it reads (``(".tra",)``), lower case;
- ``DESCRIPTION``: one line for ``ladders solve --help`` and error messages;
- ``TAKES``: the keywords of ``load`` beyond the path it accepts (``"constants"``,
  ``"properties"``), empty for a file that holds the whole chain;
- ``claims(path, head) -> bool`` (optional): whether a file with one of its suffixes
  is of this format, from its first bytes ``head`` (a ``.toml`` file is a chain when it
  has a ``[transitions]`` table, a board otherwise);
- ``load(path, **taken) -> Loaded``: the chain, checked (a
  :class:`~ladders.solver.chains.model.ChainError` naming the file and line), and any
  questions the file itself asks (a PRISM properties file's);
- ``FOLLOWS`` (optional): ``("progress",)`` where ``load`` also takes a
  ``progress(states, transitions, levels)`` that follows a long build (a model
  explored state by state, not a file that lists its chain).

Adding a format is adding one such module: :func:`load_chain`, ``ladders solve FILE``
and ``ladders.load_chain`` find it here (``tests/solver/chains/formats/test_formats.py``
adds one).
The formats here: the chain TOML (:mod:`.toml_chain`), PRISM's explicit files
(:mod:`.tra`, with ``.lab``, ``.srew`` and ``.trew`` beside it), Storm's DRN
(:mod:`.drn`), and PRISM and JANI models (:mod:`.prism`): read by ladders itself
(:mod:`.prism_lang`, the PRISM language; :mod:`.jani_lang`, JANI; :mod:`.prism_native`,
the model and its properties built into a chain), or by Storm with ``--builder storm``.
A chain file's ``--properties`` (the TOML, ``.tra`` and DRN take them) are read by the
same property reader, over the chain's labels and rewards (:mod:`.chain_properties`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ladders.solver.chains.model import Chain, ChainError
from ladders.solver.chains.questions import Question

#: Bytes of a file that ``claims`` sees.
HEAD_BYTES = 65_536
#: Largest chain file read (a chain of the limits' size in the densest format).
MAX_FILE_BYTES = 8_000_000_000


@dataclass(frozen=True)
class Loaded:
    """A chain from a file, with the questions the file asks (none: the default,
    where the chain ends and the expected steps), how to load it again
    (``source``: the file, its format and the keywords, for a run store), and the
    properties that cannot be asked (``refused``: one line each, naming the property,
    where it is and why; the others are answered all the same, as Storm does)."""

    chain: Chain
    questions: tuple[Question, ...] = ()
    source: dict[str, Any] | None = None
    refused: tuple[str, ...] = ()


@cache
def formats() -> dict[str, ModuleType]:
    """Every format module of this package, by name."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "SUFFIXES") and hasattr(module, "load"):
            found[info.name] = module
    return dict(sorted(found.items()))


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(HEAD_BYTES)
    except OSError as exc:
        raise ChainError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def format_of(path: str) -> str | None:
    """The name of the format that reads ``path``, or None when no format claims it
    (a board file, say)."""
    p = Path(path)
    suffix = p.suffix.lower()
    candidates = [(name, m) for name, m in formats().items() if suffix in m.SUFFIXES]
    if not candidates:
        return None
    head = _head(p) if p.is_file() else b""
    for name, module in candidates:
        claims = getattr(module, "claims", None)
        if claims is None or claims(p, head):
            return name
    return None


def suffixes() -> list[str]:
    """Every suffix some format reads."""
    return sorted({s for m in formats().values() for s in m.SUFFIXES})


#: The keywords of :func:`load_chain` that name a file (kept absolute in ``source``).
FILE_KEYWORDS = ("properties",)


def load_chain(path: str, progress: Callable[[int, int, int], None] | None = None,
               **taken: Any) -> Loaded:
    """The chain in ``path`` by its format (see the module docstring); ``taken``:
    ``constants=``, ``properties=``, ... for the formats that take them (refused by the
    others, naming the formats that do). ``progress(states, transitions, levels)``
    follows a build that explores a model (PRISM, JANI: ``"progress"`` in the format's
    ``FOLLOWS``); a file that lists its chain is read without it."""
    p = Path(path)
    if not p.exists():
        raise ChainError(f"{path}: no such file")
    if not p.is_file():
        raise ChainError(f"{path}: is not a regular file; give a chain file")
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ChainError(f"{path}: {size:,} bytes is more than a chain file may hold "
                         f"({MAX_FILE_BYTES:,})")
    name = format_of(path)
    if name is None:
        raise ChainError(f"{path}: not a chain file of a known format; the formats read "
                         f"{', '.join(suffixes())}")
    module = formats()[name]
    given = {k: v for k, v in taken.items() if v is not None}
    for key in given:
        if key not in module.TAKES:
            takers = [n for n, m in formats().items() if key in m.TAKES]
            raise ChainError(f"{path}: --{key} is for {' and '.join(takers) or 'no'} files, not "
                             f"{module.DESCRIPTION}")
    follows = progress is not None and "progress" in getattr(module, "FOLLOWS", ())
    loaded = module.load(str(p), **given, **({"progress": progress} if follows else {}))
    # a file the keywords name is kept as its absolute path: a run store is resumed
    # from any folder
    source = {"path": str(p.resolve()), "format": name,
              **{k: str(Path(v).resolve()) if k in FILE_KEYWORDS else str(v)
                 for k, v in given.items()}}
    return Loaded(loaded.chain, loaded.questions, source, loaded.refused)
