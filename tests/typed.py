"""Values compared with their types: ``==`` alone takes 1, 1.0 and True for one another."""

from __future__ import annotations

from typing import Any


def typed(value: Any) -> Any:
    """``value`` with the type of every part spelt out."""
    if isinstance(value, dict):
        return ("dict", tuple((typed(k), typed(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(typed(v) for v in value))
    return (type(value).__name__, repr(value))
