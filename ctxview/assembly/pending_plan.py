"""The 1.0 engine's pending-summary plan: which hidden summaries its emergency drain would write first.

On the 1.0 line the emergency drain first asks a planner for "pending"
summaries: leaf nodes over raw runs of at least ``leafChunkTokens`` outside the
fresh tail (plus the smaller runs before the last such leaf), and condensed
nodes over four or more adjacent same-depth nodes.  It then prepares every
node (one summarizer call each) and publishes the deepest nodes that cover a
contiguous prefix of the compactable context.  Only when nothing is planned
does the engine fall back to the 0.15-style compaction sweep; when the plan
would publish nothing new, the debt is simply cleared.  The plan is a pure
function of the context, computed here; ``ctxview.assembly.drain`` prepares
and publishes it.
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
    message_id: int | None = None
    depth: int = 0  # summaries
    summary_id: str | None = None


@dataclass(frozen=True, slots=True)
class PlanNode:
    """A planned summary (or, with ``summary_id``, an existing one the plan builds on)."""

    kind: Literal["leaf", "condensed"]
    depth: int
    start: int  # the context ordinals it covers
    end: int
    tokens: int  # its sources' stored tokens (existing summaries: their own)
    summary_id: str | None = None  # an existing summary: nothing to prepare or publish
    message_ids: tuple[int, ...] = ()  # a leaf's source messages
    children: tuple[PlanNode, ...] = ()  # a condensed node's sources, in order

    @property
    def existing(self) -> bool:
        return self.summary_id is not None


@dataclass(frozen=True, slots=True)
class PendingPlan:
    outcome: PlanOutcome
    nodes: tuple[PlanNode, ...] = ()  # every planned node: each costs one preparation step
    frontier: tuple[PlanNode, ...] = ()  # what publication puts in the context, covering [start, end]
    start: int = 0
    end: int = 0  # the last ordinal the publication covers
    compactable_end: int = 0  # the last ordinal outside the fresh tail (beyond ``end``: work remains)


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


def _leaf(run: Sequence[SnapshotItem]) -> PlanNode:
    ids = tuple(i.message_id for i in run if i.message_id is not None)
    return PlanNode("leaf", 0, run[0].ordinal, run[-1].ordinal, sum(i.tokens for i in run), message_ids=ids)


def _leaf_nodes(compactable: Sequence[SnapshotItem], chunk_tokens: int) -> list[PlanNode]:
    nodes: list[PlanNode] = []
    run: list[SnapshotItem] = []
    for item in [*compactable, None]:
        if item is not None and item.item_type == "message":
            run.append(item)
            if sum(i.tokens for i in run) < chunk_tokens:
                continue
        if run and sum(i.tokens for i in run) >= chunk_tokens:
            nodes.append(_leaf(run))
        run = []
    if not nodes:
        return nodes
    # the smaller raw runs before the last eligible leaf become leaves too, so no work is left stranded
    last = max(n.end for n in nodes)
    bridges: list[PlanNode] = []
    bridge: list[SnapshotItem] = []
    for item in compactable:
        if item.ordinal > last:
            break
        if item.item_type != "message" or any(n.start <= item.ordinal <= n.end for n in nodes):
            if bridge:
                bridges.append(_leaf(bridge))
                bridge = []
            continue
        bridge.append(item)
    if bridge:
        bridges.append(_leaf(bridge))
    return sorted(nodes + bridges, key=lambda n: (n.start, n.end))


def _layer_at_depth(nodes: Sequence[PlanNode], depth: int, chunk_tokens: int) -> list[PlanNode]:
    parents: list[PlanNode] = []
    group: list[PlanNode] = []

    def close() -> None:
        tokens = sum(n.tokens for n in group)
        if len(group) >= CONDENSED_MIN_FANOUT and tokens >= CONDENSED_MIN_SOURCE_TOKENS:
            parents.append(
                PlanNode("condensed", depth + 1, group[0].start, group[-1].end, tokens, children=tuple(group))
            )
        group.clear()

    for node in (n for n in nodes if n.depth == depth):
        expected = node.start if not group else group[-1].end + 1
        if node.start != expected or (group and sum(n.tokens for n in group) + node.tokens > chunk_tokens):
            close()
        group.append(node)
        if sum(n.tokens for n in group) >= chunk_tokens:
            close()
    close()
    return parents


def _condensed_nodes(nodes: Sequence[PlanNode], chunk_tokens: int) -> list[PlanNode]:
    planned: list[PlanNode] = []
    candidates = sorted(nodes, key=lambda n: (n.depth, n.start, n.end))
    for _ in range(MAX_LAYERS):
        depths = sorted({n.depth for n in candidates})
        layer = [p for depth in depths for p in _layer_at_depth(candidates, depth, chunk_tokens)]
        taken = {(c.depth, c.start, c.end) for c in candidates}
        layer = [n for n in layer if (n.depth, n.start, n.end) not in taken]
        if not layer:
            break
        planned.extend(layer)
        candidates = sorted([*candidates, *layer], key=lambda n: (n.depth, n.start, n.end))
    return planned


def _frontier(nodes: Sequence[PlanNode], start: int, end: int) -> list[PlanNode]:
    """The deepest, longest nodes covering a contiguous prefix of [start, end] (existing summaries win ties)."""
    frontier: list[PlanNode] = []
    cursor = start
    while cursor <= end:
        options = [n for n in nodes if n.start == cursor and n.start <= n.end <= end]
        if not options:
            break
        best = max(options, key=lambda n: (n.depth, n.end, n.existing))
        frontier.append(best)
        cursor = best.end + 1
    return frontier


def plan_pending_summaries(
    items: Sequence[SnapshotItem], *, fresh_tail_count: Any, fresh_tail_max_tokens: Any, leaf_chunk_tokens: int
) -> PendingPlan:
    """The planner's answer for a context: nothing outside the tail, no nodes, nothing new to publish, or a plan."""
    tail = fresh_tail_start(items, fresh_tail_count, fresh_tail_max_tokens)
    compactable = [i for i in items if i.ordinal < tail]
    if not compactable:
        return PendingPlan("nothing-compactable")
    chunk_tokens = max(1, math.floor(leaf_chunk_tokens))
    existing = [
        PlanNode("leaf", i.depth, i.ordinal, i.ordinal, i.tokens, summary_id=i.summary_id)
        for i in compactable
        if i.item_type == "summary"
    ]
    leaves = _leaf_nodes(compactable, chunk_tokens)
    planned = leaves + _condensed_nodes([*existing, *leaves], chunk_tokens)
    start, compactable_end = compactable[0].ordinal, compactable[-1].ordinal
    if not planned:
        return PendingPlan("nothing-planned", start=start, compactable_end=compactable_end)
    frontier = _frontier([*existing, *planned], start, compactable_end)
    if not frontier or all(n.existing for n in frontier):
        return PendingPlan("nothing-to-publish", tuple(planned), start=start, compactable_end=compactable_end)
    return PendingPlan(
        "planned", tuple(planned), tuple(frontier), start, frontier[-1].end, compactable_end=compactable_end
    )
