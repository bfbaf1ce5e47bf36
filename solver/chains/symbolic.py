"""A Markov chain described by a program: bounded variables, guarded commands, labels
and rewards, as the PRISM language and JANI write one (their readers are in
:mod:`ladders.solver.chains.formats.prism_lang`); :mod:`ladders.solver.chains.explore`
builds its reachable states into a :class:`~ladders.solver.chains.model.Chain`.

Expressions are trees of :class:`Expr` with a static type:

- ``"bool"`` and ``"int"``: values of guards, updates and labels; evaluated exactly
  over whole columns of states at once (NumPy, 64-bit integers);
- ``"rat"``: exact rationals (``mpq``): a decimal literal is the decimal it spells
  (``0.1`` is ``1/10``), ``/`` gives a rational, ``pow`` with an integer exponent is
  exact. A rational expression is evaluated once per distinct valuation of the
  variables it reads (:func:`evaluate`), never in floating point.

Functions whose values are irrational (``pow`` with a fractional exponent, ``log``)
have no exact value and are refused when met (:class:`ExprError`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ladders.solver.exact import mpq, mpz

#: The value of an expression: a Boolean, an integer or an exact rational.
Value = bool | int | mpq

#: Binary operators with their result type given the operands' types.
ARITHMETIC = ("+", "-", "*")
LOGICAL = ("&", "|", "=>", "<=>")
FUNCTIONS = ("min", "max", "floor", "ceil", "mod", "pow")

#: An integer variable's bounds lie strictly within +-INT_BOUND: the build packs its
#: values into 64-bit words and evaluates them as 64-bit integers
#: (:mod:`~ladders.solver.chains.explore`), so a value and the difference of two fit.
INT_BOUND = 1 << 62


def too_wide(name: str, low: int, high: int) -> str | None:
    """Why the integer range ``[low..high]`` of variable ``name`` cannot be built (beyond
    :data:`INT_BOUND`: before, an ``OverflowError`` in the build, reported as failed
    arithmetic), or None."""
    if -INT_BOUND < low and high < INT_BOUND:
        return None
    return (f"the range [{low}..{high}] of {name!r} is beyond the 64-bit integers ladders "
            f"builds with; keep its bounds within +-{INT_BOUND - 1:,}")


class ExprError(ValueError):
    """An expression that has no exact value here (a division by zero, an irrational
    function, a type error): the message says which and why."""


class Expr:
    """One node of an expression tree: ``op`` (``"const"``, ``"var"``, ``"label"``, an
    operator or a function name), its operands ``args``, a ``value`` (the constant,
    or the variable's or label's name), the static ``type`` (``"bool"``, ``"int"``,
    ``"rat"``), the variables it ``reads``, and whether NumPy's integer arithmetic
    evaluates it exactly (``integral``: no rational inside)."""

    __slots__ = ("op", "args", "value", "type", "reads", "integral", "labels")

    def __init__(self, op: str, args: tuple[Expr, ...], value: object, type_: str) -> None:
        self.op, self.args, self.value, self.type = op, args, value, type_
        reads: frozenset[str] = frozenset([value]) if op == "var" else frozenset()
        labels: frozenset[str] = frozenset([value]) if op == "label" else frozenset()
        for a in args:
            reads |= a.reads
            labels |= a.labels
        self.reads, self.labels = reads, labels
        self.integral = type_ != "rat" and op != "/" and all(a.integral for a in args)

    def __repr__(self) -> str:
        return show(self)


def const(value: Value) -> Expr:
    """A constant."""
    if isinstance(value, bool):
        return Expr("const", (), value, "bool")
    if isinstance(value, int):
        return Expr("const", (), value, "int")
    return Expr("const", (), mpq(value), "rat")


def _join(types: Sequence[str], op: str) -> str:
    if any(t == "bool" for t in types):
        raise ExprError(f"'{op}' applied to a Boolean")
    return "rat" if any(t == "rat" for t in types) else "int"


def make(op: str, args: Sequence[Expr], value: object = None) -> Expr:
    """The node ``op(args)`` with its type checked, folded to a constant where every
    operand is one (an :class:`ExprError` where the types do not fit)."""
    args = tuple(args)
    types = [a.type for a in args]
    if op in ARITHMETIC:
        type_ = _join(types, op)
    elif op == "/":
        _join(types, op)
        type_ = "rat"
    elif op == "neg":
        type_ = _join(types, "-")
    elif op in ("<", "<=", ">", ">="):
        _join(types, op)
        type_ = "bool"
    elif op in ("=", "!="):
        if ("bool" in types) != all(t == "bool" for t in types):
            raise ExprError(f"'{op}' compares a Boolean with a number")
        type_ = "bool"
    elif op in LOGICAL or op == "not":
        if any(t != "bool" for t in types):
            raise ExprError(f"'{'!' if op == 'not' else op}' applied to a number")
        type_ = "bool"
    elif op == "ite":
        if args[0].type != "bool":
            raise ExprError("the condition of '? :' is a number")
        branch = types[1:]
        if "bool" in branch and not all(t == "bool" for t in branch):
            raise ExprError("'? :' with a Boolean and a number")
        type_ = "bool" if branch[0] == "bool" else _join(branch, "? :")
    elif op in ("min", "max"):
        type_ = _join(types, op)
    elif op in ("floor", "ceil"):
        _join(types, op)
        type_ = "int"
    elif op == "mod":
        if _join(types, op) != "int":
            raise ExprError("mod takes integers")
        type_ = "int"
    elif op == "pow":
        type_ = _join(types, op)
    else:
        raise ExprError(f"unknown operator {op!r}")
    node = Expr(op, args, value, type_)
    if args and all(a.op == "const" for a in args):
        folded = evaluate(node, {})
        if type_ == "rat":
            return Expr("const", (), mpq(folded), "rat")
        return const(folded)
    return node


def variable(name: str, type_: str) -> Expr:
    """A reference to the variable ``name`` of type ``"bool"`` or ``"int"``."""
    return Expr("var", (), name, type_)


def label(name: str) -> Expr:
    """A reference to the label ``name`` (a property's ``"name"``)."""
    return Expr("label", (), name, "bool")


def _exact_pow(base: Value, exponent: Value) -> Value:
    if isinstance(exponent, mpq) and exponent.denominator != 1:
        raise ExprError(f"pow({base}, {exponent}) is irrational in general: a fractional "
                        "exponent has no exact value here")
    e = int(exponent)
    if isinstance(base, int) and not isinstance(base, mpq):
        if e < 0:
            if base == 0:
                raise ExprError("pow(0, negative) divides by zero")
            return mpq(1, int(mpz(base) ** -e))
        return int(mpz(base) ** e)
    b = mpq(base)
    if e < 0:
        if b == 0:
            raise ExprError("pow(0, negative) divides by zero")
        return 1 / b ** -e
    return b ** e


def _floor(x: Value) -> int:
    return int(x) if isinstance(x, int) else int(math.floor(mpq(x)))


def _ceil(x: Value) -> int:
    return int(x) if isinstance(x, int) else int(math.ceil(mpq(x)))


def _div(a: Value, b: Value) -> mpq:
    if b == 0:
        raise ExprError("a division by zero")
    return mpq(a) / mpq(b)


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ExprError("mod(_, 0)")
    return int(a) % int(b)


_EXACT: dict[str, Callable[..., Value]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _div, "neg": lambda a: -a,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "=": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "&": lambda a, b: a and b, "|": lambda a, b: a or b, "=>": lambda a, b: (not a) or b,
    "<=>": lambda a, b: a == b, "not": lambda a: not a,
    "min": lambda *a: min(a), "max": lambda *a: max(a),
    "floor": _floor, "ceil": _ceil, "mod": _mod, "pow": _exact_pow,
}


def evaluate(e: Expr, env: Mapping[str, Value]) -> Value:
    """The exact value of ``e`` where the variables (and labels) have the values
    ``env``: a ``bool``, an ``int``, or an ``mpq`` for a rational expression."""
    op = e.op
    if op == "const":
        return e.value  # type: ignore[return-value]
    if op in ("var", "label"):
        return env[e.value]  # type: ignore[index]
    if op == "ite":
        return evaluate(e.args[1] if evaluate(e.args[0], env) else e.args[2], env)
    if op == "&":
        return bool(evaluate(e.args[0], env)) and bool(evaluate(e.args[1], env))
    if op == "|":
        return bool(evaluate(e.args[0], env)) or bool(evaluate(e.args[1], env))
    values = [evaluate(a, env) for a in e.args]
    out = _EXACT[op](*values)
    if e.type == "int":
        return int(out)
    if e.type == "bool":
        return bool(out)
    return mpq(out)


_SHOW = {"&": "&", "|": "|", "=>": "=>", "<=>": "<=>"}


def show(e: Expr) -> str:
    """``e`` as PRISM text (fully parenthesised where it has operands)."""
    if e.op == "const":
        v = e.value
        return ("true" if v else "false") if isinstance(v, bool) else str(v)
    if e.op == "var":
        return str(e.value)
    if e.op == "label":
        return f'"{e.value}"'
    if e.op == "neg":
        return f"-{show(e.args[0])}"
    if e.op == "not":
        return f"!{show(e.args[0])}"
    if e.op == "ite":
        return f"({show(e.args[0])} ? {show(e.args[1])} : {show(e.args[2])})"
    if e.op in FUNCTIONS:
        return f"{e.op}({', '.join(show(a) for a in e.args)})"
    return f"({show(e.args[0])} {_SHOW.get(e.op, e.op)} {show(e.args[1])})"


# ---------------------------------------------------------------------- the program

@dataclass(frozen=True)
class Variable:
    """A bounded integer (``low..high``) or a Boolean (``0..1``), with its initial
    value; ``module``: the module that owns it (None: global)."""

    name: str
    low: int
    high: int
    init: int
    boolean: bool
    module: str | None


@dataclass(frozen=True)
class Update:
    """One outcome of a command: its probability and the assignments
    ``variable' = expression`` (evaluated in the state before the step); ``rewards``:
    what the outcome earns, by reward structure (JANI's transient assignments on a
    destination: the choice earns each outcome's value times its probability)."""

    probability: Expr
    assignments: tuple[tuple[str, Expr], ...]
    rewards: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class Command:
    """``[action] guard -> updates`` of ``module`` (``action`` None: unsynchronised),
    and where it was written (``file:line:column``)."""

    module: str
    action: str | None
    guard: Expr
    updates: tuple[Update, ...]
    where: str


@dataclass(frozen=True)
class RewardItem:
    """One item of a reward structure: ``guard : value`` (a state reward, ``action``
    None) or ``[action] guard : value`` (``action`` ``""``: unlabelled commands)."""

    action: str | None
    guard: Expr
    value: Expr
    where: str


@dataclass(frozen=True)
class Program:
    """A discrete-time Markov chain as a program, with every constant, formula and
    renaming resolved: its variables (Booleans first, then integers, each group the
    globals first and then module by module, which is how Storm orders them), its
    modules' names and actions, its commands, initial states (``init``: None for the
    variables' initial values), labels and reward structures.

    ``synchronisations``: who moves together, as JANI's synchronisation vectors say it
    (each one action and, for every module taking part, the action of its commands that
    take part; a command whose action no vector names never moves). None: PRISM's
    rule, each action shared by every module whose commands use it."""

    name: str
    source: str
    variables: tuple[Variable, ...]
    modules: tuple[tuple[str, frozenset[str]], ...]
    commands: tuple[Command, ...]
    init: Expr | None = None
    labels: Mapping[str, Expr] = field(default_factory=dict)
    rewards: Mapping[str, tuple[RewardItem, ...]] = field(default_factory=dict)
    synchronisations: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None = None
