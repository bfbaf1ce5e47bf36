"""The files a solve writes beside its run store (:mod:`ladders.checkpoints.outputs`):
an ``--output`` URL with a fragment is refused at once; a ``--table`` written to a
character device is written through, and one to a symlink writes its target."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from ladders.cluster.cli import cli
from test_hostile import ladders


def test_an_output_url_with_a_fragment_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["solve", "tiny10", "--output", "s3://ladders-test/h.json#x"])
    assert result.exit_code == 2 and "'#' cannot be part" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_character_device_is_written_through_not_replaced(tmp_path) -> None:
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # our own /dev/null
    except PermissionError:
        pytest.skip("making a device node needs root")
    proc = ladders("solve", "tiny10", "--table", str(null))
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(null.stat().st_mode)


def test_a_symlink_stays_a_symlink_and_its_target_is_written(tmp_path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert ladders("solve", "tiny10", "--table", str(link)).returncode == 0
    assert link.is_symlink()
    assert json.loads(target.read_text().splitlines()[0])["exact"]
