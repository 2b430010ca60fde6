"""Focus-brief overlay (spec §10.1, §11.8 #59) and stub substitution (§10.2, §11.8 #60)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ctxview.assembly.assembler import assemble_context
from ctxview.assembly.focus import is_covered
from ctxview.assembly.resolve import ResolvedItem, resolve_session
from ctxview.assembly.stubs import format_en_us, stub_text
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsjson import js_stringify
from ctxview.model import FocusBriefRow, SummaryRow
from tests.lcmdb import LcmDbWriter, assemble, block_part, load_session

BRIEF_XML = (
    '<focus_brief id="focus_1" prompt="auth work" token_count="40" target_tokens="12000" '
    'created_at="2026-02-01T10:00:00" covered_message_seq="1">\n  <content>\n# Auth brief\nAll about tokens.\n'
    "  </content>\n</focus_brief>"
)


@pytest.fixture
def focus_db(tmp_path: Path) -> Path:
    path = tmp_path / "focus.db"
    with LcmDbWriter(path) as w:
        m = [w.message("user", f"old {i}", in_context=False) for i in range(3)]  # seqs 0, 1, 2
        w.summary("s_old", "old auth work", source_messages=[m[0], m[1]])  # ordinal 0, covered
        w.summary("s_new", "newer work", source_messages=[m[2]])  # ordinal 1, not covered
        w.user("current question")  # ordinal 2
        w.assistant("answer")  # ordinal 3
        w.focus_brief(
            "focus_1",
            "# Auth brief\nAll about tokens.",
            prompt="auth work",
            token_count=40,
            target_tokens=12000,
            covered_message_seq=1,
            created_at="2026-02-01 10:00:00",
        )
    return path


def test_focus_brief_replaces_covered_summaries(focus_db: Path) -> None:
    before = hashlib.sha256(focus_db.read_bytes()).hexdigest()
    result = assemble(focus_db)
    assert hashlib.sha256(focus_db.read_bytes()).hexdigest() == before  # context_items untouched
    assert result.messages[0] == {"role": "user", "content": BRIEF_XML}
    assert result.messages[1]["content"].startswith('<summary id="s_new"')
    assert [m["role"] for m in result.messages[2:]] == ["user", "assistant"]
    assert result.stats == {"rawMessageCount": 2, "summaryCount": 1, "totalContextItems": 4}
    assert result.estimated_tokens == sum(
        estimate_tokens(m["content"] if isinstance(m["content"], str) else js_stringify(m["content"]))
        for m in result.messages
    )
    assert result.focus_tokens == estimate_tokens(BRIEF_XML)
    assert result.kept_ordinals == [1, 2, 3]  # the brief stands at ordinal 0, always kept, never listed
    diag = result.debug["overflowDiagnostics"]
    assert diag["summaryCount"] == 2 and diag["totalContextItems"] == 4  # the brief counts with summaries here
    keys = [d.key for d in result.decisions]
    assert keys == ["f:0", "o:0", "o:1", "o:2", "o:3"]
    focus, covered = result.decisions[0], result.decisions[1]
    assert (focus.kind, focus.segment, focus.outcome, focus.output_index) == ("focus", "focus", "focus", 0)
    assert focus.selected is False and focus.is_kept
    assert focus.reason == "focus brief focus_1: always kept; replaces 1 covered summary (ordinal 0)"
    assert (covered.outcome, covered.selected, covered.output_index) == ("replaced-by-focus", False, None)
    assert covered.reason == "replaced by focus brief focus_1 (its sources end at seq 1 ≤ 1)"
    assert result.message_keys[0] == "f:0"
    items = [d for d in result.decisions if d.outcome != "replaced-by-focus"]  # the items assembled
    assert [d.kind for d in items] == ["focus", "summary", "message", "message"]
    assert [(d.segment, d.selected) for d in items] == [
        ("focus", False),
        ("evictable", True),
        ("fresh-tail", True),
        ("fresh-tail", True),
    ]


def test_focus_coverage_by_latest_at_and_insert_position(tmp_path: Path) -> None:
    path = tmp_path / "f2.db"
    with LcmDbWriter(path) as w:
        w.summary("a", "a", latest_at="2026-01-01T00:00:00.000Z")  # 0: covered
        w.user("between")  # 1
        w.summary("b", "b", latest_at="2026-01-05T00:00:00.000Z")  # 2: covered
        w.summary("c", "c", latest_at="2026-02-01T00:00:00.000Z")  # 3: too new
        w.user("last")  # 4
        w.focus_brief("fb", "brief", covered_latest_at="2026-01-05 00:00:00")
    result = assemble(path)
    contents = [m["content"][:14] for m in result.messages]
    assert contents == ["<focus_brief i", "between", '<summary id="c', "last"]
    assert [d.key for d in result.decisions] == ["f:0", "o:0", "o:1", "o:2", "o:3", "o:4"]
    assert result.decisions[3].outcome == "replaced-by-focus"


def test_blank_or_inactive_brief_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f3.db"
    with LcmDbWriter(path) as w:
        w.summary("a", "a", latest_at="2026-01-01T00:00:00.000Z")
        w.user("q")
        w.focus_brief("blank", " \n ", covered_latest_at="2026-02-01 00:00:00", created_at="2026-03-01 00:00:00")
        w.focus_brief("draft", "draft", status="draft", covered_latest_at="2026-02-01 00:00:00")
    result = assemble(path)
    assert result.messages[0]["content"].startswith('<summary id="a"')
    assert all(d.kind != "focus" for d in result.decisions)


# --- stubs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (1234567, "1,234,567"),
        (-5, "0"),
        (None, "0"),
        (1234.5678, "1,234.568"),
        ("2048", "2,048"),
    ],
)
def test_en_us_numbers(value: object, text: str) -> None:
    assert format_en_us(value) == text


def test_stub_text_format() -> None:
    assert stub_text("file_abc", "  read ", 1234567, "  Lines 1-40 of a config.  ") == (
        "[LCM Tool Output: file_abc | tool=read | 1,234,567 bytes]\n\nExploration Summary:\nLines 1-40 of a config.\n\n"
        'Call lcm_describe(id="<file_id above>", expandFile=true) to fetch the full output content from disk.'
    )
    assert "tool=unknown | 0 bytes]" in stub_text("file_x", " ", None, None)
    assert "\n(no summary available)\n" in stub_text("file_x", None, 5, "   ")


def result_part(call_id: str, text: str) -> dict[str, object]:
    part = block_part({"type": "text", "text": text}, "toolResult", toolCallId=call_id, toolName="bash", isError=False)
    part.update(tool_call_id=call_id, tool_name="bash")
    return part


@pytest.fixture
def stub_db(tmp_path: Path) -> Path:
    path = tmp_path / "stub.db"
    big = "x" * 4000
    with LcmDbWriter(path) as w:
        for i in range(6):
            call = {"type": "toolCall", "id": f"c{i}", "name": "bash", "arguments": {"cmd": f"run {i}"}}
            w.assistant_blocks([call])
            large = f"file_{i:016x}" if i in (0, 1, 3, 5) else None
            w.message("tool", big, [result_part(f"c{i}", big)], large_content=large)
            w.large_file(f"file_{i:016x}", byte_size=1_234_567 + i, summary=f"summary {i}")
        w.message("tool", "legacy", [], large_content="file_0000000000000000")  # degraded: never stubbed
        w.message("tool", big, [result_part("c9", big)], large_content="not_a_file_id")
        w.user("question")  # the fresh tail (count 4) reaches back to the last externalized result
    return path


def test_stubs_replace_evictable_externalized_results(stub_db: Path) -> None:
    session = load_session(stub_db)
    resolved = resolve_session(session, "UTC")
    params = dict(
        token_budget=100_000,
        prompt=None,
        fresh_tail_count=4,
        fresh_tail_max_tokens=None,
        prompt_aware_eviction=False,
        timezone="UTC",
        resolved=resolved,
    )
    baseline = assemble_context(session, stub_large_tool_payloads=False, **params)
    stubbed = assemble_context(session, stub_large_tool_payloads=True, **params)
    # ordinals 1, 3, 7 and 11 carry file ids; 11 (i=5) is inside the fresh tail (ordinals 11-14)
    assert stubbed.fresh_tail_ordinal == 11
    assert stubbed.stub_stats["stubbedCount"] == 3
    original = {item.ordinal: item for item in resolved}
    expected_saved = 0
    for ordinal, i in ((1, 0), (3, 1), (7, 3)):
        text = stub_text(f"file_{i:016x}", "bash", 1_234_567 + i, f"summary {i}")
        expected_saved += original[ordinal].tokens - estimate_tokens(text)
        decision = next(d for d in stubbed.decisions if d.ordinal == ordinal)
        assert decision.outcome == "stubbed" and decision.reason.startswith("stubbed: ")
        assert decision.tokens == estimate_tokens(text)
        message = stubbed.messages[decision.output_index]
        assert message["content"] == [{"type": "text", "text": text}]  # list content stays a one-element list
        assert message["toolCallId"] == f"c{i}" and message["toolName"] == "bash"
        assert f"| {format_en_us(1_234_567 + i)} bytes]" in text
    assert stubbed.stub_stats["tokensSaved"] == expected_saved > 0
    assert stubbed.debug["stubStats"] == stubbed.stub_stats
    assert stubbed.estimated_tokens == baseline.estimated_tokens - expected_saved
    assert stubbed.debug["overflowDiagnostics"]["totalContextTokens"] == (
        baseline.debug["overflowDiagnostics"]["totalContextTokens"] - expected_saved
    )
    # the cached resolved items are untouched, and a run without stubs is the baseline again
    assert original[1].message["content"][0]["text"] == "x" * 4000
    again = assemble_context(session, stub_large_tool_payloads=False, **params)
    assert again.messages == baseline.messages
    # never stubbed: rows without large_content, a degraded legacy row, a non-file id, the fresh tail
    for ordinal in (5, 9, 11, 12, 13):
        assert next(d for d in stubbed.decisions if d.ordinal == ordinal).outcome != "stubbed"


@pytest.mark.parametrize(
    ("latest_at", "covered_latest_at", "covered"),
    [
        ("2026-01-05T00:00:00.000Z", "2026-01-05 00:00:00", True),  # equal instants, two spellings
        ("2026-01-05T05:30:00+05:30", "2026-01-05 00:00:00", True),
        ("2026-01-05T00:00:00.001Z", "2026-01-05 00:00:00", False),  # the compare is to the millisecond
        ("not a date", "2026-01-05 00:00:00", False),  # NaN compares false
        ("2026-01-01T00:00:00.000Z", "2025-03-30T01:30:00+0200", False),
        ("2026-01-01T00:00:00.000Z", None, False),
        (None, "2026-01-05 00:00:00", False),
    ],
)
def test_focus_coverage_compares_js_dates(latest_at: str | None, covered_latest_at: str | None, covered: bool) -> None:
    item = ResolvedItem(0, {}, 1, False, "s", summary=SummaryRow("s", "leaf", 0, "s", latest_at=latest_at))
    brief = FocusBriefRow("fb", "p", "body", "active", covered_latest_at=covered_latest_at)
    assert is_covered(item, brief) is covered
