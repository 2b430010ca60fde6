"""The engine step after assembly: live inputs, fallbacks and the final clamp (spec §9.2).

``reconcile`` takes what the assembler returned and the host's live message
window and produces what the model actually receives, plus a record of every
effect for the trace: which live inputs were already covered or appended,
which assembled items were evicted to make room (and for which input), which
tool pairs were protected, and what the serialized clamp cut.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxview.assembly.clamp import ClampResult, clamp_to_serialized_budget, strip_trailing_prefill
from ctxview.assembly.decisions import RECALL_KEY, live_decision, recall_decision
from ctxview.assembly.drain import DrainPrediction
from ctxview.assembly.fallbacks import (
    DegradeDecision,
    ForkAppendResult,
    append_fork_live_suffix,
    deferred_degrade_decision,
    degraded_live_result,
    degraded_log_line,
    fork_live_fallback,
)
from ctxview.assembly.live import (
    normalize_live_message,
    stored_content,
    stored_role,
    stored_token_count,
)
from ctxview.assembly.prompt_recall import (
    RecallCue,
    RecallSearchFn,
    build_prompt_recall_cue,
    recall_coverage_messages,
)
from ctxview.assembly.rules import RULES_0_15, EngineRules
from ctxview.assembly.tool_pairs import sanitize_tool_use_result_pairing_keyed
from ctxview.assembly.volatile import (
    RETRY_MARKER,
    PairIndex,
    SerializedCache,
    VolatileResult,
    append_volatile_inputs,
    is_volatile_content,
    normalize_overlap_text,
    protected_by_hash,
)
from ctxview.jserrors import JSError, require_objects
from ctxview.jsjson import JSNumber, js_stringify, js_trim, js_trim_start
from ctxview.model import ENGINE_DEFAULT_BUDGET, Decision, Outcome, describe_key

if TYPE_CHECKING:  # the interception loads only for a run that stubs large live tool payloads
    from ctxview.assembly.live_intercept import InterceptResult

PROMPT_RECALL_NOT_BUILT: dict[str, Any] = {
    "cueBuilt": False,
    "cueIncluded": False,
    "cueDroppedForVolatile": False,
    "cueDroppedForClamp": False,
    "cueTokenCount": None,
    "cueMessage": None,
}


@dataclass
class EngineResult:
    """What the model receives after the engine step, and the effects the trace shows."""

    messages: list[Any]  # final messages (top-level "messages")
    message_keys: list[str | None]  # assembled key, "l:<live index>" for live inputs, None for synthetic results
    estimated_tokens: int  # final serialized estimate
    engine_outcome: str  # "assembled" or "live-fallback:<reason>"
    stages: dict[str, Any]  # "promptRecall", "volatileAppend", "serializedClamp" in parity shape
    live_decisions: list[Decision]
    item_updates: dict[str, dict[str, Any]]
    protected_pairs: list[tuple[str, str, str]]  # (call item key, result item key, why protected)
    warnings: list[str] = field(default_factory=list)
    serialized_tokens: dict[str, int] = field(default_factory=dict)  # assembled item key → its serialized size
    # what the serialized clamp removed (item key → "clamped" | "prefill-stripped"), and the reason of each
    clamp_outcomes: dict[str, str] = field(default_factory=dict)
    clamp_reasons: dict[str, str] = field(default_factory=dict)
    fallback_why: str | None = None  # the live transcript was sent instead: why, in words
    notes: list[str] = field(default_factory=list)  # what ctxview could not reproduce, for people (not engine logs)


def resolve_budget(value: Any, cap: Any = None) -> int:
    """§9.1: floor of a finite positive budget, else 128000; then the optional cap."""
    number = value.value if isinstance(value, JSNumber) else value
    budget = ENGINE_DEFAULT_BUDGET
    if isinstance(number, (int, float)) and not isinstance(number, bool) and math.isfinite(number) and number > 0:
        budget = math.floor(number)
    if isinstance(cap, (int, float)) and not isinstance(cap, bool) and math.isfinite(cap) and cap > 0:
        budget = min(budget, math.floor(cap))
    return budget


@dataclass(frozen=True, slots=True)
class EngineState:
    """What the engine reads besides the assembled context and the live window (§9.2, §10.3, §10.5, §10.6)."""

    conversation_id: int | None = None
    stub_large_tool_payloads: bool = False  # §9.2 step 3: large live tool results become file references
    maintenance: Mapping[str, Any] | None = None  # conversation_compaction_maintenance row (§10.5)
    stored_context_tokens: Any = 0  # Σ stored token_count of the context items: the degrade gate's pressure
    bootstrap_state: Mapping[str, Any] | None = None  # conversation_bootstrap_state row (§10.6, 0.15 only)
    recall_search: RecallSearchFn | None = None  # the conversation's message search (§10.3); None: no cue
    recall_ordinals: Mapping[int, int] = field(default_factory=dict)  # message id → its context ordinal
    drain: DrainPrediction | None = None  # the §10.5 emergency compaction replayed for this budget (None: not run)

    def fork_source_count(self, rules: EngineRules) -> int | None:
        """The fork's parent message count when the conversation is fork-bounded under ``rules``, else None."""
        row = self.bootstrap_state
        if not rules.fork_bounded or row is None or not _is_one(row.get("fork_bounded")):
            return None
        count = row.get("fork_source_message_count")
        if isinstance(count, (int, float)) and not isinstance(count, bool) and math.isfinite(count) and count >= 0:
            return math.floor(count)
        return 0


def _is_one(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1


def reconcile(
    assembled: list[Any],
    assembled_keys: list[str | None],
    assembler_estimate: int,
    protection_hashes: list[str],
    *,
    live_messages: list[Any] | None,
    token_budget: int,
    prompt: str | None,
    available_tools: list[str] | None,
    context_item_count: int,
    has_summary_items: bool,
    rules: EngineRules = RULES_0_15,
    state: EngineState | None = None,
    lookup_miss: str | None = None,
    assembler_error: JSError | None = None,
    max_assembly_token_budget: int | None = None,
    budget_resolved: bool = False,
    session_id: str | None = None,
    memo: SerializedCache | None = None,
) -> EngineResult:
    """§9.2: the engine's post-assembly reconciliation, with a trace of its effects.

    The steps run in the engine's order, so the first fallback that applies is the one
    reported.  ``lookup_miss`` says why the session lookup found no conversation (the engine
    then returns the live transcript untouched); ``assembler_error`` is what the assembler
    threw, if it did.  ``memo`` carries per-message values (serialized tokens, hashes,
    pairing ids) from one run to the next; it must measure with ``rules``' estimate.
    """
    state = state or EngineState()
    live = list(live_messages or [])
    host_separate = prompt is not None and available_tools is not None
    context = _LogContext(state.conversation_id, session_id)
    tokens = memo if memo is not None else SerializedCache(estimate=rules.serialized_tokens())
    fallback = _Fallbacks(live, host_separate, assembled_keys, context, rules, tokens)
    if lookup_miss is not None:
        return fallback.safe(lookup_miss)
    # ``budget_resolved``: the caller already applied the engine's rule (a params file's 0.5 is 0, not the default)
    fallback.budget = token_budget if budget_resolved else resolve_budget(token_budget, max_assembly_token_budget)
    intercepted: InterceptResult | None = None
    if state.stub_large_tool_payloads:
        from ctxview.assembly.live_intercept import intercept_large_live_tool_results

        try:
            intercepted = intercept_large_live_tool_results(live, conversation_id=state.conversation_id or 0)
        except JSError as exc:  # the error fallback still sends the original window
            return fallback.bounded(f"assemble-error:{exc.js_text}")
        live = fallback.live = intercepted.messages
    result = _after_interception(
        fallback,
        assembled,
        assembled_keys,
        assembler_estimate,
        protection_hashes,
        live,
        prompt,
        host_separate,
        context_item_count,
        has_summary_items,
        rules,
        state,
        context,
        tokens,
        assembler_error,
    )
    if intercepted is not None and intercepted.changed:
        _note_interceptions(result, intercepted)
    return result


def _after_interception(
    fallback: _Fallbacks,
    assembled: list[Any],
    assembled_keys: list[str | None],
    assembler_estimate: int,
    protection_hashes: list[str],
    live: list[Any],
    prompt: str | None,
    host_separate: bool,
    context_item_count: int,
    has_summary_items: bool,
    rules: EngineRules,
    state: EngineState,
    context: _LogContext,
    tokens: SerializedCache,
    assembler_error: JSError | None,
) -> EngineResult:
    """§9.2 steps 4–17, on the (possibly rewritten) live window."""
    budget = fallback.budget
    drain = state.drain  # the replayed emergency compaction, when the pipeline ran it
    degrade = deferred_degrade_decision(
        state.stored_context_tokens,
        state.maintenance,
        budget,
        conversation_id=state.conversation_id,
        drain=drain.assumption if drain is not None else "exhausted",
        drained_context_tokens=drain.pressure_after if drain is not None else None,
        drain_note=drain.note(budget) if drain is not None else None,
    )
    if degrade.reason is not None:
        return fallback.degraded(degrade)
    fork_count = state.fork_source_count(rules)
    if context_item_count == 0:
        return (
            fallback.fork("no-context-items", fork_count)
            if fork_count is not None
            else fallback.bounded("no-context-items")
        )
    if not has_summary_items and context_item_count < len(live) and fork_count is None:
        return fallback.bounded("coverage-trails-live")
    if assembler_error is not None:
        return fallback.bounded(f"assemble-error:{assembler_error.js_text}")
    try:
        path = _NormalPath(
            assembled,
            assembled_keys,
            assembler_estimate,
            protection_hashes,
            live,
            budget,
            host_separate,
            context,
            rules,
            tokens,
            state,
        )
        if fork_count is not None:
            path.append_fork_suffix(fork_count)
        if live and not path.messages:
            if fork_count is not None:
                return fallback.fork("empty-assembled-output", fork_count)
            return fallback.bounded("empty-assembled-output")
        if live and not any(isinstance(m, dict) and m.get("role") == "user" for m in path.messages):
            if fork_count is not None:
                return fallback.fork("no-user-turns", fork_count)
            return fallback.bounded("no-user-turns")
        result = path.finish(prompt)
    except JSError as exc:  # the engine catches what it throws and sends the live transcript
        return fallback.bounded(f"assemble-error:{exc.js_text}")
    except Exception as exc:  # a failure of ours: show it plainly, and still the engine's fallback
        result = fallback.bounded("assemble-error")
        result.warnings.insert(0, f"[ctxview] engine step failed ({type(exc).__name__}: {exc})")
    return result


def _note_interceptions(result: EngineResult, intercepted: InterceptResult) -> None:
    """Say on each rewritten live input that the model got a file reference instead of its payload."""
    by_index = {item.index: item for item in intercepted.intercepted}
    for decision in result.live_decisions:
        item = by_index.get(decision.live_index) if decision.live_index is not None else None
        if item is not None:
            decision.reason = f"{decision.reason}; large tool output {item.describe()}"


# --- the normal path -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _LogContext:
    conversation_id: int | None
    session_id: str | None

    def prefix(self) -> str:
        parts = []
        if self.conversation_id is not None:
            parts.append(f"conversation={self.conversation_id}")
        if self.session_id is not None:
            parts.append(f"session={self.session_id}")
        return "".join(" " + p for p in parts)


def _flag(value: bool) -> str:
    return "true" if value else "false"


class _NormalPath:
    """Steps 8–17 of §9.2 once the engine has an assembled context: fork suffix, recall cue, volatile, clamp."""

    def __init__(
        self,
        assembled: list[Any],
        assembled_keys: list[str | None],
        assembler_estimate: int,
        protection_hashes: list[str],
        live: list[Any],
        budget: int,
        host_separate: bool,
        context: _LogContext,
        rules: EngineRules,
        tokens: SerializedCache,
        state: EngineState,
    ) -> None:
        self.messages = assembled
        self.keys = list(assembled_keys)
        self._built_pairs: tuple[list[Any], PairIndex] | None = None
        self._known_tokens: tuple[list[Any], list[int]] | None = None
        self.estimate = assembler_estimate
        self.protection_hashes = protection_hashes
        self.live = live
        self.budget = budget
        self.host_separate = host_separate
        self.context = context
        self.rules = rules
        self.tokens = tokens
        self.state = state
        self.fork: ForkAppendResult | None = None
        self.assembled_keys = list(assembled_keys)  # before the fork suffix: what fork evictions refer to
        self.warnings: list[str] = []

    def append_fork_suffix(self, fork_count: int) -> None:
        """§10.6: the fork's own live messages after the assembled context, evicting from the front to fit."""
        fork = append_fork_live_suffix(
            self.messages,
            self.estimate,
            self.live,
            fork_count,
            self.budget,
            preserve_substantive_tail=self.host_separate,
            tokens_of=self.tokens,
            conversation_id=self.state.conversation_id,
        )
        self.fork = fork
        keys = self.keys
        self.keys = [keys[i] if kind == "a" else f"l:{i}" for kind, i in fork.sources]
        self.messages = fork.messages
        self.estimate = fork.estimated_tokens
        if fork.log_line is not None and fork.log_line.level == "warn":
            self.warnings.append(fork.log_line.text)

    def _cue(self, prompt: str | None) -> RecallCue | None:
        """§10.3: the recall cue, or None (a failed recall is logged and assembly goes on)."""
        search = self.state.recall_search
        try:
            coverage = recall_coverage_messages(self.live)
            if prompt is None or search is None:
                return None
            return build_prompt_recall_cue(prompt, self.messages, coverage, search)
        except Exception as exc:  # the engine logs a failed recall and assembles without it
            label = f"session={self.context.session_id}"
            self.warnings.append(f"[lcm] assemble: prompt recall failed for {label}: {exc}")
            return None

    def _seeds(self, with_cue: bool, messages: list[Any]) -> set[int]:
        seeds = protected_by_hash(self.tokens.h16_of_all(messages), self.protection_hashes)
        shift = 1 if with_cue else 0
        if with_cue:
            seeds.add(0)
        if self.fork is not None:
            seeds.update(index + shift for index in self.fork.protected_indexes)
        return seeds

    def _volatile(self, messages: list[Any], estimate: int, seeds: set[int]) -> VolatileResult:
        return append_volatile_inputs(
            messages,
            estimate,
            self.live,
            seeds,
            self.budget,
            sanitize=sanitize_tool_use_result_pairing_keyed,
            normalize=normalize_live_message,
            tokens=self.tokens,
            pairs=self._pairs(messages),
        )

    def _pairs(self, messages: list[Any]) -> PairIndex:
        """The pair index of ``messages``; the result step asks again for the list the volatile step read
        (an index is never modified once built, and the list is not either)."""
        built = self._built_pairs
        if built is None or built[0] is not messages:
            built = self._built_pairs = (messages, PairIndex.build(messages, self.tokens))
        return built[1]

    def _tokens_of(self, messages: list[Any]) -> list[int]:
        """The serialized tokens of each of ``messages`` (read only); the result step asks again for the list
        the clamp read (a list is not modified once the engine has it)."""
        known = self._known_tokens
        if known is None or known[0] is not messages:
            known = self._known_tokens = (messages, self.tokens.tokens_of_all(messages))
        return known[1]

    def _clamp(self, messages: list[Any], per_message: list[int] | None = None) -> ClampResult:
        return clamp_to_serialized_budget(
            messages,
            self.budget,
            preserve=self.host_separate,
            tokens_of=self.tokens,
            per_message=per_message,
            trigger_at_target=self.rules.clamp_triggers_at_target,
        )

    def finish(self, prompt: str | None) -> EngineResult:
        cue = self._cue(prompt)  # recall reads `"content" in m` of every live entry too, but logs the throw
        require_objects(self.live)  # the volatile step reads it next and does not catch
        recall = _RecallRecord(cue)
        base, base_keys, base_estimate = self.messages, self.keys, self.estimate
        messages, keys, estimate = base, base_keys, base_estimate
        if cue is not None and base_estimate + cue.token_count <= self.budget:
            messages = [cue.message, *base]
            keys = [RECALL_KEY, *base_keys]
            estimate = base_estimate + cue.token_count
            recall.included = True
        seeds = self._seeds(recall.included, messages)
        volatile = self._volatile(messages, estimate, seeds)
        if recall.included and (volatile.over_budget or volatile.evicted_messages > 0):
            recall.included, recall.dropped_for_volatile = False, True
            messages, keys, estimate = base, base_keys, base_estimate
            seeds = self._seeds(False, messages)
            volatile = self._volatile(messages, estimate, seeds)
        volatile_keys = _keys_of(volatile, keys, messages)
        # (nothing appended or evicted: the volatile step's messages are ``messages``, the same objects in order)
        volatile_tokens = self._tokens_of(messages if volatile.unchanged else volatile.messages)
        clamp = self._clamp(volatile.messages, volatile_tokens)
        clamp_keys = volatile_keys
        if clamp.clamped and recall.included and cue is not None:
            kept = [i for i, m in enumerate(volatile.messages) if m is not cue.message]
            if len(kept) < len(volatile.messages):
                recall.included, recall.dropped_for_clamp = False, True
                clamp_keys = [volatile_keys[i] for i in kept]
                clamp = self._clamp([volatile.messages[i] for i in kept], [volatile_tokens[i] for i in kept])
        final_keys = [clamp_keys[i] for i in clamp.final_indexes] if clamp.clamped else list(clamp_keys)
        return self._result(messages, keys, estimate, seeds, volatile, volatile_keys, clamp, final_keys, recall)

    def _result(
        self,
        assembled: list[Any],
        assembled_keys: list[str | None],
        estimate: int,
        seeds: set[int],
        volatile: VolatileResult,
        volatile_keys: list[str | None],
        clamp: ClampResult,
        final_keys: list[str | None],
        recall: _RecallRecord,
    ) -> EngineResult:
        context = self.context
        warnings = self.warnings
        if volatile.appended_messages > 0 and (volatile.evicted_messages > 0 or volatile.over_budget):
            warnings.append(
                "[lcm] assemble: appended unpersisted volatile live input"
                f"{context.prefix()} appendedMessages={volatile.appended_messages}"
                f" appendedTokens={volatile.appended_tokens} evictedMessages={volatile.evicted_messages}"
                f" evictedTokens={volatile.evicted_tokens} overBudget={_flag(volatile.over_budget)}"
            )
        if clamp.clamped:
            warnings.append(
                "[lcm] assemble: serialized budget clamp"
                f"{context.prefix()} serializedTokensBefore={clamp.tokens_before}"
                f" serializedTokens={clamp.tokens} internalEstimatedTokens={volatile.estimated_tokens}"
                f" evictedMessages={clamp.evicted} tokenBudget={self.budget} clamped=true"
                f" overBudget={_flag(clamp.over_budget)}"
            )
        stages = {
            "promptRecall": recall.stage(),
            "volatileAppend": _volatile_stage(volatile, seeds, assembled, estimate, clamp.messages),
            "serializedClamp": clamp.stage(self.budget, self.host_separate),
        }
        trace = _EngineTrace(
            assembled,
            assembled_keys,
            self.live,
            volatile,
            clamp,
            volatile_keys,
            final_keys,
            self.budget,
            self.tokens,
            self._pairs(assembled),
            self.rules,
        )
        assembled_tokens = self._tokens_of(assembled)
        serialized = dict(zip(assembled_keys, assembled_tokens, strict=False))
        serialized.pop(None, None)  # type: ignore[call-overload]
        serialized.pop(RECALL_KEY, None)
        live_decisions = trace.live_decisions()
        item_updates = trace.item_updates()
        if self.fork is not None:
            _apply_fork(self.fork, live_decisions, item_updates, self.assembled_keys)
        extra = recall.decision(final_keys, self.state.recall_ordinals)
        clamp_outcomes = trace.clamp_outcomes()  # (a new dict: the cue's own entry is dropped in place)
        clamp_outcomes.pop(RECALL_KEY, None)
        return EngineResult(
            messages=clamp.messages,
            message_keys=final_keys,
            estimated_tokens=clamp.tokens,
            engine_outcome="assembled",
            stages=stages,
            live_decisions=[*([extra] if extra is not None else []), *live_decisions],
            item_updates=item_updates,
            protected_pairs=trace.protected_pairs(),
            warnings=warnings,
            serialized_tokens=serialized,  # type: ignore[arg-type]
            clamp_outcomes=clamp_outcomes,
            clamp_reasons=trace.clamp_reasons(),
        )


class _RecallRecord:
    """The prompt-recall cue's fate through the volatile step and the clamp (§10.3, §9.2 steps 12–16)."""

    def __init__(self, cue: RecallCue | None) -> None:
        self.cue = cue
        self.included = False
        self.dropped_for_volatile = False
        self.dropped_for_clamp = False

    def stage(self) -> dict[str, Any]:
        cue = self.cue
        if cue is None:
            return dict(PROMPT_RECALL_NOT_BUILT)
        return {
            "cueBuilt": True,
            "cueIncluded": self.included,
            "cueDroppedForVolatile": self.dropped_for_volatile,
            "cueDroppedForClamp": self.dropped_for_clamp,
            "cueTokenCount": cue.token_count,
            "cueMessage": cue.message,
        }

    def decision(self, final_keys: list[str | None], ordinals: Mapping[int, int]) -> Decision | None:
        """The cue's own row in the trace: what it recalls, and whether the model gets it."""
        cue = self.cue
        if cue is None:
            return None
        recalled = []
        for identifier, message_ids in cue.message_ids_by_identifier().items():
            where = ", ".join(
                f"ordinal {ordinals[m]}" if m in ordinals else f"message {m} (summarized)" for m in message_ids
            )
            recalled.append(f"{identifier} was evicted ({where})")
        what = "recall cue: " + "; ".join(recalled)
        outcome: Outcome
        if self.included:
            outcome, reason = "recall-cue", f"{what}; put first"
        elif self.dropped_for_volatile:
            outcome, reason = "recall-dropped", f"{what}; dropped to make room for a volatile live input"
        elif self.dropped_for_clamp:
            outcome, reason = "recall-dropped", f"{what}; dropped before the serialized clamp cut real context"
        else:
            outcome, reason = "recall-dropped", f"{what}; its {cue.token_count} tokens did not fit the budget"
        position = final_keys.index(RECALL_KEY) if RECALL_KEY in final_keys else None
        return recall_decision(
            cue.message["content"], cue.token_count, outcome=outcome, reason=reason, output_index=position
        )


def _apply_fork(
    fork: ForkAppendResult,
    live_decisions: list[Decision],
    item_updates: dict[str, dict[str, Any]],
    assembled_keys: list[str | None],
) -> None:
    """What the fork suffix did, on the live inputs it appended and the assembled items it pushed out."""
    appended = {index for kind, index in fork.sources if kind == "l"}
    for decision in live_decisions:
        li = decision.live_index
        if li is None:
            continue
        if li in appended:
            decision.outcome = "appended" if decision.output_index is not None else "live-dropped"  # type: ignore[assignment]
            decision.reason = (
                "fork live suffix: appended after the assembled context (fork-bounded conversation)"
                if decision.output_index is not None
                else "fork live suffix: appended, then cut by the serialized clamp"
            )
        elif li in fork.live_fates and fork.live_fates[li].outcome != "not-appended":
            decision.outcome = "live-dropped"  # type: ignore[assignment]
            decision.reason = fork.live_fates[li].reason
    for index, fate in fork.assembled_fates.items():
        key = assembled_keys[index] if index < len(assembled_keys) else None
        if key is not None:
            item_updates.setdefault(key, {}).update(outcome="evicted-for-live", reason=fate.reason)


def _keys_of(volatile: VolatileResult, keys: list[str | None], messages: list[Any]) -> list[str | None]:
    """The decision key of every message the volatile step returned."""
    if volatile.unchanged and len(keys) == len(messages):
        return list(keys)
    out: list[str | None] = []
    for source in volatile.sources:
        if source is None:
            out.append(None)
        else:
            kind, index = source
            out.append(keys[index] if kind == "a" else f"l:{index}")
    return out


def _volatile_stage(
    volatile: VolatileResult,
    seeds: set[int],
    assembled: list[Any],
    assembler_estimate: int,
    final: list[Any],
) -> dict[str, Any]:
    stage: dict[str, Any] = {
        "volatileLiveIndexes": list(volatile.marker_indexes),
        "protectedAssembledIndexes": sorted(seeds),
        "inputMessageCount": len(assembled),
        "inputEstimatedTokens": assembler_estimate,
        "appendedMessages": volatile.appended_messages,
        "appendedTokens": volatile.appended_tokens,
        "evictedMessages": volatile.evicted_messages,
        "evictedTokens": volatile.evicted_tokens,
        "overBudget": volatile.over_budget,
        "estimatedTokens": volatile.estimated_tokens,
    }
    if _same_messages(volatile.messages, final):
        stage["messages"], stage["messagesSameAs"] = None, "final"
    elif volatile.unchanged and len(volatile.messages) == len(assembled):  # (its copy of them: the same objects)
        stage["messages"], stage["messagesSameAs"] = None, "assembler"
    elif _same_messages(volatile.messages, assembled):
        stage["messages"], stage["messagesSameAs"] = None, "assembler"
    else:
        stage["messages"], stage["messagesSameAs"] = list(volatile.messages), None
    return stage


def _same_messages(left: list[Any], right: list[Any]) -> bool:
    if len(left) != len(right):
        return False
    if all(map(operator.is_, left, right)):
        return True
    return js_stringify(left) == js_stringify(right)


# --- trace of the normal path ------------------------------------------------------------------


def _volatile_kind(message: Any, structural: bool) -> str:
    content = stored_content(message)
    if is_volatile_content(content):
        if any(js_trim(line) == RETRY_MARKER for line in js_trim_start(content).replace("\r\n", "\n").split("\n")):
            return "retry prompt"
        if normalize_overlap_text(content).startswith("[inter-session message]"):
            return "inter-session message"
        return "internal task-completion event"
    return "decorated current turn" if structural else "volatile input"


class _EngineTrace:
    """Turns the volatile and clamp results into decisions and item updates."""

    def __init__(
        self,
        assembled: list[Any],
        assembled_keys: list[str | None],
        live: list[Any],
        volatile: VolatileResult,
        clamp: ClampResult,
        volatile_keys: list[str | None],
        final_keys: list[str | None],
        budget: int,
        tokens: SerializedCache,
        pairs: PairIndex,
        rules: EngineRules = RULES_0_15,
    ) -> None:
        self.rules = rules
        self.assembled = assembled
        self.keys = assembled_keys
        self.live = live
        self.volatile = volatile
        self.clamp = clamp
        self.volatile_keys = volatile_keys
        self.final_keys = final_keys
        self.budget = budget
        self.tokens = tokens
        self.pairs = pairs

    def _asm_key(self, index: int) -> str:
        key = self.keys[index] if index < len(self.keys) else None
        return key if key is not None else f"assembled #{index}"

    def _asm_name(self, index: int) -> str:
        """The assembled message at ``index`` as a person names it in a reason."""
        return describe_key(self._asm_key(index))

    def live_decisions(self) -> list[Decision]:
        if not self.live:
            return []
        volatile = self.volatile
        # (a key's last position, read for live keys only: built at C speed, the None key is never asked for)
        final_pos = dict(zip(self.final_keys, range(len(self.final_keys)), strict=True))
        exact_by_live = {li: ai for ai, li in volatile.exact_anchor.items()}
        appended = set(volatile.appended)
        restored = {li: ev for ev in volatile.evictions for li in ev.restored}
        decisions: list[Decision] = []
        for li, raw in enumerate(self.live):
            normalized = volatile.normalized_live[li] if li < len(volatile.normalized_live) else raw
            key = f"l:{li}"
            covered_by: str | None = None
            output_index = final_pos.get(key)
            outcome: Outcome
            if li in volatile.covered:
                outcome = "covered"
                covered_by = self._asm_key(volatile.covered[li])
                reason = (
                    f"volatile input already in the context as {describe_key(covered_by)} (same signature); "
                    "not appended"
                )
            elif li in appended:
                kind = _volatile_kind(normalized, li == volatile.structural_index)
                if output_index is None:
                    outcome = "live-dropped"
                    reason = f"{kind} appended by the engine, then cut by the serialized clamp"
                else:
                    outcome = "appended"
                    where = self._neighbour(output_index)
                    if li in restored:
                        gone = ", ".join(self._asm_name(i) for i in restored[li].indexes)
                        reason = f"{kind}: its covering copy was evicted ({gone}), so it is appended {where}"
                    else:
                        reason = f"{kind} not in the stored context: appended {where}"
            else:
                outcome = "live-ignored"
                reason = self._ignored_reason(li, normalized, exact_by_live)
            decisions.append(
                live_decision(
                    li,
                    normalized,
                    stored=raw,
                    outcome=outcome,
                    reason=reason,
                    output_index=output_index,
                    tokens=stored_token_count(normalized),
                    serialized_tokens=self.tokens(normalized),
                    covered_by=covered_by,
                )
            )
        return decisions

    def _neighbour(self, output_index: int) -> str:
        if output_index == 0:
            return "at the start"
        before = self.final_keys[output_index - 1]
        return f"after {describe_key(before)}" if before is not None else "after a synthetic tool result"

    def _ignored_reason(self, li: int, message: Any, exact_by_live: dict[int, int]) -> str:
        if li in exact_by_live:
            return f"already persisted: same message as {self._asm_name(exact_by_live[li])}"
        role = stored_role(message)
        if role not in ("user", "system"):
            return f"{role} message: only user turns can be volatile inputs; assumed persisted"
        return "no volatile marker and not the decorated current turn: assumed persisted"

    def item_updates(self) -> dict[str, dict[str, Any]]:
        volatile = self.volatile
        updates: dict[str, dict[str, Any]] = {}
        # a key's last assembled occurrence speaks for it (serialized sizes: EngineResult.serialized_tokens)
        protected = self._protected_indexes()
        is_last = self._last_occurrence_test(protected)
        for index in protected:
            key = self.keys[index] if 0 <= index < len(self.keys) else None
            if key is None or not is_last(key, index):
                continue
            why = self._protection(index)
            if why is not None:
                updates[key] = {"protected": why}
        first = volatile.first_uncovered
        for eviction in volatile.evictions:
            if not first:
                break
            forcing = f"l:{first[0]}"
            others = len(first) - 1
            with_others = f" with {others} other input{'s' if others != 1 else ''}" if others else ""
            group = [self._asm_key(i) for i in eviction.indexes]
            forcing_name = describe_key(forcing)
            for index in eviction.indexes:
                key = self.keys[index]
                if key is None:
                    continue
                partners = [k for k in group if k != key]
                pair_note = (
                    f"; evicted together with its tool partner{'s' if len(partners) > 1 else ''} "
                    + ", ".join(describe_key(k) for k in partners)
                    if partners
                    else ""
                )
                updates.setdefault(key, {}).update(
                    outcome="evicted-for-live",
                    evicted_by=forcing,
                    reason=(
                        f"evicted to make room for {forcing_name}{with_others}: the context came to "
                        f"{eviction.estimate_after:,} serialized tokens after this eviction (budget {self.budget:,})"
                        f"{pair_note}"
                    ),
                )
        return updates

    def _last_occurrence_test(self, indexes: list[int]) -> Callable[[str, int], bool]:
        """``(key, index)`` → whether ``index`` is ``key``'s last position among the assembled messages' keys.

        For the few indexes asked about (the protected ones, mostly in the fresh tail at the end) a scan of
        the keys after each is cheaper than a map of 100,000 keys; the map when the scans would cost more.
        """
        keys = self.keys
        limit = min(len(keys), len(self.assembled))
        if sum(limit - index for index in indexes if 0 <= index < limit) > limit:
            last = dict(zip(keys, range(limit), strict=False))
            return lambda key, index: last.get(key) == index
        return lambda key, index: index < limit and key not in keys[index + 1 : limit]

    def clamp_outcomes(self) -> dict[str, str]:
        """Assembled item key → "clamped" or "prefill-stripped", for what the serialized clamp removed."""
        clamp = self.clamp
        outcomes: dict[str, str] = {}
        if not clamp.clamped:
            return outcomes
        kept = set(clamp.kept_indexes)
        keys = self.volatile_keys
        for position in sorted(set(range(len(keys))).difference(clamp.final_indexes)):
            key = keys[position]
            if key is not None and key[:2] != "l:":
                outcomes[key] = "prefill-stripped" if position in kept else "clamped"
        return outcomes

    def clamp_reasons(self) -> dict[str, str]:
        """The reason of each clamp outcome (one text per run)."""
        clamp = self.clamp
        target = max(1, math.floor(self.budget * 0.9))
        return {
            "prefill-stripped": "trailing assistant message removed after the clamp (the turn must end on a user)",
            "clamped": (
                f"cut by the serialized clamp: {clamp.tokens_before:,} serialized tokens exceeded "
                f"{'90 % of ' if self.rules.clamp_triggers_at_target else ''}the budget {self.budget:,}; only the "
                f"newest messages fitting {target:,} were kept"
            ),
        }

    def _protected_indexes(self) -> list[int]:
        """Assembled indexes protected by the fresh tail or a live anchor (with their tool partners), ascending."""
        return sorted({*self.volatile.protected, *self.volatile.exact_protected})

    def _protection(self, index: int) -> str | None:
        volatile = self.volatile
        if index in volatile.protected:
            partner = volatile.protected[index]
            return "fresh tail" if partner is None else f"tool partner of {self._asm_name(partner)}"
        if index in volatile.exact_protected:
            partner = volatile.exact_protected[index]
            return "live anchor" if partner is None else f"tool partner of {self._asm_name(partner)}"
        return None

    def protected_pairs(self) -> list[tuple[str, str, str]]:
        volatile = self.volatile
        pairs: list[tuple[str, str, str]] = []
        for index in self._protected_indexes():
            call_ids = self.pairs.call_ids[index] if 0 <= index < len(self.pairs.call_ids) else ()
            if not call_ids:
                continue
            if index in volatile.protected:
                why = "fresh tail"
            elif index in volatile.exact_protected:
                why = "live anchor"
            else:
                continue
            call_key = self.keys[index]
            if call_key is None:
                continue
            for call_id in call_ids:
                for result_index in self.pairs.results_by_id.get(call_id, ()):
                    result_key = self.keys[result_index]
                    if result_key is not None:
                        pairs.append((call_key, result_key, why))
        return pairs


# --- fallbacks -------------------------------------------------------------------------------------

_FALLBACK_WHY = {
    "no-context-items": "the conversation has no context items",
    "coverage-trails-live": "the conversation has no summaries and fewer context items than the live window",
    "empty-assembled-output": "the assembler returned no messages",
    "no-user-turns": "the assembled context has no user turn",
    "assemble-error": "the engine failed while assembling",
}


def fallback_why(reason: str) -> str:
    """The engine's fallback reason in words (``assemble-error:RangeError: …`` keeps the error text)."""
    if reason.startswith("assemble-error:"):
        return f"the engine threw {reason.removeprefix('assemble-error:')}"
    if reason.startswith("degraded:"):
        return f"deferred compaction is pending ({reason.removeprefix('degraded:')})"
    return _FALLBACK_WHY.get(reason, reason)


class _Fallbacks:
    """The engine's ways of sending the live transcript instead of the assembled context."""

    def __init__(
        self,
        live: list[Any],
        host_separate: bool,
        assembled_keys: Sequence[str | None],
        context: _LogContext,
        rules: EngineRules,
        tokens: SerializedCache,
    ) -> None:
        self.live = live
        self.host_separate = host_separate
        self.assembled_keys = assembled_keys
        self.context = context
        self.rules = rules
        self.tokens = tokens
        self.budget = ENGINE_DEFAULT_BUDGET

    def safe(self, why: str) -> EngineResult:
        """The live list with its trailing assistant prefill stripped, estimate 0 (no lookup, no clamp)."""
        kept = strip_trailing_prefill(self.live, preserve=self.host_separate)
        return self._result("safe-fallback", why, kept, list(range(len(kept))), 0, None)

    def bounded(self, reason: str) -> EngineResult:
        """The safe fallback, then the serialized clamp; the estimate is the clamp's."""
        safe = strip_trailing_prefill(self.live, preserve=self.host_separate)
        clamp = clamp_to_serialized_budget(
            safe,
            self.budget,
            preserve=self.host_separate,
            tokens_of=self.tokens,
            trigger_at_target=self.rules.clamp_triggers_at_target,
        )
        result = self._result(
            reason, fallback_why(reason), clamp.messages, clamp.final_indexes, clamp.tokens, (len(safe), clamp)
        )
        result.stages["fallbackClamp"] = clamp.stage(self.budget, self.host_separate)
        return result

    def degraded(self, decision: DegradeDecision) -> EngineResult:
        """§10.5: deferred compaction is pending and the stored context presses on the budget."""
        degraded = degraded_live_result(
            self.live, self.budget, preserve_substantive_tail=self.host_separate, tokens_of=self.tokens
        )
        reason = f"degraded:{decision.reason}"
        result = self._result(
            reason,
            fallback_why(reason),
            degraded.messages,
            degraded.live_indexes,
            degraded.estimated_tokens,
            None,
            fates={li: fate.reason for li, fate in degraded.live_fates.items()},
        )
        result.warnings[:0] = [line.text for line in decision.log_lines if line.level == "warn"]
        result.warnings.append(degraded_log_line(decision, degraded, conversation_id=self.context.conversation_id).text)
        if decision.note:
            result.notes.append(decision.note)
        return result

    def fork(self, trigger: str, fork_count: int) -> EngineResult:
        """§10.6: a fork-bounded conversation sends its own live suffix, bounded, instead of the live window."""
        fork = fork_live_fallback(
            self.live,
            fork_count,
            self.budget,
            preserve_substantive_tail=self.host_separate,
            tokens_of=self.tokens,
            trigger=trigger,  # type: ignore[arg-type]
            conversation_id=self.context.conversation_id,
        )
        reason = f"fork-bounded:{trigger}"
        return self._result(
            reason,
            f"the fork-bounded conversation sends its live suffix ({_FALLBACK_WHY.get(trigger, trigger)})",
            fork.messages,
            fork.live_indexes,
            fork.estimated_tokens,
            None,
            fates={li: fate.reason for li, fate in fork.live_fates.items()},
        )

    def _result(
        self,
        reason: str,
        why: str,
        messages: list[Any],
        live_positions: list[int],
        estimated: int,
        clamped: tuple[int, ClampResult] | None,
        fates: Mapping[int, str] | None = None,
    ) -> EngineResult:
        shown = {pos: out for out, pos in enumerate(live_positions)}
        decisions: list[Decision] = []
        for li, message in enumerate(self.live):
            output_index = shown.get(li)
            outcome: Outcome
            if fates is not None and li in fates:
                outcome = "appended" if output_index is not None else "live-dropped"
                text = f"live transcript fallback ({why}): {fates[li]}"
            elif output_index is not None:
                outcome, text = "appended", f"engine fell back to the live transcript: {why}"
            elif clamped is None or li >= clamped[0] or li in clamped[1].kept_indexes:
                outcome = "live-dropped"
                text = f"live transcript fallback ({why}); removed as trailing assistant prefill"
            else:
                outcome, text = "live-dropped", f"live transcript fallback ({why}); cut by the serialized clamp"
            decisions.append(
                live_decision(li, message, stored=message, outcome=outcome, reason=text, output_index=output_index)
            )
        updates = {
            key: {
                "outcome": "evicted-for-live",
                "reason": f"the engine sent the live transcript instead of the assembled context: {why}",
            }
            for key in self.assembled_keys
            if key is not None
        }
        return EngineResult(
            messages=list(messages),
            message_keys=[f"l:{pos}" for pos in live_positions],
            estimated_tokens=estimated,
            engine_outcome=f"live-fallback:{reason}",
            stages={"promptRecall": None, "volatileAppend": None, "serializedClamp": None},
            live_decisions=decisions,
            item_updates=updates,
            protected_pairs=[],
            warnings=[f"[lcm] assemble: live transcript fallback{self.context.prefix()} reason={reason}"],
            fallback_why=why,
        )
