"""Focus briefs and large files: newest first, the brief in use, sources, references, older schemas as notes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxview.browse.engine_tables import (
    BriefSource,
    FileReference,
    brief_sources,
    file_references,
    human_bytes,
    list_focus_briefs,
    list_large_files,
)
from ctxview.store import LcmStore
from tests.browse_fixtures import BrowseState, build_browse_state
from tests.lcmdb import LcmDbWriter


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> BrowseState:
    return build_browse_state(tmp_path_factory.mktemp("tables") / "state")


@pytest.fixture
def conn(state: BrowseState) -> Iterator[sqlite3.Connection]:
    with LcmStore(state.lcm) as store:
        yield store.connection


def test_briefs_newest_first_with_the_one_in_use(conn: sqlite3.Connection) -> None:
    found = list_focus_briefs(conn, 1)
    assert [(b.brief_id, b.status, b.used) for b in found.briefs] == [
        ("brief_fail", "failed", False),
        ("brief_new", "active", True),
        ("brief_old", "superseded", False),
    ]
    new = found.briefs[1]
    assert (new.prompt, new.token_count, new.target_tokens, new.covered_message_seq, new.covered_latest_at) == (
        "rollup timeout", 52, 400, 2, "2026-04-12 09:00:03"
    )
    assert new.content == "Billing-api 2.14 runs on staging; the rollup timeout is the open issue."
    assert found.briefs[0].error == "model timed out"
    assert found.notes == [] and found.has_sources


def test_brief_sources_say_which_summaries_exist(conn: sqlite3.Connection) -> None:
    assert brief_sources(conn, 1, "brief_new") == [
        BriefSource("sum_cond", "covered", 0, exists=True, in_context=True),
        BriefSource("sum_gone", "covered", 1, exists=False, in_context=False),
    ]
    assert brief_sources(conn, 1, "brief_old") == []


def test_large_files_with_their_references(conn: sqlite3.Connection, state: BrowseState) -> None:
    found = list_large_files(conn, 1)
    assert [(f.file_id, f.file_name, f.byte_size, f.line_count, f.references) for f in found.files] == [
        ("file_0000000000bbb", None, 900, None, 0),
        ("file_0000000000aaa", "helm-upgrade.log", 48_213, 412, 1),
    ]
    assert found.files[1].exploration_summary == "helm output: 412 lines, one release upgraded."
    assert found.notes == ["no message of this conversation refers to 1 file"]
    assert file_references(conn, 1, "file_0000000000aaa") == [
        FileReference(state.message_ids["e0000003"], 2, "tool", in_context=False)
    ]
    assert file_references(conn, 1, "file_0000000000bbb") == []


def test_an_older_schema_is_a_note(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    w = LcmDbWriter(path)
    w.user("hello")
    w.large_file("file_1", byte_size=2048)
    w.conn.executescript(
        "DROP TABLE focus_brief_sources; DROP TABLE focus_briefs; ALTER TABLE large_files DROP COLUMN line_count;"
    )
    w.close()
    with LcmStore(path) as store:
        briefs = list_focus_briefs(store.connection, 1)
        assert briefs.briefs == []
        assert briefs.notes == [
            "this database has no focus_briefs table (written before lossless-claw had focus briefs)"
        ]
        assert brief_sources(store.connection, 1, "anything") == []
        files = list_large_files(store.connection, 1)
        assert [(f.file_id, f.byte_size, f.line_count) for f in files.files] == [("file_1", 2048, None)]
    path2 = tmp_path / "older.db"
    w = LcmDbWriter(path2)
    w.conn.execute("DROP TABLE large_files")
    w.close()
    with LcmStore(path2) as store:
        assert list_large_files(store.connection, 1).notes == [
            "this database has no large_files table (written before lossless-claw stored large files)"
        ]


def test_human_bytes() -> None:
    assert [human_bytes(n) for n in (None, 0, 1023, 1024, 48_213, 5 * 1024**3)] == [
        "—", "0 B", "1023 B", "1.0 KiB", "47.1 KiB", "5.0 GiB"
    ]
