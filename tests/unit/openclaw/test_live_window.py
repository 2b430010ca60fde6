"""The host's live window from both transcript formats: branch selection, compaction, message shapes."""

from __future__ import annotations

from pathlib import Path

from ctxview.jsjson import js_stringify
from ctxview.openclaw.agents import TranscriptRef
from ctxview.openclaw.live_window import build_live_window, js_date_ms
from ctxview.openclaw.transcript import parse_jsonl_transcript, read_transcript
from tests.openclaw_fixtures import (
    CODER_BRANCH,
    CODER_COMPILED,
    MAIN_LIVE_IDS,
    MAIN_LIVE_WINDOW,
    SID_CODER,
    SID_CRON,
    SID_MAIN,
    T0,
    entry,
    header,
    js_line,
    user,
)


def jsonl(root: Path, sid: str) -> TranscriptRef:
    return TranscriptRef("jsonl", "main", sid, root / "agents" / "main" / "sessions" / f"{sid}.jsonl")


def coder(root: Path) -> TranscriptRef:
    return TranscriptRef("sqlite", "coder", SID_CODER, root / "agents" / "coder" / "agent" / "openclaw-agent.sqlite")


def test_jsonl_window_after_a_compaction(state_tree):
    transcript = read_transcript(jsonl(state_tree.root, SID_MAIN))
    window = build_live_window(transcript)
    assert js_stringify(window.messages) == js_stringify(MAIN_LIVE_WINDOW)  # key order included
    assert window.entry_ids == MAIN_LIVE_IDS
    assert (window.leaf_id, window.compaction_id) == ("3a4b5c6d", "d4e5f6a7")
    assert window.notes == [
        "1 line not valid JSON, skipped (line 13); the last one looks cut off (a write in progress?)",
        "entries of unknown type ('mystery' ×1) give no message",
    ]
    assert window.provenance() == "live window: 6 entries from agents/main session 3f1c…, transcript"


def test_jsonl_window_at_a_records_leaf(state_tree):
    transcript = read_transcript(jsonl(state_tree.root, SID_MAIN))
    before_compaction = build_live_window(transcript, "c3d4e5f6")
    assert [m["role"] for m in before_compaction.messages] == ["user", "assistant", "toolResult"]
    assert before_compaction.compaction_id is None
    assert before_compaction.provenance() == (
        "live window: 3 entries from agents/main session 3f1c…, transcript, up to entry c3d4e5f6"
    )
    at_prompt = build_live_window(transcript, "e5f6a7b8")
    assert at_prompt.entry_ids == ["d4e5f6a7", "c3d4e5f6"]
    assert build_live_window(transcript, None).messages == []
    unknown = build_live_window(transcript, "ffffffff")
    assert unknown.entry_ids == MAIN_LIVE_IDS
    assert unknown.notes[-1] == (
        "entry ffffffff is not in the transcript; the branch ends at the transcript's leaf instead"
    )


def test_format_1_transcripts_are_migrated_as_the_host_does(state_tree):
    window = build_live_window(read_transcript(jsonl(state_tree.root, SID_CRON)))
    assert window.messages == [
        user("nightly run", T0 + 10),
        {"role": "custom", "content": "x", "timestamp": T0 + 20},  # hookMessage became custom
    ]
    assert window.entry_ids == ["v1-1", "v1-2"]


def test_sqlite_window_follows_leaf_rows_side_appends_and_reparenting(state_tree):
    transcript = read_transcript(coder(state_tree.root))
    assert transcript.active_seqs == [2, 3, 6, 8, 9, 11]
    window = build_live_window(transcript)
    assert window.branch == CODER_BRANCH
    assert window.messages[:5] == CODER_COMPILED  # e6 was stored zstd-compressed
    assert window.messages[5] == user("Thanks", T0 + 8000)
    assert window.notes == [
        "entries of unknown type ('plugin_note' ×1) give no message",
        "1 event stored zstd-compressed",
        "a leaf row (l2) names an unknown entry; it changes nothing",
    ]
    assert window.provenance() == "live window: 6 entries from agents/coder session c0de…, SQLite transcript"
    assert build_live_window(transcript, "e6").messages == CODER_COMPILED


def _text(*entries):
    return "\n".join(js_line(e) for e in entries) + "\n"


def _parse(text: str):
    return parse_jsonl_transcript(text, TranscriptRef("jsonl", "main", "s", Path("s.jsonl")))


def test_without_leaf_rows_the_last_entry_of_any_type_is_the_leaf():
    text = _text(
        header("s", T0),
        entry("message", "m1", None, T0, message=user("one", T0)),
        entry("message", "m2", "m1", T0, message=user("two", T0)),
        entry("message", "m3", "m1", T0, message=user("branch", T0)),  # a branch from m1, written last
        entry("label", "lb", "m3", T0, targetId="m1", label="here"),
    )
    window = build_live_window(_parse(text))
    assert window.branch == ["m1", "m3", "lb"] and window.entry_ids == ["m1", "m3"]


def test_leaf_row_to_null_empties_the_branch_and_later_entries_chain_onto_it():
    text = _text(
        header("s", T0),
        entry("message", "m1", None, T0, message=user("one", T0)),
        {"type": "leaf", "id": "l0", "parentId": "m1", "targetId": None},
        {"type": "message", "id": "m2", "timestamp": "2026-04-12T09:00:00Z", "message": user("fresh", T0)},
    )
    window = build_live_window(_parse(text))
    assert window.branch == ["m2"]


def test_a_missing_header_makes_the_transcript_empty_as_the_host_reads_it():
    transcript = _parse(_text(entry("message", "m1", None, T0, message=user("one", T0))))
    assert transcript.entries == []
    assert transcript.notes == ["s.jsonl: line 1 is not a session header; OpenClaw reads this transcript as empty"]


def test_a_compaction_whose_first_kept_entry_is_off_the_branch_keeps_nothing_before_it():
    text = _text(
        header("s", T0),
        entry("message", "m1", None, T0, message=user("one", T0)),
        entry("compaction", "c1", "m1", T0 + 5, summary="S", firstKeptEntryId="zz", tokensBefore=9),
        entry("message", "m2", "c1", T0, message=user("two", T0)),
    )
    window = build_live_window(_parse(text))
    assert window.messages == [
        {"role": "compactionSummary", "summary": "S", "tokensBefore": 9, "timestamp": T0 + 5},
        user("two", T0),
    ]
    assert window.notes == ["the compaction's firstKeptEntryId 'zz' is not on the branch; nothing before it is kept"]


def test_js_date_ms():
    assert js_date_ms("2026-04-12T09:00:00.000Z") == T0
    assert js_date_ms("2026-04-12T11:00:00+02:00") == T0
    assert js_date_ms(12.9) == 12
    assert js_date_ms("yesterday") is None and js_date_ms(None) is None
