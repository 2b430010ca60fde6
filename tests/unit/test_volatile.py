"""§9.3–§9.7: volatile detection, coverage matching, anchors, merge and tool-pair-safe eviction."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.live import normalize_live_message, stored_content, stored_role
from ctxview.assembly.render import assistant_usage
from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.assembly.tool_pairs import sanitize_tool_use_result_pairing_keyed
from ctxview.assembly.volatile import (
    PairIndex,
    VolatileResult,
    _match_candidates,
    append_volatile_inputs,
    is_marker_volatile,
    is_volatile_content,
    protected_by_hash,
    protected_indexes,
    structural_current_turn,
    tool_pairs_are_clean,
)
from ctxview.jsjson import h16

BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
RETRY = "[Retry after the previous model attempt failed or timed out]"


def inter_session(body: str) -> str:
    head = "[Inter-session message] sourceSession=s sourceTool=t"
    return f"{head}\n{BEGIN}\n[Internal task completion event]\n{body}\n{END}"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: str, tokens: int = 5) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": c}} for c in calls]
    return {"role": "assistant", "content": content, "usage": assistant_usage(tokens)}


def result(call_id: str, text: str, name: str = "read") -> dict[str, Any]:
    return {"role": "toolResult", "content": [{"type": "text", "text": text}], "toolCallId": call_id, "toolName": name}


def run(
    assembled: list[Any], live: list[Any], budget: int, protected: set[int] | None = None, estimate: int = 10
) -> VolatileResult:
    return append_volatile_inputs(
        assembled,
        estimate,
        live,
        protected or set(),
        budget,
        sanitize=sanitize_tool_use_result_pairing_keyed,
        normalize=normalize_live_message,
    )


# --- §9.5(a) ----------------------------------------------------------------------------------


def test_volatile_content_markers() -> None:
    assert is_volatile_content(inter_session("done"))
    assert is_volatile_content("  [INTER-SESSION   message]\n" + BEGIN + END)  # case-insensitive, collapsed
    assert not is_volatile_content("[Inter-session message]\n" + BEGIN)  # END missing
    assert not is_volatile_content("[Inter-session message]\n" + END + BEGIN)  # END before BEGIN
    assert is_volatile_content(f"{BEGIN}\n[internal task COMPLETION event]\n{END}")
    assert not is_volatile_content(f"prefix {BEGIN}\n[Internal task completion event]\n{END}")
    assert is_volatile_content(f"please\r\n  {RETRY}\t\r\nagain")
    assert not is_volatile_content(f"please {RETRY}")
    assert not is_volatile_content("ordinary question")


def test_marker_volatile_needs_user_or_system_role() -> None:
    assert is_marker_volatile(user(inter_session("x")))
    assert is_marker_volatile({"role": "system", "content": RETRY})
    assert not is_marker_volatile({"role": "assistant", "content": RETRY})
    assert not is_marker_volatile(user("   "))


# --- §9.5(b) ----------------------------------------------------------------------------------


def forms(messages: list[Any]) -> list[tuple[str, str]]:
    return [(stored_role(m), stored_content(m)) for m in messages]


def test_structural_current_turn_examines_only_the_last_live_user() -> None:
    assembled = [user("first"), assistant("a"), user("ok")]
    ts = "[Sun 2026-06-21 13:19 GMT+3]"
    assert structural_current_turn(forms(assembled), forms([user(f"{ts} ok"), assistant("x")])) == 0
    assert structural_current_turn(forms(assembled), forms([user(f"{ts} ok"), user("something else")])) is None
    assert structural_current_turn(forms(assembled), forms([user(f"{ts} first")])) == 0  # timestamp path: any row
    marker = "<relevant-memories>m</relevant-memories>\nmore\n"
    assert structural_current_turn(forms(assembled), forms([user(marker + "ok")])) == 0
    assert structural_current_turn(forms(assembled), forms([user(marker + "first")])) is None  # not the newest row
    assert structural_current_turn(forms(assembled), forms([user("  "), user(f"{ts} ok")])) == 1
    assert structural_current_turn(forms(assembled), forms([user(f"{ts} ok"), user(" ")])) is None


# --- §9.3 ----------------------------------------------------------------------------------------


def test_protected_indexes_prefer_the_newest_duplicate() -> None:
    same = user("again")
    assembled = [same, assistant("x"), dict(same), assistant("y")]
    assert protected_indexes(assembled, [h16([same])]) == {2}
    assert protected_indexes(assembled, [h16([same]), h16([same])]) == {0, 2}
    assert protected_indexes(assembled, ["0000000000000000"]) == set()


# --- §9.7 pairing structure -------------------------------------------------------------------------


def test_pair_index_groups_expand_and_propagate() -> None:
    messages = [user("u"), assistant("a", "c1", "c2"), result("c1", "r1"), result("c2", "r2"), assistant("b", "c3")]
    pairs = PairIndex.build(messages)
    assert pairs.groups() == [(0,), (1, 2, 3), (1, 2, 3), (1, 2, 3), (4,)]
    assert pairs.expand([2]) == {2: None, 1: 2, 3: 1}
    assert pairs.propagate({3: 7, 0: 1}) == {3: 7, 0: 1, 1: 7, 2: 7}
    assert pairs.propagate({3: 7, 2: 4}) == {3: 4, 2: 4, 1: 4}


def test_tool_pairs_are_clean() -> None:
    clean = [user("u"), assistant("a", "c1", "c2"), result("c2", "r2"), result("c1", "r1"), assistant("b")]
    assert tool_pairs_are_clean(clean, PairIndex.build(clean).groups())
    moved = [user("u"), assistant("a", "c1"), user("between"), result("c1", "r1")]
    assert not tool_pairs_are_clean(moved, PairIndex.build(moved).groups())
    orphan = [result("c9", "r"), user("u")]
    assert not tool_pairs_are_clean(orphan, PairIndex.build(orphan).groups())
    terminal = [{**assistant("a"), "stopReason": "error"}, user("u")]
    assert not tool_pairs_are_clean(terminal, PairIndex.build(terminal).groups())


# --- §9.6 -----------------------------------------------------------------------------------------


def test_kuhn_matching_reassigns_along_an_augmenting_path() -> None:
    # two identical summary-wrapper-looking volatile inputs and two identical assembled copies:
    # every candidate can use both slots; Kuhn's augmenting path moves the first candidate to the
    # second slot when the second candidate asks for the first one.
    text = f"{RETRY}\n<summary x</summary>"
    assembled = [user(text), user(text)]
    live = [user(text), user(text)]
    covered = _match_candidates(
        [0, 1],
        forms(live),
        forms(assembled),
        lambda i: stored_content(live[i]),
        lambda i: stored_content(assembled[i]),
        len(assembled),
    )
    assert covered == {0: 1, 1: 0}


def test_occurrences_are_counted() -> None:
    volatile = user(inter_session("same body"))
    outcome = run([user("q"), dict(volatile), assistant("a")], [volatile, dict(volatile)], budget=10_000)
    assert outcome.covered == {0: 1}
    assert outcome.appended == [1]
    assert [m["content"] for m in outcome.messages].count(volatile["content"]) == 2


def test_summary_never_covers_a_volatile_input_by_text() -> None:
    # §11.6 #43
    body = "[Internal task completion event]\nChild result: subagent finished processing data."
    summary = user(f'<summary id="s" kind="leaf">\n  <content>\n{body}\n  </content>\n</summary>')
    live = user(inter_session("Child result: subagent finished processing data."))
    outcome = run([summary, user("q"), assistant("a")], [live], budget=10_000)
    assert outcome.covered == {}
    assert outcome.appended == [0]
    assert sum(1 for m in outcome.messages if BEGIN in str(m["content"])) == 1
    assert outcome.messages[0] is summary


def test_no_uncovered_input_returns_the_assembled_list_and_estimate() -> None:
    assembled = [user("q"), assistant("a")]
    outcome = run(assembled, [user("q")], budget=1, estimate=123)
    assert outcome.messages == assembled
    assert (outcome.estimated_tokens, outcome.appended_messages, outcome.over_budget) == (123, 0, True)


# --- §9.7 merge --------------------------------------------------------------------------------------


def test_anchor_from_tool_result_with_unknown_name_orders_the_merge() -> None:
    # §11.6 #44: the live tool result has no toolName, the assembled one says "unknown"
    assembled = [user("q"), assistant("checking", "c1"), result("c1", "out", name="unknown"), assistant("done")]
    live_result = {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "out"}]}
    volatile = user(inter_session("child finished"))
    outcome = run(assembled, [volatile, live_result, {"role": "assistant", "content": "done"}], budget=10_000)
    assert outcome.exact_anchor == {2: 1, 3: 2}
    contents = [m["role"] for m in outcome.messages]
    assert contents == ["user", "user", "assistant", "toolResult", "assistant"]
    assert outcome.messages[1] is volatile
    assert outcome.sources == [("a", 0), ("l", 0), ("a", 1), ("a", 2), ("a", 3)]


def test_input_after_every_anchor_goes_to_the_end() -> None:
    assembled = [user("q"), assistant("a")]
    volatile = user(RETRY)
    outcome = run(assembled, [user("q"), volatile], budget=10_000)
    assert outcome.messages == [*assembled, volatile]


def test_stale_volatile_input_before_the_current_turn() -> None:
    # §11.6 #51
    assembled = [user("old"), assistant("x"), user("current"), assistant("calling", "c1"), result("c1", "r")]
    stale = user(inter_session("stale"))
    live = [stale, user("current"), assistant("calling", "c1"), result("c1", "r")]
    live[2] = {"role": "assistant", "content": assembled[3]["content"]}
    outcome = run(assembled, live, budget=10_000)
    roles = [(m["role"], m.get("toolCallId")) for m in outcome.messages]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("user", None),
        ("user", None),
        ("assistant", None),
        ("toolResult", "c1"),
    ]
    assert outcome.messages[2] is stale
    assert [m for m in outcome.messages if m["role"] == "user"][-1]["content"] == "current"


# --- §9.7 eviction -------------------------------------------------------------------------------------


def test_eviction_takes_the_largest_total_that_fits_and_ties_go_first() -> None:
    small = user("s" * 40)  # serialized 16
    big = user("b" * 200)  # serialized 56
    small2 = user("t" * 40)
    tail = [user("q"), assistant("a")]
    volatile = user(RETRY)
    assembled = [small, big, small2, *tail]
    sizes = [serialized_message_tokens(m) for m in (*assembled, volatile)]
    total = sum(sizes)
    # a budget that removing either small item satisfies, removing big too: the larger remainder wins
    budget = total - sizes[0]
    outcome = run(assembled, [volatile], budget, protected={3, 4})
    assert [e.indexes for e in outcome.evictions] == [(0,)]  # tie between 0 and 2: the earliest
    assert outcome.estimated_tokens == budget
    # nothing single fits: the largest reduction is taken first, then the loop continues; after the big
    # row, neither small row alone fits and both leave the same total, so the earlier goes first
    budget = total - sizes[1] - sizes[0] - 1
    outcome = run(assembled, [volatile], budget, protected={3, 4})
    assert [e.indexes for e in outcome.evictions] == [(1,), (0,), (2,)]
    assert not outcome.over_budget


def test_protected_and_exact_anchor_groups_are_never_evicted() -> None:
    assembled = [user("q" * 100), assistant("a", "c1"), result("c1", "x" * 300), user("now")]
    volatile = user(RETRY)
    outcome = run(assembled, [volatile], budget=1, protected={2})
    # index 2 is protected, its call (1) comes with it; only 0 and 3 may go
    assert sorted(i for e in outcome.evictions for i in e.indexes) == [0, 3]
    assert outcome.over_budget
    anchored = run(assembled, [user("now"), volatile], budget=1, protected={2})
    assert sorted(i for e in anchored.evictions for i in e.indexes) == [0]
    assert 3 in anchored.exact_protected


def test_tool_pair_group_is_evicted_together() -> None:
    # §11.6 #46: historical user, call, large result, then fresh users; a volatile input that does not fit
    assembled = [user("old"), assistant("reading", "c1"), result("c1", "x" * 2000)]
    assembled += [user(f"fresh {i}") for i in range(8)]
    volatile = user(inter_session("new"))
    before = sum(serialized_message_tokens(m) for m in assembled)
    budget = before + 30 - 50
    outcome = run(assembled, [volatile], budget, protected=set(range(3, 11)))
    removed = sorted(i for e in outcome.evictions for i in e.indexes)
    assert removed == [1, 2]
    assert volatile in outcome.messages
    assert not any("missing tool result" in str(m["content"]) for m in outcome.messages)


def test_evicting_a_covering_message_restores_its_input() -> None:
    volatile = user(inter_session("covered body"))
    # two stored copies: coverage takes the first slot (index 0), the exact anchor the newest copy (2)
    assembled = [dict(volatile), user("x" * 400), dict(volatile), user("q"), assistant("a")]
    other = user(RETRY)
    live = [volatile, other]
    roomy = run(assembled, live, budget=10_000, protected={3, 4})
    assert roomy.covered == {0: 0}
    assert roomy.exact_anchor == {2: 0}
    assert roomy.appended == [1]
    tight = run(assembled, live, budget=1, protected={3, 4})
    # the big row goes first; evicting the covering copy then re-appends its input (same size)
    assert [(e.indexes, e.restored) for e in tight.evictions] == [((1,), ()), ((0,), (0,))]
    assert tight.covered == {}
    assert tight.appended == [0, 1]
    assert tight.messages.count(volatile) == 2  # the exact copy at 2 plus the restored input


def test_evicted_tokens_use_the_stored_form_count() -> None:
    assembled = [user("a" * 40), user("q"), assistant("b")]
    outcome = run(assembled, [user(RETRY)], budget=40, protected={1, 2})
    assert outcome.evicted_tokens == 10  # estimate of the 40-character stored content
    assert outcome.evicted_messages == 1


@settings(max_examples=400, deadline=None)
@given(
    own=st.lists(st.sampled_from("abcdefghij"), max_size=300),
    wanted=st.lists(st.sampled_from("abcdefghijkl"), max_size=12, unique=True),
)
def test_distinct_wanted_hashes_take_the_newest_index_of_each_near_the_end_or_not(
    own: list[str], wanted: list[str]
) -> None:
    """Hashes found among the last messages or only far before them (a long list of repeats), or not at all
    ("k", "l"): each takes its newest index, as a map of every hash gives it."""
    newest = {value: index for index, value in enumerate(own)}
    assert protected_by_hash(own, wanted) == {newest[value] for value in wanted if value in newest}
    long = [*own, *(["z"] * 500)]  # (every wanted hash now lies before the last few)
    assert protected_by_hash(long, wanted) == {newest[value] for value in wanted if value in newest}
