from __future__ import annotations

import json
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
    live = tmp_path / "live.json"
    live.write_text(json.dumps({"liveMessages": [{"content": "no role"}]}))
    fields, _ = read_params_file(live)
    with pytest.raises(InputError, match=r"liveMessages\[0\]"):
        build_params(default_params(), fields, source=str(live), from_file=True)


def test_reserved_tokens_come_off_the_budget() -> None:
    params = Params(token_budget=10_000, reserved_tokens=2_500)
    assert params.effective_budget == 7_500
    assert Params(token_budget=100, reserved_tokens=500).effective_budget == 1
