"""The assembled context: the final messages the model receives, one line each.

Volatile live appends and synthetic tool results are marked; the message
of the item selected in the table is highlighted.  Virtual, like the table.
Bound to the inspector's ``assembly`` (the messages) and ``selection`` (the
highlight).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.message import Message
from textual.reactive import var

from ctxview.model import Decision, Trace, count_text, index_of
from ctxview.tui.state import Assembly, Selection
from ctxview.tui.view import item_id, message_preview, message_role
from ctxview.tui.widgets.virtual import VirtualList


class AssembledView(VirtualList):
    """Trace.messages in order, with the item each came from."""

    COMPONENT_PREFIX: ClassVar[str] = "assembled-view"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        f"assembled-view--{name}"
        for name in ("cursor", "highlight", "index", "role", "item", "live", "synthetic", "fresh", "text", "empty")
    }

    DEFAULT_CSS = """
    AssembledView {
        background: $surface;
        & > .assembled-view--cursor { background: $block-cursor-blurred-background; }
        &:focus > .assembled-view--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .assembled-view--highlight { background: $accent 30%; }
        & > .assembled-view--index { color: $text-muted; }
        & > .assembled-view--role { color: $text-primary; text-style: bold; }
        & > .assembled-view--item { color: $text-muted; }
        & > .assembled-view--live { color: $text-secondary; text-style: bold; }
        & > .assembled-view--synthetic { color: $text-warning; text-style: italic; }
        & > .assembled-view--fresh { color: $text-accent; }
        & > .assembled-view--text { color: $foreground; }
        & > .assembled-view--empty { color: $text-muted; text-style: italic; }
    }
    """

    class MessageChosen(Message):
        """The cursor moved onto a message that came from a decision."""

        def __init__(self, view: AssembledView, key: str | None) -> None:
            super().__init__()
            self.view = view
            self.key = key

        @property
        def control(self) -> AssembledView:
            return self.view

    assembly: var[Assembly | None] = var(None, init=False)
    selection: var[Selection | None] = var(None, init=False)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.trace: Trace | None = None
        self._by_key: dict[str, Decision] = {}
        self.highlight: int | None = None
        # id(message) → (message, role, preview): kept across runs, whose messages are mostly the same objects
        # (holding the message keeps its id from being reused)
        self._previews: dict[int, tuple[Any, str, str]] = {}

    def on_mount(self) -> None:
        self.border_title = "assembled context"

    def watch_assembly(self, assembly: Assembly | None) -> None:
        if assembly is not None:
            self.show(assembly.trace)

    def watch_selection(self, selection: Selection | None) -> None:
        decision = selection.decision if selection is not None else None
        self.highlight_output(decision.output_index if decision is not None else None)

    def show(self, trace: Trace) -> None:
        self.trace = trace
        self._by_key = {}  # filled as rows are drawn: a 100,000-item trace is not walked per edit
        self.set_line_count(len(trace.messages))
        sent = count_text(len(trace.messages), "message")
        self.border_subtitle = f"{sent} · {count_text(trace.summary.final_tokens, 'token')}"

    def _decision(self, key: str) -> Decision | None:
        found = self._by_key.get(key)
        if found is None and self.trace is not None:
            index = index_of(self.trace.decisions, key)
            if index is not None:
                found = self._by_key[key] = self.trace.decisions[index]
        return found

    def highlight_output(self, index: int | None) -> None:
        """Highlight the message of the selected item and bring it into view."""
        if index == self.highlight:
            return
        self.highlight = index
        if index is not None and 0 <= index < self.line_count:
            self.scroll_to_line(index, center=True)
        self.invalidate()

    def on_virtual_list_cursor_moved(self, event: VirtualList.CursorMoved) -> None:
        event.stop()
        if self.trace is None or event.line is None:
            return
        key = self.trace.message_keys[event.line] if event.line < len(self.trace.message_keys) else None
        self.post_message(self.MessageChosen(self, key))

    def _preview(self, line: int) -> tuple[str, str]:
        assert self.trace is not None
        message = self.trace.messages[line]
        cached = self._previews.get(id(message))
        if cached is None or cached[0] is not message:
            cached = (message, message_role(message), message_preview(message, 300))
            if len(self._previews) > 4096:
                self._previews.clear()
            self._previews[id(message)] = cached
        return cached[1], cached[2]

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        assert self.trace is not None
        base = self.base_style
        key = self.trace.message_keys[line] if line < len(self.trace.message_keys) else None
        decision = self._decision(key) if key is not None else None
        role, text = self._preview(line)
        if decision is None:
            tag, tag_style = "synthetic", self.part_style("synthetic")
        elif decision.segment == "live":
            tag, tag_style = f"+live {item_id(decision)}", self.part_style("live")
        elif decision.segment == "fresh-tail":
            tag, tag_style = f"#{item_id(decision)} tail", self.part_style("fresh")
        else:
            tag, tag_style = f"#{item_id(decision)}", self.part_style("item")
        bg = Style()
        if cursor:
            bg = self.part_style("cursor")
        elif line == self.highlight:
            bg = self.part_style("highlight")
        text_style = self.part_style("text") if text else self.part_style("empty")
        if not text:
            text = "(empty)"
        parts = [
            (f"{line:>4} ", self.part_style("index")),
            (set_cell_size(role, 10) + " ", self.part_style("role")),
            (set_cell_size(tag, 10) + " ", tag_style),
            (text, text_style),
        ]
        segments: list[Segment] = []
        used = 0
        for chunk, style in parts:
            room = width - used
            if room <= 0:
                break
            cells = cell_len(chunk)
            if cells > room:
                chunk, cells = set_cell_size(chunk, room), room
            segments.append(Segment(chunk, base + style + bg))
            used += cells
        if used < width:
            segments.append(Segment(" " * (width - used), base + bg))
        return segments
