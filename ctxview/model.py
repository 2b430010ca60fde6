"""The data ctxview passes between its layers.

Rows read from an LCM database (``*Row``), the parameters of one assembly
(``Params``) and the trace it returns (``Trace`` with one ``Decision`` per
context item and per live input).  The trace is the only thing views read:
every label, colour and explanation in the UI and in exports comes from it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, overload

# --- rows read from the database ---------------------------------------------------

# Rows are read-only by convention.  The three read once per message are not ``frozen``:
# a frozen dataclass sets every field through ``object.__setattr__``, which made
# building them a tenth of opening a 100,000-message session.  ``unsafe_hash`` keeps
# them hashable as before.


@dataclass(slots=True, unsafe_hash=True)
class PartRow:
    """One ``message_parts`` row (only the columns the assembler reads)."""

    part_id: str | None
    part_type: str
    ordinal: int
    text_content: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_input: str | None = None
    tool_output: str | None = None
    metadata: str | None = None


_V = TypeVar("_V")


class _ReadOnce(Generic[_V]):
    """A mapping by message id read (``read()``) the first time any id is asked for, once, in any thread."""

    def __init__(self, read: Callable[[], Mapping[Any, _V]]) -> None:
        self._read: Callable[[], Mapping[Any, _V]] | None = read
        self._values: Mapping[Any, _V] | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._values is not None

    def _value_of(self, message_id: Any, default: _V) -> _V:
        if self._values is None:
            with self._lock:
                if self._values is None:
                    assert self._read is not None
                    self._values = self._read()
                    self._read = None
        return self._values.get(message_id, default)


class PartsSource(_ReadOnce[tuple["PartRow", ...]]):
    """Reads the parts of every message of a session once, when the first message's parts are asked for.

    The store hands one to a session whose message renders came from the render cache: the
    parts (the largest table) are then only read if something needs them after all (a message the
    cache lacks, the drain replay's summary text, the ROI scorer, the detail pane).
    """

    def parts_of(self, message_id: Any) -> tuple[PartRow, ...]:
        return self._value_of(message_id, ())


class DeferredParts(Sequence["PartRow"]):
    """A message's parts, read from the database on first use (see ``PartsSource``)."""

    __slots__ = ("_message_id", "_source")

    def __init__(self, source: PartsSource, message_id: Any) -> None:
        self._source = source
        self._message_id = message_id

    @property
    def loaded(self) -> bool:
        """True once the session's parts have been read (asking for them then costs nothing)."""
        return self._source.loaded

    @property
    def stored_id(self) -> Any:
        """The message id as the parts table stores it."""
        return self._message_id

    def _parts(self) -> tuple[PartRow, ...]:
        return self._source.parts_of(self._message_id)

    @overload
    def __getitem__(self, index: int) -> PartRow: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[PartRow, ...]: ...
    def __getitem__(self, index: int | slice) -> PartRow | tuple[PartRow, ...]:
        return self._parts()[index]

    def __len__(self) -> int:
        return len(self._parts())

    def __iter__(self) -> Iterator[PartRow]:
        return iter(self._parts())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DeferredParts):
            other = other._parts()
        return isinstance(other, tuple) and self._parts() == other

    def __hash__(self) -> int:
        return hash(self._parts())

    def __repr__(self) -> str:
        return f"DeferredParts(message {self._message_id!r})"


class RowTexts(_ReadOnce[tuple[str, "str | None"]]):
    """The ``content`` and ``created_at`` of a session's messages, read from the database on first use.

    A session whose renders come from the render cache holds neither (~23 MB at 100,000 messages): only
    a message rendered again, the drain replay or the ROI scorer read them.  ``read`` returns message id →
    (content, created_at) from the same database state, or raises.
    """

    def __init__(self, read: Callable[[], Mapping[int, tuple[str, str | None]]]) -> None:
        super().__init__(read)
        self._parts: PartsSource | None = None
        self._stored_ids: Mapping[int, Any] = {}

    def defer_parts(self, source: PartsSource, stored_ids: Mapping[int, Any]) -> None:
        """The rows' ``parts``, left unset too, are ``DeferredParts`` of ``source`` (by the id as stored:
        ``stored_ids`` where it is not the message id), made when first read."""
        self._parts = source
        self._stored_ids = stored_ids

    def parts_of(self, message_id: int) -> Sequence[PartRow]:
        if self._parts is None:
            return ()
        return DeferredParts(self._parts, self._stored_ids.get(message_id, message_id))

    def texts_of(self, message_id: int) -> tuple[str, str | None]:
        return self._value_of(message_id, ("", None))


_DEFERRED_TEXTS = frozenset({"content", "created_at"})  # (and ``parts``: ``RowTexts.defer_parts``)


@dataclass(slots=True, unsafe_hash=True)
class MessageRow:
    message_id: int
    seq: int
    role: str  # DB role: system | user | assistant | tool
    content: str
    token_count: int | None = None
    created_at: str | None = None
    large_content: str | None = None
    sender_metadata: str | None = None  # raw openclaw_sender_metadata JSON text
    parts: Sequence[PartRow] = ()  # a tuple, or DeferredParts when the render cache made reading them unneeded
    # where ``content`` and ``created_at`` come from when they were left unset (a row read from the render cache)
    texts: RowTexts | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        """``content`` / ``created_at`` / ``parts`` of a row read from the render cache, made on first use
        (``RowTexts``): 100,000 rows hold none of them until something asks."""
        if self.texts is not None:
            if name in _DEFERRED_TEXTS:
                self.content, self.created_at = self.texts.texts_of(self.message_id)
                return self.content if name == "content" else self.created_at
            if name == "parts":
                parts = self.parts = self.texts.parts_of(self.message_id)
                return parts
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def unread_texts_row(
    message_id: int, seq: int, role: str, token_count: int | None, large_content: str | None,
    sender_metadata: str | None, texts: RowTexts,
) -> MessageRow:
    """A message row whose ``content``, ``created_at`` and ``parts`` come from ``texts`` when first asked for."""
    row = _new_row(MessageRow)
    row.message_id = message_id
    row.seq = seq
    row.role = role
    row.token_count = token_count
    row.large_content = large_content
    row.sender_metadata = sender_metadata
    row.texts = texts
    return row


_new_row = object.__new__


@dataclass(frozen=True, slots=True)
class SummaryRow:
    summary_id: str
    kind: str  # leaf | condensed
    depth: int
    content: str
    token_count: int | None = None
    earliest_at: str | None = None  # raw TEXT, parsed by the renderer
    latest_at: str | None = None
    descendant_count: Any = 0  # raw column value; the renderer floors it (§1.1)
    created_at: str | None = None
    file_ids: str | None = None
    model: str | None = None
    parent_ids: tuple[str, ...] = ()  # summary_parents rows, ORDER BY ordinal (sources condensed into it)
    source_message_ids: tuple[int, ...] = ()  # summary_messages rows, ORDER BY ordinal
    max_source_seq: int | None = None  # §3 summaryMaxSourceSeq (recursive), precomputed by the store


@dataclass(slots=True, unsafe_hash=True)
class ContextItemRow:
    ordinal: int
    item_type: str
    message_id: int | None
    summary_id: str | None


@dataclass(frozen=True, slots=True)
class LargeFileRow:
    file_id: str
    file_name: str | None = None
    mime_type: str | None = None
    byte_size: int | None = None
    exploration_summary: str | None = None


@dataclass(frozen=True, slots=True)
class FocusBriefRow:
    brief_id: str
    prompt: str | None
    content: str
    status: str
    token_count: Any = None
    target_tokens: Any = None
    covered_latest_at: str | None = None
    covered_message_seq: int | None = None
    created_at: str | None = None


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """One row of the conversation picker / ``ctxview conversations``."""

    conversation_id: int
    session_id: str | None
    session_key: str | None
    title: str | None
    active: bool
    archived: bool
    created_at: str | None
    message_count: int
    context_item_count: int
    summary_count: int
    token_total: int  # Σ stored token_count of the context items (messages + summaries)


@dataclass(frozen=True, slots=True)
class ConversationRef:
    """The ``conversations`` columns the engine's session lookup reads, as stored (rowid order)."""

    conversation_id: int
    session_id: Any
    session_key: Any
    active: Any
    created_at: Any


@dataclass(slots=True)
class Session:
    """Everything the assembler needs about one conversation, read in one pass."""

    conversation: ConversationInfo
    items: list[ContextItemRow]
    messages: dict[int, MessageRow]
    summaries: dict[str, SummaryRow]
    large_files: dict[str, LargeFileRow] = field(default_factory=dict)
    focus_brief: FocusBriefRow | None = None
    # engine-only state (§10.5, §10.6): rows as stored, keyed by column; None where there is no row
    maintenance: dict[str, Any] | None = None  # conversation_compaction_maintenance
    bootstrap_state: dict[str, Any] | None = None  # conversation_bootstrap_state (0.15 line only)
    pending_summary_batch: dict[str, Any] | None = None  # an active pending_compaction_batches row (1.0 drain)
    stored_context_tokens: Any = 0  # Σ stored token_count of the context items (the degrade gate's pressure)
    source: str = ""  # path of the database, for titles and messages
    warnings: list[str] = field(default_factory=list)
    data_version: int | None = None  # PRAGMA data_version when it was read
    tables: frozenset[str] = frozenset()  # the database's tables: they say which engine line wrote it
    conversation_refs: tuple[ConversationRef, ...] = ()  # every conversation, for the engine's session lookup
    no_conversation: bool = False  # a stand-in: the engine's lookup found none, and there is none to show
    # the database file's state when it was read (render_cache.database_identity), when it held still
    # and was read as a snapshot; None: message renders are not cached for this session
    cache_identity: tuple[Any, ...] | None = None
    # message renders the store found in the render cache for this state (message id → fields), for the
    # first resolution to use; with them the parts were not read (MessageRow.parts are DeferredParts)
    cached_renders: tuple[bool, dict[int, Any]] | None = None
    # for the render cache to keep the rows as read: the warnings about the context_items and messages
    # rows, and the message ids as stored where they are not the plain integer id
    row_warnings: tuple[str, ...] = ()
    stored_message_ids: dict[int, Any] = field(default_factory=dict)
    stored_sums: tuple[Any, Any] | None = None  # (conversation.token_total, stored_context_tokens) when plain sums


# --- parameters ----------------------------------------------------------------------

ENGINE_DEFAULT_BUDGET = 128_000
ENGINE_DEFAULT_FRESH_TAIL = 64
ASSEMBLER_DEFAULT_FRESH_TAIL = 8


@dataclass(frozen=True, slots=True)
class Params:
    """Inputs of one assembly; defaults follow the reference engine (§9.1)."""

    token_budget: int = ENGINE_DEFAULT_BUDGET
    prompt: str | None = None
    fresh_tail_count: float = ENGINE_DEFAULT_FRESH_TAIL
    fresh_tail_max_tokens: int | None = None
    prompt_aware_eviction: bool = False
    stub_large_tool_payloads: bool = False
    timezone: str = "UTC"
    live_messages: tuple[Any, ...] | None = None  # message dicts, key order preserved
    available_tools: tuple[str, ...] | None = None
    engine: bool = True  # run the engine step (§9) after the assembler
    reserved_tokens: int = 0  # host costs (system prompt, tool schemas) taken off the budget
    scorer: str = "lcm"  # lcm | rarity | roi (issue 5)
    tokenizer: str = "lcm"  # lcm | unicode (issue 5)
    citations_path: str | None = None
    stub_threshold: float = 0.3
    # the host's session identity (params.json): the engine looks the conversation up by it (§9.2 step 2);
    # both None → the loaded conversation is assembled as is
    session_id: str | None = None
    session_key: str | None = None
    engine_line: str | None = None  # "0.15" | "1.0"; None → the line the database's tables point to

    @property
    def effective_budget(self) -> int:
        """The budget the assembler sees: the token budget less reserved host costs.

        Never below 1, except the 0 a params file can give (a budget in (0, 1) the engine floors to 0).
        """
        if self.token_budget < 1:
            return max(0, self.token_budget)
        return max(1, self.token_budget - max(0, self.reserved_tokens))


# --- the trace --------------------------------------------------------------------------

Segment = Literal["evictable", "fresh-tail", "focus", "live", "recall"]

Outcome = Literal[
    "kept",  # evictable item selected by the budget pass and emitted
    "fresh-tail",  # protected newest item, emitted
    "focus",  # focus-brief overlay item, always kept
    "evicted",  # not selected by the budget pass
    "stubbed",  # kept, but its payload replaced by a one-line stub
    "tool-calls-stripped",  # kept, but some tool-call blocks removed (§7.1)
    "dropped-orphan-calls",  # selected, but every block was an orphan call: message removed (§7.1)
    "dropped-empty",  # selected, but empty after clean-up (§7.2–7.3)
    "orphan-result-dropped",  # toolResult with no preceding call (§7.4)
    "duplicate-dropped",  # duplicate call/result removed by the pairing repair (§7.4)
    "evicted-for-live",  # assembled, then evicted by the engine to make room for a live input (§9.7)
    "clamped",  # assembled, then cut by the serialized clamp (§9.8)
    "prefill-stripped",  # trailing assistant removed (§9.9)
    "covered",  # live input already present in the assembled context (§9.6)
    "appended",  # live input appended to the context (§9.7)
    "live-ignored",  # live message that is not a volatile candidate
    "live-dropped",  # appended live input later removed by the clamp
    "unresolved",  # context item that did not resolve (dangling reference, empty assistant)
    "replaced-by-focus",  # summary covered by the active focus brief (§10.1); the brief item stands in for it
    "recall-cue",  # the engine's prompt-recall cue (§10.3), put first
    "recall-dropped",  # a recall cue built, then dropped (no room, or room needed for live inputs / the clamp)
]

KEPT_OUTCOMES: frozenset[str] = frozenset(
    {"kept", "fresh-tail", "focus", "stubbed", "tool-calls-stripped", "appended", "recall-cue"}
)


def describe_key(key: str) -> str:
    """How a person names a decision key in a sentence: "item 12" or "live input L4"."""
    prefix, _, number = key.partition(":")
    if prefix == "o" and number:
        return f"item {number}"
    if prefix == "l" and number:
        return f"live input L{number}"
    if prefix == "r":
        return "the recall cue"
    return key


def count_text(count: int, noun: str, plural: str | None = None) -> str:
    """``1 message``, ``12,018 messages``: thousands separators and the right number."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def outcome_text(outcome: str) -> str:
    """An outcome as people read it: ``fresh-tail`` → ``fresh tail``."""
    return outcome.replace("-", " ")


def format_score(score: float | None) -> str:
    """Four decimals (tables), blank when the item was not scored."""
    return "" if score is None else f"{score:.4f}"


@dataclass(frozen=True, slots=True)
class TermMatch:
    """One prompt term's share of an item's score (so views can say *why*)."""

    term: str
    count: int  # occurrences in the item
    contribution: float  # what it added to the score
    weight: float = 1.0  # scorer-specific weight (1 for BM25-lite; rarity/slug for others)
    note: str = ""  # e.g. "slug bonus"


@dataclass(slots=True)
class Decision:
    """What happened to one context item or live input, and why."""

    key: str  # stable id across runs: "o:<ordinal>" for items, "l:<index>" for live inputs
    ordinal: int | None  # context ordinal (None for live inputs)
    live_index: int | None  # index in the live message list (None for context items)
    kind: str  # message | summary | focus | live
    label: str  # what the table shows: user / assistant / toolResult / leaf / condensed d2 / focus / live
    role: str | None  # role as emitted
    source_role: str | None  # DB role (messages only)
    message_id: int | None
    seq: int | None
    summary_id: str | None
    tokens: int  # item estimate (drives selection)
    serialized_tokens: int | None  # serialized estimate, where the engine used one
    score: float | None
    matched_terms: tuple[TermMatch, ...]
    segment: Segment
    selected: bool  # in keptOrdinals (before clean-up)
    outcome: Outcome
    reason: str  # one line a person reads
    pair_with: tuple[str, ...] = ()  # keys of tool-pair partners
    tool_call_ids: tuple[str, ...] = ()  # call ids this item issues or answers
    output_index: int | None = None  # position in the final messages, if emitted
    protected: str | None = None  # why the engine may not evict it ("fresh tail", "live anchor", …)
    evicted_by: str | None = None  # key of the live input that forced the eviction
    covered_by: str | None = None  # for a covered live input: key of the item covering it
    label_extra: str = ""  # scorer label such as "exact" / "keyword-only"
    text: str = ""  # the text the scorer saw
    synthetic_result_for: tuple[str, ...] = ()  # call ids that got a synthetic result after this item
    min_budget: int | None = None  # smallest budget at which it is kept (budget sweep)
    summary_kind: str | None = None  # leaf | condensed (summaries only)

    @property
    def item_id(self) -> str:
        """What a person calls the item: its ordinal, or ``L<i>`` for a live input."""
        if self.ordinal is not None:
            return str(self.ordinal)
        return f"L{self.live_index}" if self.live_index is not None else "R"

    @property
    def is_kept(self) -> bool:
        return self.outcome in KEPT_OUTCOMES


@dataclass(slots=True)
class RunSummary:
    """The run as a whole: mode, boundaries and where the tokens went."""

    selection_mode: str  # full-fit | prompt-aware | chronological | empty
    fresh_tail_ordinal: int | None
    token_budget: int
    effective_budget: int
    reserved_tokens: int
    tail_tokens: int
    focus_tokens: int
    evictable_total_tokens: int
    kept_evictable_tokens: int
    remaining_budget: int
    assembler_tokens: int  # the assembler's estimatedTokens (§6)
    final_tokens: int  # the final (serialized) estimate the engine returns
    live_appended_tokens: int = 0
    recall_tokens: int = 0  # the engine's prompt-recall cue, when it is put first (§10.3)
    evicted_for_live_tokens: int = 0
    searchable_prompt: bool = False
    prompt_terms: tuple[str, ...] = ()
    engine_outcome: str = "assembled"
    over_budget: bool = False
    clamped: bool = False
    fallback_why: str | None = None  # the engine sent the live transcript instead: why, in words
    engine_line: str = "0.15"  # the engine line whose rules ran (lossless-claw 0.15 or 1.0)
    engine_release: str = "0.15.3"
    engine_rules_why: str = ""  # why those rules ("the database has 1.0 tables (…)")
    low_confidence: bool = False  # prompt searchable, but every score is zero
    keyword_only: bool = False  # rarity: every kept evictable item matches the prompt's words only (scorers.md B.2)


class DecisionList(Protocol):
    """The decisions of one trace: a read-only sequence, built lazily, that the pipeline adjusts by key.

    The assembler's list (``ctxview.assembly.incremental.decision_list.LazyDecisionList``)
    builds a decision only when it is read; whole columns come without building any.
    The engine's later changes arrive as per-key mappings and overrides, applied as
    decisions are built.  Views read it with ``column`` and ``index_of`` below, which
    also accept a plain list of decisions (tests and hand-made traces use one).
    """

    def __len__(self) -> int: ...

    @overload
    def __getitem__(self, index: int) -> Decision: ...

    @overload
    def __getitem__(self, index: slice) -> list[Decision]: ...

    def __getitem__(self, index: int | slice) -> Decision | list[Decision]: ...

    def __iter__(self) -> Iterator[Decision]: ...

    def column(self, name: str) -> list[Any]:
        """``[getattr(d, name) for d in self]``, without building decisions where it can (do not modify it)."""
        ...

    def index_of(self, key: str) -> int | None:
        """Position of the decision with ``key``, or None."""
        ...

    def reset_field(self, name: str, value: Any) -> None:
        """Every decision gets ``name = value`` before the per-key values and overrides below."""
        ...

    def map_field(self, name: str, values_by_key: Mapping[str, Any]) -> None:
        """Decisions whose key is in ``values_by_key`` get ``name`` from it (an override still wins)."""
        ...

    def override_keys(self, updates: dict[str, dict[str, Any]]) -> None:
        """Fields set on the decisions of these keys, after they are built (later calls win per field)."""
        ...

    def overridden(self, name: str) -> dict[int, Any]:
        """Position → value of every override that sets ``name``."""
        ...

    def extend(self, decisions: Sequence[Decision]) -> None:
        """Append finished decisions (live inputs, the recall cue) as they are."""
        ...

    def fork(self) -> DecisionList:
        """A new list over the same run without this list's changes (each trace adjusts its own)."""
        ...


def column(decisions: Sequence[Decision] | DecisionList, name: str) -> list[Any]:
    """A field of every decision, the fast way when ``decisions`` is a lazy ``DecisionList``."""
    reader = getattr(decisions, "column", None)
    if reader is not None:
        values: list[Any] = reader(name)
        return values
    return [getattr(d, name) for d in decisions]


def index_of(decisions: Sequence[Decision] | DecisionList, key: str) -> int | None:
    """Position of the decision with ``key``, or None."""
    finder = getattr(decisions, "index_of", None)
    if finder is not None:
        found: int | None = finder(key)
        return found
    for index, decision in enumerate(decisions):
        if decision.key == key:
            return index
    return None


@dataclass(slots=True)
class Trace:
    params: Params
    conversation_id: int | None
    summary: RunSummary
    decisions: DecisionList  # context items in ordinal order, then live inputs in live order
    messages: list[Any]  # the final messages the model receives
    message_keys: list[str | None]  # parallel to messages: decision key, or None for synthetic results
    assembler_messages: list[Any]
    kept_ordinals: list[int]
    unresolved_ordinals: list[int]
    context_ordinals: list[int]
    stages: dict[str, Any]  # parity-shaped stage records (assembler, volatileAppend, serializedClamp, …)
    warnings: list[str] = field(default_factory=list)  # the engine's log lines and what the store noticed
    notes: list[str] = field(default_factory=list)  # ctxview's own words: what it assumed or cannot reproduce
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    protected_pairs: list[tuple[str, str, str]] = field(default_factory=list)  # (call key, result key, why)
    # builds stages["assembler"]["debug"] (§8: it hashes every kept message, so only exports pay for it)
    assembler_debug: Callable[[], dict[str, Any] | None] | None = field(default=None, repr=False, compare=False)

    def stage_records(self) -> dict[str, Any]:
        """``stages`` complete, with the assembler's debug record built if it was deferred."""
        if self.assembler_debug is not None:
            debug = self.assembler_debug()
            self.assembler_debug = None
            assembler = self.stages.get("assembler")
            if debug is not None and isinstance(assembler, dict):
                assembler["debug"] = debug
        return self.stages

    def by_key(self) -> dict[str, Decision]:
        return {d.key: d for d in self.decisions}

    def outcome_counts(self) -> dict[str, int]:
        """Decisions per outcome, in order of first appearance (counted at C speed: it runs on every keystroke)."""
        return dict(Counter(column(self.decisions, "outcome")))
