"""Errors of the cluster side, importable without dask (the CLI catches them cheaply)."""


class ClusterError(RuntimeError):
    """The cluster cannot be reached or cannot work on this store."""
