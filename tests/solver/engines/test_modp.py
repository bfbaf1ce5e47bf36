"""Sparse LU modulo a word-size prime (:mod:`ladders.solver.engines.modp`): the
factorization stops between chunks of rows when asked (the modular engine's solves:
``test_modular.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from examples import truncated
from ladders.solver.games.chain import build_chain
from ladders.solver.engines import modp
from ladders.solver.engines.modp import MAX_PRIME, FactorizationStopped, factor_permuted, permute_csr
from ladders.solver.games.race import race_system


def test_the_factorization_stops_between_chunks_of_rows() -> None:
    system = race_system(build_chain(truncated("hasbro", 20)), 3)
    order = np.arange(system.size)
    permuted = permute_csr(system.indptr, system.indices, system.data, order)
    polls = []

    def stop_on_second_poll() -> bool:
        polls.append(1)
        return len(polls) == 2
    with pytest.raises(FactorizationStopped) as stop:
        factor_permuted(permuted, order, MAX_PRIME, should_stop=stop_on_second_poll)
    assert 0 < stop.value.rows < system.size


def test_a_chunk_ends_when_its_work_budget_is_spent() -> None:
    """A chunk is bounded by its work, not its rows: near the end of a factorization a
    row costs thousands of times what the first rows cost, and a chunk sized by the
    rows before it ran for seconds (a Ctrl-C on hasbro's 3-player bump chain waited 3 s
    and more). The work counted is the columns a row scans and the entries its updates
    touch, and one for the row itself, so a budget of 1 ends a chunk after one row; the
    factors are those of one call."""
    system = race_system(build_chain(truncated("hasbro", 20)), 3)
    order = np.arange(system.size)
    permuted = permute_csr(system.indptr, system.indices, system.data, order)
    polls: list[int] = []
    progress: list[int] = []
    one_row = modp.FIRST_BUDGET
    try:
        modp.FIRST_BUDGET = 1
        small = factor_permuted(permuted, order, MAX_PRIME, should_stop=lambda: bool(polls.append(1)),
                                progress=lambda done, total: progress.append(done))
    finally:
        modp.FIRST_BUDGET = one_row
    # a row is at least one unit of work: the first chunk, on a budget of 1, is one row
    assert progress[0] == 1 and progress[-1] == system.size and len(polls) == len(progress)
    assert all(a < b for a, b in zip(progress, progress[1:]))
    whole = factor_permuted(permuted, order, MAX_PRIME)
    for name in ("l_indptr", "l_indices", "l_data", "u_indptr", "u_indices", "u_data", "dinv"):
        assert np.array_equal(getattr(small, name), getattr(whole, name)), name
