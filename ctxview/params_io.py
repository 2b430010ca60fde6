"""Building ``Params`` from a parity ``params.json`` and command-line flags.

Precedence: built-in defaults (engine or bare assembler) < params file <
flags given on the command line.  Every bad value becomes an ``InputError``
with one sentence a person can act on.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ctxview.errors import InputError
from ctxview.jsjson import js_parse
from ctxview.model import (
    ASSEMBLER_DEFAULT_FRESH_TAIL,
    ENGINE_DEFAULT_BUDGET,
    ENGINE_DEFAULT_FRESH_TAIL,
    Params,
)

MAX_PROMPT_CHARS = 1_000_000

# keys whose null in a params file means something (no prompt, no cap, no live window)
_NULLABLE_FROM_FILE = frozenset({"prompt", "fresh_tail_max_tokens", "live_messages", "available_tools"})

# params.json key -> Params field
_PARAMS_KEYS = {
    "tokenBudget": "token_budget",
    "prompt": "prompt",
    "freshTailCount": "fresh_tail_count",
    "freshTailMaxTokens": "fresh_tail_max_tokens",
    "promptAwareEviction": "prompt_aware_eviction",
    "timezone": "timezone",
    "liveMessages": "live_messages",
    "availableTools": "available_tools",
    "stubLargeToolPayloads": "stub_large_tool_payloads",
}


def default_params(*, engine: bool = True) -> Params:
    """Reference defaults: the engine's (§9.1) or, without it, the bare assembler's."""
    if engine:
        return Params(
            token_budget=ENGINE_DEFAULT_BUDGET,
            fresh_tail_count=ENGINE_DEFAULT_FRESH_TAIL,
            prompt_aware_eviction=False,
            engine=True,
        )
    return Params(
        token_budget=ENGINE_DEFAULT_BUDGET,
        fresh_tail_count=ASSEMBLER_DEFAULT_FRESH_TAIL,
        prompt_aware_eviction=True,
        engine=False,
    )


def read_params_file(path: str | Path) -> tuple[dict[str, Any], int | None]:
    """Read a parity params.json: (raw Params field overrides, conversationId or None).

    The fields are validated when applied with ``build_params``.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"params file not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read params file {file}: {exc}") from None
    try:
        data = js_parse(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"params file {file} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"params file {file} must hold a JSON object, not {type(data).__name__}")
    fields: dict[str, Any] = {}
    for key, name in _PARAMS_KEYS.items():
        if key in data:
            fields[name] = data[key]
    conversation = data.get("conversationId")
    if conversation is not None and (not isinstance(conversation, int) or isinstance(conversation, bool)):
        raise InputError(f"params file {file}: conversationId must be an integer")
    return fields, conversation


def build_params(
    base: Params, overrides: dict[str, Any], *, source: str = "command line", from_file: bool = False
) -> Params:
    """Validate overrides (Params field names) and apply them on ``base``.

    From flags, None means "not given"; from a params file, a null prompt, cap
    or live window is a real value and replaces the default.
    """
    given = {
        k: v for k, v in overrides.items() if v is not None or (from_file and k in _NULLABLE_FROM_FILE)
    }
    return _apply(base, _validated(given, source=source))


def _apply(base: Params, fields: dict[str, Any]) -> Params:
    from dataclasses import replace

    return replace(base, **fields)


def _validated(fields: dict[str, Any], *, source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "token_budget":
            out[name] = parse_budget(value, source=source)
        elif name == "fresh_tail_count":
            out[name] = _non_negative_number(value, "fresh-tail count", source)
        elif name == "fresh_tail_max_tokens":
            out[name] = None if value is None else int(_non_negative_number(value, "fresh-tail max tokens", source))
        elif name == "reserved_tokens":
            out[name] = int(_non_negative_number(value, "reserved tokens", source))
        elif name in ("prompt_aware_eviction", "stub_large_tool_payloads", "engine"):
            if not isinstance(value, bool):
                raise InputError(f"{source}: {name} must be true or false")
            out[name] = value
        elif name == "prompt":
            if value is not None and not isinstance(value, str):
                raise InputError(f"{source}: prompt must be a string or null")
            if isinstance(value, str) and len(value) > MAX_PROMPT_CHARS:
                raise InputError(f"{source}: prompt is longer than {MAX_PROMPT_CHARS:,} characters")
            out[name] = value
        elif name == "timezone":
            if not isinstance(value, str) or not value:
                raise InputError(f"{source}: timezone must be a non-empty string such as 'UTC'")
            out[name] = value
        elif name == "stub_threshold":
            threshold = _non_negative_number(value, "stub threshold", source)
            if threshold > 1:
                raise InputError(f"{source}: stub threshold must be between 0 and 1, not {value!r}")
            out[name] = float(threshold)
        elif name == "citations_path":
            path = Path(str(value))
            if not path.is_file():
                raise InputError(f"{source}: citation log not found: {path}")
            out[name] = str(path)
        elif name == "live_messages":
            out[name] = None if value is None else _live_messages(value, source)
        elif name == "available_tools":
            if value is not None and (
                not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value)
            ):
                raise InputError(f"{source}: availableTools must be a list of strings or null")
            out[name] = None if value is None else tuple(value)
        else:
            out[name] = value
    return out


def parse_budget(value: Any, *, source: str = "command line") -> int:
    """A token budget: a positive whole number (commas and underscores allowed)."""
    number: float
    if isinstance(value, bool):
        raise InputError(f"{source}: token budget must be a positive whole number, not {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        number = value
    elif isinstance(value, str):
        cleaned = value.strip().replace(",", "").replace("_", "")
        try:
            number = int(cleaned)
        except ValueError:
            raise InputError(f"{source}: token budget must be a positive whole number, not {value!r}") from None
    else:
        raise InputError(f"{source}: token budget must be a positive whole number, not {value!r}")
    if not math.isfinite(number) or number < 1:
        raise InputError(f"{source}: token budget must be at least 1 (got {value!r})")
    if number > 10**12:
        raise InputError(f"{source}: token budget {value!r} is unreasonably large (max 1,000,000,000,000)")
    return int(number)


def _non_negative_number(value: Any, what: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"{source}: {what} must be a number ≥ 0, not {value!r}")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise InputError(f"{source}: {what} must be a number ≥ 0, not {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise InputError(f"{source}: {what} must be a number ≥ 0, not {value!r}")
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number


def _live_messages(value: Any, source: str) -> tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{source}: liveMessages must be a list of message objects")
    for index, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InputError(f"{source}: liveMessages[{index}] is not a message object with a string role")
    return tuple(value)
