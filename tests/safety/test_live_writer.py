"""ctxview beside a live writer: it keeps answering, sees the newest state, never blocks the agent.

A separate process (``writer_process.py``) appends messages and context items
to a WAL database in a loop, the way the agent does, with a busy timeout;
it reports every failed statement.  Meanwhile the store loads and assembles
the session again and again, ``DatabaseWatcher`` polls it, and the inspector
reloads on ``r`` and by itself with ``watch``.  The writer must never see
``database is locked``; every snapshot ctxview reads must be consistent.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.watch import WATCH_INTERVAL, DatabaseWatcher
from tests.safety.support import DEMO, plain_copy, settle, wal_copy

WRITER = Path(__file__).with_name("writer_process.py")
DEMO_ITEMS = 42  # context items of conversation 1 in the demo
PARAMS = Params(token_budget=2000, prompt="helm rollback", prompt_aware_eviction=True, fresh_tail_count=8)


class Writer:
    """The writer process; ``finish()`` returns what it reported."""

    def __init__(self, db: Path, count: int, seconds: float, delay: float = 0.005) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(db), str(count), str(seconds), str(delay)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        ready = json.loads(self.proc.stdout.readline())
        assert ready == {"ready": True, "journal_mode": "wal"}

    def running(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> dict[str, object]:
        """Ask it to stop after the commit in progress (SIGTERM), then read its report."""
        if self.running():
            self.proc.terminate()
        return self.finish()

    def finish(self) -> dict[str, object]:
        out, err = self.proc.communicate(timeout=30)
        report = json.loads(out.strip().splitlines()[-1])
        assert self.proc.returncode == 0, (report, err)
        assert report["errors"] == [], report
        assert "locked" not in err
        return report


def item_count(db: Path) -> int:
    with LcmStore(db) as store:
        return len(store.load_session(1).items)


def test_loads_and_assemblies_keep_answering_while_the_agent_writes(tmp_path):
    db = wal_copy(DEMO, tmp_path, sidecars=False)
    writer = Writer(db, count=400, seconds=5)
    held = LcmStore(db)  # one long-lived connection, as the inspector's watcher holds
    seen: list[int] = []
    held_seen: list[int] = []
    started = time.monotonic()
    try:
        while writer.running() and time.monotonic() - started < 8:
            with LcmStore(db) as store:
                session = store.load_session(1)
            # one snapshot: every item the snapshot lists resolves (items and rows read together)
            assert session.warnings == [], session.warnings
            trace = SessionAssembler(session).run(PARAMS)
            assert [d.ordinal for d in trace.decisions if d.ordinal is not None] == [i.ordinal for i in session.items]
            seen.append(len(session.items))
            held_seen.append(len(held.load_session(1).items))
        report = writer.finish()
        final = DEMO_ITEMS + int(report["written"])  # type: ignore[call-overload]
        assert report["written"] and int(report["written"]) > 10  # type: ignore[call-overload]
        assert len(seen) >= 3, "ctxview must keep answering while the writer runs"
        assert seen == sorted(seen) and held_seen == sorted(held_seen)  # never goes back in time
        assert seen[-1] > DEMO_ITEMS, "a reload during the run must see newer rows"
        assert item_count(db) == final
        assert len(held.load_session(1).items) == final  # the held connection sees the newest state too
    finally:
        held.close()
        if writer.running():
            writer.proc.kill()


def test_the_watcher_reports_each_commit_once_and_stays_quiet_otherwise(tmp_path):
    db = wal_copy(DEMO, tmp_path, sidecars=False)
    with DatabaseWatcher(db) as watcher:
        assert not watcher.uses_data_version  # nobody has it open: watched through the file stats
        assert watcher.changed() is False
        agent = sqlite3.connect(db)
        agent.execute("PRAGMA journal_mode=WAL")
        agent.execute("UPDATE conversations SET title = 'one' WHERE conversation_id = 2")
        agent.commit()
        assert watcher.changed() is True  # the -wal appeared ...
        assert watcher.uses_data_version  # ... so it holds a live connection from now on
        assert watcher.changed() is False
        agent.execute("UPDATE conversations SET title = 'two' WHERE conversation_id = 2")
        agent.commit()
        assert watcher.changed() is True
        assert watcher.changed() is False
        Writer(db, count=3, seconds=5, delay=0.0).finish()  # another process
        assert watcher.changed() is True
        assert watcher.changed() is False
        agent.execute("SELECT count(*) FROM messages").fetchone()  # reading is no change
        agent.close()
        assert watcher.changed() is False


def test_the_watcher_sees_commits_to_a_rollback_journal_database(tmp_path):
    db = plain_copy(DEMO, tmp_path)
    with DatabaseWatcher(db) as watcher:
        assert watcher.uses_data_version
        assert watcher.changed() is False
        conn = sqlite3.connect(db)
        conn.execute("UPDATE conversations SET title = 'x' WHERE conversation_id = 2")
        conn.commit()
        conn.close()
        assert watcher.changed() is True
        assert watcher.changed() is False
        watcher.mark()
        assert watcher.changed() is False


def test_the_watcher_survives_the_file_being_removed_and_replaced(tmp_path):
    db = plain_copy(DEMO, tmp_path)
    with DatabaseWatcher(db) as watcher:
        db.rename(tmp_path / "moved.db")
        assert watcher.changed() is True  # gone: the next reload says so
        assert watcher.changed() is False
        plain_copy(DEMO, tmp_path)
        assert watcher.changed() is True
        assert watcher.uses_data_version


# --- the inspector ------------------------------------------------------------------------------


async def test_r_reloads_the_newest_state_and_keeps_params_and_selection(tmp_path):
    db = wal_copy(DEMO, tmp_path, sidecars=False)
    app = CtxviewApp(db, conversation_id=1, params=PARAMS, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        table = screen.query_one(ItemsTable)
        assert table.select_key("o:20")
        await pilot.press("minus")  # a budget edit the reload must keep
        await settle(pilot)
        params = screen.params
        assert params.token_budget != PARAMS.token_budget
        Writer(db, count=5, seconds=5, delay=0.0).finish()
        assert len(screen.trace.decisions) == DEMO_ITEMS
        await pilot.press("r")
        await settle(pilot)
        items = [d for d in screen.trace.decisions if d.ordinal is not None]
        assert len(items) == DEMO_ITEMS + 5
        assert screen.params == params
        assert table.selected_key == "o:20"
        assert "after reload" in str(screen.query_one("#changes").render())


async def test_watch_reassembles_by_itself_when_the_agent_writes(tmp_path):
    db = wal_copy(DEMO, tmp_path, sidecars=True)
    app = CtxviewApp(db, conversation_id=1, params=PARAMS, show_timings=False, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        table = screen.query_one(ItemsTable)
        assert table.select_key("o:7")
        await pilot.press("plus")
        await settle(pilot)
        params = screen.params

        # idle: it polls about once per interval (no busy loop) and reloads nothing
        assert screen._watcher is not None
        polls = 0
        original = screen._watcher.changed

        def counting() -> bool:
            nonlocal polls
            polls += 1
            return original()

        screen._watcher.changed = counting  # type: ignore[method-assign]
        idle = 2.0
        await pilot.pause(idle)
        assert 1 <= polls <= idle / WATCH_INTERVAL + 1
        assert screen.updates_seen == 0

        writer = Writer(db, count=12, seconds=5, delay=0.05)
        while writer.running():
            await pilot.pause(0.1)
        written = int(writer.finish()["written"])  # type: ignore[call-overload]
        target = DEMO_ITEMS + written
        for _ in range(60):  # a poll plus a reload: well under two intervals once the writer stopped
            await pilot.pause(0.1)
            if screen.settled and sum(1 for d in screen.trace.decisions if d.ordinal is not None) == target:
                break
        items = [d for d in screen.trace.decisions if d.ordinal is not None]
        assert len(items) == target
        assert screen.updates_seen >= 1
        assert screen.params == params
        assert table.selected_key == "o:7"
        assert "updated" in (screen.sub_title or "")
        assert "after database update" in str(screen.query_one("#changes").render())


@pytest.mark.parametrize("watch", [False, True])
async def test_the_inspector_keeps_answering_during_writes(tmp_path, watch):
    db = wal_copy(DEMO, tmp_path, sidecars=False)
    app = CtxviewApp(db, conversation_id=1, params=PARAMS, show_timings=False, watch=watch)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        writer = Writer(db, count=100_000, seconds=30, delay=0.002)
        answered = 0  # edit-and-reload rounds completed while the agent was still writing
        counts = []
        while writer.running() and answered < 3:
            await pilot.press("minus" if answered % 2 else "plus")
            await settle(pilot, timeout=10)
            assert screen.trace.params == screen.params  # the edit was assembled while the agent wrote
            await pilot.press("r")
            await settle(pilot, timeout=10)
            assert screen.load_error is None
            counts.append(sum(1 for d in screen.trace.decisions if d.ordinal is not None))
            answered += writer.running()
        written = int(writer.stop()["written"])  # type: ignore[call-overload]
        assert answered == 3
        assert counts == sorted(counts) and DEMO_ITEMS <= counts[0] <= counts[-1] <= DEMO_ITEMS + written
