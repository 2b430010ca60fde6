from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.jsjson import (
    JSNumber,
    h16,
    js_number_str,
    js_parse,
    js_stringify,
    js_trim,
    try_js_parse,
    utf16_len,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (0.1, "0.1"),
        (-0.5, "-0.5"),
        (123.456, "123.456"),
        (1e21, "1e+21"),
        (1e16, "10000000000000000"),
        (2.0**60, "1152921504606847000"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (5e-5, "0.00005"),
        (1.2345e-5, "0.000012345"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_js_number_formatting_matches_javascript(value: float, expected: str) -> None:
    assert js_number_str(value) == expected


def test_parse_keeps_js_number_text_and_key_order() -> None:
    parsed = js_parse('{"b":1,"2":[1e-7,1.5,12345678901234567890,3.0],"1":"x"}')
    assert list(parsed) == ["1", "2", "b"]  # integer-like keys first, ascending, like JSON.parse
    assert isinstance(parsed["2"][0], JSNumber)
    assert js_stringify(parsed) == '{"1":"x","2":[1e-7,1.5,12345678901234567000,3],"b":1}'


def test_parse_rejects_what_javascript_rejects() -> None:
    assert try_js_parse("NaN") == (False, None)
    assert try_js_parse("{'a': 1}") == (False, None)
    assert try_js_parse("[1] x") == (False, None)
    assert try_js_parse(" [1]\n") == (True, [1])
    assert try_js_parse("\u00a0[1]") == (False, None)  # JSON.parse allows only JSON whitespace
    assert try_js_parse("\ufeff[1]") == (False, None)


def test_stringify_escapes_lone_surrogates_and_control_characters() -> None:
    assert js_stringify(["a\ud800b", "\x01\n\t"]) == '["a\\ud800b","\\u0001\\n\\t"]'
    assert js_stringify({"k": "é 你"}) == '{"k":"é 你"}'


def test_js_trim_uses_the_javascript_whitespace_set() -> None:
    assert js_trim("\ufeff x \u3000") == "x"
    assert js_trim("\x1c x \x85") == "\x1c x \x85"  # Python's strip() would remove these


def test_utf16_length_counts_astral_characters_twice() -> None:
    assert utf16_len("ab") == 2
    assert utf16_len("😀") == 2
    assert utf16_len("你好😀") == 4


def test_h16_of_empty_list_is_the_reference_value() -> None:
    assert h16([]) == "4f53cda18c2baa0c"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (3, "3"),
        (2**60, "1152921504606847000"),
        (1.5, "1.5"),
        (1e-7, "1e-7"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        (b"caf\xc3\xa9", "café"),
        ([1, None, "a", [2, 3]], "1,,a,2,3"),
        ({"a": 1}, "[object Object]"),
        ("text", "text"),
    ],
)
def test_js_string_is_javascript_string_conversion(value: object, expected: str) -> None:
    from ctxview.jsjson import js_string

    assert js_string(value) == expected



_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.one_of(st.text(max_size=4), st.integers(0, 30).map(str), st.sampled_from(["01", "-1", "4294967295"])),
        inner,
        max_size=4,
    ),
    max_leaves=12,
)


def _reference_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JS object semantics spelled out: later duplicates win, array-index keys first, ascending."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        result[key] = value
    index = sorted((k for k in result if k.isascii() and k.isdigit() and (k == "0" or k[0] != "0")
                    and int(k) < 2**32 - 1), key=int)
    return {k: result[k] for k in [*index, *(k for k in result if k not in index)]}


@settings(max_examples=400, deadline=None)
@given(value=_JSON_VALUES, indent=st.sampled_from([None, 1]))
def test_js_parse_orders_keys_as_javascript_does(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=bool(indent))
    from ctxview.jsjson import _parse_float, _parse_int

    expected = json.loads(text, object_pairs_hook=_reference_object, parse_float=_parse_float, parse_int=_parse_int)
    parsed = js_parse(text)
    assert repr(parsed) == repr(expected)  # same keys in the same order, same values and number types


def test_js_parse_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    assert list(js_parse('{"b":1,"a":2,"b":3,"2":4,"1":5}').items()) == [("1", 5), ("2", 4), ("b", 3), ("a", 2)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":1,"\\u0031":2}', "{'1': 2, 'a': 1}"),  # a digit key spelled with an escape still sorts first
        ('{"a":1, "2" \n: 3}', "{'2': 3, 'a': 1}"),  # whitespace between key and colon
        ('{"a":[1,2],"b":{"c":true}}', "{'a': [1, 2], 'b': {'c': True}}"),  # nothing for a hook to change
        ('{"n":123456789012345}', "{'n': 123456789012345}"),  # 15 digits: below 2**53, a plain int
        ('{"n":1234567890123456789}', "{'n': JSNumber(1234567890123456800)}"),  # past 2**53: the JS double
        ('{"x":"1.5","y":2.50}', "{'x': '1.5', 'y': 2.5}"),
        ('[1E2]', "[100]"),
    ],
)
def test_js_parse_gives_the_javascript_value_of_escaped_keys_and_long_numbers(text: str, expected: str) -> None:
    assert repr(js_parse(text)) == expected


def test_js_parse_rejects_nan_and_infinity_inside_values() -> None:
    assert try_js_parse('{"a":NaN}') == (False, None)
    assert try_js_parse("[-Infinity]") == (False, None)
