"""The chain model (:mod:`ladders.solver.chains.model`): rows that are no probability
distribution, or states with control characters in their names, are refused with the
state."""

from __future__ import annotations

import pytest

from ladders.solver.chains.model import ChainError, chain_from_rows
from ladders.solver.exact import mpq


def test_bad_rows_are_refused_with_the_state():
    with pytest.raises(ChainError, match="sum to 5/6"):
        chain_from_rows("bad", ["a", "b"], [{1: mpq(5, 6)}, {1: 1}])
    with pytest.raises(ChainError, match="negative"):
        chain_from_rows("bad", ["a", "b"], [{1: mpq(-1, 6), 0: mpq(7, 6)}, {1: 1}])
    with pytest.raises(ChainError, match="control character"):
        chain_from_rows("bad", ["a\x1b[2J", "b"], [{1: 1}, {1: 1}])
