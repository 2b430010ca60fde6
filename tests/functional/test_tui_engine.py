"""The engine as the inspector shows it: which rules ran, switching them, and a fallback said plainly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ctxview.model import Params
from ctxview.samples import DEMO_PARAMS
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.changes import ChangesLine
from tests.conftest import settle
from tests.lcmdb import LcmDbWriter


def changes_text(screen: InspectorScreen) -> str:
    return str(screen.query_one(ChangesLine).render())


async def test_rules_are_named_in_the_header_and_E_switches_them(demo_db, assembler):
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert screen.sub_title.endswith("lossless-claw 0.15 rules (no 1.0 tables in the database)")
        await pilot.press("E")
        await settle(pilot)
        assert screen.params.engine_line == "1.0"
        assert screen.sub_title.endswith("lossless-claw 1.0 rules (chosen)")
        headless = assembler.run(replace(DEMO_PARAMS, engine_line="1.0"))
        assert screen.trace is not None and screen.trace.messages == headless.messages
        assert changes_text(screen).startswith("after rules 1.0: ")
        await pilot.press("E")
        await settle(pilot)
        assert screen.params.engine_line == "0.15"
        assert screen.trace.messages == assembler.run(DEMO_PARAMS).messages


async def test_a_fallback_is_said_first_on_the_changes_line(tmp_path: Path):
    path = tmp_path / "f.db"
    with LcmDbWriter(path) as db:
        db.summary("sum_bad", "- deployed", earliest_at="not a date", latest_at="2025-04-27T10:05:00.000Z")
        db.user("what changed?")
    params = Params(live_messages=({"role": "user", "content": "what changed?"},))
    app = CtxviewApp(path, conversation_id=1, params=params, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        text = changes_text(screen)
        assert "FALLBACK: the engine threw RangeError: Invalid time value" in text
        assert "the live transcript is sent instead" in text


async def test_a_pending_compaction_note_is_shown_once(tmp_path: Path):
    path = tmp_path / "d.db"
    with LcmDbWriter(path) as db:
        db.message("user", "first", [], token_count=60)
        db.message("assistant", "reply", [], token_count=30)
        db.conn.execute("INSERT INTO conversation_compaction_maintenance (conversation_id, pending) VALUES (1, 1)")
    params = Params(token_budget=80, live_messages=({"role": "user", "content": "second"},))
    app = CtxviewApp(path, conversation_id=1, params=params, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        notes = [n for n in app._notifications if n.title == "Note"]
        assert len(notes) == 1 and "compaction" in notes[0].message
        await pilot.press("t")  # another run, the same note: not repeated
        await settle(pilot)
        assert len([n for n in app._notifications if n.title == "Note"]) == 1
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        assert "FALLBACK: deferred compaction is pending (emergency-debt-exhausted)" in changes_text(screen)
