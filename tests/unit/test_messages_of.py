"""``resolve.messages_of``: every item's message, those packed in a render cache file read from it in blocks.

A budget sweep that read its ``.sweep`` file unpacks every message before its run at the whole
session; reading them a block of the file at a time must give exactly what ``item.message`` gives
one ``pread`` at a time: the same messages, the same objects afterwards, and a message the file
no longer gives back rendered again from its parts.
"""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest

from ctxview import render_cache
from ctxview.assembly.resolve import ResolvedItem, messages_of
from ctxview.jsjson import js_stringify
from ctxview.pipeline import SessionAssembler, save_pending_renders
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from tests.cache_files import payload_end


def _warm(db: Path) -> tuple[list[str], list[ResolvedItem]]:
    """(each message's JSON, resolved cold) and the items of a warm open, nothing unpacked yet."""
    build_sample(db, "medium", messages=300)
    with LcmStore(db) as store:
        cold = [js_stringify(item.message) for item in SessionAssembler(store.load_session()).resolved("UTC")]
    save_pending_renders()
    with LcmStore(db) as store:
        resolved = list(SessionAssembler(store.load_session()).resolved("UTC"))
    assert sum(type(item.stored_message) is int for item in resolved) == sum(item.is_message for item in resolved)
    return cold, resolved


@pytest.mark.parametrize("block", [1, 300, render_cache.READ_BLOCK])
def test_the_messages_read_in_blocks_are_the_ones_read_one_at_a_time(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """In the items' order and in reverse (no ascending run to read at once), with blocks of one message
    (1 byte: each its own read), a few, or the default; afterwards each item holds the message it gave."""
    monkeypatch.setattr(render_cache, "READ_BLOCK", block)
    cold, resolved = _warm(tmp_path / "session.db")
    half = len(resolved) // 2
    first = messages_of(resolved[half:][::-1])  # (the newer half, newest first)
    second = messages_of(resolved)
    assert [js_stringify(m) for m in second] == cold
    assert first == second[half:][::-1]
    assert all(type(item.stored_message) is dict for item in resolved)
    assert all(m is item.message for m, item in zip(second, resolved, strict=True))


def test_messages_the_file_no_longer_gives_back_are_rendered_again(cache: Path, tmp_path: Path) -> None:
    """Every 97th byte of the packed messages altered in place and the last third cut off: the same
    messages, the damaged ones rendered again from their parts."""
    db = tmp_path / "session.db"
    cold, resolved = _warm(db)
    (path,) = sorted(cache.glob("*.renders"))
    data = bytearray(path.read_bytes())
    end = payload_end(data)
    for offset in range(end, len(data), 97):
        data[offset] ^= 0x5A
    with open(path, "r+b") as handle:  # (the same inode: the session's descriptor reads these bytes)
        handle.write(data)
        handle.truncate(end + (len(data) - end) * 2 // 3)
    assert [js_stringify(m) for m in messages_of(resolved)] == cold


def test_messages_held_as_marshal_bytes_are_unpacked_once_each(tmp_path: Path) -> None:
    """A cold open's items hold their messages' ``marshal`` bytes: unpacked together they give what
    ``item.message`` gives one at a time, an item already unpacked keeps its object, and an item listed
    twice gives the one object it then holds."""
    build_sample(tmp_path / "session.db", "medium", messages=120)
    with LcmStore(tmp_path / "session.db") as store:
        session = store.load_session()
    resolved = [item for item in SessionAssembler(session).resolved("UTC") if item.is_message]
    for item in resolved:
        if type(item.stored_message) is dict:
            item.stored_message = marshal.dumps(item.stored_message)
    expected = [marshal.loads(item.stored_message) for item in resolved]  # type: ignore[arg-type]
    early = resolved[7].message  # (unpacked before: the same object afterwards)
    listed = [*resolved, resolved[3], resolved[0]]
    messages = messages_of(listed)
    assert messages == [*expected, expected[3], expected[0]]
    assert messages[7] is early
    assert messages[-2] is messages[3] and messages[-1] is messages[0]
    assert all(m is item.message for m, item in zip(messages, listed, strict=True))
    assert all(type(item.stored_message) is dict for item in resolved)
