"""Write docs/api.md, the reference of the Python API, from the docstrings.

The page lists what ``import ladders`` offers (``ladders.__all__``): each function's
signature and docstring, and each class's fields (with their types) and docstring,
properties included. It is generated, never edited by hand: ``tests/test_docs.py`` runs
this script with ``--check`` and fails when the page and the code differ, so the page
cannot rot.

Run: ``python scripts/api_docs.py`` (writes the page) or ``--check``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"

HEADER = """# The Python API

Generated from the docstrings by `scripts/api_docs.py` (a test checks that this page
and the code agree). Everything below is importable from `ladders`; exact numbers are
gmpy2's `mpq` and `mpz` (`float(x)` gives a float, `str(x)` the exact digits: Python
refuses `str()` of an `int` over 4,300 digits unless `sys.set_int_max_str_digits` is
raised, gmpy2 does not).

A solve of 3 or more players on the full board starts a local Dask cluster, whose
workers import the script again: a script keeps its solves under
`if __name__ == "__main__":` (a notebook needs nothing of the kind).

```python
import ladders

if __name__ == "__main__":
    out = ladders.solve("hasbro", players=3)             # a ladders.Solution
    print(out.passed, out.verified["bounds"]["passed"])  # every check, and one of them
    print([float(p) for p in out.seats])                 # the exact mpq seats, as floats
    print(float(ladders.stats("hasbro").expected_length))  # L, an exact mpq, as a float
```

On a cluster of your own (its scheduler's address; a store that every worker reaches,
see the guide's "Running on a cluster"):

```python
import ladders

spec = ladders.ClusterSpec(scheduler="tcp://10.0.0.5:8786")
ladders.solve("hasbro", players=4, spec=spec, checkpoint="s3://bucket/h4")
```
"""


#: What the functions return, beyond ``ladders.__all__``: (name, module).
RETURNED = [("Bounds", "ladders.solver.checks.bounds"),
            ("OnePlayerStats", "ladders.solver.games.chain")]


def _doc(obj: object) -> str:
    return inspect.cleandoc(obj.__doc__ or "(no docstring)")


def _line(obj: object) -> str:
    """A docstring on one line, for a list item."""
    return " ".join(_doc(obj).split())


def _function(name: str, func: object) -> list[str]:
    return [f"## `ladders.{name}{inspect.signature(func)}`", "", _doc(func), ""]


def _class(name: str, cls: type, where: str = "ladders") -> list[str]:
    lines = [f"## `{where}.{name}`", "", _doc(cls), ""]
    if dataclasses.is_dataclass(cls):
        lines += ["| field | type | default |", "|---|---|---|"]
        for f in dataclasses.fields(cls):
            default = ("" if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                       else repr(f.default) if f.default is not dataclasses.MISSING else "(a new one)")
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            lines.append(f"| `{f.name}` | `{kind}` | {f'`{default}`' if default else ''} |")
        lines.append("")
    for attr, value in sorted(vars(cls).items()):
        if attr.startswith("_"):
            continue
        if isinstance(value, property):
            lines += [f"- `.{attr}` (property): {_line(value.fget)}"]
        elif inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)):
            func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
            lines += [f"- `.{attr}{inspect.signature(func)}`: {_line(func)}"]
    if lines[-1] != "":
        lines.append("")
    return lines


def page() -> str:
    """The page's text, from the installed ``ladders``."""
    import ladders
    lines = [HEADER]
    for name in ladders.__all__:
        obj = getattr(ladders, name)
        lines += _class(name, obj) if inspect.isclass(obj) else _function(name, obj)
    lines += ["# Returned types", ""]
    for name, module in RETURNED:
        lines += _class(name, getattr(importlib.import_module(module), name), module)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with docs/api.md instead of writing it (exit 1 if they differ)")
    args = parser.parse_args()
    text = page()
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is out of date: run python scripts/api_docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
