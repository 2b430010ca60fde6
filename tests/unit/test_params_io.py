from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.errors import InputError
from ctxview.model import Params
from ctxview.params_io import build_params, default_params, parse_budget, read_params_file


def test_engine_and_assembler_defaults_differ_as_the_reference_does() -> None:
    engine = default_params(engine=True)
    bare = default_params(engine=False)
    assert (engine.token_budget, engine.fresh_tail_count, engine.prompt_aware_eviction) == (128000, 64, False)
    assert (bare.fresh_tail_count, bare.prompt_aware_eviction, bare.engine) == (8, True, False)


def test_params_file_is_read_with_key_order_and_flags_override(tmp_path: Path) -> None:
    path = tmp_path / "params.json"
    path.write_text(
        json.dumps(
            {
                "conversationId": 3,
                "tokenBudget": 4319,
                "prompt": "helm status",
                "freshTailCount": 8,
                "freshTailMaxTokens": None,
                "promptAwareEviction": True,
                "timezone": "Europe/Berlin",
                "liveMessages": [{"role": "user", "content": "x", "timestamp": 1}],
                "availableTools": None,
            }
        )
    )
    fields, conversation = read_params_file(path)
    assert conversation == 3
    params = build_params(default_params(), fields, source=str(path), from_file=True)
    assert params.token_budget == 4319
    assert params.timezone == "Europe/Berlin"
    assert params.live_messages is not None
    assert list(params.live_messages[0]) == ["role", "content", "timestamp"]
    overridden = build_params(params, {"token_budget": "2,000", "prompt": None})
    assert overridden.token_budget == 2000
    assert overridden.prompt == "helm status"  # None means "not given"


@pytest.mark.parametrize("bad", ["-5", "0", "abc", "1.5", "", True, -1, 0, float("inf"), 10**13])
def test_bad_budgets_are_refused_with_a_clear_message(bad: object) -> None:
    with pytest.raises(InputError, match="token budget"):
        parse_budget(bad)


def test_bad_params_files_are_one_line_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(InputError, match="not found"):
        read_params_file(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        read_params_file(broken)
    wrong = tmp_path / "list.json"
    wrong.write_text("[1, 2]")
    with pytest.raises(InputError, match="JSON object"):
        read_params_file(wrong)


# --- params-file values outside the usual ranges: what the engine makes of them ------------------

ENGINE_DEFAULT_NOTE = "the engine uses its default, 128,000"

# (params.json key, the value as JSON text, Params field, expected value, expected note or None)
ODD_VALUES = [
    ("tokenBudget", "4319", "token_budget", 4319, None),
    ("tokenBudget", "0", "token_budget", 128_000, f"budget 0: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "-5", "token_budget", 128_000, f"budget -5: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "-0.5", "token_budget", 128_000, f"budget -0.5: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "50.7", "token_budget", 50, "budget 50.7: the engine rounds it down to 50"),
    ("tokenBudget", "2500.5", "token_budget", 2500, "budget 2500.5: the engine rounds it down to 2,500"),
    (
        "tokenBudget",
        "0.5",
        "token_budget",
        0,
        "budget 0.5: the engine rounds it down to 0",
    ),
    ("tokenBudget", "1e400", "token_budget", 128_000, f"budget Infinity: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "-1e400", "token_budget", 128_000, f"budget -Infinity: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "1e15", "token_budget", 10**15, None),
    ("tokenBudget", "123456789012345678901234567890", "token_budget", 123456789012345677877719597056, None),
    ("tokenBudget", '"5000"', "token_budget", 128_000, f'budget "5000": {ENGINE_DEFAULT_NOTE}'),
    ("tokenBudget", "true", "token_budget", 128_000, f"budget true: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "null", "token_budget", 128_000, f"budget null: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", "[1000]", "token_budget", 128_000, f"budget [1000]: {ENGINE_DEFAULT_NOTE}"),
    ("tokenBudget", '{"n": 1}', "token_budget", 128_000, f'budget {{"n":1}}: {ENGINE_DEFAULT_NOTE}'),
    ("freshTailCount", "8", "fresh_tail_count", 8, None),
    ("freshTailCount", "0", "fresh_tail_count", 0, None),
    ("freshTailCount", "1e9", "fresh_tail_count", 10**9, None),
    (
        "freshTailCount",
        "1.5",
        "fresh_tail_count",
        1.5,
        "freshTailCount 1.5: the engine counts it as 2 (a fraction acts as its ceiling)",
    ),
    ("freshTailCount", "-3", "fresh_tail_count", 0, "freshTailCount -3: the engine keeps no fresh tail"),
    ("freshTailCount", "1e400", "fresh_tail_count", 0, "freshTailCount Infinity: the engine keeps no fresh tail"),
    (
        "freshTailCount",
        '"8"',
        "fresh_tail_count",
        0,
        'freshTailCount "8" is not a number: the engine keeps no fresh tail',
    ),
    (
        "freshTailCount",
        "true",
        "fresh_tail_count",
        0,
        "freshTailCount true is not a number: the engine keeps no fresh tail",
    ),
    (
        "freshTailCount",
        "[]",
        "fresh_tail_count",
        0,
        "freshTailCount [] is not a number: the engine keeps no fresh tail",
    ),
    ("freshTailCount", "null", "fresh_tail_count", 8, "freshTailCount null: the assembler uses its default, 8"),
    ("freshTailMaxTokens", "400", "fresh_tail_max_tokens", 400, None),
    ("freshTailMaxTokens", "0", "fresh_tail_max_tokens", 0, None),
    ("freshTailMaxTokens", "null", "fresh_tail_max_tokens", None, None),
    (
        "freshTailMaxTokens",
        "10.9",
        "fresh_tail_max_tokens",
        10,
        "freshTailMaxTokens 10.9: the engine rounds it down to 10",
    ),
    (
        "freshTailMaxTokens",
        "-1",
        "fresh_tail_max_tokens",
        None,
        "freshTailMaxTokens -1: the engine sets no fresh-tail token cap",
    ),
    (
        "freshTailMaxTokens",
        "1e400",
        "fresh_tail_max_tokens",
        None,
        "freshTailMaxTokens Infinity: the engine sets no fresh-tail token cap",
    ),
    (
        "freshTailMaxTokens",
        '"100"',
        "fresh_tail_max_tokens",
        None,
        'freshTailMaxTokens "100" is not a number: the engine sets no fresh-tail token cap',
    ),
    (
        "freshTailMaxTokens",
        "false",
        "fresh_tail_max_tokens",
        None,
        "freshTailMaxTokens false is not a number: the engine sets no fresh-tail token cap",
    ),
    ("promptAwareEviction", "true", "prompt_aware_eviction", True, None),
    ("promptAwareEviction", "false", "prompt_aware_eviction", False, None),
    *[
        (
            "promptAwareEviction",
            text,
            "prompt_aware_eviction",
            True,
            f"promptAwareEviction {text} is not a boolean: the engine treats anything but false as on",
        )
        for text in ("null", '"false"', "0", "[]")
    ],
    ("stubLargeToolPayloads", "true", "stub_large_tool_payloads", True, None),
    ("stubLargeToolPayloads", "false", "stub_large_tool_payloads", False, None),
    *[
        (
            "stubLargeToolPayloads",
            text,
            "stub_large_tool_payloads",
            False,
            f"stubLargeToolPayloads {text} is not a boolean: the assembler stubs only on true, so stubs stay off",
        )
        for text in ('"true"', "1", "null")
    ],
    ("timezone", '"Europe/Berlin"', "timezone", "Europe/Berlin", None),
    ("timezone", '"Not/AZone"', "timezone", "Not/AZone", None),  # invalid names are the renderer's to resolve
    ("timezone", '""', "timezone", "", 'timezone "" is not a time zone: the engine writes summary dates in ISO UTC'),
    ("timezone", "null", "timezone", "UTC", "timezone null: the engine uses UTC"),
    # Intl.DateTimeFormat reads timeZone as String(value) (checked on Node 24: ["Europe/Berlin"] is a valid zone)
    ("timezone", "5", "timezone", "5", 'timezone 5 is not a string: the engine reads it as "5"'),
    ("timezone", "true", "timezone", "true", 'timezone true is not a string: the engine reads it as "true"'),
    (
        "timezone",
        '["Europe/Berlin"]',
        "timezone",
        "Europe/Berlin",
        'timezone ["Europe/Berlin"] is not a string: the engine reads it as "Europe/Berlin"',
    ),
    (
        "timezone",
        '["Asia/Tokyo", null]',
        "timezone",
        "Asia/Tokyo,",
        'timezone ["Asia/Tokyo",null] is not a string: the engine reads it as "Asia/Tokyo,"',
    ),
    (
        "timezone",
        "{}",
        "timezone",
        "[object Object]",
        'timezone {} is not a string: the engine reads it as "[object Object]"',
    ),
    ("prompt", '"helm status"', "prompt", "helm status", None),
    ("prompt", '""', "prompt", "", None),
    ("prompt", "null", "prompt", None, None),
    *[
        (
            "prompt",
            text,
            "prompt",
            "",
            f"prompt {text} is not a string: the engine treats it as a prompt with no searchable words",
        )
        for text in ("42", "false", '["helm"]', '{"q":"helm"}')
    ],
    ("availableTools", '["read", "bash"]', "available_tools", ("read", "bash"), None),
    ("availableTools", "[]", "available_tools", (), None),
    ("availableTools", "[1, null]", "available_tools", (1, None), None),  # only "a list was given" matters
    ("availableTools", "null", "available_tools", None, None),
    (
        "availableTools",
        '"read"',
        "available_tools",
        None,
        'availableTools "read" is not a list: the engine sees no tool set',
    ),
    ("availableTools", "{}", "available_tools", None, "availableTools {} is not a list: the engine sees no tool set"),
    ("liveMessages", "null", "live_messages", None, None),
    ("liveMessages", "[]", "live_messages", (), None),
    (
        "liveMessages",
        '[{"content": "x"}, {"role": "user", "content": "go"}]',
        "live_messages",
        ({"content": "x"}, {"role": "user", "content": "go"}),
        "liveMessages[0] has no string role: the engine gets it unchanged",
    ),
    (
        "liveMessages",
        '[{"role": "user", "content": "go"}, null]',
        "live_messages",
        ({"role": "user", "content": "go"}, None),
        "liveMessages[1] is null, not a message: the engine gets it unchanged",
    ),
    (
        "liveMessages",
        '["hello"]',
        "live_messages",
        ("hello",),
        "liveMessages[0] is a string, not a message: the engine gets it unchanged",
    ),
    (
        "liveMessages",
        '[{"role": 5, "content": "x"}]',
        "live_messages",
        ({"role": 5, "content": "x"},),
        "liveMessages[0] has no string role: the engine gets it unchanged",
    ),
]


def _file_params(tmp_path: Path, body: str, notes: list[str] | None) -> Params:
    path = tmp_path / "params.json"
    path.write_text(body, encoding="utf-8")
    fields, _ = read_params_file(path)
    return build_params(default_params(), fields, source="p.json", from_file=True, notes=notes)


@pytest.mark.parametrize(
    ("key", "text", "field", "expected", "note"), ODD_VALUES, ids=[f"{row[0]}={row[1]}" for row in ODD_VALUES]
)
def test_params_file_values_are_read_as_the_engine_reads_them(
    tmp_path: Path, key: str, text: str, field: str, expected: object, note: str | None
) -> None:
    notes: list[str] = []
    params = _file_params(tmp_path, f'{{"{key}": {text}}}', notes)
    value = getattr(params, field)
    assert value == expected
    assert type(value) is type(expected)
    assert notes == ([] if note is None else [f"p.json: {note}"])


def test_absent_keys_keep_the_defaults_without_notes(tmp_path: Path) -> None:
    notes: list[str] = []
    read = _file_params(tmp_path, '{"caseId": "x", "sessionId": "s"}', notes)
    assert read == replace(default_params(), session_id="s")  # the session identity the engine looks up by
    assert notes == []


def test_notes_are_optional_and_every_odd_value_gets_its_own(tmp_path: Path) -> None:
    body = '{"tokenBudget": 0, "freshTailMaxTokens": -1, "timezone": "", "liveMessages": [null]}'
    params = _file_params(tmp_path, body, None)  # callers that do not ask for notes get the same params
    assert (params.token_budget, params.fresh_tail_max_tokens, params.timezone) == (128_000, None, "")
    notes: list[str] = []
    _file_params(tmp_path, body, notes)
    assert notes == [
        f"p.json: budget 0: {ENGINE_DEFAULT_NOTE}",
        "p.json: freshTailMaxTokens -1: the engine sets no fresh-tail token cap",
        'p.json: timezone "" is not a time zone: the engine writes summary dates in ISO UTC',
        "p.json: liveMessages[0] is null, not a message: the engine gets it unchanged",
    ]


def test_many_odd_live_entries_are_summed_up_after_three_notes(tmp_path: Path) -> None:
    notes: list[str] = []
    params = _file_params(tmp_path, '{"liveMessages": [null, 1, true, [], {}, {"role": "user"}]}', notes)
    assert params.live_messages == (None, 1, True, [], {}, {"role": "user"})
    assert notes == [
        "p.json: liveMessages[0] is null, not a message: the engine gets it unchanged",
        "p.json: liveMessages[1] is a number, not a message: the engine gets it unchanged",
        "p.json: liveMessages[2] is a boolean, not a message: the engine gets it unchanged",
        "p.json: 2 more liveMessages entries are not messages with a role: the engine gets them unchanged",
    ]


@pytest.mark.parametrize(
    ("text", "what"),
    [('{"role": "user"}', "an object"), ('"hi"', "a string"), ("3", "a number"), ("true", "a boolean")],
)
def test_live_messages_that_are_no_array_are_a_one_line_error(tmp_path: Path, text: str, what: str) -> None:
    with pytest.raises(InputError) as info:
        _file_params(tmp_path, f'{{"liveMessages": {text}}}', [])
    assert str(info.value) == f"p.json: liveMessages must be a JSON array of messages or null, not {what}"


def test_a_note_shows_a_long_or_unprintable_value_on_one_short_line(tmp_path: Path) -> None:
    notes: list[str] = []
    _file_params(tmp_path, '{"tokenBudget": "a\\nb\\u202ec"}', notes)  # newline escaped by JSON; U+202E replaced
    _file_params(tmp_path, '{"tokenBudget": "' + "x" * 60 + '"}', notes)
    assert notes == [
        f'p.json: budget "a\\nb?c": {ENGINE_DEFAULT_NOTE}',
        f'p.json: budget "{"x" * 38}…: {ENGINE_DEFAULT_NOTE}',
    ]


def test_flags_stay_strict() -> None:
    base = default_params()
    for overrides, message in [
        ({"fresh_tail_max_tokens": "-1"}, "fresh-tail max tokens must be a number ≥ 0"),
        ({"fresh_tail_count": "-3"}, "fresh-tail count must be a number ≥ 0"),
        ({"timezone": ""}, "timezone must be a non-empty string"),
        ({"token_budget": "0"}, "token budget must be at least 1"),
    ]:
        with pytest.raises(InputError, match=message):
            build_params(base, overrides)


def test_reserved_tokens_come_off_the_budget() -> None:
    params = Params(token_budget=10_000, reserved_tokens=2_500)
    assert params.effective_budget == 7_500
    assert Params(token_budget=100, reserved_tokens=500).effective_budget == 1
