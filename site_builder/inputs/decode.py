"""Decode one input file's bytes: JSON records, YAML settings, Markdown with front matter,
templates and files copied as they are. Limits are checked here; a `ReadError` says where a
file went wrong. The only module that imports yaml.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

MAX_RECORD_BYTES = 8 * 1024 * 1024
MAX_DOC_BYTES = 1024 * 1024
MAX_STATIC_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
"""Deeper JSON nesting is refused: no real record needs it, and it would exhaust recursion."""
MAX_INTEGER = 10**30
FENCE = "---"
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate (lone or half of a pair); without one, no string holds one."""


_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML has it (ten times faster; it refuses nesting past 1,000
levels), with PyYAML's safe constructor either way."""


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[misc, valid-type]
    """A safe loader that refuses duplicate mapping keys instead of keeping the last, anchors
    and aliases (`&a`, `*a`: a few lines of them can stand for billions of values), the types
    JSON has no word for (`!!set`, whose order changes from run to run, `!!omap`, `!!pairs`,
    `!!binary`) and numbers that are not finite (`.inf`, `.nan`)."""

    def construct_document(self, node: yaml.Node) -> Any:
        _refuse_aliases(node)
        return super().construct_document(node)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a finite number", node.start_mark
            )
        return value

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as error:  # published: 2026-02-30
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a date or time: {error}", node.start_mark
            ) from None

    def refuse_type(self, node: yaml.Node) -> None:
        name = node.tag.rpartition(":")[2]
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"the !!{name} type is not allowed: write a list, mapping or text",
            node.start_mark,
        )

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:
                break  # unhashable key: SafeLoader reports it with its own message
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


for _tag in ("set", "omap", "pairs", "binary"):
    _UniqueKeyLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _UniqueKeyLoader.refuse_type)
_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _UniqueKeyLoader.construct_yaml_float)
_UniqueKeyLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", _UniqueKeyLoader.construct_yaml_timestamp
)


def _refuse_aliases(root: yaml.Node) -> None:
    """Refuse a document in which one node is reached twice: an alias (`*a`) of an anchor."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise yaml.constructor.ConstructorError(
                None, None, "anchors and aliases (&, *) are not allowed", node.start_mark
            )
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)


class ReadError(Exception):
    """A file could not be decoded; `location` says where."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


def _text(raw: bytes, limit: int) -> str:
    """Decode UTF-8 within a size limit."""
    if len(raw) > limit:
        raise ReadError("file", f"is {len(raw):,} bytes; the limit is {limit:,}")
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")  # the mark some editors write first
    except UnicodeDecodeError as error:
        raise ReadError(f"byte {error.start}", "invalid UTF-8") from None


def _refuse_constant(name: str) -> None:
    """JSON has no NaN or Infinity; Python's parser accepts them unless told not to."""
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build a JSON object, refusing duplicate keys that would silently drop data."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"duplicate key {key!r}")
        data[key] = value
    return data


def decode_record(raw: bytes) -> dict[str, Any]:
    """Decode one record file into a JSON object."""
    text = _text(raw, MAX_RECORD_BYTES)
    try:
        data = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        raise ReadError(
            f"line {error.lineno} column {error.colno}", f"invalid JSON: {error.msg}"
        ) from None
    except ValueError as error:
        message = str(error)
        if "integer string conversion" in message:
            message = "an integer has too many digits"
        raise ReadError("JSON", message) from None
    except RecursionError:
        raise ReadError("JSON", "nested too deeply") from None
    if not isinstance(data, dict):
        raise ReadError("<root>", f"a record must be a JSON object, not {_json_kind(data)}")
    if _may_be_refused(data, strings=_SURROGATE_ESCAPE.search(text) is not None):
        _check_json_values(data)
    return data


def _json_kind(value: Any) -> str:
    """Return what JSON calls the kind of a decoded value: null, true, an array..."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def _may_be_refused(data: Any, *, strings: bool) -> bool:
    """Whether `_check_json_values` could refuse `data`: one pass, level by level, that names
    no paths (most records pass it untouched). Strings are searched only when `strings`: a
    lone surrogate can only come from a `\\uD800`-style escape in the file's text."""
    level, depth = [data], 0
    while level:
        if depth > MAX_DEPTH:
            return True
        below: list[Any] = []
        for value in level:
            kind = type(value)
            if kind is dict:
                below.extend(value.values())
                if strings and any(_SURROGATE.search(key) for key in value):
                    return True
            elif kind is list:
                below.extend(value)
            elif kind is str:
                if strings and _SURROGATE.search(value):
                    return True
            elif (kind is int and abs(value) >= MAX_INTEGER) or (
                kind is float and not math.isfinite(value)
            ):
                return True
        level, depth = below, depth + 1
    return False


def _check_json_values(data: Any) -> None:
    """Refuse nesting deeper than MAX_DEPTH, lone surrogates, integers too large to show and
    numbers too large for a float (`1e400` reads as infinity), naming where."""
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        where = path or "<root>"
        if depth > MAX_DEPTH:
            raise ReadError(where, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, child in value.items():
                _check_text(key, where)
                stack.append((child, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(value, list):
            stack.extend((child, f"{path}.{index}", depth + 1) for index, child in enumerate(value))
        elif isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_INTEGER:
            raise ReadError(where, f"integer has more than {len(str(MAX_INTEGER)) - 1} digits")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ReadError(where, "number is too large to be a finite number")


def _check_text(text: str, where: str) -> None:
    """Refuse strings holding lone surrogates (`\\ud800`): they are not text and cannot be written."""
    if _SURROGATE.search(text):
        raise ReadError(where, "contains a lone surrogate (\\ud800-\\udfff), which is not text")


def _yaml(text: str, first_line: int) -> Any:
    """Parse YAML safely; errors name the line in the file."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: no custom tags
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = first_line + mark.line if mark else first_line
        raise ReadError(f"line {line}", f"invalid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise ReadError("YAML", f"invalid YAML: {error}") from None
    except ValueError as error:  # e.g. an impossible date: published: 2026-02-30
        message = str(error)
        if "integer string conversion" in message:
            message = "an integer has too many digits"
        raise ReadError("YAML", f"invalid value: {message}") from None
    except RecursionError:
        raise ReadError("YAML", "nested too deeply") from None


def static_file(raw: bytes) -> bytes:
    """Keep a pass-through file as it is, within a size limit."""
    if len(raw) > MAX_STATIC_BYTES:
        raise ReadError("file", f"is {len(raw):,} bytes; the limit is {MAX_STATIC_BYTES:,}")
    return raw


def decode_template(raw: bytes) -> str:
    """Decode a template: UTF-8 text within the size limit of a guide's prose."""
    return _text(raw, MAX_DOC_BYTES)


def decode_settings(raw: bytes) -> dict[str, Any]:
    """Decode a YAML settings file (site.yaml, rules.yaml) into a mapping."""
    data = _yaml(_text(raw, MAX_DOC_BYTES), first_line=1)
    if not isinstance(data, dict):
        raise ReadError("<root>", "must be a YAML mapping")
    return data


def decode_doc(raw: bytes) -> tuple[dict[str, Any], str, int]:
    """Split a guide into its front matter mapping, its Markdown body and the body's line."""
    lines = _text(raw, MAX_DOC_BYTES).splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != FENCE:
        raise ReadError("line 1", "front matter missing: the file must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == FENCE)
    except StopIteration:
        raise ReadError("front matter", "no closing '---' line") from None
    front = _yaml("".join(lines[1:end]), first_line=2)
    if not isinstance(front, dict):
        raise ReadError("front matter", "must be a YAML mapping of fields")
    return front, "".join(lines[end + 1 :]), end + 2


def doc_body(raw: bytes, body_line: int) -> str:
    """Return the Markdown body of a guide `decode_doc` read before, from its line."""
    return "".join(_text(raw, MAX_DOC_BYTES).splitlines(keepends=True)[body_line - 1 :])


@cache
def decoder_digest() -> str:
    """Return a digest of this module and the YAML library's version: what decoded front
    matter depends on (`kept_fronts` keeps it under this)."""
    return hashlib.sha256(Path(__file__).read_bytes() + yaml.__version__.encode()).hexdigest()
