"""The reference ``ContextAssembler.assemble`` (spec §1.2 → §8) with a decision per item.

Pipeline: resolved items (cached per session) → focus overlay → fresh tail →
stubs → budget selection → orphan-call stripping, blank/empty clean-up →
pairing repair.  The result carries the assembler's messages and debug
record in the reference shape, plus one ``Decision`` per context row that
says concretely why the row was kept, evicted, stripped or dropped, so no
view ever has to re-derive a decision.

This module is the orchestration: each step is the module named for its
section, the decisions and their reasons are built in ``decisions.py`` from
the ``RunRecord`` kept here, and the warm-path caches live in ``incremental/``
(each gives what the plain path gives; the plain path runs when a cache does
not apply, e.g. a session whose items are not in ordinal order).
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.decision_columns import lazy_decisions, score_summary
from ctxview.assembly.decisions import RunRecord
from ctxview.assembly.diagnostics import overflow_diagnostics
from ctxview.assembly.fresh_tail import resolve_fresh_tail
from ctxview.assembly.incremental.decision_list import LazyDecisionList
from ctxview.assembly.incremental.message_json import h16_alone, message_json
from ctxview.assembly.incremental.static import (
    chunk_plan_of,
    plan_index_of,
    shape_of,
    static_of,
)
from ctxview.assembly.incremental.termindex import direct_scores, indexed_scores
from ctxview.assembly.postprocess import EVICTABLE, FRESH, clean_selected
from ctxview.assembly.ranking import Ranker, Ranking
from ctxview.assembly.resolve import ResolvedItem, resolve_session
from ctxview.assembly.scoring import prompt_terms as distinct_prompt_terms
from ctxview.assembly.select import GreedyOrder, SelectionOrder, select_evictable
from ctxview.assembly.stubs import apply_stub_substitution
from ctxview.assembly.tool_pairs import (
    RepairLog,
    fresh_tail_protection_hashes,
    h16_of_jsons,
    sanitize_tool_use_result_pairing_keyed,
)
from ctxview.gc_pause import gc_paused
from ctxview.model import DecisionList, Session, TermMatch

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
    _run: RunRecord | None = field(default=None, repr=False, compare=False)  # what the decisions are built from
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

    def selection_order(self) -> SelectionOrder:
        """The order this run's §6 pass walked the evictable items (or would: newest first at a full fit).

        The budget sweep replays it at every budget; ``selection_mode`` says which walk it is.
        """
        if self._run is None:
            return SelectionOrder(self.selection_mode, [], [])
        return SelectionOrder.of(self._run.evictable, self._run.selection)

    def score_summary(self) -> tuple[bool, bool]:
        """(some decision has a score, every such score is 0) — what ``low_confidence`` reads, without decisions."""
        decisions = self.decisions
        if self._run is None or not isinstance(decisions, LazyDecisionList):
            scores = [d.score for d in decisions if d.score is not None]
            return bool(scores), all(s == 0 for s in scores)
        return score_summary(self._run, decisions, stubbed=bool(self.stub_stats.get("stubbedCount")))


_ORDINAL = operator.attrgetter("ordinal")


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
    scored: Sequence[tuple[float | None, tuple[TermMatch, ...]]] | None = None
    order: list[int] | None = None
    greedy: GreedyOrder | None = None
    if ranking is not None:
        scored = ranking.scored
        if ranking.order is not None and prompt_aware_eviction is not False:
            order = ranking.order
    plain = bool(shape.ordinals) and not focus_items and ranking is None and diag_items is items
    # plain: evictable is items[:cut] and the fresh tail items[cut:], as they were resolved
    evictable_total = shape.prefix_tokens[cut] if plain else sum(item.tokens for item in evictable)
    if ranking is None and terms:
        indexed = indexed_scores(resolved, static, evictable, tuple(terms), stubbed=diag_items is not items)
        if indexed is not None:
            scored = indexed  # a lazy sequence of (score, matched terms)
            if prompt_aware_eviction is not False:
                greedy = indexed.greedy()
        else:  # no term index yet (a one-shot run, or one prompt at many budgets): score every item directly
            direct = direct_scores(resolved, static, evictable, tuple(terms), stubbed=diag_items is not items)
            scored = direct.scored
            if prompt_aware_eviction is not False and evictable_total > remaining:  # (a full fit walks no order)
                greedy = direct.greedy()
    selection = select_evictable(evictable, remaining, scores=None, order=order, greedy=greedy, total=evictable_total)
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

    run = RunRecord(
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
        selected_ids=set(map(id, selected)),
        plan_index=plan_index_of(static, resolved),
    )
    decisions = lazy_decisions(run)
    result = AssemblerResult(
        messages=messages,
        message_keys=keys,
        estimated_tokens=estimated,
        stats=stats,
        # §10.1: a focus brief is never listed (without focus items no selected item is one: read at C speed)
        kept_ordinals=(
            [item.ordinal for item in selected if not item.is_focus_brief]
            if focus_items
            else list(map(_ORDINAL, selected))
        ),
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
    result._run = run
    result._debug_builder = debug
    return result

