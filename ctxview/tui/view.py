"""What the inspector shows, computed from a Trace without Textual.

Row order and separators for the items table, the outcome diff between two
traces, one-line previews of messages and the cleaning of untrusted text.
Everything here *reads* decisions; nothing decides anything.  Kept free of
Textual so it can be unit-tested and run in worker threads.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, islice, repeat
from operator import gt, is_, is_not, le, lt, ne
from typing import Any, Literal

from ctxview.jsjson import to_plain
from ctxview.model import KEPT_OUTCOMES, Decision, Params, Trace, column, format_score, index_of, outcome_text

SortMode = Literal["ordinal", "score", "tokens"]
SORT_MODES: tuple[SortMode, ...] = ("ordinal", "score", "tokens")

# --- untrusted text ------------------------------------------------------------------

# ANSI/VT escape sequences (CSI, OSC, other ESC forms) and the C0/C1 control characters.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_INLINE_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")


def clean_inline(text: str, limit: int = 400) -> str:
    """One line of literal text: escapes removed, breaks folded to ``⏎``, controls replaced."""
    if len(text) > limit * 4:
        text = text[: limit * 4]
    text = _ANSI.sub("", text)
    text = _INLINE_BREAKS.sub(" ⏎ ", text.strip()).replace("\t", " ")
    text = _CONTROL.sub("�", text)
    return text[:limit]


def clean_block(text: str) -> str:
    """Multi-line literal text: newlines kept, tabs expanded, escapes and other controls removed."""
    text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    text = text.expandtabs(4)
    return _CONTROL.sub("�", text)


# --- cells -------------------------------------------------------------------------------

__all__ = ["format_score", "item_id", "outcome_text"]  # shared with the headless table (ctxview.model)


def item_id(decision: Decision) -> str:
    return decision.item_id








RowClass = Literal[
    "kept", "evicted", "fresh", "protected", "appended", "stripped", "stubbed", "synthetic", "dropped", "live", "focus"
]

_CLASS_BY_OUTCOME: dict[str, RowClass] = {
    "kept": "kept",
    "fresh-tail": "fresh",
    "focus": "focus",
    "evicted": "evicted",
    "evicted-for-live": "evicted",
    "clamped": "evicted",
    "stubbed": "stubbed",  # kept as a one-line stub (section ROI, large tool payloads)
    "tool-calls-stripped": "stripped",
    "prefill-stripped": "stripped",
    "dropped-orphan-calls": "dropped",
    "dropped-empty": "dropped",
    "orphan-result-dropped": "dropped",
    "duplicate-dropped": "dropped",
    "live-dropped": "dropped",
    "unresolved": "dropped",
    "appended": "appended",
    "covered": "live",
    "live-ignored": "live",
    "recall-cue": "appended",
    "recall-dropped": "dropped",
}


def rules_label(trace: Trace) -> str:
    """The engine rules of a trace in a few words, for the header (the table and JSON give the full why)."""
    s = trace.summary
    if s.engine_rules_why.startswith("chosen"):
        why = "chosen"
    else:
        why = "1.0 tables in the database" if s.engine_line == "1.0" else "no 1.0 tables in the database"
    return f"lossless-claw {s.engine_line} rules ({why})"


def row_class(decision: Decision) -> RowClass:
    """The colour family of a row, from its outcome and protection only."""
    if decision.synthetic_result_for and decision.is_kept:
        return "synthetic"
    base = _CLASS_BY_OUTCOME.get(decision.outcome, "dropped")
    if base == "kept" and decision.protected and (decision.pair_with or decision.protected.startswith("tool partner")):
        return "protected"  # kept because its tool-call/result partner may not be evicted
    return base


# --- table layout ----------------------------------------------------------------------

SeparatorKind = Literal["fresh-tail", "budget", "live", "evictable"]


@dataclass(frozen=True, slots=True)
class Separator:
    kind: SeparatorKind
    text: str


class TableLayout:
    """Display lines: a decision index (≥ 0) or ``-(separator index + 1)``.

    ``line_of`` (decision index → display line) is built when first read: a keystroke's
    repaint needs one line of it, not a dictionary of 100,000.
    """

    __slots__ = ("_cuts", "_line_of", "_order", "index_of_key", "keys", "lines", "separators", "sort")

    def __init__(
        self,
        sort: SortMode,
        lines: list[int],
        separators: list[Separator],
        line_of: dict[int, int] | None = None,
        index_of_key: Mapping[str, int] | None = None,
        keys: list[str] | None = None,
    ) -> None:
        self.sort = sort
        self.lines = lines
        self.separators = separators
        self._line_of = line_of
        self.index_of_key: Mapping[str, int] = index_of_key if index_of_key is not None else {}  # key → decision index
        self.keys = keys  # the key column ``index_of_key`` was built from (the next layout may share it)
        self._order: _OrdinalOrder | None = None  # (ordinal sort) the item order, for the next layout
        self._cuts: list[tuple[int, SeparatorKind]] | None = None  # (ordinal sort) where its separators sit

    @property
    def line_of(self) -> dict[int, int]:
        """Decision index → display line."""
        if self._line_of is None:
            self._line_of = {index: line for line, index in enumerate(self.lines) if index >= 0}
        return self._line_of

    def line_of_index(self, index: int) -> int | None:
        """The display line of one decision (without building ``line_of``: one search at C speed)."""
        if self._line_of is not None:
            return self._line_of.get(index)
        try:
            return self.lines.index(index) if index >= 0 else None
        except ValueError:
            return None

    @property
    def row_count(self) -> int:
        return len(self.lines) - len(self.separators)


@dataclass(frozen=True, slots=True, eq=False)
class _OrdinalOrder:
    """The ordinal sort of one trace's rows before the separators: what the next trace's layout shares
    when its ordinal and live-index columns are equal (the same items: every edit of a session)."""

    ordinal: list[int | None]
    live_index: list[int | None]
    context: list[int]
    live: list[int]
    ordered: list[int]
    keyed: list[int] | None  # the ordinals of ``ordered`` when they are plain and sorted (bisect finds the tail)

    @classmethod
    def of(cls, ordinal: list[int | None], live_index: list[int | None]) -> _OrdinalOrder:
        context, live = _context_and_live(live_index)
        contiguous = len(context) == 0 or context[-1] == len(context) - 1
        keyed = ordinal[: len(context)] if contiguous else [ordinal[i] for i in context]
        plain = None not in keyed  # (a missing ordinal sorts as 0)
        if not plain:
            keyed = [o or 0 for o in keyed]
        # decisions come in ordinal order already: then the (stable) sort would change nothing
        in_order = all(map(le, keyed, islice(keyed, 1, None)))
        ordered = context if in_order else sorted(context, key=lambda i: ordinal[i] or 0)
        return cls(ordinal, live_index, context, live, ordered, keyed if in_order and plain else None)  # type: ignore[arg-type]

    def same_items(self, ordinal: list[int | None], live_index: list[int | None]) -> bool:
        return (self.ordinal is ordinal or self.ordinal == ordinal) and (
            self.live_index is live_index or self.live_index == live_index
        )


def _context_and_live(live_index: list[int | None]) -> tuple[list[int], list[int]]:
    """Decision indexes of the context items and of the live inputs (appended last: then no scan in Python)."""
    count = len(live_index)
    items = live_index.count(None)
    if live_index[:items].count(None) == items:  # every item first, then every live input
        return list(range(items)), list(range(items, count))
    context = list(compress(range(count), map(is_, live_index, repeat(None))))
    live = list(compress(range(count), map(is_not, live_index, repeat(None))))
    return context, live


def layout_rows(trace: Trace, sort: SortMode, previous: TableLayout | None = None) -> TableLayout:
    """Order the decisions for display and place the separators (see the help screen).

    * ordinal: context items oldest first, then live inputs.  A ``fresh tail``
      line sits before the first protected ordinal; in chronological selection
      the ``budget`` line sits below the newest evictable item the newest-first
      walk did not keep (its cut).  Prompt-aware selection cuts by score: the
      line is drawn in the score sort only.
    * score: fresh tail first (always kept), then evictable items in selection
      priority (score descending, newer first on ties), the ``budget`` line
      before the first evictable item that was not kept, then live inputs.
    * tokens: largest first, no separators.

    ``previous``: the layout of the trace shown before, whose key index is shared when the
    keys are the same (every edit of one session: a keystroke then builds no dictionary).
    """
    # whole columns, not Decision objects: a lazy trace builds none of its 100,000 decisions here;
    # and list operations at C speed, not a Python loop per item: this runs on every keystroke
    decisions = trace.decisions
    summary = trace.summary
    live_index = column(decisions, "live_index")
    ordinal = column(decisions, "ordinal")
    order: _OrdinalOrder | None = None
    reused_lines: list[int] | None = None
    cuts_at: list[tuple[int, SeparatorKind]] | None = None
    if sort == "ordinal":
        known = previous._order if previous is not None else None
        order = known if known is not None and known.same_items(ordinal, live_index) else _OrdinalOrder.of(
            ordinal, live_index
        )
        context, live = order.context, order.live
    else:
        context, live = _context_and_live(live_index)
    lines: list[int] = []
    separators: list[Separator] = []

    def sep(kind: SeparatorKind, text: str) -> None:
        separators.append(Separator(kind, text))
        lines.append(-len(separators))

    if order is not None:
        ordered, keyed = order.ordered, order.keyed
        boundary = summary.fresh_tail_ordinal
        budget = summary.effective_budget
        budget_at: int | None = None
        if summary.selection_mode == "chronological":
            # the newest-first walk's cut: below the newest evictable item it did not keep
            segment = column(decisions, "segment")
            selected = column(decisions, "selected")
            for pos in range(len(ordered) - 1, -1, -1):
                index = ordered[pos]
                if segment[index] == "evictable" and not selected[index]:
                    budget_at = pos + 1
                    break
            if budget_at is not None and budget_at >= len(ordered):
                budget_at = None
        # prompt-aware selection keeps and evicts by score: in ordinal order no line would be a cut
        tail_at: int | None = None
        if boundary is not None:
            if keyed is not None:
                found = bisect_left(keyed, boundary)
                tail_at = found if found < len(keyed) else None
            else:
                for pos, index in enumerate(ordered):
                    o = ordinal[index]
                    if o is not None and o >= boundary:
                        tail_at = pos
                        break
        cuts: list[tuple[int, SeparatorKind, str]] = []
        if budget_at is not None:
            cuts.append((budget_at, "budget",
                         f"budget {budget:,} — the newest-first walk stopped here: the items above are evicted"))
        if tail_at is not None:
            cuts.append((tail_at, "fresh-tail",
                         f"fresh tail — ordinal ≥ {boundary}, always kept ({summary.tail_tokens:,} tokens)"))
        cuts.sort(key=lambda cut: cut[0])  # (stable: at one position the budget line comes first)
        cuts_at = [(pos, kind) for pos, kind, _ in cuts]
        if previous is not None and previous._order is order and previous._cuts == cuts_at and not live:
            # the same rows and separators in the same places: only the separators' words may differ
            separators.extend(Separator(kind, text) for _, kind, text in cuts)
            reused_lines = previous.lines
        else:
            start = 0
            for pos, kind, text in cuts:
                lines.extend(ordered[start:pos])
                sep(kind, text)
                start = pos
            lines.extend(ordered[start:])
    elif sort == "score":
        segment = column(decisions, "segment")
        score = column(decisions, "score")
        selected = column(decisions, "selected")

        def by_priority(i: int) -> tuple[float, int]:
            value = score[i]
            return (-(-1.0 if value is None else value), -(ordinal[i] or 0))

        tail = [i for i in context if segment[i] in ("fresh-tail", "focus")]
        evictable = [i for i in context if segment[i] not in ("fresh-tail", "focus")]
        tail.sort(key=by_priority)
        evictable.sort(key=by_priority)
        if tail:
            sep("fresh-tail", f"fresh tail — always kept ({summary.tail_tokens:,} tokens)")
            lines.extend(tail)
        if evictable:
            sep(
                "evictable",
                f"evictable by priority — {summary.kept_evictable_tokens:,} of {summary.evictable_total_tokens:,}"
                f" tokens kept ({summary.selection_mode})",
            )
        budget_drawn = False
        for index in evictable:
            if not budget_drawn and not selected[index]:
                sep(
                    "budget",
                    f"budget {summary.effective_budget:,} reached — below, items were kept only if they still fit",
                )
                budget_drawn = True
            lines.append(index)
    else:
        tokens = column(decisions, "tokens")
        ordered = sorted(range(len(tokens)), key=lambda i: (-tokens[i], i))
        lines.extend(ordered)
        live = []
    if live:
        sep("live", f"live inputs — {len(live)} (engine step {'on' if trace.params.engine else 'off'})")
        lines.extend(live)
    keys = column(decisions, "key")
    if previous is not None and previous.keys is not None and (previous.keys is keys or previous.keys == keys):
        index_of_key = previous.index_of_key  # the same items in the same order
    else:
        key_index = getattr(decisions, "key_index", None)  # (the lazy decisions: their plan's own index)
        shared = key_index() if key_index is not None else None
        index_of_key = shared if shared is not None else dict(zip(keys, range(len(decisions)), strict=True))
    if reused_lines is not None:
        lines = reused_lines
    same_lines = previous is not None and (previous.lines is lines or previous.lines == lines)
    line_of = previous._line_of if previous is not None and same_lines else None
    layout = TableLayout(sort, lines, separators, line_of, index_of_key, keys)
    layout._order, layout._cuts = order, cuts_at
    return layout


# --- what changed --------------------------------------------------------------------------


@dataclass(slots=True)
class OutcomeDiff:
    """Outcome changes between the previous trace and this one, by decision key."""

    changed: dict[str, tuple[str, str]] = field(default_factory=dict)  # key → (before, after)
    gained: int = 0  # not kept before, kept now
    lost: int = 0  # kept before, not kept now
    same_items: bool = False  # both traces have the same decisions in the same order: ``changed`` is every change

    @property
    def other(self) -> int:
        return len(self.changed) - self.gained - self.lost

    def direction(self, key: str) -> int:
        """+1 now kept, -1 no longer kept, 0 other change (or unchanged)."""
        change = self.changed.get(key)
        if change is None:
            return 0
        before, after = (o in KEPT_OUTCOMES for o in change)
        return int(after) - int(before)

    def mark(self, key: str) -> int | None:
        """``direction(key)`` of a key whose outcome changed, None for one whose outcome did not."""
        change = self.changed.get(key)
        if change is None:
            return None
        before, after = (o in KEPT_OUTCOMES for o in change)
        return int(after) - int(before)

    def parts(self) -> list[tuple[int, str]]:
        """(direction, words) of each non-zero count: ``+5 now kept``, ``2 newly evicted``, ``1 other change``."""
        parts: list[tuple[int, str]] = []
        if self.gained:
            parts.append((1, f"+{self.gained:,} now kept"))
        if self.lost:
            parts.append((-1, f"{self.lost:,} newly evicted"))
        if self.other:
            parts.append((0, f"{self.other:,} other change{'s' if self.other != 1 else ''}"))
        return parts

    def text(self) -> str:
        parts = self.parts()
        return " · ".join(words for _, words in parts) if parts else "no outcome changed"


class DeferredDiff(OutcomeDiff):
    """``diff_outcomes(previous, current)`` of two runs of the same items (in the same order, keys unique),
    computed when first read (``resolve``): until then ``mark`` answers per key from the two runs' decisions.
    The table's visible rows need a mark each, the what-changed line the whole diff: it is made after the
    table's paint (``InspectorScreen._measure_panes``), not on the way to it."""

    __slots__ = ("_current", "_full", "_previous")

    def __init__(self, previous: Trace, current: Trace) -> None:  # (not the dataclass's: nothing is computed)
        self._previous: Trace | None = previous
        self._current: Trace | None = current
        self._full: OutcomeDiff | None = None

    def resolve(self) -> OutcomeDiff:
        """The whole diff (computed once; the two traces are let go then)."""
        full = self._full
        if full is None:
            previous, current = self._previous, self._current
            assert previous is not None and current is not None
            full = self._full = diff_outcomes(previous, current)
            self._previous = self._current = None  # (after ``_full`` is set: ``mark`` reads them in that order)
        return full

    @property  # type: ignore[override]
    def changed(self) -> dict[str, tuple[str, str]]:
        return self.resolve().changed

    @property  # type: ignore[override]
    def gained(self) -> int:
        return self.resolve().gained

    @property  # type: ignore[override]
    def lost(self) -> int:
        return self.resolve().lost

    @property  # type: ignore[override]
    def same_items(self) -> bool:
        return self.resolve().same_items

    @property
    def resolved(self) -> bool:
        return self._full is not None

    def mark(self, key: str) -> int | None:
        previous, current = self._previous, self._current
        if self._full is not None or previous is None or current is None:
            return self.resolve().mark(key)
        old_at, new_at = index_of(previous.decisions, key), index_of(current.decisions, key)
        if old_at is None or new_at is None:
            return None  # (not a key of these runs: the diff lists only theirs)
        before, after = previous.decisions[old_at].outcome, current.decisions[new_at].outcome
        if before is None or before == after:
            return None  # (an outcome of None is no change: the diff skips it)
        return int(after in KEPT_OUTCOMES) - int(before in KEPT_OUTCOMES)


def deferred_diff(previous: Trace | None, current: Trace) -> OutcomeDiff:
    """``diff_outcomes(previous, current)``, as a ``DeferredDiff`` when the two runs have the same items in the same
    order under unique keys (every edit of a session: the plan's key list, no key changed, the same live inputs),
    where a key's outcome before and after is the diff's answer for it; otherwise computed now."""
    if previous is None:
        return diff_outcomes(previous, current)
    old_keys, new_keys = _column_changes(previous.decisions, "key"), _column_changes(current.decisions, "key")
    if old_keys is None or new_keys is None or old_keys[0] is not new_keys[0] or old_keys[1] or new_keys[1]:
        return diff_outcomes(previous, current)
    if old_keys[2] != new_keys[2]:
        return diff_outcomes(previous, current)  # (other live inputs)
    index = getattr(current.decisions, "key_index", None)
    known = index() if index is not None else None
    if known is None or len(known) != len(new_keys[0]) + len(new_keys[2]):
        return diff_outcomes(previous, current)  # (keys not unique: a key is not one position)
    return DeferredDiff(previous, current)


def diff_outcomes(previous: Trace | None, current: Trace) -> OutcomeDiff:
    diff = OutcomeDiff()
    if previous is None:
        return diff
    sparse = _diff_by_changes(previous, current)
    if sparse is not None:
        return sparse
    old_keys, old_outcomes = column(previous.decisions, "key"), column(previous.decisions, "outcome")
    keys, outcomes = column(current.decisions, "key"), column(current.decisions, "outcome")
    if (old_keys is keys or old_keys == keys) and None not in old_outcomes:
        # the same items in the same order (every edit of one session but a few): compare the outcome
        # columns position by position, and collect and count the changes, at C speed (a prompt edit at
        # 100,000 items changes thousands of outcomes)
        positions = list(compress(range(len(keys)), map(ne, old_outcomes, outcomes)))
        olds = list(map(old_outcomes.__getitem__, positions))
        news = list(map(outcomes.__getitem__, positions))
        diff.changed = dict(zip(map(keys.__getitem__, positions), zip(olds, news, strict=True), strict=True))
        was = list(map(KEPT_OUTCOMES.__contains__, olds))
        now = list(map(KEPT_OUTCOMES.__contains__, news))
        diff.gained = sum(map(gt, now, was))  # kept now, not before
        diff.lost = sum(map(lt, now, was))
        diff.same_items = True  # (no outcome was None: every change is in ``changed``)
        return diff
    if old_keys is keys or old_keys == keys:
        moved = compress(zip(keys, old_outcomes, outcomes, strict=True), map(ne, old_outcomes, outcomes))
    else:
        before = dict(zip(old_keys, old_outcomes, strict=True))
        moved = ((key, before.get(key), outcome) for key, outcome in zip(keys, outcomes, strict=True))
    for key, old, outcome in moved:
        if old is None or old == outcome:
            continue
        diff.changed[key] = (old, outcome)
        was, now = old in KEPT_OUTCOMES, outcome in KEPT_OUTCOMES
        if now and not was:
            diff.gained += 1
        elif was and not now:
            diff.lost += 1
    return diff


_CHANGES_KEPT = 2  # decision lists whose column parts are remembered: the one on screen and the new one (its base)
# (decisions, {name: parts}) of the last few lists, newest first; replaced whole, never changed in place but for
# a name added to an entry's dict, so a thread reading it while another adds an entry sees one list or the other
_changes_memo: list[tuple[Any, dict[str, Any]]] = []


def _column_changes(decisions: Any, name: str) -> tuple[list[Any], dict[int, Any], list[Any]] | None:
    """``decisions.column_changes(name)`` (None without it), remembered for the last few lists: a diff reads
    the parts of the trace on screen, which the diff before it read as the new run's."""
    global _changes_memo
    reader = getattr(decisions, "column_changes", None)
    if reader is None:
        return None
    memo = _changes_memo
    for known, parts_of in memo:
        if known is decisions:
            if name not in parts_of:
                parts_of[name] = reader(name)
            return parts_of[name]  # type: ignore[no-any-return]
    parts = reader(name)
    _changes_memo = [(decisions, {name: parts}), *memo[: _CHANGES_KEPT - 1]]
    return parts  # type: ignore[no-any-return]


def prime_diff(trace: Trace) -> None:
    """Compute now what ``diff_outcomes`` will read of ``trace`` when the next run is compared with it (its
    changed positions, and the per-session lookups behind them, which the next runs share): for the first
    trace, in the background, so the first keystroke does not build them."""
    if getattr(trace.decisions, "column_changes", None) is None:
        return
    _column_changes(trace.decisions, "key")
    outcomes = _column_changes(trace.decisions, "outcome")
    if outcomes is not None:
        _no_none(outcomes[0])


_last_checked: tuple[Any, bool] = (None, False)  # (the last base list checked, whether it holds no None)


def _no_none(values: list[Any]) -> bool:
    """``None not in values``, remembered for the last list asked about (every edit asks about the same)."""
    global _last_checked
    last = _last_checked  # (one read: another thread may replace it)
    if last[0] is values:
        return last[1]
    answer = None not in values
    _last_checked = (values, answer)
    return answer


def _diff_by_changes(previous: Trace, current: Trace) -> OutcomeDiff | None:
    """``diff_outcomes`` of two runs of one plan from the positions where either run's outcome may differ
    from the plan's (``column_changes``): the same answer, without reading 100,000 outcomes.  None when the
    traces do not both give that form, or their items or outcome bases differ."""
    if getattr(previous.decisions, "column_changes", None) is None:
        return None
    if getattr(current.decisions, "column_changes", None) is None:
        return None
    old_keys, new_keys = _column_changes(previous.decisions, "key"), _column_changes(current.decisions, "key")
    old, new = _column_changes(previous.decisions, "outcome"), _column_changes(current.decisions, "outcome")
    if old_keys is None or new_keys is None or old is None or new is None:
        return None
    keys = old_keys[0]
    if new_keys[0] is not keys or old_keys[1] or new_keys[1] or old_keys[2] != new_keys[2]:
        return None  # not the same items in the same order (as far as this form shows)
    base = old[0]
    if new[0] is not base or len(base) != len(keys):
        return None
    old_changes, old_extra = old[1], old[2]
    if not _no_none(base) or None in old_changes.values() or None in old_extra:
        return None  # (an outcome of None is no change: the full comparison skips it)
    new_changes, new_extra = new[1], new[2]
    diff = OutcomeDiff()
    # a position can differ only where the two runs do not list the same (position, outcome) pair: a run at
    # 10,000 items lists thousands of kept positions, which mostly agree, and the pairs that do not are found
    # at C speed; each of those positions, in order, then has its outcome before and after (the plan's where
    # a run does not list it)
    positions = sorted({position for position, _ in old_changes.items() ^ new_changes.items()})
    planned = list(map(base.__getitem__, positions))
    befores = list(map(old_changes.get, positions, planned))
    afters = list(map(new_changes.get, positions, planned))
    differ = list(map(ne, befores, afters))
    changed = diff.changed = dict(
        zip(
            map(keys.__getitem__, compress(positions, differ)),
            zip(compress(befores, differ), compress(afters, differ), strict=True),
            strict=True,
        )
    )
    for key, before, after in zip(old_keys[2], old_extra, new_extra, strict=True):
        if before != after:
            changed[key] = (before, after)
    kept = KEPT_OUTCOMES.__contains__
    was = list(map(kept, (before for before, _ in changed.values())))
    now = list(map(kept, (after for _, after in changed.values())))
    diff.gained = sum(map(gt, now, was))  # kept now, not before
    diff.lost = sum(map(lt, now, was))
    diff.same_items = True
    return diff


def outcome_counts(
    trace: Trace, before: dict[str, int] | None = None, diff: OutcomeDiff | None = None
) -> dict[str, int]:
    """Decisions per outcome (``Trace.outcome_counts``): from the counts of the trace before and the diff
    against it when that diff saw every change (a few changed keys, not a pass over 100,000 outcomes)."""
    if before is None or diff is None or not diff.same_items:
        return trace.outcome_counts()
    counts = dict(before)
    for old, new in diff.changed.values():
        counts[old] -= 1
        counts[new] = counts.get(new, 0) + 1
    return {outcome: n for outcome, n in counts.items() if n}


_LOG_PREFIX = re.compile(r"^\[(?P<source>[\w-]+)\]\s*(?:(?P<stage>[\w-]+):\s*)?")
_LOG_FIELD = re.compile(r"\s(\w+)=(\S+)")


def note_text(line: str) -> str:
    """An engine log line as a note people read: its message, then its ``key=value`` fields one per line."""
    text = clean_block(line).strip()
    prefix = _LOG_PREFIX.match(text)
    if prefix is not None:
        text = text[prefix.end():]
    first = _LOG_FIELD.search(text)
    if first is None:
        return text
    message = text[: first.start()].strip()
    fields = "\n".join(f"  {key} {value}" for key, value in _LOG_FIELD.findall(text[first.start():]))
    return f"{message}\n{fields}"


def note_headline(line: str) -> str:
    """The first line of ``note_text``: what the change line shows of an engine note."""
    return clean_inline(note_text(line).partition("\n")[0], 120)


# --- messages ------------------------------------------------------------------------------

_TOOL_CALL_TYPES = frozenset({"toolCall", "tool_use", "tool-use", "toolUse", "functionCall", "function_call"})
_TOOL_RESULT_TYPES = frozenset({"toolResult", "tool_result", "function_call_output"})


def _block_preview(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return json.dumps(to_plain(block), ensure_ascii=False)
    kind = block.get("type")
    if kind in _TOOL_CALL_TYPES:
        args = block.get("arguments", block.get("input"))
        args_text = args if isinstance(args, str) else json.dumps(to_plain(args), ensure_ascii=False)
        return f"→ {block.get('name', '?')}({args_text if args is not None else ''})"
    if kind in _TOOL_RESULT_TYPES:
        payload = block.get("output", block.get("content", ""))
        return "← " + (payload if isinstance(payload, str) else json.dumps(to_plain(payload), ensure_ascii=False))
    if kind in ("thinking", "reasoning", "redacted_thinking"):
        return "(thinking)"
    for name in ("text", "thinking"):
        value = block.get(name)
        if isinstance(value, str):
            return value
    return json.dumps(to_plain(block), ensure_ascii=False)


def message_preview(message: Any, limit: int = 400) -> str:
    """One line for the assembled-context pane: the message's text, tool calls as ``→ name(args)``."""
    if not isinstance(message, dict):
        return clean_inline(str(message), limit)
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(_block_preview(block) for block in content[:20])
    elif content is None:
        text = ""
    else:
        text = _block_preview(content)
    return clean_inline(text, limit)


def message_role(message: Any) -> str:
    if isinstance(message, dict) and isinstance(message.get("role"), str):
        return clean_inline(message["role"], 20)
    return "?"


def message_json(message: Any, limit: int = 20_000) -> str:
    """The message as readable JSON (numbers as plain floats), cut at ``limit`` characters."""
    text = json.dumps(to_plain(message), ensure_ascii=False, indent=2)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit:,} more characters — export to see everything)"
    return text


def partner(trace: Trace, decision: Decision) -> Decision | None:
    """The first tool-pair partner of an item, as recorded in the trace."""
    if not decision.pair_with:
        return None
    decisions = trace.decisions
    for key in decision.pair_with:  # (by key: the detail pane asks on every edit, a scan built every decision)
        index = index_of(decisions, key)
        if index is not None:
            return decisions[index]
    return None


# --- control values --------------------------------------------------------------------

_SUFFIX = {"k": 1_000, "m": 1_000_000}


def parse_budget_text(text: str) -> int:
    """A token budget as typed: ``2000``, ``2,000``, ``8k`` or ``1.5m``; raises InputError."""
    from ctxview.errors import InputError
    from ctxview.params_io import parse_budget

    cleaned = text.strip().replace(",", "").replace("_", "").lower()
    if cleaned and cleaned[-1] in _SUFFIX:
        try:
            number = float(cleaned[:-1]) * _SUFFIX[cleaned[-1]]
        except ValueError:
            raise InputError(f"token budget must be a positive whole number, not {text!r}") from None
        if number.is_integer():
            cleaned = str(int(number))
    if not cleaned:
        raise InputError("token budget is empty: type a positive whole number such as 2000 or 8k")
    try:
        return parse_budget(cleaned, source="budget")
    except InputError as exc:
        raise InputError(str(exc).removeprefix("budget: ")) from None


def parse_count_text(text: str, what: str) -> float:
    """A non-negative number (whole numbers come back as int); raises InputError."""
    from ctxview.errors import InputError

    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        number = float(cleaned)
    except ValueError:
        raise InputError(f"{what} must be a number ≥ 0, not {text!r}") from None
    if number != number or number in (float("inf"), float("-inf")) or number < 0:
        raise InputError(f"{what} must be a number ≥ 0, not {text!r}")
    return int(number) if number.is_integer() else number


def parse_whole_text(text: str, what: str) -> int:
    """A whole number ≥ 0; raises InputError."""
    from ctxview.errors import InputError

    number = parse_count_text(text, what)
    if not isinstance(number, int):
        raise InputError(f"{what} must be a whole number ≥ 0, not {text!r}")
    return number


def step_budget(budget: int, direction: int, big: bool = False) -> int:
    """±10 % (at least 1 token); big steps double or halve."""
    if big:
        new = budget * 2 if direction > 0 else budget // 2
    else:
        delta = max(1, round(budget * 0.1))
        new = budget + delta if direction > 0 else budget - delta
    return max(1, min(new, 10**12))


# --- parameter sets (undo / redo) --------------------------------------------------------

_PARAM_WORDS: tuple[tuple[str, str], ...] = (
    ("token_budget", "budget"),
    ("prompt", "prompt"),
    ("fresh_tail_count", "tail"),
    ("fresh_tail_max_tokens", "tail cap"),
    ("reserved_tokens", "reserved"),
    ("prompt_aware_eviction", "prompt-aware"),
    ("engine", "live inputs"),
    ("engine_line", "rules"),
    ("scorer", "scorer"),
    ("tokenizer", "tokenizer"),
    ("stub_large_tool_payloads", "stubs"),
    ("stub_threshold", "stub threshold"),
)


def _param_value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    if value is None:
        return "—"
    if isinstance(value, str):
        return repr(clean_inline(value, 24)) if " " in value or not value else clean_inline(value, 24)
    return str(value)


def params_change(before: Params, after: Params) -> str:
    """What differs between two parameter sets, in the controls' words: ``budget 2,500 → 2,000``."""
    parts = [
        f"{word} {_param_value(getattr(before, name))} → {_param_value(getattr(after, name))}"
        for name, word in _PARAM_WORDS
        if getattr(before, name) != getattr(after, name)
    ]
    return ", ".join(parts) if parts else "no parameter changed"


# --- where the sent tokens went (the budget bar) ------------------------------------------


def sent_parts(
    trace: Trace,
    tokens_of_all: Callable[[Sequence[Any]], list[int]] | None = None,
    index_of_key: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """The tokens sent, per budget-bar segment (fresh tail, kept evictable, live, recall); they sum to
    ``summary.final_tokens``.

    With the engine step, what is sent is the serialized estimate of the final messages
    (§4.3): each message's estimate goes to the segment of the item it came from (a
    synthetic tool result to the segment of the message before it), so an item evicted
    to make room for a live input counts nowhere.  Without it, what is sent is the
    assembler's item estimate: the fresh tail plus the kept evictable items.

    ``tokens_of_all``: the same estimate of a whole list (``SessionAssembler.message_tokens``,
    whose memo the run just filled); without it each message is serialized again.
    ``index_of_key``: the trace's key → decision index (``TableLayout.index_of_key``), when
    one is at hand: a dictionary of 100,000 keys takes longer to build than the rest.
    """
    s = trace.summary
    parts = {"tail": 0, "kept": 0, "live": 0, "recall": 0}
    if not trace.params.engine or not trace.messages:
        parts["tail"] = s.tail_tokens + s.focus_tokens
        parts["kept"] = s.kept_evictable_tokens
        if sum(parts.values()) == s.final_tokens:
            return parts
        parts = {"tail": 0, "kept": 0, "live": 0, "recall": 0}
    if tokens_of_all is None:
        from ctxview.assembly.tokens import serialized_message_tokens, serialized_message_tokens_1_0

        estimate = serialized_message_tokens_1_0 if s.engine_line == "1.0" else serialized_message_tokens
        tokens = [estimate(message) for message in trace.messages]
    else:
        tokens = tokens_of_all(trace.messages)
    decisions = trace.decisions
    segment_of = _segment_reader(decisions)
    if index_of_key is None:
        index_of_key = dict(zip(column(decisions, "key"), range(len(decisions)), strict=True))
    part = "tail"
    for count, key in zip(tokens, trace.message_keys, strict=False):
        if key is not None:
            if key.startswith("l:"):
                part = "live"
            else:
                index = index_of_key.get(key)
                if index is None:
                    part = "recall"
                else:
                    part = "kept" if segment_of(index) == "evictable" else "tail"
        parts[part] += count
    return parts


def _segment_reader(decisions: Any) -> Callable[[int], Any]:
    """The segment of the decision at an index: from the run's changed positions where the list gives them
    (``column_changes``: the sent messages' few, not a column of 100,000), else from the column."""
    parts = _column_changes(decisions, "segment")
    if parts is None:
        return column(decisions, "segment").__getitem__
    base, changes, extra = parts
    count = len(base)

    def segment_of(index: int) -> Any:
        if index >= count:
            return extra[index - count]
        found = changes.get(index, _MISSING)
        return base[index] if found is _MISSING else found

    return segment_of


_MISSING = object()
