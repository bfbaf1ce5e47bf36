"""Hostile and careless input through the real CLI (subprocess): every failure is one
line on stderr with exit code 2, nothing hangs, special files are never replaced, and
a damaged store is refused with the way out or recovered without losing an answer."""

from __future__ import annotations

from ladders.checkpoints.batches import BatchState
from ladders.cluster.runs import open_store

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ladders.checkpoints.store import RunStore

LADDERS = [sys.executable, "-c", "from ladders.cluster.cli import main; main()"]


def ladders(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the CLI; it must finish within ``timeout`` seconds."""
    return subprocess.run([*LADDERS, *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


def refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, one line on stderr that contains ``words``, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- output paths
def test_a_fifo_is_refused_before_the_work_and_left_alone(tmp_path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # one line on stderr: refused before the "solving" line, not after the solve
    refused(ladders("solve", "hasbro", "--table", str(fifo), "--json"), "FIFO")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    refused(ladders("plot", "board", "tiny10", "-o", str(tmp_path / "x" / "b.png")), "does not exist")


# ---------------------------------------------------------------- absurd sizes
@pytest.mark.parametrize("text, words", [
    ("0\n100000000000000000000\n6\n", ["more than 18 digits"]),
    ("0\n" + "9" * 5000 + "\n6\n", ["more than 18 digits"]),
    ("0\n10000000\n6\n", ["more than 100,000"]),
    ("0\n100\n10000000\n", ["more than 1,000 faces"]),
    ("0\n10\n6\n" + "x" * 100_000 + "\n", ["not an integer"]),
])
def test_absurd_boards_are_refused_at_once(tmp_path, text: str, words: list[str]) -> None:
    board = tmp_path / "b.txt"
    board.write_text(text)
    line = refused(ladders("show", str(board), timeout=20), *words)
    assert len(line) < 400  # an excerpt, never the whole line


def test_a_huge_board_file_is_refused_unread(tmp_path) -> None:
    board = tmp_path / "big.txt"
    board.write_text("0\n100\n6\n" + "5 50\n" * 2_000_000)
    refused(ladders("show", str(board), timeout=20), "more than a board file may hold")
    refused(ladders("show", "tiny10", "--die", "100000000", timeout=20), "1,000 faces")


# ---------------------------------------------------------------- small things
def test_a_missing_choice_is_one_line_like_every_other_error() -> None:
    refused(ladders("plot"), "Missing argument", "Choose from: board, lengths,", "ladders plot --help")


def test_small_things_people_hit(tmp_path) -> None:
    bom = tmp_path / "notepad.txt"
    bom.write_bytes(b"\xef\xbb\xbf0\n10\n6\n4 7\n")
    assert ladders("show", str(bom)).returncode == 0
    under = tmp_path / "under.txt"
    under.write_text("0\n1_0\n6\n")
    refused(ladders("show", str(under)), ":2:", "'1_0'")
    nested = tmp_path / "nested.toml"
    nested.write_text("end = 10\n\n[extra]\nx = 1\n")
    refused(ladders("show", str(nested)), "nested.toml:3:", "unknown field 'extra'")
    refused(ladders("simulate", "tiny10", "-n", "10", "--seed", "-1"), "--seed")
    (tmp_path / "tiny10").write_text("0\n12\n6\n")
    refused(ladders("show", "tiny10", cwd=tmp_path), "both a preset and a file", "./tiny10")
    assert "12" in ladders("show", "./tiny10", cwd=tmp_path).stdout
    evil = tmp_path / "evil.toml"
    evil.write_text('name = "a\\u001b[2Jb"\nend = 10\n')
    proc = ladders("show", str(evil), "--json")
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and json.loads(proc.stdout)["name"] == "a?[2Jb"


# ---------------------------------------------------------------- stores
def solved_store(tmp_path: Path) -> Path:
    store = tmp_path / "run"
    proc = ladders("solve", "tiny10", "--engine", "crt", "--executor", "serial", "--batch-primes", "1",
                   "--checkpoint", str(store), "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    return store


def test_garbage_or_foreign_locks_have_a_way_out(tmp_path) -> None:
    store = solved_store(tmp_path)
    (store / "COMPLETE.json").unlink()
    lock = store / "LOCK"
    lock.write_text("")  # fresh: a driver may be writing it; message and status agree
    refused(ladders("resume", str(store)), "not written yet", "try again in", "after 10 s")
    status = json.loads(ladders("status", str(store), "--json").stdout)
    assert status["state"].startswith("starting") and "after 10 s" in status["state"]
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    status = json.loads(ladders("status", str(store), "--json").stdout)
    assert status["state"] == "interrupted (an unreadable LOCK, which the next resume takes over)"
    assert ladders("resume", str(store)).returncode == 0  # an old garbage lock is taken over
    (store / "COMPLETE.json").unlink()
    lock.write_text(json.dumps({"pid": 1, "host": socket.gethostname() + "-elsewhere", "since": 0}))
    refused(ladders("resume", str(store)), "locked", "elsewhere", f"delete {lock}")
    lock.unlink()
    assert ladders("resume", str(store)).returncode == 0


@pytest.mark.parametrize("name, content", [
    ("run.json", "[1, 2]"), ("manifest/CURRENT", "7"), ("COMPLETE.json", '{"seats": 3}'),
    ("run.json", "{"),
])
def test_store_files_of_the_wrong_shape_are_named(tmp_path, name: str, content: str) -> None:
    store = solved_store(tmp_path)
    (store / name).write_text(content)
    if name == "manifest/CURRENT":  # a hint: the newest manifest is read, the store is whole
        status = ladders("status", str(store), "--json")
        assert status.returncode == 0 and json.loads(status.stdout)["state"] == "complete"
        return
    # verify needs only run.json and COMPLETE.json of a finished crt run
    for command in ("status", "verify"):
        proc = ladders(command, str(store))
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "internal error" not in proc.stderr
        # and the way out (the state machine found plan.json "unreadable", no more)
        assert "start a new run" in proc.stderr or "ladders resume" in proc.stderr, proc.stderr


def test_a_changed_digit_in_the_stored_answer_is_caught_and_rebuilt(tmp_path) -> None:
    """The state machine flipped COMPLETE.json's first byte: "unreadable", no way out. A
    changed digit of a seat parsed as another fraction, which status printed."""
    store = solved_store(tmp_path)
    path = store / "COMPLETE.json"
    data = json.loads(path.read_text())
    seat = data["seats"][0]
    digit = next(i for i, c in enumerate(seat) if c.isdigit() and c != "9")
    data["seats"][0] = seat[:digit] + str(int(seat[digit]) + 1) + seat[digit + 1:]
    path.write_text(json.dumps(data))
    for command in ("status", "verify", "resume"):
        refused(ladders(command, str(store)), "damaged", "delete it", f"ladders resume {store}")
    path.write_text("{" + json.dumps(data)[1:-1] + "x")
    refused(ladders("status", str(store)), "damaged, unreadable", "delete it")
    path.unlink()
    rebuilt = ladders("resume", str(store), "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr[-2000:]
    assert json.loads(rebuilt.stdout)["seats"][0]["exact"] == seat
    assert json.loads(path.read_text())["seats"][0] == seat


def test_a_manifest_of_the_wrong_shape_is_named(tmp_path) -> None:
    # named, and passed over for the one before it (tests/checkpoints/test_store_recovery.py)
    store = solved_store(tmp_path)
    (store / "COMPLETE.json").unlink()
    current = int((store / "manifest" / "CURRENT").read_text())
    key = f"manifest/{current:06d}.json"
    (store / key).write_text('{"seq": "x"}')
    status = json.loads(ladders("status", str(store), "--json").stdout)
    assert f"{key} is not a manifest of this store format" in status["lost"]
    assert status["state"].startswith("interrupted (") and status["manifest"] == current - 1
    (store / key).write_text('{"seq": ')
    status = json.loads(ladders("status", str(store), "--json").stdout)
    assert f"{key} is unreadable" in status["lost"] and status["manifest"] == current - 1


def test_current_set_back_rolls_forward_and_loses_nothing(tmp_path) -> None:
    store = tmp_path / "run"
    args = ["solve", "tiny10", "--players", "3", "--engine", "crt", "--executor", "serial", "--batch-primes", "1",
            "--checkpoint", str(store), "--seed", "5", "--json"]
    first = json.loads(subprocess.run([*LADDERS, *args], capture_output=True, text=True,
                                      check=True).stdout)
    (store / "COMPLETE.json").unlink()
    current = int((store / "manifest" / "CURRENT").read_text())
    (store / "manifest" / "CURRENT").write_text(str(current - 1))
    open_store(store).acquire_lock()  # what resume does first
    assert int((store / "manifest" / "CURRENT").read_text()) == current
    (store / "LOCK").unlink()
    proc = ladders("resume", str(store), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seats"] == first["seats"]


def test_a_failed_create_leaves_no_half_store(tmp_path) -> None:
    target = tmp_path / "file-not-folder"
    target.write_text("x")
    refused(ladders("solve", "tiny10", "--engine", "crt", "--checkpoint", str(target)), "is a file")
    store = tmp_path / "run"
    store.mkdir()
    with pytest.raises(ZeroDivisionError):
        RunStore.create(str(store), {"problem": {}}, BatchState, lambda _: 1 // 0)
    assert list(store.iterdir()) == []  # as it was: the same command can run again


# ---------------------------------------------------------------- out of reach
def test_a_solve_its_plan_calls_out_of_reach_is_refused_at_once() -> None:
    # one line on stderr: refused before the "solving" line, so before building the system
    refused(ladders("solve", "hasbro", "-k", "4", "--engine", "modular", timeout=60),
            "out of reach of the modular engine", "GB, more than the 20 GB of one machine",
            "--engine series", "--force")
    refused(ladders("solve", "hasbro", "-k", "4", "--engine", "crt", "--json"),
            "out of reach of the crt engine", "GB", "--engine series")
    # six players: the driver would reconstruct fractions of 10 billion bits in one
    # process, from the cost model alone
    refused(ladders("solve", "hasbro", "-k", "6", "--checkpoint", "never-made"),
            "out of reach of the series engine", "needs about", "driver's reconstruction", "GB",
            "more than the 20 GB of one machine", "--force")
    assert not Path("never-made").exists()


def test_a_long_series_run_states_the_plan_before_it_starts() -> None:
    from ladders.cluster.engines import get_engine
    from ladders.solver.games.board import preset_board
    from ladders.solver.problem import Problem
    series = get_engine("series")
    five = Problem.build(preset_board("hasbro"), 5)
    said = series.forecast(five, 2)
    assert said is not None and "primes at about" in said and "days on 2 workers" in said
    assert "workers bring it to about a day" in said
    assert "core-hours" in series.forecast(five, None)  # a remote cluster: workers unknown
    assert series.out_of_reach(five) is None  # a cluster finishes it: not refused
    assert series.forecast(Problem.build(preset_board("hasbro"), 3), 2) is None  # minutes
    assert "--force" in ladders("solve", "--help").stdout


# ---------------------------------------------------------------- stops
def hasbro_cut(tmp_path: Path, end: int) -> Path:
    """hasbro cut after square ``end`` as a board file (jumps beyond dropped)."""
    from ladders.solver.games.board import preset_board
    jumps = [(a, b) for a, b in preset_board("hasbro").jumps if a < end and b <= end]
    path = tmp_path / f"hasbro{end}.txt"
    path.write_text(f"0\n{end}\n6\n" + "".join(f"{a} {b}\n" for a, b in jumps))
    return path


def stop_modular_while_factoring(board: Path, store: Path) -> None:
    """Start a modular solve of ``board`` with 3 players into ``store`` and SIGTERM it
    2 s after it says what it solves: during the factorization (about 9 s on hasbro
    cut at 49, 100 s at 63). It must stop, exit 75 and leave a resumable store; the
    wait for it is a hang guard of 60 s, not a clock assertion (on hasbro cut at 63 a
    stop that waited for the factorization to end would exceed it).

    The signal comes as ``timeout``, scancel and Kubernetes send it: to the process,
    then to its whole group. The second one, while the driver was stopping, ended it
    with the LOCK held (exit -15)."""
    from ladders.cluster.errors import EXIT_INTERRUPTED
    proc = subprocess.Popen([*LADDERS, "solve", str(board), "-k", "3", "--engine", "modular",
                             "--checkpoint", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # printed once the system is built, before the factorization
    assert "modular engine" in first, first
    time.sleep(2)
    proc.send_signal(15)
    said = proc.stderr.readline()
    while said and "ladders: stopping" not in said:  # progress lines first
        said = proc.stderr.readline()
    assert said, "the driver never said it was stopping"
    os.killpg(proc.pid, 15)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_INTERRUPTED, err[-1000:]
    assert not (store / "LOCK").exists()
    assert f"ladders resume {store}" in err and "Traceback" not in err
    status = json.loads(ladders("status", str(store), "--json").stdout)
    assert status["state"] == "interrupted" and status["steps"] == 0


@pytest.mark.slow  # 11 s
def test_sigterm_during_the_modular_factorization_stops_it(tmp_path) -> None:
    stop_modular_while_factoring(hasbro_cut(tmp_path, 63), tmp_path / "run")


@pytest.mark.slow
def test_a_solve_stopped_while_factoring_resumes_to_the_same_fraction(tmp_path) -> None:
    board, store = hasbro_cut(tmp_path, 49), tmp_path / "run"
    stop_modular_while_factoring(board, store)
    resumed = ladders("resume", str(store), "--json", timeout=1800)  # about 5 min
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    series = ladders("solve", str(board), "-k", "3", "--json", timeout=600)
    assert [s["exact"] for s in json.loads(resumed.stdout)["seats"]] == \
        [s["exact"] for s in json.loads(series.stdout)["seats"]]


# ---------------------------------------------------------------- long work
@pytest.mark.parametrize("args, words", [
    (["bounds", "hasbro", "--moves", "1000000000"], ["--moves 1,000,000,000", "100,000 digits", "at most 64,254 moves"]),
    (["bounds", "hasbro", "--digits", "100000"], ["--digits 100,000", "at most 2,2"]),
    (["bounds", "tiny10", "--die", "1000", "--digits", "30"], ["--digits 30", "digits on this board"]),
    (["coins", "--a", "10000000000", "--b", "10", "--json"], ["limit is 40", "use fewer coins"]),
    (["coins", "--cycles", "1000000"], ["--cycles"]),
])
def test_absurd_amounts_of_work_are_refused_at_once(args: list[str], words: list[str]) -> None:
    refused(ladders(*args, timeout=20), *words)


def test_reported_seconds_are_the_wall_time_and_the_checks_are_bounded(tmp_path) -> None:
    # 100 squares, no jumps, a 1,000-faced die: 16 digits of bounds need far more moves
    # than the 5 s budget walks (tiny10 with --die 1000 was such a board until the walk
    # went on by its recurrence: now 16 digits in 3 s)
    board = tmp_path / "slow.toml"
    board.write_text('name = "slow"\nstart = 0\nend = 100\ndie = 1000\nrule = "stay"\njumps = []\n')
    t0 = time.monotonic()
    proc = ladders("solve", str(board), "--json", timeout=60)
    wall = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    bounds = data["verified"]["bounds"]
    assert data["seconds"] > 0.5 * (wall - 3)  # 3 s: start-up and imports
    assert bounds["passed"] and bounds["digits"] < bounds["digits_asked"] == 16
    assert f"{bounds['moves']:,} moves" in bounds["stopped"]
    # a board whose bounds converge fast gets its 16 digits as before
    assert json.loads(ladders("solve", "tiny10", "--json").stdout)["verified"]["bounds"]["digits"] == 16


def test_many_coins_are_solved_in_seconds() -> None:
    proc = ladders("coins", "--a", "10", "--b", "10", "--json", timeout=300)  # hours before
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["by_start"]["A10B10"] == data["expected_cycles"]


# ---------------------------------------------------------------- resources
def with_peak_memory(*args: str) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``ladders ARGS`` (it must succeed) and its peak memory in KB.

    The peak is VmHWM, the child's own: Linux folds the parent's peak into a child's
    ru_maxrss when it execs after vfork, so ru_maxrss here reported pytest's ~600 MB
    (cli.main, not the console entry point main(): that one leaves by os._exit)."""
    script = (f"import sys; from ladders.cluster.cli import cli; sys.argv = {['ladders', *args]!r}\n"
              "try:\n    cli.main()\nfinally:\n"
              "    print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0], file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc, int(proc.stderr.split()[-1])


def test_simulate_refuses_absurd_counts_and_runs_big_ones_in_chunks() -> None:
    refused(ladders("simulate", "hasbro", "--games", "1000000000000", timeout=20), "limit is 1,000,000,000")
    refused(ladders("simulate", "hasbro", "-k", "6", "--games", "200000000", timeout=20), "1,200,000,000")
    proc, peak = with_peak_memory("simulate", "hasbro", "--games", "3000000", "--json")
    assert peak < 140_000  # KB: about 100 MB; 180 MB at once before, growing with --games
    assert json.loads(proc.stdout)["games"] == 3_000_000


def test_absurd_cluster_sizes_are_refused_before_any_work() -> None:
    """``--workers 10^9`` started spawning worker processes until the machine ran out of
    memory; ``--batch-primes 10^11`` built a list of primes for minutes, then failed
    with "x must be >= 3"; ``verify --primes 10^6`` would solve a million times."""
    limit = 4 * (os.cpu_count() or 1)
    refused(ladders("solve", "tiny10", "-k", "3", "--engine", "crt", "--workers", "1000000000"),
            "--workers 1,000,000,000", f"at most {limit} worker processes", "--scheduler")
    refused(ladders("solve", "tiny10", "-k", "3", "--engine", "crt", "--batch-primes", "10" + "0" * 10),
            "--batch-primes", "1<=x<=65536")
    refused(ladders("verify", "/nonexistent/run", "--primes", "1000000"), "--primes", "1<=x<=64")


def test_a_killed_run_without_checkpoint_leaves_nothing_for_long(tmp_path) -> None:
    # SIGKILL runs no cleanup: the temporary store stays behind until the next run
    # without --checkpoint clears the folders of drivers that are gone
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([*LADDERS, "solve", "hasbro", "-k", "3", "--executor", "serial"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            left = list(tmp_path.glob(f"ladders-run-{proc.pid}-*/run/manifest"))
            if left:
                break
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    assert left, "the run never created its temporary store"
    alive = tmp_path / f"ladders-run-{os.getpid()}-mine"  # a running driver's: kept
    alive.mkdir()
    out = subprocess.run([*LADDERS, "solve", "tiny10", "-k", "3", "--executor", "serial"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [alive.name]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a full disk)")
def test_a_full_disk_names_the_file_and_keeps_the_answer(tmp_path) -> None:
    # writes to /dev/full fail with ENOSPC: the message named no file, and the answer
    # of the whole solve was lost with it
    store = tmp_path / "run"
    proc = ladders("solve", "tiny10", "-k", "3", "--checkpoint", str(store), "--json",
                   "--output", "/dev/full")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "ladders: error: cannot write /dev/full (No space left on device); the answer is "
        f"verified and it is kept in {store}: write it again with 'ladders resume {store} "
        "--output /dev/full'")
    seats = [s["exact"] for s in json.loads(proc.stdout)["seats"]]
    again = ladders("resume", str(store), "--output", str(tmp_path / "h.json"))
    assert again.returncode == 0, again.stderr
    assert [s["exact"] for s in json.loads((tmp_path / "h.json").read_text())["seats"]] == seats
    bare = ladders("solve", "tiny10", "-k", "3", "--json", "--output", "/dev/full")
    assert bare.returncode == 1 and "every digit is printed above" in bare.stderr
    assert [s["exact"] for s in json.loads(bare.stdout)["seats"]] == seats


def _read_only_namespace() -> list[str] | None:
    """A command prefix that runs in a mount namespace where the project's folder and
    the home are read-only (as in a read-only container), or None where this machine
    cannot make one (not root, no unshare)."""
    import shutil
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return None
    root = Path(__file__).resolve().parent.parent
    setup = (f"mount --bind {root} {root} && mount -o remount,bind,ro {root} && "
             "mount -t tmpfs -o ro tmpfs /mnt && exec env HOME=/mnt/home \"$@\"")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", setup, "sh", "true"], capture_output=True)
    return ["unshare", "-m", "sh", "-c", setup, "sh"] if probe.returncode == 0 else None


@pytest.mark.slow  # numba compiles every kernel into the new folder: about 50 s
def test_no_home_and_a_read_only_install_still_compile(tmp_path) -> None:
    # numba found no cache folder it could write: "cannot cache function 'redc': no
    # locator available", an internal error; and a fresh cache compiles, which is said
    prefix = _read_only_namespace()
    if prefix is None:
        pytest.skip("needs root and unshare to make the install read-only")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.run([*prefix, *LADDERS, "solve", "tiny10", "-k", "3", "--json"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["verified"]["passed"]
    (cache,) = tmp_path.glob("ladders-numba-*")
    assert cache.stat().st_mode & 0o777 == 0o700 and any(cache.iterdir())
    # the compile was said (issue 27 item 4: 79 s of silence), and only the first time
    assert "compiling the series kernels first (once" in proc.stderr
    again = subprocess.run([*prefix, *LADDERS, "solve", "tiny10", "-k", "3"],
                           capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr


def test_a_plain_script_gets_one_line_that_shows_the_guard(tmp_path) -> None:
    # spawned workers import the script again: unguarded, it ran three times and ended
    # in pages of "Nanny failed to start"
    call = ('ladders.solve("tiny10", players=3, executor="dask", '
            'spec=ladders.ClusterSpec(workers=1)).passed')
    (tmp_path / "plain.py").write_text(f"import ladders\nprint({call})\n")
    (tmp_path / "guarded.py").write_text(
        f"import ladders\n\nif __name__ == '__main__':\n    print({call})\n")
    plain = subprocess.run([sys.executable, "plain.py"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    assert plain.returncode == 1 and plain.stdout == "" and "Nanny" not in plain.stderr
    assert plain.stderr.strip().splitlines()[-1] == (
        f"ValueError: {tmp_path / 'plain.py'}:2: a local Dask cluster's workers import this "
        "script again and would run this call too: put it under 'if __name__ == \"__main__\":' "
        "(or solve with executor='serial')")
    guarded = subprocess.run([sys.executable, "guarded.py"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300)
    assert guarded.returncode == 0 and guarded.stdout == "True\n", guarded.stderr[-2000:]


@pytest.mark.parametrize("call", [
    lambda ladders: ladders.bounds("tiny10", moves=10 ** 9),
    lambda ladders: ladders.bounds("tiny10", digits=10 ** 6),
    lambda ladders: ladders.bounds("tiny10", moves=2.5),
    lambda ladders: ladders.solve("tiny10", players=2.0),
    lambda ladders: ladders.solve("tiny10", players="3"),
])
def test_the_api_refuses_what_the_command_line_refuses(call) -> None:
    # issue 27 item 15: these ran for minutes or raised bare TypeErrors; one ValueError
    # each, from the checks the command line uses, before any work
    import ladders
    with pytest.raises(ValueError):
        call(ladders)
