"""Sample databases: deterministic, in the LCM schema, stored the way ingest stores messages."""

from __future__ import annotations

import hashlib
import json
import random
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from ctxview.assembly.assembler import assemble_context
from ctxview.assembly.live import flatten, stored_role
from ctxview.assembly.resolve import resolve_session
from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.jsjson import js_stringify
from ctxview.samples import (
    SampleInfo,
    build_sample,
    demo_live_messages,
    ensure_demo_db,
    write_demo_live_json,
)
from ctxview.samples import build as build_module
from ctxview.samples import paths as paths_module
from ctxview.samples.demo import DEMO_FORMAT_VERSION, build_demo
from ctxview.samples.generated import DEFAULT_LARGE_MESSAGES, DEFAULT_MEDIUM_MESSAGES
from ctxview.samples.writer import Ids, SessionDb
from ctxview.store import LcmStore
from tests.parity.corpus import case_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES_DIR = REPO_ROOT / "sample_sessions"

BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
RETRY = "[Retry after the previous model attempt failed or timed out]"
ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
SQL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
# §1.1: the tables the assembler and engine read.
CORE_TABLES = {
    "conversations",
    "context_items",
    "messages",
    "message_parts",
    "summaries",
    "summary_parents",
    "summary_messages",
    "large_files",
    "focus_briefs",
    "conversation_compaction_maintenance",
    "conversation_bootstrap_state",
}


def rows(db: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SampleInfo]:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    return path, build_sample(path, "demo")


@pytest.fixture(scope="module")
def demo_db(demo: tuple[Path, SampleInfo]) -> Path:
    return demo[0]


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SampleInfo]:
    path = tmp_path_factory.mktemp("medium") / "medium.db"
    return path, build_sample(path, "medium")


# --- determinism ----------------------------------------------------------------------------


def test_demo_builds_are_byte_identical(tmp_path: Path) -> None:
    a = build_sample(tmp_path / "a.db", "demo").path
    b = build_sample(tmp_path / "b.db", "demo").path
    assert a.read_bytes() == b.read_bytes()


def test_generated_builds_depend_only_on_the_seed(tmp_path: Path) -> None:
    random.seed(1)
    a = build_sample(tmp_path / "a.db", "medium", messages=300).path
    random.seed(2)
    state = random.getstate()
    b = build_sample(tmp_path / "b.db", "medium", messages=300).path
    assert random.getstate() == state  # the global generator is never used
    c = build_sample(tmp_path / "c.db", "medium", messages=300, seed=8).path
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_demo_live_messages_are_stable() -> None:
    assert demo_live_messages() == demo_live_messages()


def _table_dump(db: Path) -> dict[str, list[tuple]]:
    return {table: rows(db, f"SELECT * FROM {table} ORDER BY rowid") for table in sorted(CORE_TABLES)}


@pytest.mark.parametrize("kind", ["demo", "medium"])
def test_committed_sample_matches_a_fresh_build(kind: str, tmp_path: Path) -> None:
    committed = SAMPLES_DIR / f"{kind}.db"
    assert committed.is_file(), f"{committed} is missing; rebuild it (sample_sessions/README.md)"
    fresh = build_sample(tmp_path / f"{kind}.db", kind).path
    # Row contents, not bytes: the file header records the SQLite version that wrote it.
    assert _table_dump(committed) == _table_dump(fresh)


def test_committed_live_json_matches_demo_live_messages() -> None:
    text = (SAMPLES_DIR / "demo-live.json").read_text(encoding="utf-8")
    assert json.loads(text) == demo_live_messages()
    assert text == json.dumps(demo_live_messages(), ensure_ascii=False, indent=2) + "\n"


def test_write_demo_live_json(tmp_path: Path) -> None:
    path = write_demo_live_json(tmp_path / "live.json")
    assert path.read_text(encoding="utf-8") == (SAMPLES_DIR / "demo-live.json").read_text(encoding="utf-8")


# --- schema ---------------------------------------------------------------------------------


def _schema(db: Path) -> dict[tuple[str, str], str | None]:
    return {
        (kind, name): sql
        for kind, name, sql in rows(db, "SELECT type, name, sql FROM sqlite_master")
        if name not in ("sqlite_stat1", "sqlite_sequence")
    }


def test_schema_matches_the_parity_databases(demo_db: Path) -> None:
    assert _schema(demo_db) == _schema(case_dir("001") / "session.db")


def test_schema_has_the_tables_the_assembler_reads(demo_db: Path) -> None:
    tables = {name for (name,) in rows(demo_db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables >= CORE_TABLES | {"messages_fts", "summaries_fts", "summaries_fts_cjk"}


def test_rollback_journal_and_full_text_rows(demo_db: Path) -> None:
    assert rows(demo_db, "PRAGMA journal_mode") == [("delete",)]
    assert not Path(f"{demo_db}-wal").exists()
    non_empty = rows(demo_db, "SELECT count(*) FROM messages WHERE content != ''")[0][0]
    assert rows(demo_db, "SELECT count(*) FROM messages_fts")[0][0] == non_empty
    summaries_count = rows(demo_db, "SELECT count(*) FROM summaries")[0][0]
    assert rows(demo_db, "SELECT count(*) FROM summaries_fts")[0][0] == summaries_count
    hits = rows(demo_db, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'rollback'")
    assert hits


# --- the demo -------------------------------------------------------------------------------


def test_demo_counts(demo: tuple[Path, SampleInfo]) -> None:
    db, info = demo
    conversations = rows(db, "SELECT conversation_id, active, archived_at FROM conversations ORDER BY 1")
    assert [(c, a) for c, a, _ in conversations] == [(1, 1), (2, 0)]
    assert conversations[0][2] is None and conversations[1][2] is not None
    items = dict(rows(db, "SELECT conversation_id, count(*) FROM context_items GROUP BY 1"))
    assert 35 <= items[1] <= 45  # about 40 items in the main conversation
    assert items[2] < items[1]
    assert info.conversation_ids == (1, 2)
    assert info.active_conversation_id == 1
    assert info.context_items_by_conversation == items
    assert info.message_count == rows(db, "SELECT count(*) FROM messages")[0][0]
    assert info.part_count == rows(db, "SELECT count(*) FROM message_parts")[0][0]
    assert info.summary_count == rows(db, "SELECT count(*) FROM summaries")[0][0]
    assert info.large_file_count == 1
    # ordinals are contiguous per conversation and start at 0
    for conv, count in items.items():
        ordinals = [o for (o,) in rows(db, "SELECT ordinal FROM context_items WHERE conversation_id = ?", (conv,))]
        assert sorted(ordinals) == list(range(count))


def test_demo_summaries_of_depth_0_1_2(demo_db: Path) -> None:
    depths = {(d, k) for d, k in rows(demo_db, "SELECT depth, kind FROM summaries")}
    assert depths == {(0, "leaf"), (1, "condensed"), (2, "condensed")}
    in_context = rows(
        demo_db,
        "SELECT ci.ordinal, s.depth FROM context_items ci JOIN summaries s USING (summary_id)"
        " WHERE ci.conversation_id = 1 ORDER BY ci.ordinal",
    )
    assert {d for _, d in in_context} == {0, 1, 2}
    first_message = rows(
        demo_db, "SELECT min(ordinal) FROM context_items WHERE conversation_id = 1 AND item_type = 'message'"
    )[0][0]
    assert all(o < first_message for o, _ in in_context)  # summaries sit at the front, as after compaction
    for sid, kind, earliest, latest, count in rows(
        demo_db, "SELECT summary_id, kind, earliest_at, latest_at, descendant_count FROM summaries"
    ):
        assert sid.startswith("sum_") and len(sid) == 20
        assert ISO_MS_Z.match(earliest) and ISO_MS_Z.match(latest) and earliest <= latest
        parents = rows(demo_db, "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ?", (sid,))
        sources = rows(demo_db, "SELECT message_id FROM summary_messages WHERE summary_id = ?", (sid,))
        if kind == "leaf":
            assert not parents and sources and count == 0
            times = rows(
                demo_db,
                "SELECT min(created_at), max(created_at) FROM messages WHERE message_id IN"
                " (SELECT message_id FROM summary_messages WHERE summary_id = ?)",
                (sid,),
            )[0]
            assert (earliest, latest) == tuple(t.replace(" ", "T") + ".000Z" for t in times)
        else:
            assert len(parents) >= 2 and not sources
            assert count == _descendants(demo_db, sid)


def _descendants(db: Path, sid: str) -> int:
    total = 0
    for (parent,) in rows(db, "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ?", (sid,)):
        total += 1 + _descendants(db, parent)
    return total


def _calls_and_results(db: Path, conversation_id: int) -> tuple[list[tuple[str, str, int]], set[str]]:
    calls = rows(
        db,
        "SELECT p.tool_call_id, p.tool_name, p.message_id FROM message_parts p JOIN messages m USING (message_id)"
        " WHERE m.conversation_id = ? AND p.part_type = 'tool'"
        " AND json_extract(p.metadata, '$.originalRole') = 'assistant'",
        (conversation_id,),
    )
    results = {
        r
        for (r,) in rows(
            db,
            "SELECT p.tool_call_id FROM message_parts p JOIN messages m USING (message_id)"
            " WHERE m.conversation_id = ? AND m.role = 'tool'",
            (conversation_id,),
        )
    }
    return calls, results


def test_demo_tool_pairs_and_exactly_one_orphan(demo_db: Path) -> None:
    calls, results = _calls_and_results(demo_db, 1)
    paired = [c for c in calls if c[0] in results]
    orphans = [c for c in calls if c[0] not in results]
    assert len(paired) >= 3
    assert len(orphans) == 1
    assert {name for _, name, _ in paired} >= {"read", "bash", "grep"}
    per_message = Counter(message_id for _, _, message_id in calls)
    assert max(per_message.values()) >= 2  # an assistant turn with two calls
    # the subagent conversation has no orphans
    calls2, results2 = _calls_and_results(demo_db, 2)
    assert calls2 and all(c[0] in results2 for c in calls2)
    # every tool call id is unique and looks like an Anthropic tool-use id
    assert len({c[0] for c in calls + calls2}) == len(calls + calls2)
    assert all(re.fullmatch(r"toolu_01[0-9A-Za-z]{22}", c[0]) for c in calls + calls2)


def test_demo_has_chinese_and_japanese(demo_db: Path) -> None:
    texts = [c for (c,) in rows(demo_db, "SELECT content FROM messages WHERE conversation_id = 1")]
    assert any("部署" in t for t in texts)
    assert any("デプロイ" in t for t in texts)
    assert any(re.search("[\u3040-\u30ff]", t) for t in texts)  # kana
    context_texts = [
        c
        for (c,) in rows(
            demo_db,
            "SELECT m.content FROM context_items ci JOIN messages m USING (message_id) WHERE ci.conversation_id = 1",
        )
    ]
    assert any(re.search("[\u4e00-\u9fff]", t) and not re.search("[\u3040-\u30ff]", t) for t in context_texts)


def test_demo_large_file_is_referenced_by_a_tool_result(demo_db: Path) -> None:
    found = rows(
        demo_db,
        "SELECT m.message_id, m.role, m.content, f.file_id, f.byte_size, f.line_count, f.exploration_summary,"
        " f.conversation_id, f.mime_type FROM messages m JOIN large_files f ON f.file_id = m.large_content",
    )
    assert len(found) == 1
    message_id, role, content, file_id, byte_size, line_count, summary, conv, mime = found[0]
    assert role == "tool" and conv == 1 and mime == "text/plain"
    assert re.fullmatch(r"file_[0-9a-f]{16}", file_id)
    assert byte_size == len(content.encode("utf-8")) and line_count == content.count("\n") + 1
    assert summary and f"{line_count} lines" in summary
    assert rows(demo_db, "SELECT item_type FROM context_items WHERE message_id = ?", (message_id,)) == [("message",)]


def test_demo_system_message_and_thinking_block(demo_db: Path) -> None:
    system = rows(
        demo_db,
        "SELECT p.metadata FROM context_items ci JOIN messages m USING (message_id)"
        " JOIN message_parts p USING (message_id) WHERE ci.conversation_id = 1 AND m.role = 'system'",
    )
    assert system == [('{"originalRole":"system"}',)]
    reasoning = rows(demo_db, "SELECT text_content, metadata FROM message_parts WHERE part_type = 'reasoning'")
    assert len(reasoning) == 1
    text, metadata = reasoning[0]
    meta = json.loads(metadata)
    assert meta["rawType"] == "thinking" and meta["raw"]["thinking"] == text
    assert list(meta)[:4] == ["originalRole", "modelProvider", "modelApi", "modelId"]


# --- stored shapes (§2.7, Appendix A) -------------------------------------------------------


def test_stored_shapes_follow_ingest(demo_db: Path) -> None:
    user = rows(
        demo_db,
        "SELECT m.content, p.part_type, p.text_content, p.tool_call_id, p.metadata FROM messages m"
        " JOIN message_parts p USING (message_id) WHERE m.role = 'user'",
    )
    assert user
    for content, part_type, text, call_id, metadata in user:
        assert (part_type, text, call_id, metadata) == ("text", content, None, '{"originalRole":"user"}')

    for tool_input, metadata, ordinal in rows(
        demo_db,
        "SELECT p.tool_input, p.metadata, p.ordinal FROM messages m JOIN message_parts p"
        " USING (message_id) WHERE m.role = 'assistant' AND p.part_type = 'tool'",
    ):
        meta = json.loads(metadata)
        assert meta["rawType"] == "toolCall" and meta["raw"]["type"] == "toolCall"
        assert tool_input == js_stringify(meta["raw"]["arguments"])
        expected_keys = ["originalRole", "rawType", "raw"]
        if ordinal == 0:
            expected_keys[1:1] = ["modelProvider", "modelApi", "modelId"]
        assert list(meta) == expected_keys

    # an assistant turn that only called tools stores an empty text fallback (A.2)
    assert (
        rows(
            demo_db,
            "SELECT count(*) FROM messages m WHERE m.role = 'assistant' AND m.content = ''"
            " AND NOT EXISTS (SELECT 1 FROM message_parts p WHERE p.message_id = m.message_id"
            " AND p.part_type != 'tool')",
        )[0][0]
        >= 2
    )

    for content, part_type, text, call_id, name, metadata in rows(
        demo_db,
        "SELECT m.content, p.part_type, p.text_content, p.tool_call_id, p.tool_name, p.metadata FROM messages m"
        " JOIN message_parts p USING (message_id) WHERE m.role = 'tool'",
    ):
        meta = json.loads(metadata)
        assert part_type == "text" and text == content
        assert list(meta) == ["originalRole", "toolCallId", "toolName", "isError", "rawType", "raw"]
        assert (meta["originalRole"], meta["toolCallId"], meta["toolName"]) == ("toolResult", call_id, name)
        assert meta["raw"] == {"type": "text", "text": content}


def test_identity_hash_timestamps_and_token_counts(demo_db: Path) -> None:
    for role, content, identity_hash, token_count, created in rows(
        demo_db, "SELECT role, content, identity_hash, token_count, created_at FROM messages"
    ):
        assert identity_hash == hashlib.sha256(f"{role}\0{content}".encode()).hexdigest()
        assert SQL_TIME.match(created)
        if role in ("user", "system"):
            assert token_count == estimate_tokens(content)
    for content, token_count in rows(demo_db, "SELECT content, token_count FROM summaries"):
        assert token_count == estimate_tokens(content)


def test_demo_round_trips_through_the_resolver(demo_db: Path) -> None:
    """Reassembling the stored parts (spec §2) gives back the messages as the host held them."""
    live = build_demo(SessionDb(Ids("demo")))
    session = LcmStore(demo_db).load_session(1)
    resolved = [item for item in resolve_session(session, "UTC") if item.is_message]
    originals = live[-len(resolved) :]
    assert len(resolved) == 38
    for item, original in zip(resolved, originals, strict=True):
        message = item.message
        assert message["content"] == original["content"]
        if original["role"] == "assistant":
            assert [message[k] for k in ("provider", "api", "model")] == [
                original[k] for k in ("provider", "api", "model")
            ]
        elif original["role"] == "toolResult":
            assert message["role"] == "toolResult"
            assert (message["toolCallId"], message["toolName"], message["isError"]) == (
                original["toolCallId"],
                original["toolName"],
                original["isError"],
            )
        else:
            assert message["role"] == "user"  # system messages come out as user
        stored_tokens = session.messages[item.message_id].token_count
        assert item.tokens == stored_tokens


def test_demo_assembles_with_some_items_evicted(demo_db: Path) -> None:
    session = LcmStore(demo_db).load_session()
    assert session.conversation.conversation_id == 1
    tops = {}
    for prompt in ("helm rollback", "database migration", "flaky test"):
        result = assemble_context(
            session,
            token_budget=2000,
            prompt=prompt,
            fresh_tail_count=8,
            fresh_tail_max_tokens=None,
            prompt_aware_eviction=True,
            stub_large_tool_payloads=False,
            timezone="UTC",
        )
        assert result.selection_mode == "prompt-aware"
        kept = [d for d in result.decisions if d.selected]
        evicted = [d for d in result.decisions if not d.selected]
        assert kept and evicted
        assert result.estimated_tokens <= 2000
        scored = [d for d in result.decisions if d.score]
        tops[prompt] = max(scored, key=lambda d: (d.score, d.ordinal)).ordinal
    assert len(set(tops.values())) == 3  # each prompt ranks a different item first


def test_demo_stub_saves_tokens(demo_db: Path) -> None:
    session = LcmStore(demo_db).load_session()
    result = assemble_context(
        session,
        token_budget=2000,
        prompt="helm rollback",
        fresh_tail_count=8,
        fresh_tail_max_tokens=None,
        prompt_aware_eviction=True,
        stub_large_tool_payloads=True,
        timezone="UTC",
    )
    assert result.stub_stats["stubbedCount"] == 1
    assert result.stub_stats["tokensSaved"] > 1000


# --- live window ----------------------------------------------------------------------------


def test_live_window_has_exactly_one_unpersisted_announcement(demo_db: Path) -> None:
    live = demo_live_messages()
    stored = set(rows(demo_db, "SELECT role, content FROM messages WHERE conversation_id = 1"))

    def persisted(message: dict) -> bool:
        return (stored_role(message), flatten(message["content"])) in stored

    def marked(message: dict) -> bool:
        content = message["content"]
        return isinstance(content, str) and BEGIN in content and END in content

    unpersisted_marked = [m for m in live if marked(m) and not persisted(m)]
    assert len(unpersisted_marked) == 1
    announcement = unpersisted_marked[0]
    assert announcement["role"] == "user" and isinstance(announcement["timestamp"], int)
    assert announcement["content"].startswith("[Inter-session message] sourceSession=agent:main:subagent:")
    assert (
        "sourceTool=subagent_announce\n" + BEGIN + "\n[Internal task completion event]\nChild result: "
        in (announcement["content"])
    )
    assert announcement["content"].endswith("\n" + END)
    retries = [m for m in live if isinstance(m["content"], str) and RETRY in m["content"].split("\n")]
    assert len(retries) == 1 and not persisted(retries[0])
    # everything else is the persisted tail, in order, exactly as stored
    rest = [m for m in live if m is not announcement and m is not retries[0]]
    assert rest and all(persisted(m) for m in rest)
    tail = rows(
        demo_db, "SELECT role, content FROM messages WHERE conversation_id = 1 ORDER BY seq DESC LIMIT ?", (len(rest),)
    )
    assert [(stored_role(m), flatten(m["content"])) for m in rest] == tail[::-1]
    assert live.index(announcement) > max(live.index(m) for m in rest)


# --- generated kinds ------------------------------------------------------------------------


def test_medium_counts_and_shape(medium: tuple[Path, SampleInfo]) -> None:
    db, info = medium
    assert info.message_count == DEFAULT_MEDIUM_MESSAGES
    assert rows(db, "SELECT count(*) FROM messages")[0][0] == DEFAULT_MEDIUM_MESSAGES
    items = rows(db, "SELECT count(*) FROM context_items")[0][0]
    assert 1900 <= items <= 2100 and items == info.context_item_count
    summary_ordinals = rows(db, "SELECT ci.ordinal, s.depth FROM context_items ci JOIN summaries s USING (summary_id)")
    first_message = rows(db, "SELECT min(ordinal) FROM context_items WHERE item_type = 'message'")[0][0]
    assert summary_ordinals and all(o < first_message for o, _ in summary_ordinals)
    assert len({d for _, d in summary_ordinals}) >= 3
    # deeper summaries cover older history, so they come first
    depths = [d for _, d in sorted(summary_ordinals)]
    assert depths == sorted(depths, reverse=True)
    calls, results = _calls_and_results(db, 1)
    orphans = [c for c in calls if c[0] not in results]
    assert len(calls) > 300 and 1 <= len(orphans) < len(calls) // 10
    assert rows(db, "SELECT count(*) FROM message_parts WHERE part_type = 'reasoning'")[0][0] > 0
    assert rows(db, "SELECT count(*) FROM messages WHERE role = 'system'")[0][0] > 0


def test_medium_prompts_score_different_items(medium: tuple[Path, SampleInfo]) -> None:
    session = LcmStore(medium[0]).load_session()
    kept_sets = []
    for prompt in ("helm rollback", "database migration", "flaky test"):
        result = assemble_context(
            session,
            token_budget=20_000,
            prompt=prompt,
            fresh_tail_count=8,
            fresh_tail_max_tokens=None,
            prompt_aware_eviction=True,
            stub_large_tool_payloads=False,
            timezone="UTC",
        )
        assert result.selection_mode == "prompt-aware"
        kept_sets.append(frozenset(result.kept_ordinals))
    assert len(set(kept_sets)) == 3


LARGE_MESSAGES = 3000  # the 100,000-message default is built by benchmarks/, not by the unit tests


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SampleInfo]:
    path = tmp_path_factory.mktemp("large") / "large.db"
    return path, build_sample(path, "large", messages=LARGE_MESSAGES)


def test_large_counts(large: tuple[Path, SampleInfo]) -> None:
    db, info = large
    assert info.kind == "large" and info.conversation_ids == (1,)
    assert info.message_count == LARGE_MESSAGES == rows(db, "SELECT count(*) FROM messages")[0][0]
    assert info.part_count == rows(db, "SELECT count(*) FROM message_parts")[0][0]
    assert info.summary_count == rows(db, "SELECT count(*) FROM summaries")[0][0]
    assert info.context_item_count == rows(db, "SELECT count(*) FROM context_items")[0][0]
    # the oldest sixth is compacted: the raw context starts right after it and runs to the end
    compacted = LARGE_MESSAGES // 6
    raw = rows(db, "SELECT count(*), min(m.seq), max(m.seq) FROM context_items ci JOIN messages m USING (message_id)")
    assert raw == [(LARGE_MESSAGES - compacted, compacted, LARGE_MESSAGES - 1)]
    summary_items = rows(db, "SELECT count(*) FROM context_items WHERE item_type = 'summary'")[0][0]
    assert info.context_item_count == LARGE_MESSAGES - compacted + summary_items
    # every compacted message is the source of exactly one leaf, in seq order within the leaf
    sources = rows(
        db,
        "SELECT sm.summary_id, sm.ordinal, m.seq FROM summary_messages sm JOIN messages m USING (message_id)"
        " ORDER BY m.seq",
    )
    assert [seq for _, _, seq in sources] == list(range(compacted))
    for summary_id in {sid for sid, _, _ in sources}:
        ordered = [seq for sid, _, seq in sorted(sources, key=lambda r: r[1]) if sid == summary_id]
        assert ordered == sorted(ordered)


def test_large_summary_depths(large: tuple[Path, SampleInfo]) -> None:
    db = large[0]
    summaries = {
        sid: (kind, depth, count)
        for sid, kind, depth, count in rows(db, "SELECT summary_id, kind, depth, descendant_count FROM summaries")
    }
    parents: dict[str, list[str]] = {}
    for sid, parent in rows(
        db, "SELECT summary_id, parent_summary_id FROM summary_parents ORDER BY summary_id, ordinal"
    ):
        parents.setdefault(sid, []).append(parent)
    leaves = {sid for (sid,) in rows(db, "SELECT DISTINCT summary_id FROM summary_messages")}
    for sid, (kind, depth, count) in summaries.items():
        if kind == "leaf":
            assert depth == 0 and count == 0 and sid in leaves and sid not in parents
        else:
            children = parents[sid]
            assert 3 <= len(children) <= 5 and sid not in leaves
            assert depth == 1 + max(summaries[c][1] for c in children)
            assert count == _descendants(db, sid)
    assert max(depth for _, depth, _ in summaries.values()) >= 2
    # the context holds the roots only: deeper (older) summaries first, then the raw messages
    in_context = rows(
        db,
        "SELECT ci.summary_id, s.depth FROM context_items ci JOIN summaries s USING (summary_id) ORDER BY ci.ordinal",
    )
    assert [d for _, d in in_context] == sorted((d for _, d in in_context), reverse=True)
    first_message = rows(db, "SELECT min(ordinal) FROM context_items WHERE item_type = 'message'")[0][0]
    assert first_message == len(in_context)
    # together the roots cover every leaf exactly once
    reached: list[str] = []

    def walk(sid: str) -> None:
        if sid in leaves:
            reached.append(sid)
        for child in parents.get(sid, []):
            walk(child)

    for sid, _ in in_context:
        walk(sid)
    assert sorted(reached) == sorted(leaves)


def test_large_builds_are_deterministic(large: tuple[Path, SampleInfo], tmp_path: Path) -> None:
    again = build_sample(tmp_path / "again.db", "large", messages=LARGE_MESSAGES).path
    other_seed = build_sample(tmp_path / "seed8.db", "large", messages=LARGE_MESSAGES, seed=8).path
    assert again.read_bytes() == large[0].read_bytes()
    assert other_seed.read_bytes() != large[0].read_bytes()


def test_large_without_a_count_uses_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_LARGE_MESSAGES == 100_000  # the documented size (sample_sessions/README.md)
    monkeypatch.setattr(build_module, "DEFAULT_LARGE_MESSAGES", 240)
    assert build_sample(tmp_path / "large.db", "large").message_count == 240


# --- file handling and arguments ------------------------------------------------------------


def test_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / "x.db"
    target.write_bytes(b"keep me")
    with pytest.raises(InputError, match="already exists"):
        build_sample(target, "demo")
    assert target.read_bytes() == b"keep me"
    build_sample(target, "demo", overwrite=True)
    assert target.read_bytes().startswith(b"SQLite format 3\0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]  # no temp or journal files left


@pytest.mark.parametrize(
    ("kind", "kwargs", "message"),
    [
        ("huge", {}, "unknown sample kind"),
        ("demo", {"messages": 10}, "fixed size"),
        ("large", {"messages": 0}, "positive integer"),
    ],
)
def test_bad_arguments(tmp_path: Path, kind: str, kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build_sample(tmp_path / "x.db", kind, **kwargs)
    assert not (tmp_path / "x.db").exists()


def test_ensure_demo_db_prefers_the_repository_copy() -> None:
    assert ensure_demo_db() == SAMPLES_DIR / "demo.db"


def test_ensure_demo_db_builds_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths_module, "repo_demo_path", lambda: tmp_path / "no-repo" / "demo.db")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = ensure_demo_db()
    assert path == tmp_path / "cache" / "ctxview" / f"demo-v{DEMO_FORMAT_VERSION}.db"
    assert path.read_bytes() == build_sample(tmp_path / "fresh.db", "demo").path.read_bytes()
    mtime = path.stat().st_mtime_ns
    assert ensure_demo_db() == path and path.stat().st_mtime_ns == mtime


def test_demo_conversation_id_names_the_active_debugging_conversation(tmp_path: Path) -> None:
    from ctxview.samples import DEMO_CONVERSATION_ID
    from ctxview.store import LcmStore

    info = build_sample(tmp_path / "demo.db", "demo")
    assert info.active_conversation_id == DEMO_CONVERSATION_ID
    with LcmStore(info.path) as store:
        session = store.load_session(DEMO_CONVERSATION_ID)
    assert session.conversation.title == "Flaky prod deploy of billing-api 2.14"
