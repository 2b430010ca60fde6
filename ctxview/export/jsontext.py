"""JSON text for exports: indented, with every scalar written as ``JSON.stringify`` writes it."""

from __future__ import annotations

import json
import re
from typing import Any

from ctxview.jsjson import JSNumber, escape_lone_surrogates, js_stringify, to_plain


def pretty_plain(value: Any) -> str:
    """Indented JSON of plain values (the API formats hold no JavaScript number text), with a final newline."""
    return json.dumps(to_plain(value), ensure_ascii=False, indent=2) + "\n"


_NUM_OPEN = "\u0000\u2063ctxview-number:"
_NUM_CLOSE = "\u2063\u0000"
_NUM_RE = re.compile(
    re.escape(json.dumps(_NUM_OPEN, ensure_ascii=False)[:-1])
    + "(.*?)"
    + re.escape(json.dumps(_NUM_CLOSE, ensure_ascii=False)[1:])
)


def _number_placeholder(value: Any) -> Any:
    if isinstance(value, JSNumber):
        return _NUM_OPEN + value.text + _NUM_CLOSE
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def pretty_js(value: Any, indent: int = 2) -> str:
    """Indented JSON whose scalars are written exactly as ``JSON.stringify`` writes them."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, default=_number_placeholder, allow_nan=False)
    except (TypeError, ValueError):
        # non-finite floats or odd values: the slow writer handles them one scalar at a time
        out: list[str] = []
        _write_pretty(value, 0, indent, out)
        return "".join(out)
    if "\u2063ctxview-number:" in text:
        text = _NUM_RE.sub(lambda m: m.group(1), text)
    return escape_lone_surrogates(text)


def _write_pretty(value: Any, level: int, indent: int, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        pad = " " * (indent * (level + 1))
        out.append("{\n")
        for n, (key, item) in enumerate(value.items()):
            out.append(pad + js_stringify(str(key)) + ": ")
            _write_pretty(item, level + 1, indent, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(" " * (indent * level) + "}")
    elif isinstance(value, (list, tuple)) and value:
        pad = " " * (indent * (level + 1))
        out.append("[\n")
        for n, item in enumerate(value):
            out.append(pad)
            _write_pretty(item, level + 1, indent, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(" " * (indent * level) + "]")
    elif isinstance(value, (dict, list, tuple)):
        out.append("{}" if isinstance(value, dict) else "[]")
    elif isinstance(value, (str, int, float, bool, JSNumber)) or value is None:
        out.append(js_stringify(value))
    else:
        out.append(js_stringify(str(value)))
