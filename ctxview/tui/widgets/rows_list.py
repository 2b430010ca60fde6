"""A virtual table whose rows come from a function: the browser views' lists (messages, briefs, files, entries).

Only the visible lines are asked for, so the source can page from the database
(100,000 messages never become widgets or even rows in memory).  Each cell is
(text, tone): the tone names a component class (``rows-list--summarised``) that
colours it; every text is cleaned to one literal line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.message import Message

from ctxview.tui.columns import fit
from ctxview.tui.view import clean_inline
from ctxview.tui.widgets.virtual import VirtualList

Cell = tuple[str, str]  # (text, tone: "" or a component short name)
RowSource = Callable[[int], Sequence[Cell] | None]
TONES = ("context", "summarised", "not-in-context", "itself", "summary", "not-sent", "muted", "active", "warning")


@dataclass(frozen=True, slots=True)
class ListColumn:
    title: str
    width: int | None  # None: shares what is left
    align: Literal["<", ">"] = "<"


class RowsList(VirtualList):
    """Rows from ``source(line)``; ``set_rows`` swaps the source and the count."""

    COMPONENT_PREFIX: ClassVar[str] = "rows-list"
    HEADER_LINES: ClassVar[int] = 1
    COMPONENT_CLASSES: ClassVar[set[str]] = {f"rows-list--{name}" for name in ("header", "cursor", *TONES)}

    DEFAULT_CSS = """
    RowsList {
        background: $surface;
        border: round $border-blurred;
        border-title-color: $text-muted;
        border-subtitle-color: $text-muted;
        & > .rows-list--header { background: $panel; color: $foreground; text-style: bold; }
        & > .rows-list--cursor { background: $block-cursor-blurred-background; }
        &:focus > .rows-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .rows-list--context { color: $text-success; }
        & > .rows-list--itself { color: $text-success; }
        & > .rows-list--summarised { color: $text-accent; }
        & > .rows-list--summary { color: $text-accent; }
        & > .rows-list--not-in-context { color: $text-muted; }
        & > .rows-list--not-sent { color: $text-error; }
        & > .rows-list--muted { color: $text-muted; }
        & > .rows-list--active { color: $text-primary; text-style: bold; }
        & > .rows-list--warning { color: $text-warning; }
    }
    RowsList:focus { border: round $border; border-title-color: $foreground; border-title-style: bold; }
    """

    class Highlighted(Message):
        """The cursor moved to ``line`` (None: the list is empty)."""

        def __init__(self, widget: RowsList, line: int | None) -> None:
            super().__init__()
            self.widget = widget
            self.line = line

        @property
        def control(self) -> RowsList:
            return self.widget

    def __init__(
        self, columns: Sequence[ListColumn], *, name: str | None = None, id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.list_columns = tuple(columns)
        self._source: RowSource = lambda _line: None
        self._widths: tuple[int, list[int]] = (-1, [])

    def set_rows(self, count: int, source: RowSource, *, cursor: int | None = 0) -> None:
        self._source = source
        self.set_line_count(count)
        if count:
            self.move_cursor_to(cursor if cursor is not None else 0)
        else:
            self.post_message(self.Highlighted(self, None))

    def cells(self, line: int) -> Sequence[Cell] | None:
        return self._source(line)

    def widths(self, width: int) -> list[int]:
        cached_for, widths = self._widths
        if cached_for != width:
            fixed = sum(c.width or 0 for c in self.list_columns) + len(self.list_columns) - 1
            flexible = [c for c in self.list_columns if c.width is None]
            share = max(4, (width - fixed) // len(flexible)) if flexible else 0
            widths = [c.width if c.width is not None else share for c in self.list_columns]
            self._widths = (width, widths)
        return widths

    def render_header(self, width: int) -> list[Segment]:
        text = " ".join(
            fit(c.title, w, c.align) for c, w in zip(self.list_columns, self.widths(width), strict=True)
        )
        return [Segment(set_cell_size(text, width), self.part_style("header"))]

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        base = self.base_style
        cells = self._source(line)
        row_bg = self.part_style("cursor") if cursor else Style()
        if cells is None:
            return [Segment(" " * width, base + row_bg)]
        segments: list[Segment] = []
        for column, w, (text, tone) in zip(self.list_columns, self.widths(width), cells, strict=False):
            style = self.part_style(tone) if tone else Style()
            segments.append(Segment(fit(clean_inline(text, 400), w, column.align), base + style + row_bg))
            segments.append(Segment(" ", base + row_bg))
        if segments:
            segments.pop()
        return segments

    def on_virtual_list_cursor_moved(self, event: VirtualList.CursorMoved) -> None:
        event.stop()
        self.post_message(self.Highlighted(self, event.line))
