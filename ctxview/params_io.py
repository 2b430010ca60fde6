"""Building ``Params`` from a parity ``params.json`` and command-line flags.

Precedence: built-in defaults (engine or bare assembler) < params file <
flags given on the command line.

The two sources are judged differently.  A params file describes an engine
call, so its values are read the way the reference engine reads them: a value
outside the usual range is resolved as the engine would (a budget of 0 means
its default of 128,000, a negative token cap means no cap, …) and a one-line
note says what happened.  A flag is something a person typed: a value no
engine would accept there is an ``InputError`` with one sentence to act on.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxview.errors import InputError
from ctxview.files import Wording, not_regular_reason, read_text
from ctxview.jsjson import JSNumber, js_parse, js_string, js_stringify
from ctxview.model import (
    ASSEMBLER_DEFAULT_FRESH_TAIL,
    ENGINE_DEFAULT_BUDGET,
    ENGINE_DEFAULT_FRESH_TAIL,
    Params,
)

MAX_PROMPT_CHARS = 1_000_000
MAX_ODD_LIVE_NOTES = 3  # notes about single odd live entries; the rest are counted in one more note

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
    "sessionId": "session_id",
    "sessionKey": "session_key",
    "engine": "engine_line",
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


PARAMS_FILE = Wording("params file")


def read_params_file(path: str | Path) -> tuple[dict[str, Any], int | None]:
    """Read a parity params.json: (raw Params field overrides, conversationId or None).

    The fields are resolved when applied with ``build_params(..., from_file=True)``.
    """
    file = Path(path)
    text = read_text(file, PARAMS_FILE)
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
    base: Params,
    overrides: dict[str, Any],
    *,
    source: str = "command line",
    from_file: bool = False,
    notes: list[str] | None = None,
) -> Params:
    """Apply overrides (Params field names) on ``base``.

    From flags (``from_file=False``), None means "not given" and every value is
    validated strictly.  From a params file, every key present counts, null
    included, and the params-file fields are resolved as the engine resolves
    them; each value the engine would not take as it is adds a note
    ``"<source>: <what the engine does>"`` to ``notes`` (when given).
    """
    if not from_file:
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(base, **_validated(given, source=source))
    said: list[str] = []
    fields: dict[str, Any] = {}
    strict: dict[str, Any] = {}
    for name, value in overrides.items():
        if name in _ENGINE_READERS:
            try:
                fields[name] = _ENGINE_READERS[name](value, said)
            except InputError as exc:
                raise InputError(f"{source}: {exc}") from None
        elif value is not None:
            strict[name] = value
    fields.update(_validated(strict, source=source))
    if notes is not None:
        notes.extend(f"{source}: {note}" for note in said)
    return replace(base, **fields)


# --- params-file values, read as the engine reads them (spec §5, §6, §9.1) ------------------


def _js_number(value: Any) -> float | None:
    """The value if JavaScript's ``typeof`` would say "number", else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, JSNumber):
        return value.value
    if isinstance(value, (int, float)):
        return value
    return None


def shown(value: Any, limit: int = 40) -> str:
    """A JSON value as one short printable line, for notes (1e400 reads as JavaScript's Infinity)."""
    number = _js_number(value)
    text = js_string(value) if number is not None and not math.isfinite(number) else js_stringify(value)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def engine_session_identity(value: Any, notes: list[str]) -> str | None:
    """``sessionId`` / ``sessionKey``: the host passes strings; anything else finds no conversation."""
    if value is None or isinstance(value, str):
        return value
    notes.append(f"session identity {shown(value)} is not a string: the engine looks the conversation up by nothing")
    return ""


def engine_line(value: Any, notes: list[str]) -> str | None:
    """``engine``: which engine line's rules to run (``0.15`` or ``1.0``); null → the database decides."""
    if value is None:
        return None
    from ctxview.assembly.rules import rules_for

    try:
        return rules_for(js_string(value)).line
    except ValueError as exc:
        raise InputError(str(exc)) from None


def engine_budget(value: Any, notes: list[str]) -> int:
    """§9.1: the floor of a finite number > 0, else the default 128,000."""
    number = _js_number(value)
    if number is None or not math.isfinite(number) or number <= 0:
        notes.append(f"budget {shown(value)}: the engine uses its default, {ENGINE_DEFAULT_BUDGET:,}")
        return ENGINE_DEFAULT_BUDGET
    budget = math.floor(number)
    if budget != number:
        notes.append(f"budget {shown(value)}: the engine rounds it down to {budget:,}")
    return budget


def engine_fresh_tail_count(value: Any, notes: list[str]) -> float:
    """§5: null is the assembler's default 8; a non-number or a number ≤ 0 means no fresh tail (0)."""
    if value is None:
        notes.append(f"freshTailCount null: the assembler uses its default, {ASSEMBLER_DEFAULT_FRESH_TAIL}")
        return ASSEMBLER_DEFAULT_FRESH_TAIL
    number = _js_number(value)
    if number is None:
        notes.append(f"freshTailCount {shown(value)} is not a number: the engine keeps no fresh tail")
        return 0
    if number == 0:
        return 0
    if not math.isfinite(number) or number < 0:
        notes.append(f"freshTailCount {shown(value)}: the engine keeps no fresh tail")
        return 0
    if not float(number).is_integer():
        notes.append(
            f"freshTailCount {shown(value)}: the engine counts it as {math.ceil(number):,} "
            "(a fraction acts as its ceiling)"
        )
    return number


def engine_fresh_tail_max_tokens(value: Any, notes: list[str]) -> int | None:
    """§5: the floor of a finite number ≥ 0, else no cap."""
    if value is None:
        return None
    number = _js_number(value)
    if number is None:
        notes.append(f"freshTailMaxTokens {shown(value)} is not a number: the engine sets no fresh-tail token cap")
        return None
    if not math.isfinite(number) or number < 0:
        notes.append(f"freshTailMaxTokens {shown(value)}: the engine sets no fresh-tail token cap")
        return None
    cap = math.floor(number)
    if cap != number:
        notes.append(f"freshTailMaxTokens {shown(value)}: the engine rounds it down to {cap:,}")
    return cap


def engine_prompt_aware(value: Any, notes: list[str]) -> bool:
    """§6.2: the assembler turns prompt-aware eviction off only for the boolean false."""
    if isinstance(value, bool):
        return value
    notes.append(f"promptAwareEviction {shown(value)} is not a boolean: the engine treats anything but false as on")
    return True


def engine_stub_payloads(value: Any, notes: list[str]) -> bool:
    """§10.2: the assembler stubs only when the value is the boolean true."""
    if isinstance(value, bool):
        return value
    notes.append(
        f"stubLargeToolPayloads {shown(value)} is not a boolean: the assembler stubs only on true, so stubs stay off"
    )
    return False


def engine_timezone(value: Any, notes: list[str]) -> str:
    """§3: null means UTC; any other value is read as ``String(value)`` (an invalid zone gives ISO UTC dates)."""
    if isinstance(value, str):
        if value == "":
            notes.append('timezone "" is not a time zone: the engine writes summary dates in ISO UTC')
        return value
    if value is None:
        notes.append("timezone null: the engine uses UTC")
        return "UTC"
    text = js_string(value)
    notes.append(f"timezone {shown(value)} is not a string: the engine reads it as {shown(text)}")
    return text


def engine_prompt(value: Any, notes: list[str]) -> str | None:
    """A prompt that is not a string is given but never searchable: the same as the empty prompt."""
    if value is None or isinstance(value, str):
        return value
    notes.append(f"prompt {shown(value)} is not a string: the engine treats it as a prompt with no searchable words")
    return ""


def engine_available_tools(value: Any, notes: list[str]) -> tuple[Any, ...] | None:
    """Only whether a tool set was given matters (§9.1); a value that is not a list is no tool set."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return tuple(value)
    notes.append(f"availableTools {shown(value)} is not a list: the engine sees no tool set")
    return None


def engine_live_messages(value: Any, notes: list[str]) -> tuple[Any, ...] | None:
    """Any JSON array goes to the engine step unchanged, odd entries included; null is an empty window."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise InputError(f"liveMessages must be a JSON array of messages or null, not {describe(value)}")
    notes.extend(odd_live_entry_notes(value, "liveMessages[{index}]", "liveMessages entries"))
    return tuple(value)


def odd_live_entry_notes(messages: Any, where: str, plural: str) -> list[str]:
    """One note per live entry that is not a message object with a string role (at most a few)."""
    odd = [i for i, m in enumerate(messages) if not isinstance(m, dict) or not isinstance(m.get("role"), str)]
    out: list[str] = []
    for index in odd[:MAX_ODD_LIVE_NOTES]:
        entry = messages[index]
        place = where.format(index=index)
        if isinstance(entry, dict):
            out.append(f"{place} has no string role: the engine gets it unchanged")
        else:
            out.append(f"{place} is {describe(entry)}, not a message: the engine gets it unchanged")
    if len(odd) > MAX_ODD_LIVE_NOTES:
        more = len(odd) - MAX_ODD_LIVE_NOTES
        out.append(f"{more:,} more {plural} are not messages with a role: the engine gets them unchanged")
    return out


def describe(value: Any) -> str:
    """What a JSON value is, for a sentence: "null", "a string", "an object", …"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a number"


_ENGINE_READERS = {
    "token_budget": engine_budget,
    "fresh_tail_count": engine_fresh_tail_count,
    "fresh_tail_max_tokens": engine_fresh_tail_max_tokens,
    "prompt_aware_eviction": engine_prompt_aware,
    "stub_large_tool_payloads": engine_stub_payloads,
    "timezone": engine_timezone,
    "prompt": engine_prompt,
    "available_tools": engine_available_tools,
    "live_messages": engine_live_messages,
    "session_id": engine_session_identity,
    "session_key": engine_session_identity,
    "engine_line": engine_line,
}


# --- flags: strict, one-line errors --------------------------------------------------------------


def _validated(fields: dict[str, Any], *, source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name == "token_budget":
            out[name] = parse_budget(value, source=source)
        elif name == "fresh_tail_count":
            out[name] = _non_negative_number(value, "fresh-tail count", source)
        elif name == "fresh_tail_max_tokens":
            out[name] = int(_non_negative_number(value, "fresh-tail max tokens", source))
        elif name == "reserved_tokens":
            out[name] = int(_non_negative_number(value, "reserved tokens", source))
        elif name in ("prompt_aware_eviction", "stub_large_tool_payloads", "engine"):
            if not isinstance(value, bool):
                raise InputError(f"{source}: {name} must be true or false")
            out[name] = value
        elif name == "prompt":
            if not isinstance(value, str):
                raise InputError(f"{source}: prompt must be a string")
            if len(value) > MAX_PROMPT_CHARS:
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
            problem = not_regular_reason(path)
            if problem == "no such file":
                raise InputError(f"{source}: citation log not found: {path}")
            if problem is not None:
                raise InputError(f"{source}: citation log {path} {problem}")
            out[name] = str(path)
        elif name == "live_messages":
            if not isinstance(value, (list, tuple)):
                raise InputError(f"{source}: live messages must be a list, not {describe(value)}")
            out[name] = tuple(value)
        elif name == "available_tools":
            if not isinstance(value, (list, tuple)) or not all(isinstance(t, str) for t in value):
                raise InputError(f"{source}: available tools must be a list of strings")
            out[name] = tuple(value)
        elif name == "engine_line":
            from ctxview.assembly.rules import rules_for

            try:
                out[name] = rules_for(str(value)).line
            except ValueError as exc:
                raise InputError(f"{source}: {exc}") from None
        else:
            out[name] = value
    return out


def parse_budget(value: Any, *, source: str = "command line") -> int:
    """A token budget a person typed: a positive whole number (commas and underscores allowed)."""
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
