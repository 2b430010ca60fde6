"""The items table: one row per Decision, coloured by outcome, virtual.

Rows are formatted only when they scroll into view; a new trace swaps the
row data and repaints.  The columns are the specs of ``ctxview.tui.columns``.
Separators mark the fresh-tail boundary, the budget line and the live
inputs (see ``ctxview.tui.view.layout_rows``).  In the inspector the table
is bound to the screen's ``assembly`` (each run) and ``min_budgets`` (the
last sweep); ``show`` is the same swap for other hosts.
"""

from __future__ import annotations

from operator import attrgetter
from typing import ClassVar, get_args

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip

from ctxview.model import Decision, Trace
from ctxview.preview import SessionPreview
from ctxview.tui.columns import DRAWN_FIELDS, ITEM_COLUMNS, Column, TableView, column_widths, fit, visible_columns
from ctxview.tui.scoring_view import LabelTone, has_labels, label_tone
from ctxview.tui.state import Assembly, MinBudgets
from ctxview.tui.view import (
    OutcomeDiff,
    SortMode,
    TableLayout,
    format_score,
    item_id,
    layout_rows,
    outcome_text,
    row_class,
)
from ctxview.tui.widgets.virtual import VirtualList

LABEL_TONES: tuple[LabelTone, ...] = get_args(LabelTone)
_drawn = attrgetter(*DRAWN_FIELDS)  # what a row draws of its decision


class ItemsTable(VirtualList):
    """Every context item and live input with its tokens, score and outcome."""

    COMPONENT_PREFIX: ClassVar[str] = "items-table"
    HEADER_LINES: ClassVar[int] = 1
    ROWS_EXACT: ClassVar[bool] = True

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        f"items-table--{name}"
        for name in (
            "header",
            "cursor",
            "separator",
            "sep-budget",
            "sep-fresh-tail",
            "sep-live",
            "sep-evictable",
            "kept",
            "evicted",
            "fresh",
            "protected",
            "appended",
            "stripped",
            "stubbed",
            "synthetic",
            "dropped",
            "live",
            "focus",
            "muted",
            "changed-up",
            "changed-down",
            "changed",
            "label-exact",
            "label-keyword",
            "label-waste",
            "label-low",
            "label-med",
            "label-muted",
        )
    }

    DEFAULT_CSS = """
    ItemsTable {
        background: $surface;
        & > .items-table--header { background: $panel; color: $foreground; text-style: bold; }
        & > .items-table--cursor { background: $block-cursor-blurred-background; }
        &:focus > .items-table--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
        & > .items-table--separator { color: $text-muted; }
        & > .items-table--sep-budget { color: $text-error; text-style: bold; }
        & > .items-table--sep-fresh-tail { color: $text-accent; text-style: bold; }
        & > .items-table--sep-live { color: $text-secondary; text-style: bold; }
        & > .items-table--sep-evictable { color: $text-muted; text-style: bold; }
        & > .items-table--kept { color: $text-success; }
        & > .items-table--evicted { color: $text-error; }
        & > .items-table--fresh { color: $text-accent; }
        & > .items-table--protected { color: $text-warning; text-style: bold; }
        & > .items-table--appended { color: $text-secondary; text-style: bold; }
        & > .items-table--stripped { color: $text-warning; }
        & > .items-table--stubbed { color: #4fb8c9; text-style: italic; }
        & > .items-table--synthetic { color: $text-warning; text-style: italic; }
        & > .items-table--dropped { color: $text-error 70%; }
        & > .items-table--live { color: $text-muted; }
        & > .items-table--focus { color: $text-primary; }
        & > .items-table--muted { color: $text-muted; }
        & > .items-table--changed-up { background: $success 25%; }
        & > .items-table--changed-down { background: $error 25%; }
        & > .items-table--changed { background: $warning 20%; }
        & > .items-table--label-exact { color: $text-success; }
        & > .items-table--label-keyword { color: $text-warning; }
        & > .items-table--label-waste { color: $text-error; text-style: bold; }
        & > .items-table--label-low { color: $text-warning; text-style: bold; }
        & > .items-table--label-med { color: $text-success; text-style: bold; }
        & > .items-table--label-muted { color: $text-muted; }
    }
    """

    class ItemHighlighted(Message):
        """The cursor moved to another item (``decision`` is None when the table is empty)."""

        def __init__(self, table: ItemsTable, decision: Decision | None) -> None:
            super().__init__()
            self.table = table
            self.decision = decision

        @property
        def control(self) -> ItemsTable:
            return self.table

    assembly: var[Assembly | None] = var(None, init=False)  # the run to show (bound to the inspector's)
    min_budgets: var[MinBudgets | None] = var(None, init=False)  # the last budget sweep's answer, if any

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.trace: Trace | None = None
        self.table_layout: TableLayout | None = None
        self.diff: OutcomeDiff = OutcomeDiff()
        self.sort: SortMode = "ordinal"
        self.show_labels = False  # the label column, when the trace comes from a named scorer
        self.show_min_budget = False  # the min-budget column, when the last sweep covers this trace's params
        self.table_view = TableView(OutcomeDiff())  # what the cells read besides their decision
        self._full_layout: TableLayout | None = None  # every row, in the sort; ``table_layout`` is what shows
        self.matches: list[int] | None = None  # the filter's decision indexes (None: no filter)
        self.reverse = False  # the sort the other way round
        self._columns: tuple[tuple[Column, ...], list[int], int] = ((), [], -1)  # columns, widths, for a width
        self._drawn: Trace | None = None  # the trace of the last paint
        self._row_style_cache: dict[tuple[Style, str, int | None, bool], dict[str, Style]] = {}
        self.preview: SessionPreview | None = None  # the first rows, drawn until the first trace arrives
        self._before: tuple[Trace, TableLayout, TableView] | None = None  # what was drawn, while ``show`` repaints

    STALE_OPACITY: ClassVar[float] = 0.55

    def on_mount(self) -> None:
        self.border_title = "items"

    @property
    def stale(self) -> bool:
        """True while the rows are dimmed: a re-assembly is under way and these rows are the last result."""
        return "text_opacity" in self.styles.inline.get_rules()

    def set_stale(self, stale: bool) -> None:
        """Dim the rows, or not.  An inline style, not a class: a class re-applies the stylesheet to the
        table and every one of its component styles (tens of milliseconds, on a run already slow)."""
        if stale == self.stale:
            return
        if stale:
            self.styles.text_opacity = self.STALE_OPACITY
        else:
            self.styles.clear_rule("text_opacity")
            self.refresh()

    # --- data ----------------------------------------------------------------------------

    class Drawn(Message):
        """The table has drawn ``trace`` for the first time (the panes that wait for it may follow)."""

        def __init__(self, table: ItemsTable, trace: Trace) -> None:
            super().__init__()
            self.table = table
            self.trace = trace

        @property
        def control(self) -> ItemsTable:
            return self.table

    class HeaderClicked(Message):
        """A click on a sortable column's header: sort by it (again: reverse)."""

        def __init__(self, sort: SortMode) -> None:
            super().__init__()
            self.sort = sort

    def watch_assembly(self, assembly: Assembly | None) -> None:
        if assembly is None:
            return
        self.loading = False
        self.preview = None
        self.show(assembly.trace, assembly.diff, assembly.layout)

    def show_preview(self, preview: SessionPreview) -> None:
        """Draw the session's first rows (kind and tokens, no outcome yet) until the first trace arrives."""
        if self.trace is not None:
            return
        self.preview = preview
        self.set_line_count(len(preview.rows))
        self.border_title = f"items · {preview.item_count:,} · reading…"

    def _show_title(self) -> None:
        full = self._full_layout.row_count if self._full_layout is not None else 0
        if self.matches is not None:
            title = f"items · {len(self.matches):,} of {full:,}"
        else:
            title = f"items · {full:,}"
        if title != self.border_title:  # (setting it repaints the whole table, even to the same text)
            self.border_title = title

    # --- what is shown of the layout: the filter's rows, the sort reversed ---------------------

    def set_presentation(self, *, matches: list[int] | bool | None = False, reverse: bool | None = None) -> None:
        """Show only the decisions ``matches`` (None: all; False: unchanged) and/or reverse the order."""
        key = self.selected_key
        if matches is not False:
            self.matches = matches  # type: ignore[assignment]
        if reverse is not None:
            self.reverse = reverse
        if self._full_layout is not None:
            self.table_layout = self._present(self._full_layout)
            self.set_line_count(len(self.table_layout.lines))
            self._restore(key)
        self._show_title()

    def _present(self, layout: TableLayout) -> TableLayout:
        if self.matches is None and not self.reverse:
            return layout
        lines = layout.lines
        separators = layout.separators
        if self.matches is not None:
            wanted = set(self.matches)
            lines = [index for index in lines if index in wanted]  # separators go: the rows between them are gone
            separators = []
        if self.reverse:
            lines = [index for index in reversed(lines) if index >= 0]  # a reversed budget line would mean nothing
            separators = []
        return TableLayout(layout.sort, lines, separators, None, layout.index_of_key, layout.keys)

    def watch_min_budgets(self) -> None:
        if self.trace is not None:
            self._update_view(self.trace)
            self.invalidate()

    def _update_view(self, trace: Trace) -> None:
        """What the cells read, and which columns show: the label and min-budget columns come and go."""
        self.show_labels = has_labels(trace)
        self.show_min_budget = self.min_budgets is not None and self.min_budgets.covers(trace.params)
        self.table_view = TableView(self.diff, self.show_labels, self.min_budgets if self.show_min_budget else None)
        self._columns = ((), [], -1)

    def show(self, trace: Trace, diff: OutcomeDiff, layout: TableLayout | None = None) -> None:
        """Swap in a new trace; keep the cursor on the same item when it still exists.

        A trace in the same columns as the one shown repaints only the visible lines that changed
        (``repaint_changed``; a line more or less, as a separator comes or goes, shifts only the lines
        below it); otherwise (or when the scrollbar comes or goes) the whole table.
        """
        key = self.selected_key
        shown = self.trace
        columns = self._columns[0]
        before = (shown, self.table_layout, self.table_view) if shown is not None and self.table_layout else None
        self.trace = trace
        self.diff = diff
        self._update_view(trace)
        full = layout if layout is not None and layout.sort == self.sort else layout_rows(trace, self.sort)
        self._full_layout = full
        self.table_layout = self._present(full)
        count = len(self.table_layout.lines)
        width = self.scrollable_content_region.width
        drawn_count = self.line_count
        if (
            shown is not None
            and self.is_attached
            and self.columns(width)[0] == columns
            and (count == drawn_count or self.resize_lines(count))
        ):
            self._restore(key, repaint=False)
            self._before = before
            try:
                self.repaint_changed(drawn_count)
            finally:
                self._before = None
        else:
            self.set_line_count(count)
            self._restore(key)
        self._show_title()

    def row_unchanged(self, line: int) -> bool:
        """A decision that draws the same (``DRAWN_FIELDS`` equal) on ``line`` as in the trace drawn before, with
        the same change mark, labels and sweep: its cells and styles are the same (a prompt edit changes few
        visible rows; the positions in the output of many, which no cell shows)."""
        before = self._before
        if before is None or self.trace is None or self.table_layout is None:
            return False
        trace, layout, view = before
        if line >= len(layout.lines) or layout.lines[line] < 0 or self.table_layout.lines[line] < 0:
            return False  # (a separator's text may change)
        old = trace.decisions[layout.lines[line]]
        new = self.trace.decisions[self.table_layout.lines[line]]
        if old is not new and _drawn(old) != _drawn(new):
            return False
        now = self.table_view
        if now.labels != view.labels or now.min_budgets is not view.min_budgets:
            return False
        return view.diff.mark(new.key) == now.diff.mark(new.key)

    def set_sort(self, sort: SortMode, layout: TableLayout | None = None) -> None:
        """Re-order the rows (``layout`` may be computed off the UI thread for big traces)."""
        if self.trace is None:
            self.sort = sort
            return
        key = self.selected_key
        self.sort = sort
        full = layout if layout is not None and layout.sort == sort else layout_rows(self.trace, sort)
        self._full_layout = full
        self.table_layout = self._present(full)
        self.set_line_count(len(self.table_layout.lines))
        self._restore(key, center=True)

    def _restore(self, key: str | None, *, center: bool = False, repaint: bool = True) -> None:
        line = self.line_of_key(key) if key is not None else None
        if line is None:
            line = self.cursor if self.cursor is not None else 0
        self.move_cursor_to(line, notify=False, center=center, repaint=repaint)
        # the detail pane follows the new trace even when the cursor stayed put
        self.post_message(self.ItemHighlighted(self, self.selected_decision))

    def line_of_key(self, key: str) -> int | None:
        if self.table_layout is None:
            return None
        index = self.table_layout.index_of_key.get(key)
        return None if index is None else self.table_layout.line_of_index(index)

    def select_key(self, key: str) -> bool:
        line = self.line_of_key(key)
        if line is None:
            return False
        self.move_cursor_to(line, center=True)
        return True

    @property
    def selected_decision(self) -> Decision | None:
        if self.trace is None or self.table_layout is None or self.cursor is None:
            return None
        if not 0 <= self.cursor < len(self.table_layout.lines):
            return None
        index = self.table_layout.lines[self.cursor]
        return self.trace.decisions[index] if index >= 0 else None

    @property
    def selected_key(self) -> str | None:
        decision = self.selected_decision
        return decision.key if decision is not None else None

    def visible_rows(self) -> list[tuple[str, str, str, str, str, str]]:
        """The cells of every row in display order (for tests and screenshots' captions)."""
        if self.trace is None or self.table_layout is None:
            return []
        rows = []
        for index in self.table_layout.lines:
            if index >= 0:
                d = self.trace.decisions[index]
                cells = (item_id(d), d.label, str(d.tokens), format_score(d.score), outcome_text(d.outcome), d.reason)
                rows.append(cells)
        return rows

    # --- rendering -------------------------------------------------------------------------

    def _preview_row(self, line: int, width: int) -> list[Segment]:
        assert self.preview is not None
        row = self.preview.rows[line]
        style = self.base_style + self.part_style("muted")
        columns, widths = self.columns(width)
        shown = zip(columns, widths, strict=True)
        cells = (fit(column.preview_cell(row), w, column.align) for column, w in shown if w > 0)
        return [Segment(" ".join(cells), style)]

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        if self.trace is not None and self.trace is not self._drawn:
            self._drawn = self.trace
            self.post_message(self.Drawn(self, self.trace))
        return lines

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is not None and offset.y < self.HEADER_LINES:
            sort = self.sort_at(offset.x)
            if sort is not None:
                event.stop()
                self.post_message(self.HeaderClicked(sort))
        # (rows: VirtualList's own click handler runs too and moves the cursor)

    def sort_at(self, x: int) -> SortMode | None:
        """The sort of the column whose header is at cell ``x`` (None: that column does not sort)."""
        columns, widths = self.columns(self.scrollable_content_region.width)
        start = 0
        for column, width in zip(columns, widths, strict=True):
            if width <= 0:
                continue
            if start <= x < start + width + 1:
                return column.sort[0] if column.sort is not None else None
            start += width + 1
        return None

    def is_selectable(self, line: int) -> bool:
        return self.table_layout is not None and self.table_layout.lines[line] >= 0

    def on_virtual_list_cursor_moved(self, event: VirtualList.CursorMoved) -> None:
        event.stop()
        self.post_message(self.ItemHighlighted(self, self.selected_decision))

    def columns(self, width: int) -> tuple[tuple[Column, ...], list[int]]:
        """The columns shown and their widths (the same for every line of a paint)."""
        columns, widths, for_width = self._columns
        if for_width != width:
            columns = visible_columns(self.table_view, ITEM_COLUMNS)
            widths = column_widths(columns, width)
            self._columns = (columns, widths, width)
        return columns, widths

    def render_header(self, width: int) -> list[Segment]:
        style = self.part_style("header")
        columns, widths = self.columns(width)
        sort = self.sort if self.trace is not None else None
        text = " ".join(
            fit(self._header(column, sort), w, column.align) for column, w in zip(columns, widths, strict=True) if w > 0
        )
        return [Segment(set_cell_size(text, width), style)]

    def _header(self, column: Column, sort: SortMode | None) -> str:
        text = column.header_text(sort)
        if self.reverse and column.sort is not None and sort == column.sort[0]:
            return column.header + ("▼" if column.sort[1] == "▲" else "▲")
        return text

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        if self.trace is None and self.preview is not None:
            return self._preview_row(line, width)
        assert self.trace is not None and self.table_layout is not None
        index = self.table_layout.lines[line]
        base = self.base_style
        if index < 0:
            separator = self.table_layout.separators[-index - 1]
            style = self.part_style(f"sep-{separator.kind}")
            label = f"── {separator.text} "
            return [Segment(set_cell_size(label + "─" * max(0, width - len(label)), width), base + style)]
        d = self.trace.decisions[index]
        klass = row_class(d)
        direction = self.diff.mark(d.key)
        styles = self._row_styles(base, klass, direction, cursor)
        view = self.table_view
        gap = styles["gap"]
        # cells and the gaps between them, neighbours of one style as one segment (fewer segments for
        # Textual to filter and crop per line; the same cells)
        texts: list[str] = []
        spans: list[Style] = []
        columns, widths = self.columns(width)
        for column, w in zip(columns, widths, strict=True):
            if w <= 0:
                continue
            tone = column.tone
            style = styles[f"label-{label_tone(d.label_extra)}"] if tone == "label" else styles[tone]
            text = fit(column.cell(d, view), w, column.align)
            if spans and spans[-1] is style:
                texts[-1] += text
            else:
                texts.append(text)
                spans.append(style)
            if style is gap:
                texts[-1] += " "
            else:
                texts.append(" ")
                spans.append(gap)
        if texts:
            texts[-1] = texts[-1][:-1]  # (no gap after the last cell)
            if not texts[-1]:
                texts.pop()
                spans.pop()
        return [Segment(text, style) for text, style in zip(texts, spans, strict=True)]

    def _row_styles(self, base: Style, klass: str, direction: int | None, cursor: bool) -> dict[str, Style]:
        """The styles of a row's cells by tone (and its gaps), for one kind of row: a paint draws
        dozens of rows from a handful of these, not a dozen style sums per row."""
        key = (base, klass, direction, cursor)
        styles = self._row_style_cache.get(key)
        if styles is not None:
            return styles
        outcome = self.part_style(klass)
        body = self.part_style("muted") if klass in ("evicted", "dropped", "live") else Style()
        row_bg = Style()
        if direction is not None:
            row_bg = self.part_style({1: "changed-up", -1: "changed-down", 0: "changed"}[direction])
        if cursor:
            row_bg = self.part_style("cursor")
        gap = base + row_bg
        styles = {
            "body": gap if not body else base + body + row_bg,  # (the same object: one segment with the gaps)
            "outcome": base + outcome + row_bg,
            "strong": base + (outcome + Style(bold=True)) + row_bg,
            "gap": gap,
        }
        styles.update(
            (f"label-{tone}", base + self.part_style(f"label-{tone}") + row_bg) for tone in LABEL_TONES
        )
        if len(self._row_style_cache) > 256:  # (a new base style per theme or focus change)
            self._row_style_cache.clear()
        self._row_style_cache[key] = styles
        return styles

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._row_style_cache.clear()
