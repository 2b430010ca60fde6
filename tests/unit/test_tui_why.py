"""The table's terse "why" (``ctxview.tui.why``) on the demo, and the filter's query language."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxview.errors import InputError
from ctxview.model import column
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_CONVERSATION_ID, DEMO_PARAMS, demo_live_messages, ensure_demo_db
from ctxview.store import LcmStore
from ctxview.tui.finder import ItemFacts, matching, parse_query
from ctxview.tui.why import terse_reason

DEMO = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


@pytest.fixture(scope="module")
def assembler() -> SessionAssembler:
    with LcmStore(ensure_demo_db()) as store:
        return SessionAssembler(store.load_session(DEMO_CONVERSATION_ID))


def test_the_demo_first_screen_in_short(assembler: SessionAssembler) -> None:
    by_key = assembler.run(DEMO).by_key()
    expected = {
        "o:0": "194 tok > 3 left · rank 17/34",
        "o:1": "156 tok ≤ 858 left · rank 2/34",
        "o:7": "orphan: its tool call is not before it",
        "o:19": "for L4 +1 · then 1,977/2,000 tok",
        "o:29": "only 1 tool call, none with a kept result",
        "o:34": "last 8 raw messages",
        "o:41": "the newest raw message",
        "l:0": "already in the context as item 38",
        "l:1": "stored already as item 39",
        "l:4": "inter-session message · after item 41",
        "l:5": "retry prompt · after L4",
    }
    assert {key: terse_reason(by_key[key]) for key in expected} == expected


CASES = {
    "chronological": replace(DEMO, prompt_aware_eviction=False),
    "engine off": replace(DEMO, engine=False),
    "1.0 rules": replace(DEMO, engine_line="1.0"),
    "clamped": replace(DEMO, token_budget=800),
    "full fit": replace(DEMO, token_budget=100_000),
    "rarity": replace(DEMO, scorer="rarity"),
    "roi": replace(DEMO, scorer="roi"),
    "large payload stubs": replace(DEMO, stub_large_tool_payloads=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_reason_of_the_demo_has_a_short_form(assembler: SessionAssembler, name: str) -> None:
    """Each sentence form the engine writes is known: none comes back whole, none repeats the outcome word,
    and each fits the reason column at 160 columns (about 42 cells) but for a few long facts."""
    trace = assembler.run(CASES[name])
    for d in trace.decisions:
        short = terse_reason(d)
        assert short != d.reason, (d.key, d.reason)
        assert not short.startswith(("kept", "evicted", "dropped", "fresh tail", "stubbed")), (d.key, short)
        assert len(short) <= 64, (d.key, short)


def test_a_scorer_note_and_a_stub_keep_the_numbers_only(assembler: SessionAssembler) -> None:
    trace = assembler.run(CASES["roi"])
    stubbed = [d for d in trace.decisions if d.reason.startswith("stubbed:")]
    assert stubbed
    for d in stubbed:
        short = terse_reason(d)
        assert "section-roi" not in short and "WASTE" not in short
        assert short.endswith(f" · stub of {d.reason.split()[1]}")


def test_query_terms() -> None:
    query = parse_query("helm  outcome:evicted kind:toolResult role:user tokens>500 tokens<=2,000 changed")
    assert query.words == ("helm",)
    assert query.fields == (("outcome", "evicted"), ("kind", "toolresult"), ("role", "user"))
    assert query.tokens == ((">", 500), ("<=", 2000))
    assert query.changed and query.needs_text
    assert not parse_query("outcome:evicted tokens>5").needs_text
    with pytest.raises(InputError, match="tokens>500"):
        parse_query("tokens>lots")
    with pytest.raises(InputError, match="outcome:evicted"):
        parse_query("outcome:")


def test_filter_matches_what_each_term_says(assembler: SessionAssembler) -> None:
    trace = assembler.run(DEMO)
    facts = ItemFacts.of(trace)
    decisions = list(trace.decisions)

    def expect(predicate) -> list[int]:
        return [i for i, d in enumerate(decisions) if predicate(d)]

    found = matching(trace, parse_query("HELM outcome:evicted kind:toolresult"), facts, set())
    assert found == expect(lambda d: "helm" in d.text.lower() and d.outcome.startswith("evicted")
                           and d.label == "toolResult")
    assert found  # the demo has some
    assert matching(trace, parse_query("outcome:evicted"), None, set()) == expect(
        lambda d: d.outcome in ("evicted", "evicted-for-live"))
    assert matching(trace, parse_query("role:user tokens>100"), facts, set()) == expect(
        lambda d: d.role == "user" and d.tokens > 100)
    assert matching(trace, parse_query("kind:condensed"), facts, set()) == expect(
        lambda d: d.label.startswith("condensed"))
    assert matching(trace, parse_query("changed"), facts, {"o:3", "l:1"}) == [3, len(column(decisions, "key")) - 5]
