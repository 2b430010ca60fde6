"""Properties of a whole assembly over generated sessions and parameters (hypothesis).

Each property is one the reference assembler guarantees (spec §5–§7, §9):
the budget holds unless the fresh tail alone breaks it, the fresh tail is
never evicted, the output keeps chronological order (tool results sit right
after their call, §7.4), every tool call has exactly one result right after
it, assembling is deterministic, and the trace accounts for every item.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, example, given, settings

from ctxview.assembly.resolve import CALL_TYPES
from ctxview.model import KEPT_OUTCOMES, Params, Trace
from ctxview.pipeline import SessionAssembler
from ctxview.report import dumps, trace_to_json
from tests.lcmdb import text_part
from tests.safety.sessions import VOLATILE, Story, parameters, stories

# CI runs a fixed, bounded set; CTXVIEW_FUZZ_EXAMPLES=5000 explores longer with fresh randomness
LONG_RUN = int(os.environ.get("CTXVIEW_FUZZ_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=LONG_RUN or 150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not LONG_RUN,
    database=None,
)


def run(story: Story, params: Params) -> Trace:
    return SessionAssembler(story.session()).run(params)


def call_ids(message: Any) -> list[str]:
    """§7.4 calls of an assistant message: call-type blocks with a non-empty string id (or call_id)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in CALL_TYPES:
            cid = block.get("id") if isinstance(block.get("id"), str) and block.get("id") else block.get("call_id")
            if isinstance(cid, str) and cid:
                ids.append(cid)
    return ids


def result_id(message: Any) -> str | None:
    if not isinstance(message, dict) or message.get("role") != "toolResult":
        return None
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@SETTINGS
@given(story=stories(), params=parameters())
def test_kept_tokens_stay_within_the_budget_unless_the_fresh_tail_alone_exceeds_it(story, params):
    trace = run(story, params)
    s = trace.summary
    protected = s.tail_tokens + s.focus_tokens
    assert s.assembler_tokens == s.kept_evictable_tokens + protected
    assert s.kept_evictable_tokens <= max(0, s.effective_budget - protected)
    if protected <= s.effective_budget:
        assert s.assembler_tokens <= s.effective_budget
    kept_evictable = [d for d in trace.decisions if d.segment == "evictable" and d.selected]
    assert sum(d.tokens for d in kept_evictable) == s.kept_evictable_tokens
    assert sum(d.tokens for d in trace.decisions if d.segment == "fresh-tail") == s.tail_tokens


def twin_tail() -> Story:
    """Two JSON-identical fresh-tail messages (found by the long run): only the newer is protected."""
    story = Story()
    story.message("assistant", "helm", [text_part("helm", "assistant")])
    story.message("system", "helm", [text_part("helm", "system")])
    story.message("system", "helm", [text_part("helm", "system")])
    return story


@SETTINGS
@given(story=stories(), params=parameters())
@example(
    story=twin_tail(),
    params=Params(token_budget=1, fresh_tail_count=2, live_messages=({"role": "user", "content": VOLATILE[0]},)),
)
def test_the_fresh_tail_is_never_evicted(story, params):
    trace = run(story, params)
    boundary = trace.summary.fresh_tail_ordinal
    # §9.2: with no summaries and fewer items than live messages the engine sends the live
    # transcript instead of the assembled context; then nothing assembled is used at all
    fallback = trace.summary.engine_outcome.startswith("live-fallback")
    for d in trace.decisions:
        if d.outcome == "unresolved" or d.ordinal is None:
            continue
        in_tail = boundary is not None and d.ordinal >= boundary
        assert (d.segment == "fresh-tail") == in_tail, d
        if in_tail:
            assert d.selected, d
            assert d.outcome != "evicted", d
            if d.outcome == "evicted-for-live" and not fallback:
                # §7.5 keeps *unique* protection hashes and §9.3 matches each once, newest first:
                # of two JSON-identical tail messages only the newer is protected (as in the reference)
                twins = [
                    e
                    for e in trace.decisions
                    if e.key != d.key and e.segment == "fresh-tail" and (e.role, e.text) == (d.role, d.text)
                ]
                assert any(e.protected for e in twins), d
            elif d.outcome == "evicted-for-live":
                assert "live transcript" in d.reason, d
    # the newest resolved raw message is always in the tail (§5)
    raw = [d for d in trace.decisions if d.kind == "message" and d.outcome != "unresolved"]
    if raw and params.fresh_tail_count > 0:
        assert raw[-1].segment == "fresh-tail"


@SETTINGS
@given(story=stories(), params=parameters())
def test_output_keeps_chronological_order(story, params):
    trace = run(story, params)
    by_key = trace.by_key()
    ordinals = []
    live = []
    for message, key in zip(trace.messages, trace.message_keys, strict=True):
        if key is None or result_id(message) is not None:
            continue  # synthetic results and results sit after their call, not at their own ordinal
        d = by_key[key]
        if d.ordinal is not None:
            ordinals.append(d.ordinal)
        else:
            live.append(d.live_index)
    assert ordinals == sorted(ordinals) and len(set(ordinals)) == len(ordinals)
    assert live == sorted(live) and len(set(live)) == len(live)


@SETTINGS
@given(story=stories(), params=parameters())
def test_every_tool_call_has_exactly_one_result_right_after_it(story, params):
    trace = run(story, params)
    messages = trace.messages
    results = [result_id(m) for m in messages]
    for index, message in enumerate(messages):
        calls = call_ids(message)
        if not calls:
            continue
        following = results[index + 1 : index + 1 + len(calls)]
        assert following == calls, (index, calls, following)
        for cid in calls:
            assert results.count(cid) == 1, cid
    # and no result without its call — except where the serialized clamp (§9.8) cut the front
    # off a starved context: it keeps a newest suffix, which can start with a lone result
    calls_seen = {cid for m in messages for cid in call_ids(m)}
    orphans = [rid for rid in results if rid is not None and rid not in calls_seen]
    if not trace.summary.clamped:
        assert orphans == []
    else:
        assert len(orphans) <= 1


@SETTINGS
@given(story=stories(), params=parameters())
def test_assembling_twice_gives_identical_results(story, params):
    session = story.session()
    assembler = SessionAssembler(session)
    first = dumps(trace_to_json(assembler.run(params)))
    again = dumps(trace_to_json(assembler.run(params)))  # cached resolution
    fresh = dumps(trace_to_json(SessionAssembler(story.session()).run(params)))  # from scratch
    assert first == again == fresh


@SETTINGS
@given(story=stories(), params=parameters())
def test_the_trace_counts_add_up_to_the_items(story, params):
    session = story.session()
    trace = SessionAssembler(session).run(params)
    items = [d for d in trace.decisions if d.ordinal is not None]
    live = [d for d in trace.decisions if d.live_index is not None]
    assert [d.ordinal for d in items] == [it.ordinal for it in session.items]
    expected_live = len(params.live_messages or ()) if params.engine else 0
    assert [d.live_index for d in live] == list(range(len(live)))
    assert len(live) in (0, expected_live)
    assert len(items) + len(live) == len(trace.decisions)
    counts = trace.outcome_counts()
    assert sum(counts.values()) == len(trace.decisions)
    # dangling references are skipped as the reference does, and counted
    assert counts.get("unresolved", 0) == story.dangling
    assert sorted(trace.unresolved_ordinals) == sorted(d.ordinal for d in items if d.outcome == "unresolved")
    assert sorted(trace.kept_ordinals) == sorted(d.ordinal for d in items if d.selected and d.segment != "live")
    # every emitted message comes from exactly one decision that says where it went
    assert len(trace.message_keys) == len(trace.messages)
    emitted = {key: index for index, key in enumerate(trace.message_keys) if key is not None}
    assert len(emitted) == sum(1 for key in trace.message_keys if key is not None)
    for d in trace.decisions:
        if d.key in emitted:
            assert d.output_index == emitted[d.key] and d.is_kept, d
        else:
            assert d.output_index is None, d
    assert counts.get("appended", 0) == sum(1 for d in live if d.key in emitted)
    assert set(KEPT_OUTCOMES) >= {d.outcome for d in trace.decisions if d.key in emitted}
