"""Expressions compiled into NumPy code (``vector_functions``) give, state by state,
the values of the exact evaluator (``symbolic.evaluate``); shared subexpressions are
computed once; a constant comes back as a scalar."""

from __future__ import annotations

import numpy as np
import pytest

from ladders.solver.chains.symbolic import ExprError, const, evaluate, make, variable
from ladders.solver.chains.vector_code import vector_functions
from ladders.solver.exact import mpq

X, Y, B = variable("x", "int"), variable("y", "int"), variable("b", "bool")


class _Block:
    """A block of states over x, y, b, with the frame's checks for mod and pow."""

    def __init__(self, columns: np.ndarray) -> None:
        self.columns, self.labels = columns, {}

    def col(self, k: int) -> np.ndarray:
        return self.columns[:, k]

    def distinct(self, e):  # type: ignore[no-untyped-def]
        return np.array([evaluate(e, {"x": int(r[0]), "y": int(r[1]), "b": bool(r[2])})
                         for r in self.columns])

    def mod(self, a, b, e):  # type: ignore[no-untyped-def]
        if np.any(np.asarray(b) == 0):
            raise ExprError("mod(_, 0)")
        return np.mod(a, b)

    def pow(self, a, b, e):  # type: ignore[no-untyped-def]
        return np.power(a, b)


EXPRS = [
    make("&", [make("<", [X, Y]), B]),
    make("|", [make("not", [B]), make("=", [X, const(3)])]),
    make("=>", [B, make(">=", [make("+", [X, Y]), const(4)])]),
    make("<=>", [B, make("!=", [X, Y])]),
    make("ite", [B, make("*", [X, const(2)]), make("neg", [Y])]),
    make("min", [X, Y, const(2)]),
    make("max", [X, make("-", [Y, const(1)])]),
    make("mod", [make("+", [X, const(7)]), const(3)]),
    make("pow", [const(2), make("+", [X, const(2)])]),
    make("floor", [make("+", [X, Y])]),
    make("<", [make("/", [X, const(3)]), const(mpq(1, 2))]),      # reads a rational
    make("ite", [make("<", [X, Y]), B, make("not", [B])]),
    make("&", [make("<", [X, Y]), B]),                              # equal to the first
    const(True),
]


def test_each_state_as_the_exact_evaluator() -> None:
    grid = np.array([(x, y, b) for x in range(-2, 5) for y in range(-1, 4) for b in (0, 1)],
                    dtype=np.int64)
    values = vector_functions([EXPRS], {"x": 0, "y": 1, "b": 2})[0](_Block(grid))
    assert values[-1] is True
    for e, got in zip(EXPRS[:-1], values[:-1]):
        for row, value in zip(grid.tolist(), np.broadcast_to(got, (len(grid),)).tolist()):
            assert value == evaluate(e, {"x": row[0], "y": row[1], "b": bool(row[2])}), (e, row)


def test_shared_subexpressions_are_computed_once() -> None:
    calls = []

    class Counting(_Block):
        def col(self, k: int) -> np.ndarray:
            calls.append(k)
            return super().col(k)

    first, second = vector_functions([[EXPRS[0], EXPRS[12]], [EXPRS[0]]], {"x": 0, "y": 1, "b": 2})
    grid = np.array([[0, 1, 1], [2, 1, 0]], dtype=np.int64)
    a, b = first(Counting(grid))
    assert a is b and sorted(calls) == [0, 1, 2]
    assert second(Counting(grid))[0].tolist() == [True, False]


def test_a_check_of_the_frame_stops_the_block() -> None:
    run = vector_functions([[make("mod", [const(3), X])]], {"x": 0, "y": 1, "b": 2})[0]
    with pytest.raises(ExprError, match="mod"):
        run(_Block(np.array([[0, 0, 0]], dtype=np.int64)))
