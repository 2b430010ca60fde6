"""The items table stays usable at 100,000 rows: it is virtual, so a new trace is cheap."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult

from ctxview.model import Decision, Params, RunSummary, Trace
from ctxview.tui.view import OutcomeDiff, diff_outcomes, layout_rows
from ctxview.tui.widgets.items_table import ItemsTable

ROWS = 100_000


def big_trace(budget: int) -> Trace:
    decisions = []
    for i in range(ROWS):
        kept = i >= ROWS - budget // 10
        decisions.append(
            Decision(
                key=f"o:{i}", ordinal=i, live_index=None, kind="message", label="user", role="user",
                source_role="user", message_id=i, seq=i, summary_id=None, tokens=10, serialized_tokens=None,
                score=(i % 97) / 97, matched_terms=(), segment="evictable", selected=kept,
                outcome="kept" if kept else "evicted", reason="r",
            )
        )
    summary = RunSummary(
        selection_mode="chronological", fresh_tail_ordinal=ROWS - 8, token_budget=budget, effective_budget=budget,
        reserved_tokens=0, tail_tokens=80, focus_tokens=0, evictable_total_tokens=ROWS * 10,
        kept_evictable_tokens=budget, remaining_budget=0, assembler_tokens=budget, final_tokens=budget,
    )
    return Trace(Params(token_budget=budget), 1, summary, decisions, [], [], [], [], [], [], {})


class CountingTable(ItemsTable):
    """Counts the rows it formats: a virtual table formats what is visible, not what exists."""

    formatted = 0

    def render_row(self, line, width, cursor):
        CountingTable.formatted += 1
        return super().render_row(line, width, cursor)


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield CountingTable()


async def test_100k_rows_swap_in_place_and_scroll():
    first, second = big_trace(50_000), big_trace(40_000)
    started = time.perf_counter()
    layout = layout_rows(second, "ordinal")
    diff = diff_outcomes(first, second)
    worker_side = time.perf_counter() - started
    assert diff.lost == 1_000
    app = TableApp()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(ItemsTable)
        table.show(first, OutcomeDiff(), layout_rows(first, "ordinal"))
        await pilot.pause()
        CountingTable.formatted = 0
        started = time.perf_counter()
        table.show(second, diff, layout)  # what the UI thread does per edit
        await pilot.pause()
        ui_side = time.perf_counter() - started
        assert 0 < CountingTable.formatted <= 2 * 40  # one screenful (40 lines), not 100,000 rows
        assert table.line_count == ROWS + 2  # budget and fresh-tail separators
        table.focus()
        started = time.perf_counter()
        await pilot.press("G")
        await pilot.pause()
        assert table.selected_key == f"o:{ROWS - 1}"
        await pilot.press("pageup", "k", "g")
        await pilot.pause()
        assert table.selected_key == "o:0"
        keys_side = time.perf_counter() - started
        assert CountingTable.formatted < 1_000
        # generous bounds (shared CI machines): typically ~0.1 s, ~0.05 s and ~0.1 s
        assert ui_side < 2.0, ui_side
        assert keys_side < 2.0, keys_side
        assert worker_side < 5.0, worker_side
