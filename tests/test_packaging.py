"""Every package of the source tree is listed in pyproject.toml and importable from the
installed ``ladders`` (a package missing from the wheel only shows on a fresh machine,
where the code is not imported from the checkout)."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


def test_every_package_is_in_the_wheel() -> None:
    listed = set(tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"ladders"} | {"ladders." + ".".join(p.parent.relative_to(CHECKOUT).parts)
                           for layer in ("solver", "checkpoints", "cluster")
                           for p in (CHECKOUT / layer).rglob("__init__.py")}
    assert found == listed
    for name in sorted(found):
        importlib.import_module(name)  # from the installed copy
