"""Loading live inputs for ``--live``: JSON arrays and OpenClaw ``.jsonl`` transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.errors import InputError
from ctxview.livefile import load_live_messages


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_json_array_keeps_key_order(tmp_path: Path) -> None:
    path = write(
        tmp_path, "live.json", '[{"content": "hi", "role": "user", "timestamp": 1}, {"role": "system", "content": "s"}]'
    )
    messages = load_live_messages(path)
    assert messages == [{"content": "hi", "role": "user", "timestamp": 1}, {"role": "system", "content": "s"}]
    assert list(messages[0]) == ["content", "role", "timestamp"]


def test_jsonl_transcript_takes_message_entries(tmp_path: Path) -> None:
    lines = [
        '{"type": "session", "id": "abc", "version": 3}',
        '{"type": "message", "id": "1", "message": {"role": "user", "content": "q\\u2028x"}}',
        "",
        '{"type": "model_change", "provider": "p"}',
        '{"role": "assistant", "content": [{"type": "text", "text": "a"}]}',
        '{"type": "message", "id": "3", "message": {"role": "toolResult", "toolCallId": "c", "content": []}}\r',
    ]
    path = write(tmp_path, "session.jsonl", "\n".join(lines) + "\n")
    messages = load_live_messages(path)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult"]
    assert messages[0]["content"] == "q\u2028x"


def test_jsonl_detected_without_the_suffix(tmp_path: Path) -> None:
    path = write(tmp_path, "transcript.txt", '{"type": "session"}\n{"role": "user", "content": "x"}\n')
    assert load_live_messages(path) == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("live.json", "{not json", "is not valid JSON"),
        ("live.json", '{"role": "user"}', "must hold a JSON array of message objects, not an object"),
        ("live.json", "null", "not null"),
        ("live.json", '"hi"', "not a string"),
        ("live.jsonl", '{"role": "user"}\n{oops\n', "line 2 is not valid JSON"),
        ("live.jsonl", '{"role": "user"}\n[1]\n', "line 2 is an array, not a JSON object"),
        ("live.jsonl", '{"type": "message", "message": "hi"}\n', "line 1 is a message entry without a message object"),
    ],
)
def test_bad_inputs_raise_one_clear_sentence(tmp_path: Path, name: str, text: str, fragment: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InputError) as info:
        load_live_messages(path)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_odd_entries_of_a_json_array_are_kept_and_named_in_notes(tmp_path: Path) -> None:
    text = '[null, {"role": "user", "content": "go"}, "hello", {"content": "x"}, {"role": 5}, 3, []]'
    path = write(tmp_path, "live.json", text)
    notes: list[str] = []
    messages = load_live_messages(path, notes)
    assert messages == [None, {"role": "user", "content": "go"}, "hello", {"content": "x"}, {"role": 5}, 3, []]
    assert notes == [
        f"{path}: element 0 is null, not a message: the engine gets it unchanged",
        f"{path}: element 2 is a string, not a message: the engine gets it unchanged",
        f"{path}: element 3 has no string role: the engine gets it unchanged",
        f"{path}: 3 more elements are not messages with a role: the engine gets them unchanged",
    ]
    assert load_live_messages(path) == messages  # without a notes list, the same messages


def test_a_plain_message_array_adds_no_notes(tmp_path: Path) -> None:
    path = write(tmp_path, "live.json", '[{"role": "user", "content": "go"}, {"role": "developer", "content": "d"}]')
    notes: list[str] = []
    assert load_live_messages(path, notes) == [
        {"role": "user", "content": "go"},
        {"role": "developer", "content": "d"},
    ]
    assert notes == []


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_live_messages(tmp_path / "nope.json")
    with pytest.raises(InputError, match="is a directory"):
        load_live_messages(tmp_path)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00[")
    with pytest.raises(InputError, match="not UTF-8"):
        load_live_messages(binary)
