"""``JSON.stringify`` of the messages the §7.5 and §8 hashes read, remembered across runs.

Clean-up's normalized copies are cached on their items, so the same message
objects come back run after run; their JSON text (and the hash of a fresh-tail
message alone) is kept, bounded, with the object held so its id stays valid.
"""

from __future__ import annotations

from typing import Any

from ctxview.assembly.tool_pairs import h16_of_jsons
from ctxview.jsjson import js_stringify_message

_JSON: dict[int, tuple[Any, str]] = {}
_JSON_LIMIT = 400_000


def message_json(message: Any) -> str:
    """``JSON.stringify(message)``, cached per message object."""
    hit = _JSON.get(id(message))
    if hit is not None and hit[0] is message:
        return hit[1]
    text = js_stringify_message(message)
    if len(_JSON) >= _JSON_LIMIT:
        _JSON.clear()
    _JSON[id(message)] = (message, text)
    return text


_H16_ALONE: dict[str, str] = {}  # JSON text of one message → h16 of the list holding it (fresh-tail hashes)


def h16_alone(json_text: str) -> str:
    """``h16`` of the one-message list ``[message]``, given the message's JSON text (§8 fresh-tail hashes)."""
    value = _H16_ALONE.get(json_text)
    if value is None:
        if len(_H16_ALONE) >= 100_000:
            _H16_ALONE.clear()
        value = _H16_ALONE[json_text] = h16_of_jsons([json_text])
    return value


def clear() -> None:
    """Forget every remembered text (tests compare a warm run with a cold one)."""
    _JSON.clear()
    _H16_ALONE.clear()
