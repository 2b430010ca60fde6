"""The sweep view (w) and the min-budget column it fills, driven like a user."""

from __future__ import annotations

from dataclasses import replace

from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_PARAMS, ensure_demo_db
from ctxview.store import LcmStore
from ctxview.sweep import default_budgets, sweep
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.sweep import SweepScreen
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.tui.widgets.sweep_plot import SweepPlot
from tests.conftest import wait_for

PARAMS = DEMO_PARAMS


async def test_sweep_view_fills_the_min_budget_column() -> None:
    with LcmStore(ensure_demo_db()) as store:
        headless = SessionAssembler(store.load_session(1))
    expected = sweep(headless, PARAMS, default_budgets(headless, PARAMS))
    app = CtxviewApp(ensure_demo_db(), conversation_id=1, params=PARAMS)
    async with app.run_test(size=(150, 44)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen) and app.screen.settled)
        inspector = app.screen
        table = inspector.query_one(ItemsTable)
        assert not table.show_min_budget
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, SweepScreen) and app.screen.result is not None)
        result = app.screen.result
        assert result.budgets == expected.budgets and result.kept_tokens == expected.kept_tokens
        assert result.min_budget == expected.min_budget
        plot = app.screen.query_one(SweepPlot).render().plain
        assert "█" in plot and f"{expected.budgets[-1]:,}" in plot
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is inspector)
        assert table.show_min_budget
        assert {d.key: d.min_budget for d in inspector.trace.decisions} == expected.min_budget
        header = "".join(segment.text for segment in table.render_header(150))
        assert "min budget" in header
        # a budget edit keeps the column (the sweep covers every budget) …
        await pilot.press("plus")
        await wait_for(pilot, lambda: inspector.settled and inspector.trace.params.token_budget == 2200)
        assert table.show_min_budget
        assert {d.key: d.min_budget for d in inspector.trace.decisions} == expected.min_budget
        # … a prompt-aware toggle does not: those min budgets were for other params
        await pilot.press("t")
        await wait_for(pilot, lambda: inspector.settled and not inspector.trace.params.prompt_aware_eviction)
        assert not table.show_min_budget
        assert all(d.min_budget is None for d in inspector.trace.decisions)
        assert replace(inspector.params, prompt_aware_eviction=True, token_budget=2000) == PARAMS
