"""The explorer's set of states (a NumPy hash table) and the states' names, against
plain Python: numbers in the order of first appearance, duplicates within and across
batches, growth, and names written without a Python step a state."""

from __future__ import annotations

import numpy as np

from ladders.solver.chains.explore import Layout, StateNames
from ladders.solver.chains.state_table import StateTable, valuation_names
from ladders.solver.chains.symbolic import Variable


def test_numbers_in_order_of_first_row_across_batches_and_growth() -> None:
    rng = np.random.default_rng(7)
    table = StateTable(words=2, capacity=4)
    seen: dict[tuple[int, int], int] = {}
    for _ in range(40):
        rows = rng.integers(0, 60, size=(int(rng.integers(0, 300)), 2))
        expected = []
        for row in map(tuple, rows.tolist()):
            expected.append(seen.setdefault(row, len(seen)))
        assert table.add(rows).tolist() == expected
        assert table.count == len(seen)
    assert [tuple(r) for r in table.states[:table.count].tolist()] == list(seen)


def test_one_word_states_with_colliding_slots() -> None:
    """Keys that differ only in high bits, many equal rows in one batch."""
    table = StateTable(words=1)
    rows = (np.arange(5000, dtype=np.int64) << 40)[:, None]
    rows = np.concatenate([rows, rows[::-1], rows])
    out = table.add(rows)
    assert out[:5000].tolist() == list(range(5000))
    assert out[5000:10000].tolist() == list(range(4999, -1, -1))
    assert out[10000:].tolist() == list(range(5000))


def test_valuation_names() -> None:
    columns = np.array([[0, -12, 1], [105, 3, 0], [7, 0, 1]])
    assert valuation_names(columns, ["x", "yy", "b"], [False, False, True]) == [
        "x=0,yy=-12,b", "x=105,yy=3,!b", "x=7,yy=0,b"]


def test_state_names_are_written_when_asked() -> None:
    variables = (Variable("b", 0, 1, 0, True, None), Variable("x", -3, 300, 0, False, "m"),
                 Variable("k", 0, 3, 2, False, "m"))
    layout = Layout(variables)
    states = np.zeros((3, layout.words), dtype=np.int64)
    for k, values in enumerate(([1, 0, 1], [-3, 250, 7], [2, 2, 2])):
        layout.put(states, k, np.array(values, dtype=np.int64))
    names = StateNames(layout, states)
    assert names[1] == "!b,x=250" and names[-1] == "b,x=7"   # k does not vary
    assert list(names) == ["b,x=-3", "!b,x=250", "b,x=7"] and names[0:2] == ["b,x=-3", "!b,x=250"]


def test_names_too_long_are_numbers() -> None:
    variables = tuple(Variable(f"v{'x' * 30}{i}", 0, 9, 0, False, None) for i in range(8))
    layout = Layout(variables)
    states = np.zeros((2, layout.words), dtype=np.int64)
    for k in range(8):
        layout.put(states, k, np.array([0, 9], dtype=np.int64))
    assert list(StateNames(layout, states)) == ["0", "1"]


def test_names_that_fit_only_in_the_states_there_are() -> None:
    """Twenty Booleans of nine letters: written with a '!' each they would pass the
    longest name (219 characters), but no state has more than one false (200)."""
    variables = tuple(Variable(f"{chr(97 + i)}" * 9, 0, 1, 1, True, None) for i in range(20))
    layout = Layout(variables)
    states = np.zeros((21, layout.words), dtype=np.int64)
    for k in range(20):
        layout.put(states, k, np.array([0 if r == k else 1 for r in range(21)], dtype=np.int64))
    names = list(StateNames(layout, states))
    assert names[0].startswith("!aaaaaaaaa,bbbbbbbbb,") and len(names[0]) == 200
    assert names[20] == ",".join(chr(97 + i) * 9 for i in range(20))
