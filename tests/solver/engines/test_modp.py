"""Sparse LU modulo a word-size prime (:mod:`ladders.solver.engines.modp`): the
factorization stops between chunks of rows when asked (the modular engine's solves:
``test_modular.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from examples import truncated
from ladders.solver.games.chain import build_chain
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
