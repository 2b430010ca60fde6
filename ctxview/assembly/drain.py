"""What the engine's emergency compaction drain (§10.5) does to a conversation, computed without writing.

When deferred compaction debt is pending and the stored context is over the
budget, the engine compacts before it assembles.  With no summary model it
summarizes by deterministic truncation (``fallback_summary``), so the whole
drain is a function of the stored rows: which raw messages outside the
compaction's own fresh tail are summarized (oldest first, in chunks of
``leafChunkTokens``), whether summaries are then condensed, how the stored
token count changes, and whether the debt is cleared, stays pending or is
"exhausted" (nothing could be compacted).  ``predict_drain`` replays it on the
loaded ``Session``; ``drained_session`` is the session as the engine would
then read it, with placeholder ids for the summaries it would create (the
engine's ids hash the wall clock).

Defaults are the engine's config defaults (leafChunkTokens 20000, context
threshold 0.75, fanouts 8/4/2, summary targets 2400/2000, 12 passes per sweep,
12 chained sweeps); the fresh tail, its token cap and the time zone are the
run's parameters, and a debt row may carry its own fresh tail and chunk size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ctxview.assembly.fallbacks import (
    ASSEMBLE_FORCE_MAX_RETRY_ATTEMPTS,
    DEFERRED_PRESSURE_RATIO,
    DrainAssumption,
    LogLine,
    MaintenanceState,
)
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsdate import parse_utc_timestamp, to_iso_string
from ctxview.jsjson import JS_WHITESPACE, js_string, js_trim
from ctxview.model import ContextItemRow, MessageRow, Session, SummaryRow

if TYPE_CHECKING:  # the replay's text and planning modules load when a drain is replayed (most runs have no debt)
    from ctxview.assembly.fallback_summary import FallbackSummary
    from ctxview.assembly.pending_plan import PendingPlan, PlanNode

# --- the engine's config defaults the drain reads ----------------------------------------------------

CONTEXT_THRESHOLD = 0.75
LEAF_CHUNK_TOKENS = 20_000
LEAF_TARGET_TOKENS = 2_400
CONDENSED_TARGET_TOKENS = 2_000
LEAF_MIN_FANOUT = 8
CONDENSED_MIN_FANOUT = 4
CONDENSED_MIN_FANOUT_HARD = 2
SWEEP_MAX_DEPTH = 1  # routine condensation only condenses leaves; deeper needs the relaxed second loop
MAX_SWEEP_ITERATIONS = 12  # passes per sweep, and sweeps per compaction
PLACEHOLDER_PREFIX = "sum_emergency"  # + 7 digits: as long as a real id ("sum_" + 16 hex), so estimates agree

DrainOutcome = Literal["exhausted", "still-pending", "cleared", "unknown"]


class _Unmodelled(Exception):
    """Stored values the replay does not follow (the prediction becomes "unknown")."""


class _DrainFailed(Exception):
    """The engine's compaction throws here (e.g. a message date JS cannot read): the debt stays pending."""


@dataclass(frozen=True, slots=True)
class DrainPass:
    """One summary the drain writes."""

    kind: Literal["leaf", "condensed"]
    level: str  # the summary level the engine logs: normal, aggressive, fallback, capped
    tokens_before: int | float  # the compaction's running token count before and after the pass
    tokens_after: int | float
    summary_id: str  # placeholder id (the engine's is random)
    ordinals: tuple[int, ...]  # the context ordinals it replaced, numbered as they were before the pass
    sources: tuple[int | str, ...]  # message ids (leaf) or summary ids (condensed) it summarizes
    token_count: int  # the new summary's stored token_count

    def log_text(self, conversation_id: int | None) -> str:
        where = f" conversation={conversation_id}" if conversation_id is not None else ""
        return (
            f"[lcm] LCM compaction {self.kind} pass ({self.level}): {js_string(self.tokens_before)} -> "
            f"{js_string(self.tokens_after)}{where} summary={self.summary_id}"
        )


@dataclass(frozen=True, slots=True)
class DrainPrediction:
    """What the emergency drain ends in, and the context it leaves behind."""

    outcome: DrainOutcome
    why: str  # the outcome in words
    pressure_before: int | float  # Σ stored token_count of the context items (the gate's pressure)
    pressure_after: int | float
    pressure_threshold: int  # floor(0.75 × budget): the gate degrades while a pending debt's pressure exceeds it
    compaction_target: int | None  # the compaction's own target (threshold × the debt's budget); None: none ran
    debt_pending_after: bool
    exhausted: bool  # the compaction found nothing to compact (the engine clears the debt and degrades)
    passes: tuple[DrainPass, ...] = ()
    items: tuple[ContextItemRow, ...] = ()  # the context after the drain, ordinals renumbered as the engine does
    new_summaries: Mapping[str, SummaryRow] = field(default_factory=dict)
    maintenance_after: Mapping[str, Any] | None = None
    log_lines: tuple[LogLine, ...] = ()

    @property
    def assumption(self) -> DrainAssumption:
        """The degrade gate's reading of the outcome ("unknown" keeps the engine-cannot-compact reading)."""
        return "exhausted" if self.outcome == "unknown" else self.outcome

    @property
    def compacted(self) -> bool:
        return bool(self.passes)

    def note(self, budget: int) -> str:
        """The one note a reader needs: what the engine does before it answers, and what ctxview shows."""
        head = (
            f"A compaction is pending and the stored context ({js_string(self.pressure_before)} tokens) exceeds "
            f"the budget ({budget}), so the engine first runs an emergency compaction"
        )
        if self.outcome == "unknown":
            return (
                f"{head}. ctxview cannot replay it here ({self.why}); shown is what the engine sends when it finds "
                "nothing to compact."
            )
        model = " (with no summary model configured it writes truncation summaries, replayed here"
        model += "; a summary model would write other summaries)" if self.passes else ")"
        summary = self.summary_text() if self.passes else f"it compacts nothing ({self.why})"
        if self.outcome == "exhausted":
            return f"{head}{model}: it finds nothing to compact, clears the debt and sends the degraded live fallback."
        if self.outcome == "still-pending":
            return (
                f"{head}{model}: {summary}, which leaves {js_string(self.pressure_after)} tokens, still over "
                f"{self.pressure_threshold} (75 % of the budget); the debt stays pending and the engine sends the "
                "degraded live fallback."
            )
        ids = ", ".join(p.summary_id for p in self.passes)
        placeholder = (
            f" The new summaries carry placeholder ids ({ids}): the engine's ids and created_at come from the clock."
            if self.passes
            else ""
        )
        debt = (
            "the debt is cleared"
            if not self.debt_pending_after
            else "the debt stays pending but under 75 % of the budget"
        )
        context = "the compacted context" if self.passes else "the stored context"
        return (
            f"{head}{model}: {summary}; the context is then {js_string(self.pressure_after)} tokens and {debt}, so "
            f"the engine assembles {context}, shown here.{placeholder}"
        )

    def summary_text(self) -> str:
        """The passes in words: "it compacts 16 messages into 1 leaf summary" (with at least one pass)."""
        leaf = [p for p in self.passes if p.kind == "leaf"]
        condensed = [p for p in self.passes if p.kind == "condensed"]
        parts = []
        if leaf:
            messages = sum(len(p.sources) for p in leaf)
            parts.append(f"{_count(messages, 'message', 'messages')} into {_count(len(leaf), 'leaf summary')}")
        if condensed:
            children = sum(len(p.sources) for p in condensed)
            parts.append(f"{_count(children, 'summary')} into {_count(len(condensed), 'condensed summary')}")
        return "it compacts " + " and ".join(parts)


def _count(n: int, singular: str, plural: str | None = None) -> str:
    if plural is None:
        plural = singular[:-1] + "ies" if singular.endswith("y") else singular + "s"
    return f"{n} {singular if n == 1 else plural}"


# --- JavaScript number semantics on stored values ----------------------------------------------------

_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")


def _finite_number(value: Any) -> int | float | None:
    """``value`` when it is a finite JS number (SQLite INTEGER or REAL), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _js_to_number(value: Any) -> int | float:
    """``Number(value)`` for what SQLite hands JS (``Math.floor`` coerces this way)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip(JS_WHITESPACE)
        if not text:
            return 0
        if _NUMBER_TEXT.fullmatch(text):
            number = float(text)
            return int(number) if number.is_integer() and abs(number) < 2**53 else number
        if text in ("Infinity", "+Infinity", "-Infinity"):
            return math.inf if text[0] != "-" else -math.inf
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            return int(text, 16)
        return math.nan
    return math.nan


def _js_floor(value: Any) -> int | float:
    number = _js_to_number(value)
    return math.floor(number) if isinstance(number, float) and math.isfinite(number) else number


def _js_max0(value: int | float) -> int | float:
    """``Math.max(0, value)`` (NaN stays NaN)."""
    return value if value != value else max(0, value)


def _sqlite_sum(values: Sequence[Any]) -> int | float:
    """``COALESCE(SUM(x), 0)``: integers sum exactly; any other value makes the sum a REAL."""
    total: int | float = 0
    real = False
    for value in values:
        if value is None:
            continue
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int):
            total += value
            continue
        real = True
        if isinstance(value, float):
            total += value
        elif isinstance(value, str):
            match = _NUMBER_TEXT.match(value.strip(" \t\n\r\f\v"))
            total += float(match.group(0)) if match else 0.0
    return float(total) if real else total


def _js_strict_equal(a: Any, b: Any) -> bool:
    a_number, b_number = _finite_number(a), _finite_number(b)
    if a_number is not None or b_number is not None:
        return a_number is not None and b_number is not None and a_number == b_number
    return type(a) is type(b) and a == b


# --- the replay ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Settings:
    fresh_tail_count: float  # config freshTailCount (the run's)
    fresh_tail_max_tokens: int | None  # config freshTailMaxTokens, floored; None: no cap
    tail_override: int | None  # the debt row's fresh tail count (its persisted threshold)
    chunk_override: int | None  # the debt row's leaf chunk size
    timezone: str
    line: str
    conversation_id: int | None

    @property
    def with_sender(self) -> bool:
        return self.line == "0.15"  # 1.0 dropped the sender label from leaf sources


@dataclass(slots=True)
class _Sweep:
    action_taken: bool
    tokens_before: int | float
    tokens_after: int | float
    condensed: bool = False
    stopped_at_budget: bool = False


_SKIPPED = object()  # a pass whose source had no text


class _Replay:
    """The context as the compaction mutates it, with the engine's selection rules."""

    def __init__(self, session: Session, settings: _Settings) -> None:
        self.settings = settings
        self.items = [ContextItemRow(i.ordinal, i.item_type, i.message_id, i.summary_id) for i in session.items]
        self.messages = session.messages
        self.summaries: dict[str, SummaryRow] = dict(session.summaries)
        self.new_summaries: dict[str, SummaryRow] = {}
        self.passes: list[DrainPass] = []
        self.log: list[LogLine] = []
        self._tokens: dict[int, float] = {}
        self._meaningful: dict[str, bool] = {}

    # -- stored sizes

    def context_tokens(self) -> int | float:
        """``getContextTokenCount``: the SQL sum over the context items' rows."""
        values = []
        for item in self.items:
            if item.item_type == "message":
                row = self.messages.get(item.message_id) if item.message_id is not None else None
                if row is not None:
                    values.append(row.token_count)
            elif item.item_type == "summary":
                summary = self.summaries.get(item.summary_id) if item.summary_id is not None else None
                if summary is not None:
                    values.append(summary.token_count)
        return _sqlite_sum(values)

    def message_tokens(self, message_id: int) -> float:
        cached = self._tokens.get(message_id)
        if cached is None:
            from ctxview.assembly.compaction_text import leaf_tokens

            row = self.messages.get(message_id)
            cached = 0 if row is None else leaf_tokens(row, with_sender=self.settings.with_sender)
            self._tokens[message_id] = cached
        return cached

    def has_meaningful_text(self, summary: SummaryRow) -> bool:
        known = self._meaningful.get(summary.summary_id)
        if known is None:
            from ctxview.assembly.compaction_text import meaningful_summary_text

            known = self._meaningful[summary.summary_id] = js_trim(meaningful_summary_text(summary.content)) != ""
        return known

    def summary_tokens(self, summary: SummaryRow) -> int | float:
        count = _finite_number(summary.token_count)
        return count if count is not None and count > 0 else estimate_tokens(summary.content)

    # -- boundaries and chunks

    def fresh_tail_ordinal(self, override: int | None) -> float:
        """The compaction's fresh tail: the newest raw messages (never splitting the newest user turn)."""
        s = self.settings
        count = override if override is not None and override > 0 else _positive_floor(s.fresh_tail_count)
        if count <= 0:
            return math.inf
        raw = (i for i in reversed(self.items) if i.item_type == "message" and i.message_id is not None)
        latest_user = None
        for item in raw:  # (from the end: the walks below stop early, a long context is not scanned)
            row = self.messages.get(item.message_id) if item.message_id else None
            if row is not None and row.role == "user":
                latest_user = item.ordinal
                break
        protected = 0
        protected_tokens: float = 0
        tail = math.inf
        for item in (i for i in reversed(self.items) if i.item_type == "message" and i.message_id is not None):
            user_protected = latest_user is None or tail <= latest_user
            if user_protected and protected >= count:
                break
            tokens = self.message_tokens(item.message_id)  # type: ignore[arg-type]
            cap = s.fresh_tail_max_tokens
            if user_protected and protected > 0 and cap is not None and protected_tokens + tokens > cap:
                break
            tail = item.ordinal
            protected += 1
            protected_tokens += tokens
        return tail

    def leaf_chunk(self, after_ordinal: int | None) -> list[ContextItemRow]:
        """The oldest run of raw messages outside the fresh tail, up to the leaf chunk size (at least one)."""
        tail = self.fresh_tail_ordinal(self.settings.tail_override)
        limit = self.settings.chunk_override or LEAF_CHUNK_TOKENS
        chunk: list[ContextItemRow] = []
        tokens: float = 0
        for item in self.items:
            if item.ordinal >= tail:
                break
            if after_ordinal is not None and item.ordinal <= after_ordinal:
                continue
            is_message = item.item_type == "message" and item.message_id is not None
            if not chunk and not is_message:
                continue
            if chunk and not is_message:
                break
            size = self.message_tokens(item.message_id)  # type: ignore[arg-type]
            if chunk and tokens + size > limit:
                break
            chunk.append(item)
            tokens += size
            if tokens >= limit:
                break
        return chunk

    def summary_tokens_outside_tail(self) -> float:
        tail = self.fresh_tail_ordinal(self.settings.tail_override)
        total: float = 0
        for item in self.items:
            if item.ordinal >= tail:
                break
            if item.item_type != "summary" or item.summary_id is None:
                continue
            summary = self.summaries.get(item.summary_id)
            if summary is not None:
                total += self.summary_tokens(summary)
        return total

    def chunk_at_depth(self, depth: Any, tail: float) -> tuple[list[ContextItemRow], float, int]:
        """The oldest run of same-depth summaries before the tail: (items, tokens, meaningful count)."""
        chunk: list[ContextItemRow] = []
        tokens: float = 0
        meaningful_count = 0
        for item in self.items:
            if item.ordinal >= tail:
                break
            summary = self.summaries.get(item.summary_id) if item.item_type == "summary" and item.summary_id else None
            if summary is None or not _js_strict_equal(summary.depth, depth):
                if chunk:
                    break
                continue
            meaningful = self.has_meaningful_text(summary)
            if not meaningful and not chunk:
                continue
            size = self.summary_tokens(summary)
            if meaningful and chunk and tokens + size > LEAF_CHUNK_TOKENS:
                break
            chunk.append(item)
            if meaningful:
                meaningful_count += 1
                tokens += size
            if tokens >= LEAF_CHUNK_TOKENS:
                break
        return chunk, tokens, meaningful_count

    def condensation_candidate(self, hard: bool) -> tuple[Any, list[ContextItemRow]] | None:
        """The shallowest depth with enough same-depth summaries (fanout) of enough tokens (≥ 2000)."""
        tail = self.fresh_tail_ordinal(None)  # the config's tail: the debt row's override is not passed here
        min_tokens = max(CONDENSED_TARGET_TOKENS, math.floor(LEAF_CHUNK_TOKENS * 0.1))
        depths: list[Any] = []
        for item in self.items:
            if item.item_type != "summary" or item.summary_id is None or item.ordinal >= tail:
                continue
            summary = self.summaries.get(item.summary_id)
            if summary is not None and not any(_js_strict_equal(summary.depth, d) for d in depths):
                depths.append(summary.depth)
        if any(d is not None and _finite_number(d) is None for d in depths):
            raise _Unmodelled("a summary depth that is not a number")
        depths.sort(key=lambda d: (d is not None, d if d is not None else 0))
        for depth in depths:
            if hard:
                fanout = CONDENSED_MIN_FANOUT_HARD
            else:
                fanout = LEAF_MIN_FANOUT if _js_strict_equal(depth, 0) else CONDENSED_MIN_FANOUT
            chunk, tokens, meaningful = self.chunk_at_depth(depth, tail)
            if meaningful < fanout or tokens < min_tokens:
                continue
            return depth, chunk
        return None

    # -- passes

    def _replace_range(self, chunk: Sequence[ContextItemRow], summary_id: str) -> None:
        """The chunk's ordinal range becomes the one summary item, then ordinals are renumbered 0…n-1."""
        start, end = min(i.ordinal for i in chunk), max(i.ordinal for i in chunk)
        items = self.items
        first = next(n for n, i in enumerate(items) if i.ordinal >= start)
        last = first
        while last < len(items) and items[last].ordinal <= end:
            last += 1
        items[first:last] = [ContextItemRow(start, "summary", None, summary_id)]
        numbered = first > 0 and items[0].ordinal == 0 and items[first - 1].ordinal == first - 1  # a 0…first-1 prefix
        for n in range(first if numbered else 0, len(items)):
            items[n].ordinal = n

    def _new_id(self) -> str:
        return f"{PLACEHOLDER_PREFIX}{len(self.new_summaries) + 1:07d}"

    def leaf_pass(self, chunk: list[ContextItemRow], tokens_before: int | float) -> DrainPass | object | None:
        from ctxview.assembly.compaction_text import leaf_message_text, leaf_source_text
        from ctxview.assembly.fallback_summary import summarize_without_model

        found: list[tuple[MessageRow, str, float]] = []
        for item in chunk:
            row = self.messages.get(item.message_id) if item.message_id is not None else None
            if row is not None:
                found.append((row, leaf_message_text(row), parse_utc_timestamp(row.created_at)))
        if not found:
            return _SKIPPED
        source = leaf_source_text(found, self.settings.timezone, with_sender=self.settings.with_sender)
        if not js_trim(source):
            return _SKIPPED
        summary = summarize_without_model(source, LEAF_TARGET_TOKENS, empty_is_failure=self.settings.line != "0.15")
        if summary is None:
            return None
        created = [ms for _, _, ms in found]
        if any(ms != ms for ms in created):
            raise _DrainFailed("a message in the chunk has a created_at JavaScript cannot read (RangeError)")
        removed = sum(_js_max0(_js_floor(self.message_tokens(row.message_id))) for row, _, _ in found)
        seqs = [row.seq for row, _, _ in found]
        row = self._store(
            summary, "leaf", 0, min(created), max(created), 0, (), tuple(r.message_id for r, _, _ in found)
        )
        row = replace(row, max_source_seq=max(seqs))
        return self._record(
            "leaf", summary, row, chunk, tokens_before, removed, tuple(r.message_id for r, _, _ in found)
        )

    def condensed_pass(
        self, chunk: list[ContextItemRow], depth: Any, tokens_before: int | float
    ) -> DrainPass | object | None:
        from ctxview.assembly.compaction_text import condensed_source_text
        from ctxview.assembly.fallback_summary import summarize_without_model

        records = [
            self.summaries[i.summary_id] for i in chunk if i.summary_id is not None and i.summary_id in self.summaries
        ]
        dated = [(s, *self._summary_span(s)) for s in records]
        source = condensed_source_text(dated, self.settings.timezone)
        if not js_trim(source):
            return _SKIPPED
        summary = summarize_without_model(
            source, CONDENSED_TARGET_TOKENS, empty_is_failure=self.settings.line != "0.15"
        )
        if summary is None:
            return None
        earliest = [e for _, e, _ in dated]
        latest = [la for _, _, la in dated]
        if any(ms != ms for ms in (*earliest, *latest)):
            raise _DrainFailed("a summary in the chunk has a date JavaScript cannot read (RangeError)")
        descendants = sum(_descendant_count(s.descendant_count) + 1 for s in records)
        new_depth = (0 if depth is None else depth) + 1
        parents = tuple(s.summary_id for s in records)
        row = self._store(summary, "condensed", new_depth, min(earliest), max(latest), descendants, parents, ())
        seqs = [s.max_source_seq for s in records if s.max_source_seq is not None]
        row = replace(row, max_source_seq=max(seqs) if seqs else None)
        removed = sum(_js_max0(_js_floor(s.token_count)) for s in records)
        return self._record("condensed", summary, row, chunk, tokens_before, removed, parents)

    def _summary_span(self, summary: SummaryRow) -> tuple[float, float]:
        created = parse_utc_timestamp(summary.created_at)
        earliest = created if summary.earliest_at is None else parse_utc_timestamp(summary.earliest_at)
        latest = created if summary.latest_at is None else parse_utc_timestamp(summary.latest_at)
        return earliest, latest

    def _store(
        self,
        summary: FallbackSummary,
        kind: str,
        depth: int | float,
        earliest: float,
        latest: float,
        descendants: int,
        parents: tuple[str, ...],
        sources: tuple[int, ...],
    ) -> SummaryRow:
        summary_id = self._new_id()
        stored_depth = math.floor(depth) if math.isfinite(depth) and depth >= 0 else (0 if kind == "leaf" else 1)
        return SummaryRow(
            summary_id=summary_id,
            kind=kind,
            depth=stored_depth,
            content=summary.content,
            token_count=summary.token_count,
            earliest_at=to_iso_string(earliest),
            latest_at=to_iso_string(latest),
            descendant_count=descendants,
            created_at=None,  # datetime('now') when the engine writes it
            file_ids=None,
            model="emergency-fallback",
            parent_ids=parents,
            source_message_ids=sources,
        )

    def _record(
        self,
        kind: Literal["leaf", "condensed"],
        summary: FallbackSummary,
        row: SummaryRow,
        chunk: Sequence[ContextItemRow],
        tokens_before: int | float,
        removed: int | float,
        sources: tuple[int | str, ...],
    ) -> DrainPass:
        self.summaries[row.summary_id] = row
        self.new_summaries[row.summary_id] = row
        self._replace_range(chunk, row.summary_id)
        after = _js_max0(tokens_before - removed + summary.token_count)
        done = DrainPass(
            kind, summary.level, tokens_before, after, row.summary_id, tuple(i.ordinal for i in chunk), sources,
            summary.token_count,
        )  # fmt: skip
        self.passes.append(done)
        self.log.append(LogLine("info", done.log_text(self.settings.conversation_id)))
        return done


def _positive_floor(value: Any) -> int:
    number = _finite_number(value)
    return math.floor(number) if number is not None and number > 0 else 0


def _descendant_count(value: Any) -> int:
    number = _finite_number(value)
    return math.floor(number) if number is not None and number >= 0 else 0


# --- one full sweep, and the chain of sweeps ------------------------------------------------------------


def _full_sweep(replay: _Replay, token_budget: int, force: bool) -> _Sweep:
    """``compactFullSweep``: leaf passes over the oldest raw chunks, then condensed passes while needed."""
    tokens_before = replay.context_tokens()
    threshold = math.floor(CONTEXT_THRESHOLD * token_budget)
    if (not force and tokens_before <= threshold) or not replay.items:
        return _Sweep(False, tokens_before, tokens_before)
    sweep = _Sweep(False, tokens_before, tokens_before)
    previous = tokens_before
    iterations = 0

    def out_of_passes() -> bool:
        if sweep.stopped_at_budget:
            return True
        if iterations >= MAX_SWEEP_ITERATIONS:
            sweep.stopped_at_budget = True
            return True
        return False

    after_ordinal: int | None = None
    while not out_of_passes():
        chunk = replay.leaf_chunk(after_ordinal)
        if not chunk or out_of_passes():
            break
        iterations += 1
        before = sweep.tokens_after
        done = replay.leaf_pass(chunk, before)
        if done is None:
            raise _Unmodelled("a leaf pass without source text on the 1.0 line")
        if done is _SKIPPED:
            after_ordinal = chunk[-1].ordinal
            continue
        assert isinstance(done, DrainPass)
        sweep.action_taken = True
        sweep.tokens_after = done.tokens_after
        if done.tokens_after >= before or done.tokens_after >= previous:
            break
        previous = done.tokens_after

    prefix_target = max(
        CONDENSED_TARGET_TOKENS,
        min(LEAF_CHUNK_TOKENS, math.floor(max(1, math.floor(CONTEXT_THRESHOLD * token_budget)) * 0.5)),
    )

    def condense(enforce_depth: bool, hard: bool) -> str:
        nonlocal iterations, previous
        candidate = replay.condensation_candidate(hard)
        if candidate is None:
            return "no-candidate"
        depth, chunk = candidate
        if enforce_depth and (0 if depth is None else depth) >= SWEEP_MAX_DEPTH:
            return "depth-cap"
        if out_of_passes():
            return "budget"
        iterations += 1
        before = sweep.tokens_after
        done = replay.condensed_pass(chunk, depth, before)
        if done is None:
            raise _Unmodelled("a condensed pass without source text on the 1.0 line")
        if done is _SKIPPED:
            return "no-progress"
        assert isinstance(done, DrainPass)
        sweep.action_taken = sweep.condensed = True
        after = sweep.tokens_after = done.tokens_after
        if not force and after <= threshold:
            previous = after
            return "progress"
        if after >= before or after >= previous:
            return "no-progress"
        previous = after
        return "progress"

    no_progress = False
    while replay.summary_tokens_outside_tail() > prefix_target:
        if out_of_passes():
            break
        status = condense(enforce_depth=True, hard=False)
        if status != "progress":
            no_progress = status == "no-progress"
            break
    while not no_progress and not sweep.stopped_at_budget and replay.summary_tokens_outside_tail() > prefix_target:
        if out_of_passes():
            break
        status = condense(enforce_depth=False, hard=True)
        if status != "progress":
            no_progress = status == "no-progress"
            break
    return sweep


def _finite_or_none(value: int | float) -> int | float | None:
    return value if isinstance(value, int) or math.isfinite(value) else None


def _threshold_compaction(replay: _Replay, token_budget: int, force: bool) -> tuple[_Sweep, bool, bool]:
    """``executeCompactionCore`` toward the threshold: chained sweeps; (last sweep, under target?, exhausted?)."""
    target = math.floor(CONTEXT_THRESHOLD * token_budget)
    stored = replay.context_tokens()
    observed = math.floor(stored) if math.isfinite(stored) and stored > 0 else None
    raw_outside = _raw_tokens_outside_tail(replay) if observed is not None else None
    projected = max(stored, observed) if observed is not None else None
    backlog = projected is not None and projected > target and (raw_outside or 0) > 0
    sweep_force = force or backlog

    def under(sweep: _Sweep) -> bool:
        after = _finite_or_none(sweep.tokens_after)
        return after is not None and after <= target

    sweep = _full_sweep(replay, token_budget, sweep_force)
    chained = 1
    progressing = sweep.action_taken
    previous_after = _finite_or_none(sweep.tokens_after)
    while progressing and not under(sweep) and chained < MAX_SWEEP_ITERATIONS:
        following = _full_sweep(replay, token_budget, sweep_force)
        chained += 1
        after = _finite_or_none(following.tokens_after)
        progressing = following.action_taken and (
            previous_after is None or (after is not None and after < previous_after)
        )
        following.action_taken = sweep.action_taken or following.action_taken
        sweep = following
        previous_after = after if after is not None else previous_after
    reached = under(sweep)
    exhausted = not sweep.action_taken and not sweep.stopped_at_budget and not reached
    return sweep, reached, exhausted


def _raw_tokens_outside_tail(replay: _Replay) -> float:
    tail = replay.fresh_tail_ordinal(replay.settings.tail_override)
    total: float = 0
    for item in replay.items:
        if item.ordinal >= tail:
            break
        if item.item_type == "message" and item.message_id is not None:
            total += replay.message_tokens(item.message_id)
    return total


# --- the 1.0 pending-summary planner (it runs first; only "nothing planned" reaches the sweep) -------


def _pending_plan(replay: _Replay, fresh_tail_count: Any, fresh_tail_max_tokens: Any) -> PendingPlan:
    from ctxview.assembly.pending_plan import SnapshotItem, non_negative_floor, plan_pending_summaries

    items = []
    for item in replay.items:
        if item.item_type == "message" and item.message_id is not None:
            row = replay.messages.get(item.message_id)
            if row is not None:
                tokens = non_negative_floor(row.token_count)
                items.append(SnapshotItem(item.ordinal, "message", tokens, role=row.role, message_id=row.message_id))
        elif item.item_type == "summary" and item.summary_id:
            summary = replay.summaries.get(item.summary_id)
            if summary is not None:
                depth = 0 if summary.depth is None else summary.depth
                if not isinstance(depth, int) or isinstance(depth, bool):
                    raise _Unmodelled("a summary depth that is not a whole number")
                tokens = non_negative_floor(summary.token_count)
                items.append(SnapshotItem(item.ordinal, "summary", tokens, depth=depth, summary_id=summary.summary_id))
    return plan_pending_summaries(
        items,
        fresh_tail_count=fresh_tail_count,
        fresh_tail_max_tokens=fresh_tail_max_tokens,
        leaf_chunk_tokens=replay.settings.chunk_override or LEAF_CHUNK_TOKENS,
    )


def _pending_leaf_source(replay: _Replay, node: PlanNode) -> str:
    """A pending leaf's summarizer input: ``[ISO date | role]`` + cleaned text per message (no sender label)."""
    from ctxview.assembly.compaction_text import (
        leaf_message_text,
        meaningful_message_text,
        strip_injected_context_blocks,
    )

    blocks = []
    for message_id in node.message_ids:
        row = replay.messages.get(message_id)
        if row is None:
            continue
        text = js_trim(meaningful_message_text(strip_injected_context_blocks(leaf_message_text(row))))
        if not text:
            continue
        created = parse_utc_timestamp(row.created_at)
        if created != created:
            raise _DrainFailed("a message of a pending summary has a created_at JavaScript cannot read (RangeError)")
        blocks.append(js_trim(f"[{to_iso_string(created)} | {row.role}]\n{text}"))
    return "\n\n".join(blocks)


def _date_range(dates: Sequence[float]) -> tuple[float | None, float | None]:
    """The publisher's earliest/latest: the first date seeds both (even an invalid one), later ones only widen."""
    earliest: float | None = None
    latest: float | None = None
    for ms in dates:
        if earliest is None or ms < earliest:
            earliest = ms
        if latest is None or ms > latest:
            latest = ms
    return earliest, latest


def _iso_or_none(ms: float | None) -> str | None:
    if ms is None:
        return None
    if ms != ms:
        raise _DrainFailed("a summary date JavaScript cannot read (RangeError) while publishing")
    return to_iso_string(ms)


def _publish_pending_plan(replay: _Replay, plan: PendingPlan) -> str | None:
    """Prepare every planned node with the emergency summarizer and publish the frontier; None when nothing is
    published (too many nodes for one drain, or the planned range has a gap), else the "why" in words."""
    from ctxview.assembly.fallback_summary import emergency_summary

    if len(plan.nodes) + 2 > MAX_SWEEP_ITERATIONS:  # planning and publishing take a step each, every node one
        return None
    contents: dict[int, str] = {}
    for node in sorted(plan.nodes, key=lambda n: (n.depth, n.start)):  # children before parents
        if node.kind == "leaf":
            source = _pending_leaf_source(replay, node)
        else:
            parts = [
                child_content
                for child_content in (
                    replay.summaries[c.summary_id].content if c.existing else contents[id(c)]  # type: ignore[index]
                    for c in node.children
                )
                if child_content
            ]
            source = "\n\n".join(parts)
        source = js_trim(source)
        if not source:
            raise _DrainFailed("empty pending summary source")
        contents[id(node)] = js_trim(emergency_summary(source))
    present = {i.ordinal for i in replay.items if _has_row(replay, i)}
    if any(ordinal not in present for ordinal in range(plan.start, plan.end + 1)):
        return None  # the batch goes stale before publishing, and every new plan would too
    published: dict[int, SummaryRow] = {}

    def publish(node: PlanNode) -> SummaryRow:
        if id(node) in published:
            return published[id(node)]
        parents = [replay.summaries[c.summary_id] if c.existing else publish(c) for c in node.children]  # type: ignore[index]
        content = contents[id(node)]
        if node.kind == "leaf":
            rows = [replay.messages[m] for m in node.message_ids if m in replay.messages]
            earliest, latest = _date_range([parse_utc_timestamp(r.created_at) for r in rows])
            descendants, seqs = 0, [r.seq for r in rows]
        else:
            spans = [ms for p in parents for ms in replay._summary_span(p)]
            earliest, latest = _date_range(spans)
            descendants = sum(_descendant_count(p.descendant_count) + 1 for p in parents)
            seqs = [p.max_source_seq for p in parents if p.max_source_seq is not None]
        row = SummaryRow(
            summary_id=replay._new_id(),
            kind=node.kind,
            depth=node.depth,
            content=content,
            token_count=estimate_tokens(content),
            earliest_at=_iso_or_none(earliest),
            latest_at=_iso_or_none(latest),
            descendant_count=descendants,
            model="emergency-fallback",
            parent_ids=tuple(p.summary_id for p in parents),
            source_message_ids=node.message_ids if node.kind == "leaf" else (),
            max_source_seq=max(seqs) if seqs else None,
        )
        replay.new_summaries[row.summary_id] = row
        published[id(node)] = row
        return row

    before = replay.context_tokens()
    replacements = [(node, publish(node)) for node in plan.frontier if not node.existing]
    for summary in list(replay.new_summaries.values()):
        replay.summaries[summary.summary_id] = summary
    covered = [(node.start, node.end, row.summary_id) for node, row in replacements]
    kept = [i for i in replay.items if not any(s <= i.ordinal <= e for s, e, _ in covered)]
    kept.extend(ContextItemRow(s, "summary", None, sid) for s, _, sid in covered)
    kept.sort(key=lambda i: i.ordinal)
    replay.items = [ContextItemRow(n, i.item_type, i.message_id, i.summary_id) for n, i in enumerate(kept)]
    after = replay.context_tokens()
    for node, row in replacements:
        sources: tuple[int | str, ...] = node.message_ids if node.kind == "leaf" else row.parent_ids
        done = DrainPass(
            node.kind, "pending", before, after, row.summary_id, tuple(range(node.start, node.end + 1)), sources,
            row.token_count,
        )  # fmt: skip
        replay.passes.append(done)
    return (
        f"it prepares {_count(len(plan.nodes), 'pending summary')} and publishes {_count(len(replacements), 'summary')}"
    )


def _has_row(replay: _Replay, item: ContextItemRow) -> bool:
    if item.item_type == "message":
        return item.message_id is not None and item.message_id in replay.messages
    return item.item_type == "summary" and bool(item.summary_id) and item.summary_id in replay.summaries


# --- the drain -------------------------------------------------------------------------------------------


def _persisted_sizes(row: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The debt row's fresh tail and chunk size, used while its persisted threshold still matches the config."""
    threshold = _finite_number(row.get("context_threshold"))
    if threshold is None or row.get("context_threshold_source") == "override" or threshold != CONTEXT_THRESHOLD:
        return None, None
    sizes = []
    for column in ("context_fresh_tail_count", "context_leaf_chunk_tokens"):
        value = _finite_number(row.get(column))
        sizes.append(math.floor(value) if value is not None and value > 0 else None)
    return sizes[0], sizes[1]


@dataclass(frozen=True, slots=True)
class _End:
    """How the drain ends: what the gate reads next, and what the debt row records."""

    outcome: DrainOutcome
    why: str
    pending: bool = True  # the debt stays (pending) after the drain
    exhausted: bool = False
    target: int | None = None  # the compaction's target, when a sweep ran
    failure: str | None = None  # the failure the debt row records (it counts a retry)


def predict_drain(
    session: Session,
    token_budget: int,
    *,
    fresh_tail_count: float,
    fresh_tail_max_tokens: int | None,
    timezone: str,
    line: str = "0.15",
    now_ms: float | None = None,
) -> DrainPrediction | None:
    """Replay the emergency drain the engine runs before assembling; None when it would not run.

    It runs when the conversation's compaction debt is pending (or running) and the stored
    context exceeds ``token_budget`` (the resolved assemble budget).  ``now_ms`` only matters
    once the debt's retries are used up: a backoff still running then skips the compaction.
    """
    row = session.maintenance
    state = MaintenanceState.from_row(row) if row is not None else None
    pressure = session.stored_context_tokens
    if state is None or row is None or not state.debt_active or not pressure > token_budget:
        return None
    threshold = math.floor(token_budget * DEFERRED_PRESSURE_RATIO)
    tail_override, chunk_override = _persisted_sizes(row)
    settings = _Settings(
        fresh_tail_count=fresh_tail_count,
        fresh_tail_max_tokens=_tail_cap(fresh_tail_max_tokens),
        tail_override=tail_override,
        chunk_override=chunk_override,
        timezone=timezone,
        line=line,
        conversation_id=session.conversation.conversation_id,
    )
    replay = _Replay(session, settings)
    try:
        if replay.context_tokens() != pressure:
            raise _Unmodelled("the context items reference rows ctxview did not load")
        end = _drain(replay, session, state, token_budget, threshold, now_ms)
    except _Unmodelled as unknown:
        return DrainPrediction(
            outcome="unknown",
            why=str(unknown),
            pressure_before=pressure,
            pressure_after=pressure,
            pressure_threshold=threshold,
            compaction_target=None,
            debt_pending_after=True,
            exhausted=False,
        )
    return DrainPrediction(
        outcome=end.outcome,
        why=end.why,
        pressure_before=pressure,
        pressure_after=replay.context_tokens(),
        pressure_threshold=threshold,
        compaction_target=end.target,
        debt_pending_after=end.pending,
        exhausted=end.exhausted,
        passes=tuple(replay.passes),
        items=tuple(replay.items),
        new_summaries=dict(replay.new_summaries),
        maintenance_after=_maintenance_after(row, end.pending, end.failure),
        log_lines=tuple(replay.log),
    )


def _drain(
    replay: _Replay, session: Session, state: MaintenanceState, token_budget: int, threshold: int, now_ms: float | None
) -> _End:
    """``maybeConsumeDeferredCompactionDebtForAssemble`` and what it calls, on the replay."""
    row = session.maintenance or {}
    settings = replay.settings

    def still_pending_unless_under(why: str, **kw: Any) -> _End:
        """The debt stays; the gate degrades while the stored context is over the threshold."""
        return _End("still-pending" if replay.context_tokens() > threshold else "cleared", why, **kw)

    force = state.retry_attempts < ASSEMBLE_FORCE_MAX_RETRY_ATTEMPTS
    if not force and state.next_attempt_after_ms is not None and now_ms is not None:
        if state.next_attempt_after_ms > now_ms:
            return _End("still-pending", "its retries are used up and the backoff is still running")
    budget = _debt_budget(token_budget, row.get("token_budget"))
    if settings.line != "0.15":  # 1.0 asks its pending-summary planner first
        if session.pending_summary_batch is not None:
            raise _Unmodelled("a pending summary batch is in progress; the engine would prepare or publish it")
        plan = _pending_plan(
            replay, settings.tail_override or settings.fresh_tail_count, settings.fresh_tail_max_tokens
        )
        if plan.outcome == "nothing-to-publish":
            return _End("cleared", "the 1.0 pending-summary planner finds nothing new to publish", pending=False)
        if plan.outcome == "planned":
            return _publish_result(replay, plan, threshold)
    if budget is None:
        failure = "missing token budget in compact params"
        return still_pending_unless_under("the compaction has no usable token budget", failure=failure)
    target = math.floor(CONTEXT_THRESHOLD * budget)
    try:
        sweep, reached, exhausted = _threshold_compaction(replay, budget, force)
    except _DrainFailed as failure:
        return still_pending_unless_under(f"the compaction fails: {failure}", target=target, failure=str(failure))
    if exhausted:
        why = "nothing outside the fresh tail can be compacted"
        return _End("exhausted", why, pending=False, exhausted=True, target=target)
    if reached:
        return _End("cleared", f"the compaction reaches its target of {target} tokens", pending=False, target=target)
    failure = "compacted but still over target" if sweep.action_taken else "live context still exceeds target"
    why = f"the compaction stays over its target of {target} tokens"
    return still_pending_unless_under(why, target=target, failure=failure)


def _publish_result(replay: _Replay, plan: PendingPlan, threshold: int) -> _End:
    """The 1.0 drain when the planner plans: prepare and publish, or (too much work, a gap) leave the debt pending."""
    try:
        published = _publish_pending_plan(replay, plan)
    except _DrainFailed as failure:
        return _End("still-pending", f"preparing pending summaries fails: {failure}", failure=str(failure))
    if published is None:
        return _End(
            "still-pending",
            f"the pending-summary plan ({_count(len(plan.nodes), 'summary')}) is not published in one drain",
        )
    remaining = plan.end < plan.compactable_end  # the debt stays while compactable work is left
    over = remaining and replay.context_tokens() > threshold
    return _End("still-pending" if over else "cleared", published, pending=remaining)


def _tail_cap(value: Any) -> int | None:
    number = _finite_number(value)
    return math.floor(number) if number is not None and number >= 0 else None


def _debt_budget(token_budget: int, recorded: Any) -> int | None:
    """The compaction's budget: the smaller of the assemble budget and the one recorded with the debt."""
    budget: int | float = token_budget
    recorded_number = _js_to_number(recorded) if recorded not in (None, "", 0) else None
    if recorded_number is not None and recorded_number == recorded_number and recorded_number > 0:
        budget = min(budget, recorded_number)
    if not math.isfinite(budget) or budget <= 0:
        return None
    return math.floor(budget)


def _maintenance_after(row: Mapping[str, Any], pending: bool, failure: str | None) -> dict[str, Any]:
    """The debt row as the drain leaves it (timestamps, which the engine takes from the clock, left as they were)."""
    after = dict(row)
    after["pending"] = 1 if pending else 0
    after["running"] = 0
    retries = MaintenanceState.from_row(row).retry_attempts
    backs_off = failure is not None and not re.search(
        r"\b(provider auth failure|summary provider circuit breaker is open)\b", failure, re.IGNORECASE
    )
    after["retry_attempts"] = retries + 1 if backs_off else 0
    if failure is not None or not pending:
        after["last_failure_summary"] = failure
    return after


def drained_session(session: Session, prediction: DrainPrediction) -> Session:
    """The session as the engine reads it after the drain: compacted context, new summaries, the debt row after."""
    summaries = dict(session.summaries)
    summaries.update(prediction.new_summaries)
    items = [ContextItemRow(i.ordinal, i.item_type, i.message_id, i.summary_id) for i in prediction.items]
    tokens = prediction.pressure_after
    conversation = replace(
        session.conversation,
        context_item_count=len(items),
        summary_count=session.conversation.summary_count + len(prediction.new_summaries),
        token_total=tokens if isinstance(tokens, int) else session.conversation.token_total,
    )
    return replace(
        session,
        conversation=conversation,
        items=items if prediction.passes else list(session.items),
        summaries=summaries,
        maintenance=dict(prediction.maintenance_after) if prediction.maintenance_after is not None else None,
        stored_context_tokens=tokens,
        cache_identity=None,  # a state the database never held: its renders are neither read nor written
        cached_renders=None,
    )
