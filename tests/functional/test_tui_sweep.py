"""The sweep view (w), the sent-from column it fills, and what it must not change: the trace."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.widgets import Input

from ctxview.cli import main as ctxview_main
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_PARAMS, ensure_demo_db
from ctxview.store import LcmStore
from ctxview.sweep import default_budgets, sweep
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.export import ExportScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.sweep import SweepScreen
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.tui.widgets.sweep_plot import SweepPlot
from tests.conftest import settle, wait_for

PARAMS = DEMO_PARAMS


def drawn_min_budgets(table: ItemsTable) -> dict[str, str]:
    """The min-budget cell of every item row, as drawn (the column right before the reason)."""
    assert table.trace is not None and table.table_layout is not None
    width = table.scrollable_content_region.width
    widths = table.columns(width)[1]
    start = sum(widths[:-2]) + len(widths) - 2  # (one space between columns)
    cells = {}
    for line, index in enumerate(table.table_layout.lines):
        if index >= 0:
            text = "".join(s.text for s in table.render_row(line, width, False))
            cells[table.trace.decisions[index].key] = text[start : start + widths[-2]].strip()
    return cells


async def run_sweep(pilot, app: CtxviewApp) -> None:
    await pilot.press("w")
    await wait_for(pilot, lambda: isinstance(app.screen, SweepScreen) and app.screen.result is not None)


async def test_sweep_view_fills_the_min_budget_column() -> None:
    with LcmStore(ensure_demo_db()) as store:
        headless = SessionAssembler(store.load_session(1))
    expected = sweep(headless, PARAMS, default_budgets(headless, PARAMS))
    shown = {key: expected.sent_from_text(key) for key in expected.sent_from}
    assert any("–" in text for text in shown.values())  # the demo has items first sent between two runs
    app = CtxviewApp(ensure_demo_db(), conversation_id=1, params=PARAMS)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen)
        table = inspector.query_one(ItemsTable)
        assert not table.show_min_budget
        await run_sweep(pilot, app)
        result = app.screen.result
        assert result.budgets == expected.budgets and result.kept_tokens == expected.kept_tokens
        assert result.sent_from == expected.sent_from and result.sent_after == expected.sent_after
        plot = app.screen.query_one(SweepPlot).render().plain
        assert "█" in plot and f"{expected.budgets[-1]:,}" in plot
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is inspector)
        assert table.show_min_budget
        assert inspector.min_budgets is not None and dict(inspector.min_budgets.by_key) == shown
        assert drawn_min_budgets(table) == shown
        header = "".join(segment.text for segment in table.render_header(150))
        assert "sent from" in header
        # the view state is the table's; the trace itself is what the assembler returned
        assert all(d.min_budget is None for d in inspector.trace.decisions)
        # a budget edit keeps the column (the sweep covers every budget) …
        await pilot.press("plus")
        await settle(pilot)
        assert inspector.trace.params.token_budget == 2200
        assert table.show_min_budget
        assert drawn_min_budgets(table) == shown
        # … a prompt-aware toggle does not: those min budgets were for other params
        await pilot.press("t")
        await settle(pilot)
        assert not inspector.trace.params.prompt_aware_eviction
        assert not table.show_min_budget
        assert "sent from" not in "".join(segment.text for segment in table.render_header(150))
        assert replace(inspector.params, prompt_aware_eviction=True, token_budget=2000) == PARAMS


async def test_a_trace_export_after_a_sweep_equals_the_headless_export(tmp_path: Path) -> None:
    """A view's extra results (the sweep's min budgets) never change what an export contains."""
    db = ensure_demo_db()
    headless = tmp_path / "headless.trace.json"
    assert ctxview_main([
        "export", str(db), "--conversation", "1", "--budget", str(PARAMS.token_budget),
        "--prompt", PARAMS.prompt or "", "--prompt-aware", "--fresh-tail-count", str(PARAMS.fresh_tail_count),
        "--format", "trace", "-o", str(headless),
    ]) == 0
    app = CtxviewApp(db, conversation_id=1, params=PARAMS)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        await run_sweep(pilot, app)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen) and app.screen.min_budgets is not None
        await pilot.press("e")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportScreen)
        dialog.select_format("trace")
        await pilot.pause()
        target = tmp_path / "tui.trace.json"
        dialog.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
    assert target.read_bytes() == headless.read_bytes()


async def test_the_view_shows_progress_and_escape_stops_the_sweep_before_its_next_run() -> None:
    """The bar counts the range and then each exact run; leaving the view stops the sweep (no more runs)."""
    import threading

    from ctxview.sweep import SweepProgress, SweepResult, sweep_session

    with LcmStore(ensure_demo_db()) as store:
        headless = SessionAssembler(store.load_session(1))
    runs: list[int] = []
    release = threading.Event()
    outcome: list[str] = []

    class Counted:
        session = headless.session

        def run(self, params: Params) -> Any:
            runs.append(params.token_budget)
            return headless.run(params)

        def __getattr__(self, name: str) -> Any:
            return getattr(headless, name)

    def sweeper(params: Params, progress: SweepProgress) -> SweepResult:
        def held(done: int, total: int) -> bool:
            if done == 2:  # the range and one exact run are done: wait here for the test
                release.wait(10)
            return progress(done, total)

        try:
            return sweep_session(Counted(), params, progress=held, workers=1)  # type: ignore[arg-type]
        except Exception as exc:
            outcome.append(type(exc).__name__)
            raise

    app = CtxviewApp(ensure_demo_db(), conversation_id=1, params=PARAMS)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        inspector = app.screen
        app.push_screen(SweepScreen(PARAMS, sweeper))
        await wait_for(pilot, lambda: len(runs) == 3)  # the range's two runs, then one exact run
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SweepScreen)
        notes = str(screen.query_one("#sweep-notes").render())
        # the range, then the sweep's own count (its top run is past the range's: 6 more), held before the 2nd
        assert notes == "sweeping… 1 of 7 exact runs (escape cancels)"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is inspector)
        release.set()
        await wait_for(pilot, lambda: outcome == ["SweepCancelled"])
        assert len(runs) == 3 and isinstance(inspector, InspectorScreen) and inspector.min_budgets is None
