"""Errors of the cluster side and the exit codes of the command line, importable without
dask (the CLI catches them cheaply)."""

#: A command that failed: the work or a check did not succeed (a bug is one too).
EXIT_FAILED = 1
#: Bad usage or bad input: an option, a board file, a store that cannot be used so.
EXIT_BAD_INPUT = 2
#: A solve stopped by Ctrl-C or SIGTERM with a consistent store (EX_TEMPFAIL of sysexits.h).
EXIT_INTERRUPTED = 75
#: Stopped by Ctrl-C outside a solve (128 + SIGINT, as shells report it).
EXIT_CTRL_C = 130


class ClusterError(RuntimeError):
    """The cluster cannot be reached or cannot work on this store."""
