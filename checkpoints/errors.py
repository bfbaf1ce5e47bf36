"""Errors of the run store, importable without zarr (the CLI catches them cheaply)."""


class StoreError(RuntimeError):
    """The store cannot be used as asked; the message says why and what to do."""


class SegmentError(RuntimeError):
    """A segment is missing, damaged or does not match its manifest entry."""


def damaged_store(root: object) -> str:
    """The way out of a store whose run-defining files or committed segments are damaged
    beyond repair (run.json, plan.json, a manifest, a segment of rows or residues)."""
    return (f"the store is damaged and cannot be resumed: start a new run in another "
            f"folder ('ladders solve BOARD --checkpoint DIR'), or delete {root}")
