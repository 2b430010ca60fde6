"""Why each context item and live input ended where it did: every ``Decision`` and its one-line reason.

Every ``Decision`` ctxview makes is built here.  The constructors
(``item_decision``, ``focus_decision``, ``covered_decision``,
``unresolved_decision``, ``live_decision``, ``recall_decision``) fill what
follows from the thing decided about (an item's key, role, ids, tokens, text;
a live input's roles); their callers say only what was decided and why.  A
new field of the items table is therefore declared in ``ctxview.model.Decision``
and filled in this module.

The assembler records what one run decided in a ``RunRecord``;
``run_decisions`` turns any range of its decision plan into decisions with
their reasons (the lazy list in ``incremental/decision_columns.py`` asks for
a chunk at a time).  The engine builds the decisions of live inputs and of
the recall cue with the constructors and changes item decisions by key.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from typing import Any

from ctxview.assembly.fresh_tail import FreshTail
from ctxview.assembly.incremental.static import PlanIndex, SessionStatic, item_label, tool_ids_of
from ctxview.assembly.live import stored_role
from ctxview.assembly.postprocess import Cleaned
from ctxview.assembly.ranking import Ranking
from ctxview.assembly.resolve import ResolvedItem, unresolved_reason
from ctxview.assembly.select import Selection
from ctxview.assembly.tool_pairs import RepairLog
from ctxview.model import ContextItemRow, Decision, MessageRow, Outcome, Segment, Session, TermMatch, describe_key

RECALL_KEY = "r:cue"  # the decision key of the engine's prompt-recall cue (§10.3)

# --- the constructors ----------------------------------------------------------------------------


def item_decision(
    item: ResolvedItem,
    *,
    label: str,
    segment: Segment,
    selected: bool,
    outcome: Outcome,
    reason: str,
    score: float | None = None,
    matched_terms: tuple[TermMatch, ...] = (),
    label_extra: str = "",
    pair_with: tuple[str, ...] = (),
    tool_call_ids: tuple[str, ...] = (),
    output_index: int | None = None,
    synthetic_result_for: tuple[str, ...] = (),
) -> Decision:
    """A context item the budget pass saw (evictable or fresh tail); ``item`` as it was assembled (a stub's copy).

    Built once per item an export or a view reads, so its fields go in by position: matching
    25 keywords against a slotted dataclass's ``__init__`` costs a fifth of building a decision.
    ``tests/unit/test_decisions.py`` checks every field by name.
    """
    summary = item.summary
    return Decision(
        item.key,  # key
        item.ordinal,  # ordinal
        None,  # live_index
        "message" if item.is_message else "summary",  # kind
        label,  # label
        item.message_role,  # role
        item.source_role,  # source_role
        item.message_id,  # message_id
        item.seq,  # seq
        summary.summary_id if summary is not None else None,  # summary_id
        item.tokens,  # tokens
        None,  # serialized_tokens
        score,  # score
        matched_terms,  # matched_terms
        segment,  # segment
        selected,  # selected
        outcome,  # outcome
        reason,  # reason
        pair_with,  # pair_with
        tool_call_ids,  # tool_call_ids
        output_index,  # output_index
        None,  # protected
        None,  # evicted_by
        None,  # covered_by
        label_extra,  # label_extra
        item.text,  # text
        synthetic_result_for,  # synthetic_result_for
        None,  # min_budget
        summary.kind if summary is not None else None,  # summary_kind
    )


def focus_decision(focus: ResolvedItem, *, outcome: Outcome, reason: str, output_index: int | None) -> Decision:
    """The focus brief's item (§10.1): always kept, never listed in keptOrdinals, so never ``selected``."""
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
        selected=False,
        outcome=outcome,
        reason=reason,
        output_index=output_index,
        text=focus.text,
    )


def covered_decision(item: ResolvedItem, *, reason: str) -> Decision:
    """A summary the focus brief replaces (§10.1)."""
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
        reason=reason,
        text=item.text,
    )


def unresolved_decision(row: ContextItemRow, message: MessageRow | None, *, segment: Segment, reason: str) -> Decision:
    """A context row that resolved to no item (``message``: its stored message, if there is one)."""
    return Decision(
        key=f"o:{row.ordinal}",
        ordinal=row.ordinal,
        live_index=None,
        kind=row.item_type if row.item_type in ("message", "summary") else "message",
        label=message.role if message is not None else "missing",
        role=None,
        source_role=message.role if message is not None else None,
        message_id=row.message_id,
        seq=message.seq if message is not None else None,
        summary_id=row.summary_id,
        tokens=0,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment=segment,
        selected=False,
        outcome="unresolved",
        reason=reason,
    )


def live_decision(
    index: int,
    message: Any,
    *,
    stored: Any,
    outcome: Outcome,
    reason: str,
    output_index: int | None,
    tokens: int = 0,
    serialized_tokens: int | None = None,
    covered_by: str | None = None,
) -> Decision:
    """Live input ``index``: ``message`` as the engine read it, ``stored`` as the host sent it."""
    role = message.get("role") if isinstance(message, dict) else None
    return Decision(
        key=f"l:{index}",
        ordinal=None,
        live_index=index,
        kind="live",
        label="live",
        role=role if isinstance(role, str) else None,
        source_role=stored_role(stored),
        message_id=None,
        seq=None,
        summary_id=None,
        tokens=tokens,
        serialized_tokens=serialized_tokens,
        score=None,
        matched_terms=(),
        segment="live",
        selected=False,
        outcome=outcome,
        reason=reason,
        output_index=output_index,
        covered_by=covered_by,
    )


def recall_decision(text: str, tokens: int, *, outcome: Outcome, reason: str, output_index: int | None) -> Decision:
    """The engine's prompt-recall cue (§10.3): its own row, first when the model gets it."""
    return Decision(
        key=RECALL_KEY,
        ordinal=None,
        live_index=None,
        kind="recall",
        label="recall cue",
        role="user",
        source_role=None,
        message_id=None,
        seq=None,
        summary_id=None,
        tokens=tokens,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="recall",
        selected=False,
        outcome=outcome,
        reason=reason,
        output_index=output_index,
        text=text,
    )


# --- what one run decided ------------------------------------------------------------------------


@dataclass(slots=True)
class RunRecord:
    """What the assembler decided in one run, kept so its decisions can be built (and explained) when read."""

    session: Session
    static: SessionStatic
    tail: FreshTail
    evictable: list[ResolvedItem]
    selection: Selection
    scored: Sequence[tuple[float | None, tuple[TermMatch, ...]]] | None
    cleaned: Cleaned
    repair: RepairLog
    keys: list[str | None]
    remaining: int
    orphan_set: set[Any]
    duplicate_set: set[Any]
    selected_ids: set[int]
    plan_index: PlanIndex
    ranking: Ranking | None = None
    prep: RunLookups | None = None  # built by the first chunk of decisions, shared by the others


class PrefixIndex(Mapping[int, int]):
    """id(item) → evictable index, where the evictable items are the plan's first items (the usual run):
    read from the plan's position map (``PlanIndex.position``), with no dict of its own (~12 MB at
    100,000 items)."""

    __slots__ = ("_count", "_position")

    def __init__(self, position: dict[int, int], count: int) -> None:
        self._position = position
        self._count = count

    def get(self, key: int, default: Any = None) -> Any:
        pos = self._position.get(key)
        return pos if pos is not None and pos < self._count else default

    def __getitem__(self, key: int) -> int:
        pos = self.get(key)
        if pos is None:
            raise KeyError(key)
        return pos

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        return (key for key, pos in self._position.items() if pos < self._count)


@dataclass(slots=True)
class RunLookups:
    """Per-run lookups every chunk of decisions needs (built on the first chunk)."""

    keys: list[str | None]  # the run's output keys (``output_index`` is made from them when first read)
    evict_index: Mapping[int, int]
    effective: dict[int, ResolvedItem]  # id(canonical item) → the copy assembled in its place (a stub)
    touched: set[str]  # keys clean-up or the pairing repair changed
    _output_index: dict[str, int] | None = None

    @property
    def output_index(self) -> dict[str, int]:
        """Key → its last position in the output: made when first read (the whole-trace columns, a budget
        sweep's kept masks, never read it: 100,000 keys mapped per run for nothing)."""
        index = self._output_index
        if index is None:
            index = self._output_index = {key: i for i, key in enumerate(self.keys) if key is not None}
        return index


_stub_of = attrgetter("stub_of")  # (an item object is always true: compress keeps the stubs)


def _evictable_lookups(run: RunRecord) -> tuple[Mapping[int, int], dict[int, ResolvedItem]]:
    """id(item) → evictable index, and id(original) → its stub: shared with the session's last run when its
    evictable list holds the same items (comparing two lists of 100,000 objects by identity is C-fast)."""
    evictable = run.evictable
    static = run.static
    last = static.evictable_lookups  # (read once: another thread may replace it)
    if last is not None and len(last[0]) == len(evictable) and last[0] == evictable:
        return last[1], last[2]
    count = len(evictable)
    plain = run.plan_index.plain_items
    evict_index: Mapping[int, int]
    if plain is not None and count <= len(plain) and plain[:count] == evictable:
        evict_index = PrefixIndex(run.plan_index.position, count)
    else:
        evict_index = dict(zip(map(id, evictable), range(count), strict=True))
    effective = {id(item.stub_of): item for item in compress(evictable, map(_stub_of, evictable))}
    static.evictable_lookups = (list(evictable), evict_index, effective)
    return evict_index, effective


def run_lookups(run: RunRecord) -> RunLookups:
    prep = run.prep
    if prep is None:
        evict_index, effective = _evictable_lookups(run)  # (never modified: shared between runs)
        prep = run.prep = RunLookups(
            keys=run.keys,
            evict_index=evict_index,
            effective=effective,
            touched=(
                set(run.cleaned.stripped_calls)
                | run.cleaned.dropped_orphan_calls
                | set(run.cleaned.dropped_empty)
                | set(run.repair.dropped_assistants)
                | run.orphan_set
                | run.duplicate_set
                | set(run.repair.calls_removed)
            ),
        )
    return prep


# --- the reasons ---------------------------------------------------------------------------------


def _n(value: int) -> str:
    return f"{value:,}"


_SUFFIXES = ("th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th")


def _nth(rank: int) -> str:
    if 10 <= rank % 100 <= 20:
        return f"{rank}th"
    return f"{rank}{_SUFFIXES[rank % 10]}"


def _score_text(score: float) -> str:
    return "0" if score == 0 else f"{score:.3g}"


def _count_text(count: float) -> str:
    return str(int(count)) if float(count).is_integer() else f"{count:g}"


def _ids_text(ids: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(ids))


class Reasons:
    """Builds the one-line reasons of one run; shared strings are built once per run."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        sel = run.selection
        self.sel = sel
        self.count = len(run.evictable)
        self.full_fit = (
            f"kept: every evictable item fits ({_n(sel.total)} tokens in the {_n(sel.remaining)} left "
            "after the fresh tail)"
        )
        stop = run.evictable[sel.stop_index].ordinal if sel.stop_index is not None else None
        self.older = f"evicted: chronological walk stopped at ordinal {stop} (did not fit); everything older is dropped"
        self.remaining = _n(sel.remaining)

    def evictable(self, index: int, item: ResolvedItem, kept: bool) -> str:
        """§6: why the budget pass kept or evicted evictable item ``index``."""
        sel = self.sel
        mode = sel.mode
        if mode == "full-fit":
            return self.full_fit
        left = sel.left_before[index]
        if mode == "prompt-aware":
            scored = self.run.scored
            score = scored[index][0] if scored is not None else 0.0
            shown = "—" if score is None else _score_text(score)
            return (
                f"{'kept' if kept else 'evicted'}: score {shown} ranked {_nth(sel.rank[index])} of {self.count}; "
                f"{_n(item.tokens)} tokens {'fit' if kept else 'did not fit'} "
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
        """§5: why the item is in the fresh tail."""
        tail = self.run.tail
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


def stub_reason(canonical: ResolvedItem, stub: ResolvedItem, reason: str) -> str:
    """§10.2 (or an opt-in section-ROI stub): what the stub replaced, before the selection reason."""
    what = (
        f"tool output {stub.file_id} replaced by a reference"
        if stub.file_id is not None
        else "below the section-ROI threshold, replaced by a one-line stub"
    )
    return f"stubbed: {_n(canonical.tokens)} → {_n(stub.tokens)} tokens ({what}); {reason}"


def focus_reason(focus: ResolvedItem) -> str:
    brief = focus.brief
    ordinals = ", ".join(str(o) for o in focus.covered_ordinals)
    n = len(focus.covered_ordinals)
    return (
        f"focus brief {brief.brief_id if brief else ''}: always kept; replaces {n} covered "
        f"summar{'y' if n == 1 else 'ies'} (ordinal{'' if n == 1 else 's'} {ordinals})"
    )


def covered_reason(item: ResolvedItem, focus: ResolvedItem | None) -> str:
    brief = focus.brief if focus is not None else None
    watermark = ""
    if brief is not None:
        if brief.covered_message_seq is not None and item.summary_max_source_seq is not None:
            watermark = f" (its sources end at seq {item.summary_max_source_seq} ≤ {brief.covered_message_seq})"
        elif brief.covered_latest_at:
            latest = item.summary.latest_at if item.summary is not None else None
            watermark = f" (latest_at {latest} ≤ {brief.covered_latest_at})"
    return f"replaced by focus brief {brief.brief_id if brief else ''}{watermark}"


def post_outcome(run: RunRecord, key: str) -> tuple[Outcome, str] | None:
    """§7.1–§7.4: outcome and reason when clean-up or the pairing repair changed a selected item."""
    cleaned = run.cleaned
    repair = run.repair
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
    if key in run.orphan_set:
        return "orphan-result-dropped", "dropped: orphan tool result (its call is not in the context before it)"
    if key in run.duplicate_set:
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


# --- the decisions of a run ------------------------------------------------------------------------


class _ItemJudge:
    """Segment, outcome and reason of the context items of one run: what ``run_decisions`` and ``run_rows`` share."""

    __slots__ = (
        "effective", "evict_index", "moved", "ranking", "reasons", "run", "scored", "selected_ids", "touched",
    )  # fmt: skip

    def __init__(self, run: RunRecord, prep: RunLookups) -> None:
        self.run = run
        self.effective = prep.effective
        self.evict_index = prep.evict_index
        self.touched = prep.touched
        self.moved = run.repair.moved_after_results
        self.selected_ids = run.selected_ids
        self.scored = run.scored
        self.ranking = run.ranking
        self.reasons = Reasons(run)

    def judge(
        self, canonical: ResolvedItem
    ) -> tuple[ResolvedItem, str, bool, float | None, tuple[TermMatch, ...], str, Segment, Outcome, str]:
        """(item as assembled, key, selected, score, matched terms, label extra, segment, outcome, reason)."""
        effective = self.effective
        item = effective.get(id(canonical), canonical) if effective else canonical
        key = item.key
        selected = id(item) in self.selected_ids
        index = self.evict_index.get(id(item))
        score: float | None = None
        matched: tuple[TermMatch, ...] = ()
        label_extra = ""
        segment: Segment
        outcome: Outcome
        if index is not None:
            segment = "evictable"
            scored = self.scored
            if scored is not None:
                score, matched = scored[index]
            reason = self.reasons.evictable(index, item, selected)
            outcome = "kept" if selected else "evicted"
            ranking = self.ranking
            if ranking is not None:
                label_extra = ranking.labels[index]
                note = ranking.notes[index]
                reason = f"{reason} ({ranking.name}: {note})" if note else reason
            if item.stub_of is not None:
                reason = stub_reason(canonical, item, reason)
                if selected:
                    outcome = "stubbed"
        else:
            segment = "fresh-tail"
            outcome = "fresh-tail"
            reason = self.reasons.fresh(item)
        if selected:
            if key in self.touched:
                post = post_outcome(self.run, key)
                if post is not None:
                    outcome, reason = post
            elif key in self.moved:
                reason = f"{reason}; moved after the tool results of {describe_key(self.moved[key])}"
        return item, key, selected, score, matched, label_extra, segment, outcome, reason


def run_decisions(run: RunRecord, start: int = 0, stop: int | None = None) -> list[Decision]:
    """The decisions of plan positions ``start:stop`` (all by default), built fresh."""
    static = run.static
    prep = run_lookups(run)
    output_index = prep.output_index
    synthetic = run.repair.synthetic
    partners = static.partners.of
    judge = _ItemJudge(run, prep).judge
    focus = static.overlay.focus_item
    decisions: list[Decision] = []
    append = decisions.append
    plan = static.plan if start == 0 and stop is None else static.plan[start:stop]
    for position, (tag, obj) in enumerate(plan, start):
        if tag == "item":
            canonical: ResolvedItem = obj
            item, key, selected, score, matched, label_extra, segment, outcome, reason = judge(canonical)
            append(
                item_decision(
                    item,
                    label=item_label(canonical),
                    segment=segment,
                    selected=selected,
                    outcome=outcome,
                    reason=reason,
                    score=score,
                    matched_terms=matched,
                    label_extra=label_extra,
                    pair_with=partners(canonical, position),
                    tool_call_ids=tool_ids_of(canonical),
                    output_index=output_index.get(key),
                    synthetic_result_for=tuple(synthetic[key]) if key in synthetic else (),
                )
            )
        else:
            append(_other_decision(run, tag, obj, focus, output_index))
    return decisions


def _other_decision(
    run: RunRecord, tag: str, obj: Any, focus: ResolvedItem | None, output_index: dict[str, int]
) -> Decision:
    """The decision of a plan position that is not a plain context item (focus brief, covered, unresolved)."""
    if tag == "focus":
        brief: ResolvedItem = obj
        focus_outcome: Outcome = "focus"
        reason = focus_reason(brief)
        post = post_outcome(run, brief.key)
        if post is not None:
            focus_outcome, reason = post
        return focus_decision(brief, outcome=focus_outcome, reason=reason, output_index=output_index.get(brief.key))
    if tag == "covered":
        return covered_decision(obj, reason=covered_reason(obj, focus))
    row: ContextItemRow = obj
    message = run.session.messages.get(row.message_id) if row.message_id is not None else None
    return unresolved_decision(
        row,
        message,
        segment="fresh-tail" if run.tail.is_fresh(row.ordinal) else "evictable",
        reason=unresolved_reason(row, run.session),
    )


# The fields ``run_rows`` gives, in this order: a context item of the parity trace, its key and live index first.
ROW_FIELDS = (
    "key", "ordinal", "live_index", "kind", "source_role", "role", "message_id", "seq", "summary_id", "summary_kind",
    "tokens", "segment", "selected", "score", "outcome", "reason", "matched_terms", "pair_with", "tool_call_ids",
    "output_index", "protected", "evicted_by",
)  # fmt: skip


def run_rows(run: RunRecord, start: int, stop: int) -> list[list[Any] | None]:
    """``[getattr(d, f) for f in ROW_FIELDS]`` of each decision ``run_decisions(run, start, stop)`` would build.

    None at positions that are not plain context items (a focus brief, a covered summary, an
    unresolved row): the caller builds those decisions.  No ``Decision`` and no label is made:
    the CLI's JSON writes 100,000 of these rows.  ``tests/unit/test_decision_rows.py`` checks
    them against the decisions.
    """
    prep = run_lookups(run)
    output_index = prep.output_index
    static = run.static
    partners = static.partners.of
    judge = _ItemJudge(run, prep).judge
    rows: list[list[Any] | None] = []
    append = rows.append
    for position, (tag, obj) in enumerate(static.plan[start:stop], start):
        if tag != "item":
            append(None)
            continue
        item, key, selected, score, matched, _extra, segment, outcome, reason = judge(obj)
        summary = item.summary
        append(
            [
                key,
                item.ordinal,
                None,
                "message" if item.is_message else "summary",
                item.source_role,
                item.message_role,
                item.message_id,
                item.seq,
                summary.summary_id if summary is not None else None,
                summary.kind if summary is not None else None,
                item.tokens,
                segment,
                selected,
                score,
                outcome,
                reason,
                matched,
                partners(obj, position),
                tool_ids_of(obj),
                output_index.get(key),
                None,
                None,
            ]
        )
    return rows
