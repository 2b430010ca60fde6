"""A large session's cold resolution: every message rendered at once and packed (issue 19), in this process
or shared with a forked one, resolves exactly as rendering each message into a dict, for every parity case
under both engine lines' rules; the parts the session was read with are let go of afterwards and read
again, the same, when asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxview import pipeline
from ctxview.assembly import forked_map
from ctxview.assembly.resolve import Renders, ResolvedItem, pack_render, resolve_session
from ctxview.jserrors import JSError
from ctxview.jsjson import JSNumber, js_stringify
from ctxview.model import DeferredParts
from ctxview.pipeline import SessionAssembler, save_pending_renders
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from tests.parity.corpus import corpus_cases, shared_corpus
from tests.typed import typed


def _facts(item: ResolvedItem) -> tuple[Any, ...]:
    return (
        item.ordinal, item.key, item.tokens, item.text, js_stringify(item.message), item.role, item.is_message,
        item.message_id, item.seq, item.source_role, item.degraded, item.result_id, item.call_ids, item.file_id,
        item.file_byte_size, item.file_summary, item.stub_tool_name, item.stub_tool_call_id, item.message_role,
        item.stub_eligible, item.summary, item.summary_max_source_seq, typed(item.message),
    )


@pytest.fixture
def always_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked_map, "fork_helps", lambda _count: True)


@pytest.mark.parametrize(("fork", "pack"), [(False, True), (True, True), (True, False)],
                         ids=["one-process", "forked", "forked-own-renders-unpacked"])
@pytest.mark.parametrize("sender_metadata", [True, False], ids=["0.15-rule", "1.0-rule"])
def test_every_parity_case_resolves_packed_exactly_as_rendered_one_by_one(
    monkeypatch: pytest.MonkeyPatch, sender_metadata: bool, fork: bool, pack: bool
) -> None:
    monkeypatch.setattr(forked_map, "fork_helps", lambda _count: fork)
    corpus = shared_corpus()
    packed_items = 0
    for case in corpus_cases():
        with LcmStore(corpus.files(case).db) as store:
            session = store.load_session()
        try:
            plain = [_facts(item) for item in resolve_session(session, "UTC", sender_metadata)]
        except JSError:  # the engine's own resolution throws here (a summary date it cannot read)
            continue
        renders = Renders(keep=False, pack=pack)
        resolved = resolve_session(session, "UTC", sender_metadata, renders)
        packed_items += sum(isinstance(item.stored_message, bytes) for item in resolved)  # (before reading them)
        assert [_facts(item) for item in resolved] == plain, case.name
        assert set(renders.fresh) == {
            row.message_id for row in session.items if row.item_type == "message" and row.message_id in session.messages
        }, case.name
    assert packed_items > 1000  # the messages really were packed, not left as dicts


def test_a_message_marshal_cannot_hold_stays_a_dict() -> None:
    from ctxview.assembly.render import RenderedMessage

    render = RenderedMessage({"role": "user", "content": [{"type": "text", "n": JSNumber(1e21, "1e+21")}]},
                             3, "x", "user", None, None, False)
    with pytest.raises(ValueError):
        pack_render(render)
    assert pack_render(None) is None


@pytest.fixture
def large_from_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every session counts as large (packed, parts let go of); the cache lives in ``tmp_path``."""
    save_pending_renders()
    monkeypatch.setenv("CTXVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CTXVIEW_CACHE_MIN_MESSAGES", "0")
    yield tmp_path
    save_pending_renders()


def test_a_cold_resolution_lets_go_of_the_parts_and_reads_the_same_again(
    large_from_zero: Path, monkeypatch: pytest.MonkeyPatch, always_fork: None
) -> None:
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    db = large_from_zero / "session.db"
    build_sample(db, "medium", messages=300)
    with LcmStore(db) as store:
        session = store.load_session()
    as_read = {mid: message.parts for mid, message in session.messages.items()}
    assert all(type(parts) is tuple for parts in as_read.values())
    SessionAssembler(session).resolved("UTC")
    deferred = [message.parts for message in session.messages.values()]
    assert all(isinstance(parts, DeferredParts) and not parts.loaded for parts in deferred)
    assert {mid: tuple(message.parts) for mid, message in session.messages.items()} == as_read
    assert not pipeline._UNSAVED  # the cache is off: no render is held for it


def test_the_parts_of_a_session_of_no_known_state_are_kept(large_from_zero: Path) -> None:
    db = large_from_zero / "session.db"
    build_sample(db, "medium", messages=120)
    with LcmStore(db) as store:
        session = store.load_session()
    session.cache_identity = None  # (as for a live WAL database: nothing says which state a re-read would see)
    SessionAssembler(session).resolved("UTC")
    assert all(type(message.parts) is tuple for message in session.messages.values())
    assert not pipeline._UNSAVED


def test_a_first_open_writes_the_packed_renders_a_warm_open_reads(large_from_zero: Path, always_fork: None) -> None:
    db = large_from_zero / "session.db"
    build_sample(db, "medium", messages=300)
    with LcmStore(db) as store:
        cold_session = store.load_session()
    cold = [_facts(item) for item in SessionAssembler(cold_session).resolved("UTC")]
    save_pending_renders()
    with LcmStore(db) as store:
        warm_session = store.load_session()
    assert warm_session.cached_renders is not None
    assert [_facts(item) for item in SessionAssembler(warm_session).resolved("UTC")] == cold
