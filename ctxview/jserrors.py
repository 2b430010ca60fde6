"""Errors the reference engine's JavaScript throws, reproduced by name and message.

Where the engine throws, it falls back to the live transcript and reports
``live-fallback:assemble-error:<Name>: <message>``; the emulation raises
these so that the fallback, its reason and the message read as the engine's.
"""

from __future__ import annotations

from typing import Any


class JSError(Exception):
    """A JavaScript exception: ``str()`` is its message, ``js_text`` what ``String(error)`` prints."""

    js_name = "Error"

    @property
    def js_text(self) -> str:
        return f"{self.js_name}: {self}"


class JSTypeError(JSError, TypeError):
    js_name = "TypeError"


class JSRangeError(JSError, ValueError):
    js_name = "RangeError"


def in_operator_error(key: str, value: Any) -> JSTypeError:
    """What ``key in value`` throws when ``value`` is not an object (null, a string, a number …)."""
    from ctxview.jsjson import js_string

    return JSTypeError(f"Cannot use 'in' operator to search for '{key}' in {js_string(value)}")


def require_objects(messages: list[Any]) -> None:
    """Raise as the engine does on the first live entry that is not an object (it reads ``"content" in m``)."""
    for message in messages:
        if not isinstance(message, (dict, list)):
            raise in_operator_error("content", message)
