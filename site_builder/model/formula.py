"""A small, safe evaluator for the verification rules' formulas; nothing is passed to eval().

Formulas are Python-like expressions over a record's JSON values:

    (fusionOnTokensPerSecond - fusionOffTokensPerSecond) / fusionOffTokensPerSecond * 100
    all(row.fusionOffTokensPerSecond > 0 for row in speedRows)
    len(unique(row.socket for row in topologyExamples.tp8Pp2)) == 16

Allowed: numbers, strings, True/False/None, names, `a.b` and `a[i]` lookups into JSON objects
and lists, arithmetic, comparisons, and/or/not, `x if c else y`, list literals, one-`for`
comprehensions, and the functions in FUNCTIONS. Anything else is refused when the rule is
parsed. A name is looked up in the object that holds the checked field, then in each
enclosing object up to the record itself.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import cache
from itertools import chain, repeat
from typing import Any

MAX_POWER = 64
MAX_ITEMS = 100_000
MAX_STEPS = 1_000_000
"""Evaluation steps one formula may take: bounds nested comprehensions."""
MAX_TEXT = 1_000_000
MAX_INT_BITS = 4096


class FormulaError(Exception):
    """A formula cannot be parsed, or cannot be evaluated on this record (a missing input)."""


def _time(value: str) -> datetime:
    """Parse an ISO 8601 time with a zone."""
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise FormulaError(f"'{value}' has no time zone")
    return parsed


def _unique(items: Iterable[Any]) -> list[Any]:
    """Return the distinct items, in first-seen order."""
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs, "all": all, "any": any, "ceil": math.ceil, "floor": math.floor, "len": len,
    "max": max, "min": min, "round": round, "sum": sum, "sorted": sorted, "list": list,
    "unique": _unique,
    "intersection": lambda a, b: [item for item in _unique(a) if item in list(b)],
    "first": lambda items: next(iter(items)),
    "days_between": lambda start, end: (_time(end) - _time(start)).total_seconds() / 86400,
    "time": lambda value: _time(value).timestamp(),
    "matches": lambda pattern, value: re.fullmatch(pattern, str(value)) is not None,
    "contains": lambda text, part: str(part) in str(text),
    "replace": lambda text, old, new: str(text).replace(str(old), str(new)),
    "str": lambda value: str(value).lower() if isinstance(value, bool) else str(value),
}  # fmt: skip
_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_ALLOWED = (
    ast.Expression, ast.Constant, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.BinOp,
    ast.UnaryOp, ast.USub, ast.UAdd, ast.Not, ast.BoolOp, ast.And, ast.Or, ast.Compare, ast.IfExp,
    ast.Call, ast.List, ast.Tuple, ast.GeneratorExp, ast.ListComp, ast.comprehension, ast.Store,
    *_BINARY, *_COMPARE,
)  # fmt: skip


@cache
def parse(formula: str) -> ast.Expression:
    """Parse a formula, refusing every construct outside the small language."""
    try:
        tree = ast.parse(formula, mode="eval")
    except SyntaxError as error:
        raise FormulaError(f"invalid formula: {error.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise FormulaError(f"'{type(node).__name__}' is not allowed in a formula")
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords
        ):
            raise FormulaError("only the listed functions may be called, without keywords")
        if isinstance(node, ast.Attribute | ast.Name) and "__" in getattr(
            node, "attr", getattr(node, "id", "")
        ):
            raise FormulaError("names with '__' are not allowed")
        if isinstance(node, ast.comprehension) and (
            node.is_async or len(node.ifs) > 1 or not isinstance(node.target, ast.Name)
        ):
            raise FormulaError("a comprehension loops over one name, with at most one 'if'")
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) != 1:
            raise FormulaError("a comprehension may have only one 'for'")
    return tree


def evaluate(formula: str, scopes: Sequence[Mapping[str, Any]], bindings: Mapping[str, Any]) -> Any:
    """Evaluate a formula; names resolve in `bindings`, then in `scopes` (innermost first)."""
    try:
        return _compiled(formula)(_Env(dict(bindings), scopes))
    except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, StopIteration) as error:
        raise FormulaError(f"{type(error).__name__}: {error}") from None


def _bounded(value: Any) -> Any:
    """Refuse results too large to be a record's claim: huge integers, endless text, infinity."""
    kind = type(value)  # the usual JSON values first, quickly
    if (kind is int and value.bit_length() <= MAX_INT_BITS) or kind is bool or value is None:
        return value
    if (kind is float and math.isfinite(value)) or kind is dict:
        return value
    if (kind is str or kind is list) and len(value) <= MAX_TEXT:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise FormulaError("a number grew too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise FormulaError("a number overflowed")
    if isinstance(value, str | list) and len(value) > MAX_TEXT:
        raise FormulaError("a value grew too long")
    return value


class _Env:
    """One evaluation: its bindings, its scopes (innermost first) and its step budget."""

    __slots__ = ("bindings", "scopes", "steps")

    def __init__(self, bindings: dict[str, Any], scopes: Sequence[Mapping[str, Any]]) -> None:
        self.bindings, self.scopes = bindings, scopes
        self.steps = chain(repeat(None, MAX_STEPS), iter(_runaway, None))


def _runaway() -> None:
    """Refuse the step after the last one allowed (env.steps calls it after MAX_STEPS Nones)."""
    raise FormulaError(f"takes more than {MAX_STEPS:,} steps")


# A compiled node: a closure over its compiled parts that takes its step first, as the walker
# counted each node it entered, so `next(env.steps) or value` goes on to compute the value.
_Run = Callable[[_Env], Any]
_LITERALS = {"true": True, "false": False, "null": None}
_UNARY = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos}


@cache
def _compiled(formula: str) -> _Run:
    """Parse and check a formula once, then turn its tree into closures (nothing is eval()ed)."""
    return _compile(parse(formula).body)


def _compile(node: Any) -> _Run:
    """Return the closure that computes a checked node's value."""
    kind = type(node)
    if kind is ast.Constant:
        value = node.value
        try:
            _bounded(value)
        except FormulaError:
            return lambda env: next(env.steps) or _bounded(value)  # refused only when reached
        return lambda env: next(env.steps) or value
    if kind is ast.UnaryOp:
        operand, op = _compile(node.operand), _UNARY[type(node.op)]
        return lambda env: next(env.steps) or _bounded(op(operand(env)))
    if kind is ast.IfExp:
        test, body, orelse = _compile(node.test), _compile(node.body), _compile(node.orelse)
        return lambda env: next(env.steps) or (body(env) if test(env) else orelse(env))
    if kind is ast.Call:
        function, arguments = FUNCTIONS[node.func.id], [_compile(a) for a in node.args]
        return lambda env: next(env.steps) or _bounded(function(*[a(env) for a in arguments]))
    if kind is ast.List or kind is ast.Tuple:
        elements = [_compile(element) for element in node.elts]
        return lambda env: next(env.steps) or _bounded([element(env) for element in elements])
    if kind is ast.Name or kind is ast.Attribute or kind is ast.Subscript:
        return _lookup(node)
    if kind is ast.BinOp or kind is ast.BoolOp or kind is ast.Compare:
        return _operation(node)
    return _comprehension(node)  # the only node left after parse(): a one-`for` comprehension


def _lookup(node: ast.Name | ast.Attribute | ast.Subscript) -> _Run:
    """A name's value, an object's field or an object's or list's item."""
    if isinstance(node, ast.Name):
        name = node.id

        def named(env: _Env) -> Any:
            next(env.steps)
            if name in env.bindings:
                return _bounded(env.bindings[name])
            if name in _LITERALS:
                return _LITERALS[name]
            for scope in env.scopes:
                if name in scope:
                    return _bounded(scope[name])
            raise FormulaError(f"no input named '{name}'")

        return named
    value_of = _compile(node.value)
    if isinstance(node, ast.Attribute):
        attr = node.attr

        def field(env: _Env) -> Any:
            next(env.steps)
            value = value_of(env)
            if not (type(value) is dict or isinstance(value, Mapping)) or attr not in value:
                raise FormulaError(f"no field '{attr}'")
            return _bounded(value[attr])

        return field
    index_of = _compile(node.slice)

    def item(env: _Env) -> Any:
        next(env.steps)
        value, index = value_of(env), index_of(env)
        if not isinstance(value, Mapping | list) or isinstance(index, bool):
            raise FormulaError("only objects and lists can be indexed")
        return _bounded(value[index])

    return item


def _operation(node: ast.BinOp | ast.BoolOp | ast.Compare) -> _Run:
    """Arithmetic; `and`/`or` and chained comparisons, True or False, stopping once decided."""
    if isinstance(node, ast.BinOp):
        left_of, right_of, op = _compile(node.left), _compile(node.right), type(node.op)
        function, power, repeats = _BINARY[op], op is ast.Pow, op is ast.Mult or op is ast.Mod

        def arithmetic(env: _Env) -> Any:
            next(env.steps)
            left, right = left_of(env), right_of(env)
            if power and abs(right) > MAX_POWER:
                raise FormulaError("exponent too large")
            if repeats and (isinstance(left, str | list) or isinstance(right, str | list)):
                raise FormulaError("text and lists cannot be multiplied or formatted")
            return _bounded(function(left, right))

        return arithmetic
    if isinstance(node, ast.BoolOp):
        values_of, conjunction = [_compile(v) for v in node.values], isinstance(node.op, ast.And)

        def boolean(env: _Env) -> bool:
            next(env.steps)
            for value_of in values_of:  # `and` stops at a false value, `or` at a true one
                if (not value_of(env)) is conjunction:
                    return not conjunction
            return conjunction

        return boolean
    left_of, ops = _compile(node.left), [_COMPARE[type(op)] for op in node.ops]
    pairs = list(zip(ops, [_compile(right) for right in node.comparators], strict=True))

    def compare(env: _Env) -> bool:
        next(env.steps)
        left = left_of(env)
        for op, right_of in pairs:
            right = right_of(env)
            if not op(left, right):
                return False
            left = right
        return True

    return compare


def _comprehension(node: ast.GeneratorExp | ast.ListComp) -> _Run:
    """The first MAX_ITEMS items, each bound to the loop's name over the outer bindings."""
    (loop,) = node.generators
    name, items_of, element_of = loop.target.id, _compile(loop.iter), _compile(node.elt)
    test_of = _compile(loop.ifs[0]) if loop.ifs else None

    def run(env: _Env) -> list[Any]:
        next(env.steps)
        items, outer, results = list(items_of(env))[:MAX_ITEMS], env.bindings, []
        env.bindings = inner = {**outer}  # the loop's own bindings, the name rebound per item
        for item in items:
            inner[name] = item
            if test_of is None or test_of(env):
                results.append(element_of(env))
        env.bindings = outer  # (an error ends the whole evaluation: nothing to restore then)
        return _bounded(results)

    return run
