"""Large live tool results become file references before assembly (spec §9.2 step 3).

With ``stubLargeToolPayloads`` on, the engine rewrites the host's live window
before it does anything else with it: every text payload of a tool result whose
estimate reaches the large-file threshold is replaced by an
``[LCM Tool Output: file_…]`` reference carrying a deterministic file id and a
deterministic text exploration summary.  The rewritten window is what every
later step sees (fallbacks, coverage, volatile append).  The engine also writes
the payload to disk and a ``large_files`` row; neither changes what the model
receives, so this module only rebuilds the messages.

Engine config and host state come in as options: the large-file token
threshold (config, default 25,000) and the host file system, from which a
truncated ``read`` output of the current turn may be recovered (``read_file``;
without it nothing is recovered, as on a machine that lacks the file).  The
optional model-written summary (``largeFileSummaryModel``) is not reproduced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.live import PAIRING_CALL_TYPES, pairing_id, structured_text
from ctxview.assembly.stubs import stub_text
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jserrors import JSTypeError
from ctxview.jsjson import JS_WHITESPACE, collapse_js_whitespace, js_string, js_trim, try_js_parse

DEFAULT_LARGE_FILE_TOKEN_THRESHOLD = 25_000
# The engine never recovers a read result from a host file larger than this.
MAX_LIVE_READ_RECOVERY_BYTES = 8 * 1024 * 1024
EXTERNALIZATION_REASON = "large_tool_result"

# Block types whose payload is a tool output (besides plain text blocks).
_RESULT_BLOCK_TYPES = frozenset({"tool_result", "toolResult", "function_call_output"})
_TOP_LEVEL_CALL_ID_KEYS = ("toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "call_id", "id")
_BLOCK_CALL_ID_KEYS = ("tool_use_id", "toolUseId", "tool_call_id", "toolCallId", "call_id", "id")
_NO_RESTUB_TOOL = "lcm_describe"  # its output is already a drill-down of a stored file
_DEFAULT_TOOL_NAME = "tool-result"

# A text already replaced by an image reference is left as it is.
_IMAGE_REFERENCE = re.compile(
    r"\[(?:(?:User|System|Tool|Assistant) image|Image): [^\]]*LCM file: file_[a-f0-9]{16}\]\Z"
)
_READ_TRUNCATED = (re.compile(r"\[Read output capped at", re.IGNORECASE), re.compile(r"\[Truncated:"))

# Text exploration summary (the only kind a tool output gets: it is always named "<tool>.txt", text/plain).
_LINE_BREAK = re.compile(r"\r?\n")
_WS = "[" + re.escape(JS_WHITESPACE) + "]"
_MARKDOWN_HEADER = re.compile(r"#{1,6}" + _WS + "+")
_CAPS_HEADER = re.compile(r"[A-Z0-9][A-Z0-9" + re.escape(JS_WHITESPACE) + r":_\-]{6,}")
_HEADER_LIMIT = 18
_HEADER_CHARS = 160
_EXCERPT_CHARS = 500
_SURROGATE = re.compile("[\ud800-\udfff]")

ReadFile = Callable[[str], str | None]


class LiveInterceptError(JSTypeError):
    """A live message the engine cannot read (JSON ``null``): its whole ``assemble`` fails.

    The engine then takes its error fallback on the *original* live window (the
    rewritten one is only adopted after every message went through).  ``js_error``
    is the error as Node reports it (``name: message``), which the engine's
    fallback reason carries.
    """

    js_error = "TypeError: Cannot read properties of null (reading 'role')"

    def __init__(self, index: int) -> None:
        super().__init__("Cannot read properties of null (reading 'role')")
        self.index = index


@dataclass(frozen=True, slots=True)
class ToolCallInput:
    """A current-turn tool call: its name and its parsed arguments."""

    name: str | None
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BlockRewrite:
    """One content block the interception changed."""

    block_index: int
    kind: str  # "externalized" (file reference) or "read-recovered" (host file text, below threshold)
    tool_name: str  # the name the engine used (a current-turn call's name wins over the result's)
    call_id: str | None
    payload_tokens: int  # estimate of the payload that was compared with the threshold
    file_id: str | None = None  # externalized only
    byte_size: int | None = None  # UTF-8 bytes of the externalized payload


@dataclass(frozen=True, slots=True)
class InterceptedMessage:
    """A live message the interception replaced, with what changed in it."""

    index: int
    message: dict[str, Any]  # the rewritten message
    blocks: tuple[BlockRewrite, ...]

    @property
    def file_ids(self) -> list[str]:
        return [b.file_id for b in self.blocks if b.file_id is not None]

    def describe(self) -> str:
        """Short text for the trace, e.g. "replaced by a file reference, 112,200 bytes"."""
        parts: list[str] = []
        for block in self.blocks:
            if block.kind == "externalized":
                parts.append(f"replaced by a file reference, {block.byte_size:,} bytes")
            else:
                parts.append("read output recovered from the host file")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class InterceptResult:
    """The live window the engine continues with, and which messages were rewritten."""

    messages: list[Any]  # the input list itself when nothing changed, else a copy
    intercepted: tuple[InterceptedMessage, ...]

    @property
    def indexes(self) -> list[int]:
        return [m.index for m in self.intercepted]

    @property
    def changed(self) -> bool:
        return bool(self.intercepted)


# --- the engine step ---------------------------------------------------------------------------


def intercept_large_live_tool_results(
    live_messages: Sequence[Any],
    *,
    conversation_id: int,
    token_threshold: int = DEFAULT_LARGE_FILE_TOKEN_THRESHOLD,
    read_file: ReadFile | None = None,
) -> InterceptResult:
    """Rewrite the large tool results of the live window as the engine does.

    Only results after the last live user message (the current turn) see the
    tool calls of that turn: their name and, for ``read``, the path whose file
    may replace a truncated output.  ``read_file(path)`` returns the host file's
    text, or None when it is missing, not a regular file, or larger than
    ``MAX_LIVE_READ_RECOVERY_BYTES``; without it nothing is recovered.
    Raises ``LiveInterceptError`` for a ``null`` live message.
    """
    last_user = -1
    for index in range(len(live_messages) - 1, -1, -1):
        message = live_messages[index]
        if isinstance(message, dict) and message.get("role") == "user":
            last_user = index
            break
    current_turn_calls: dict[str, ToolCallInput] | None = None
    if last_user >= 0:
        current_turn_calls = build_tool_call_input_map(live_messages[last_user + 1 :], offset=last_user + 1)

    rewritten: list[Any] | None = None
    intercepted: list[InterceptedMessage] = []
    for index, message in enumerate(live_messages):
        if message is None:
            raise LiveInterceptError(index)
        outcome = intercept_tool_result_message(
            message,
            conversation_id=conversation_id,
            token_threshold=token_threshold,
            tool_calls=current_turn_calls if index > last_user else None,
            read_file=read_file,
        )
        if outcome is None:
            continue
        new_message, blocks = outcome
        if rewritten is None:
            rewritten = list(live_messages)
        rewritten[index] = new_message
        intercepted.append(InterceptedMessage(index, new_message, blocks))
    if rewritten is None:
        return InterceptResult(live_messages if isinstance(live_messages, list) else list(live_messages), ())
    return InterceptResult(rewritten, tuple(intercepted))


def build_tool_call_input_map(messages: Sequence[Any], *, offset: int = 0) -> dict[str, ToolCallInput]:
    """Call id → name and arguments of the assistant tool calls in ``messages``.

    Calls without an object of arguments are left out, and an id issued twice is
    ambiguous and dropped for good.  ``offset`` only numbers a ``null`` message
    in the error.
    """
    found: dict[str, ToolCallInput] = {}
    seen: set[str] = set()
    ambiguous: set[str] = set()
    for position, message in enumerate(messages):
        if message is None:
            raise LiveInterceptError(offset + position)
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") not in PAIRING_CALL_TYPES:
                continue
            call_id = pairing_id(block)
            if call_id is None:
                continue
            if call_id in seen:
                found.pop(call_id, None)
                ambiguous.add(call_id)
                continue
            seen.add(call_id)
            arguments = _call_arguments(block)
            if arguments is not None and call_id not in ambiguous:
                name = block.get("name")
                found[call_id] = ToolCallInput(name if isinstance(name, str) else None, arguments)
    return found


def _call_arguments(block: dict[str, Any]) -> dict[str, Any] | None:
    direct = block.get("input")
    if isinstance(direct, dict):
        return direct
    arguments = block.get("arguments")
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        ok, parsed = try_js_parse(arguments)
        if ok and isinstance(parsed, dict):
            return parsed
    return None


# --- one message --------------------------------------------------------------------------------


def intercept_tool_result_message(
    message: Any,
    *,
    conversation_id: int,
    token_threshold: int = DEFAULT_LARGE_FILE_TOKEN_THRESHOLD,
    tool_calls: dict[str, ToolCallInput] | None = None,
    read_file: ReadFile | None = None,
) -> tuple[dict[str, Any], tuple[BlockRewrite, ...]] | None:
    """The rewritten copy of one tool-result message and its changed blocks, or None."""
    if not isinstance(message, dict) or message.get("role") not in ("toolResult", "tool") or "content" not in message:
        return None
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return None

    threshold = max(1, token_threshold)
    top_call_id = _first_string(message, _TOP_LEVEL_CALL_ID_KEYS)
    top_tool_name = _first_string(message, ("toolName", "tool_name"))
    top_is_error = _first_bool(message, ("isError", "is_error"))

    new_content: list[Any] = []
    rewrites: list[BlockRewrite] = []
    for block_index, block in enumerate(content):
        replacement = _intercept_block(
            block,
            block_index,
            conversation_id=conversation_id,
            threshold=threshold,
            top_call_id=top_call_id,
            top_tool_name=top_tool_name,
            top_is_error=top_is_error,
            tool_calls=tool_calls,
            read_file=read_file,
        )
        if replacement is None:
            new_content.append(block)
            continue
        new_block, rewrite = replacement
        new_content.append(new_block)
        rewrites.append(rewrite)
    if not rewrites:
        return None
    rewritten = dict(message)
    rewritten["content"] = new_content
    return rewritten, tuple(rewrites)


def _intercept_block(
    block: Any,
    block_index: int,
    *,
    conversation_id: int,
    threshold: int,
    top_call_id: str | None,
    top_tool_name: str | None,
    top_is_error: bool | None,
    tool_calls: dict[str, ToolCallInput] | None,
    read_file: ReadFile | None,
) -> tuple[dict[str, Any], BlockRewrite] | None:
    if not isinstance(block, dict):
        return None
    raw_type = block.get("type") if isinstance(block.get("type"), str) else None
    is_plain_text = raw_type == "text" and isinstance(block.get("text"), str)
    if raw_type not in _RESULT_BLOCK_TYPES and not is_plain_text:
        return None

    if is_plain_text:
        source = block["text"]
    elif "output" in block:
        source = block["output"]
    elif "content" in block:
        source = block["content"]
    else:
        source = block
    extracted = structured_text(source)
    if not isinstance(extracted, str) or _IMAGE_REFERENCE.match(js_trim(extracted)):
        return None

    tool_name = _string_or(block.get("name"), top_tool_name, _DEFAULT_TOOL_NAME)
    call_id = _first_string(block, _BLOCK_CALL_ID_KEYS)
    if call_id is None:
        call_id = top_call_id
    if tool_name == _NO_RESTUB_TOOL:
        return None

    call = tool_calls.get(call_id) if call_id and tool_calls is not None else None
    if call is not None and call.name:
        tool_name = call.name
    payload = extracted
    if tool_name == "read":
        payload = _recover_read_output(extracted, call, read_file)

    payload_tokens = estimate_tokens(payload)
    if payload_tokens < threshold:
        if payload == extracted:
            return None
        recovered = dict(block)
        if is_plain_text:
            recovered["text"] = payload
        elif "output" in recovered or "content" not in recovered:
            recovered["output"] = payload
        else:
            recovered["content"] = payload
        return recovered, BlockRewrite(block_index, "read-recovered", tool_name, call_id or None, payload_tokens)

    file_id = live_tool_output_file_id(conversation_id, tool_name, call_id, payload)
    byte_size = len(_utf8(payload))
    summary = text_exploration_summary(payload, f"{tool_name}.txt")
    reference = stub_text(file_id, tool_name, byte_size, summary)
    normalized_type = "function_call_output" if raw_type == "function_call_output" else "tool_result"
    new_block: dict[str, Any]
    if is_plain_text:
        new_block = {"type": "text", "text": reference, "rawType": normalized_type}
    else:
        new_block = {"type": normalized_type, "output": reference}
    new_block["externalizedFileId"] = file_id
    new_block["originalByteSize"] = byte_size
    new_block["toolOutputExternalized"] = True
    new_block["externalizationReason"] = EXTERNALIZATION_REASON
    if call_id:
        new_block["call_id" if normalized_type == "function_call_output" else "tool_use_id"] = call_id
    if isinstance(block.get("is_error"), bool):
        new_block["is_error"] = block["is_error"]
    elif isinstance(block.get("isError"), bool):
        new_block["isError"] = block["isError"]
    elif top_is_error is not None:
        new_block["isError"] = top_is_error
    if tool_name:
        new_block["name"] = tool_name
    rewrite = BlockRewrite(
        block_index, "externalized", tool_name, call_id or None, payload_tokens, file_id=file_id, byte_size=byte_size
    )
    return new_block, rewrite


def _recover_read_output(extracted: str, call: ToolCallInput | None, read_file: ReadFile | None) -> str:
    """A truncated current-turn ``read`` output is replaced by the whole host file when it can be read."""
    if call is None or read_file is None or not any(p.search(extracted) for p in _READ_TRUNCATED):
        return extracted
    path = call.input.get("path")
    if not isinstance(path, str) or not path.startswith("/"):
        return extracted
    text = read_file(path)
    return extracted if text is None else text


def _first_string(obj: dict[str, Any], keys: Sequence[str]) -> str | None:
    """``a ?? b ?? …`` over string fields: an empty string stops the chain."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


def _first_bool(obj: dict[str, Any], keys: Sequence[str]) -> bool | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, bool):
            return value
    return None


def _string_or(value: Any, fallback: str | None, default: str) -> str:
    if isinstance(value, str):
        return value
    return fallback if fallback is not None else default


# --- file id, sizes and the summary ----------------------------------------------------------------


def _utf8(text: str) -> bytes:
    """UTF-8 as Node writes a JS string: a lone surrogate becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def live_tool_output_file_id(conversation_id: int, tool_name: str, call_id: str | None, content: str) -> str:
    """``file_`` + 16 hex digits of SHA-256 over the NUL-joined identity of a live tool output."""
    parts = ("live-tool-output-v1", js_string(conversation_id), tool_name, call_id or "", content)
    digest = hashlib.sha256(b"\0".join(_utf8(part) for part in parts))
    return "file_" + digest.hexdigest()[:16]


def text_exploration_summary(content: str, file_name: str | None) -> str:
    """The deterministic summary of a large text (no summarizer model configured)."""
    normalized = js_trim(collapse_js_whitespace(content))
    lines = _LINE_BREAK.split(content)
    words = normalized.count(" ") + 1 if normalized else 0
    headers = _text_headers(lines)
    opening = _one_line(_utf16_slice(content, 0, _EXCERPT_CHARS), _EXCERPT_CHARS)
    closing = _one_line(_utf16_slice(content, -_EXCERPT_CHARS, None), _EXCERPT_CHARS)
    return "\n".join(
        [
            f"Text exploration summary ({file_name}):" if file_name else "Text exploration summary:",
            f"Characters: {_utf16_units(content):,}.",
            f"Words: {words:,}.",
            f"Lines: {len(lines):,}.",
            f"Detected section headers: {' | '.join(headers) or 'none detected'}.",
            f"Opening excerpt: {opening or '(empty)'}.",
            f"Closing excerpt: {closing or '(empty)'}.",
        ]
    )


def _text_headers(lines: list[str]) -> list[str]:
    """Markdown headings and all-caps lines, first 18 found, then without repeats."""
    found: list[str] = []
    for line in lines:
        trimmed = js_trim(line)
        if _utf16_units(trimmed) <= 1:
            continue
        if _MARKDOWN_HEADER.match(trimmed) or _CAPS_HEADER.fullmatch(trimmed):
            found.append(_one_line(trimmed, _HEADER_CHARS))
            if len(found) == _HEADER_LIMIT:
                break
    return list(dict.fromkeys(found))


def _one_line(text: str, max_units: int) -> str:
    compact = js_trim(collapse_js_whitespace(text))
    if _utf16_units(compact) <= max_units:
        return compact
    return _utf16_slice(compact, 0, max_units) + "..."


def _utf16_units(text: str) -> int:
    """``text.length`` at C speed (a tool output can be megabytes long)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf16_slice(text: str, start: int, end: int | None) -> str:
    """``text.slice(start, end)`` for ``(0, n)`` and ``(-n, None)``, counted in UTF-16 units.

    A cut surrogate pair leaves a lone surrogate, as in JS.  Only the ``n`` code
    points at the cut end are converted: they always span at least ``n`` units.
    """
    window = text[start:] if end is None else text[:end]
    if window.isascii():
        return window
    units = window.encode("utf-16-le", "surrogatepass")
    piece = units[2 * start :] if end is None else units[: 2 * end]
    return piece.decode("utf-16-le", "surrogatepass")
