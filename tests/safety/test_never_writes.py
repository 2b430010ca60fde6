"""ctxview never writes to a database it inspects — in every journal state, by every path.

Every CLI command and a TUI session run on copies of the samples in three
states: a rollback-journal file (as committed), a WAL database as a running
agent leaves it (newest commits still in ``-wal``, with its ``-shm``), and a
WAL database nobody has open (no ``-wal``/``-shm``).  Afterwards the database
and its ``-wal`` are byte-identical and no file appeared or vanished; a
``-shm`` that was there may differ only in SQLite's own reader bytes
(``support.assert_untouched``).  A folder the reader may not write to (or a
missing ``-shm`` it cannot create) still opens, immutable, with a note.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.export import FORMATS
from ctxview.model import Params
from ctxview.store import IMMUTABLE_WARNING, LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from tests.safety.support import (
    DEMO,
    DEMO_LIVE,
    MEDIUM,
    REPO,
    WAL_TITLE,
    Snapshot,
    assert_untouched,
    plain_copy,
    read_only_command,
    settle,
    wal_copy,
)

STATES: dict[str, Callable[[Path, Path], Path]] = {
    "rollback-journal": lambda src, folder: plain_copy(src, folder),
    "wal-with-live-files": lambda src, folder: wal_copy(src, folder, sidecars=True),
    "wal-closed": lambda src, folder: wal_copy(src, folder, sidecars=False),
}


def cli_runs(db: Path, out: Path) -> list[list[str]]:
    """Every headless command, with the options that reach different code paths."""
    d = str(db)
    runs = [
        ["conversations", d],
        ["conversations", d, "--json"],
        ["assemble", d],
        ["assemble", d, "--format", "table", "--conversation", "2"],
        ["assemble", d, "--format", "json", "--live", str(DEMO_LIVE), "--budget", "2000"],
        ["assemble", d, "--prompt", "helm rollback", "--prompt-aware", "--budget", "1500", "--no-engine"],
        ["assemble", d, "--stub-large-tool-payloads", "--budget", "900", "--fresh-tail-count", "4"],
        ["assemble", d, "--scorer", "rarity", "--prompt", "database migration", "--prompt-aware", "--budget", "2000"],
        ["diff", d, d, "--budget", "3000"],
        ["diff", d, d, "--json", "--budget", "1000", "--prompt", "flaky test", "--prompt-aware"],
    ]
    runs += [["assemble", d, "--format", fmt, "--budget", "2500"] for fmt in FORMATS if fmt != "trace"]
    runs += [["export", d, "--format", fmt, "-o", str(out / f"export.{fmt}"), "--force"] for fmt in FORMATS]
    return runs


@pytest.mark.parametrize("state", list(STATES))
def test_every_cli_command_leaves_the_database_files_byte_identical(state, tmp_path, capsys):
    folder = tmp_path / "db"
    db = STATES[state](DEMO, folder)
    out = tmp_path / "out"
    out.mkdir()
    before = Snapshot.of(folder)
    for args in cli_runs(db, out):
        code = main(args)
        captured = capsys.readouterr()
        assert code in (0, 1), (args, captured.err)  # diff exits 1 when the sides differ
        assert "Traceback" not in captured.err
        if args[:2] == ["conversations", str(db)] and "--json" in args:
            titles = {row["conversationId"]: row["title"] for row in json.loads(captured.out)}
            # the newest commit is still in the -wal: ctxview reads it, it does not skip it
            assert (titles[2] == WAL_TITLE) == (state == "wal-with-live-files")
    assert_untouched(before, Snapshot.of(folder))


def test_the_medium_sample_is_untouched_too(tmp_path, capsys):
    folder = tmp_path / "db"
    db = wal_copy(MEDIUM, folder, sidecars=True)
    before = Snapshot.of(folder)
    for args in (["conversations", str(db)], ["assemble", str(db), "--format", "json", "--budget", "20000"]):
        assert main(args) == 0
        capsys.readouterr()
    assert_untouched(before, Snapshot.of(folder))


@pytest.mark.parametrize("state", list(STATES))
async def test_a_tui_session_leaves_the_database_files_byte_identical(state, tmp_path):
    folder = tmp_path / "db"
    db = STATES[state](DEMO, folder)
    before = Snapshot.of(folder)
    params = Params(token_budget=2000, prompt="helm rollback", prompt_aware_eviction=True, fresh_tail_count=8)
    app = CtxviewApp(db, params=params, show_timings=False, watch=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the picker: open the newest conversation
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        for key in ("minus", "t", "l", "o", "down", "down", "p", "r", "plus"):
            await pilot.press(key)
            await settle(pilot)
        assert app.screen.trace is not None
        await pilot.press("b")
        await settle(pilot)
    assert_untouched(before, Snapshot.of(folder))


# --- folders the reader may not write to ----------------------------------------------------

READER = textwrap.dedent(
    """
    import json, sys
    from ctxview.store import LcmStore
    with LcmStore(sys.argv[1]) as store:
        session = store.load_session(2)
        print(json.dumps({"immutable": store.immutable, "warnings": session.warnings,
                          "title": session.conversation.title, "items": len(session.items)}))
    """
)


TUI_READER = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from ctxview.tui.app import CtxviewApp

    async def main():
        app = CtxviewApp(Path(sys.argv[1]), conversation_id=2, show_timings=False)
        async with app.run_test(size=(120, 36), notifications=True) as pilot:
            for _ in range(100):
                await pilot.pause(0.05)
                if getattr(app.screen, "trace", None) is not None:
                    break
            print(json.dumps([[n.severity, n.message] for n in app._notifications]))

    asyncio.run(main())
    """
)


def run_read_only(db: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` in a child process that cannot write to the database's folder."""
    command = read_only_command(db.parent, argv)
    if command is None:
        pytest.skip("cannot make a read-only folder here (root without user namespaces)")
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO)
    finally:
        db.parent.chmod(0o755)


def read_as_unprivileged(db: Path) -> dict[str, object]:
    """Load conversation 2 where the folder is read-only."""
    proc = run_read_only(db, [sys.executable, "-c", READER, str(db)])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_read_only_folder_with_wal_files_nobody_holds_reads_the_newest_commits(tmp_path):
    folder = tmp_path / "ro"
    db = wal_copy(DEMO, folder, sidecars=True)  # the -shm is a copy: no live connection holds it
    before = Snapshot.of(folder)
    seen = read_as_unprivileged(db)
    # read through a private copy of the database and its -wal: the newest commit is there, and the
    # copy sees no later one (immutable)
    assert seen == {"immutable": True, "warnings": [], "title": WAL_TITLE, "items": seen["items"]}
    assert Snapshot.of(folder) == before


def test_a_read_only_folder_without_the_shm_reads_the_newest_commits_through_a_private_copy(tmp_path):
    folder = tmp_path / "ro"
    db = wal_copy(DEMO, folder, sidecars=True)
    (folder / "lcm.db-shm").unlink()  # a plain reader would have to create it here
    before = Snapshot.of(folder)
    seen = read_as_unprivileged(db)
    assert seen == {"immutable": True, "warnings": [], "title": WAL_TITLE, "items": seen["items"]}
    assert Snapshot.of(folder) == before


NO_PRIVATE_COPY = "import ctxview.sqlite_readonly as s; s.MAX_PRIVATE_COPY = 0; "


def test_without_a_private_copy_it_opens_immutable_and_says_which_commits_are_not_shown(tmp_path):
    folder = tmp_path / "ro"
    db = wal_copy(DEMO, folder, sidecars=True)
    (folder / "lcm.db-shm").unlink()
    before = Snapshot.of(folder)
    wal_bytes = len(before.files["lcm.db-wal"])
    note = (
        f"{IMMUTABLE_WARNING}: the newest commit (in the {wal_bytes:,}-byte lcm.db-wal) is not shown"
        f" (no private copy: {wal_bytes + len(before.files['lcm.db']):,} bytes are too many to copy)"
    )
    proc = run_read_only(db, [sys.executable, "-c", NO_PRIVATE_COPY + READER, str(db)])
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["immutable"] is True
    assert seen["warnings"] == [note]
    assert seen["title"] != WAL_TITLE  # exactly what the note says: the commit in the -wal is not seen
    # the CLI shows the note: on stderr beside data, in the trace where there is one
    cli = NO_PRIVATE_COPY + "from ctxview.cli import main; import sys; raise SystemExit(main(sys.argv[1:]))"
    listed = run_read_only(db, [sys.executable, "-c", cli, "conversations", str(db)])
    assert listed.returncode == 0 and f"ctxview: note: {note}" in listed.stderr
    table = run_read_only(db, [sys.executable, "-c", cli, "assemble", str(db)])
    assert table.returncode == 0 and f"warning: {note}" in table.stdout
    tui = run_read_only(db, [sys.executable, "-c", NO_PRIVATE_COPY + TUI_READER, str(db)])
    assert tui.returncode == 0, tui.stderr
    assert json.loads(tui.stdout) == [["warning", note]]  # the TUI's notification
    assert Snapshot.of(folder) == before


@pytest.mark.parametrize("state", ["rollback-journal", "wal-closed"])
def test_a_read_only_folder_opens_without_a_note_when_nothing_is_hidden(state, tmp_path):
    folder = tmp_path / "ro"
    db = STATES[state](DEMO, folder)
    before = Snapshot.of(folder)
    seen = read_as_unprivileged(db)
    assert seen["warnings"] == []
    assert seen["title"] == "backfill-dry-run"
    assert Snapshot.of(folder) == before


def test_a_closed_wal_database_is_read_as_a_snapshot_without_leaving_files(tmp_path):
    folder = tmp_path / "db"
    db = wal_copy(DEMO, folder, sidecars=False)
    with LcmStore(db) as store:
        assert store.immutable and store.warnings == []
        assert store.load_session(1).conversation.context_item_count == 42
    assert sorted(p.name for p in folder.iterdir()) == ["lcm.db"]
