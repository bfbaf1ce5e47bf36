"""A reader for the discrete-time subset of the PRISM language, and of PRISM's
properties, into a :class:`~ladders.solver.chains.symbolic.Program` (no Storm needed).

The subset: ``dtmc`` models with modules (and modules made by renaming another,
``module m2 = m1 [x=y] endmodule``), synchronising actions, bounded integer and
Boolean variables (local and ``global``), ``const`` of type ``int``, ``double`` and
``bool`` (those without a value given by ``--constants N=16,MAX=2``), ``formula``,
``label``, ``init ... endinit``, and reward structures with state items
(``guard : value;``) and action items (``[a] guard : value;``). Expressions: ``+ - * /``,
comparisons, ``& | ! => <=>``, ``? :``, ``min``, ``max``, ``floor``, ``ceil``, ``mod``,
``pow``, with PRISM's precedence (highest first: unary ``-``; ``* /``; ``+ -``;
``< <= >= >``; ``= !=``; ``!``; ``&``; ``|``; ``<=>``; ``=>``; ``? :``).

Outside the subset, refused by name: other model types (``mdp``, ``ctmc``, ``ma``,
``pta``, ...), rates, clocks, unbounded integers, ``system ... endsystem``,
``invariant``, functions with irrational values. An error names
``file:line:column`` and what was expected.

The properties (:func:`read_properties`) are read into :class:`Property` records: a
name, the operator (``P``, ``R``, ``T``), a bound or ``=?``, a path formula (``F phi``,
``phi U psi`` and the shapes refused later by name), the reward's name, and the
filter; their state formulas are expressions over the model's variables and labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple
from pathlib import Path

from ladders.solver.chains.model import ChainError, parse_exact
from ladders.solver.chains.symbolic import (
    Command, Expr, ExprError, Program, RewardItem, Update, Variable, const, label,
    make, too_wide, variable,
)
from ladders.solver.exact import mpq

#: Model types PRISM knows that are not discrete-time Markov chains, in words.
REFUSED_TYPES = {
    "mdp": "a nondeterministic model (mdp)", "nondeterministic": "a nondeterministic model (mdp)",
    "ctmc": "a continuous-time model (ctmc)", "stochastic": "a continuous-time model (ctmc)",
    "ma": "a Markov automaton (ma)", "pta": "a probabilistic timed automaton (pta)",
    "pomdp": "a partially observable model (pomdp)", "popta": "a partially observable model (popta)",
    "smg": "a game (smg)", "csg": "a game (csg)", "tsg": "a game (tsg)", "lts": "a transition system (lts)",
}
#: Keywords that start a construct outside the subset, and why.
REFUSED_WORDS = {
    "system": "a system ... endsystem composition (ladders composes all modules in parallel)",
    "rate": "a rate (continuous time)", "clock": "a clock (timed automata)",
    "invariant": "an invariant (timed automata)", "player": "a player (games)",
    "observables": "observables (partial observability)",
}
_FUNCTIONS = ("min", "max", "floor", "ceil", "mod", "pow")
_IRRATIONAL = ("log", "sqrt", "exp", "sin", "cos")

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+|//[^\n]*|/\*.*?\*/)
  | (?P<number>(?:\d+\.\d+|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<string>"[^"\n]*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><=>|=>|->|<=|>=|!=|\.\.|=\?|[-+*/<>=!&|?:;,()\[\]{}'])
""", re.VERBOSE | re.DOTALL)


class Token(NamedTuple):
    """One token: ``kind`` (``"number"``, ``"string"``, ``"ident"``, ``"op"``,
    ``"end"``), its text and where it starts (a tuple: a model has thousands)."""

    kind: str
    text: str
    line: int
    column: int
    offset: int


def tokens(text: str, source: str) -> list[Token]:
    """``text`` as tokens, comments dropped; a :class:`ChainError` at the first
    character no token starts with."""
    out: list[Token] = []
    append = out.append
    pos, line, start_of_line = 0, 1, 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        kind = m.lastgroup
        if kind == "space":
            chunk = m.group()
            newlines = chunk.count("\n")
            if newlines:
                line += newlines
                start_of_line = pos + chunk.rindex("\n") + 1
        else:
            append(Token(kind, m.group(), line, pos - start_of_line + 1, pos))  # type: ignore[arg-type]
        pos = m.end()
    if pos < len(text):
        raise ChainError(f"{source}:{line}:{pos - start_of_line + 1}: unexpected character "
                         f"{text[pos]!r}")
    out.append(Token("end", "end of file", line, pos - start_of_line + 1, pos))
    return out


# ----------------------------------------------------------------- raw expressions

class Raw(NamedTuple):
    """An expression as written, before its names are known: ``kind`` ``"num"``
    (``text``), ``"ident"``, ``"label"`` (``text``: the name), ``"bool"`` or an
    operator / function with ``args``; ``at``: ``(line, column)``."""

    kind: str
    text: str
    args: tuple[Raw, ...]
    at: tuple[int, int]

    def renamed(self, names: Mapping[str, str]) -> Raw:
        """This expression with identifiers renamed (a module made by renaming)."""
        if self.kind == "ident":
            return Raw("ident", names.get(self.text, self.text), (), self.at)
        if not self.args:
            return self
        return Raw(self.kind, self.text, tuple(a.renamed(names) for a in self.args), self.at)


_BINARY_LEVELS: tuple[tuple[str, ...], ...] = (
    ("=>",), ("<=>",), ("|",), ("&",),
)


class Parser:
    """A recursive-descent reader over :func:`tokens`, with the position in messages."""

    def __init__(self, text: str, source: str) -> None:
        self.source, self.text = source, text
        self.toks = tokens(text, source)
        self.i = 0

    # -------------------------------------------------------------- tokens
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, tok: Token | None = None) -> str:
        t = tok or self.tok
        return f"{self.source}:{t.line}:{t.column}"

    def error(self, expected: str, tok: Token | None = None) -> ChainError:
        t = tok or self.tok
        found = "the end of the file" if t.kind == "end" else repr(t.text)
        return ChainError(f"{self.at(t)}: expected {expected}, found {found}")

    def is_(self, text: str) -> bool:
        return self.tok.kind in ("op", "ident") and self.tok.text == text

    def accept(self, text: str) -> bool:
        if self.is_(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.is_(text):
            raise self.error(what or f"'{text}'")
        tok = self.tok
        self.i += 1
        return tok

    def name(self, what: str = "a name") -> Token:
        if self.tok.kind != "ident":
            raise self.error(what)
        tok = self.tok
        self.i += 1
        return tok

    def string(self, what: str) -> Token:
        if self.tok.kind != "string":
            raise self.error(what)
        tok = self.tok
        self.i += 1
        return tok

    # -------------------------------------------------------------- expressions
    def expression(self) -> Raw:
        """An expression (the lowest level: ``? :``)."""
        cond = self._binary(0)
        if self.is_("?"):
            self.i += 1
            yes = self.expression()
            self.expect(":", "':' of '? :'")
            no = self.expression()
            return Raw("ite", "?", (cond, yes, no), cond.at)
        return cond

    def _binary(self, level: int) -> Raw:
        if level == len(_BINARY_LEVELS):
            return self._not()
        left = self._binary(level + 1)
        ops = _BINARY_LEVELS[level]
        while self.tok.kind == "op" and self.tok.text in ops:
            tok = self.tok
            self.i += 1
            # => is right-associative in PRISM; the others associate left
            right = self._binary(level if tok.text == "=>" else level + 1)
            left = Raw(tok.text, tok.text, (left, right), left.at)
            if tok.text == "=>":
                break
        return left

    def _not(self) -> Raw:
        if self.is_("!"):
            tok = self.tok
            self.i += 1
            return Raw("not", "!", (self._not(),), (tok.line, tok.column))
        return self._equality()

    def _equality(self) -> Raw:
        left = self._relation()
        while self.tok.kind == "op" and self.tok.text in ("=", "!="):
            tok = self.tok
            self.i += 1
            left = Raw(tok.text, tok.text, (left, self._relation()), left.at)
        return left

    def _relation(self) -> Raw:
        left = self._sum()
        while self.tok.kind == "op" and self.tok.text in ("<", "<=", ">", ">="):
            tok = self.tok
            self.i += 1
            left = Raw(tok.text, tok.text, (left, self._sum()), left.at)
        return left

    def _sum(self) -> Raw:
        left = self._product()
        while self.tok.kind == "op" and self.tok.text in ("+", "-"):
            tok = self.tok
            self.i += 1
            left = Raw(tok.text, tok.text, (left, self._product()), left.at)
        return left

    def _product(self) -> Raw:
        left = self._unary()
        while self.tok.kind == "op" and self.tok.text in ("*", "/"):
            tok = self.tok
            self.i += 1
            left = Raw(tok.text, tok.text, (left, self._unary()), left.at)
        return left

    def _unary(self) -> Raw:
        if self.is_("-"):
            tok = self.tok
            self.i += 1
            return Raw("neg", "-", (self._unary(),), (tok.line, tok.column))
        return self._atom()

    def _atom(self) -> Raw:
        tok = self.tok
        where = (tok.line, tok.column)
        if tok.kind == "number":
            self.i += 1
            return Raw("num", tok.text, (), where)
        if tok.kind == "string":
            self.i += 1
            return Raw("label", tok.text[1:-1], (), where)
        if self.accept("("):
            inner = self.expression()
            self.expect(")", "')'")
            return inner
        if tok.kind == "ident":
            if tok.text in ("true", "false"):
                self.i += 1
                return Raw("bool", tok.text, (), where)
            if tok.text in _FUNCTIONS + _IRRATIONAL and self.peek().text == "(":
                if tok.text in _IRRATIONAL:
                    raise ChainError(f"{self.at(tok)}: {tok.text}(...) has irrational values; "
                                     "ladders computes exactly and cannot use it")
                self.i += 2
                args = [self.expression()]
                while self.accept(","):
                    args.append(self.expression())
                self.expect(")", "')' or ','")
                return Raw(tok.text, tok.text, tuple(args), where)
            if tok.text == "func" and self.peek().text == "(":
                self.i += 2
                fname = self.name("a function name")
                args = []
                while self.accept(","):
                    args.append(self.expression())
                self.expect(")", "')' or ','")
                if fname.text in _IRRATIONAL:
                    raise ChainError(f"{self.at(fname)}: {fname.text}(...) has irrational values; "
                                     "ladders computes exactly and cannot use it")
                if fname.text not in _FUNCTIONS:
                    raise self.error("one of " + ", ".join(_FUNCTIONS), fname)
                return Raw(fname.text, fname.text, tuple(args), where)
            self.i += 1
            return Raw("ident", tok.text, (), where)
        raise self.error("an expression")


# ----------------------------------------------------------------- the model, as written

@dataclass
class _Module:
    name: str
    at: Token
    variables: list[tuple[Token, str, Raw | None, Raw | None, Raw | None]] = field(default_factory=list)
    commands: list[tuple[Token, str | None, Raw, list[tuple[Raw | None, list[tuple[Token, Raw]]]]]] = \
        field(default_factory=list)


@dataclass
class _Written:
    """The model file as written: declarations in order, names not yet resolved."""

    constants: list[tuple[Token, str, Raw | None]] = field(default_factory=list)
    formulas: dict[str, tuple[Token, Raw]] = field(default_factory=dict)
    globals_: list[tuple[Token, str, Raw | None, Raw | None, Raw | None]] = field(default_factory=list)
    modules: list[_Module] = field(default_factory=list)
    labels: list[tuple[Token, str, Raw]] = field(default_factory=list)
    init: Raw | None = None
    rewards: list[tuple[Token, str, list[tuple[Token, str | None, Raw, Raw]]]] = \
        field(default_factory=list)


def _read_model(text: str, source: str) -> _Written:
    p = Parser(text, source)
    out = _Written()
    kind_seen = False
    renamings: list[tuple[Token, Token, Token, dict[str, str]]] = []
    while p.tok.kind != "end":
        tok = p.tok
        word = tok.text if tok.kind == "ident" else ""
        if word in ("dtmc", "probabilistic"):
            if kind_seen:
                raise ChainError(f"{p.at()}: a second model type")
            kind_seen = True
            p.i += 1
        elif word in REFUSED_TYPES:
            raise ChainError(f"{p.at()}: {REFUSED_TYPES[word]}: ladders answers Markov chains "
                             "(dtmc)")
        elif word in REFUSED_WORDS:
            raise ChainError(f"{p.at()}: {REFUSED_WORDS[word]} is outside what ladders reads")
        elif word == "const":
            p.i += 1
            out.constants.append(_constant(p))
        elif word == "formula":
            p.i += 1
            name = p.name("the formula's name")
            p.expect("=", "'='")
            if name.text in out.formulas:
                raise ChainError(f"{p.at(name)}: a second formula {name.text!r}")
            out.formulas[name.text] = (name, p.expression())
            p.expect(";", "';'")
        elif word == "global":
            p.i += 1
            out.globals_.append(_declaration(p))
        elif word == "label":
            p.i += 1
            name = p.string('the label\'s name in quotes ("name")')
            p.expect("=", "'='")
            out.labels.append((name, name.text[1:-1], p.expression()))
            p.expect(";", "';'")
        elif word == "init":
            if out.init is not None:
                raise ChainError(f"{p.at()}: a second init ... endinit")
            p.i += 1
            out.init = p.expression()
            p.expect("endinit", "'endinit'")
        elif word == "rewards":
            p.i += 1
            name = p.string("the reward's name") if p.tok.kind == "string" else None
            items = []
            while not p.accept("endrewards"):
                item_at = p.tok
                action = None
                if p.accept("["):
                    action = p.name("an action").text if p.tok.kind == "ident" else ""
                    p.expect("]", "']'")
                guard = p.expression()
                p.expect(":", "':' between the reward's guard and value")
                value = p.expression()
                p.expect(";", "';'")
                items.append((item_at, action, guard, value))
            out.rewards.append((name or tok, name.text[1:-1] if name else "", items))
        elif word == "module":
            p.i += 1
            name = p.name("the module's name")
            if p.accept("="):
                base = p.name("the name of the module to rename")
                p.expect("[", "'['")
                mapping: dict[str, str] = {}
                while True:
                    old = p.name("a name to rename")
                    p.expect("=", "'='")
                    new = p.name("its new name")
                    mapping[old.text] = new.text
                    if not p.accept(","):
                        break
                p.expect("]", "']'")
                p.expect("endmodule", "'endmodule'")
                renamings.append((tok, name, base, mapping))
                out.modules.append(_Module(name.text, name))
            else:
                out.modules.append(_module_body(p, name))
        else:
            raise p.error("a declaration (dtmc, const, formula, global, module, label, init, "
                          "rewards)")
    if not kind_seen:
        raise ChainError(f"{source}:1:1: no model type; the file must say dtmc")
    by_name = {m.name: m for m in out.modules}
    for tok, name, base, mapping in renamings:
        if base.text not in by_name:
            raise ChainError(f"{p.at(base)}: no module {base.text!r} to rename")
        by_name[name.text].__dict__.update(_renamed(by_name[base.text], mapping, out.formulas).__dict__)
        by_name[name.text].name, by_name[name.text].at = name.text, name
    return out


def _renamed(module: _Module, names: dict[str, str],
             formulas: Mapping[str, tuple[Token, Raw]]) -> _Module:
    """``module`` with its identifiers renamed; formulas it uses are expanded first
    (PRISM expands them before renaming)."""
    def expand(r: Raw) -> Raw:
        if r.kind == "ident" and r.text in formulas and r.text not in names:
            return expand(formulas[r.text][1])
        if not r.args:
            return r
        return Raw(r.kind, r.text, tuple(expand(a) for a in r.args), r.at)

    def ren(r: Raw | None) -> Raw | None:
        return None if r is None else expand(r).renamed(names)

    def tok(t: Token) -> Token:
        return Token(t.kind, names.get(t.text, t.text), t.line, t.column, t.offset)

    out = _Module(module.name, module.at)
    out.variables = [(tok(t), kind, ren(lo), ren(hi), ren(init))
                     for t, kind, lo, hi, init in module.variables]
    out.commands = [(t, None if action is None else names.get(action, action), ren(guard),
                     [(ren(prob), [(tok(v), ren(e)) for v, e in assigns]) for prob, assigns in updates])
                    for t, action, guard, updates in module.commands]
    return out


def _constant(p: Parser) -> tuple[Token, str, Raw | None]:
    kind = "int"
    if p.tok.kind == "ident" and p.tok.text in ("int", "double", "bool", "rate", "prob"):
        kind = p.tok.text
        p.i += 1
        if kind == "rate":
            raise ChainError(f"{p.at(p.toks[p.i - 1])}: {REFUSED_WORDS['rate']} is outside what "
                             "ladders reads")
        if kind == "prob":
            kind = "double"
    name = p.name("the constant's name")
    value = p.expression() if p.accept("=") else None
    p.expect(";", "';'")
    return name, kind, value


def _declaration(p: Parser) -> tuple[Token, str, Raw | None, Raw | None, Raw | None]:
    """``name : [lo..hi] (init e)?;`` or ``name : bool (init e)?;``."""
    name = p.name("a variable's name")
    p.expect(":", "':' after the variable's name")
    if p.accept("bool"):
        kind, lo, hi = "bool", None, None
    elif p.accept("["):
        lo = p.expression()
        p.expect("..", "'..'")
        hi = p.expression()
        p.expect("]", "']'")
        kind = "int"
    elif p.is_("int"):
        raise ChainError(f"{p.at()}: an unbounded integer variable {name.text!r}; give it a range "
                         "[low..high]")
    elif p.is_("clock"):
        raise ChainError(f"{p.at()}: {REFUSED_WORDS['clock']} is outside what ladders reads")
    elif p.is_("array"):
        raise ChainError(f"{p.at()}: an array variable is outside what ladders reads")
    else:
        raise p.error("a range [low..high] or bool")
    init = p.expression() if p.accept("init") else None
    p.expect(";", "';'")
    return name, kind, lo, hi, init


def _module_body(p: Parser, name: Token) -> _Module:
    module = _Module(name.text, name)
    while not p.accept("endmodule"):
        if p.tok.kind == "end":
            raise p.error("'endmodule'")
        if p.is_("[") or p.peek().text != ":":
            module.commands.append(_command(p))
        else:
            module.variables.append(_declaration(p))
    return module


def _command(p: Parser) -> tuple[Token, str | None, Raw, list[tuple[Raw | None, list[tuple[Token, Raw]]]]]:
    at = p.tok
    action = None
    if p.accept("["):
        if p.tok.kind == "ident":
            action = p.name().text
        p.expect("]", "']'")
    else:
        raise p.error("'[' starting a command, or a variable declaration")
    guard = p.expression()
    p.expect("->", "'->'")
    updates = []
    while True:
        prob = None
        if not (p.is_("(") and p.peek().kind == "ident" and p.peek(2).text == "'") \
                and not (p.is_("true") and p.peek().text in (";", "+")):
            prob = p.expression()
            p.expect(":", "':' after the update's probability")
        updates.append((prob, _assignments(p)))
        if not p.accept("+"):
            break
    p.expect(";", "';' or '+'")
    return at, action, guard, updates


def _assignments(p: Parser) -> list[tuple[Token, Raw]]:
    if p.accept("true"):
        return []
    out = []
    while True:
        p.expect("(", "'(' starting an assignment (x'=...)")
        var = p.name("the assigned variable")
        p.expect("'", "\"'\" after the assigned variable")
        p.expect("=", "'='")
        out.append((var, p.expression()))
        p.expect(")", "')'")
        if not p.accept("&"):
            return out


# ----------------------------------------------------------------- resolving names

def parse_constants(text: str | None) -> dict[str, str]:
    """``"N=16,MAX=2"`` as ``{"N": "16", "MAX": "2"}``."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ChainError(f"--constants {text}: {part.strip()!r} is not NAME=VALUE")
        out[name.strip()] = value.strip()
    return out


class Scope:
    """The names an expression may use: constants (values), formulas (expressions,
    resolved on first use), variables (types) and, in properties, labels."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.constants: dict[str, Expr] = {}
        self.formulas: dict[str, tuple[Token, Raw]] = {}
        self.resolved: dict[str, Expr] = {}
        self.variables: dict[str, str] = {}
        self.labels: set[str] = set()
        self._resolving: list[str] = []

    def where(self, at: tuple[int, int]) -> str:
        return f"{self.source}:{at[0]}:{at[1]}"

    def expr(self, raw: Raw) -> Expr:
        """``raw`` with its names resolved, typed and folded (a :class:`ChainError`
        naming the position where it cannot be)."""
        kind = raw.kind
        if kind == "num":
            text = raw.text
            if re.fullmatch(r"\d+", text):
                return const(int(text))
            return const(parse_exact(text))
        if kind == "bool":
            return const(raw.text == "true")
        if kind == "label":
            if raw.text not in self.labels:
                known = ", ".join(f'"{n}"' for n in sorted(self.labels)) or "none"
                raise ChainError(f"{self.where(raw.at)}: no label \"{raw.text}\"; the labels: {known}")
            return label(raw.text)
        if kind == "ident":
            return self._name(raw)
        args = [self.expr(a) for a in raw.args]
        op = {"not": "not", "neg": "neg", "ite": "ite"}.get(kind, kind)
        try:
            return make(op, args)
        except ExprError as exc:
            raise ChainError(f"{self.where(raw.at)}: {exc}") from None

    def _name(self, raw: Raw) -> Expr:
        name = raw.text
        if name in self.variables:
            return variable(name, self.variables[name])
        if name in self.constants:
            return self.constants[name]
        if name in self.resolved:
            return self.resolved[name]
        if name in self.formulas:
            if name in self._resolving:
                raise ChainError(f"{self.where(raw.at)}: the formula {name!r} uses itself")
            self._resolving.append(name)
            self.resolved[name] = self.expr(self.formulas[name][1])
            self._resolving.pop()
            return self.resolved[name]
        raise ChainError(f"{self.where(raw.at)}: unknown name {name!r}")

    def value(self, raw: Raw, what: str) -> int:
        """The integer constant ``raw`` (a bound, an initial value)."""
        e = self.expr(raw)
        if e.op != "const" or e.type == "rat" and e.value.denominator != 1:
            raise ChainError(f"{self.where(raw.at)}: {what} must be a constant integer")
        return int(e.value)


def define_constants(scope: Scope, declared: list[tuple[Token, str, Raw | None]],
                     given: dict[str, str], source: str) -> list[str]:
    """Put the ``declared`` constants' values into ``scope``: their own, or the one
    ``given`` (``--constants``). Returns the names without either (the caller refuses
    them, naming them all)."""
    missing = []
    for tok, kind, raw in declared:
        name = tok.text
        at = f"{source}:{tok.line}:{tok.column}"
        if name in scope.constants:
            raise ChainError(f"{at}: a second constant {name!r}")
        if raw is not None:
            if name in given:
                raise ChainError(f"{at}: --constants gives {name}, which the file defines already")
            e = scope.expr(raw)
            if e.op != "const":
                raise ChainError(f"{at}: the constant {name!r} is not a constant expression")
            value = e.value
        elif name in given:
            value = _given(given[name], kind, name)
        else:
            missing.append(name)
            continue
        scope.constants[name] = _typed(value, kind, name, at)
    return missing


def _given(text: str, kind: str, name: str) -> object:
    if kind == "bool":
        if text not in ("true", "false"):
            raise ChainError(f"--constants: {name}={text}: {name} is a bool; give true or false")
        return text == "true"
    try:
        value = parse_exact(text)
    except ValueError:
        raise ChainError(f"--constants: {name}={text}: not a number") from None
    if kind == "int":
        if value.denominator != 1:
            raise ChainError(f"--constants: {name}={text}: {name} is an int; give an integer")
        return int(value)
    return value


def _typed(value: object, kind: str, name: str, at: str) -> Expr:
    if kind == "bool":
        if not isinstance(value, bool):
            raise ChainError(f"{at}: the bool constant {name!r} has the value {value}")
        return const(value)
    if isinstance(value, bool):
        raise ChainError(f"{at}: the {kind} constant {name!r} has a Boolean value")
    if kind == "int":
        if isinstance(value, mpq) and value.denominator != 1:
            raise ChainError(f"{at}: the int constant {name!r} has the value {value}")
        return const(int(value))
    return Expr("const", (), mpq(value), "rat")


@dataclass(frozen=True)
class Model:
    """A PRISM model read and resolved: the :class:`Program`, and the scope its
    properties are read in (constants, formulas, variables, labels)."""

    program: Program
    scope: Scope


def read_model(path: str, given: dict[str, str], text: str | None = None) -> tuple[Model, list[str]]:
    """The PRISM model in ``path`` with the constants ``given``; also the names of
    its constants that have no value (refused by the caller once the properties'
    constants are known too)."""
    if text is None:
        text = _read(path, "model")
    written = _read_model(text, path)
    scope = Scope(path)
    scope.formulas = {name: v for name, v in written.formulas.items()}
    missing = define_constants(scope, written.constants, given, path)
    if missing:
        return Model(_empty(path), scope), missing
    return Model(_program(path, written, scope), scope), []


def _empty(path: str) -> Program:
    return Program(name=Path(path).stem, source=path, variables=(), modules=(), commands=())


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ChainError(f"{path}: no such {what} file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ChainError(f"{path}: cannot read the {what} file ({exc})") from None


def _program(path: str, written: _Written, scope: Scope) -> Program:
    declared: list[tuple[Token, str, Raw | None, Raw | None, Raw | None, str | None]] = \
        [(*d, None) for d in written.globals_]
    for m in written.modules:
        declared += [(*d, m.name) for d in m.variables]
    variables: list[Variable] = []
    seen: dict[str, str] = {}
    for tok, kind, lo, hi, init, module in declared:
        at = f"{path}:{tok.line}:{tok.column}"
        if tok.text in seen or tok.text in scope.constants or tok.text in scope.formulas:
            raise ChainError(f"{at}: the name {tok.text!r} is declared twice")
        seen[tok.text] = kind
        if kind == "bool":
            low, high = 0, 1
            start = 0
            if init is not None:
                e = scope.expr(init)
                if e.op != "const" or e.type != "bool":
                    raise ChainError(f"{at}: the initial value of {tok.text!r} must be a constant "
                                     "true or false")
                start = int(e.value)
        else:
            assert lo is not None and hi is not None
            low = scope.value(lo, f"the lower bound of {tok.text!r}")
            high = scope.value(hi, f"the upper bound of {tok.text!r}")
            if low > high:
                raise ChainError(f"{at}: the range [{low}..{high}] of {tok.text!r} is empty")
            if (wide := too_wide(tok.text, low, high)) is not None:
                raise ChainError(f"{at}: {wide}")
            start = low if init is None else scope.value(init, f"the initial value of {tok.text!r}")
            if not low <= start <= high:
                raise ChainError(f"{at}: the initial value {start} of {tok.text!r} is outside "
                                 f"[{low}..{high}]")
        variables.append(Variable(tok.text, low, high, start, kind == "bool", module))
    # Storm's order: the Booleans, then the integers; globals before the modules'
    variables.sort(key=lambda v: not v.boolean)
    scope.variables = {v.name: "bool" if v.boolean else "int" for v in variables}
    owner = {v.name: v.module for v in variables}

    commands: list[Command] = []
    modules: list[tuple[str, frozenset[str]]] = []
    for m in written.modules:
        actions = frozenset(a for _, a, _, _ in m.commands if a is not None)
        modules.append((m.name, actions))
        for tok, action, guard_raw, updates_raw in m.commands:
            at = f"{path}:{tok.line}:{tok.column}"
            guard = _typed_expr(scope, guard_raw, "bool", "a guard")
            updates = []
            for prob_raw, assigns in updates_raw:
                prob = const(1) if prob_raw is None else scope.expr(prob_raw)
                if prob.type == "bool":
                    raise ChainError(f"{scope.where(prob_raw.at) if prob_raw else at}: a "
                                     "probability must be a number")
                assignments = []
                for var_tok, raw in assigns:
                    v = var_tok.text
                    vat = f"{path}:{var_tok.line}:{var_tok.column}"
                    if v not in scope.variables:
                        raise ChainError(f"{vat}: {v!r} is not a variable")
                    if owner[v] is not None and owner[v] != m.name:
                        raise ChainError(f"{vat}: the module {m.name!r} assigns {v!r} of the module "
                                         f"{owner[v]!r}")
                    if any(v == a for a, _ in assignments):
                        raise ChainError(f"{vat}: {v!r} is assigned twice in one update")
                    value = _typed_expr(scope, raw, scope.variables[v], f"the value of {v!r}")
                    assignments.append((v, value))
                updates.append(Update(prob, tuple(assignments)))
            commands.append(Command(m.name, action, guard, tuple(updates), at))

    labels: dict[str, Expr] = {}
    for tok, name, raw in written.labels:
        if name in labels or name in ("init", "deadlock"):
            raise ChainError(f"{path}:{tok.line}:{tok.column}: a second label \"{name}\"")
        labels[name] = _typed_expr(scope, raw, "bool", f'the label "{name}"')
    scope.labels = set(labels) | {"init", "deadlock"}

    rewards: dict[str, tuple[RewardItem, ...]] = {}
    for tok, name, items in written.rewards:
        if name in rewards:
            raise ChainError(f"{path}:{tok.line}:{tok.column}: a second reward structure \"{name}\"")
        out = []
        for item_at, action, guard_raw, value_raw in items:
            at = f"{path}:{item_at.line}:{item_at.column}"
            guard = _typed_expr(scope, guard_raw, "bool", "a reward's guard")
            value = scope.expr(value_raw)
            if value.type == "bool":
                raise ChainError(f"{scope.where(value_raw.at)}: a reward must be a number")
            out.append(RewardItem(action, guard, value, at))
        rewards[name] = tuple(out)

    init = None if written.init is None else _typed_expr(scope, written.init, "bool", "init")
    if init is not None:
        for tok, *_, start, _ in declared:
            if start is not None:
                raise ChainError(f"{path}:{tok.line}:{tok.column}: the initial value of "
                                 f"{tok.text!r} beside init ... endinit; give one or the other")
    return Program(name=Path(path).stem, source=path, variables=tuple(variables),
                   modules=tuple(modules), commands=tuple(commands), init=init, labels=labels,
                   rewards=rewards)


def _typed_expr(scope: Scope, raw: Raw, type_: str, what: str) -> Expr:
    e = scope.expr(raw)
    if (type_ == "bool") != (e.type == "bool"):
        raise ChainError(f"{scope.where(raw.at)}: {what} must be "
                         f"{'true or false' if type_ == 'bool' else 'a number'}")
    if type_ == "int" and e.type == "rat":
        raise ChainError(f"{scope.where(raw.at)}: {what} must be an integer (it is a rational)")
    return e


# ----------------------------------------------------------------- properties

@dataclass(frozen=True)
class Property:
    """One property as written: its name (None: unnamed), the operator ``P``, ``R`` or
    ``T`` (or ``S``, ``other``: refused later by name), the reward's name (``R{"r"}``),
    the bound (``(">=", 1)``; None for ``=?``), the path formula's shape (``"F"``,
    ``"U"``, or what else it is in words) with its left and right state formulas, the
    filter's function and states (``"values"``, ``"init"`` where there is none), its
    text, and where it starts."""

    name: str | None
    operator: str
    reward: str | None
    bound: tuple[str, mpq] | None
    shape: str
    left: Expr | None
    right: Expr | None
    right_text: str
    function: str
    states: str
    text: str
    where: str
    #: the step bound ``k`` of ``F<=k``, ``U<=k``, ``C<=k``, ``I=k`` (``F<k`` is
    #: ``F<=k-1``); None: unbounded
    steps: int | None = None
    #: the left state formula as written (``phi`` of ``phi U psi``), for a label's name
    left_text: str = ""


_PATH_WORDS = {"G": "globally (G)", "X": "next (X)", "W": "weak until (W)", "R": "release (R)"}


def read_properties(path: str, model: Model | Scope, given: dict[str, str],
                    text: str | None = None) -> tuple[list[Property], list[str], dict[str, Expr]]:
    """The properties of the file ``path`` over ``model`` (or over the names of a
    scope: a chain file's labels), with the constants ``given``; also the names of the
    file's constants without a value, and the labels the file defines."""
    if text is None:
        text = _read(path, "properties")
    p = Parser(text, path)
    scope = model.scope if isinstance(model, Model) else model
    scope.source = path
    props: list[Property] = []
    missing: list[str] = []
    labels: dict[str, Expr] = {}
    while p.tok.kind != "end":
        if p.accept("const"):
            decl = _constant(p)
            missing += define_constants(scope, [decl], given, path)
            continue
        if p.accept("label"):
            name = p.string('the label\'s name in quotes ("name")')
            p.expect("=", "'='")
            raw = p.expression()
            p.expect(";", "';'")
            if not missing:
                labels[name.text[1:-1]] = _typed_expr(scope, raw, "bool", f"the label {name.text}")
            scope.labels.add(name.text[1:-1])
            continue
        if p.accept("formula"):
            name = p.name("the formula's name")
            p.expect("=", "'='")
            scope.formulas[name.text] = (name, p.expression())
            p.expect(";", "';'")
            continue
        start = p.i
        name = None
        if p.tok.kind == "string" and p.peek().text == ":":
            name = p.tok.text[1:-1]
            p.i += 2
        first = p.tok
        raw_prop = _property(p)
        text_of = _text(p, start if name is None else start + 2, p.i)
        p.accept(";")
        if missing:
            continue
        props.append(_resolve_property(scope, raw_prop, name, text_of, f"{path}:{first.line}:{first.column}"))
    return props, missing, labels


def _text(p: Parser, lo: int, hi: int) -> str:
    """The source text of the tokens ``lo .. hi-1``, its white space made single."""
    last = p.toks[hi - 1]
    return " ".join(p.text[p.toks[lo].offset:last.offset + len(last.text)].split())


def _property(p: Parser) -> dict[str, object]:
    """A property's parts, as written (the names not yet resolved)."""
    if p.is_("filter") and p.peek().text == "(":
        at = p.tok
        p.i += 2
        function = p.name("a filter function (min, max, avg, forall, ...)").text
        p.expect(",", "','")
        inner = _property(p)
        states: Raw | None = None
        if p.accept(","):
            states = p.expression()
        p.expect(")", "')'")
        if "filter" in inner:
            raise ChainError(f"{p.at(at)}: a filter inside a filter")
        return {**inner, "filter": function, "states": states}
    tok = p.tok
    if tok.kind == "ident" and tok.text in ("P", "R", "T", "S", "Pmin", "Pmax", "Rmin", "Rmax",
                                            "Tmin", "Tmax", "LRA") and \
            p.peek().text in ("=?", "{", "[", "<", "<=", ">", ">=", "min", "max", "="):
        op = tok.text[0] if tok.text != "LRA" else "S"
        p.i += 1
        reward = None
        if op == "R" and p.accept("{"):
            reward_tok = p.tok
            if reward_tok.kind == "string":
                reward = reward_tok.text[1:-1]
                p.i += 1
            else:
                raise p.error('a reward structure\'s name in quotes (R{"name"})')
            p.expect("}", "'}'")
        p.accept("min") or p.accept("max")
        bound = None
        if not p.accept("=?"):
            if p.tok.kind == "op" and p.tok.text in ("<", "<=", ">", ">="):
                cmp = p.tok.text
                p.i += 1
                bound = (cmp, p._sum())
            else:
                raise p.error("'=?' or a bound (>=, >, <=, <) after the operator")
        p.expect("[", "'['")
        if op == "S":  # the long run of a state formula: S=? [phi]
            path: dict[str, object] = {"shape": "S", "left": None, "right": p.expression()}
        else:
            path = _path(p)
        p.expect("]", "']'")
        return {"operator": op, "reward": reward, "bound": bound, "at": tok, **path}
    expr = p.expression()
    return {"operator": "state", "reward": None, "bound": None, "shape": "a state formula",
            "left": None, "right": expr, "at": tok}


def _step_bound(p: Parser, ops: tuple[str, ...]) -> tuple[str, Raw] | None:
    """A step bound ``<=k`` or ``<k`` (``=k`` for ``I``) where one of ``ops`` follows,
    else None (a bound of another kind is left to the caller)."""
    if p.tok.kind == "op" and p.tok.text in ops:
        op = p.tok.text
        p.i += 1
        return op, p._sum()
    return None


def _path(p: Parser) -> dict[str, object]:
    tok = p.tok
    if tok.kind == "ident" and tok.text == "F":
        p.i += 1
        steps = _step_bound(p, ("<=", "<"))
        if steps is None and p.tok.kind == "op" and p.tok.text in (">", ">=", "["):
            _skip(p)
            return {"shape": "a lower or interval time bound (F>=k, F[a,b])", "left": None,
                    "right": None}
        return {"shape": "F", "left": None, "right": p.expression(), "steps": steps}
    if tok.kind == "ident" and tok.text == "X" and p.peek().text not in ("U", "=", "]"):
        p.i += 1
        return {"shape": "X", "left": None, "right": p.expression()}
    if tok.kind == "ident" and tok.text == "C" and p.peek().text in ("<=", "<"):
        p.i += 1
        return {"shape": "C", "left": None, "right": None, "steps": _step_bound(p, ("<=", "<"))}
    if tok.kind == "ident" and tok.text == "I" and p.peek().text == "=":
        p.i += 1
        return {"shape": "I", "left": None, "right": None, "steps": _step_bound(p, ("=",))}
    if tok.kind == "ident" and tok.text in ("C", "S", "LRA") and p.peek().text == "]":
        p.i += 1
        return {"shape": "a total reward (C)" if tok.text == "C" else "a long-run average (S, LRA)",
                "left": None, "right": None}
    if tok.kind == "ident" and tok.text in _PATH_WORDS and tok.text != "R":
        _skip(p)
        return {"shape": _PATH_WORDS[tok.text], "left": None, "right": None}
    left = p.expression()
    if p.tok.kind == "ident" and p.tok.text == "U":
        p.i += 1
        steps = _step_bound(p, ("<=", "<"))
        if steps is None and p.tok.kind == "op" and p.tok.text in (">", ">=", "["):
            _skip(p)
            return {"shape": "a lower or interval time bound (U>=k, U[a,b])", "left": None,
                    "right": None}
        return {"shape": "U", "left": left, "right": p.expression(), "steps": steps}
    if p.tok.kind == "ident" and p.tok.text in _PATH_WORDS:
        _skip(p)
        return {"shape": "an LTL formula", "left": None, "right": None}
    return {"shape": "a state formula where a path formula belongs", "left": None, "right": None}


def _skip(p: Parser) -> None:
    """Skip to the ``]`` that closes the operator (a shape refused later, by name)."""
    depth = 0
    while p.tok.kind != "end":
        if p.is_("[") or p.is_("("):
            depth += 1
        elif p.is_("]") or p.is_(")"):
            if depth == 0:
                return
            depth -= 1
        p.i += 1


def _resolve_property(scope: Scope, raw: dict[str, object], name: str | None, text: str,
                      where: str) -> Property:
    bound = None
    if raw.get("bound") is not None:
        cmp, value_raw = raw["bound"]  # type: ignore[misc]
        value = scope.expr(value_raw)
        if value.op != "const" or value.type == "bool":
            raise ChainError(f"{scope.where(value_raw.at)}: a bound must be a constant number")
        bound = (cmp, mpq(value.value))
    left = raw.get("left")
    right = raw.get("right")
    left_e = None if left is None else _typed_expr(scope, left, "bool", "a state formula")  # type: ignore[arg-type]
    right_e = None if right is None else _typed_expr(scope, right, "bool", "a state formula")  # type: ignore[arg-type]
    steps = None
    if raw.get("steps") is not None:
        op, steps_raw = raw["steps"]  # type: ignore[misc]
        k = scope.expr(steps_raw)
        if k.op != "const" or k.type != "int" or k.value < (1 if op == "<" else 0):
            raise ChainError(f"{scope.where(steps_raw.at)}: a step bound must be a constant "
                             f"integer {'>= 1' if op == '<' else '>= 0'}")
        steps = int(k.value) - (1 if op == "<" else 0)
    states_raw = raw.get("states")
    if "filter" not in raw:
        states = '"init"'
    elif states_raw is None:
        states = "all states"
    else:
        states = f'"{states_raw.text}"' if states_raw.kind == "label" else "an expression"  # type: ignore[union-attr]
    right_text = _raw_text(right) if right is not None else ""  # type: ignore[arg-type]
    return Property(name=name, operator=str(raw["operator"]), reward=raw.get("reward"),  # type: ignore[arg-type]
                    bound=bound, shape=str(raw["shape"]), left=left_e, right=right_e,
                    right_text=right_text, function=str(raw.get("filter", "values")),
                    states=states, text=text, where=where, steps=steps,
                    left_text=_raw_text(left) if left is not None else "")  # type: ignore[arg-type]


def _raw_text(r: Raw) -> str:
    """A state formula as the user wrote it, for a label's name."""
    if r.kind in ("num", "ident"):
        return r.text
    if r.kind == "bool":
        return r.text
    if r.kind == "label":
        return f'"{r.text}"'
    if r.kind == "not":
        return f"!{_raw_text(r.args[0])}"
    if r.kind == "neg":
        return f"-{_raw_text(r.args[0])}"
    if r.kind == "ite":
        return f"({_raw_text(r.args[0])} ? {_raw_text(r.args[1])} : {_raw_text(r.args[2])})"
    if r.kind in _FUNCTIONS:
        return f"{r.kind}({', '.join(_raw_text(a) for a in r.args)})"
    return f"({_raw_text(r.args[0])} {r.kind} {_raw_text(r.args[1])})"

