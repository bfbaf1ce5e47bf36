"""How to install one of ladders' optional extras (``plot``, ``cloud``, ``prism``).

``pip install 'ladders[plot]'`` asks the package index for a project named ladders,
which is not this one: the command has to name this project where it came from. pip
records that in the installed distribution (``direct_url.json``, PEP 610): the
checkout of an editable or local install, the wheel file, the repository. Installed
any other way, the extra's own requirements (from the metadata) are what to install.
"""

from __future__ import annotations

import json
import re
import shlex
from urllib.parse import unquote, urlsplit


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra`` for the ladders that runs now."""
    from importlib.metadata import distributions
    # the one pip installed, not a build's ladders.egg-info in the current folder
    found = sorted(distributions(name="ladders"),
                   key=lambda d: d.read_text("direct_url.json") is None)
    if not found:  # run from a checkout that was never installed
        return f"pip install '.[{extra}]' from the ladders checkout"
    dist = found[0]
    try:
        origin = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        origin = {}
    url = origin.get("url", "") if isinstance(origin, dict) else ""
    if url.startswith("file://"):
        return "pip install " + shlex.quote(f"{unquote(urlsplit(url).path)}[{extra}]")
    vcs = origin.get("vcs_info", {}).get("vcs") if isinstance(origin, dict) else None
    if url and vcs:
        return "pip install " + shlex.quote(f"ladders[{extra}] @ {vcs}+{url}")
    marker = re.compile(r"""extra\s*==\s*["']%s["']""" % re.escape(extra))
    needs = [r.split(";")[0].strip() for r in dist.requires or () if marker.search(r)]
    return "pip install " + " ".join(shlex.quote(r) for r in needs)
