"""What an edit draws first: the items table shows the new run before the other panes do, the cyclic
garbage collector stays off from the keystroke until the table is drawn, and once the app settles
every pane shows the same run; the collector is back on once the edits pause."""

from __future__ import annotations

import gc
from typing import Any

from textual.strip import Strip

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.assembled import AssembledView
from ctxview.tui.widgets.budget_bar import BudgetBar
from ctxview.tui.widgets.changes import ChangesLine
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle, wait_for


async def test_the_table_draws_a_new_run_before_the_other_panes_follow(demo_db, monkeypatch):
    seen: list[tuple[Any, Any, Any, bool]] = []  # (table's trace, budget bar's, changes line's, collector on)
    real = ItemsTable.render_line

    def render_line(table: ItemsTable, y: int) -> Strip:
        screen = table.screen
        if isinstance(screen, InspectorScreen) and y == 0 and table.trace is not None:
            bar = screen.query_one(BudgetBar).trace
            changes = screen.query_one(ChangesLine).assembly
            seen.append((table.trace, bar, changes.trace if changes is not None else None, gc.isenabled()))
        return real(table, y)

    monkeypatch.setattr(ItemsTable, "render_line", render_line)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        before = screen.trace
        await wait_for(pilot, gc.isenabled, timeout=5)  # (the first run's pause)
        screen.query_one(ItemsTable).focus()
        seen.clear()
        await pilot.press("minus")
        await settle(pilot)
        after = screen.trace
        assert after is not before and after.params.token_budget < before.params.token_budget
        # the table's first paint of the new run: the budget bar and the changes line still show the run
        # before it, and no collection has run since the key
        first = next(entry for entry in seen if entry[0] is after)
        assert first == (after, before, before, False)
        # settled: every pane shows the new run, the collector is on again
        assert screen.panes is screen.assembly
        assert screen.query_one(BudgetBar).trace is after
        assert screen.query_one(ChangesLine).assembly.trace is after
        assert screen.query_one(AssembledView).trace is after
        assert str(screen.query_one(ChangesLine).render()).startswith("after budget: ")
        detail = screen.selection
        assert detail is not None and detail.trace is after
        await wait_for(pilot, gc.isenabled, timeout=5)


async def test_a_failed_run_turns_the_collector_back_on(demo_db, monkeypatch):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        shown = screen.trace

        def failing(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("boom")

        monkeypatch.setattr(screen.assembler, "run", failing)
        screen.query_one(ItemsTable).focus()
        await pilot.press("minus")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.trace is shown  # the last good trace stays
        assert gc.isenabled()
