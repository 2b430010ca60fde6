"""The read-only lcm-tui-style views driven like a user: messages (M), focus briefs (F), large files (L),
the transcript beside the assembled context (T)."""

from __future__ import annotations

import io
import shutil
import sqlite3
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.widgets import Static

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.briefs import BriefsScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.large_files import LargeFilesScreen
from ctxview.tui.screens.messages import MessagesScreen
from ctxview.tui.screens.transcript import TranscriptScreen
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.tui.widgets.rows_list import RowsList
from tests.browse_fixtures import SID, BrowseState, build_big_db, build_browse_state
from tests.conftest import settle, wait_for


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> BrowseState:
    return build_browse_state(tmp_path_factory.mktemp("tui-browse") / "state")


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tui-big") / "big.db"
    build_big_db(path)
    return path


def lines(listing: RowsList) -> list[str]:
    width = listing.scrollable_content_region.width
    return ["".join(s.text for s in listing.render_row(i, width, False)).rstrip() for i in range(listing.line_count)]


def status_text(screen: object, selector: str) -> str:
    """The plain text a Static shows (a Text or a Group of them), as a wide console prints it."""
    console = Console(width=400, record=True, file=io.StringIO())
    console.print(screen.query_one(selector, Static).content)  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in console.export_text().rstrip("\n").split("\n"))


async def open_view(pilot, key: str, kind: type) -> object:
    await settle(pilot)
    await pilot.press(key)
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, kind))
    await settle(pilot)
    return pilot.app.screen


async def test_messages_marks_and_jump_to_summary(state: BrowseState) -> None:
    app = CtxviewApp(state.lcm, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_view(pilot, "M", MessagesScreen)
        assert isinstance(screen, MessagesScreen) and screen.browser is not None
        listing = screen.query_one(RowsList)
        where = [listing.cells(i)[4][0] for i in range(listing.line_count)]  # type: ignore[index]
        assert all(w in line for w, line in zip(where, lines(listing), strict=True))  # as drawn
        assert where == [
            "◐ sum_cond", "◐ sum_cond", "◐ sum_leaf2", "○ not in the context",
            "● context item 2", "● context item 3", "● context item 4", "● context item 5",
        ]
        assert "8 messages: ● 4 in the context · ◐ 3 summarised · ○ 1 not in the context" in status_text(
            screen, "#messages-status"
        )
        detail = status_text(screen, "#message-detail")
        assert "Deployed billing-api 2.14 to staging (revision 57)." in detail  # the summary's text
        await pilot.press("n")  # next change of mark: the message no summary covers
        assert listing.cursor == 3
        await pilot.press("enter")  # nothing the model sees stands for it: the view stays
        await pilot.pause()
        assert isinstance(app.screen, MessagesScreen)
        await pilot.press("g", "down", "down", "enter")  # row 3 → first row → the third: under sum_leaf2
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert app.screen.query_one(ItemsTable).selected_key == "o:1"


async def test_the_palette_opens_the_views(state: BrowseState) -> None:
    app = CtxviewApp(state.lcm, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Focus briefs":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, BriefsScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))


class BrowserOnly(App[None]):
    """The conversation browser alone (the inspector would spend most of a minute assembling 20,000 items)."""

    def __init__(self, db: Path) -> None:
        super().__init__()
        self.db = db

    def on_mount(self) -> None:
        self.push_screen(MessagesScreen(self.db, 1))


async def test_100000_messages_page_in_windows(big_db: Path) -> None:
    """Paging reads windows of rows, never the whole conversation (its speed is the benchmark's to measure)."""
    app = BrowserOnly(big_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, MessagesScreen) and app.screen.browser is not None)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MessagesScreen) and screen.browser is not None
        browser = screen.browser
        assert browser.count == 100_000
        assert browser.mark_counts == {"context": 20_000, "summarised": 80_000, "not-in-context": 0}
        listing = screen.query_one(RowsList)
        for key in ("G", "pageup", "pageup", "pageup", "up", "g", "pagedown", "n"):
            await pilot.press(key)
            await pilot.pause()
        assert listing.cursor == 80_000  # 'n' skips the rest of the 80,000 summarised messages
        assert lines(listing)[80_000][:7].strip() == "80,001"
        assert len(browser._pages) <= 64  # pages, never the whole conversation


async def test_focus_briefs_view(state: BrowseState) -> None:
    app = CtxviewApp(state.lcm, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_view(pilot, "F", BriefsScreen)
        listing = screen.query_one(RowsList)  # type: ignore[attr-defined]
        assert [line.split()[:2] for line in lines(listing)] == [
            ["brief_fail", "failed"], ["brief_new", "active"], ["brief_old", "superseded"]
        ]
        assert "in use" in lines(listing)[1]
        assert "3 focus briefs; in use: brief_new" in status_text(screen, "#list-status")
        assert "model timed out" in status_text(screen, "#detail-text")
        await pilot.press("down")
        detail = status_text(screen, "#detail-text")
        assert "sum_gone (covered) — the summary does not exist" in detail
        assert "sum_cond (covered) — in the context" in detail
        assert "messages up to seq 2, up to 2026-04-12 09:00:03" in detail
        await pilot.press("F")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))


async def test_large_files_view(state: BrowseState) -> None:
    app = CtxviewApp(state.lcm, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_view(pilot, "L", LargeFilesScreen)
        listing = screen.query_one(RowsList)  # type: ignore[attr-defined]
        assert [line.split()[0] for line in lines(listing)] == ["file_0000000000bbb", "file_0000000000aaa"]
        assert "note: no message of this conversation refers to 1 file" in status_text(screen, "#list-status")
        await pilot.press("down")
        detail = status_text(screen, "#detail-text")
        assert f"message {state.message_ids['e0000003']} (seq 2, tool) — not in the context" in detail
        assert "47.1 KiB (48,213 bytes), 412 lines" in detail
        assert "helm output: 412 lines, one release upgraded." in detail


async def test_transcript_beside_the_assembled_context(state: BrowseState) -> None:
    app = CtxviewApp(state.lcm, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_view(pilot, "T", TranscriptScreen)
        assert isinstance(screen, TranscriptScreen) and screen.result is not None
        status = status_text(screen, "#transcript-status")
        assert f"transcript: agents/main session {SID}" in status
        assert "11 entries: ● 4 reached the model as themselves · ◐ 3 as a summary · ✕ 4 not at all" in status
        entries = screen.query_one("#entries", RowsList)
        reach = [entries.cells(i)[3][0] for i in range(entries.line_count)]  # type: ignore[index]
        assert all(r in line for r, line in zip(reach, lines(entries), strict=True))  # as drawn
        brief, itself, nothing = "◐ as the focus brief", "● as itself", "✕ not at all"
        assert reach == [brief, brief, brief, nothing, nothing, itself, nothing, itself, itself, itself, nothing]
        assembled = screen.query_one("#assembled-list", RowsList)
        assert assembled.cursor == 0  # the focus brief that replaces sum_cond is the first message sent
        await pilot.press("end")
        assert assembled.cursor is None  # the last user turn was never ingested
        await pilot.press("up")
        assert assembled.cursor == 4
        await pilot.press("g", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert app.screen.query_one(ItemsTable).selected_key == "f:0"


async def test_no_transcript_and_an_older_schema_are_notes(state: BrowseState, tmp_path: Path) -> None:
    lone = tmp_path / "lcm.db"
    shutil.copy(state.lcm, lone)
    conn = sqlite3.connect(lone)
    conn.executescript("DROP TABLE focus_brief_sources; DROP TABLE focus_briefs;")
    conn.close()
    app = CtxviewApp(lone, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_view(pilot, "T", TranscriptScreen)
        assert status_text(screen, "#transcript-status") == (
            "no transcript found: no OpenClaw state directory (a folder with agents/) next to lcm.db; "
            "open it with --state-dir to compare"
        )
        await pilot.press("escape")
        screen = await open_view(pilot, "F", BriefsScreen)
        assert status_text(screen, "#list-status") == (
            "this conversation has no focus briefs\n"
            "note: this database has no focus_briefs table (written before lossless-claw had focus briefs)"
        )
