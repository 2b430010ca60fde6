"""The engine's deferred-compaction degrade (spec §10.5) and fork-bounded paths (§10.6), as pure functions.

Both replace or extend the normal engine step on conversations whose database
carries extra state: a pending compaction debt (``conversation_compaction_maintenance``)
or a fork-bounded bootstrap (``conversation_bootstrap_state``).  The functions
here take the values the store read and return what the engine would send,
plus what the trace needs to explain it: which live or assembled messages were
kept, evicted or appended and why, and the engine's own log lines.

Every size is the serialized estimate of one message through ``tokens_of``
(pluggable because the 1.0 line changed it); lists are measured as the sum of
their messages, as the engine does.

The gate's pressure is the store's context token count: the SQL sum of the
stored ``token_count`` of the message or summary row behind every context item
of the conversation (inner joins, so a dangling item adds nothing; 0 without
items).  It is not the assembler's estimate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ctxview.assembly.clamp import TokenFn, strip_trailing_prefill
from ctxview.assembly.live import (
    live_signature,
    normalize_live_message,
    stored_content,
    stored_role,
    stored_token_count,
)
from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.jserrors import require_objects
from ctxview.jsjson import js_string

# --- constants the engine uses ------------------------------------------------------------------

DEFERRED_PRESSURE_RATIO = 0.75  # degrade when stored context > floor(0.75 × budget)
ASSEMBLE_FORCE_MAX_RETRY_ATTEMPTS = 3  # from this many failed attempts on, the emergency drain respects backoff
DEFAULT_LEAF_CHUNK_TOKENS = 20_000  # config default of leafChunkTokens
DEFAULT_BOOTSTRAP_MAX_TOKENS = 6_000  # config default of bootstrapMaxTokens: max(6000, floor(20000 × 0.3))
PREASSEMBLY_PROMPT_AUTHORITY = "preassembly_may_overflow"  # promptAuthority of a degraded result

DegradeReason = Literal["near-budget", "emergency-debt-still-pending", "emergency-debt-exhausted"]
# What the emergency compaction ends in (ctxview.assembly.drain replays it):
#   "exhausted"     nothing it could compact: the debt is cleared and the engine degrades;
#   "still-pending" it compacted too little, failed or was skipped: the debt stays, the stored context is
#                   still over 75 % of the budget, and the engine degrades;
#   "cleared"       the debt cleared (or its context fell to 75 % of the budget): the engine assembles the
#                   (compacted) database.
DrainAssumption = Literal["exhausted", "still-pending", "cleared"]
ForkFallbackTrigger = Literal["no-context-items", "empty-assembled-output", "no-user-turns"]


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line the engine logs (``level`` is its logger method: warn, debug)."""

    level: str
    text: str


@dataclass(frozen=True, slots=True)
class Fate:
    """What happened to one message of the input, for the trace."""

    outcome: str
    reason: str


def format_session_label(session_id: str, session_key: str | None = None) -> str:
    """The engine's ``session=… [sessionKey=…]`` log label."""
    key = session_key.strip() if isinstance(session_key, str) else ""
    return f"session={session_id}" + (f" sessionKey={key}" if key else "")


def _context(conversation_id: int | None, session_label: str | None) -> str:
    """`` conversation=<id> <label>``, leaving out what the caller does not know."""
    parts = []
    if conversation_id is not None:
        parts.append(f"conversation={conversation_id}")
    if session_label:
        parts.append(session_label)
    return "".join(" " + p for p in parts)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _number(value: Any) -> str:
    return js_string(value)


def _js_number(value: Any) -> float | int | None:
    """``value`` if SQLite handed JS a finite number, else None (strings and bools are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _is_one(value: Any) -> bool:
    """``row.column === 1`` on what node:sqlite returns (an INTEGER 1 or a REAL 1.0, never the text '1')."""
    number = _js_number(value)
    return number is not None and number == 1


def _floor_budget(value: float) -> int:
    """``Math.max(0, Math.floor(value))`` for a finite value, else 0 (trimMessagesToBudget's guard)."""
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return max(0, math.floor(value))


# --- the maintenance row --------------------------------------------------------------------------

_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|z|[+-]\d{2}:\d{2})?$"
)


def parse_utc_timestamp_ms(value: Any) -> float | None:
    """Epoch milliseconds of a stored timestamp read as UTC when it has no zone; None when JS gets an invalid date.

    Covers the ISO forms SQLite and the engine write (``YYYY-MM-DD HH:MM:SS[.fff]``, with
    ``T``, ``Z`` or ``±HH:MM``); other strings JS might still parse count as invalid here.
    """
    if not isinstance(value, str):
        return None
    match = _TIMESTAMP.match(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    h, m, sec, millis = int(hour or 0), int(minute or 0), int(second or 0), int((fraction or "0")[:3].ljust(3, "0"))
    # V8 takes days 1-31 in any month (rolling over) and 24:00:00 exactly as the next midnight
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31 and m <= 59 and sec <= 59):
        return None
    if h > 24 or (h == 24 and (m or sec or millis)):
        return None
    moment = datetime(int(year), int(month), 1, tzinfo=UTC) + timedelta(
        days=int(day) - 1, hours=h, minutes=m, seconds=sec
    )
    if zone and zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return moment.timestamp() * 1000 + millis


@dataclass(frozen=True, slots=True)
class MaintenanceState:
    """The columns of ``conversation_compaction_maintenance`` that assemble reads, as the engine sees them."""

    pending: bool
    running: bool
    projected_token_count: int | None  # logged only
    retry_attempts: int = 0  # ≥ 3: the emergency drain respects the backoff below
    next_attempt_after_ms: float | None = None  # backoff end, epoch ms (None: none or unparseable)
    reason: str | None = None  # debt reason ("threshold", …): steers the compaction, not the gate

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MaintenanceState:
        """From a row keyed by column name, applying the store's conversions."""
        projected = _js_number(row.get("projected_token_count"))
        retries = _js_number(row.get("retry_attempts"))
        reason = row.get("reason")
        return cls(
            pending=_is_one(row.get("pending")),
            running=_is_one(row.get("running")),
            projected_token_count=math.floor(projected) if projected is not None and projected >= 0 else None,
            retry_attempts=max(0, math.floor(retries)) if retries is not None else 0,
            next_attempt_after_ms=parse_utc_timestamp_ms(row.get("next_attempt_after")),
            reason=reason if isinstance(reason, str) else None,
        )

    @property
    def debt_active(self) -> bool:
        return self.pending or self.running


# --- §10.5 the degrade gate -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DegradeDecision:
    """The deferred-compaction gate: degrade (``reason``) or go on assembling (``reason`` None)."""

    reason: DegradeReason | None
    debt_active: bool  # the maintenance row says pending or running
    would_drain_first: bool  # pressure > budget: the engine first runs an emergency compaction (an LLM call)
    drain_skipped_by_backoff: bool  # that compaction would be skipped (retries exhausted, backoff active)
    drain_assumption: DrainAssumption | None  # what the compaction was assumed to end in (None: no compaction)
    stored_context_tokens: int | float  # the pressure
    projected_token_count: int | None
    token_budget: int
    pressure_threshold: int  # floor(0.75 × budget)
    log_lines: tuple[LogLine, ...]  # the gate's own lines (the degraded result adds one, see degraded_log_line)
    note: str | None  # the one note a read-only view must show when the engine would compact first
    drained_context_tokens: int | float | None = None  # the pressure after the drain (None: no replay of it)

    @property
    def engine_outcome(self) -> str | None:
        """``live-fallback:degraded:<reason>`` when the engine degrades."""
        return None if self.reason is None else f"live-fallback:degraded:{self.reason}"


def deferred_degrade_decision(
    stored_context_tokens: int | float,
    maintenance: MaintenanceState | Mapping[str, Any] | None,
    token_budget: int,
    *,
    drain: DrainAssumption = "exhausted",
    drained_context_tokens: int | float | None = None,
    drain_note: str | None = None,
    now_ms: float | None = None,
    conversation_id: int | None = None,
    session_label: str | None = None,
) -> DegradeDecision:
    """§10.5: decide the degraded live fallback from the stored context size, the debt row and the budget.

    ``stored_context_tokens`` is the store's context token count (see the module docstring), ``token_budget``
    the resolved budget.  With the pressure over the budget the engine first runs an emergency compaction
    that this function does not run; ``drain`` says what it ends in.  The default, ``"exhausted"``, is the
    outcome whenever the compaction cannot shrink the stored context (parity case 304); ``ctxview.assembly.drain``
    replays the compaction and passes its outcome, the stored context it leaves (``drained_context_tokens``,
    logged by the degraded result) and its own note (``drain_note``).  ``now_ms`` (epoch ms) enables the case
    that needs no replay: retries used up and the backoff still running, so the compaction is skipped and the
    debt stays (``emergency-debt-still-pending``).
    """
    state = MaintenanceState.from_row(maintenance) if isinstance(maintenance, Mapping) else maintenance
    threshold = math.floor(token_budget * DEFERRED_PRESSURE_RATIO)
    projected = state.projected_token_count if state is not None else None
    context = _context(conversation_id, session_label)
    pressure_text = (
        f"storedContextTokens={_number(stored_context_tokens)} "
        f"projectedTokenCount={'null' if projected is None else projected} tokenBudget={token_budget}"
    )

    def decision(
        reason: DegradeReason | None,
        *,
        drains: bool = False,
        skipped: bool = False,
        assumed: DrainAssumption | None = None,
        lines: tuple[LogLine, ...] = (),
        note: str | None = None,
    ) -> DegradeDecision:
        return DegradeDecision(
            reason=reason,
            debt_active=state is not None and state.debt_active,
            would_drain_first=drains,
            drain_skipped_by_backoff=skipped,
            drain_assumption=assumed,
            stored_context_tokens=stored_context_tokens,
            projected_token_count=projected,
            token_budget=token_budget,
            pressure_threshold=threshold,
            log_lines=lines,
            note=note,
            drained_context_tokens=drained_context_tokens if drains and not skipped else None,
        )

    if state is None or not state.debt_active:
        return decision(None)
    if stored_context_tokens > token_budget:
        draining = LogLine(
            "warn",
            f"[lcm] assemble: emergency deferred compaction debt draining pre-assembly{context} "
            f"{pressure_text} reason=over-budget",
        )
        skipped = (
            state.retry_attempts >= ASSEMBLE_FORCE_MAX_RETRY_ATTEMPTS
            and now_ms is not None
            and state.next_attempt_after_ms is not None
            and state.next_attempt_after_ms > now_ms
        )
        assumed: DrainAssumption = "still-pending" if skipped else drain
        # the pressure was over the budget, so over the threshold: a drain that changes nothing always degrades
        reason: DegradeReason | None = {
            "exhausted": "emergency-debt-exhausted",
            "still-pending": "emergency-debt-still-pending",
            "cleared": None,
        }[assumed]
        return decision(
            reason,
            drains=True,
            skipped=skipped,
            assumed=assumed,
            lines=(draining,),
            note=drain_note if drain_note is not None and not skipped else _drain_note(
                stored_context_tokens, token_budget, assumed, skipped
            ),
        )
    if stored_context_tokens > threshold:
        return decision("near-budget")
    left = LogLine(
        "debug",
        f"[lcm] assemble: deferred compaction debt left pending{context} {pressure_text} reason=not-over-budget",
    )
    return decision(None, lines=(left,))


def _drain_note(stored: int | float, budget: int, assumed: DrainAssumption, skipped: bool) -> str:
    head = f"A compaction is pending and the stored context ({_number(stored)} tokens) exceeds the budget ({budget}): "
    if skipped:
        return head + (
            "the engine would try an emergency compaction, but its retries are used up and the backoff is still "
            "running, so it skips it and sends the degraded live fallback shown here."
        )
    if assumed == "cleared":
        return head + (
            "the engine would first run an emergency compaction (an LLM call ctxview cannot make) and then "
            "assemble the compacted database; shown is the database as it is now."
        )
    why = "finds nothing to compact" if assumed == "exhausted" else "fails"
    return head + (
        "the engine would first run an emergency compaction (an LLM call ctxview cannot make). Shown is what "
        f"it sends when that compaction {why}: the degraded live fallback. If the compaction shrinks the "
        "stored context, the engine assembles the compacted database instead."
    )


# --- trimming the newest live messages to a budget ----------------------------------------------


@dataclass(frozen=True, slots=True)
class TrimResult:
    """``trimMessagesToBudget`` on positions of its input list."""

    kept: list[int]  # positions kept, ascending (after prefill stripping)
    fitted: list[int]  # the newest suffix that fit, before prefill stripping
    budget: int  # the budget after flooring (0 for a non-finite one)
    oversized: bool  # the newest message alone exceeded the budget: nothing kept


def trim_to_budget(
    messages: Sequence[Any],
    budget: float,
    *,
    preserve_substantive_tail: bool,
    sizes: Sequence[int],
) -> TrimResult:
    """Newest suffix whose serialized sizes (``sizes``) fit ``budget``; a lone oversized message gives nothing.

    Unlike the §9.8 clamp it drops no leading tool results and re-seats no user turn; with a budget of 0
    it returns the last message (prefill-stripped) whatever its size.
    """
    safe = _floor_budget(budget)
    count = len(messages)
    if count == 0:
        return TrimResult([], [], safe, False)
    if safe <= 0:
        last = [count - 1]
        stripped = strip_trailing_prefill([messages[-1]], preserve=preserve_substantive_tail)
        return TrimResult(last[: len(stripped)], last, safe, False)
    start = count
    total = 0
    for index in range(count - 1, -1, -1):
        size = sizes[index]
        if start < count and total + size > safe:
            break
        start = index
        total += size
    if count - start == 1 and total > safe:
        return TrimResult([], [count - 1], safe, True)
    fitted = list(range(start, count))
    stripped = strip_trailing_prefill([messages[i] for i in fitted], preserve=preserve_substantive_tail)
    return TrimResult(fitted[: len(stripped)], fitted, safe, False)


# --- §10.5 the degraded live result -------------------------------------------------------------


def is_protected_leading_message(message: Any) -> bool:
    """A ``system`` or ``developer`` message (role compared case-insensitively) heading the live list."""
    if message is None:
        raise TypeError("Cannot read properties of null (reading 'role')")
    role = message.get("role") if isinstance(message, dict) else None
    return isinstance(role, str) and role.lower() in ("system", "developer")


@dataclass(frozen=True, slots=True)
class DegradedLiveResult:
    """``buildDegradedLiveAssembleResult``: the live transcript bounded by the budget."""

    messages: list[Any]
    estimated_tokens: int
    live_indexes: list[int]  # live position of each message
    prefix_indexes: list[int]  # the leading system/developer run, always kept
    prefix_tokens: int
    remaining_budget: int  # max(0, floor(budget) − prefix tokens): what the rest had to fit
    tail_indexes: list[int]  # kept live messages after the prefix
    last_resort: bool  # nothing fitted, so the last live message was kept alone
    live_fates: dict[int, Fate]  # every live index
    prompt_authority: str = PREASSEMBLY_PROMPT_AUTHORITY


def degraded_live_result(
    live_messages: Sequence[Any] | None,
    token_budget: int,
    *,
    preserve_substantive_tail: bool,
    tokens_of: TokenFn = serialized_message_tokens,
) -> DegradedLiveResult:
    """§10.5 degraded result: prefix of system/developer messages plus the newest live messages that fit."""
    live = list(live_messages or [])
    end = len(strip_trailing_prefill(live, preserve=preserve_substantive_tail))
    prefix_end = 0
    while prefix_end < end and is_protected_leading_message(live[prefix_end]):
        prefix_end += 1
    prefix_sizes = [tokens_of(live[i]) for i in range(prefix_end)]
    prefix_tokens = sum(prefix_sizes)
    floored = math.floor(token_budget) if math.isfinite(token_budget) else 0
    remaining = max(0, floored - prefix_tokens)
    tail = live[prefix_end:end]
    tail_sizes = [tokens_of(m) for m in tail]
    trim = trim_to_budget(tail, remaining, preserve_substantive_tail=preserve_substantive_tail, sizes=tail_sizes)
    kept_tail = [prefix_end + i for i in trim.kept]
    last_resort = not kept_tail and bool(tail)
    if last_resort:
        kept_tail = [end - 1]
    indexes = [*range(prefix_end), *kept_tail]
    estimated = prefix_tokens + sum(tail_sizes[i - prefix_end] for i in kept_tail)

    fates: dict[int, Fate] = {}
    for index in range(prefix_end):
        fates[index] = Fate("kept-prefix", "leading system/developer message: the degraded fallback always keeps it")
    first_kept = kept_tail[0] if kept_tail else end
    fitted = {prefix_end + i for i in trim.fitted}
    budget_text = f"{remaining} tokens left after the {prefix_tokens}-token system prefix"
    for index in range(prefix_end, end):
        if index in kept_tail:
            if last_resort:
                fates[index] = Fate(
                    "kept",
                    f"newest live message, kept alone: nothing fits the {budget_text} and the degraded fallback "
                    "never sends an empty tail",
                )
            elif trim.budget <= 0:
                fates[index] = Fate("kept", f"newest live message, kept alone: no budget left ({budget_text})")
            else:
                fates[index] = Fate("kept", f"among the newest live messages fitting the {budget_text}")
        elif index in fitted:
            fates[index] = Fate("dropped-prefill", "trailing assistant prefill stripped after the budget trim")
        elif index < first_kept or last_resort:
            fates[index] = Fate("dropped-budget", f"older than the newest live messages fitting the {budget_text}")
    for index in range(end, len(live)):
        fates[index] = Fate("dropped-prefill", "trailing assistant prefill stripped before the degraded fallback")
    return DegradedLiveResult(
        messages=[live[i] for i in indexes],
        estimated_tokens=estimated,
        live_indexes=indexes,
        prefix_indexes=list(range(prefix_end)),
        prefix_tokens=prefix_tokens,
        remaining_budget=remaining,
        tail_indexes=kept_tail,
        last_resort=last_resort,
        live_fates=fates,
    )


def degraded_log_line(
    decision: DegradeDecision,
    result: DegradedLiveResult,
    *,
    conversation_id: int | None = None,
    session_label: str | None = None,
) -> LogLine:
    """The warn line the engine logs when it returns the degraded result."""
    projected = decision.projected_token_count
    stored = decision.drained_context_tokens
    stored = decision.stored_context_tokens if stored is None else stored  # the engine re-reads it after a drain
    return LogLine(
        "warn",
        f"[lcm] assemble: degraded live fallback{_context(conversation_id, session_label)} "
        f"reason={decision.reason} storedContextTokens={_number(stored)} "
        f"projectedTokenCount={'null' if projected is None else projected} tokenBudget={decision.token_budget} "
        f"pressureThreshold={decision.pressure_threshold} outputMessages={len(result.messages)} "
        f"estimatedTokens={result.estimated_tokens}",
    )


# --- §10.6 fork-bounded conversations ---------------------------------------------------------------


def resolve_bootstrap_max_tokens(
    bootstrap_max_tokens: float | None = None, leaf_chunk_tokens: float | None = DEFAULT_LEAF_CHUNK_TOKENS
) -> int:
    """The bootstrap token cap from the two config values: the cap if positive, else 30 % of the leaf chunk.

    Both default to the config defaults, giving 6000; an unusable leaf chunk counts as 40000.
    """
    if _positive_finite(bootstrap_max_tokens):
        return math.floor(bootstrap_max_tokens)  # type: ignore[arg-type]
    leaf = math.floor(leaf_chunk_tokens) if _positive_finite(leaf_chunk_tokens) else 40_000  # type: ignore[arg-type]
    return max(6000, math.floor(leaf * 0.3))


def _positive_finite(value: Any) -> bool:
    number = _js_number(value)
    return number is not None and number > 0


@dataclass(frozen=True, slots=True)
class ForkSuffix:
    """Where the fork's own live messages start, and how that was decided."""

    messages: list[Any]  # normalized live messages of the suffix
    start: int  # live index of its first message (len(live) when empty)
    rule: Literal["anchor", "fork-source-count", "short-live-window", "none"]
    anchor_live_index: int | None  # the newest live message in the window matching an assembled one
    anchor_assembled_index: int | None  # the newest assembled message it matches
    search_end: int  # live indexes below this were searched for the anchor
    normalized_live: list[Any]  # every live message after §9.4 normalization

    @property
    def live_indexes(self) -> list[int]:
        return list(range(self.start, self.start + len(self.messages)))

    def describe(self, live_index: int) -> str:
        """Why a live message before the suffix is not part of it."""
        if self.rule == "anchor":
            if live_index == self.anchor_live_index:
                return f"fork anchor: the same message as assembled #{self.anchor_assembled_index}"
            return f"before the fork anchor (live #{self.anchor_live_index}): already in the stored context"
        if self.rule == "fork-source-count":
            return (
                f"part of the {self.start} live messages copied from the parent session; none of them matches "
                "the assembled context"
            )
        return "no live message matches the assembled context and the fork recorded no parent message count"


def resolve_fork_live_suffix(
    assembled: Sequence[Any],
    live_messages: Sequence[Any] | None,
    fork_source_message_count: int,
) -> ForkSuffix:
    """The live messages after the newest one (within the fork's parent window) already in ``assembled``.

    Without such an anchor: everything after the parent window, or the whole live list when it is
    shorter than that window, or nothing when the fork recorded no window.
    """
    raw = list(live_messages or [])
    require_objects(raw)
    live = [normalize_live_message(m) for m in raw]
    window = max(0, math.floor(fork_source_message_count))
    search_end = min(len(live), window) if window > 0 else len(live)
    # equal signatures mean equal stored (role, content): only rows with the live message's form are signed
    by_form: dict[tuple[str, str], list[int]] = {}
    for ai in range(len(assembled) - 1, -1, -1):
        by_form.setdefault((stored_role(assembled[ai]), stored_content(assembled[ai])), []).append(ai)
    signatures: dict[int, str] = {}
    for li in range(search_end - 1, -1, -1):
        candidates = by_form.get((stored_role(live[li]), stored_content(live[li])))
        if not candidates:
            continue
        signature = live_signature(live[li])
        for ai in candidates:
            known = signatures.get(ai)
            if known is None:
                known = signatures[ai] = live_signature(assembled[ai])
            if known == signature:
                return ForkSuffix(live[li + 1 :], li + 1, "anchor", li, ai, search_end, live)
    if window > 0 and len(live) >= window:
        return ForkSuffix(live[window:], window, "fork-source-count", None, None, search_end, live)
    if window > 0:
        return ForkSuffix(list(live), 0, "short-live-window", None, None, search_end, live)
    return ForkSuffix([], len(live), "none", None, None, search_end, live)


@dataclass(frozen=True, slots=True)
class ForkAppendResult:
    """``appendForkBoundedLiveSuffixWithinBudget``: the assembled list with the fork's live suffix after it."""

    messages: list[Any]
    estimated_tokens: int  # serialized estimate of ``messages`` (the assembler estimate when nothing is appended)
    appended_messages: int
    appended_tokens: int
    evicted_messages: int
    evicted_tokens: int  # stored-form (A.4) tokens of everything evicted
    over_budget: bool
    protected_indexes: list[int]  # output positions of the appended suffix: never evicted by the volatile step
    sources: list[tuple[str, int]]  # ("a", assembled index) or ("l", live index) per output position
    suffix: ForkSuffix
    evicted_assembled: list[int]  # in eviction order (from the front)
    evicted_live: list[int]  # suffix messages evicted, in eviction order (from the front)
    prefill_stripped_live: list[int]  # trailing assistant prefill cut from the suffix
    assembled_fates: dict[int, Fate]  # evicted assembled indexes only
    live_fates: dict[int, Fate]  # every live index
    log_line: LogLine | None  # logged only when something was appended

    @property
    def log_level(self) -> str:
        return fork_suffix_log_level(self.evicted_messages, self.over_budget)


def fork_suffix_log_level(evicted_messages: int, over_budget: bool) -> str:
    """Appending the suffix is routine (debug); only budget pressure is a warning."""
    return "warn" if over_budget or evicted_messages > 0 else "debug"


def append_fork_live_suffix(
    assembled: Sequence[Any],
    assembled_estimated_tokens: int,
    live_messages: Sequence[Any] | None,
    fork_source_message_count: int,
    token_budget: int,
    *,
    preserve_substantive_tail: bool,
    tokens_of: TokenFn = serialized_message_tokens,
    conversation_id: int | None = None,
    session_label: str | None = None,
) -> ForkAppendResult:
    """§10.6: append the fork's live suffix, evicting assembled messages from the front (then suffix ones) to fit."""
    suffix = resolve_fork_live_suffix(assembled, live_messages, fork_source_message_count)
    kept_count = len(strip_trailing_prefill(suffix.messages, preserve=preserve_substantive_tail))
    suffix_indexes = suffix.live_indexes[:kept_count]
    stripped = suffix.live_indexes[kept_count:]
    live_fates: dict[int, Fate] = {li: Fate("not-appended", suffix.describe(li)) for li in range(suffix.start)}
    for li in stripped:
        live_fates[li] = Fate("dropped-prefill", "trailing assistant prefill cut from the fork live suffix")
    if not suffix_indexes:
        return ForkAppendResult(
            messages=list(assembled),
            estimated_tokens=assembled_estimated_tokens,
            appended_messages=0,
            appended_tokens=0,
            evicted_messages=0,
            evicted_tokens=0,
            over_budget=assembled_estimated_tokens > token_budget,
            protected_indexes=[],
            sources=[("a", ai) for ai in range(len(assembled))],
            suffix=suffix,
            evicted_assembled=[],
            evicted_live=[],
            prefill_stripped_live=stripped,
            assembled_fates={},
            live_fates=live_fates,
            log_line=None,
        )

    suffix_messages = suffix.messages[:kept_count]
    assembled_sizes = [tokens_of(m) for m in assembled]
    suffix_sizes = [tokens_of(m) for m in suffix_messages]
    estimate = sum(assembled_sizes) + sum(suffix_sizes)
    evicted_tokens = 0
    first_assembled = 0
    while first_assembled < len(assembled) and estimate > token_budget:
        evicted_tokens += stored_token_count(assembled[first_assembled])
        estimate -= assembled_sizes[first_assembled]
        first_assembled += 1
    first_suffix = 0
    while first_suffix < kept_count and estimate > token_budget:
        evicted_tokens += stored_token_count(suffix_messages[first_suffix])
        estimate -= suffix_sizes[first_suffix]
        first_suffix += 1

    evicted_assembled = list(range(first_assembled))
    evicted_live = suffix_indexes[:first_suffix]
    appended_live = suffix_indexes[first_suffix:]
    retained = len(assembled) - first_assembled
    messages = [*assembled[first_assembled:], *suffix_messages[first_suffix:]]
    sources = [*(("a", ai) for ai in range(first_assembled, len(assembled))), *(("l", li) for li in appended_live)]
    over_budget = estimate > token_budget
    appended_tokens = sum(suffix_sizes[first_suffix:])
    evicted_messages = first_assembled + first_suffix

    assembled_fates = {
        ai: Fate(
            "evicted",
            f"evicted from the front of the context to make room for the fork live suffix (budget {token_budget})",
        )
        for ai in evicted_assembled
    }
    for li in evicted_live:
        live_fates[li] = Fate(
            "evicted",
            f"fork live suffix message evicted from the front: the suffix alone exceeds the budget {token_budget}",
        )
    for li in appended_live:
        live_fates[li] = Fate(
            "appended", "fork live suffix: after the last message the stored context shares with the fork; protected"
        )
    log_line = None
    if appended_live:
        log_line = LogLine(
            fork_suffix_log_level(evicted_messages, over_budget),
            f"[lcm] assemble: appended fork-bounded live suffix{_context(conversation_id, session_label)} "
            f"appendedMessages={len(appended_live)} appendedTokens={appended_tokens} "
            f"evictedMessages={evicted_messages} evictedTokens={evicted_tokens} overBudget={_flag(over_budget)}",
        )
    return ForkAppendResult(
        messages=messages,
        estimated_tokens=estimate,
        appended_messages=len(appended_live),
        appended_tokens=appended_tokens,
        evicted_messages=evicted_messages,
        evicted_tokens=evicted_tokens,
        over_budget=over_budget,
        protected_indexes=list(range(retained, len(messages))),
        sources=sources,
        suffix=suffix,
        evicted_assembled=evicted_assembled,
        evicted_live=evicted_live,
        prefill_stripped_live=stripped,
        assembled_fates=assembled_fates,
        live_fates=live_fates,
        log_line=log_line,
    )


@dataclass(frozen=True, slots=True)
class ForkFallbackResult:
    """``buildForkBoundedLiveFallback``: the fork's live suffix (or the whole live list) bounded by a budget."""

    messages: list[Any]
    estimated_tokens: int
    live_indexes: list[int]  # live position of each message
    from_suffix: bool  # False: no suffix, the raw live list was trimmed instead
    suffix: ForkSuffix
    trim_budget: int  # floor(min(budget, bootstrap cap))
    oversized: bool  # the newest candidate alone exceeded the trim budget: nothing is sent
    live_fates: dict[int, Fate]
    log_line: LogLine | None  # when a ``trigger`` was given (the engine's debug line, without its duration)


_FORK_FALLBACK_LOG = {
    "no-context-items": "no context items for fork-bounded bootstrap; using bounded live suffix",
    "empty-assembled-output": "empty assembled output for fork-bounded bootstrap; using bounded live suffix",
    "no-user-turns": "fork-bounded context has no user turns; using bounded live suffix",
}


def fork_live_fallback(
    live_messages: Sequence[Any] | None,
    fork_source_message_count: int,
    token_budget: int,
    *,
    preserve_substantive_tail: bool,
    bootstrap_max_tokens: int = DEFAULT_BOOTSTRAP_MAX_TOKENS,
    tokens_of: TokenFn = serialized_message_tokens,
    trigger: ForkFallbackTrigger | None = None,
    conversation_id: int | None = None,
    session_label: str | None = None,
) -> ForkFallbackResult:
    """§10.6 fallback (no context items, empty assembly or no user turn on a fork-bounded conversation)."""
    raw = list(live_messages or [])
    suffix = resolve_fork_live_suffix([], raw, fork_source_message_count)
    from_suffix = bool(suffix.messages)
    candidates = suffix.messages if from_suffix else raw
    offset = suffix.start if from_suffix else 0
    sizes = [tokens_of(m) for m in candidates]
    trim = trim_to_budget(
        candidates,
        min(token_budget, bootstrap_max_tokens),
        preserve_substantive_tail=preserve_substantive_tail,
        sizes=sizes,
    )
    kept = [offset + i for i in trim.kept]
    fitted = {offset + i for i in trim.fitted}
    first_fitted = offset + trim.fitted[0] if trim.fitted else offset + len(candidates)
    budget_text = f"min(budget, bootstrap cap) = {trim.budget} tokens"
    fates: dict[int, Fate] = {}
    if from_suffix:
        for li in range(suffix.start):
            fates[li] = Fate("not-in-suffix", suffix.describe(li))
    for li in range(offset, offset + len(candidates)):
        if li in kept:
            fates[li] = Fate("kept", f"among the newest fork live messages fitting {budget_text}")
        elif trim.oversized and li in fitted:
            fates[li] = Fate("dropped-oversized", f"alone larger than {budget_text}: the fork fallback sends nothing")
        elif li in fitted:
            fates[li] = Fate("dropped-prefill", "trailing assistant prefill stripped from the fork fallback")
        elif li < first_fitted:
            fates[li] = Fate("dropped-budget", f"older than the newest fork live messages fitting {budget_text}")
    messages = [candidates[i - offset] for i in kept]
    log_line = None
    if trigger is not None:
        extra = f" tokenBudget={token_budget}" if trigger == "empty-assembled-output" else ""
        log_line = LogLine(
            "debug",
            f"[lcm] assemble: {_FORK_FALLBACK_LOG[trigger]}{_context(conversation_id, session_label)} "
            f"outputMessages={len(messages)}{extra}",
        )
    return ForkFallbackResult(
        messages=messages,
        estimated_tokens=sum(sizes[i - offset] for i in kept),
        live_indexes=kept,
        from_suffix=from_suffix,
        suffix=suffix,
        trim_budget=trim.budget,
        oversized=trim.oversized,
        live_fates=fates,
        log_line=log_line,
    )
