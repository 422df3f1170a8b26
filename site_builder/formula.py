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
from typing import Any

MAX_POWER = 64
MAX_ITEMS = 100_000
MAX_STEPS = 1_000_000
"""Evaluation steps one formula may take: bounds nested comprehensions."""
MAX_TEXT = 1_000_000
MAX_INT_BITS = 4096


class FormulaError(Exception):
    """A formula cannot be parsed, or cannot be evaluated on this record (a missing input)."""


def _days_between(start: str, end: str) -> float:
    """Return the days from one ISO time to another."""
    return (_time(end) - _time(start)).total_seconds() / 86400


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
    "abs": abs,
    "all": all,
    "any": any,
    "ceil": math.ceil,
    "floor": math.floor,
    "len": len,
    "max": max,
    "min": min,
    "round": round,
    "sum": sum,
    "sorted": sorted,
    "list": list,
    "unique": _unique,
    "intersection": lambda a, b: [item for item in _unique(a) if item in list(b)],
    "first": lambda items: next(iter(items)),
    "days_between": _days_between,
    "time": lambda value: _time(value).timestamp(),
    "matches": lambda pattern, value: re.fullmatch(pattern, str(value)) is not None,
    "contains": lambda text, part: str(part) in str(text),
    "replace": lambda text, old, new: str(text).replace(str(old), str(new)),
    "str": lambda value: str(value).lower() if isinstance(value, bool) else str(value),
}
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ALLOWED = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.List,
    ast.Tuple,
    ast.GeneratorExp,
    ast.ListComp,
    ast.comprehension,
    ast.Store,
    *_BINARY,
    *_COMPARE,
)


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
        return _Evaluator(scopes, dict(bindings), [0]).visit(parse(formula).body)
    except FormulaError:
        raise
    except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, StopIteration) as error:
        raise FormulaError(f"{type(error).__name__}: {error}") from None


def _bounded(value: Any) -> Any:
    """Refuse results too large to be a record's claim: huge integers, endless text, infinity."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise FormulaError("a number grew too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise FormulaError("a number overflowed")
    if isinstance(value, str | list) and len(value) > MAX_TEXT:
        raise FormulaError("a value grew too long")
    return value


class _Evaluator:
    """Walk a checked AST and compute its value over JSON data."""

    def __init__(
        self, scopes: Sequence[Mapping[str, Any]], bindings: dict[str, Any], steps: list[int]
    ) -> None:
        self.scopes = scopes
        self.bindings = bindings
        self.steps = steps

    def visit(self, node: ast.AST) -> Any:
        self.steps[0] += 1
        if self.steps[0] > MAX_STEPS:
            raise FormulaError(f"takes more than {MAX_STEPS:,} steps")
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise FormulaError(f"'{type(node).__name__}' is not allowed in a formula")
        return _bounded(method(node))

    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        if node.id in self.bindings:
            return self.bindings[node.id]
        if node.id in {"true", "false", "null"}:
            return {"true": True, "false": False, "null": None}[node.id]
        for scope in self.scopes:
            if node.id in scope:
                return scope[node.id]
        raise FormulaError(f"no input named '{node.id}'")

    def _Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        if not isinstance(value, Mapping) or node.attr not in value:
            raise FormulaError(f"no field '{node.attr}'")
        return value[node.attr]

    def _Subscript(self, node: ast.Subscript) -> Any:
        value, index = self.visit(node.value), self.visit(node.slice)
        if not isinstance(value, Mapping | list) or isinstance(index, bool):
            raise FormulaError("only objects and lists can be indexed")
        return value[index]

    def _BinOp(self, node: ast.BinOp) -> Any:
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_POWER:
            raise FormulaError("exponent too large")
        if isinstance(node.op, ast.Mult | ast.Mod) and any(
            isinstance(v, str | list) for v in (left, right)
        ):
            raise FormulaError("text and lists cannot be multiplied or formatted")
        return _BINARY[type(node.op)](left, right)

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        return -value if isinstance(node.op, ast.USub) else +value

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        if isinstance(node.op, ast.And):
            return all(self.visit(value) for value in node.values)
        return any(self.visit(value) for value in node.values)

    def _Compare(self, node: ast.Compare) -> bool:
        left = self.visit(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.visit(comparator)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp) -> Any:
        return self.visit(node.body) if self.visit(node.test) else self.visit(node.orelse)

    def _Call(self, node: ast.Call) -> Any:
        function = FUNCTIONS[node.func.id]  # type: ignore[attr-defined]
        return function(*(self.visit(argument) for argument in node.args))

    def _List(self, node: ast.List) -> list[Any]:
        return [self.visit(element) for element in node.elts]

    _Tuple = _List

    def _GeneratorExp(self, node: ast.GeneratorExp) -> list[Any]:
        (loop,) = node.generators
        if not isinstance(loop.target, ast.Name):
            raise FormulaError("a comprehension loops over one name")
        items = list(self.visit(loop.iter))[:MAX_ITEMS]
        results = []
        for item in items:
            inner = _Evaluator(self.scopes, {**self.bindings, loop.target.id: item}, self.steps)
            if all(inner.visit(condition) for condition in loop.ifs):
                results.append(inner.visit(node.elt))
        return results

    _ListComp = _GeneratorExp
