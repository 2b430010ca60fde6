"""Opening a large session shows items read out of the total on the progress bar (issue 17, feedback)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import ProgressBar, Static

from ctxview.samples import build_sample
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from tests.conftest import settle


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
