"""The reference ``ContextAssembler.assemble`` (spec §1.2 → §8) with a decision per item.

Pipeline: resolved items (cached per session) → focus overlay → fresh tail →
stubs → budget selection → orphan-call stripping, blank/empty clean-up →
pairing repair.  The result carries the assembler's messages and debug
record in the reference shape, plus one ``Decision`` per context row that
says concretely why the row was kept, evicted, stripped or dropped, so no
view ever has to re-derive a decision.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.diagnostics import overflow_diagnostics
from ctxview.assembly.fresh_tail import FreshTail, resolve_fresh_tail
from ctxview.assembly.incremental.decision_list import LazyDecisionList
from ctxview.assembly.incremental.message_json import h16_alone, message_json
from ctxview.assembly.incremental.static import (
    PlanIndex,
    SessionStatic,
    chunk_plan_of,
    item_label,
    plan_index_of,
    shape_of,
    static_of,
)
from ctxview.assembly.incremental.termindex import IndexedScores, indexed_scores
from ctxview.assembly.postprocess import EVICTABLE, FRESH, Cleaned, clean_selected
from ctxview.assembly.ranking import Ranker, Ranking
from ctxview.assembly.resolve import ResolvedItem, resolve_session, unresolved_reason
from ctxview.assembly.scoring import prompt_terms as distinct_prompt_terms
from ctxview.assembly.scoring import score_item
from ctxview.assembly.select import GreedyOrder, Selection, select_evictable
from ctxview.assembly.stubs import apply_stub_substitution
from ctxview.assembly.tool_pairs import (
    RepairLog,
    fresh_tail_protection_hashes,
    h16_of_jsons,
    sanitize_tool_use_result_pairing_keyed,
)
from ctxview.gc_pause import gc_paused
from ctxview.model import ContextItemRow, Decision, DecisionList, Session, TermMatch, describe_key

__all__ = ["AssemblerResult", "ResolvedItem", "assemble_context", "resolve_session"]


@dataclass
class AssemblerResult:
    messages: list[Any]  # §7.4 output (stages.assembler.messages)
    message_keys: list[str | None]  # parallel: decision key of the source item, None for synthetic results
    estimated_tokens: int  # §6 value
    stats: dict[str, int]  # rawMessageCount, summaryCount, totalContextItems
    kept_ordinals: list[int]
    fresh_tail_ordinal: int | None  # None = no tail (JS Infinity)
    protection_hashes: list[str]  # freshTailProtectionMessageHashes (§7.5)
    decisions: DecisionList  # one per context row (ordinal order); the focus item before the first it covers
    unresolved_ordinals: list[int]
    context_ordinals: list[int]
    selection_mode: str  # full-fit | prompt-aware | chronological | empty (no context items)
    tail_tokens: int = 0
    focus_tokens: int = 0
    evictable_total_tokens: int = 0
    kept_evictable_tokens: int = 0
    remaining_budget: int = 0
    prompt_terms: list[str] = field(default_factory=list)
    stub_stats: dict[str, int] = field(default_factory=lambda: {"stubbedCount": 0, "tokensSaved": 0})
    ranking: Ranking | None = None  # set when a ranker (an opt-in scorer) ranked the evictable items
    _trace_source: Any = field(default=None, repr=False, compare=False)
    _debug: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    _debug_builder: Callable[[], dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def debug(self) -> dict[str, Any] | None:
        """Every §8 debug field (parity names); None when there are no context items.

        Built on first access: its four hashes stringify and hash every kept message, which
        an interactive re-assembly never shows.
        """
        if self._debug is None and self._debug_builder is not None:
            self._debug = self._debug_builder()
            self._debug_builder = None
        return self._debug


def empty_result() -> AssemblerResult:
    return AssemblerResult(
        messages=[],
        message_keys=[],
        estimated_tokens=0,
        stats={"rawMessageCount": 0, "summaryCount": 0, "totalContextItems": 0},
        kept_ordinals=[],
        fresh_tail_ordinal=None,
        protection_hashes=[],
        decisions=[],
        unresolved_ordinals=[],
        context_ordinals=[],
        selection_mode="empty",
    )


def assemble_context(
    session: Session,
    *,
    token_budget: int,
    prompt: str | None,
    fresh_tail_count: float,
    fresh_tail_max_tokens: int | None,
    prompt_aware_eviction: bool,
    stub_large_tool_payloads: bool,
    timezone: str,
    resolved: list[ResolvedItem] | None = None,
    ranker: Ranker | None = None,
    sender_metadata: bool = True,
) -> AssemblerResult:
    """Assemble the context of ``session`` exactly as the reference assembler (§1–§8).

    ``resolved`` is the cached output of ``resolve_session(session, timezone)``; it is
    read, never modified, so one resolution serves any number of runs.
    ``ranker`` (an opt-in scorer, issue 5) replaces BM25-lite ranking; None is the reference.
    """
    if not session.items:
        return empty_result()
    if resolved is None:
        resolved = resolve_session(session, timezone, sender_metadata)
    with gc_paused():
        return _assemble(
            session,
            resolved,
            token_budget=token_budget,
            prompt=prompt,
            fresh_tail_count=fresh_tail_count,
            fresh_tail_max_tokens=fresh_tail_max_tokens,
            prompt_aware_eviction=prompt_aware_eviction,
            stub_large_tool_payloads=stub_large_tool_payloads,
            timezone=timezone,
            ranker=ranker,
        )


def _assemble(
    session: Session,
    resolved: list[ResolvedItem],
    *,
    token_budget: int,
    prompt: str | None,
    fresh_tail_count: float,
    fresh_tail_max_tokens: int | None,
    prompt_aware_eviction: bool,
    stub_large_tool_payloads: bool,
    timezone: str,
    ranker: Ranker | None = None,
) -> AssemblerResult:
    static = static_of(session, resolved, timezone)
    items = static.overlay.items
    shape = shape_of(static, resolved)
    stats = dict(shape.stats)

    # §5 fresh tail
    tail = resolve_fresh_tail(items, fresh_tail_count, fresh_tail_max_tokens)
    orphan_ordinal: float = math.inf if tail.start is None else tail.start
    focus_items = list(shape.focus_items)
    # items are in ordinal order: the tail is a suffix, the evictable items the prefix before it
    cut = bisect_left(shape.ordinals, orphan_ordinal)
    if not shape.ordinals and items:
        fresh = [item for item in items if not item.is_focus_brief and item.ordinal >= orphan_ordinal]
        evictable = [item for item in items if not item.is_focus_brief and item.ordinal < orphan_ordinal]
    elif focus_items:
        fresh = [item for item in items[cut:] if not item.is_focus_brief]
        evictable = [item for item in items[:cut] if not item.is_focus_brief]
    else:
        fresh = items[cut:]
        evictable = items[:cut]

    # §10.2 stubs (evictable only), before the budget sums
    stub_stats = {"stubbedCount": 0, "tokensSaved": 0}
    diag_items = items
    if stub_large_tool_payloads is True:
        stubbed = apply_stub_substitution(evictable)
        if stubbed.stubbed_count:
            swap = {id(orig): new for orig, new in zip(evictable, stubbed.items, strict=True) if orig is not new}
            evictable = stubbed.items
            diag_items = [swap.get(id(item), item) for item in items]
        stub_stats = {"stubbedCount": stubbed.stubbed_count, "tokensSaved": stubbed.tokens_saved}

    # opt-in scorers (not the reference): rank, and for section ROI stub, before the budget sums
    ranking: Ranking | None = None
    if ranker is not None:
        ranking = ranker.rank(evictable, prompt)
        if ranking.stubbed_count:
            swap = {id(orig): new for orig, new in zip(evictable, ranking.items, strict=True) if orig is not new}
            diag_items = [swap.get(id(item), item) for item in diag_items]
        evictable = ranking.items

    # §6 budget selection
    focus_tokens = sum(item.tokens for item in focus_items)
    tail_tokens = sum(item.tokens for item in fresh)
    remaining = max(0, token_budget - tail_tokens - focus_tokens)
    terms = distinct_prompt_terms(prompt)
    scored: list[tuple[float | None, tuple[TermMatch, ...]]] | None = None
    order: list[int] | None = None
    greedy: GreedyOrder | None = None
    if ranking is not None:
        scored = ranking.scored
        if ranking.order is not None and prompt_aware_eviction is not False:
            order = ranking.order
        use_scores = None
    else:
        use_scores = None
        if terms:
            indexed = indexed_scores(resolved, static, evictable, tuple(terms), stubbed=diag_items is not items)
            if indexed is not None:
                scored = indexed  # type: ignore[assignment]  # a lazy sequence of (score, matched terms)
                if prompt_aware_eviction is not False:
                    greedy = indexed.greedy()
            else:  # no term index yet (a one-shot run): score every item directly
                term_key = tuple(terms)
                # a term is a run of [a-z0-9] in the lowercased text, so an item whose lowercased text
                # contains none of them as a substring scores exactly 0 with no match (no tokenizing needed)
                scored = [
                    score_item(item, term_key) if any(t in lowered for t in term_key) else _NO_SCORE
                    for item, lowered in zip(evictable, (item.text.lower() for item in evictable), strict=True)
                ]
                if prompt_aware_eviction is not False:
                    use_scores = [s for s, _ in scored]
    plain = bool(shape.ordinals) and not focus_items and ranking is None and diag_items is items
    # plain: evictable is items[:cut] and the fresh tail items[cut:], as they were resolved
    selection = select_evictable(
        evictable,
        remaining,
        scores=use_scores,
        order=order,
        greedy=greedy,
        total=shape.prefix_tokens[cut] if plain else None,
    )
    kept_evictable = [evictable[i] for i in selection.kept]
    if focus_items:
        selected = sorted(
            [*kept_evictable, *focus_items, *fresh], key=lambda it: (it.ordinal, 0 if it.is_focus_brief else 1)
        )
    else:
        selected = [*kept_evictable, *fresh]  # both already in ordinal order, evictable < fresh
    estimated = selection.kept_tokens + tail_tokens + focus_tokens

    # §7.1–§7.3, §7.4
    if plain:  # the chunked repair knows the selected items by position
        chunked = chunk_plan_of(static, resolved).run(selection.kept, cut, orphan_ordinal, static.all_results)
        cleaned, repair, messages, keys = chunked.cleaned, chunked.repair, chunked.messages, chunked.keys
        fresh_msgs = chunked.fresh_messages()
    else:
        fresh_ordinals = {item.ordinal for item in fresh}
        cleaned = clean_selected(selected, fresh_ordinals, orphan_ordinal, static.all_results)
        repair = RepairLog()
        messages, keys = sanitize_tool_use_result_pairing_keyed(
            [e.message for e in cleaned.entries], [e.item.key for e in cleaned.entries], repair
        )
        fresh_msgs = [e.message for e in cleaned.entries if e.segment == FRESH]

    # §7.5 protection hashes (the engine needs them); the §8 debug record is built when read
    fresh_keys = {item.key for item in fresh}
    protection = fresh_tail_protection_hashes(fresh_msgs, messages, keys, fresh_keys.__contains__, message_json)

    def debug() -> dict[str, Any]:
        json_of = message_json
        evict_jsons = [json_of(e.message) for e in cleaned.entries if e.segment == EVICTABLE]
        fresh_jsons = [json_of(m) for m in fresh_msgs]
        return {
            "freshTailOrdinal": tail.start,
            "orphanStrippingOrdinal": tail.start,
            "baseFreshTailCount": len(fresh),
            "freshTailCount": len(fresh),
            "tailTokens": tail_tokens,
            "remainingBudget": remaining,
            "evictableTotalTokens": selection.total,
            "selectionMode": selection.mode,
            "promotedToolResultCount": 0,
            "promotedOrdinals": [],
            "removedToolUseBlockCount": cleaned.removed_tool_use_block_count,
            "touchedAssistantMessageCount": cleaned.touched_assistant_message_count,
            "preSanitizeEvictableCount": len(evict_jsons),
            "preSanitizeFreshTailCount": len(fresh_jsons),
            "preSanitizeEvictableHash": h16_of_jsons(evict_jsons),
            "preSanitizeFreshTailHash": h16_of_jsons(fresh_jsons),
            "preSanitizeFreshTailMessageHashes": [h16_alone(j) for j in fresh_jsons],
            "freshTailProtectionMessageHashes": protection,
            "preSanitizeMessagesHash": h16_of_jsons(json_of(e.message) for e in cleaned.entries),
            "finalMessagesHash": h16_of_jsons(json_of(m) for m in messages),
            "overflowDiagnostics": overflow_diagnostics(diag_items, selected, token_budget),
            "stubStats": dict(stub_stats),
        }

    selected_ids = {id(item) for item in selected}
    ctx = _Context(
        session=session,
        static=static,
        tail=tail,
        evictable=evictable,
        selection=selection,
        scored=scored,
        ranking=ranking,
        cleaned=cleaned,
        repair=repair,
        keys=keys,
        remaining=remaining,
        orphan_set=set(repair.orphan_results),
        duplicate_set=set(repair.duplicate_results),
        selected_ids=selected_ids,
    )
    ctx.plan_index = plan_index_of(static, resolved)
    decisions = _lazy_decisions(ctx)
    result = AssemblerResult(
        messages=messages,
        message_keys=keys,
        estimated_tokens=estimated,
        stats=stats,
        kept_ordinals=[item.ordinal for item in selected if not item.is_focus_brief],  # §10.1: never listed
        fresh_tail_ordinal=tail.start,
        protection_hashes=protection,
        decisions=decisions,
        # rows that became no item: unresolvable ones, and summaries a focus brief replaced (§10.1)
        unresolved_ordinals=sorted(
            [*(row.ordinal for row in static.unresolved_rows), *(item.ordinal for item in static.overlay.covered)]
        ),
        context_ordinals=list(static.context_ordinals),
        selection_mode=selection.mode,
        tail_tokens=tail_tokens,
        focus_tokens=focus_tokens,
        evictable_total_tokens=selection.total,
        kept_evictable_tokens=selection.kept_tokens,
        remaining_budget=remaining,
        prompt_terms=terms,
        stub_stats=stub_stats,
        ranking=ranking,
    )
    result._trace_source = (ctx, diag_items)
    result._debug_builder = debug
    return result


# --- the trace ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Context:
    session: Session
    static: SessionStatic
    tail: FreshTail
    evictable: list[ResolvedItem]
    selection: Selection
    scored: list[tuple[float | None, tuple[TermMatch, ...]]] | None
    cleaned: Cleaned
    repair: RepairLog
    keys: list[str | None]
    remaining: int
    orphan_set: set[Any]
    duplicate_set: set[Any]
    selected_ids: set[int]
    ranking: Ranking | None = None
    plan_index: PlanIndex | None = None  # static per-position columns (lazy decisions)
    prep: Any = None  # per-run state shared by the chunks of ``_decisions``


def _n(value: int) -> str:
    return f"{value:,}"


def _nth(rank: int) -> str:
    if 10 <= rank % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


def _score_text(score: float) -> str:
    return "0" if score == 0 else f"{score:.3g}"


def _count_text(count: float) -> str:
    return str(int(count)) if float(count).is_integer() else f"{count:g}"


def _ids_text(ids: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(ids))


class _Reasons:
    """Builds the one-line selection reasons; shared strings are built once per run."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        sel = ctx.selection
        self.sel = sel
        self.count = len(ctx.evictable)
        self.full_fit = (
            f"kept: every evictable item fits ({_n(sel.total)} tokens in the {_n(sel.remaining)} left "
            "after the fresh tail)"
        )
        stop = ctx.evictable[sel.stop_index].ordinal if sel.stop_index is not None else None
        self.older = f"evicted: chronological walk stopped at ordinal {stop} (did not fit); everything older is dropped"
        self.remaining = _n(sel.remaining)

    def evictable(self, index: int, item: ResolvedItem, kept: bool) -> str:
        sel = self.sel
        mode = sel.mode
        if mode == "full-fit":
            return self.full_fit
        left = sel.left_before[index]
        if mode == "prompt-aware":
            scored = self.ctx.scored
            score = scored[index][0] if scored is not None else 0.0
            shown = "—" if score is None else _score_text(score)
            rank = f"score {shown} ranked {_nth(sel.rank[index])} of {self.count}"
            verb = "fit" if kept else "did not fit"
            return (
                f"{'kept' if kept else 'evicted'}: {rank}; {_n(item.tokens)} tokens {verb} "
                f"in the {_n(left or 0)} left of {self.remaining}"
            )
        if kept:
            return f"kept: chronological, newest-first walk fit ({_n(item.tokens)} of {_n(left or 0)} remaining)"
        if sel.stop_index == index:
            return (
                f"evicted: chronological walk stopped here: {_n(item.tokens)} tokens did not fit in the "
                f"{_n(left or 0)} left of {self.remaining}; everything older is dropped"
            )
        return self.older

    def fresh(self, item: ResolvedItem) -> str:
        tail = self.ctx.tail
        why = tail.why.get(item.ordinal)
        if why == "newest":
            return "fresh tail: the newest raw message is always protected"
        if why == "latest-user":
            return f"fresh tail: extended back to the latest user turn (ordinal {tail.latest_user_ordinal})"
        if why == "count":
            cap = f" within the {_n(tail.cap)}-token cap" if tail.cap is not None else ""
            return f"fresh tail: within the last {_count_text(tail.count)} raw messages{cap}"
        what = "summary" if item.summary is not None else "item"
        return f"fresh tail: {what} at or after the tail boundary (ordinal ≥ {tail.start})"


def _post_outcome(ctx: _Context, key: str) -> tuple[str, str] | None:
    """Outcome and reason when clean-up or pairing repair changed a selected item."""
    cleaned = ctx.cleaned
    repair = ctx.repair
    stripped = cleaned.stripped_calls.get(key, [])
    if key in cleaned.dropped_orphan_calls:
        if not stripped:
            return "dropped-orphan-calls", "dropped: assistant message with empty content"
        ids = _ids_text([c for c, _ in stripped])
        return "dropped-orphan-calls", f"dropped: every block was a tool call whose result is not selected ({ids})"
    if key in cleaned.dropped_empty:
        return "dropped-empty", f"dropped: empty after clean-up ({cleaned.dropped_empty[key]})"
    if key in repair.dropped_assistants:
        removed = _ids_text([c for c, _ in repair.calls_removed.get(key, [])])
        if repair.dropped_assistants[key] == "terminal":
            return "duplicate-dropped", f"dropped: error/aborted turn lost its tool calls ({removed})"
        return "duplicate-dropped", f"dropped: its tool calls {removed} duplicate earlier calls; nothing else is left"
    if key in ctx.orphan_set:
        return "orphan-result-dropped", "dropped: orphan tool result (its call is not in the context before it)"
    if key in ctx.duplicate_set:
        return "duplicate-dropped", "dropped: duplicate tool result (another result for the same call is kept)"
    removed_calls = repair.calls_removed.get(key, [])
    if stripped or removed_calls:
        parts = []
        not_sel = [c for c, why in stripped if why == "not-selected"]
        before = [c for c, why in stripped if why == "result-before-call"]
        dup = [c for c, why in removed_calls if why == "duplicate"]
        term = [c for c, why in removed_calls if why == "terminal"]
        if not_sel:
            parts.append(f"tool calls {_ids_text(not_sel)} stripped: result not selected")
        if before:
            parts.append(f"tool calls {_ids_text(before)} stripped: their result comes before the call")
        if dup:
            parts.append(f"tool calls {_ids_text(dup)} removed: duplicate of an earlier call")
        if term:
            parts.append(f"tool calls {_ids_text(term)} removed: error/aborted turn")
        return "tool-calls-stripped", "; ".join(parts)
    return None


@dataclass(slots=True)
class _Prep:
    """Per-run lookups every chunk of decisions needs (built on the first chunk)."""

    output_index: dict[str, int]
    evict_index: dict[int, int]
    effective: dict[int, ResolvedItem]
    touched: set[str]


def _prep(ctx: _Context) -> _Prep:
    prep = ctx.prep
    if prep is None:
        prep = ctx.prep = _Prep(
            output_index={key: i for i, key in enumerate(ctx.keys) if key is not None},
            evict_index={id(item): i for i, item in enumerate(ctx.evictable)},
            effective={id(item.stub_of): item for item in ctx.evictable if item.stub_of is not None},
            touched=(
                set(ctx.cleaned.stripped_calls)
                | ctx.cleaned.dropped_orphan_calls
                | set(ctx.cleaned.dropped_empty)
                | set(ctx.repair.dropped_assistants)
                | ctx.orphan_set
                | ctx.duplicate_set
                | set(ctx.repair.calls_removed)
            ),
        )
    return prep


def _decisions(ctx: _Context, start: int = 0, stop: int | None = None) -> list[Decision]:
    """The decisions of plan positions ``start:stop`` (all by default), built fresh."""
    static = ctx.static
    prep = _prep(ctx)
    output_index = prep.output_index
    evict_index = prep.evict_index
    effective = prep.effective
    touched = prep.touched
    moved = ctx.repair.moved_after_results
    synthetic = ctx.repair.synthetic
    labels = static.labels
    tool_ids = static.tool_ids
    selected_ids = ctx.selected_ids
    pairs = static.pairs
    scored = ctx.scored
    ranking = ctx.ranking
    reasons = _Reasons(ctx)
    focus = static.overlay.focus_item
    decisions: list[Decision] = []
    append = decisions.append
    plan = static.plan if start == 0 and stop is None else static.plan[start:stop]
    for tag, obj in plan:
        if tag == "item":
            canonical: ResolvedItem = obj
            item = effective.get(id(canonical), canonical) if effective else canonical
            key = item.key
            selected = id(item) in selected_ids
            index = evict_index.get(id(item))
            score: float | None = None
            matched: tuple[TermMatch, ...] = ()
            label_extra = ""
            if index is not None:
                segment = "evictable"
                if scored is not None:
                    score, matched = scored[index]
                reason = reasons.evictable(index, item, selected)
                outcome = "kept" if selected else "evicted"
                if ranking is not None:
                    label_extra = ranking.labels[index]
                    note = ranking.notes[index]
                    reason = f"{reason} ({ranking.name}: {note})" if note else reason
                if item.stub_of is not None:
                    what = (
                        f"tool output {item.file_id} replaced by a reference"
                        if item.file_id is not None
                        else "below the section-ROI threshold, replaced by a one-line stub"
                    )
                    reason = f"stubbed: {_n(canonical.tokens)} → {_n(item.tokens)} tokens ({what}); {reason}"
                    if selected:
                        outcome = "stubbed"
            else:
                segment = "fresh-tail"
                outcome = "fresh-tail"
                reason = reasons.fresh(item)
            if selected and key in touched:
                post = _post_outcome(ctx, key)
                if post is not None:
                    outcome, reason = post
            elif selected and key in moved:
                reason = f"{reason}; moved after the tool results of {describe_key(moved[key])}"
            summary = item.summary
            append(
                Decision(
                    key=key,
                    ordinal=item.ordinal,
                    live_index=None,
                    kind="message" if item.is_message else "summary",
                    label=labels.get(id(canonical)) or item_label(item),
                    role=item.message.get("role"),
                    source_role=item.source_role,
                    message_id=item.message_id,
                    seq=item.seq,
                    summary_id=summary.summary_id if summary is not None else None,
                    summary_kind=summary.kind if summary is not None else None,
                    tokens=item.tokens,
                    serialized_tokens=None,
                    score=score,
                    matched_terms=matched,
                    segment=segment,  # type: ignore[arg-type]
                    selected=selected,
                    outcome=outcome,  # type: ignore[arg-type]
                    reason=reason,
                    pair_with=pairs.get(id(canonical), ()),
                    tool_call_ids=tool_ids.get(id(canonical), ()),
                    output_index=output_index.get(key),
                    text=item.text,
                    synthetic_result_for=tuple(synthetic[key]) if key in synthetic else (),
                    label_extra=label_extra,
                )
            )
        elif tag == "focus":
            append(_focus_decision(ctx, obj, output_index))
        elif tag == "covered":
            append(_covered_decision(obj, focus))
        else:
            append(_unresolved_decision(ctx, obj))
    return decisions


def _focus_decision(ctx: _Context, focus: ResolvedItem, output_index: dict[str, int]) -> Decision:
    brief = focus.brief
    ordinals = ", ".join(str(o) for o in focus.covered_ordinals)
    n = len(focus.covered_ordinals)
    reason = (
        f"focus brief {brief.brief_id if brief else ''}: always kept; replaces {n} covered "
        f"summar{'y' if n == 1 else 'ies'} (ordinal{'' if n == 1 else 's'} {ordinals})"
    )
    outcome = "focus"
    post = _post_outcome(ctx, focus.key)
    if post is not None:
        outcome, reason = post
    return Decision(
        key=focus.key,
        ordinal=focus.ordinal,
        live_index=None,
        kind="focus",
        label="focus",
        role="user",
        source_role=None,
        message_id=None,
        seq=None,
        summary_id=None,
        tokens=focus.tokens,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="focus",
        selected=False,  # always kept, but never listed in keptOrdinals (§10.1)
        outcome=outcome,  # type: ignore[arg-type]
        reason=reason,
        output_index=output_index.get(focus.key),
        text=focus.text,
    )


def _covered_decision(item: ResolvedItem, focus: ResolvedItem | None) -> Decision:
    brief = focus.brief if focus is not None else None
    watermark = ""
    if brief is not None:
        if brief.covered_message_seq is not None and item.summary_max_source_seq is not None:
            watermark = f" (its sources end at seq {item.summary_max_source_seq} ≤ {brief.covered_message_seq})"
        elif brief.covered_latest_at:
            latest = item.summary.latest_at if item.summary is not None else None
            watermark = f" (latest_at {latest} ≤ {brief.covered_latest_at})"
    summary = item.summary
    return Decision(
        key=item.key,
        ordinal=item.ordinal,
        live_index=None,
        kind="summary",
        label=item_label(item),
        role="user",
        source_role=None,
        message_id=None,
        seq=None,
        summary_id=summary.summary_id if summary is not None else None,
        summary_kind=summary.kind if summary is not None else None,
        tokens=item.tokens,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="focus",
        selected=False,
        outcome="replaced-by-focus",
        reason=f"replaced by focus brief {brief.brief_id if brief else ''}{watermark}",
        text=item.text,
    )


def _unresolved_decision(ctx: _Context, row: ContextItemRow) -> Decision:
    msg = ctx.session.messages.get(row.message_id) if row.message_id is not None else None
    return Decision(
        key=f"o:{row.ordinal}",
        ordinal=row.ordinal,
        live_index=None,
        kind=row.item_type if row.item_type in ("message", "summary") else "message",
        label=msg.role if msg is not None else "missing",
        role=None,
        source_role=msg.role if msg is not None else None,
        message_id=row.message_id,
        seq=msg.seq if msg is not None else None,
        summary_id=row.summary_id,
        tokens=0,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="fresh-tail" if ctx.tail.is_fresh(row.ordinal) else "evictable",
        selected=False,
        outcome="unresolved",
        reason=unresolved_reason(row, ctx.session),
    )


# --- lazy decisions: the same decisions, built when read; whole columns without building them ---------


class _Columns:
    """Whole-trace columns of one run, computed without building a Decision (same values, tested)."""

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.pi = ctx.plan_index
        self._items: dict[int, ResolvedItem] | None = None

    def _first_fresh(self) -> int:
        """First plan position whose ordinal is in the fresh tail (plan ordinals never decrease)."""
        start = self.ctx.tail.start
        if start is None:
            return len(self.pi.keys)
        return bisect_left(self.pi.ordinals, start)

    def _exceptions(self) -> dict[int, ResolvedItem]:
        """Positions whose item is not the canonical one or not where the ordinal says (stubs)."""
        if self._items is None:
            items: dict[int, ResolvedItem] = {}
            effective = _prep(self.ctx).effective
            if effective:
                position = self.pi.position
                plan = self.ctx.static.plan
                for stub in self.ctx.evictable:
                    if stub.stub_of is None:
                        continue
                    root = stub
                    while root.stub_of is not None:
                        root = root.stub_of
                    pos = position.get(id(root))
                    if pos is not None and plan[pos][0] == "item":
                        items[pos] = effective.get(id(root), root)
            self._items = items
        return self._items

    def _evictable_at(self, pos: int, item: ResolvedItem) -> int | None:
        return _prep(self.ctx).evict_index.get(id(item))

    def segment(self) -> list[Any]:
        pi = self.pi
        out: list[Any] = ["focus" if f is not None else "evictable" for f in pi.fixed]
        first = self._first_fresh()
        is_item = pi.is_item
        for pos in range(first, len(out)):
            if is_item[pos]:
                out[pos] = "fresh-tail"
        for pos, item in self._exceptions().items():
            out[pos] = "evictable" if self._evictable_at(pos, item) is not None else "fresh-tail"
        tail = self.ctx.tail
        for pos, ordinal in pi.unresolved:
            out[pos] = "fresh-tail" if tail.is_fresh(ordinal) else "evictable"
        return out

    def selected(self) -> list[Any]:
        pi = self.pi
        out: list[Any] = [False] * len(pi.fixed)  # a focus brief is kept but never in keptOrdinals (§10.1)
        position = pi.position
        plan = self.ctx.static.plan
        exceptions = self._exceptions()
        for item in self._selected_items():
            pos = position.get(id(item))
            if pos is not None and plan[pos][0] == "item" and pos not in exceptions:
                out[pos] = True
        selected_ids = self.ctx.selected_ids
        for pos, item in exceptions.items():
            out[pos] = id(item) in selected_ids
        return out

    def _selected_items(self) -> list[ResolvedItem]:
        ctx = self.ctx
        kept = [ctx.evictable[i] for i in ctx.selection.kept]
        first = self._first_fresh()
        plan = ctx.static.plan
        fresh = [plan[pos][1] for pos in range(first, len(plan)) if self.pi.is_item[pos]]
        return kept + fresh

    def outcome(self) -> list[Any]:
        ctx = self.ctx
        pi = self.pi
        out: list[Any] = [f if f is not None else "evicted" for f in pi.fixed]
        first = self._first_fresh()
        is_item = pi.is_item
        for pos in range(first, len(out)):
            if is_item[pos]:
                out[pos] = "fresh-tail"
        position = pi.position
        plan = ctx.static.plan
        exceptions = self._exceptions()
        for index in ctx.selection.kept:
            item = ctx.evictable[index]
            pos = position.get(id(item))
            if pos is not None and plan[pos][0] == "item" and pos not in exceptions:
                out[pos] = "kept"
        selected_ids = ctx.selected_ids
        for pos, item in exceptions.items():
            if self._evictable_at(pos, item) is None:
                out[pos] = "fresh-tail"
            elif id(item) in selected_ids:
                out[pos] = "stubbed" if item.stub_of is not None else "kept"
            else:
                out[pos] = "evicted"
        touched = _prep(ctx).touched
        if touched:
            index_of_key = pi.index_of_key
            for key in touched:
                pos = index_of_key.get(key)
                if pos is None:
                    continue
                tag, obj = plan[pos]
                if tag == "focus":
                    post = _post_outcome(ctx, key)
                elif tag == "item":
                    item = exceptions.get(pos, obj)
                    post = _post_outcome(ctx, key) if id(item) in selected_ids else None
                else:
                    post = None
                if post is not None:
                    out[pos] = post[0]
        return out

    def tokens(self) -> list[Any]:
        out: list[Any] = list(self.pi.tokens)
        for pos, item in self._exceptions().items():
            out[pos] = item.tokens
        return out

    def score(self) -> list[Any]:
        ctx = self.ctx
        out: list[Any] = [None] * len(self.pi.keys)
        scored = ctx.scored
        if scored is None:
            return out
        position = self.pi.position
        plan = ctx.static.plan
        exceptions = self._exceptions()
        for index, item in enumerate(ctx.evictable):
            pos = position.get(id(item))
            if pos is not None and plan[pos][0] == "item" and pos not in exceptions:
                out[pos] = scored[index][0]
        evict_index = _prep(ctx).evict_index
        for pos, item in exceptions.items():
            index = evict_index.get(id(item))
            out[pos] = scored[index][0] if index is not None else None
        return out


def _lazy_decisions(ctx: _Context) -> LazyDecisionList:
    pi = ctx.plan_index
    assert pi is not None
    columns = _Columns(ctx)
    count = len(pi.keys)
    return LazyDecisionList(
        count,
        lambda start, stop: _decisions(ctx, start, stop),
        columns={
            "key": lambda: pi.keys,
            "ordinal": lambda: pi.ordinals,
            "live_index": lambda: [None] * count,
            "kind": lambda: pi.kinds,
            "segment": columns.segment,
            "selected": columns.selected,
            "outcome": columns.outcome,
            "tokens": columns.tokens,
            "score": columns.score,
        },
        index_of_key=lambda: pi.index_of_key,
    )


def score_summary(asm: AssemblerResult) -> tuple[bool, bool]:
    """(some decision has a score, every such score is 0) — what ``low_confidence`` reads, without decisions."""
    source = asm._trace_source
    decisions = asm.decisions
    if source is None or not isinstance(decisions, LazyDecisionList):
        scores = [d.score for d in decisions if d.score is not None]
        return bool(scores), all(s == 0 for s in scores)
    ctx: _Context = source[0]
    if ctx.scored is None:
        return False, True
    if asm.stub_stats.get("stubbedCount"):  # stub substitution: read the column, exactly as the decisions have it
        scores = [s for s in decisions.column("score") if s is not None]
        return bool(scores), all(s == 0 for s in scores)
    scores = [s for s, _ in ctx.scored if s is not None] if ctx.ranking is not None else None
    if scores is not None:
        return bool(scores), all(s == 0 for s in scores)
    if isinstance(ctx.scored, IndexedScores):
        return len(ctx.scored) > 0, not ctx.scored.positive
    return bool(ctx.scored), not any(s for s, _ in ctx.scored)


_NO_SCORE: tuple[float, tuple[TermMatch, ...]] = (0.0, ())
