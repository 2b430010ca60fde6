"""The user's OpenClaw sessions in the inspector: the session picker, the host's live window, the verify badge."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from ctxview.cli import tui_parser
from ctxview.cli.common import resolve_params_with_notes
from ctxview.cli.tui import _discover, _plugin_settings
from ctxview.model import Params
from ctxview.openclaw.host import discover
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.sessions import SessionsScreen
from tests.conftest import settle
from tests.openclaw_case_fixture import CASE_SESSION_ID, build_case_state
from tests.openclaw_fixtures import MAIN_LIVE_WINDOW, build_state, tree

NO_HOME = Path("/nonexistent-home")


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def cells(table: DataTable, key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(key)]


def host_line(screen: InspectorScreen) -> str:
    return str(screen.query_one("#host-line", Static).render())


async def wait_for_check(pilot, screen: InspectorScreen) -> None:
    for _ in range(200):
        await settle(pilot)
        if screen.host_check is not None:
            return
        await pilot.pause(0.05)
    raise AssertionError("the check did not finish")


async def test_the_picker_lists_agents_then_sessions_and_opens_one_with_its_live_window(tmp_path):
    root = build_state(tmp_path / "state").root
    before = tree(root)
    found = discover({}, NO_HOME, state_dir=root)
    app = CtxviewApp(found.lcm.path, discovery=found, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        table = screen.query_one(DataTable)
        keys = [str(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]
        assert keys == [
            "agent:main", "session:main:0", "session:main:1", "session:main:2", "session:main:3",
            "agent:broken", "agent:coder", "session:coder:0", "session:coder:1", "agent:legacy", "session:legacy:0",
            "agent:ops", "session:ops:0", "agent:remote", "orphans", "conversation:2", "conversation:5",
        ]
        assert cells(table, "agent:coder")[:2] == ["agent coder", "SQLite transcripts, schema 24 · 2 sessions"]
        assert cells(table, "session:main:0") == [
            "2026-04-12 10:00", "  agent:main:main · Main", "1", "2", "0", "2", "3f1c2a9e…", "✓"]
        missing = ["—", "", "", "", "deadbeef…", "no LCM conversation, no transcript"]
        assert cells(table, "session:main:2")[2:] == missing
        assert cells(table, "session:ops:0")[-1] == "no LCM conversation"
        assert cells(table, "conversation:5")[1:3] == ["  agent:gone:main", "5"]
        assert table.cursor_row == 1  # the newest session
        # a session without a conversation says so and opens nothing
        table.move_cursor(row=keys.index("session:ops:0"))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
        assert [n.message for n in app._notifications][-1] == (
            "no LCM conversation: no active conversation has session id '0a5e0a5e-2222-4333-8444-555566667777'")
        table.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        inspector = app.screen
        assert isinstance(inspector, InspectorScreen) and inspector.conversation_id == 1
        assert inspector.params.live_messages == tuple(MAIN_LIVE_WINDOW)
        await wait_for_check(pilot, inspector)
        line = host_line(inspector)
        assert line.startswith("live window: 6 entries from agents/main session 3f1c…, transcript (h switches it off)")
        assert line.endswith("✗ differs from what your agent sent at message 0 (turn at 10:00)")
        assert " · ✗ differs from what your agent sent at message 0 (turn at 10:00) · lossless-claw 0.15" in (
            inspector.sub_title)
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
    assert tree(root) == before  # the TUI wrote nothing under the state directory


async def test_the_badge_says_the_turn_matches_and_h_switches_the_live_window(tmp_path):
    root = build_case_state(tmp_path / "state", "match")
    found = discover({}, NO_HOME, state_dir=root)
    app = CtxviewApp(found.lcm.path, discovery=found, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        await wait_for_check(pilot, screen)
        assert screen.host_check.status == "matches"
        assert host_line(screen) == (
            "live window: 3 entries from agents/main session agen…, transcript (h switches it off)   ·   "
            "✓ matches what your agent sent (turn at 23:02, 4 messages)"
        )
        assert "· ✓ matches what your agent sent (turn at 23:02, 4 messages) ·" in screen.sub_title
        with_window = screen.trace.messages
        await pilot.press("h")
        await settle(pilot)
        assert screen.params.live_messages is None
        assert host_line(screen).startswith("live window: off (h uses the 3 entries of the transcript again)")
        assert screen.trace.messages != with_window  # the internal-context live input is no longer appended
        await pilot.press("h")
        await settle(pilot)
        assert screen.trace.messages == with_window
        await pilot.press("v")
        await pilot.pause()
        report = [n.message for n in app._notifications][-1]
        assert report.startswith("matches what your agent sent (turn at 23:02, 4 messages) at token budgets ")


async def test_an_explicit_database_finds_its_session_and_live_inputs_given_by_hand_win(tmp_path):
    root = build_case_state(tmp_path / "state", "sqlite")
    app = CtxviewApp(root / "lcm.db", conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        await wait_for_check(pilot, screen)
        assert host_line(screen).startswith(
            "live window: 3 entries from agents/main session agen…, SQLite transcript (h switches it off)")
        assert screen.host_check.status == "matches" and screen.host.row.session.session_id == CASE_SESSION_ID
    given = Params(live_messages=({"role": "user", "content": "by hand"},))
    app = CtxviewApp(root / "lcm.db", conversation_id=1, params=given, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.host is None and screen.params.live_messages == given.live_messages
        assert screen.query_one("#host-line").display is False


def test_nothing_found_opens_the_demo_and_says_where_it_looked(monkeypatch, tmp_path):
    for name in ("OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "LCM_DATABASE_PATH", "OPENCLAW_CONFIG_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _discover(None) == (
        None,
        None,
        f"no OpenClaw sessions found: looked for the state directory at {tmp_path / '.openclaw'} (the default "
        f"~/.openclaw) and for the LCM database at {tmp_path / '.openclaw/lcm.db'} ($HOME/.openclaw/lcm.db); "
        "showing the built-in demo",
    )
    root = build_case_state(tmp_path / "elsewhere", "match")
    found, db, notice = _discover(str(root))
    assert (db, notice) == (root / "lcm.db", None) and [r.session.session_id for r in found.scan.rows] == [
        CASE_SESSION_ID]
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(root))
    found, db, notice = _discover(None)
    assert found.state.how == "OPENCLAW_STATE_DIR" and db == root / "lcm.db"


async def test_the_notice_is_shown_over_the_demo(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, demo=True, notice="no OpenClaw sessions found: looked …",
                     show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert next(n.message for n in app._notifications) == "no OpenClaw sessions found: looked …"
        assert app.screen.query_one("#host-line").display is False


def test_the_inspector_opens_with_the_plugins_settings_unless_a_flag_says_otherwise(tmp_path):
    found = discover({}, NO_HOME, state_dir=build_case_state(tmp_path / "state", "match"))
    args = tui_parser().parse_args([])
    params, _, _ = resolve_params_with_notes(args)
    opened = _plugin_settings(params, args, found)
    assert (opened.fresh_tail_count, opened.prompt_aware_eviction, opened.timezone) == (8, True, "UTC")
    assert opened.token_budget == params.token_budget  # the budget is not a plugin setting
    args = tui_parser().parse_args(["--fresh-tail-count", "5", "--no-prompt-aware"])
    params, _, _ = resolve_params_with_notes(args)
    flagged = _plugin_settings(params, args, found)
    assert (flagged.fresh_tail_count, flagged.prompt_aware_eviction) == (5, False)
