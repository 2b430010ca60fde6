"""Fresh-tail boundary (spec §5, §11.2 #18–#22)."""

from __future__ import annotations

import math

from ctxview.assembly.fresh_tail import resolve_fresh_tail, resolve_fresh_tail_ordinal
from ctxview.assembly.resolve import ResolvedItem
from ctxview.model import SummaryRow


def raw(ordinal: int, role: str, tokens: int) -> ResolvedItem:
    return ResolvedItem(
        ordinal=ordinal,
        stored_message={"role": "assistant" if role == "tool" else role, "content": "x"},
        tokens=tokens,
        is_message=True,
        text="x",
        source_role=role,
    )


def summary(ordinal: int, tokens: int) -> ResolvedItem:
    return ResolvedItem(
        ordinal=ordinal,
        stored_message={"role": "user", "content": "<summary/>"},
        tokens=tokens,
        is_message=False,
        text="s",
        summary=SummaryRow("s", "leaf", 0, "s"),
    )


def alternating(n: int, tokens: int = 100) -> list[ResolvedItem]:
    return [raw(i, "user" if i % 2 == 0 else "assistant", tokens) for i in range(n)]


def test_count_limits_after_the_latest_user() -> None:
    tail = resolve_fresh_tail(alternating(10), 4, None)
    assert tail.start == 6
    assert tail.stop == "count"
    assert tail.why == {9: "newest", 8: "count", 7: "count", 6: "count"}
    assert tail.protected_tokens == 400


def test_tail_always_reaches_the_latest_user() -> None:
    items = [raw(0, "user", 5), raw(1, "assistant", 5), raw(2, "tool", 5), raw(3, "assistant", 5)]
    tail = resolve_fresh_tail(items, 1, None)
    assert tail.start == 0
    assert tail.latest_user_ordinal == 0
    assert tail.why == {3: "newest", 2: "latest-user", 1: "latest-user", 0: "latest-user"}


def test_token_cap() -> None:
    # §11.2 #20: four ~100-token messages, count 4, cap 110 → the tail is [M2, M3]
    assert resolve_fresh_tail(alternating(4), 4, 110).start == 2
    # the cap never drops the newest message, even when it alone exceeds the cap
    assert resolve_fresh_tail([raw(0, "user", 500)], 4, 10).start == 0
    # §11.2 #22: the cap does not apply until the latest user message is inside
    items = [raw(0, "user", 50), raw(1, "assistant", 200)]
    assert resolve_fresh_tail(items, 2, 50).start == 0
    # a fractional cap is floored; a negative or non-finite cap means no cap
    assert resolve_fresh_tail(alternating(4, 10), 4, 29.9).start == 2
    assert resolve_fresh_tail(alternating(4, 10), 4, -1).start == 0
    assert resolve_fresh_tail(alternating(4, 10), 4, math.inf).start == 0


def test_no_tail() -> None:
    assert resolve_fresh_tail(alternating(3), 0, None).start is None
    assert resolve_fresh_tail(alternating(3), -2, None).start is None
    assert resolve_fresh_tail(alternating(3), math.nan, None).start is None
    assert resolve_fresh_tail([summary(0, 5)], 8, None).start is None
    assert resolve_fresh_tail_ordinal(alternating(3), 0, None) == math.inf


def test_fractional_count_behaves_like_its_ceiling() -> None:
    assert resolve_fresh_tail(alternating(10), 2.5, None).start == 7
    assert resolve_fresh_tail(alternating(10), 3, None).start == 7


def test_summaries_do_not_count_but_sit_inside_the_threshold() -> None:
    items = [raw(0, "user", 1), summary(1, 50), raw(2, "assistant", 1), raw(3, "user", 1)]
    tail = resolve_fresh_tail(items, 2, None)
    assert tail.start == 2
    tail3 = resolve_fresh_tail(items, 3, None)
    assert tail3.start == 0
    assert tail3.is_fresh(1) and not tail.is_fresh(1)


def test_no_user_message_at_all() -> None:
    items = [raw(0, "assistant", 1), raw(1, "assistant", 1), raw(2, "assistant", 1)]
    tail = resolve_fresh_tail(items, 2, None)
    assert tail.start == 1 and tail.latest_user_ordinal is None
