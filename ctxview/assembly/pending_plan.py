"""The 1.0 engine's pending-summary planner, far enough to know whether it has work.

On the 1.0 line the emergency drain first asks a planner for hidden "pending"
summaries: leaf nodes over raw runs of at least ``leafChunkTokens`` outside the
fresh tail, and condensed nodes over four or more adjacent same-depth nodes.
Only when it plans nothing does the engine fall back to the 0.15-style
compaction sweep; when its plan would publish nothing new, the debt is simply
cleared.  Whether it plans anything is a pure function of the context, which
is what this module computes (preparing and publishing the nodes is not
reproduced).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

CONDENSED_MIN_FANOUT = 4  # config default condensedMinFanout (the planner never goes below 2)
CONDENSED_MIN_SOURCE_TOKENS = 2_000  # max(condensedTargetTokens 2000, config leafChunkTokens 20000 × 0.1)
MAX_LAYERS = 32

PlanOutcome = Literal["nothing-compactable", "nothing-planned", "nothing-to-publish", "planned"]


@dataclass(frozen=True, slots=True)
class SnapshotItem:
    """A context item whose row exists, as the planner reads it."""

    ordinal: int
    item_type: Literal["message", "summary"]
    tokens: int  # the stored token_count, floored (0 when not a finite number ≥ 0)
    role: str | None = None  # messages
    depth: int = 0  # summaries


@dataclass(frozen=True, slots=True)
class _Node:
    depth: int
    start: int
    end: int
    tokens: int
    canonical: bool  # an existing summary (not new work)


def non_negative_floor(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return 0
    return math.floor(value)


def fresh_tail_start(items: Sequence[SnapshotItem], fresh_tail_count: Any, fresh_tail_max_tokens: Any) -> float:
    """The planner's fresh tail: like the compaction's, on stored token counts (a negative cap reads as 0)."""
    count = non_negative_floor(fresh_tail_count)
    if count <= 0:
        return math.inf
    cap: int | None = None
    if isinstance(fresh_tail_max_tokens, (int, float)) and not isinstance(fresh_tail_max_tokens, bool):
        if math.isfinite(fresh_tail_max_tokens):
            cap = max(0, math.floor(fresh_tail_max_tokens))
    messages = [i for i in items if i.item_type == "message"]
    latest_user = next((i.ordinal for i in reversed(messages) if i.role == "user"), None)
    protected = protected_tokens = 0
    tail: float = math.inf
    for item in reversed(messages):
        user_protected = latest_user is None or tail <= latest_user
        if user_protected and protected >= count:
            break
        if user_protected and protected > 0 and cap is not None and protected_tokens + item.tokens > cap:
            break
        protected += 1
        protected_tokens += item.tokens
        tail = item.ordinal
    return tail


def _leaf_nodes(compactable: Sequence[SnapshotItem], chunk_tokens: int) -> list[_Node]:
    nodes: list[_Node] = []
    run: list[SnapshotItem] = []

    def flush() -> None:
        total = sum(i.tokens for i in run)
        if run and total >= chunk_tokens:
            nodes.append(_Node(0, run[0].ordinal, run[-1].ordinal, total, False))
        run.clear()

    for item in compactable:
        if item.item_type != "message":
            flush()
            continue
        run.append(item)
        if sum(i.tokens for i in run) >= chunk_tokens:
            flush()
    flush()
    if not nodes:
        return nodes
    # undersized raw runs before the last eligible leaf become leaves too, so no work is left stranded
    last = max(n.end for n in nodes)
    bridges: list[_Node] = []
    bridge: list[SnapshotItem] = []
    for item in compactable:
        if item.ordinal > last:
            break
        if item.item_type != "message" or any(n.start <= item.ordinal <= n.end for n in nodes):
            if bridge:
                bridges.append(_Node(0, bridge[0].ordinal, bridge[-1].ordinal, sum(i.tokens for i in bridge), False))
                bridge = []
            continue
        bridge.append(item)
    if bridge:
        bridges.append(_Node(0, bridge[0].ordinal, bridge[-1].ordinal, sum(i.tokens for i in bridge), False))
    return nodes + bridges


def _layer_at_depth(nodes: Sequence[_Node], depth: int, chunk_tokens: int) -> list[_Node]:
    parents: list[_Node] = []
    group: list[_Node] = []
    tokens = 0
    for node in (n for n in nodes if n.depth == depth):
        expected = node.start if not group else group[-1].end + 1
        if node.start != expected or (group and tokens + node.tokens > chunk_tokens):
            if len(group) >= CONDENSED_MIN_FANOUT and tokens >= CONDENSED_MIN_SOURCE_TOKENS:
                parents.append(_Node(depth + 1, group[0].start, group[-1].end, tokens, False))
            group, tokens = [], 0
        group.append(node)
        tokens += node.tokens
        if tokens >= chunk_tokens:
            if len(group) >= CONDENSED_MIN_FANOUT and tokens >= CONDENSED_MIN_SOURCE_TOKENS:
                parents.append(_Node(depth + 1, group[0].start, group[-1].end, tokens, False))
            group, tokens = [], 0
    if len(group) >= CONDENSED_MIN_FANOUT and tokens >= CONDENSED_MIN_SOURCE_TOKENS:
        parents.append(_Node(depth + 1, group[0].start, group[-1].end, tokens, False))
    return parents


def _condensed_nodes(nodes: Sequence[_Node], chunk_tokens: int) -> list[_Node]:
    planned: list[_Node] = []
    candidates = sorted(nodes, key=lambda n: (n.depth, n.start, n.end))
    for _ in range(MAX_LAYERS):
        layer = [
            p
            for depth in sorted({n.depth for n in candidates})
            for p in _layer_at_depth(candidates, depth, chunk_tokens)
        ]
        layer = [
            n for n in layer if not any((c.depth, c.start, c.end) == (n.depth, n.start, n.end) for c in candidates)
        ]
        if not layer:
            break
        planned.extend(layer)
        candidates = sorted([*candidates, *layer], key=lambda n: (n.depth, n.start, n.end))
    return planned


def _frontier(nodes: Sequence[_Node], start: int, end: int) -> list[_Node]:
    """The deepest, longest nodes covering a contiguous prefix of [start, end] (existing summaries win ties)."""
    frontier: list[_Node] = []
    cursor = start
    while cursor <= end:
        options = [n for n in nodes if n.start == cursor and n.start <= n.end <= end]
        if not options:
            break
        best = max(options, key=lambda n: (n.depth, n.end, n.canonical))
        frontier.append(best)
        cursor = best.end + 1
    return frontier


def plan_pending_summaries(
    items: Sequence[SnapshotItem], *, fresh_tail_count: Any, fresh_tail_max_tokens: Any, leaf_chunk_tokens: int
) -> PlanOutcome:
    """Whether the planner finds work: nothing outside the tail, no nodes, nothing new to publish, or a plan."""
    tail = fresh_tail_start(items, fresh_tail_count, fresh_tail_max_tokens)
    compactable = [i for i in items if i.ordinal < tail]
    if not compactable:
        return "nothing-compactable"
    chunk_tokens = max(1, math.floor(leaf_chunk_tokens))
    canonical = [_Node(i.depth, i.ordinal, i.ordinal, i.tokens, True) for i in compactable if i.item_type == "summary"]
    leaves = _leaf_nodes(compactable, chunk_tokens)
    pending = leaves + _condensed_nodes([*canonical, *leaves], chunk_tokens)
    if not pending:
        return "nothing-planned"
    frontier = _frontier([*canonical, *pending], compactable[0].ordinal, compactable[-1].ordinal)
    if not frontier or all(n.canonical for n in frontier):
        return "nothing-to-publish"
    return "planned"
