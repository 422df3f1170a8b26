"""The record decoder refuses what cannot be published, wherever in the record it is, and
names where; a record with none of it decodes to its data."""

from __future__ import annotations

import pytest

from site_builder.inputs.decode import ReadError, decode_record

DEEP = "[" * 70 + "]" * 70


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('{"a": "x\\ud800"}', "a", "lone surrogate"),
        ('{"a": [1, {"b\\uDC00c": 2}]}', "a.1", "lone surrogate"),
        ('{"a": {"b": ["ok", "\\uDBFF"]}}', "a.b.1", "lone surrogate"),
        ('{"a": "\\ude00\\ud83d"}', "a", "lone surrogate"),
        ('{"a": [0, 1' + "0" * 30 + "]}", "a.1", "more than 30 digits"),
        ('{"a": {"b": -1' + "0" * 40 + "}}", "a.b", "more than 30 digits"),
        ('{"a": ' + DEEP + "}", "a." + ".".join(["0"] * 64), "nested deeper than 64"),
    ],
)
def test_a_refused_value_is_named_by_its_path(text: str, where: str, message: str) -> None:
    with pytest.raises(ReadError) as refused:
        decode_record(text.encode())
    assert refused.value.location == where
    assert message in refused.value.message


def test_text_that_only_looks_refused_decodes() -> None:
    text = '{"pair": "\\ud83d\\ude00", "escaped": "\\\\ud800", "n": 1' + "0" * 29 + ', "t": true}'
    assert decode_record(text.encode()) == {
        "pair": "\U0001f600",
        "escaped": "\\ud800",
        "n": 10**29,
        "t": True,
    }
