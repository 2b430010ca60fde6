"""Section ROI with a citation log and stubs: spec E23–E35 (scorers.md C)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.jsjson import JS_WHITESPACE
from ctxview.model import MessageRow, PartRow
from ctxview.scorers import run_scoring, score_items
from ctxview.scorers.base import ScoreDoc
from ctxview.scorers.roi import (
    KURO_PROTECTED,
    CitationLog,
    RoiConfig,
    derive_citation_log,
    doc_section,
    loop_e_citations,
    make_roi,
    message_section,
    parse_citation_lines,
    read_citation_log,
    roi_category,
    scan_sections,
    score_section,
    section_keywords,
    section_stats,
    stub_line,
    stub_tagged_text,
)
from tests.scorer_selection import select_ranked


def _doc(key: str, text: str, pool: int | None, **kw: object) -> ScoreDoc:
    kind = str(kw.pop("kind", "message"))
    role = kw.pop("role", "user")
    segment = kw.pop("segment", "evictable" if pool is not None else "fresh-tail")
    tokens = kw.pop("tokens", estimate_tokens(text))
    return ScoreDoc(key, pool if pool is not None else 99, kind, role, text, tokens, pool_index=pool,  # type: ignore[arg-type]
                    segment=segment, source_role=kw.pop("source_role", role), **kw)  # type: ignore[arg-type]  # fmt: skip


def _line(sections: list[tuple[str, int]], citations: list[str], **extra: object) -> str:
    return json.dumps({"sections": [{"name": n, "chars": c} for n, c in sections], "citations": citations, **extra})


def _worked_lines(timestamps: bool = False) -> list[str]:
    """C.4.8: 20 cycles; inbox 200 chars, topic-memory 4000, capabilities 800, every cycle."""
    lines = []
    for k in range(1, 21):
        cited = (["inbox"] if k in (3, 7, 11, 15, 18, 20) else []) + (["topic-memory"] if k == 1 else [])
        extra = {"timestamp": f"2026-02-26T10:{k:02d}:00Z"} if timestamps else {}
        lines.append(_line([("inbox", 200), ("topic-memory", 4000), ("capabilities", 800)], cited, **extra))
    return lines


# --- E23, E24: sections and Loop-E citations -----------------------------------------------------------


def test_e23_section_scan() -> None:
    text = '<inbox>\nhi\n</inbox>\n<topic-memory name="ctx">\nabc\n</topic-memory><b>x</b>'
    found = scan_sections(text)
    assert [(s.name, s.chars) for s in found] == [("inbox", 19), ("topic-memory", 45), ("b", 8)]
    assert found[1].attr_name == "ctx"
    assert text[found[1].body_start : found[1].body_end] == "\nabc\n"


def test_scan_resumes_after_a_match_and_skips_unclosed_tags() -> None:
    text = "<outer><inbox>a</inbox></outer> <br> <p>x</p> < b>no</ b> <a>y</a>"
    assert [(s.name, s.chars) for s in scan_sections(text)] == [("outer", 31), ("p", 8), ("a", 8)]


_WS = re.escape(JS_WHITESPACE)
_KURO_PATTERN = re.compile(rf"<([^{_WS}]+?)[{_WS}>][\s\S]*?</\1>")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('<>/ab \n\u00a0x="')), max_size=40))
def test_scan_equals_kuros_regex(text: str) -> None:
    expected = [(m.group(1), m.start(), m.end()) for m in _KURO_PATTERN.finditer(text)]
    assert [(s.name, s.start, s.end) for s in scan_sections(text)] == expected


def test_e24_loop_e_citations() -> None:
    sections = ["inbox", "decision-quality-warning", "web"]
    action = "Checked <inbox> and the Decision Quality Warning; web is fine"
    assert loop_e_citations(sections, action) == ["inbox", "decision-quality-warning"]
    assert loop_e_citations(["web"], "see <web> now") == ["web"]  # method 1 has no length limit


# --- E25–E27: the log --------------------------------------------------------------------------------------


def test_e25_repeated_sections_merge() -> None:
    log = parse_citation_lines(
        [_line([("inbox", 10), ("topic-memory", 4109), ("topic-memory", 4153), ("topic-memory", 4180)], [])]
    )
    assert log.cycles[0].sections == (("inbox", 10), ("topic-memory", 12442))
    stats = section_stats(log)
    assert (stats["topic-memory"].included_w, stats["topic-memory"].chars_w) == (1, 12442)


def test_e26_malformed_lines_are_skipped_and_counted() -> None:
    lines = [
        _line([("a", 1)], ["a"]),
        "{not json",
        json.dumps({"sections": {"name": "a", "chars": 1}, "citations": []}),
        json.dumps({"sections": [{"name": "a", "chars": "12"}], "citations": []}),
        json.dumps({"sections": [{"name": "a", "chars": 1.5}], "citations": []}),
        json.dumps({"sections": [{"name": "a", "chars": True}], "citations": []}),
        json.dumps({"sections": [], "citations": "a"}),
        json.dumps({"sections": []}),
        "[1, 2]",
        '{"sections": [], "citations": [], "n": NaN}',
        "",
        _line([("b", 2)], [], timestamp="t2", triggerReason="cron"),
    ]
    log = parse_citation_lines(lines, source="crs.jsonl")
    assert [(c.index, c.line) for c in log.cycles] == [(1, 1), (2, 12)]
    assert (log.cycles[1].timestamp, log.cycles[1].trigger) == ("t2", "cron")
    assert log.malformed == 9
    assert log.problems[0].startswith("crs.jsonl line 2: not valid JSON (")
    assert log.problems[1:4] == (
        'crs.jsonl line 3: "sections" is not a list',
        'crs.jsonl line 4: "sections"[0].chars is not a non-negative integer',
        'crs.jsonl line 5: "sections"[0].chars is not a non-negative integer',
    )
    assert log.problems[6:] == (
        'crs.jsonl line 8: missing "citations"',
        "crs.jsonl line 9: not a JSON object",
        "crs.jsonl line 10: not valid JSON (NaN is not JSON)",
    )
    with pytest.raises(InputError, match=r"^crs.jsonl line 2: not valid JSON"):
        parse_citation_lines(lines, source="crs.jsonl", strict=True)


def test_e27_citing_a_section_that_was_not_included() -> None:
    log = parse_citation_lines([_line([("inbox", 5)], ["inbox", "telegram", "telegram", "inbox"])])
    assert log.cycles[0].cited == ("inbox",)
    assert log.ignored_citations == 1


def test_read_citation_log_file_errors(tmp_path: Path) -> None:
    good = tmp_path / "crs-baseline.jsonl"
    good.write_text("\ufeff" + "\n".join(_worked_lines()) + "\n{oops\n", encoding="utf-8")
    log = read_citation_log(good)
    assert (log.n_cycles, log.malformed, log.source) == (20, 1, str(good))
    with pytest.raises(InputError, match=r"citation log not found: .*missing\.jsonl"):
        read_citation_log(tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="citation log is a directory"):
        read_citation_log(tmp_path)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b'{"sections": [], "citations": []}\n\xff\xfe')
    with pytest.raises(InputError, match="citation log is not UTF-8 text"):
        read_citation_log(binary)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"wrong.jsonl: no valid citation record \(2 malformed lines; first: .*line 1"):
        read_citation_log(wrong)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert read_citation_log(empty).n_cycles == 0


# --- E28–E32: statistics and scores --------------------------------------------------------------------------


def test_e28_insufficient_data() -> None:
    log = parse_citation_lines([_line([("inbox", 10)], ["inbox"])] * 4)
    stats = section_stats(log)
    verdict = score_section("inbox", "", stats["inbox"], log.n_cycles)
    assert (verdict.score, verdict.decision, verdict.status) == (None, "load", "insufficient data")
    assert verdict.summary_line() == "section inbox not scored (insufficient data: 4 inclusions, needs 5) -> load"
    assert verdict.rows() == ()


def test_e29_protected() -> None:
    log = parse_citation_lines(_worked_lines())
    stats = section_stats(log)
    config = RoiConfig(protected=frozenset({"topic-memory"}))
    verdict = score_section("topic-memory", "", stats["topic-memory"], 20, config)
    assert (verdict.score, verdict.decision, verdict.status) == (None, "load", "protected")
    assert verdict.summary_line() == "section topic-memory not scored (protected) -> load"
    assert make_roi(protected="kuro").config.protected == frozenset(KURO_PROTECTED)


def test_e30_no_citations_means_roi_undefined() -> None:
    log = parse_citation_lines([_line([("a", 100), ("b", 300)], ["zzz"])] * 6)
    stats = section_stats(log)
    for name in ("a", "b"):
        assert (stats[name].roi, stats[name].category, stats[name].cite_share) == (None, "n/a", None)
        verdict = score_section(name, "", stats[name], 6)
        assert [f.value for f in verdict.factors] == [0.0, 0.0, 0.0, 0.5]
        assert verdict.score == 0.15 * 0.5


@pytest.mark.parametrize(("roi", "category"), [(0.49, "WASTE"), (0.5, "LOW"), (2.0, "LOW"), (2.01, "MED+"),
                                               (0.0, "WASTE"), (None, "n/a")])  # fmt: skip
def test_e31_roi_boundaries(roi: float | None, category: str) -> None:
    assert roi_category(roi) == category


def test_e32_worked_example() -> None:
    log = parse_citation_lines(_worked_lines())
    stats = section_stats(log)
    expected_shares = {"inbox": (0.04, 6 / 7, 21.43, "MED+"), "topic-memory": (0.80, 1 / 7, 0.1786, "WASTE"),
                       "capabilities": (0.16, 0.0, 0.0, "WASTE")}  # fmt: skip
    for name, (size, cite, roi, category) in expected_shares.items():
        s = stats[name]
        assert s.size_share == pytest.approx(size, abs=1e-12)
        assert s.cite_share == pytest.approx(cite, abs=1e-12)
        assert round(s.roi or 0.0, 4 if roi < 1 else 2) == roi
        assert s.category == category
    rows = [  # section, hint, C, T, R, S, score, decision
        ("inbox", "", 1.0, 0.0, 1.0, 1.0, 0.7000, "load"),
        ("topic-memory", "", 0.3333, 0.0, 0.7684, 0.0, 0.2486, "stub"),
        ("topic-memory", "the topic memory please", 0.3333, 1.0, 0.7684, 0.0, 0.5486, "load"),
        ("capabilities", "", 0.0, 0.0, 0.0, 0.0, 0.0, "stub"),
        ("capabilities", "which tool should we use", 0.0, 1.0, 0.0, 0.0, 0.3000, "load"),
    ]
    for name, hint, c, t, r, s, score, decision in rows:
        verdict = score_section(name, hint, stats[name], 20)
        assert [round(f.value, 4) for f in verdict.factors] == [c, t, r, s]
        assert round(verdict.score or 0.0, 4) == score
        assert verdict.decision == decision
        assert sum(f.product for f in verdict.factors) == pytest.approx(verdict.score, abs=1e-9)
    assert stats["inbox"].r == 0.3 and stats["topic-memory"].r == 0.05
    at_threshold = score_section("capabilities", "which tool should we use", stats["capabilities"], 20)
    assert at_threshold.score == 0.3 and at_threshold.keyword == "tool"
    topic = score_section("topic-memory", "", stats["topic-memory"], 20)
    line = stub_line("topic-memory", 4000, topic)
    assert line == "[ctxview stub] topic-memory | 4000 chars | last cited 19 cycles ago | section score 0.249 < 0.300"
    assert (len(line), estimate_tokens(line)) == (97, 25)
    assert topic.summary_line() == "section topic-memory 0.249 < 0.300 -> stub (C .133 T 0 R .115 S 0; ROI 0.18 WASTE)"
    capabilities = score_section("capabilities", "", stats["capabilities"], 20)
    assert stub_line("capabilities", 800, capabilities).endswith(
        "| 800 chars | never cited | section score 0.000 < 0.300"
    )


def test_e32_stub_line_with_timestamp() -> None:
    log = parse_citation_lines(_worked_lines(timestamps=True))
    topic = score_section("topic-memory", "", section_stats(log)["topic-memory"], 20)
    assert stub_line("topic-memory", 4000, topic) == (
        "[ctxview stub] topic-memory | 4000 chars | last cited 19 cycles ago (2026-02-26T10:01:00Z) | "
        "section score 0.249 < 0.300"
    )


def test_e32_through_the_scorer_with_tagged_sections() -> None:
    body = "m" * (4000 - len("<topic-memory>") - len("</topic-memory>"))
    tools = "c" * (800 - len("<capabilities>") - len("</capabilities>"))
    context = f"<inbox>{'i' * 186}</inbox>\n<topic-memory>{body}</topic-memory>\n<capabilities>{tools}</capabilities>"
    docs = [_doc("sys", context, 0, role="user", source_role="system")]
    log = parse_citation_lines(_worked_lines())
    run = run_scoring(docs, "hello", scorer="roi", citations=log)
    [result] = run.results
    assert result.stub == (
        f"<inbox>{'i' * 186}</inbox>\n<topic-memory>[ctxview stub] topic-memory | 4000 chars | last cited 19 cycles "
        "ago | section score 0.249 < 0.300</topic-memory>\n<capabilities>[ctxview stub] capabilities | 800 chars | "
        "never cited | section score 0.000 < 0.300</capabilities>"
    )
    assert result.stub_tokens == estimate_tokens(result.stub)
    assert result.section == "system" and result.score is None  # the item group has no log data
    assert result.reason.endswith("; tagged sections stubbed: topic-memory, capabilities")
    rows = {row["section"]: row for row in run.table_rows()}
    assert list(rows) == ["system", "inbox", "topic-memory", "capabilities"]
    assert (rows["inbox"]["category"], rows["inbox"]["decision"], rows["inbox"]["roi"]) == (
        "MED+",
        "load",
        21.428571428571427,
    )
    assert (rows["topic-memory"]["category"], rows["topic-memory"]["decision"]) == ("WASTE", "stub")
    assert rows["topic-memory"]["C"] == pytest.approx(1 / 3) and rows["topic-memory"]["last_cited"] == 1
    assert (rows["system"]["status"], rows["system"]["items"]) == ("insufficient data", 1)
    # a prompt naming the section loads it (T = 1)
    [loaded] = score_items(docs, "what is in topic memory?", scorer="roi", citations=log)
    assert loaded.stub is not None and "<topic-memory>" + body in loaded.stub
    assert loaded.reason.endswith("; tagged sections stubbed: capabilities")
    small = [_doc("sys", "<capabilities>tools</capabilities> " + "x" * 400, 0, source_role="system")]
    [kept] = score_items(small, "hello", scorer="roi", citations=log)
    assert kept.stub is None
    assert kept.reason.endswith("; stub skipped for tagged capabilities: the stub would not be smaller than the block")


def test_per_kchar_roi_option() -> None:
    # 50 cycles: "low" cited in 12, "waste" in 1, at the design doc's mean sizes
    lines = [
        _line([("low", 15504), ("waste", 6925)], (["low"] if k < 12 else []) + (["waste"] if k == 0 else []))
        for k in range(50)
    ]
    stats = section_stats(parse_citation_lines(lines), roi_mode="per_kchar")
    assert round(stats["low"].roi or 0.0, 2) == 0.77  # 12 / 15.504, the doc's LOW row
    assert round(stats["waste"].roi or 0.0, 2) == 0.14  # 1 / 6.925, not the doc's 0.04
    assert (stats["low"].category, stats["waste"].category) == ("LOW", "WASTE")
    share = section_stats(parse_citation_lines(lines))
    assert share["low"].roi == pytest.approx((12 / 13) / (15504 / (15504 + 6925)), abs=1e-12)


def test_section_keywords() -> None:
    assert section_keywords("capabilities", {"capabilities": ("tool",)}) == ["tool", "capabilities"]
    assert section_keywords("tool:read_file") == ["tool:read_file", "tool read file"]
    assert section_keywords("web") == []
    assert section_keywords("decision-quality-warning")[-1] == "decision quality warning"


# --- E33–E35: stubs and selection ----------------------------------------------------------------------------------


def _grep_log(cycles: int = 10) -> CitationLog:
    sections = [("user", 200), ("tool:grep", 5000), ("focus-brief", 3000), ("live:x", 3000)]
    return parse_citation_lines([_line(sections, ["user"])] * cycles)


def test_e33_stub_tokens_and_selection() -> None:
    grep_text = "match line\n" * 160
    docs = [
        _doc("u0", "please grep the logs " * 6, 0),
        _doc("g1", grep_text, 1, role="toolResult", source_role="tool", tool_names=("grep",)),
        _doc("u2", "and then summarise them " * 5, 2),
    ]
    log = _grep_log()
    run = run_scoring(docs, "hello", scorer="roi", citations=log)
    g1 = run.results[1]
    assert g1.stub == "[ctxview stub] tool:grep | 1760 chars | never cited | section score 0.000 < 0.300"
    assert g1.stub_tokens == estimate_tokens(g1.stub) == 21
    assert g1.label == "WASTE" and g1.section == "tool:grep"
    assert run.results[0].stub is None and run.results[0].label == "MED+"
    tokens = [d.tokens for d in docs]
    assert tokens == [32, 440, 30]
    budget = 100
    assert select_ranked(docs, run.results, budget, ranks=run.ranks) == ("full-fit", ["u0", "g1", "u2"])
    default = run_scoring(docs, "hello")
    assert select_ranked(docs, default.results, budget, ranks=default.ranks) == ("prompt-aware", ["u0", "u2"])
    # a tighter budget: the stub competes with its own tokens
    assert select_ranked(docs, run.results, 60, ranks=run.ranks) == ("prompt-aware", ["g1", "u2"])


def test_e34_never_stubbed() -> None:
    log = _grep_log()
    docs = [
        _doc("call", '[{"type":"toolCall","name":"grep"}]' + " " * 400, 0, role="assistant",
             source_role="assistant", tool_names=("grep",), has_tool_calls=True),
        _doc("result", "out\n" * 200, 1, role="toolResult", source_role="tool", tool_names=("grep",)),
        _doc("tail", "out\n" * 200, None, role="toolResult", source_role="tool", tool_names=("grep",)),
        _doc("focus", "brief " * 200, None, kind="focus", segment="focus"),
        _doc("live", "event " * 200, None, kind="live", segment="live", live_source="x"),
    ]  # fmt: skip
    results = {d.key: r for d, r in zip(docs, score_items(docs, "", scorer="roi", citations=log), strict=True)}
    assert results["result"].stub is not None and results["result"].stub.startswith("[ctxview stub] tool:grep |")
    for key, why in [
        ("call", "assistant message with tool calls (keeps tool pairing intact)"),
        ("tail", "fresh tail"),
        ("focus", "focus brief"),
        ("live", "live input"),
    ]:
        assert results[key].stub is None
        assert results[key].reason.endswith(f"; stub skipped: {why}")
        assert results[key].score == 0.0  # the section is still scored and shown


def test_stub_not_smaller_than_the_item_is_skipped() -> None:
    docs = [_doc("g", "ok", 0, role="toolResult", source_role="tool", tool_names=("grep",))]
    [result] = score_items(docs, "", scorer="roi", citations=_grep_log())
    assert result.stub is None
    assert result.reason.endswith("; stub skipped: the stub would not be smaller than the item")
    [forced] = score_items(docs, "", scorer="roi", citations=_grep_log(), stub_only_if_smaller=False)
    assert forced.stub is not None and forced.stub_tokens == estimate_tokens(forced.stub)


def test_e35_turning_roi_off_restores_the_default() -> None:
    docs = [
        _doc("u0", "please grep the logs", 0),
        _doc("g1", "match line\n" * 160, 1, role="toolResult", source_role="tool", tool_names=("grep",)),
        _doc("u2", "grep again", 2),
    ]
    before = score_items(docs, "grep logs")
    score_items(docs, "grep logs", scorer="roi", citations=_grep_log())
    assert score_items(docs, "grep logs") == before
    # with no log (or one without data) nothing is stubbed and the ranking is the default one
    empty = run_scoring(docs, "grep logs", scorer="roi")
    assert all(r.stub is None and r.score is None for r in empty.results)
    assert [r.sort_key for r in empty.results] == [r.sort_key for r in before]
    assert [r.base for r in empty.results] == [r.score for r in before]
    for budget in (0, 50, 100, 500):
        assert select_ranked(docs, empty.results, budget, ranks=empty.ranks) == select_ranked(
            docs, before, budget, ranks=True
        )


def test_stubbed_item_is_ranked_on_its_stub_text() -> None:
    docs = [_doc("g", "grep grep output\n" * 50, 0, role="toolResult", source_role="tool", tool_names=("grep",))]
    [result] = score_items(docs, "grep", scorer="roi", citations=_grep_log())
    assert result.stub is not None
    stub_terms = re.findall(r"[a-z0-9]{2,}", result.stub.lower())
    assert result.base == stub_terms.count("grep") / len(stub_terms)
    assert result.sort_key == (-(result.base or 0.0), -0.0)


# --- groups, derived logs, config ------------------------------------------------------------------------------


def test_doc_sections() -> None:
    assert doc_section(_doc("s", "x", 0, kind="summary", summary_kind="condensed")) == "summary:condensed"
    assert doc_section(_doc("t", "x", 0, role="toolResult", source_role="tool", tool_names=("read",))) == "tool:read"
    assert doc_section(_doc("t", "x", 0, role="assistant", source_role="tool")) == "tool:unknown"
    assert doc_section(_doc("y", "x", 0, role="user", source_role="system")) == "system"
    assert doc_section(_doc("f", "x", None, kind="focus")) == "focus-brief"
    assert doc_section(_doc("l", "x", None, kind="live", live_source="agent:x")) == "live:agent:x"


def _message(seq: int, role: str, content: str, tool: str | None = None) -> MessageRow:
    parts = (PartRow("p", "tool" if tool else "text", 0, tool_name=tool),) if tool else ()
    return MessageRow(seq + 100, seq, role, content, parts=parts)


def test_derived_citation_log() -> None:
    messages = [
        _message(1, "user", "please read the config"),
        _message(2, "assistant", "", tool="read"),
        _message(3, "tool", "file body", tool="read"),
        _message(4, "assistant", "The READ shows the user wants X"),
        _message(5, "user", "thanks"),
        _message(6, "assistant", "ok"),
    ]
    assert [message_section(m) for m in messages] == [
        "user",
        "tool:read",
        "tool:read",
        "assistant",
        "user",
        "assistant",
    ]
    log = derive_citation_log(reversed(messages))
    assert log.source == "derived"
    assert [(c.index, c.sections, c.cited) for c in log.cycles] == [
        (1, (("user", 22),), ()),
        (2, (("user", 22), ("tool:read", 9)), ("user", "tool:read")),
        (3, (("user", 28), ("tool:read", 9), ("assistant", 31)), ()),
    ]


def test_metadata_tool_names_count_for_derivation() -> None:
    part = PartRow("p", "tool", 0, metadata='{"originalRole":"assistant","raw":{"type":"toolCall","name":"bash"}}')
    assert message_section(MessageRow(1, 1, "assistant", "", parts=(part,))) == "tool:bash"
    result = PartRow("q", "text", 0, metadata='{"toolName":"bash","toolCallId":"c1"}')
    assert message_section(MessageRow(2, 2, "tool", "out", parts=(result,))) == "tool:bash"
    assert message_section(MessageRow(3, 3, "tool", "out")) == "tool:unknown"


def test_session_derivation_through_run_scoring() -> None:
    messages = [_message(1, "user", "run grep"), _message(2, "assistant", "", tool="grep")]
    messages += [_message(3 + i, "assistant" if i % 2 else "tool", "grep output " * 50, tool="grep") for i in range(12)]
    docs = [_doc("g", "grep output " * 50, 0, role="toolResult", source_role="tool", tool_names=("grep",))]
    run = run_scoring(docs, "", scorer="roi", session=messages)
    assert run.stats()["source"] == "derived"
    assert run.stats()["cycles"] == 7


def test_config_validation() -> None:
    with pytest.raises(InputError, match="stub threshold must be a number from 0 to 1"):
        make_roi(threshold=1.5)
    with pytest.raises(InputError, match="ROI weights must be four non-negative numbers"):
        make_roi(weights=(0.5, 0.5))
    with pytest.raises(InputError, match="unknown ROI mode"):
        make_roi(roi_mode="ratio")
    with pytest.raises(InputError, match="ROI window must be a positive whole number"):
        make_roi(window=0)
    with pytest.raises(InputError, match="unknown keyword preset"):
        make_roi(keywords="openai")


def test_threshold_is_tunable() -> None:
    log = parse_citation_lines(_worked_lines())
    stats = section_stats(log)
    assert score_section("topic-memory", "", stats["topic-memory"], 20, RoiConfig(threshold=0.2)).decision == "load"
    assert score_section("inbox", "", stats["inbox"], 20, RoiConfig(threshold=0.75)).decision == "stub"


def test_stub_tagged_text_only_touches_stubbed_sections() -> None:
    log = parse_citation_lines(_worked_lines())
    stats = section_stats(log)
    verdicts = {name: score_section(name, "", s, 20) for name, s in stats.items()}
    text = "<inbox>keep</inbox><other>x</other><capabilities attr='1'>list</capabilities>"
    new_text, names, kept = stub_tagged_text(text, verdicts)
    assert (names, kept) == (("capabilities",), ())
    assert len("<capabilities attr='1'>list</capabilities>") == 23 + 4 + 15 == 42
    assert new_text == (
        "<inbox>keep</inbox><other>x</other><capabilities attr='1'>[ctxview stub] capabilities | 42 chars | "
        "never cited | section score 0.000 < 0.300</capabilities>"
    )
    assert stub_tagged_text("no tags here", verdicts) == ("no tags here", (), ())
    # a stub longer than the body it would hide is not applied when only_if_smaller is set
    assert stub_tagged_text(text, verdicts, only_if_smaller=True) == (text, (), ("capabilities",))
