"""What the engines whose run is batches of primes (``crt``, ``series``) share.

Batch k holds primes ``k*B .. (k+1)*B - 1`` of the run's prime sequence (fixed by its
seed), so a batch means the same work in every session. After each batch the driver
commits a manifest that lists it (:class:`~ladders.checkpoints.batches.BatchState`),
folds its residues into the engine's own state, and then takes the named step
:meth:`BatchWork.conclude`: the engine tries to finish from what it holds (a
reconstruction, a certificate). The first conclusion that holds ends the run (batches
still in flight are cancelled). Resuming reads the committed batches back and goes on.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import click

from ladders.cluster.engines import Engine, Option, SolveRequest
from ladders.cluster.loops import Item, Task

if TYPE_CHECKING:
    from ladders.checkpoints.batches import BatchState
    from ladders.checkpoints.segments import SegmentRef
    from ladders.checkpoints.manifests import Manifest
    from ladders.checkpoints.store import RunStore
    from ladders.cluster.engines import Progress
    from ladders.solver.problem import Problem


#: Batches expected to take this many seconds or more are announced before the first
#: is done (:meth:`PrimeBatchEngine.open_work`).
NOTE_SECONDS = 1.0


def batch_option(default: str) -> Option:
    """``--batch-primes``, with this engine's ``default`` in its help."""
    return Option("batch_primes", "--batch-primes", click.IntRange(1, 65_536),
                  f"primes per task, at most 65,536 [default: {default}]")


class PrimeBatchEngine(Engine):
    """An engine whose run is batches of primes."""

    unit = ("batches", "batch")
    takes = frozenset({"checkpoint", "cluster", "executor", "seed", "table"})
    store_format = "ladders.checkpoints.batches:BatchState"
    #: the :class:`BatchWork` subclass of a run (an engine that makes its work otherwise
    #: overrides :meth:`open_work` instead)
    work_type: ClassVar[type[BatchWork]]


    def keeps_store(self, problem: Problem, request: SolveRequest, executor: str) -> bool:
        """Always: its batches are read back from the store, a temporary one without
        ``--checkpoint``."""
        return True

    @abc.abstractmethod
    def default_batch(self, problem: Problem) -> int:
        """Primes per batch when ``--batch-primes`` is not given."""

    def create_store(self, where: str, problem: Problem, request: SolveRequest,
                     executor: str) -> RunStore:
        from ladders.checkpoints.batches import BatchState
        from ladders.checkpoints.store import RunStore
        from ladders.cluster.session import fresh_seed, run_json
        seed = fresh_seed(request)
        batch = request.options.get("batch_primes") or self.default_batch(problem)
        digest = self.digest(problem)
        run = run_json(problem, self, request, executor, digest, seed=seed, batch_primes=batch,
                       token=f"{digest[:24]}-{seed}-{batch}", **self.run_fields(problem))
        return RunStore.create(where, run, BatchState, lambda store: self.first_state(store, problem))

    def first_state(self, store: RunStore, problem: Problem) -> BatchState:
        """The payload of manifest 0: no batch. An engine may first write what its
        batches read (its store is being created: run.json is not written yet)."""
        from ladders.checkpoints.batches import BatchState
        return BatchState()

    def run_fields(self, problem: Problem) -> dict[str, Any]:
        """What else the engine records in run.json."""
        return {}

    def open_work(self, store: RunStore | None, problem: Problem, request: SolveRequest,
                  progress: Progress | None, should_stop: Callable[[], bool]) -> BatchWork:
        """The run's batches on ``store``; where a batch takes long, the progress says at
        once what the run waits for (5 players: minutes before the first line)."""
        assert store is not None
        work = self.work_type(store)
        seconds = self.batch_seconds(problem, work.size)
        if progress is not None and seconds is not None and seconds >= NOTE_SECONDS:
            from ladders.cluster.engines import human_seconds
            which = "next" if work.batches() else "first"
            progress(*work.figures(), note=f"waiting for the {which} batches: about "
                     f"{human_seconds(seconds)} each on a quiet worker")
        return work

    def batch_seconds(self, problem: Problem, primes: int) -> float | None:
        """Seconds of one batch of ``primes`` on a quiet worker by the cost model (None:
        no model)."""
        return None

    def status(self, store: RunStore, manifest: Manifest) -> dict[str, Any]:
        """How many batches a run takes is known only when its answer is confirmed (a
        finished run's total is the batches it took; before, 0: not known yet): the
        modulus must grow past about twice the digits of the fractions (the series
        engine's three players: once, over the denominator multiple). The digits are
        those of :meth:`BatchWork.figures` (what the progress line shows), then the
        modulus's (:func:`~ladders.cluster.engines.reach_digits`)."""
        from ladders.cluster.engines import reach_digits
        done = len(manifest.state.batches)  # type: ignore[attr-defined]
        primes = done * int(store.run["batch_primes"])
        bits = manifest.max_bits
        return {"tasks_done": done, "tasks_total": done if store.completed() else 0,
                "batches_done": done, "primes_done": primes,
                "progress": f"{done:,} {'batch' if done == 1 else 'batches'} ({primes:,} primes)",
                "digits": reach_digits(bits if self.whole_modulus(store) else bits // 2, bits)}

    def whole_modulus(self, store: RunStore) -> bool:
        """Whether a fraction of the run's answer may be as long as the whole modulus
        (over a known denominator multiple) instead of half of it."""
        return False


class BatchWork(abc.ABC):
    """A prime-batch run as :class:`~ladders.cluster.loops.Work`: items are batch
    numbers 0, 1, 2, ... (each a fixed list of primes); a finished batch is committed as
    a manifest that lists its segment, then folded into the engine's state, then the
    engine tries to :meth:`conclude`. Subclasses give the prime sequence, the task of a
    batch, :meth:`fold`, :meth:`bits` and :meth:`conclude`."""

    queued = 1
    head_start = False
    modules: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.manifest = store.current()
        store.clear_leftovers(self.manifest)
        self.pending: list[tuple[dict[str, Any], float]] = []
        self.before = self.batches()
        self.seed = int(store.run["seed"])
        self.size = int(store.run["batch_primes"])
        self.done = False
        self.client: Any = None
        self._primes: dict[int, list[int]] = {}   # the batches drawn and not committed
        self._drawn = 0
        self._sequence: Iterator[int] | None = None

    def start(self) -> None:
        """Fold the committed batches (a resumed run), then try to conclude from them."""
        self.fold_committed()
        self.done = self.conclude()

    def fold_committed(self) -> None:
        """Fold every batch the manifest lists, in batch order. Batches are independent:
        one whose segment is damaged (a disk error, a file changed by hand) is dropped
        from the manifest, said so on stderr, and computed again, instead of the whole
        store being given up."""
        from ladders.checkpoints.errors import SegmentError
        damaged: dict[int, str] = {}
        for k, ref in sorted(self.manifest.state.batches.items()):  # type: ignore[attr-defined]
            try:
                self.fold(ref)
            except SegmentError as exc:
                damaged[k] = exc.reason
        if not damaged:
            return
        state = self.manifest.state.without(set(damaged))  # type: ignore[attr-defined]
        new = self.manifest.next(state, 0.0, self.bits())
        self.store.commit(new)
        self.manifest = new
        self.before = self.batches()
        first = min(damaged)
        click.echo(f"ladders: {len(damaged):,} damaged {'batch' if len(damaged) == 1 else 'batches'} "
                   f"dropped, to be computed again (batch {first}: {damaged[first]})", err=True)

    @abc.abstractmethod
    def sequence(self) -> Iterator[int]:
        """The run's primes, in order (its seed fixes them)."""

    def primes(self, k: int) -> list[int]:
        """The primes of batch k, drawn in order once. Those of a committed batch are
        let go (its segment holds them): a 5-player run draws 10 million, which as
        Python integers held a driver's memory growing by 40 bytes a prime."""
        if self._sequence is None:
            self._sequence = self.sequence()
        if k not in self._primes and k < self._drawn:      # let go: drawn once more
            self._sequence, self._drawn = self.sequence(), 0
            self._primes = {j: p for j, p in self._primes.items() if j > k}
        while self._drawn <= k:
            batch = [next(self._sequence) for _ in range(self.size)]
            if self._drawn == k or self._drawn not in self.manifest.state.batches:  # type: ignore[attr-defined]
                self._primes.setdefault(self._drawn, batch)
            self._drawn += 1
        return self._primes[k]

    @abc.abstractmethod
    def batch_task(self, k: int, primes: list[int]) -> Callable[..., dict[str, Any]]:
        """The function a worker runs for batch k: ``f(store_url, token, k, primes)``."""

    @abc.abstractmethod
    def fold(self, ref: SegmentRef) -> None:
        """Take a committed batch's residues into the engine's state."""

    @abc.abstractmethod
    def bits(self) -> int:
        """Bits of the modulus so far."""

    @abc.abstractmethod
    def conclude(self) -> bool:
        """The driver's final work, tried after each commit: reconstruct or certify the
        answer from the residues so far; True once it holds (the run is finished)."""

    def attach(self, client: Any) -> None:
        """Keep the run's Dask client: an engine's :meth:`conclude` may use it."""
        self.client = client

    def batches(self) -> int:
        return len(self.manifest.state.batches)  # type: ignore[attr-defined]

    def finished(self) -> bool:
        return self.done

    def ready(self, running: set[Item], limit: int) -> list[Item]:
        taken = (set(self.manifest.state.batches) | set(running)  # type: ignore[attr-defined]
                 | {r["k"] for r, _ in self.pending})
        out: list[Item] = []
        k = 0
        while len(out) < limit:
            if k not in taken:
                out.append(k)
            k += 1
        return out

    def task(self, item: Item) -> Task:
        k = int(item)  # type: ignore[call-overload]
        token = self.store.run["token"]
        return Task(self.batch_task(k, self.primes(k)),
                    (self.store.worker_url, token, k, self.primes(k)),
                    key=f"ladders-{self.store.engine}-{token}-{k}", priority=-k)

    def run_here(self, item: Item) -> dict[str, Any]:
        task = self.task(item)
        return task.function(*task.args)

    def accept(self, item: Item, receipt: dict[str, Any], seconds: float) -> None:
        self.pending.append((receipt, seconds))

    def commit(self) -> None:
        """Commit each finished batch, fold its residues in (in batch order), then
        :meth:`conclude`."""
        from ladders.checkpoints.segments import SegmentRef
        pending, self.pending = self.pending, []
        state = self.manifest.state
        for receipt, seconds in sorted(pending, key=lambda rs: rs[0]["k"]):
            k = int(receipt["k"])
            if k in state.batches:  # type: ignore[attr-defined]
                continue  # ran twice: the committed one stays
            ref = SegmentRef.from_json(receipt["segment"])
            state = state.with_batch(k, ref)  # type: ignore[attr-defined]
            self._primes.pop(k, None)
            self.fold(ref)
            new = self.manifest.next(state, seconds, self.bits())
            self.store.commit(new)
            self.manifest = new
        if pending:
            self.done = self.conclude()

    def figures(self) -> tuple[int, int, int]:
        from ladders.solver.exact import bits_to_digits
        return self.batches(), 0, bits_to_digits(self.bits() // 2)

    def tally(self) -> tuple[int, int]:
        return self.batches() - self.before, self.batches()

    def tail_seconds(self) -> float | None:
        return None
