"""The items table: one row per Decision, coloured by outcome, virtual.

Rows are formatted only when they scroll into view; a new trace swaps the
row data and repaints.  Separators mark the fresh-tail boundary, the budget
line and the live inputs (see ``ctxview.tui.view.layout_rows``).  In the
inspector the table is bound to the screen's ``assembly`` (each run) and
``min_budgets`` (the last sweep); ``show`` is the same swap for other hosts.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.message import Message
from textual.reactive import var

from ctxview.model import Decision, Trace
from ctxview.tui.scoring_view import LABEL_WIDTH, has_labels, label_marker, label_tone
from ctxview.tui.state import Assembly, MinBudgets
from ctxview.tui.view import (
    OutcomeDiff,
    SortMode,
    TableLayout,
    clean_inline,
    format_score,
    item_id,
    layout_rows,
    outcome_text,
    row_class,
)
from ctxview.tui.widgets.virtual import VirtualList

# (header, width, alignment) of the fixed columns; the reason takes the rest
_FIXED = (
    ("", 2, "<"),
    ("item", 6, ">"),
    ("kind", 12, "<"),
    ("tokens", 7, ">"),
    ("score", 7, ">"),
    ("label", LABEL_WIDTH, "<"),  # scorer label (exact / kw / ROI band); only when a named scorer ran
    ("outcome", 21, "<"),
    ("min budget", 10, ">"),  # smallest budget at which it is kept; only once a budget sweep ran (w)
)
_KIND, _LABEL, _OUTCOME, _MIN_BUDGET = 2, 5, 6, 7


def _cell(text: str, width: int, align: str) -> str:
    if width <= 0:
        return ""
    text = set_cell_size(text, width) if align == "<" else text.rjust(width)[-width:]
    return text


class ItemsTable(VirtualList):
    """Every context item and live input with its tokens, score and outcome."""

    COMPONENT_PREFIX: ClassVar[str] = "items-table"
    HEADER_LINES: ClassVar[int] = 1

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

    def on_mount(self) -> None:
        self.border_title = "items"

    # --- data ----------------------------------------------------------------------------

    def watch_assembly(self, assembly: Assembly | None) -> None:
        if assembly is None:
            return
        self.loading = False
        self.show(assembly.trace, assembly.diff, assembly.layout)
        self.border_title = f"items · {assembly.layout.row_count:,}"

    def watch_min_budgets(self) -> None:
        if self.trace is not None:
            self._update_min_budget_column(self.trace)
            self.invalidate()

    def _update_min_budget_column(self, trace: Trace) -> None:
        self.show_min_budget = self.min_budgets is not None and self.min_budgets.covers(trace.params)

    def show(self, trace: Trace, diff: OutcomeDiff, layout: TableLayout | None = None) -> None:
        """Swap in a new trace; keep the cursor on the same item when it still exists."""
        key = self.selected_key
        self.trace = trace
        self.diff = diff
        self.show_labels = has_labels(trace)
        self._update_min_budget_column(trace)
        self.table_layout = layout if layout is not None and layout.sort == self.sort else layout_rows(trace, self.sort)
        self.set_line_count(len(self.table_layout.lines))
        self._restore(key)

    def set_sort(self, sort: SortMode, layout: TableLayout | None = None) -> None:
        """Re-order the rows (``layout`` may be computed off the UI thread for big traces)."""
        if self.trace is None:
            self.sort = sort
            return
        key = self.selected_key
        self.sort = sort
        self.table_layout = layout if layout is not None and layout.sort == sort else layout_rows(self.trace, sort)
        self.set_line_count(len(self.table_layout.lines))
        self._restore(key, center=True)

    def _restore(self, key: str | None, *, center: bool = False) -> None:
        line = self.line_of_key(key) if key is not None else None
        if line is None:
            line = self.cursor if self.cursor is not None else 0
        self.move_cursor_to(line, notify=False, center=center)
        # the detail pane follows the new trace even when the cursor stayed put
        self.post_message(self.ItemHighlighted(self, self.selected_decision))

    def line_of_key(self, key: str) -> int | None:
        if self.table_layout is None:
            return None
        index = self.table_layout.index_of_key.get(key)
        return None if index is None else self.table_layout.line_of.get(index)

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

    def is_selectable(self, line: int) -> bool:
        return self.table_layout is not None and self.table_layout.lines[line] >= 0

    def on_virtual_list_cursor_moved(self, event: VirtualList.CursorMoved) -> None:
        event.stop()
        self.post_message(self.ItemHighlighted(self, self.selected_decision))

    def _widths(self, width: int) -> list[int]:
        widths = [w for _, w, _ in _FIXED]
        if not self.show_labels:
            widths[_LABEL] = 0
        if not self.show_min_budget:
            widths[_MIN_BUDGET] = 0
        gaps = sum(1 for w in widths if w > 0)
        rest = width - sum(widths) - gaps
        if rest < 12:  # narrow: shrink kind and outcome before the reason disappears
            shrink = min(12 - rest, 8)
            widths[_KIND] -= shrink // 2
            widths[_OUTCOME] -= shrink - shrink // 2
            rest = width - sum(widths) - gaps
        return [*widths, max(0, rest)]

    def render_header(self, width: int) -> list[Segment]:
        style = self.part_style("header")
        widths = self._widths(width)
        names = [name for name, _, _ in _FIXED] + ["reason"]
        aligns = [align for _, _, align in _FIXED] + ["<"]
        if self.trace is not None:
            names[1] = {"ordinal": "item▲", "score": "item", "tokens": "item"}[self.sort]
            names[4] = "score▼" if self.sort == "score" else "score"
            names[3] = "tokens▼" if self.sort == "tokens" else "tokens"
        text = " ".join(_cell(n, w, a) for n, w, a in zip(names, widths, aligns, strict=True) if w > 0)
        return [Segment(set_cell_size(text, width), style)]

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
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
        outcome_style = self.part_style(klass)
        body = Style()
        if klass in ("evicted", "dropped", "live"):
            body = self.part_style("muted")
        direction = self.diff.direction(d.key) if d.key in self.diff.changed else None
        row_bg = Style()
        marker = ""
        if direction is not None:
            marker = {1: "▲", -1: "▼", 0: "•"}[direction]
            row_bg = self.part_style({1: "changed-up", -1: "changed-down", 0: "changed"}[direction])
        if cursor:
            row_bg = self.part_style("cursor")
        widths = self._widths(width)
        min_budget = self.min_budgets.of(d.key) if self.show_min_budget and self.min_budgets is not None else None
        reason = d.reason
        if d.evicted_by:
            reason = f"{reason} [for {d.evicted_by}]"
        cells = [
            (marker, outcome_style),
            (item_id(d), body),
            (clean_inline(d.label, 40), body),
            (f"{d.tokens:,}", body),
            (format_score(d.score), body),
            (label_marker(d.label_extra), self.part_style(f"label-{label_tone(d.label_extra)}")),
            (outcome_text(d.outcome), outcome_style + Style(bold=True)),
            ("never" if min_budget is None else f"{min_budget:,}", body),
            (clean_inline(reason, 300), body),
        ]
        aligns = [align for _, _, align in _FIXED] + ["<"]
        segments: list[Segment] = []
        for (text, style), w, align in zip(cells, widths, aligns, strict=True):
            if w <= 0:
                continue
            segments.append(Segment(_cell(text, w, align), base + style + row_bg))
            segments.append(Segment(" ", base + row_bg))
        if segments:
            segments.pop()
        return segments
