"""``native`` and ``jsonl``: the assembled messages exactly as the reference engine returns them.

``messages_sha256`` is the hash of a native export's text without its final
newline: the trace and markdown exports state it, and ``ctxview diff``
compares by it.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ctxview.jsjson import js_stringify

if TYPE_CHECKING:
    from ctxview.model import Trace


def messages_sha256(messages: list[Any]) -> str:
    """SHA-256 of ``JSON.stringify(messages)``: equal hashes mean byte-identical contexts.

    It is also the hash of a native export's text without its final newline.
    """
    return hashlib.sha256(js_stringify(messages).encode("utf-8", "surrogatepass")).hexdigest()


# --- native and jsonl -------------------------------------------------------------------------


def to_native(trace: Trace) -> str:
    """The final messages, serialized exactly as ``JSON.stringify`` would."""
    return js_stringify(trace.messages) + "\n"


def to_jsonl(trace: Trace) -> str:
    """One native message per line.

    U+2028/U+2029 are escaped so that line-splitting readers (Python's
    ``splitlines``) cannot cut a message in two; the JSON value is unchanged.
    """
    lines = [_escape_line_separators(js_stringify(m)) for m in trace.messages]
    return "".join(line + "\n" for line in lines)


def _escape_line_separators(text: str) -> str:
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
