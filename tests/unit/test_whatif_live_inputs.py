"""Hand-made live inputs: the engine's detectors see them as the real ones, and they read back for editing."""

from __future__ import annotations

import pytest

from ctxview.assembly.volatile import is_volatile_content
from ctxview.errors import InputError
from ctxview.whatif.live_inputs import KIND_NAMES, describe_live, kind_of, live_message, parse_add_live


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_markers_are_detected_as_the_engine_detects_them(kind: str) -> None:
    message = live_message(kind, "the text\nover two lines")
    assert is_volatile_content(message["content"]) is (kind != "user")


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_kind_and_text_read_back(kind: str) -> None:
    assert kind_of(live_message(kind, "retry the deploy")) == (kind, "retry the deploy")


def test_foreign_messages_have_no_kind() -> None:
    assert kind_of({"role": "assistant", "content": "x"}) is None
    assert kind_of({"role": "user", "content": "x", "timestamp": 1}) is None
    assert describe_live({"role": "toolResult", "content": []}) == "toolResult message"
    assert describe_live(live_message("subagent", "done")) == "subagent completion announcement"


def test_parse_add_live_aliases_and_errors() -> None:
    assert parse_add_live("Retry-Prompt:go") == live_message("retry", "go")
    assert parse_add_live("announcement:a:b") == live_message("subagent", "a:b")
    with pytest.raises(InputError, match="KIND:TEXT"):
        parse_add_live("nope:x")
    with pytest.raises(InputError, match="the text is empty"):
        parse_add_live("user:  ")
