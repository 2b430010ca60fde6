"""What a resolved list gives whatever the parameters, built once and kept in the list's cache.

The focus overlay, tool partners and the order of the decisions (§10.1, §7) do
not change while the user edits the prompt or the budget; nor do the counts and
prefix sums of the overlay items, or the per-position facts the lazy decisions
read.  Each is built on the first run of a resolved list and stored in its
``cache`` (keyed by the objects it was built from, so a new resolution or a new
focus brief builds afresh); a resolved list without a cache builds every time.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from typing import Any, overload

from ctxview.assembly.focus import FocusOverlay, apply_focus_overlay
from ctxview.assembly.incremental.chunked_repair import ChunkPlan
from ctxview.assembly.incremental.partners import ToolPartners
from ctxview.assembly.resolve import ResolvedItem, ResolvedItems
from ctxview.jsjson import js_string
from ctxview.model import ContextItemRow, Session

_ORDINAL = operator.attrgetter("ordinal")


class ItemsPlan(Sequence[tuple[str, Any]]):
    """The decision plan of the usual session, every row resolved in order: ``("item", item)`` for each
    item, served from the resolved list (100,000 pairs held for nothing are ~6 MB)."""

    __slots__ = ("items",)

    def __init__(self, items: list[ResolvedItem]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> tuple[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(zip(repeat("item"), self.items[index]))
        return ("item", self.items[index])

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return zip(repeat("item"), self.items)


@dataclass(slots=True)
class SessionStatic:
    """What a resolved list gives for a session, whatever the parameters (cached per list)."""

    overlay: FocusOverlay
    all_results: frozenset[str]  # the result ids some overlay item answers
    partners: ToolPartners  # the keys of an overlay item's tool-pair partners
    unresolved_rows: list[ContextItemRow]
    plan: Sequence[tuple[str, Any]]  # decision order: ("item"|"focus"|"covered", item) / ("unresolved", row)
    context_ordinals: list[int]
    chunks: ChunkPlan  # the overlay items' tool-id chunks, with their remembered §7.1–§7.4 outcomes
    # the last run's evictable list with its id → index and id(original) → stub lookups: the next run of the
    # same session mostly has the very same list (same items, same order), and can share them
    evictable_lookups: tuple[list[ResolvedItem], Mapping[int, int], dict[int, ResolvedItem]] | None = None
    # for those lookups and a plan index: each evictable item's plan position (None: not an item position there)
    evictable_positions: tuple[Any, Any, list[int | None]] | None = None


def static_of(session: Session, resolved: list[ResolvedItem], timezone: str) -> SessionStatic:
    """The static record of ``resolved`` (the §10.1 overlay needs the session's focus brief and time zone)."""
    cache = resolved.cache if isinstance(resolved, ResolvedItems) else None
    key = f"static:{id(session)}:{id(session.focus_brief)}:{timezone}"
    if cache is not None and key in cache:
        return cache[key]
    overlay = apply_focus_overlay(resolved, session.focus_brief, timezone)
    items = overlay.items
    chunks = ChunkPlan.build(items)
    covered = {item.ordinal for item in overlay.covered}
    focus = overlay.focus_item
    context_ordinals = [row.ordinal for row in session.items]
    rows = session.items
    if any(map(operator.gt, context_ordinals, context_ordinals[1:])):
        rows = sorted(rows, key=_ORDINAL)
    plan: Sequence[tuple[str, Any]]
    ordinals = [item.ordinal for item in resolved]
    if (
        focus is None
        and not covered
        and ordinals == (context_ordinals if rows is session.items else [row.ordinal for row in rows])
        and len(set(ordinals)) == len(ordinals)
    ):  # the usual session: every row resolved, in order, each its own ordinal
        plan = ItemsPlan(resolved)
    else:
        by_ordinal = {item.ordinal: item for item in resolved}
        plan = []
        listed: list[tuple[str, Any]] = []
        for row in rows:
            if focus is not None and row.ordinal == focus.ordinal:
                listed.append(("focus", focus))
            item = by_ordinal.get(row.ordinal)
            if item is None:
                listed.append(("unresolved", row))
            elif row.ordinal in covered:
                listed.append(("covered", item))
            else:
                listed.append(("item", item))
        plan = listed
    unresolved_rows: list[ContextItemRow] = (
        [] if isinstance(plan, ItemsPlan) else [obj for tag, obj in plan if tag == "unresolved"]
    )
    static = SessionStatic(
        overlay=overlay,
        # (only whether an id is answered anywhere is ever asked)
        all_results=frozenset(filter(None, [item.result_id for item in items])),
        partners=ToolPartners(items, chunks),
        unresolved_rows=unresolved_rows,
        plan=plan,
        context_ordinals=context_ordinals,
        chunks=chunks,
    )
    if cache is not None:
        cache[key] = static
    return static


def tool_ids_of(item: ResolvedItem) -> tuple[str, ...]:
    """The call ids an item issues, or the result id it answers (a decision's ``tool_call_ids``)."""
    return item.call_ids or ((item.result_id,) if item.result_id else ())


def item_label(item: ResolvedItem) -> str:
    """The items table's label: role, ``leaf`` or ``condensed dN``, ``focus``."""
    if item.is_focus_brief:
        return "focus"
    if item.summary is not None:
        kind = item.summary.kind
        return "leaf" if kind == "leaf" else f"{kind} d{js_string(item.summary.depth)}"
    return str(item.message_role)


def per_static(static: SessionStatic, resolved: list[ResolvedItem], name: str, build: Callable[[], Any]) -> Any:
    """``build()`` once per static record of a resolved list (kept in the list's cache beside its owner)."""
    cache = resolved.cache if isinstance(resolved, ResolvedItems) else None
    key = f"{name}:{id(static)}"
    hit = cache.get(key) if cache is not None else None
    if hit is not None and hit[0] is static:
        return hit[1]
    value = build()
    if cache is not None:
        cache[key] = (static, value)
    return value


def chunk_plan_of(static: SessionStatic, resolved: list[ResolvedItem]) -> ChunkPlan:
    """The tool-id chunks of the overlay items, with their remembered §7.1–§7.4 outcomes (one per list)."""
    return static.chunks


@dataclass(slots=True)
class Shape:
    """Counts and ordinals of the overlay items (parameter independent, cached per resolved list)."""

    stats: dict[str, int]
    focus_items: tuple[ResolvedItem, ...]
    ordinals: list[int]
    prefix_tokens: array[int]  # prefix_tokens[n] = tokens of the first n items


def shape_of(static: SessionStatic, resolved: list[ResolvedItem]) -> Shape:
    """The counts and prefix sums of the overlay items (one per static record)."""
    shape: Shape = per_static(static, resolved, "shape", lambda: _build_shape(static))
    return shape


def _build_shape(static: SessionStatic) -> Shape:
    items = static.overlay.items
    # (list comprehensions and C-speed passes: this runs on the first trace of a session, 100,000 items)
    raw_count = [item.is_message for item in items].count(True)
    focus_items = tuple(item for item in items if item.is_focus_brief)
    summary_count = len(items) - raw_count - [item.is_message for item in focus_items].count(False)
    ordinals = [item.ordinal for item in items]
    if any(map(operator.gt, ordinals, ordinals[1:])):
        ordinals = []  # not in ordinal order (a hand-made session): no prefix/suffix shortcut
    shape = Shape(
        stats={"rawMessageCount": raw_count, "summaryCount": summary_count, "totalContextItems": len(items)},
        focus_items=focus_items,
        ordinals=ordinals,
        prefix_tokens=array("q", accumulate([item.tokens for item in items], initial=0)),
    )
    return shape


@dataclass(slots=True)
class PlanIndex:
    """Per-position facts of the decision plan that no parameter changes (cached per resolved list)."""

    keys: list[str]
    ordinals: list[int]
    kinds: list[str]
    tokens: list[int]  # canonical item tokens (stub substitution overrides them per run)
    fixed: list[str | None]  # outcome of focus / covered / unresolved positions; None for items
    is_item: list[bool]
    position: dict[int, int]  # id(canonical item or focus item) → position
    index_of_key: dict[str, int]
    unresolved: list[tuple[int, int]]  # (position, ordinal) of unresolved rows
    evicted_or_fixed: list[str] = field(default_factory=list)  # ``fixed`` with "evicted" for the items (the
    # outcome column every run starts from: copying it is C-fast, building it is a loop over every position)
    evictable_or_focus: list[str] = field(default_factory=list)  # the segment column every run starts from
    no_live: list[None] = field(default_factory=list)  # the live-index column of the context items (all None)
    # the plan's items when every position is one (the usual session), each at one position only
    plain_items: list[ResolvedItem] | None = None

    def __post_init__(self) -> None:
        if not self.evicted_or_fixed:
            self.evicted_or_fixed = [f if f is not None else "evicted" for f in self.fixed]
        if len(self.no_live) != len(self.keys):
            self.no_live = [None] * len(self.keys)
        if not self.evictable_or_focus:
            self.evictable_or_focus = ["focus" if f is not None else "evictable" for f in self.fixed]


def plan_index_of(static: SessionStatic, resolved: list[ResolvedItem]) -> PlanIndex:
    """The decision plan's per-position columns (one per static record)."""
    plan_index: PlanIndex = per_static(static, resolved, "plan-index", lambda: _plan_index(static.plan))
    return plan_index


def _plan_index(plan: Sequence[tuple[str, Any]]) -> PlanIndex:
    if isinstance(plan, ItemsPlan) or all(tag == "item" for tag, _ in plan):  # the usual session
        items: list[ResolvedItem] = plan.items if isinstance(plan, ItemsPlan) else [obj for _, obj in plan]
        keys = [item.key for item in items]
        numbers = list(range(len(items)))  # (one int object per position, shared by both maps)
        position = dict(zip(map(id, items), numbers, strict=True))
        return PlanIndex(
            keys,
            [item.ordinal for item in items],
            ["message" if item.is_message else "summary" for item in items],
            [item.tokens for item in items],
            [None] * len(items),
            [True] * len(items),
            position,
            dict(zip(keys, numbers, strict=True)),  # the last wins, as in the loop below
            [],
            ["evicted"] * len(items),
            plain_items=items if len(position) == len(items) else None,
        )
    keys = []
    ordinals: list[int] = []
    kinds: list[str] = []
    tokens: list[int] = []
    fixed: list[str | None] = []
    is_item: list[bool] = []
    position: dict[int, int] = {}
    unresolved: list[tuple[int, int]] = []
    for tag, obj in plan:
        pos = len(keys)
        if tag == "unresolved":
            row: ContextItemRow = obj
            keys.append(f"o:{row.ordinal}")
            ordinals.append(row.ordinal)
            kinds.append(row.item_type if row.item_type in ("message", "summary") else "message")
            tokens.append(0)
            fixed.append("unresolved")
            is_item.append(False)
            unresolved.append((pos, row.ordinal))
            continue
        item: ResolvedItem = obj
        keys.append(item.key)
        ordinals.append(item.ordinal)
        tokens.append(item.tokens)
        if tag == "item":
            kinds.append("message" if item.is_message else "summary")
            fixed.append(None)
            is_item.append(True)
            position[id(item)] = pos
        elif tag == "focus":
            kinds.append("focus")
            fixed.append("focus")
            is_item.append(False)
            position[id(item)] = pos
        else:
            kinds.append("summary")
            fixed.append("replaced-by-focus")
            is_item.append(False)
    index_of_key = {k: pos for pos, k in enumerate(keys)}  # the last wins, as a dict built from the list
    return PlanIndex(keys, ordinals, kinds, tokens, fixed, is_item, position, index_of_key, unresolved)
