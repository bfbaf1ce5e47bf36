"""The promises of the command line's output (issue 40): ``--json`` gives one JSON
document on stdout whatever happens, errors included; ``ladders resume`` of a finished
run prints its answer; the refusals and install hints name what works for this
project."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import ladders
from ladders.cluster.cli import cli
from ladders.cluster.errors import EXIT_BAD_INPUT

CHECKOUT = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("args, says", [
    (["solve", "no-such-board", "--json"], "no such preset or board file"),
    (["stats", "hasbro", "--json", "--no-such-option"], "No such option"),
    (["resume", "no-such-store", "--json"], "no-such-store"),
    (["solve", "hasbro", "--checkpoint", "runs/h", "--json"],
     "or choose --engine crt or elimination for a resumable 2-player run"),
])
def test_an_error_with_json_is_a_json_document_on_stdout(args: list[str], says: str) -> None:
    """A script piping ``--json`` to jq got an empty stdout on an error."""
    result = run(*args)
    assert result.exit_code == EXIT_BAD_INPUT
    document = json.loads(result.stdout)
    assert document == {"error": document["error"], "exit_code": EXIT_BAD_INPUT}
    assert says in document["error"] and "\n" not in document["error"]
    # stderr keeps the one line it had
    assert result.stderr == f"ladders: error: {document['error']}\n"


def test_without_json_an_error_leaves_stdout_empty() -> None:
    result = run("solve", "no-such-board")
    assert result.exit_code == EXIT_BAD_INPUT and result.stdout == ""


def test_a_finished_run_resumed_prints_its_answer(tmp_path: Path) -> None:
    """``ladders resume`` of a finished run printed "complete already" with exit 2, and
    ``ladders.resume`` raised; its stored answer is the answer, and the seconds are
    this call's, not the stored run's."""
    store = str(tmp_path / "run")
    solved = run("solve", "tiny10", "-k", "3", "--engine", "crt", "--executor", "serial",
                 "--checkpoint", store, "--json")
    assert solved.exit_code == 0, solved.output
    stored_seconds = json.loads((tmp_path / "run" / "COMPLETE.json").read_text())["seconds_total"]

    again = run("resume", store, "--json")
    assert again.exit_code == 0, again.output
    assert again.stderr.startswith(f"{store} is finished already (") and "its stored answer" in again.stderr
    data = json.loads(again.stdout)
    assert data["seats"] == json.loads(solved.stdout)["seats"]
    assert data["details"]["stored"]["seconds"] == stored_seconds
    assert data["seconds"] != round(stored_seconds, 3)  # what it printed before

    out = ladders.resume(store)
    assert [str(s) for s in out.seats] == [s["exact"] for s in data["seats"]]
    assert out.passed and out.tasks_run == 0 and not out.interrupted
    assert out.details["stored"]["seconds"] == stored_seconds != out.seconds


def test_the_cloud_extra_is_named_as_this_project_installs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyPI's "ladders" is another project: the hint installs this one's extra, from
    the checkout it was installed from."""
    monkeypatch.setitem(sys.modules, "obstore", None)  # makes `import obstore` fail
    monkeypatch.setitem(sys.modules, "obstore.store", None)
    result = run("solve", "tiny10", "-k", "3", "--checkpoint", "s3://bucket/run")
    assert result.exit_code == EXIT_BAD_INPUT
    assert result.stderr.strip().endswith(f"need obstore: pip install '{CHECKOUT}[cloud]'")
    # what pip is given is a path to the checkout, never PyPI's bare name (a checkout in
    # a folder named ladders ends in ".../ladders[cloud]", and that is right)
    given = result.stderr.strip().rpartition("pip install ")[2].strip("'\"")
    assert given != "ladders[cloud]" and Path(given.removesuffix("[cloud]")).is_absolute()


def test_a_wheel_install_is_named_by_its_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed from a wheel file, the hint names that file (pip's direct_url.json)."""
    from ladders.solver.extras import install_hint
    info = tmp_path / "site" / "ladders-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ladders\nVersion: 0.1.0\n"
                                   "Provides-Extra: plot\n"
                                   "Requires-Dist: matplotlib>=3.8; extra == \"plot\"\n")
    wheel = tmp_path / "my wheels" / "ladders-0.1.0-py3-none-any.whl"
    (info / "direct_url.json").write_text(json.dumps({"url": wheel.as_uri(), "archive_info": {}}))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert install_hint("plot") == f"pip install '{wheel}[plot]'"
