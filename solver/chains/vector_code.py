"""Boolean and integer expressions made into one Python function of NumPy operations
over a block of states, written once a program and run once a block.

Walking an expression tree for each block costs a Python call per node; a model with
a hundred commands and a few hundred breadth-first layers spends most of its build
there. :func:`vector_functions` writes the source of one function for a list of
expressions instead, each subexpression once (equal subtrees are shared across the
list: ``phase=1`` is computed once for every guard that tests it), and compiles it
with :func:`compile`. The function takes a frame (the block: its variables' columns,
labels, and the evaluation of what is not plain integer arithmetic) and returns the
expressions' values, a NumPy array or, for a constant, a Python scalar.

What is not plain integer arithmetic stays with the frame, called from the function:
an integer or Boolean expression that reads a rational (``x/3 < 0.5``) is evaluated
exactly once per distinct valuation (``F.distinct``), and ``mod`` and ``pow`` check
their operands (``F.mod``, ``F.pow``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ladders.solver.chains.symbolic import Expr

_BINARY = {"+": "+", "-": "-", "*": "*", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
           "=": "==", "!=": "!=", "&": "&", "|": "|", "<=>": "=="}


class Block(Protocol):
    """What a compiled function reads from the block it runs on."""

    labels: dict[str, np.ndarray]

    def col(self, k: int) -> np.ndarray: ...

    def distinct(self, e: Expr) -> np.ndarray: ...

    def mod(self, a: Any, b: Any, e: Expr) -> Any: ...

    def pow(self, a: Any, b: Any, e: Expr) -> Any: ...


VectorFunction = Callable[[Block], list[Any]]


class _Writer:
    """The lines of one function, a name for each distinct subexpression."""

    def __init__(self, position: dict[str, int], first_object: int) -> None:
        self.position, self.first_object = position, first_object
        self.lines: list[str] = []
        self.objects: list[Expr] = []
        self.names: dict[object, str] = {}
        self.keys: dict[int, object] = {}

    def key(self, e: Expr) -> object:
        """A key equal for equal subtrees (CSE across the whole list)."""
        k = self.keys.get(id(e))
        if k is None:
            value = e.value if e.op != "const" else (type(e.value).__name__, e.value)
            k = self.keys[id(e)] = (e.op, value, e.type, tuple(self.key(a) for a in e.args))
        return k

    def name(self, e: Expr) -> str:
        """A Python expression for ``e``'s values: a literal, or a local variable."""
        if e.op == "const":
            return repr(e.value) if isinstance(e.value, (bool, int)) else self._object(e)
        key = self.key(e)
        found = self.names.get(key)
        if found is not None:
            return found
        code = self._code(e)
        var = f"t{len(self.names)}"
        self.lines.append(f"    {var} = {code}")
        self.names[key] = var
        return var

    def _object(self, e: Expr) -> str:
        self.objects.append(e)
        return f"X[{self.first_object + len(self.objects) - 1}]"

    def _code(self, e: Expr) -> str:
        op = e.op
        if op == "var":
            col = f"F.col({self.position[e.value]})"  # type: ignore[index]
            return f"({col} != 0)" if e.type == "bool" else col
        if op == "label":
            return f"F.labels[{e.value!r}]"
        logical = op in ("&", "|", "not", "=>", "<=>") or op == "ite" and e.type == "bool"
        if not logical and not e.integral:
            return f"F.distinct({self._object(e)})"
        args = [self.name(a) for a in e.args]
        if op in _BINARY:
            return f"({args[0]} {_BINARY[op]} {args[1]})"
        if op == "not":
            return f"np.logical_not({args[0]})"
        if op == "=>":
            return f"(np.logical_not({args[0]}) | {args[1]})"
        if op == "neg":
            return f"(-{args[0]})"
        if op == "ite":
            return f"np.where({args[0]}, {args[1]}, {args[2]})"
        if op in ("min", "max"):
            code = args[0]
            for a in args[1:]:
                code = f"np.{'minimum' if op == 'min' else 'maximum'}({code}, {a})"
            return code
        if op in ("floor", "ceil"):
            return args[0]
        if op in ("mod", "pow"):
            return f"F.{op}({args[0]}, {args[1]}, {self._object(e)})"
        raise ValueError(f"no vector code for {op!r}")


def vector_functions(lists: Sequence[Sequence[Expr]], position: dict[str, int]) -> list[VectorFunction]:
    """One function a list of ``lists``, each computing every expression of its list
    (Boolean or integer) over a block; ``position``: each variable's column number in
    the block. The functions are compiled together (one :func:`compile` for a
    program's hundred commands, not a hundred)."""
    parts, objects = [], []
    for n, exprs in enumerate(lists):
        w = _Writer(position, len(objects))
        results = [w.name(e) for e in exprs]
        parts.append(f"def run{n}(F):\n" + "".join(line + "\n" for line in w.lines)
                     + f"    return [{', '.join(results)}]\n")
        objects += w.objects
    scope: dict[str, Any] = {"np": np, "X": tuple(objects)}
    exec(compile("".join(parts), "<ladders vector code>", "exec"), scope)
    return [scope[f"run{n}"] for n in range(len(lists))]
