"""Errors of the run store, importable without zarr (the CLI catches them cheaply)."""


class StoreError(RuntimeError):
    """The store cannot be used as asked; the message says why and what to do."""


class SegmentError(RuntimeError):
    """A segment is missing, damaged or does not match its manifest entry: ``reason``
    says what is wrong with it; the message adds the way out for a whole store (an
    engine whose segments are independent drops the one instead)."""

    def __init__(self, reason: str, way_out: str = "") -> None:
        super().__init__(f"{reason}; {way_out}" if way_out else reason)
        self.reason = reason


def damaged_store(root: object) -> str:
    """The way out of a store whose run-defining files or committed segments are damaged
    beyond repair (run.json, plan.json, a manifest, a segment of rows or residues)."""
    return (f"the store is damaged and cannot be resumed: start a new run in another "
            f"folder ('ladders solve BOARD --checkpoint DIR'), or delete {root}")
