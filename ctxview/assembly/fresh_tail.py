"""Fresh-tail boundary (spec §5): the newest raw messages that are never evicted.

The tail is an ordinal threshold.  It always reaches back to the latest
DB-``user`` message; after that it stops at ``freshTailCount`` raw messages
or at the optional token cap, whichever comes first.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ctxview.assembly.resolve import ResolvedItem


@dataclass(slots=True)
class FreshTail:
    start: int | None  # first protected ordinal; None = no tail (JS Infinity)
    count: float
    cap: int | None
    latest_user_ordinal: int | None
    protected_tokens: int = 0
    # why each raw message in the walk was protected: "newest" | "count" | "latest-user"
    why: dict[int, str] = field(default_factory=dict)
    stop: str = ""  # what ended the walk: count | cap | exhausted | disabled | no-raw

    def is_fresh(self, ordinal: int) -> bool:
        return self.start is not None and ordinal >= self.start


def normalize_cap(cap: float | None) -> int | None:
    """``floor(cap)`` for a finite number ≥ 0, else no cap."""
    if cap is None or isinstance(cap, bool) or not isinstance(cap, (int, float)):
        return None
    if not math.isfinite(cap) or cap < 0:
        return None
    return math.floor(cap)


def resolve_fresh_tail(items: Sequence[ResolvedItem], count: float, cap: float | None) -> FreshTail:
    """§5 ``resolveFreshTailOrdinal`` with the reason for every protected raw message."""
    cap_tokens = normalize_cap(cap)
    if isinstance(count, bool) or not isinstance(count, (int, float)) or not math.isfinite(count) or count <= 0:
        return FreshTail(None, count, cap_tokens, None, stop="disabled")
    # the walks go newest first and usually stop near the end: never list every raw message
    if not any(item.is_message for item in reversed(items)):
        return FreshTail(None, count, cap_tokens, None, stop="no-raw")
    latest_user: int | None = None
    for item in _raw_newest_first(items):
        if item.source_role == "user":
            latest_user = item.ordinal
            break
    tail = FreshTail(None, count, cap_tokens, latest_user, stop="exhausted")
    start = math.inf
    n = 0
    total = 0
    for item in _raw_newest_first(items):
        user_covered = latest_user is None or start <= latest_user
        if user_covered and n >= count:
            tail.stop = "count"
            break
        if user_covered and n > 0 and cap_tokens is not None and total + item.tokens > cap_tokens:
            tail.stop = "cap"
            break
        if n == 0:
            why = "newest"
        elif not user_covered and (n >= count or (cap_tokens is not None and total + item.tokens > cap_tokens)):
            why = "latest-user"
        else:
            why = "count"
        tail.why[item.ordinal] = why
        start = item.ordinal
        n += 1
        total += item.tokens
    tail.start = int(start) if start != math.inf else None
    tail.protected_tokens = total
    return tail


def _raw_newest_first(items: Sequence[ResolvedItem]) -> Iterator[ResolvedItem]:
    return (item for item in reversed(items) if item.is_message)


def resolve_fresh_tail_ordinal(items: Sequence[ResolvedItem], count: float, cap: float | None) -> float:
    """The bare §5 value: the first fresh ordinal, or ``math.inf`` for no tail."""
    tail = resolve_fresh_tail(items, count, cap)
    return math.inf if tail.start is None else tail.start
