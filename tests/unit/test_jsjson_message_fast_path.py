"""``js_stringify_message``: orjson's text where it takes the value, the C encoder's elsewhere, always the same.

(tests/conftest.py also checks every message stringified in the test run both ways.)
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.jsjson import (
    FLOAT_SAME_TEXT_BELOW,
    FLOAT_SAME_TEXT_FROM,
    JSNumber,
    js_parse,
    js_stringify,
    js_stringify_message,
    js_stringify_message_utf8,
)

_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8)  # (lone surrogates too)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e21, -1e21, 1e16, 9999999999999998.0, 1e-4, 9.9e-5, 1e-7, 1e-100, 5e-324, 1.7976931348623157e308, 0.1, -0.0]
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _FLOATS | _TEXT,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.one_of(_TEXT, st.integers(0, 30).map(str)), inner, max_size=4),
    max_leaves=14,
)


@settings(max_examples=600, deadline=None)
@given(value=_VALUES)
def test_a_parsed_value_is_written_alike_by_either_encoder(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    try:
        parsed = js_parse(text)
    except ValueError:  # (a text JSON.parse rejects: nothing to write)
        return
    slow = js_stringify(parsed)  # (the json module's C encoder; its JS spelling: test_jsjson.py)
    assert js_stringify_message(parsed) == slow
    assert js_stringify_message_utf8(parsed) == (slow, slow.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1e21}', '{"a":1e+21}'),
        ('{"a":-2.5e300}', '{"a":-2.5e+300}'),
        ('{"a":1e16}', '{"a":10000000000000000}'),
        ('{"a":1.5e16}', '{"a":15000000000000000}'),
        ('{"a":1e-100}', '{"a":1e-100}'),
        ('{"a":9999999999999998}', '{"a":9999999999999998}'),
        ('{"a":9007199254740993}', '{"a":9007199254740992}'),
        ('{"a":0.00005}', '{"a":0.00005}'),
        ('{"a":0.0001}', '{"a":0.0001}'),
        ('{"a":123456789012345.6}', '{"a":123456789012345.6}'),
        ('{"a":0.1,"b":[1.5,-0.25]}', '{"a":0.1,"b":[1.5,-0.25]}'),
    ],
)
def test_a_parsed_float_outside_the_shared_range_is_a_js_number(text: str, expected: str) -> None:
    assert js_stringify_message(js_parse(text)) == expected


def test_the_shared_range_is_where_every_parsed_float_stays_a_float() -> None:
    assert type(js_parse(repr(FLOAT_SAME_TEXT_FROM))) is float
    assert type(js_parse("999999999999999.9")) is float  # (just below FLOAT_SAME_TEXT_BELOW)
    assert isinstance(js_parse(repr(FLOAT_SAME_TEXT_BELOW)), JSNumber)
    assert isinstance(js_parse("9999999999999998.0"), JSNumber)  # (whole but past 2**53: no int, and repr says .0)
    assert isinstance(js_parse("1.5e16"), JSNumber)
    assert isinstance(js_parse("9.99e-5"), JSNumber)


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "half \ud83d pair"},  # a lone surrogate: orjson refuses, escaped as JS does
        {"role": "user", "content": [{"type": "text", "text": "x"}], "n": JSNumber(1e21, "1e+21")},
        {"role": "user", "n": 2**70},
        {"role": "user", 3: "int key"},
        {"role": "user", "content": "é \"q\" \\ \n\t\u2028 😀 \u0000\u001f\u007f"},
        {"role": "toolResult", "content": [], "deep": _nested(300)},  # (past orjson's 254 levels)
    ],
)
def test_a_message_orjson_refuses_or_takes_is_the_c_encoders_text(message: dict[Any, Any]) -> None:
    text, encoded = js_stringify_message_utf8(message)
    assert text == js_stringify(message) == js_stringify_message(message)
    assert encoded == text.encode("utf-8", "surrogatepass")


def test_the_engine_memo_hashes_the_same_text_as_h16() -> None:
    from ctxview.assembly.volatile import SerializedCache
    from ctxview.jsjson import h16

    message = {"role": "assistant", "content": [{"type": "text", "text": "é ok"}], "cost": 0.0125}
    memo = SerializedCache()
    assert memo.h16(message) == h16([message])
    assert memo(message) >= 1
    text = js_stringify([message])
    assert h16([message]) == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_computed_floats_are_not_given_to_orjson_by_js_stringify() -> None:
    # a score computed by ctxview (not parsed): Python's repr, as the C encoder writes it, not orjson's 1e-7 / 1e21
    assert js_stringify({"score": 1e-7, "weight": 1e21}) == '{"score":1e-07,"weight":1e+21}'
