"""Stores that can be saved are saved: an interrupted 3-player series run whose newest
manifest, its page, CURRENT or every manifest was damaged or deleted, in a folder and on
S3 (moto in server mode on 127.0.0.1), with the older manifests and every segment
intact. ``status`` says in one line what was lost and what a resume does about it;
``resume`` continues from the newest intact manifest (or, with no manifest left, from
the whole segments), computes again only the batches that were lost, says so in one
line, and ends with the same fractions as an undamaged run (``==``)."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from examples import EXAMPLES
from ladders.checkpoints.backend import Backend, open_backend
from ladders.checkpoints.errors import SegmentError
from ladders.checkpoints.segments import read_segment
from ladders.cluster.cli import cli
from ladders.cluster.runs import open_store, solve
from ladders.solver.problem import Problem
from test_backend import BUCKET, reference, s3  # noqa: F401  (s3: moto on 127.0.0.1)

#: Batches the interrupted run commits (one prime each) before it is stopped.
STOP_AFTER = 6


def newest_page(backend: Backend, seq: int) -> str:
    """The page of manifest ``seq`` that no older manifest shares (its last)."""
    number, digest = json.loads(backend.read(f"manifest/{seq:06d}.json"))["state"]["pages"]["refs"][-1]
    return f"manifest/pages/{number:06d}-{digest[:16]}.json"


def flip_byte(backend: Backend, key: str) -> None:
    raw = bytearray(backend.read(key))
    raw[len(raw) // 2] ^= 0x01
    backend.replace(key, bytes(raw))


#: The damage table: what each row does to the store (given its newest manifest's
#: number), and whether the newest manifest's own work is lost with it.
DAMAGE: dict[str, tuple[Callable[[Backend, int], None], bool]] = {
    "newest manifest deleted": (lambda b, n: b.delete(f"manifest/{n:06d}.json"), True),
    "newest manifest garbage": (lambda b, n: b.replace(f"manifest/{n:06d}.json", b"{garbage"), True),
    "its page deleted": (lambda b, n: b.delete(newest_page(b, n)), True),
    "a byte of its page changed": (lambda b, n: flip_byte(b, newest_page(b, n)), True),
    "CURRENT deleted": (lambda b, n: b.delete("manifest/CURRENT"), False),
    "CURRENT garbage": (lambda b, n: b.replace("manifest/CURRENT", b"\x00\xff?"), False),
    "every manifest deleted": (lambda b, n: b.delete_prefix("manifest"), False),
}


class Place:
    """Where the stores of one backend go: a folder, or a prefix of the moto bucket."""

    def __init__(self, kind: str, tmp: Path) -> None:
        self.kind, self.tmp = kind, tmp

    def new(self, name: str) -> str:
        if self.kind == "folder":
            return str(self.tmp / f"{name}-{random.randrange(1 << 32):08x}")
        return f"s3://{BUCKET}/{name}-{random.randrange(1 << 32):08x}"

    def copy(self, origin: str, name: str) -> str:
        """A copy of the store ``origin``, object by object."""
        where = self.new(name)
        if self.kind == "folder":
            shutil.copytree(origin, where)
            return where
        source, target = open_backend(origin), open_backend(where)
        for key in source.list():
            target.replace(key, source.read(key))
        return where


def interrupted(place: Place) -> tuple[str, int, int, int]:
    """A series run of tiny10 with 3 players stopped after :data:`STOP_AFTER` batches:
    its store, its newest manifest's number, and the batches that manifest and the one
    before it list."""
    calls: list[tuple] = []
    where = place.new("origin")
    solution = solve(Problem.build(EXAMPLES["tiny10-3"].board, 3), "series", checkpoint=where,
                     executor="serial", batch_primes=1, seed=3,
                     progress=lambda *args: calls.append(args),
                     should_stop=lambda: len(calls) >= STOP_AFTER)
    assert solution.interrupted
    store = open_store(where)
    newest = store.current()
    before = store._read_manifest(newest.seq - 1)
    assert len(newest.state.batches) == len(before.state.batches) + 1  # one batch a commit
    return where, newest.seq, len(newest.state.batches), len(before.state.batches)


def ladders(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module", params=["folder", "s3"])
def origin(request, tmp_path_factory: pytest.TempPathFactory):
    """One interrupted store per backend, and the batches a resume of an undamaged copy
    runs: what every damaged copy is compared with."""
    if request.param == "s3":
        request.getfixturevalue("s3")
    place = Place(request.param, tmp_path_factory.mktemp(f"recovery-{request.param}"))
    where, seq, newest, before = interrupted(place)
    undamaged = ladders("resume", place.copy(where, "undamaged"), "--json")
    assert undamaged.exit_code == 0, undamaged.output
    data = json.loads(undamaged.stdout)
    assert [s["exact"] for s in data["seats"]] == reference()
    assert undamaged.stderr.startswith("resuming ") and undamaged.stderr.count("\n") == 1  # no loss
    return place, where, seq, newest, before, newest + data["store"]["tasks_run"]


@pytest.fixture(scope="module")
def complete(origin) -> tuple[Place, str]:
    """The undamaged copy of :func:`origin`'s store, resumed to the end."""
    place, where = origin[0], origin[1]
    done = place.copy(where, "complete")
    assert ladders("resume", done).exit_code == 0
    return place, done


@pytest.mark.parametrize("row", sorted(DAMAGE))
def test_a_damaged_store_resumes_from_what_is_left(origin, row: str) -> None:
    place, where, seq, newest, before, total = origin
    damage, loses_newest = DAMAGE[row]
    store = place.copy(where, row.replace(" ", "-"))
    damage(open_backend(store), seq)

    status = ladders("status", store, "--json")
    assert status.exit_code == 0, status.output
    lost = json.loads(status.stdout)["lost"]
    assert lost is not None and "\n" not in lost
    assert json.loads(status.stdout)["state"].startswith("interrupted (")
    assert json.loads(status.stdout)["batches_done"] == (before if loses_newest else newest)

    resumed = ladders("resume", store, "--json")
    assert resumed.exit_code == 0, resumed.output
    data = json.loads(resumed.stdout)
    assert [s["exact"] for s in data["seats"]] == reference()
    # only the batches the damage lost are computed again
    assert data["store"]["tasks_run"] == total - (before if loses_newest else newest)
    # what was lost (said as the LOCK is taken), then what it resumes from what is left
    said = resumed.stderr.strip().splitlines()
    assert len(said) == 2 and said[1].startswith("resuming tiny10, 3 players"), resumed.stderr
    assert said[0] == f"ladders: {store}: {lost}", resumed.stderr
    named = {"every": "no numbered manifest is left", "page": "manifest/pages/",
             "CURRENT": "manifest/CURRENT", "manifest": f"manifest/{seq:06d}.json"}
    assert next(v for k, v in named.items() if k in row) in lost
    again = ladders("status", store, "--json")  # the store is whole again
    assert json.loads(again.stdout)["state"] == "complete" and json.loads(again.stdout)["lost"] is None


def says_one_thing(store: str) -> list[str]:
    """What status, resume and verify say of ``store``: the state, or the refusal."""
    said = []
    for command in ("status", "resume", "verify"):
        result = ladders(command, store, "--json", *(["--no-cross"] if command == "verify" else []))
        said.append(json.loads(result.stdout).get("state", "verified" if command == "verify"
                                                  else "resumed")
                     if result.exit_code == 0 else result.stderr.strip())
    return said


def test_a_complete_store_without_manifests_is_complete_for_every_command(complete) -> None:
    place, done = complete
    store = place.copy(done, "no-manifests")
    open_backend(store).delete_prefix("manifest")
    status, resume, verify = says_one_thing(store)
    assert (status, resume, verify) == ("complete", "resumed", "verified")  # its stored answer


def elimination_store(tmp_path: Path, stop_after: int | None) -> str:
    """An elimination run of tiny10 with 2 players in a folder, stopped after
    ``stop_after`` tasks (None: to the end)."""
    calls: list[tuple] = []
    where = str(tmp_path / f"elimination-{stop_after}")
    solve(Problem.build(EXAMPLES["tiny10-3"].board, 2), "elimination", checkpoint=where,
          executor="serial", block_size=4, progress=lambda *args: calls.append(args),
          should_stop=lambda: stop_after is not None and len(calls) >= stop_after)
    return where


def test_an_elimination_store_without_manifests_says_one_thing(tmp_path: Path) -> None:
    # its segments mean nothing without a manifest: unfinished, every command says so in
    # the same line (and the refused resume leaves no LOCK); finished, it is complete
    unfinished = elimination_store(tmp_path, stop_after=3)
    shutil.rmtree(Path(unfinished) / "manifest")
    said = says_one_thing(unfinished)
    assert len(set(said)) == 1 and "\n" not in said[0], said
    assert "no numbered manifest is left" in said[0] and "start a new run" in said[0]
    assert not (Path(unfinished) / "LOCK").exists()
    finished = elimination_store(tmp_path, stop_after=None)
    answer = json.loads((Path(finished) / "COMPLETE.json").read_text())["seats"]
    # its newest manifest garbage, or deleted: the rows the manifest before it needs are
    # kept until that one is deleted too (before, they were deleted at once, and the run
    # could only start again), so the run goes on from there to the same answer
    for damage in ("garbage", "deleted"):
        hurt = elimination_store(tmp_path / damage, stop_after=4)
        seq = int((Path(hurt) / "manifest" / "CURRENT").read_text())
        newest = Path(hurt) / "manifest" / f"{seq:06d}.json"
        newest.write_text("{garbage") if damage == "garbage" else newest.unlink()
        status, resume, verify = says_one_thing(hurt)
        assert status.startswith("interrupted (") and f"manifest/{seq:06d}.json" in status, status
        assert f"continues from manifest/{seq - 1:06d}.json" in status, status
        assert (resume, verify) == ("resumed", "verified")
        assert json.loads((Path(hurt) / "COMPLETE.json").read_text())["seats"] == answer
    shutil.rmtree(Path(finished) / "manifest")
    status, resume, verify = says_one_thing(finished)
    assert (status, resume, verify) == ("complete", "resumed", "verified")


@pytest.mark.parametrize("damage", ["truncated", "deleted", "another token"])
def test_an_elimination_plan_lost_is_derived_again(tmp_path: Path, damage: str) -> None:
    """plan.json is made from the run's problem and options: where it is damaged,
    status says that the next resume makes it again, and resume does so (before, each
    command declared the store damaged beyond repair)."""
    finished = elimination_store(tmp_path, stop_after=None)
    answer = json.loads((Path(finished) / "COMPLETE.json").read_text())["seats"]
    hurt = elimination_store(tmp_path / damage.replace(" ", "-"), stop_after=4)
    plan = Path(hurt) / "plan.json"
    if damage == "truncated":
        plan.write_bytes(plan.read_bytes()[:40])
    elif damage == "deleted":
        plan.unlink()
    else:
        data = json.loads(plan.read_text())
        data["blocks"] = data["blocks"][1:]
        plan.write_text(json.dumps(data))
    status, resume, verify = says_one_thing(hurt)
    assert status.startswith(f"interrupted ({hurt}/plan.json "), status
    assert f"'ladders resume {hurt}' derives it again" in status
    assert (resume, verify) == ("resumed", "verified")
    assert json.loads((Path(hurt) / "COMPLETE.json").read_text())["seats"] == answer
    assert json.loads(plan.read_text())["token"] == json.loads((Path(hurt) / "run.json").read_text())["plan_token"]


def test_a_damaged_segment_of_initial_rows_is_written_again(tmp_path: Path) -> None:
    """A group's initial rows are the system's: where their segment is damaged, status
    says that resume writes it again, and resume does (before: 'the store is damaged
    and cannot be resumed')."""
    finished = elimination_store(tmp_path, stop_after=None)
    answer = json.loads((Path(finished) / "COMPLETE.json").read_text())["seats"]
    hurt = elimination_store(tmp_path / "hurt", stop_after=4)
    groups = open_store(hurt).current().state.groups
    j, ref = max((j, ref) for j, (version, ref) in groups.items() if version == -1)
    flip_byte(open_backend(hurt), f"{ref.path}/rows/0")
    status, resume, verify = says_one_thing(hurt)
    assert status.startswith(f"interrupted (1 segment of initial rows damaged (group {j}: "), status
    assert f"'ladders resume {hurt}' writes it again" in status
    assert (resume, verify) == ("resumed", "verified")
    assert json.loads((Path(hurt) / "COMPLETE.json").read_text())["seats"] == answer


@pytest.mark.parametrize("which", ["the newest", "one every manifest shares"])
def test_a_damaged_segment_a_task_wrote_sends_the_run_back(tmp_path: Path, which: str) -> None:
    """A task's rows hold work whose inputs were superseded: where their segment is
    damaged, the run goes back to the newest manifest whose rows read whole (the
    newest segment: the manifest before it) or, where every kept manifest shares the
    damaged one (F(0)), to the system's rows; status says which, resume does it in one
    line, and the answer is the undamaged run's (before: 'the store is damaged and
    cannot be resumed')."""
    finished = elimination_store(tmp_path, stop_after=None)
    answer = json.loads((Path(finished) / "COMPLETE.json").read_text())["seats"]
    hurt = elimination_store(tmp_path / "hurt", stop_after=4)
    manifest = open_store(hurt).current()
    written = {ref.path: ref for version, ref in manifest.state.groups.values() if version != -1}
    written.update((ref.path, ref) for ref in manifest.state.factored.values())
    ref = (manifest.state.factored[0] if which == "one every manifest shares"
           else max(written.values(), key=lambda r: (Path(hurt) / r.path).stat().st_mtime_ns))
    flip_byte(open_backend(hurt), f"{ref.path}/rows/0")
    back = ("the system's rows (no older manifest's rows read whole)" if which != "the newest"
            else f"manifest/{manifest.seq - 1:06d}.json, the newest whose rows read whole,")
    status = json.loads(ladders("status", hurt, "--json").stdout)["state"]
    assert status.startswith(f"interrupted (1 segment of rows damaged (segment {ref.path} cannot "
                             "be read (ValueError: Stored and computed checksum do not match"), status
    assert f"'ladders resume {hurt}' goes back to {back} and computes again the " in status
    result = ladders("resume", hurt)
    assert result.exit_code == 0, result.stderr
    assert f"this resume goes back to {back}" in result.stderr
    assert ladders("verify", hurt, "--no-cross").exit_code == 0
    assert json.loads((Path(hurt) / "COMPLETE.json").read_text())["seats"] == answer


def test_a_task_that_reads_a_damaged_segment_names_the_resume_that_repairs_it(tmp_path: Path) -> None:
    """A damaged segment found while a task reads it stops the run with one line that
    names the way out, the resume that goes back (before: 'delete the store')."""
    hurt = elimination_store(tmp_path, stop_after=4)
    ref = open_store(hurt).current().state.factored[0]
    backend = open_backend(hurt)
    flip_byte(backend, f"{ref.path}/rows/0")
    with pytest.raises(SegmentError) as caught:
        read_segment(backend, ref)
    assert str(caught.value).endswith(f"'ladders resume {hurt}' goes back to the newest manifest "
                                      "whose rows read whole and computes again what came after")
