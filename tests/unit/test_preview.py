"""The first rows drawn while a session loads are the rows its trace will show: same items, kinds and tokens.

``read_preview`` reads only the head of a conversation (``LcmStore.load_head``); every row it gives
must equal the whole session's resolution and the trace's decision of that item, on every parity
case of both engine lines, with the case's own params (time zone, engine line).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.assembly.incremental.static import item_label
from ctxview.jserrors import JSError
from ctxview.model import Params
from ctxview.params_io import build_params, default_params, read_params_file
from ctxview.pipeline import SessionAssembler
from ctxview.preview import PreviewRow, SessionPreview, read_preview
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from tests.lcmdb import LcmDbWriter
from tests.parity.corpus import case_dir, case_ids


def _read_preview(db: Path, conversation: int | None, params: Params, limit: int) -> SessionPreview:
    with LcmStore(db) as store:
        return read_preview(store, conversation, params, limit)


CASES = [(line, case) for line in ("0.15", "1.0") for case in case_ids(line)]


def _expected(db: Path, conversation: int | None, params: Params, limit: int) -> tuple[list[PreviewRow], int]:
    """The first ``limit`` context rows' resolved items of the whole session, checked against its trace."""
    with LcmStore(db) as store:
        session = store.load_session(conversation)
    assembler = SessionAssembler(session)
    head = {row.ordinal for row in session.items[:limit]}
    resolved = assembler.resolved(params.timezone, assembler.rules(params)[0].sender_metadata)
    items = [item for item in resolved if item.ordinal in head]
    rows = [PreviewRow(str(item.ordinal), item_label(item), item.tokens) for item in items]
    shown = {d.item_id: d for d in assembler.run(params).decisions}
    for item, row in zip(items, rows, strict=True):
        decision = shown[row.item_id]
        assert decision.label == row.kind
        # (a large tool output the run replaced by a one-line reference is shown with the reference's tokens)
        assert decision.tokens == row.tokens or item.stub_eligible
    return rows, session.conversation.context_item_count


@pytest.mark.parametrize(("line", "case"), CASES, ids=[f"{line}-{case}" for line, case in CASES])
def test_preview_rows_are_the_traces_first_rows(line: str, case: str) -> None:
    directory = case_dir(case, line)
    fields, conversation = read_params_file(directory / "params.json")
    params = build_params(default_params(), fields, source="params.json", from_file=True)
    db = directory / "session.db"
    try:
        _expected(db, conversation, params, 1000)
    except JSError:  # the engine's own resolution throws (a date JavaScript cannot read): no preview either
        with pytest.raises(JSError):
            _read_preview(db, conversation, params, 1000)
        return
    for limit in (1, 4, 1000):
        preview = _read_preview(db, conversation, params, limit)
        rows, count = _expected(db, conversation, params, limit)
        assert list(preview.rows) == rows
        assert preview.item_count == count


def test_preview_reads_only_the_head(tmp_path: Path) -> None:
    db = tmp_path / "medium.db"
    build_sample(db, "medium", messages=3000)
    with LcmStore(db) as store:
        whole = store.load_session()
        head = store.load_head(None, 40)
        again = store.load_session()  # the store is whole again after a head
    assert [row.ordinal for row in head.items] == [row.ordinal for row in whole.items[:40]]
    wanted = {row.message_id for row in head.items if row.message_id is not None}
    assert set(head.messages) == wanted and wanted < set(whole.messages)
    assert {mid: whole.messages[mid] for mid in wanted} == head.messages
    assert set(head.summaries) == {row.summary_id for row in head.items if row.summary_id is not None}
    assert head.conversation.context_item_count == whole.conversation.context_item_count == len(whole.items)
    assert again.items == whole.items and again.messages == whole.messages
    preview = _read_preview(db, None, Params(), 40)
    assert len(preview.rows) == 40 and preview.item_count == len(whole.items)


def test_head_skips_ordinals_that_are_not_whole_numbers(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    with LcmDbWriter(path) as w:
        for n in range(3):
            w.user(f"message {n}")
        odd = w.message("user", "an ordinal that is text", in_context=False)
        w.conn.execute(
            "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (?, 'x', 'message', ?)",
            (w.conversation_id, odd),
        )
    preview = _read_preview(path, None, Params(), 2)
    assert [row.item_id for row in preview.rows] == ["0", "1"]
    assert [row.kind for row in preview.rows] == ["user", "user"]
    assert preview.item_count == 4
