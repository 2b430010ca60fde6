"""One assembly run, end to end: assembler, then engine step, as one Trace.

``SessionAssembler`` keeps what does not depend on the parameters (resolved
items, rendered messages, term counts) so that the TUI can re-assemble on
every keystroke without re-reading or re-rendering the session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from copy import copy
from functools import partial
from typing import TYPE_CHECKING, Any

from ctxview import render_cache
from ctxview.assembly.assembler import (
    AssemblerResult,
    assemble_context,
    empty_result,
    resolve_session,
)
from ctxview.assembly.drain import DrainPrediction, drained_session, predict_drain
from ctxview.assembly.engine import EngineResult, EngineState, reconcile
from ctxview.assembly.fallbacks import deferred_degrade_decision
from ctxview.assembly.incremental.decision_list import LazyDecisionList
from ctxview.assembly.incremental.termindex import term_index
from ctxview.assembly.lookup import find_conversation
from ctxview.assembly.resolve import PACK_FROM_MESSAGES, Renders
from ctxview.assembly.rules import DetectedLine, EngineRules, detect_line, rules_for
from ctxview.assembly.volatile import SerializedCache
from ctxview.jserrors import JSError
from ctxview.model import Params, RunSummary, Session, Trace

if TYPE_CHECKING:  # the opt-in scorers load only when a run asks for one (a default run never does)
    from ctxview.scorers.ranker import ScorerRanker, ScorerRanking


# (session, engine rule, renders) made by resolutions and not yet written to the render cache
_UNSAVED: list[tuple[Session, bool, Renders]] = []
_UNSAVED_LOCK = threading.Lock()
_UNSAVED_LIMIT = 1  # the newest session: a --watch reload never keeps an older one alive


def has_pending_renders() -> bool:
    """Whether ``save_pending_renders`` has anything to write."""
    with _UNSAVED_LOCK:
        return bool(_UNSAVED)


def save_pending_renders() -> None:
    """Write the message renders made so far to the render cache, for the next run on the same database.

    Called once the output is out (the CLI: by a process of its own, which goes on after the command
    ends) or in the background after the first trace (the TUI), so writing the cache never delays what
    the user waits for.
    """
    while True:
        with _UNSAVED_LOCK:
            if not _UNSAVED:
                return
            session, sender_metadata, renders = _UNSAVED.pop()
        render_cache.save(session.cache_identity, session.conversation.conversation_id, sender_metadata,
                          renders.fresh, session.source, partial(render_cache.rows_of, session))


class _MessageOrdinals(Mapping[int, int]):
    """Message id → its context ordinal, built on the first lookup: only a recall cue's row reads it
    (a dict of every message is ~5 MB at 100,000 items)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._built: dict[int, int] | None = None

    def _ordinals(self) -> dict[int, int]:
        if self._built is None:
            items = self._session.items
            self._built = {row.message_id: row.ordinal for row in items if row.message_id is not None}
        return self._built

    def __getitem__(self, message_id: int) -> int:
        return self._ordinals()[message_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._ordinals())

    def __len__(self) -> int:
        return len(self._ordinals())


class SessionAssembler:
    """Assembles one loaded session repeatedly with changing parameters."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.detected: DetectedLine = detect_line(session.tables)
        self._resolved: dict[tuple[str, bool], Any] = {}
        self._rankers: dict[tuple[Any, ...], ScorerRanker] = {}
        self._has_summary_items = any(item.item_type == "summary" for item in session.items)
        # only a session with sender metadata renders differently under the two engine lines (delta D3)
        self._has_sender_metadata = any(m.sender_metadata for m in session.messages.values())
        # per-message engine values (serialized tokens, hashes, pairing ids), shared by every run of a line
        self._engine_memos: dict[str, SerializedCache] = {}
        self._recall: _RecallSearcher | None = None  # the engine's message search, opened on first use
        self._recall_ordinals: Mapping[int, int] = {}
        # §10.5 emergency compaction replays, and the compacted sessions they leave, per budget and tail
        self._drains: dict[tuple[Any, ...], DrainPrediction | None] = {}
        self._drained: dict[tuple[Any, ...], SessionAssembler] = {}

    def rules(self, params: Params) -> tuple[EngineRules, str]:
        """The engine line's rules for a run, and why those (the database's tables, or a choice)."""
        if params.engine_line is not None:
            rules = rules_for(params.engine_line)
            detected = self.detected.rules
            note = "the database's tables point to it too" if rules is detected else f"{self.detected.why}"
            return rules, f"chosen ({note})"
        return self.detected.rules, self.detected.why

    def _engine_memo(self, rules: EngineRules) -> SerializedCache:
        memo = self._engine_memos.get(rules.line)
        if memo is None:
            memo = SerializedCache(limit=4 * len(self.session.items) + 4096, estimate=rules.serialized_tokens())
            self._engine_memos[rules.line] = memo
        return memo

    def engine_memo(self, rules: EngineRules) -> SerializedCache:
        """The per-message engine values every run of this line shares (``sweep_cache`` keeps them)."""
        return self._engine_memo(rules)

    def message_tokens(self, engine_line: str) -> Callable[[Sequence[Any]], list[int]]:
        """The §4.3 serialized estimate of each message under an engine line's rules, from the memo its runs
        share: after a run every message it sent is measured already, so a view reads them at C speed."""
        return self._engine_memo(rules_for(engine_line)).tokens_of_all

    def resolved(self, timezone: str, sender_metadata: bool = True) -> Any:
        """Resolved items for a time zone (summary dates depend on it) and engine line, built once.

        Raises ``JSError`` where the engine's own resolution throws (a summary date JavaScript cannot read).
        """
        key = (timezone, sender_metadata and self._has_sender_metadata)
        cached = self._resolved.get(key)
        if cached is None:
            renders = self._renders(key[1])
            if renders is not None:  # each message's parts, once rendered, are read again only if needed
                from ctxview.store import parts_releaser

                renders.release = parts_releaser(self.session)
            cached = resolve_session(self.session, timezone, key[1], renders)
            if renders is not None and renders.keep and renders.fresh and not renders.cached:
                with _UNSAVED_LOCK:
                    _UNSAVED.append((self.session, key[1], renders))
                    del _UNSAVED[:-_UNSAVED_LIMIT]  # a process that never saves holds no more than this
            self._resolved[key] = cached  # (resolve_session froze it out of the cyclic GC: it lives on)
        return cached

    def _renders(self, sender_metadata: bool) -> Renders | None:
        """Message renders of an earlier run of this database state (render_cache), or where to collect them."""
        session = self.session
        if len(session.messages) < render_cache.min_messages():
            return None
        pack = len(session.messages) >= PACK_FROM_MESSAGES
        if session.cache_identity is None or not render_cache.enabled():
            return Renders(keep=False, pack=pack)  # (rendered all at once all the same; nothing kept for a cache)
        found = session.cached_renders
        if found is not None and found[0] == sender_metadata:
            session.cached_renders = None  # read by the store with the session: used once, then let go
            return Renders(cached=found[1], pack=pack)
        cached = render_cache.load(session.cache_identity, session.conversation.conversation_id, sender_metadata)
        if cached is None:
            return Renders(pack=pack)
        cached.render_from(session.messages, sender_metadata)
        return Renders(cached=cached, pack=pack)

    def prepare(self, params: Params | None = None) -> None:
        """Build what the first prompt would otherwise build: the resolution and its term index.

        The TUI calls this in a background thread once the first trace is on screen,
        so the first searchable keystroke does not pay for indexing the session.
        """
        params = params or Params()
        try:
            resolved = self.resolved(params.timezone, self.rules(params)[0].sender_metadata)
        except JSError:
            return  # nothing to index: the engine cannot resolve this session (the trace says why)
        from ctxview import term_index_cache

        kept = term_index_cache.Kept(self.session, params.timezone)
        term_index(resolved, self.session, params.timezone, known=kept.load, keep=kept.save)

    def ranker(self, params: Params) -> ScorerRanker | None:
        """The opt-in scorer for these params (None = the reference BM25-lite), built once."""
        if is_reference_mode(params):
            return None
        key = (params.scorer, params.tokenizer, params.citations_path, params.stub_threshold)
        ranker = self._rankers.get(key)
        if ranker is None:
            from ctxview.scorers.ranker import ScorerRanker

            ranker = ScorerRanker(
                self.session,
                scorer=params.scorer,
                tokenizer=params.tokenizer,
                citations=params.citations_path,
                stub_threshold=params.stub_threshold,
            )
            self._rankers[key] = ranker
        return ranker

    def assemble(self, params: Params, token_budget: int) -> AssemblerResult:
        """The §6–§8 assembler pass (no engine step) with these params at ``token_budget``."""
        rules = self.rules(params)[0]
        return assemble_context(
            self.session,
            token_budget=token_budget,
            prompt=params.prompt,
            fresh_tail_count=params.fresh_tail_count,
            fresh_tail_max_tokens=params.fresh_tail_max_tokens,
            prompt_aware_eviction=params.prompt_aware_eviction,
            stub_large_tool_payloads=params.stub_large_tool_payloads,
            timezone=params.timezone,
            resolved=self.resolved(params.timezone, rules.sender_metadata),
            ranker=self.ranker(params),
            sender_metadata=rules.sender_metadata,
        )

    def _drain_key(self, params: Params, budget: int, rules: EngineRules) -> tuple[Any, ...]:
        return (budget, params.fresh_tail_count, params.fresh_tail_max_tokens, params.timezone, rules.line)

    def drain(self, params: Params, budget: int, rules: EngineRules) -> DrainPrediction | None:
        """The emergency compaction the engine runs before assembling (§10.5), replayed; None when it runs none."""
        key = self._drain_key(params, budget, rules)
        if key not in self._drains:
            self._drains[key] = predict_drain(
                self.session,
                budget,
                fresh_tail_count=params.fresh_tail_count,
                fresh_tail_max_tokens=params.fresh_tail_max_tokens,
                timezone=params.timezone,
                line=rules.line,
            )
        return self._drains[key]

    def _run_drained(self, params: Params, budget: int, rules: EngineRules, drain: DrainPrediction) -> Trace:
        """The run on the context the drain leaves behind, saying first what the engine did to get there."""
        key = self._drain_key(params, budget, rules)
        assembler = self._drained.get(key)
        if assembler is None:
            assembler = self._drained[key] = SessionAssembler(drained_session(self.session, drain))
        trace = assembler.run(params)
        gate = deferred_degrade_decision(
            self.session.stored_context_tokens,
            self.session.maintenance,
            budget,
            conversation_id=self.session.conversation.conversation_id,
            drain="cleared",
            drain_note=drain.note(budget),
        )
        trace.warnings[len(self.session.warnings) : len(self.session.warnings)] = [
            line.text for line in gate.log_lines if line.level == "warn"
        ]
        if gate.note:
            trace.notes.insert(0, gate.note)
        return trace

    def engine_state(self, params: Params, drain: DrainPrediction | None = None) -> EngineState:
        """What the engine reads besides the assembled context: debt, fork state, the message search."""
        session = self.session
        if self._recall is None:
            self._recall = _RecallSearcher(session.source, session.conversation.conversation_id)
            self._recall_ordinals = _MessageOrdinals(session)
        return EngineState(
            conversation_id=session.conversation.conversation_id,
            stub_large_tool_payloads=params.stub_large_tool_payloads,
            maintenance=session.maintenance,
            stored_context_tokens=session.stored_context_tokens,
            bootstrap_state=session.bootstrap_state,
            recall_search=self._recall,
            recall_ordinals=self._recall_ordinals,
            drain=drain,
        )

    def lookup_miss(self, params: Params, rules: EngineRules) -> str | None:
        """Why the engine would find no conversation for the params' session (None: it finds this one)."""
        if params.session_id is None and params.session_key is None:
            return None
        found = find_conversation(self.session.conversation_refs, params.session_id, params.session_key, rules)
        own = self.session.conversation.conversation_id
        if found.conversation_id is None:
            return found.why
        if found.conversation_id != own:
            return f"the engine would assemble conversation {found.conversation_id} ({found.why}), not {own}"
        return None

    def run(self, params: Params) -> Trace:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        rules, rules_why = self.rules(params)
        budget = params.effective_budget
        lookup_miss = self.lookup_miss(params, rules) if params.engine else None
        drain = self.drain(params, budget, rules) if params.engine and lookup_miss is None else None
        if drain is not None and drain.outcome == "cleared":  # the engine compacts, then assembles the result
            return self._run_drained(params, budget, rules, drain)
        assembler_error: JSError | None = None
        try:  # built on first use: timed apart from the assembly that reads it
            self.resolved(params.timezone, rules.sender_metadata)
        except JSError as exc:
            assembler_error = exc
        timings["resolve"] = time.perf_counter() - started

        mark = time.perf_counter()
        asm = empty_result() if assembler_error is not None else self.assemble(params, budget)
        timings["assemble"] = time.perf_counter() - mark

        engine: EngineResult | None = None
        if params.engine:
            mark = time.perf_counter()
            engine = reconcile(
                asm.messages,
                asm.message_keys,
                asm.estimated_tokens,
                asm.protection_hashes,
                live_messages=list(params.live_messages) if params.live_messages is not None else None,
                token_budget=budget,
                budget_resolved=True,
                prompt=params.prompt,
                available_tools=list(params.available_tools) if params.available_tools is not None else None,
                context_item_count=len(self.session.items),
                has_summary_items=self._has_summary_items,
                rules=rules,
                state=self.engine_state(params, drain),
                lookup_miss=lookup_miss,
                assembler_error=assembler_error,
                memo=self._engine_memo(rules),
            )
            timings["engine"] = time.perf_counter() - mark
        timings["total"] = time.perf_counter() - started
        trace = build_trace(self.session, params, asm, engine, timings)
        trace.summary.engine_line = rules.line
        trace.summary.engine_release = rules.release
        trace.summary.engine_rules_why = rules_why
        if assembler_error is not None:
            trace.notes.append(_unresolvable_note(self.session, params.timezone, assembler_error))
            if engine is None:  # no engine step to fall back: nothing could be assembled
                trace.summary.engine_outcome = f"assemble-error:{assembler_error.js_text}"
        return trace


def build_trace(
    session: Session,
    params: Params,
    asm: AssemblerResult,
    engine: EngineResult | None,
    timings: dict[str, float],
) -> Trace:
    """Merge the assembler's item decisions with the engine's effects into one trace."""
    decisions = _own_decisions(asm)
    if engine is not None:
        final_messages = engine.messages
        final_keys = engine.message_keys
        decisions.override_keys(engine.item_updates)
        decisions.map_field("serialized_tokens", engine.serialized_tokens)
        if engine.clamp_outcomes:  # (one mapping for the thousands of items a clamp can cut)
            reasons = engine.clamp_reasons
            decisions.map_field("outcome", engine.clamp_outcomes)
            outcomes = engine.clamp_outcomes
            decisions.map_field("reason", dict(zip(outcomes, map(reasons.__getitem__, outcomes.values()), strict=True)))
        decisions.extend(engine.live_decisions)
        final_tokens = engine.estimated_tokens
        engine_outcome = engine.engine_outcome
        stages: dict[str, Any] = {"assembler": assembler_stage(asm, params), **engine.stages}
        warnings = list(engine.warnings)
        protected_pairs = list(engine.protected_pairs)
    else:
        final_messages = asm.messages
        final_keys = asm.message_keys
        final_tokens = asm.estimated_tokens
        engine_outcome = "assembler-only"
        protected_pairs = []
        stages = {"assembler": assembler_stage(asm, params)}
        warnings = []

    # output positions refer to the final list the model receives
    decisions.reset_field("output_index", None)
    live = engine.live_decisions if engine is not None else []
    positions: dict[Any, int] = dict(zip(final_keys, range(len(final_keys)), strict=True))  # a key's last position
    positions.pop(None, None)
    for decision in live:
        decision.output_index = positions.pop(decision.key, None)
    decisions.map_field("output_index", positions)

    # the assembler never decides "appended" or "evicted-for-live": only engine updates and live inputs do
    live_tokens = 0
    recall_tokens = 0
    evicted_for_live = 0
    updated = [
        decisions[i]
        for i, outcome in decisions.overridden("outcome").items()
        if outcome in ("appended", "evicted-for-live")
    ]
    for decision in [*updated, *live]:
        if decision.outcome == "appended":
            live_tokens += decision.serialized_tokens or decision.tokens
        elif decision.outcome == "recall-cue":
            recall_tokens += decision.tokens
        elif decision.outcome == "evicted-for-live":
            evicted_for_live += decision.tokens
    has_scores, all_zero = asm.score_summary()
    prompt_terms = list(asm.prompt_terms)
    ranking = asm.ranking
    if ranking is not None and isinstance(params.prompt, str):
        from ctxview.scorers.tokenize import get_tokenizer

        prompt_terms = list(dict.fromkeys(get_tokenizer(params.tokenizer).tokenize(params.prompt)))
    searchable = bool(prompt_terms)
    scorer_ranking = _scorer_ranking(asm)
    if scorer_ranking is not None:
        run = scorer_ranking.run
        stages["scoring"] = {
            "scorer": run.name,
            "tokenizer": params.tokenizer,
            "stats": run.stats(),
            "sections": run.table_rows(),
            "stubbedCount": scorer_ranking.stubbed_count,
            "tokensSaved": scorer_ranking.tokens_saved,
        }
    clamp = stages.get("serializedClamp") or {}
    summary = RunSummary(
        selection_mode=asm.selection_mode,
        fresh_tail_ordinal=asm.fresh_tail_ordinal,
        token_budget=params.token_budget,
        effective_budget=params.effective_budget,
        reserved_tokens=max(0, params.reserved_tokens),
        tail_tokens=asm.tail_tokens,
        focus_tokens=asm.focus_tokens,
        evictable_total_tokens=asm.evictable_total_tokens,
        kept_evictable_tokens=asm.kept_evictable_tokens,
        remaining_budget=asm.remaining_budget,
        assembler_tokens=asm.estimated_tokens,
        final_tokens=final_tokens,
        live_appended_tokens=live_tokens,
        recall_tokens=recall_tokens,
        evicted_for_live_tokens=evicted_for_live,
        searchable_prompt=searchable,
        prompt_terms=tuple(prompt_terms),
        engine_outcome=engine_outcome,
        fallback_why=engine.fallback_why if engine is not None else None,
        over_budget=bool(clamp.get("overBudget")) if clamp else asm.estimated_tokens > params.effective_budget,
        clamped=bool(clamp.get("clamped")),
        keyword_only=(
            scorer_ranking.keyword_only({d.key for d in decisions if d.segment == "evictable" and d.is_kept})
            if scorer_ranking is not None
            else False
        ),
        low_confidence=ranking.low_confidence if ranking is not None else searchable and has_scores and all_zero,
    )
    return Trace(
        params=params,
        conversation_id=None if session.no_conversation else session.conversation.conversation_id,
        summary=summary,
        decisions=decisions,
        messages=final_messages,
        message_keys=list(final_keys),
        assembler_messages=asm.messages,
        kept_ordinals=list(asm.kept_ordinals),
        unresolved_ordinals=list(asm.unresolved_ordinals),
        context_ordinals=list(asm.context_ordinals),
        stages=stages,
        warnings=[*session.warnings, *warnings],
        notes=list(engine.notes) if engine is not None else [],
        timings=timings,
        protected_pairs=protected_pairs,
        assembler_debug=lambda: asm.debug,
    )


def is_reference_mode(params: Params) -> bool:
    """The reference BM25-lite ranking: no opt-in scorer or tokenizer (the assembler needs no ranker)."""
    return params.scorer in ("lcm", "bm25-lite") and params.tokenizer == "lcm"


def _scorer_ranking(asm: AssemblerResult) -> ScorerRanking | None:
    """The run's ranking with the scoring run behind it, when an opt-in scorer ranked it."""
    if asm.ranking is None:
        return None
    from ctxview.scorers.ranker import ScorerRanking  # (loaded already: a scorer made this ranking)

    return asm.ranking if isinstance(asm.ranking, ScorerRanking) else None


def _own_decisions(asm: AssemblerResult) -> LazyDecisionList:
    """The trace's own decisions: a fresh lazy list over the run (the assembler result stays as it was)."""
    base = asm.decisions
    if isinstance(base, LazyDecisionList):
        return base.fork()
    copied = [copy(d) for d in base]
    return LazyDecisionList(len(copied), lambda start, stop: copied[start:stop])


def assembler_stage(asm: AssemblerResult, params: Params) -> dict[str, Any]:
    """``stages.assembler`` in the shape of the parity files."""
    stage: dict[str, Any] = {
        "input": {
            "tokenBudget": params.effective_budget,
            "prompt": params.prompt,
            "freshTailCount": params.fresh_tail_count,
            "freshTailMaxTokens": params.fresh_tail_max_tokens,
            "promptAwareEviction": params.prompt_aware_eviction,
            "stubLargeToolPayloads": params.stub_large_tool_payloads,
            "timezone": params.timezone,
        },
        "messages": asm.messages,
        "estimatedTokens": asm.estimated_tokens,
        "stats": asm.stats,
    }  # "debug" follows when the trace's stage_records() is read
    return stage


def _unresolvable_note(session: Session, timezone: str, error: JSError) -> str:
    """Which stored value made the engine throw, so the fallback can be traced to a row."""
    from ctxview.assembly.render import render_summary

    for summary in session.summaries.values():
        try:
            render_summary(summary, timezone)
        except JSError:
            dates = f"earliest_at {summary.earliest_at!r}, latest_at {summary.latest_at!r}"
            return (
                f"summary {summary.summary_id} ({dates}): the engine throws {error.js_text} rendering it, "
                "so it sends the live transcript instead of an assembled context"
            )
    return f"the engine throws {error.js_text} resolving this conversation, so it sends the live transcript"


class _RecallSearcher:
    """The engine's message search for the recall cue (§10.3), on a read-only connection opened when first asked.

    Most runs never search (the prompt names no key the context lacks), so nothing is opened for them.
    """

    def __init__(self, source: str, conversation_id: int) -> None:
        self.source = source
        self.conversation_id = conversation_id
        self._search: Any = None
        self._lock = threading.Lock()

    def __call__(self, identifier: str) -> Any:
        with self._lock:
            if self._search is None:
                from ctxview.recall_search import RecallSearch
                from ctxview.store import LcmStore

                self._search = RecallSearch(LcmStore(self.source).connection, self.conversation_id)
            return self._search(identifier)
