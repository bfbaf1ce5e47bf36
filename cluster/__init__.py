"""Running solves: the Dask side of `ladders` and its click command line (``cluster.cli``)."""
