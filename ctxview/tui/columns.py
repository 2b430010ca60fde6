"""The items table's columns, one spec each: header, width, alignment, cell text, the sort it shows.

``ItemsTable`` draws whatever ``ITEM_COLUMNS`` lists, in order; the last
column takes the width the others leave.  A cell is text computed from the
decision and the table's ``TableView`` (the outcome diff, whether the trace has
scorer labels, the min budgets of a sweep that covers it); its ``tone`` says
how the table colours it.  Kept free of Textual, like ``view``.

To add a column: one ``Column`` line in ``ITEM_COLUMNS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rich.cells import set_cell_size

from ctxview.model import Decision
from ctxview.preview import PreviewRow
from ctxview.tui.scoring_view import LABEL_WIDTH, label_marker
from ctxview.tui.state import MinBudgets
from ctxview.tui.view import OutcomeDiff, SortMode, clean_inline, format_score, item_id, outcome_text
from ctxview.tui.why import terse_reason

Align = Literal["<", ">"]
# how a cell is coloured: like the row's text, in the outcome's colour (bold: "strong"), or by its scorer label
CellTone = Literal["body", "outcome", "strong", "label"]


@dataclass(frozen=True, slots=True)
class TableView:
    """What cells read besides their decision; one per trace (and per sweep result) shown."""

    diff: OutcomeDiff
    labels: bool = False  # the trace comes from a scorer that labels items (rarity, section ROI)
    min_budgets: MinBudgets | None = None  # a budget sweep that covers the trace's params


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the items table."""

    header: str
    width: int  # cells; 0: whatever the other columns leave (the last column)
    align: Align
    cell: Callable[[Decision, TableView], str]
    sort: tuple[SortMode, str] | None = None  # the sort that orders rows by this column, and its header mark
    tone: CellTone = "body"
    when: Callable[[TableView], bool] | None = None  # shown only when this holds (None: always)
    shrinks: bool = False  # gives up cells when the table is too narrow for the last column
    preview: Callable[[PreviewRow], str] | None = None  # the cell of a row read before the first trace

    def preview_cell(self, row: PreviewRow) -> str:
        return self.preview(row) if self.preview is not None else ""

    def header_text(self, sort: SortMode | None) -> str:
        """The header, marked when the rows are sorted by this column (``sort`` None: no rows yet)."""
        if self.sort is not None and sort == self.sort[0]:
            return self.header + self.sort[1]
        return self.header


_CHANGE_MARKERS = {1: "▲", -1: "▼", 0: "•"}


def _change(d: Decision, view: TableView) -> str:
    mark = view.diff.mark(d.key)
    return _CHANGE_MARKERS[mark] if mark is not None else ""


def _min_budget(d: Decision, view: TableView) -> str:
    sent_from = view.min_budgets.of(d.key) if view.min_budgets is not None else None
    return sent_from or "never"


def _reason(d: Decision, view: TableView) -> str:
    return clean_inline(terse_reason(d), 300)


ITEM_COLUMNS: tuple[Column, ...] = (
    Column("", 2, "<", _change, tone="outcome"),  # ▲ now kept, ▼ no longer kept, • other change
    Column("item", 6, ">", lambda d, _: item_id(d), sort=("ordinal", "▲"), preview=lambda row: row.item_id),
    Column("kind", 12, "<", lambda d, _: clean_inline(d.label, 40), shrinks=True,
           preview=lambda row: clean_inline(row.kind, 40)),
    Column("tokens", 7, ">", lambda d, _: f"{d.tokens:,}", sort=("tokens", "▼"), preview=lambda row: f"{row.tokens:,}"),
    Column("score", 7, ">", lambda d, _: format_score(d.score), sort=("score", "▼")),
    # the scorer's label (exact / kw / the ROI band), when a labelling scorer ran
    Column("label", LABEL_WIDTH, "<", lambda d, _: label_marker(d.label_extra), tone="label",
           when=lambda view: view.labels),
    Column("outcome", 21, "<", lambda d, _: outcome_text(d.outcome), tone="strong", shrinks=True,
           preview=lambda _: "…"),
    # the budget from which the item is sent (the sweep's "sent from"), once a budget sweep (w) covers the trace
    Column("sent from", 15, ">", _min_budget, when=lambda view: view.min_budgets is not None),
    Column("reason", 0, "<", _reason),
)

# every field of a decision that a cell above or its row's style (``view.row_class``, the label tone) reads: a
# row whose decision keeps these (and its change mark, labels and sweep) draws as it did
DRAWN_FIELDS: tuple[str, ...] = (
    "key", "ordinal", "live_index", "label", "tokens", "score", "label_extra", "outcome", "reason",
    "synthetic_result_for", "protected", "pair_with",
)  # fmt: skip

MIN_LAST_WIDTH = 12  # below it the shrinking columns give up cells …
MAX_SHRINK = 8  # … at most this many between them


def visible_columns(view: TableView, columns: tuple[Column, ...] = ITEM_COLUMNS) -> tuple[Column, ...]:
    return tuple(column for column in columns if column.when is None or column.when(view))


def column_widths(columns: tuple[Column, ...], width: int) -> list[int]:
    """The width of each column for a table ``width`` cells wide, one space between columns."""
    widths = [column.width for column in columns[:-1]]
    rest = width - sum(widths) - len(widths)
    if rest < MIN_LAST_WIDTH:  # narrow: the shrinking columns give up cells before the last one disappears
        shrink = min(MIN_LAST_WIDTH - rest, MAX_SHRINK)
        shrinking = [i for i, column in enumerate(columns[:-1]) if column.shrinks]
        for n, i in enumerate(shrinking):
            share = shrink // len(shrinking) if n < len(shrinking) - 1 else shrink - shrink // len(shrinking) * n
            widths[i] -= share
        rest = width - sum(widths) - len(widths)
    return [*widths, max(0, rest)]


def fit(text: str, width: int, align: Align) -> str:
    """``text`` cut or padded to ``width`` cells."""
    if width <= 0:
        return ""
    return set_cell_size(text, width) if align == "<" else text.rjust(width)[-width:]
