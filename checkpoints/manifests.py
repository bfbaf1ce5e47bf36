"""A run store's manifests: what a committed version of a run says is done.

A :class:`Manifest` holds the common fields (its number, the seconds of solving, the
largest modulus reached) and the engine's payload, a :class:`ManifestState`; a
:class:`Survey` is what the manifests of a store say, read without changing anything.
The store (:class:`~ladders.checkpoints.store.RunStore`) writes them as
``manifest/NNNNNN.json`` (:func:`manifest_key`), a payload's long list in pages of
:data:`PAGE` entries (:func:`page_key`), and keeps :data:`HISTORY` of them before the
newest.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ladders.checkpoints.segments import SegmentRef

#: Entries of a paged list per page: at 10,000 entries a manifest lists 157 pages.
PAGE = 64
#: Committed manifests kept before the newest (for inspection; only the newest counts).
HISTORY = 3


class ManifestState(Protocol):
    """An engine's payload of a manifest: what is done, in the engine's own terms.

    A payload type whose segments' names say what they hold may also define a classmethod
    ``from_segments(backend) -> (state, refused paths)``: the state its whole segments
    give when every manifest of a store is lost (:meth:`~ladders.checkpoints.store.RunStore.survey`; e.g.
    :class:`~ladders.checkpoints.batches.BatchState`). Without it such a store cannot go on.
    """

    #: the folders its segments live in, with the depth of a segment's path (a segment
    #: ``rows/g3/b2-x`` has depth 3): what :meth:`~ladders.checkpoints.store.RunStore.clear_leftovers` scans
    FOLDERS: ClassVar[dict[str, int]]
    #: the name of its field (a dataclass field) that holds a long dict of integers to
    #: objects with ``to_json`` (one entry per task done), under the same key in its
    #: JSON; the store keeps it in pages. None: the payload is written whole
    PAGED: ClassVar[str | None]

    def to_json(self) -> dict[str, Any]:
        """The payload as JSON."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ManifestState:
        """The payload read back; ``KeyError``, ``TypeError`` or ``ValueError`` when
        ``data`` is not of its shape."""

    def segments(self) -> Iterable[SegmentRef]:
        """The segments the payload needs."""


@dataclass(frozen=True)
class Manifest:
    """One committed version of what is done: common fields and the engine's ``state``."""

    seq: int
    state: ManifestState
    elapsed: float = 0.0
    max_bits: int = 0

    def next(self, state: ManifestState, seconds: float = 0.0, max_bits: int | None = None) -> Manifest:
        """The manifest after this one: ``state``, ``seconds`` more of solving."""
        return Manifest(self.seq + 1, state, self.elapsed + seconds,
                        self.max_bits if max_bits is None else max_bits)

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "elapsed": round(self.elapsed, 3), "max_bits": self.max_bits,
                "state": self.state.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any], state_type: type[ManifestState]) -> Manifest:
        return cls(seq=int(data["seq"]), state=state_type.from_json(data["state"]),
                   elapsed=float(data.get("elapsed", 0.0)), max_bits=int(data.get("max_bits", 0)))

    def referenced(self) -> set[str]:
        """Segment paths this manifest needs."""
        return {ref.path for ref in self.state.segments()}


@dataclass(frozen=True)
class Survey:
    """What a store's manifests say, read without changing anything
    (:meth:`~ladders.checkpoints.store.RunStore.survey`): the manifest the next driver
    continues from, and what was lost on the way."""

    #: the newest intact manifest (an older one only with all its segments there), or
    #: one rebuilt from the segments (``rebuilt``) when there is none
    manifest: Manifest
    #: one line naming what was lost and what is done about it; None when nothing was
    lost: str | None = None
    #: numbered manifests newer than ``manifest`` that do not read whole (set aside on resume)
    unreadable: tuple[str, ...] = ()
    #: no manifest could be used: ``manifest`` (not committed yet) was rebuilt from the segments
    rebuilt: bool = False
    #: the number manifest/CURRENT holds; None when it is missing or unreadable
    current: int | None = None


def manifest_key(seq: int) -> str:
    """The key of manifest number ``seq``."""
    return f"manifest/{seq:06d}.json"


def page_key(number: int, digest: str) -> str:
    """Page ``number`` (entries ``number * PAGE`` to ``(number + 1) * PAGE - 1``) with
    these contents: a manifest references it as ``[number, digest]``."""
    return f"manifest/pages/{number:06d}-{digest[:16]}.json"
