"""The line over the items table where a filter (``f``) or an item number (``:``) is typed.

It only edits text: the screen applies the filter as it changes, and ``escape`` posts
``Cleared`` (the filter goes, or the go-to is cancelled).  Enter is Input's own
``Submitted``: the screen keeps the filter, or goes to the item, and focuses the table.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Input

from ctxview.tui.actions import bindings

FindMode = Literal["filter", "goto"]

_PLACEHOLDERS: dict[FindMode, str] = {
    "filter": "words match text · outcome:evicted kind:toolResult role:user tokens>500 changed",
    "goto": "item number (or L2 for a live input), then Enter",
}
_TITLES: dict[FindMode, str] = {"filter": "filter  (enter: keep · esc: clear)", "goto": "go to item"}


class FindLine(Input):
    """A one-line input with a mode; hidden until ``f`` or ``:``."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("find")

    DEFAULT_CSS = """
    FindLine {
        display: none;
        border: round $accent;
        border-title-color: $foreground;
        background: $surface;
        padding: 0 1;
        height: 3;
    }
    FindLine.-shown { display: block; }
    """

    class Cleared(Message):
        """Escape: clear the filter (or cancel the go-to)."""

        def __init__(self, mode: FindMode) -> None:
            super().__init__()
            self.mode = mode

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, select_on_focus=False)
        self.mode: FindMode = "filter"

    def open(self, mode: FindMode, value: str) -> None:
        """Show the line in ``mode`` with ``value`` and focus it."""
        self.mode = mode
        self.placeholder = _PLACEHOLDERS[mode]
        self.border_title = _TITLES[mode]
        with self.prevent(Input.Changed):
            self.value = value
        self.cursor_position = len(value)
        self.add_class("-shown")
        self.focus()

    def close(self) -> None:
        self.remove_class("-shown")

    def action_clear(self) -> None:
        self.post_message(self.Cleared(self.mode))
