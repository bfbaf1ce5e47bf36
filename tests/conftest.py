"""Shared test setup: ``--runslow`` for long tests, and small helpers for boards."""

from __future__ import annotations

import faulthandler
import gc
import os
import sys

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False,
                     help="run tests marked slow (full-board solves, kill/resume soaks)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    for item in items:
        slow = item.get_closest_marker("slow")
        if slow is not None:
            why = slow.kwargs.get("reason")
            item.add_marker(pytest.mark.skip(reason=f"slow{f' ({why})' if why else ''}: "
                                                    "run with --runslow"))


# A hung test must fail the run with the stacks of every thread, not use up CI's limit
# silently (a cluster test once waited for 80 minutes in CI and printed nothing).
DEFAULT_LIMIT_S = 600
SLOW_LIMIT_S = 3 * 3600
_REAL_STDERR: list = []


def pytest_configure(config: pytest.Config) -> None:
    # a copy of fd 2 taken before pytest's capture redirects it for each test
    _REAL_STDERR.append(os.fdopen(os.dup(sys.__stderr__.fileno()), "w"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    limit = SLOW_LIMIT_S if "slow" in item.keywords else DEFAULT_LIMIT_S
    faulthandler.dump_traceback_later(limit, exit=True, file=_REAL_STDERR[0])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # Collect the Dask clients and clusters the tests left to the garbage collector now:
    # collected later, while a plugin's end-of-run import parses a module, their
    # finalizers trip CPython 3.11's "AST constructor recursion depth mismatch"
    # (pytest-dev/pytest#10763, python/cpython#106905): seen running
    # tests/cluster/test_dask.py alone.
    gc.collect()
