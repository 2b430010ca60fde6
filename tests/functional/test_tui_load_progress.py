"""Opening a large session shows items read out of the total on the progress bar (issue 17, feedback)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from textual.widgets import ProgressBar, Static

from ctxview.model import Params
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.budget_bar import BudgetBar
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle, wait_for


async def test_the_load_bar_counts_items_read_of_the_total(tmp_path: Path) -> None:
    db = tmp_path / "medium.db"
    build_sample(db, "medium", messages=6000)
    seen: list[tuple[float | None, float, str]] = []
    app = CtxviewApp(db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        original = screen._show_load_progress

        def recorded(read: int, total: int) -> None:
            original(read, total)
            bar = screen.query_one("#load-progress", ProgressBar)
            seen.append((bar.total, bar.progress, str(screen.query_one("#load-words", Static).render())))

        screen._show_load_progress = recorded  # type: ignore[method-assign]
        screen.load_session()  # a reload reads the session again through the same path
        await settle(pilot)
        items = len(screen.trace.decisions) if screen.trace is not None else 0
    assert seen, "the reader never reported progress"
    total = seen[-1][0]
    assert total is not None and total > 4096 and items >= total
    assert seen[-1][1] == total and seen[0][1] == 0
    assert seen[-1][2] == f"reading the session… {int(total):,} of {int(total):,} context items"


async def test_the_first_rows_show_before_the_session_is_read(tmp_path: Path, monkeypatch: Any) -> None:
    """While the whole session is read (held here), the table draws its first rows and the bar the budget."""
    db = tmp_path / "medium.db"
    build_sample(db, "medium", messages=600)
    release = threading.Event()
    whole_read = LcmStore.load_session

    def held(store: LcmStore, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return whole_read(store, *args, **kwargs)

    monkeypatch.setattr(LcmStore, "load_session", held)
    monkeypatch.setattr(InspectorScreen, "PREVIEW_FROM", 0)  # (a session this small opens too fast to need one)
    app = CtxviewApp(db, conversation_id=1, params=Params(token_budget=5000), show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen)
                       and app.screen.query_one(ItemsTable).preview)
        screen = app.screen
        table = screen.query_one(ItemsTable)
        preview = table.preview
        assert preview is not None and screen.trace is None
        await pilot.pause()
        row = preview.rows[0]
        assert table.render_line(1).text.split() == [row.item_id, *row.kind.split(), f"{row.tokens:,}", "…"]
        assert table.border_title == f"items · {preview.item_count:,} · reading…"
        bar = str(screen.query_one(BudgetBar).render())
        assert f"budget 5,000 tok · {preview.item_count:,} context items · reading and assembling…" in bar
        release.set()
        await settle(pilot)
        assert screen.trace is not None and table.preview is None
        decisions = {d.item_id: d for d in screen.trace.decisions}
        for row in preview.rows[:40]:
            assert (decisions[row.item_id].label, decisions[row.item_id].tokens) == (row.kind, row.tokens)
        assert table.border_title == f"items · {len(screen.trace.decisions):,}"
        assert "reading and assembling" not in str(screen.query_one(BudgetBar).render())
