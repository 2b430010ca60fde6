"""``x``: two settings side by side on one session (A/B).

Each side has its own controls (prompt, budget, tail, reserved tokens, the two
switches, scorer, tokenizer) and engine rules, and starts as a copy of the
inspector's settings.  Both sides run with the inspector's assembler (under its
run lock) in a thread; the table lists every item with A's and B's outcome, the
rows that differ marked (+ B keeps it, − B drops it, • another change) and
reachable with ``n`` / ``N``; the header sums kept tokens, items gained and
lost, and the first differing message.  Enter closes the view on that item's
row of the items table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Select, Static

from ctxview.model import Params, Trace
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.view import clean_inline
from ctxview.tui.widgets.controls import Controls
from ctxview.whatif.compare import Comparison, compare_traces, outcome_cell

ALL_ROWS_LIMIT = 20_000  # above it the table lists the differing rows only (a DataTable row costs)
_RULES = (("db's rules", ""), ("0.15 rules", "0.15"), ("1.0 rules", "1.0"))
_MARK_STYLE = {"+": "bold green", "−": "bold red", "•": "bold yellow"}


class CompareScreen(Screen[str | None]):
    """A/B comparison; dismisses with the key of the row to show in the items table, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("compare")

    DEFAULT_CSS = """
    CompareScreen {
        & .side { height: 3; }
        & .side > Label { width: 3; padding: 1 0 0 1; text-style: bold; }
        & .side > Controls { width: 1fr; }
        & .side > Select { width: 18; }
        & .side > Select > SelectCurrent { border: round $foreground 30%; }
        & #compare-header { height: auto; padding: 0 1; background: $boost; }
        & DataTable { height: 1fr; border: round $accent; }
    }
    """

    def __init__(self, params: Params, run: Callable[[Params], Trace]) -> None:
        super().__init__()
        self.params_a = params
        self.params_b = params
        self.run_side = run
        self.comparison: Comparison | None = None
        self.row_keys: list[str] = []  # the table's rows, by decision key
        self.runs = 0  # comparisons shown (for tests and scripts)

    def compose(self) -> ComposeResult:
        for side, params in (("a", self.params_a), ("b", self.params_b)):
            with Horizontal(classes="side"):
                yield Label(side.upper())
                yield Controls(params, id=f"controls-{side}")
                yield Select(_RULES, value=params.engine_line or "", allow_blank=False, id=f"rules-{side}")
        yield Static(Text("comparing…", style="dim"), id="compare-header")
        table: DataTable[Text | str] = DataTable(cursor_type="row", zebra_stripes=False, id="compare-table")
        yield table
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.border_title = "A/B: outcome per item (+ B keeps it, − B drops it, • another change)"
        for label, width in (("", 1), ("item", 6), ("kind", 13), ("tokens", 7), ("A", 21), ("B", 21)):
            table.add_column(label, width=width)
        table.border_subtitle = (
            f"{app_key(self.app, 'compare.next_diff')}/{app_key(self.app, 'compare.prev_diff')} next/previous "
            f"difference · enter to the items table · {app_key(self.app, 'compare.close')} closes"
        )
        table.focus()
        self._compare(self.params_a, self.params_b)

    # --- settings -------------------------------------------------------------------------

    def _side_params(self, side: str) -> Params:
        params = self.query_one(f"#controls-{side}", Controls).params
        rules = self.query_one(f"#rules-{side}", Select).value
        return replace(params, engine_line=rules if isinstance(rules, str) and rules else None)

    @on(Controls.ParamsChanged)
    @on(Select.Changed, "#rules-a, #rules-b")
    def _settings_changed(self) -> None:
        params_a, params_b = self._side_params("a"), self._side_params("b")
        if (params_a, params_b) != (self.params_a, self.params_b):
            self.params_a, self.params_b = params_a, params_b
            self._compare(params_a, params_b)

    @on(Controls.Invalid)
    def _invalid(self, event: Controls.Invalid) -> None:
        self.notify(f"{event.reason} — still showing the last good comparison", title=f"Invalid {event.field}",
                    severity="warning", timeout=4, markup=False)

    @on(Controls.Done)
    def _done(self) -> None:
        self.query_one(DataTable).focus()

    def set_side(self, side: str, params: Params) -> None:
        """Set one side's settings as if typed (for scripts and tests)."""
        self.query_one(f"#controls-{side}", Controls).set_params(params)
        self.query_one(f"#controls-{side}", Controls).params = params
        self.query_one(f"#rules-{side}", Select).value = params.engine_line or ""
        self._settings_changed()

    # --- running ---------------------------------------------------------------------------

    @work(exclusive=True, group="compare", exit_on_error=False)
    async def _compare(self, params_a: Params, params_b: Params) -> None:
        try:
            comparison = await asyncio.to_thread(self._both, params_a, params_b)
        except Exception as exc:  # a side's params the assembler cannot run: keep the last comparison
            self.notify(f"assembly failed: {exc}", title="A/B", severity="error", timeout=6, markup=False)
            return
        if (params_a, params_b) == (self.params_a, self.params_b):
            self._show(comparison)

    def _both(self, params_a: Params, params_b: Params) -> Comparison:
        trace_a = self.run_side(params_a)
        trace_b = trace_a if params_b == params_a else self.run_side(params_b)
        return compare_traces(trace_a, trace_b)

    def _show(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.runs += 1
        header = Text(clean_inline(comparison.header(), 400))
        all_rows = len(comparison.rows) <= ALL_ROWS_LIMIT
        if not all_rows:
            header.append(f"\n{len(comparison.rows):,} items: only the differing rows are listed", style="dim")
        self.query_one("#compare-header", Static).update(header)
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        selected = self.row_keys[cursor] if 0 <= cursor < len(self.row_keys) else None
        table.clear()
        self.row_keys = []
        for row in comparison.rows:
            if not all_rows and not row.differs:
                continue
            style = _MARK_STYLE.get(row.mark, "")
            table.add_row(
                Text(row.mark, style=style),
                row.item,
                clean_inline(row.label, 13),
                f"{row.tokens:,}",
                Text(outcome_cell(row.outcome_a), style="green" if row.kept_a else "red"),
                Text(outcome_cell(row.outcome_b), style=("green" if row.kept_b else "red") + " bold" * row.differs),
                key=row.key,
            )
            self.row_keys.append(row.key)
        if selected in self.row_keys:
            table.move_cursor(row=self.row_keys.index(selected))

    # --- actions -----------------------------------------------------------------------------

    def action_next_diff(self, direction: int) -> None:
        if self.comparison is None:
            return
        differs = {row.key for row in self.comparison.rows if row.differs}
        lines = [index for index, key in enumerate(self.row_keys) if key in differs]
        if not lines:
            self.notify("A and B give every item the same outcome", timeout=3)
            return
        table = self.query_one(DataTable)
        here = table.cursor_row
        after = [i for i in lines if (i > here if direction > 0 else i < here)]
        target = (after[0] if direction > 0 else after[-1]) if after else (lines[0] if direction > 0 else lines[-1])
        table.move_cursor(row=target)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.row_key.value)

    def action_close(self) -> None:
        self.dismiss(None)
