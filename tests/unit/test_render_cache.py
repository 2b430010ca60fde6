"""The render cache: a warm open resolves exactly as a cold one, and a stale or damaged cache is never used.

Every packed parity case (both engine lines) is resolved cold, its renders written, and resolved
again from the cache: every field of every resolved item must be the same.  The cache lives under
the directory the environment names, never beside the database, and any change to the database
file, its ``-wal`` or the cache file itself means the messages are rendered again.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import shutil
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ctxview import render_cache
from ctxview.assembly.resolve import ResolvedItem
from ctxview.errors import DatabaseError
from ctxview.jserrors import JSError
from ctxview.jsjson import js_stringify
from ctxview.model import KEPT_OUTCOMES, DeferredParts
from ctxview.params_io import default_params
from ctxview.pipeline import SessionAssembler, save_pending_renders
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from tests.cache_files import payload_end
from tests.parity.corpus import corpus_cases, shared_corpus
from tests.typed import typed


def _facts(item: ResolvedItem) -> tuple[Any, ...]:
    return (
        item.ordinal, item.key, item.tokens, item.text, js_stringify(item.message), item.role, item.is_message,
        item.message_id, item.seq, item.source_role, item.degraded, item.result_id, item.call_ids, item.file_id,
        item.file_byte_size, item.file_summary, item.stub_tool_name, item.stub_tool_call_id, item.message_role,
        item.stub_eligible, typed(item.message),
    )


def _resolve(path: Path, sender_metadata: bool = True) -> tuple[list[tuple[Any, ...]], Any]:
    with LcmStore(path) as store:
        session = store.load_session()
    items = SessionAssembler(session).resolved("UTC", sender_metadata)
    return [_facts(item) for item in items], session


def _rows(session: Any) -> tuple[Any, ...]:
    """The session as read, but the parts (deferred on a warm open)."""
    messages = [
        (mid, type(mid), m.message_id, m.seq, m.role, m.content, typed(m.token_count), m.created_at,
         m.large_content, m.sender_metadata, typed(getattr(m.parts, "stored_id", mid)))
        for mid, m in session.messages.items()
    ]
    return (session.items, messages, session.warnings, session.row_warnings, session.stored_message_ids,
            session.conversation, typed(session.stored_context_tokens), session.stored_sums, session.large_files)


def _stored(session: Any, sender_metadata: bool = True) -> dict[int, Any] | None:
    """What the cache holds for this session (the rule counts only where a message has sender metadata)."""
    rule = sender_metadata and any(m.sender_metadata for m in session.messages.values())
    return render_cache.load(session.cache_identity, session.conversation.conversation_id, rule)


def _cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.renders")) if directory.exists() else []


@pytest.mark.parametrize("sender_metadata", [True, False], ids=["0.15-rule", "1.0-rule"])
def test_every_parity_case_resolves_from_the_cache_exactly_as_cold(cache: Path, sender_metadata: bool) -> None:
    corpus = shared_corpus()
    cached_cases = 0
    for case in corpus_cases():
        db = corpus.files(case).db
        try:
            cold, session = _resolve(db, sender_metadata)
        except JSError:  # the engine's own resolution throws here (a summary date it cannot read)
            continue
        save_pending_renders()
        if session.cache_identity is None or not session.messages:
            continue
        assert _stored(session, sender_metadata) is not None, case.name
        warm, warm_session = _resolve(db, sender_metadata)
        assert warm == cold, case.name
        assert _rows(warm_session) == _rows(session), case.name
        cached_cases += 1
    assert cached_cases > 100  # the cases were really read back from the cache, not rendered again


def test_the_cache_is_written_under_the_cache_directory_and_nowhere_else(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "session.db"
    db.parent.mkdir()
    build_sample(db, "medium", messages=300)
    before = sorted(os.listdir(db.parent))
    _resolve(db)
    assert _cache_files(cache) == []  # nothing is written before the output is out
    save_pending_renders()
    assert len(_cache_files(cache)) == 1
    assert sorted(os.listdir(db.parent)) == before


def test_a_changed_database_is_rendered_again(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, session = _resolve(db)
    save_pending_renders()
    old_identity = session.cache_identity
    assert _stored(session) is not None
    with sqlite3.connect(db) as connection:  # the same size, a different newest message
        message_id = connection.execute(
            "SELECT message_id FROM context_items WHERE message_id IS NOT NULL ORDER BY ordinal DESC LIMIT 1"
        ).fetchone()[0]
        connection.execute("UPDATE messages SET content = upper(content) WHERE message_id = ?", (message_id,))
        connection.execute("UPDATE message_parts SET text_content = upper(text_content) WHERE message_id = ?",
                           (message_id,))
    connection.close()
    warm, changed = _resolve(db)
    assert changed.cache_identity != old_identity
    assert _stored(changed) is None
    assert warm != cold
    fresh_cold = [_facts(i) for i in SessionAssembler(changed).resolved("UTC")]
    assert warm == fresh_cold


def test_a_file_written_in_many_parts_reads_back_to_the_same_messages_and_rows(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer marshals the renders' facts and the rows a few at a time (a 100,000-message file is never held
    whole): read back, the parts make one set of renders and rows, and a warm open resolves and reads the rows as
    the cold one."""
    monkeypatch.setattr(render_cache, "PER_PART", 7)
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, session = _resolve(db)
    save_pending_renders()
    (path,) = _cache_files(cache)
    rule = any(m.sender_metadata for m in session.messages.values())
    header = render_cache._header(session.cache_identity, session.conversation.conversation_id, rule)
    payload = render_cache.read_entry(path, render_cache._MAGIC, header)
    assert payload is not None
    parts = render_cache._parts(payload)
    in_parts = -(-len(session.messages) // 7) * 2 + -(-len(session.items) // 7)  # facts, item rows, message rows
    assert len(parts) == in_parts + 1  # (and the table)
    stored = _stored(session)
    assert stored is not None and set(stored) == set(session.messages)
    with LcmStore(db) as store:
        warm_session = store.load_session()
    resolved = SessionAssembler(warm_session).resolved("UTC")
    messages = [item for item in resolved if item.is_message]
    assert messages and all(type(item.stored_message) is int for item in messages)  # read from the file
    assert [_facts(item) for item in resolved] == cold
    assert _rows(warm_session) == _rows(session)


@pytest.mark.parametrize("per_part", [1, 2, 4096])
def test_rows_marshal_cannot_hold_leave_the_renders_readable(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_part: int
) -> None:
    """Rows are written in parts after the renders: one marshal cannot hold (in any part) means no rows are read
    back, while the renders still are; rows it can hold come back as they were written."""
    monkeypatch.setattr(render_cache, "PER_PART", per_part)
    source = tmp_path / "session.db"
    source.write_bytes(b"\0" * 4096)
    identity = render_cache.database_identity(source)
    message = {"role": "user", "content": "hello"}
    renders = {
        mid: (marshal.dumps(message), 3, "hello", "user", None, None, False, None, (), "user") for mid in (1, 2, 3)
    } | {4: None}
    items = [(ordinal, "message", mid, None) for ordinal, mid in enumerate((1, 2, 3, 4))]
    messages = [(mid, mid, "user", 3, False, None, mid) for mid in (1, 2, 3, 4)]
    rows = (items, messages, ("a warning",), (4, 12))
    assert render_cache.save(identity, 7, False, renders, source, lambda: rows)
    loaded = render_cache.load_payload(identity, 7, False)
    assert loaded is not None and loaded[1] == rows
    assert {mid: None if facts is None else facts[1:] for mid, facts in loaded[0].items()} == {
        mid: None if facts is None else facts[1:] for mid, facts in renders.items()
    }
    assert loaded[0].messages.message(loaded[0][3][0], 3) == message
    messages[-1] = (4, 4, "user", 3, False, None, object())  # (in the last part of the message rows)
    assert render_cache.save(identity, 7, False, renders, source, rows)
    loaded = render_cache.load_payload(identity, 7, False)
    assert loaded is not None and loaded[1] is None
    assert set(loaded[0]) == {1, 2, 3, 4}


def _payload_end(path: Path) -> int:
    return payload_end(path.read_bytes())


def test_a_damaged_cache_file_is_ignored(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, session = _resolve(db)
    save_pending_renders()
    (path,) = _cache_files(cache)
    assert _stored(session) is not None
    data = bytearray(path.read_bytes())
    data[_payload_end(path) - 10] ^= 0xFF  # in the payload: the checksum fails
    path.write_bytes(bytes(data))
    assert _stored(session) is None
    path.write_bytes(bytes(data[: _payload_end(path) // 2]))
    assert _stored(session) is None
    warm, _ = _resolve(db)
    assert warm == cold


def test_messages_the_cache_file_no_longer_gives_back_are_rendered_again(cache: Path, tmp_path: Path) -> None:
    """A message is read from the file's tail only when a run unpacks it: one altered or cut off since the
    session was read is rendered again from its parts, to the same message."""
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, _ = _resolve(db)
    save_pending_renders()
    (path,) = _cache_files(cache)
    with LcmStore(db) as store:
        warm_session = store.load_session()
    resolved = SessionAssembler(warm_session).resolved("UTC")
    in_file = [item for item in resolved if type(item.stored_message) is int]
    assert len(in_file) == sum(1 for item in resolved if item.is_message)  # nothing unpacked yet
    messages = in_file[0].packed_in
    assert all(item.packed_in is messages for item in in_file)
    end = _payload_end(path)
    data = bytearray(path.read_bytes())
    for offset in range(end, len(data), 97):  # alter the tail in place (same inode): every 97th byte
        data[offset] ^= 0x5A
    with open(path, "r+b") as handle:  # (not replaced: the session's descriptor reads these bytes)
        handle.write(data)
        handle.truncate(end + (len(data) - end) * 2 // 3)  # and the last third cut off
    assert [_facts(i) for i in resolved] == cold
    assert all(type(item.stored_message) is dict for item in in_file)
    assert any(m.parts.loaded for m in warm_session.messages.values())  # (some were rendered again)


def test_the_cache_files_descriptor_is_closed_with_the_session(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    _resolve(db)
    save_pending_renders()
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.fail("this test reads /proc/self/fd (Linux)")
    (path,) = _cache_files(cache)

    def open_on_cache() -> int:
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == str(path.resolve()))

    with LcmStore(db) as store:
        warm_session = store.load_session()
    resolved = SessionAssembler(warm_session).resolved("UTC")
    assert open_on_cache() == 1
    assert resolved[0].message  # (read through it)
    del warm_session, resolved
    import gc

    gc.collect()
    assert open_on_cache() == 0


def test_a_database_with_a_wal_ties_the_cache_to_it(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    plain = render_cache.database_identity(db)
    wal = Path(f"{db}-wal")
    wal.write_bytes(b"\0" * 32)
    assert render_cache.database_identity(db) != plain
    wal.unlink()
    assert render_cache.database_identity(db) == plain


def test_what_is_no_regular_file_has_no_identity(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    assert render_cache.database_identity(fifo) is None  # and reading it never blocks
    assert render_cache.database_identity(tmp_path) is None
    assert render_cache.database_identity(tmp_path / "absent.db") is None


def test_the_cache_can_be_turned_off(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    _resolve(db)
    save_pending_renders()
    assert _cache_files(cache) == []


def test_a_read_only_cache_directory_only_means_no_cache(cache: Path, tmp_path: Path) -> None:
    cache.mkdir()
    (cache / "blocker").write_text("")
    os.environ["CTXVIEW_CACHE_DIR"] = str(cache / "blocker" / "below")  # a path under a file: cannot be made
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, _ = _resolve(db)
    save_pending_renders()  # no error
    warm, _ = _resolve(db)
    assert warm == cold


def test_only_the_newest_cache_files_are_kept(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_cache, "KEEP_FILES", 2)
    source = tmp_path / "session.db"
    build_sample(source, "medium", messages=120)
    for index in range(4):
        copy = tmp_path / f"copy-{index}.db"
        shutil.copy(source, copy)
        _resolve(copy)
        save_pending_renders()
    assert len(_cache_files(cache)) == 2


def test_what_a_killed_writer_left_is_removed_once_it_is_old(cache: Path, tmp_path: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    old, fresh = cache / ".entry-killed", cache / ".entry-writing"
    for path in (old, fresh):
        path.write_bytes(b"half a file")
    hours_ago = time.time() - render_cache.STALE_ENTRY_SECONDS - 60
    os.utime(old, (hours_ago, hours_ago))
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=120)
    _resolve(db)
    save_pending_renders()  # (writing a file prunes the directory)
    assert not old.exists() and fresh.exists()  # (another writer may still be writing the fresh one)
    assert len(_cache_files(cache)) == 1


def test_a_message_marshal_cannot_hold_is_rendered_each_time(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=120)
    with sqlite3.connect(db) as connection:  # a tool input with an integer past 2**53: a JS number kept as text
        connection.execute(
            "UPDATE message_parts SET tool_input = '{\"n\":123456789012345678901}' WHERE part_id ="
            " (SELECT p.part_id FROM message_parts p JOIN context_items c ON c.message_id = p.message_id"
            "  WHERE p.part_type = 'tool' AND p.tool_input IS NOT NULL ORDER BY c.ordinal DESC LIMIT 1)"
        )
    connection.close()
    cold, session = _resolve(db)
    assert any("123456789012345680000" in facts[4] for facts in cold)
    save_pending_renders()
    stored = _stored(session)
    assert stored is not None and 0 < len(stored) < len(session.messages)
    warm, _ = _resolve(db)
    assert warm == cold


def _parts_by_message(session: Any) -> dict[int, tuple[Any, ...]]:
    return {mid: tuple(message.parts) for mid, message in session.messages.items()}


def test_a_warm_open_reads_the_parts_only_when_asked_and_gets_the_same(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    cold, cold_session = _resolve(db)
    save_pending_renders()
    with LcmStore(db) as store:
        warm_session = store.load_session()
    deferred = [m.parts for m in warm_session.messages.values()]
    assert all(isinstance(parts, DeferredParts) and not parts.loaded for parts in deferred)
    assembler = SessionAssembler(warm_session)
    trace = assembler.run(replace(default_params(), token_budget=2000))
    kept = {d.key for d in trace.decisions if d.outcome in KEPT_OUTCOMES}
    resolved = assembler.resolved("UTC")
    # a run unpacks the messages it sends (and their pairing partners), not the session's evicted past
    packed = [item for item in resolved if type(item.stored_message) in (bytes, int)]
    assert packed and all(item.key not in kept for item in packed)
    assert [_facts(i) for i in resolved] == cold
    assert not deferred[0].loaded  # resolving from the cache needed no part
    texts = next(iter(warm_session.messages.values())).texts
    assert texts is not None and not texts.loaded  # nor the messages' content and times
    assert _parts_by_message(warm_session) == _parts_by_message(cold_session)
    assert deferred[0].loaded
    assert [(m.content, m.created_at) for m in warm_session.messages.values()] == [
        (m.content, m.created_at) for m in cold_session.messages.values()
    ]
    assert texts.loaded


def test_parts_asked_for_after_the_database_changed_are_refused(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    _resolve(db)
    save_pending_renders()
    with LcmStore(db) as store:
        warm_session = store.load_session()
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE message_parts SET text_content = 'changed' WHERE rowid = 1")
    connection.close()
    message = next(iter(warm_session.messages.values()))
    with pytest.raises(DatabaseError, match="changed since it was read; reload it"):
        len(message.parts)
    with pytest.raises(DatabaseError, match="changed since it was read; reload it"):
        message.content  # noqa: B018 (read from the database on first use)


def test_renders_made_by_other_rendering_code_are_not_used(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=120)
    _, session = _resolve(db)
    save_pending_renders()
    assert _stored(session) is not None
    monkeypatch.setattr(render_cache, "_code_version", lambda: "a renderer changed since")
    assert _stored(session) is None


def test_a_warm_open_reads_neither_context_items_nor_messages(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    with sqlite3.connect(db) as connection:  # a row the store warns about (its item stays unresolved)
        connection.execute("UPDATE messages SET seq = 'n/a' WHERE message_id = (SELECT MAX(message_id) FROM messages)")
    connection.close()
    cold, cold_session = _resolve(db)
    assert cold_session.row_warnings and cold_session.messages
    save_pending_renders()

    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("read from the database on a warm open")

    monkeypatch.setattr(LcmStore, "_read_items", refused)
    monkeypatch.setattr(LcmStore, "_load_messages", refused)
    warm, warm_session = _resolve(db)
    assert warm == cold
    assert _rows(warm_session) == _rows(cold_session)
    assert warm_session.cache_identity == cold_session.cache_identity is not None


def test_cached_rows_of_an_older_state_are_never_used(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    _resolve(db)
    save_pending_renders()
    with sqlite3.connect(db) as connection:
        (mid,) = connection.execute("SELECT MAX(message_id) FROM context_items").fetchone()
        connection.execute("UPDATE messages SET content = 'changed since' WHERE message_id = ?", (mid,))
    connection.close()
    with LcmStore(db) as store:  # (as read: a resolution lets go of the parts once every message is rendered)
        session = store.load_session()
    assert session.messages[mid].content == "changed since"
    assert not isinstance(session.messages[mid].parts, DeferredParts)


@pytest.mark.parametrize("module", ["ctxview.store", "ctxview.assembly.resolve", "ctxview.assembly.render",
                                    "ctxview.dbvalues", "ctxview.model"])
def test_the_code_digest_covers_what_reads_rows_and_renders_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    base = render_cache._code_version.__wrapped__()  # (the cached value is this process's own code)
    other = tmp_path / "other.py"
    other.write_text("# another version of the module\n")
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return SimpleNamespace(origin=str(other)) if name == module else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert render_cache._code_version.__wrapped__() != base
