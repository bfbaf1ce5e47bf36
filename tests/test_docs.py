"""The API reference is generated from the docstrings and must match the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_api_page_is_the_one_the_code_gives() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_docs.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
