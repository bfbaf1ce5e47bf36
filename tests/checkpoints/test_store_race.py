"""Two drivers creating one new store at once, in a folder and on S3 (moto in server
mode on 127.0.0.1): one wins, the other is refused in one line, and the loser deletes
nothing: the winner's store is whole and solves to the exact answer afterwards.

The interleaving that lost the winner's store is forced with the real
:meth:`RunStore.create`: its ``initial`` step (what an engine writes before run.json)
waits until the other driver has reached it too or has given up, so that both have
passed the emptiness checks before either writes run.json."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from examples import EXAMPLES
from ladders.checkpoints.batches import BatchState
from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.store import RunStore
from ladders.cluster.cli import cli
from ladders.cluster.engines import SolveRequest, get_engine
from ladders.solver.problem import Problem
from test_backend import BUCKET, reference, s3  # noqa: F401  (s3: moto on 127.0.0.1)

RACES = 3


def series_run(tmp_path: Path) -> dict:
    """run.json of a series run of tiny10 with 3 players (made by the engine itself)."""
    ex = EXAMPLES["tiny10-3"]
    store = get_engine("series").create_store(str(tmp_path / "model"), Problem.build(ex.board, 3),
                                              SolveRequest(seed=3, options={"batch_primes": 2}),
                                              "serial")
    return {k: v for k, v in store.run.items() if k not in ("format", "created")}


def race(where: str, run: dict) -> list[BaseException | RunStore]:
    """Two drivers create ``where`` at once; what each got (its store, or its error)."""
    arrived: list[int] = []
    gone: list[int] = []
    turn = threading.Condition()
    results: list[BaseException | RunStore] = [None, None]  # type: ignore[list-item]

    def initial(me: int) -> Callable[[RunStore], BatchState]:
        def make(_: RunStore) -> BatchState:
            with turn:
                arrived.append(me)
                turn.notify_all()
                # both past the checks, or the other refused: go on (never a wall clock
                # in the outcome; the timeout only bounds a hang)
                turn.wait_for(lambda: len(arrived) == 2 or gone, timeout=60)
            return BatchState()
        return make

    def driver(me: int) -> None:
        try:
            results[me] = RunStore.create(where, run, BatchState, initial(me))
        except BaseException as exc:  # what the loser saw, whatever it is
            results[me] = exc
        finally:
            with turn:
                gone.append(me)
                turn.notify_all()

    threads = [threading.Thread(target=driver, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_one_winner(where: str, results: list[BaseException | RunStore]) -> None:
    stores = [r for r in results if isinstance(r, RunStore)]
    errors = [r for r in results if not isinstance(r, RunStore)]
    assert len(stores) == 1 and len(errors) == 1, results
    refusal = errors[0]
    assert isinstance(refusal, StoreError), repr(refusal)
    assert len(str(refusal).splitlines()) == 1 and "another solve" in str(refusal), str(refusal)
    again = RunStore.open(where, BatchState)  # the winner's store is whole
    assert again.run == stores[0].run and again.current().seq == 0
    assert again.locked_by() is None  # and free for its session to lock


@pytest.fixture
def places(request, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    if request.param == "folder":
        yield lambda name: str(tmp_path / name)
        return
    request.getfixturevalue("s3")
    yield lambda name: f"s3://{BUCKET}/{name}-{random.randrange(1 << 32):08x}"


@pytest.mark.parametrize("places", ["folder", "s3"], indirect=True)
def test_two_drivers_creating_one_store_leave_the_winners_store(places, tmp_path: Path) -> None:
    run = series_run(tmp_path)
    for n in range(RACES):
        where = places(f"race{n}")
        check_one_winner(where, race(where, run))
    # the last winner's store is a real run: it solves to the exact answer
    result = CliRunner().invoke(cli, ["resume", where, "--json"])
    assert result.exit_code == 0, result.output
    assert [s["exact"] for s in json.loads(result.stdout)["seats"]] == reference()
