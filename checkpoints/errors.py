"""Errors of the run store, importable without zarr (the CLI catches them cheaply)."""


class StoreError(RuntimeError):
    """The store cannot be used as asked; the message says why and what to do."""


class SegmentError(RuntimeError):
    """A segment is missing, damaged or does not match its manifest entry."""
