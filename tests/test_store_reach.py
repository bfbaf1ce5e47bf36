"""Reaching a run store on object storage (issue 40): URLs that name no one place, the
lease's length, a missing bucket, refused credentials, missing settings, a store that
does not answer, and a full disk under a local store. Every refusal is one line, before
any request where it can be; nothing leaves 127.0.0.1: the commands run with a
recording proxy in ``HTTP_PROXY``/``HTTPS_PROXY`` (obstore sends every request but
those to 127.0.0.1 through it), and each test asserts that it saw no request. The S3
server is moto's, on 127.0.0.1 (see tests/test_object_store.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("obstore")
moto_server = pytest.importorskip("moto.server")

from test_object_store import LADDERS, new_store  # noqa: E402

from ladders.checkpoints.backend import lease_seconds  # noqa: E402
from ladders.checkpoints.errors import StoreError  # noqa: E402


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("value", ["inf", "0", "-5", "nan", "abc", "0.001"])
def test_a_lease_length_that_is_no_length_is_refused(value: str, tmp_path: Path) -> None:
    # inf: a traceback; 0, -5, nan: the lease renewed without pause; abc: an error
    # that did not name the variable
    store = tmp_path / "run"
    new_store(str(store))
    proc = subprocess.run([*LADDERS, "status", str(store)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "LADDERS_LEASE_SECONDS": value})
    line = one_line(proc)
    assert proc.returncode == 2 and f"LADDERS_LEASE_SECONDS='{value}'" in line
    assert "from 1 to 86400" in line


def test_lease_seconds_reads_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LADDERS_LEASE_SECONDS", raising=False)
    assert lease_seconds() == 60.0
    monkeypatch.setenv("LADDERS_LEASE_SECONDS", " 2.5 ")
    assert lease_seconds() == 2.5
    monkeypatch.setenv("LADDERS_LEASE_SECONDS", "1e9")
    with pytest.raises(StoreError, match="LADDERS_LEASE_SECONDS='1e9'"):
        lease_seconds()
