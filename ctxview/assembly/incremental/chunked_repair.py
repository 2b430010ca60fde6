"""Clean-up and pairing repair (§7.1–§7.4) chunk by chunk, remembered across runs.

Only tool ids tie one message's clean-up or repair to another's.  Cutting the
session wherever no tool id spans the cut gives chunks whose §7.1–§7.4 outcome
depends on nothing but which of their own items are selected and how many of
them lie before the fresh tail.  Running §7.1–§7.4 on each selected chunk alone
and concatenating gives the messages, keys and records of running it on the
whole selection (the repair's bookkeeping is per id, its look-aheads only act
on the ids of the assistant they serve), so a re-assembly that keeps most of
the same items only looks its chunks up.  Cached outputs are the same objects
run after run, which also keeps the engine's per-message memo warm.
``tests/unit/test_chunked_repair.py`` and the warm-cache tests compare this
with the whole-selection functions.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, repeat
from typing import Any

from ctxview.assembly.postprocess import EVICTABLE, FRESH, Cleaned, Entry, clean_selected
from ctxview.assembly.resolve import ResolvedItem, messages_of
from ctxview.assembly.tool_pairs import RepairLog, sanitize_tool_use_result_pairing_keyed

_STORED = operator.attrgetter("stored_message")
# positions in a row, from a chunk's start, before whole flagged chunks are appended as a span (shorter ones
# take each chunk's remembered outcome, which a run that selects them again only looks up)
MIN_SPAN = 16
_KEY = operator.attrgetter("key")


class SameMessages(list[Any]):
    """A copy of a remembered run's messages: every copy with the same ``origin`` holds the very same objects,
    in the same order (the engine's memo then looks them up once: ``SerializedCache.answer_for``)."""

    __slots__ = ("origin",)

    def __init__(self, messages: list[Any], origin: object) -> None:
        super().__init__(messages)
        self.origin = origin


@dataclass(slots=True)
class ChunkOutcome:
    """§7.1–§7.4 of the selected items of one chunk."""

    entries: list[Entry]  # the clean-up's output (segment-tagged)
    messages: list[Any]  # the repair's output
    keys: list[Any]
    cleaned: Cleaned | None  # None: clean-up changed nothing and recorded nothing
    log: RepairLog | None  # None: the repair recorded nothing


@dataclass(slots=True)
class ChunkedRun:
    """The concatenated outcome of one run (the shapes the whole-selection functions return)."""

    cleaned: Cleaned
    repair: RepairLog
    messages: list[Any]
    keys: list[Any]
    fresh_from: int  # no fresh-tail entry in ``cleaned.entries`` before this index

    def fresh_messages(self) -> list[Any]:
        """The clean-up's fresh-tail messages (what §7.5 hashes alone)."""
        return [e.message for e in self.cleaned.entries[self.fresh_from :] if e.segment == FRESH]

    def copy(self) -> ChunkedRun:
        """The same outcome in new containers (each run owns its lists; the messages are shared, as between
        runs that look the same chunks up); the messages' list is tagged as a copy of this run's."""
        cleaned = self.cleaned
        messages = self.messages
        origin = messages.origin if isinstance(messages, SameMessages) else object()
        return ChunkedRun(
            _merge_cleaned(list(cleaned.entries), [cleaned]), _merge_logs([self.repair]),
            SameMessages(messages, origin), list(self.keys), self.fresh_from,
        )


@dataclass(slots=True)
class ChunkPlan:
    """Where the tool-id-closed chunks of an item list start and end (parameter independent)."""

    items: Sequence[ResolvedItem]
    chunk_of: array[int]  # position → chunk number (arrays: a 100,000-item session keeps these for good)
    start: array[int]  # chunk number → first position
    stop: array[int]  # chunk number → one past its last position
    limit: int
    # a one-item chunk's outcome by position, before and from the fresh tail
    _evictable_single: list[ChunkOutcome | None] = field(default_factory=list)
    _fresh_single: list[ChunkOutcome | None] = field(default_factory=list)
    _groups: dict[tuple[int, tuple[int, ...], int], ChunkOutcome] = field(default_factory=dict)
    # the last run that selected every item: (cut, orphan ordinal, all results, its outcome); the budget
    # sweep's runs at budgets from the whole session's size up each concatenate the same 100,000 outcomes
    _whole: tuple[int, float, Any, ChunkedRun] | None = None
    # the last run that did not: (kept, cut, orphan ordinal, all results, its outcome)
    _last: tuple[list[int], int, float, Any, ChunkedRun] | None = None
    # (cut, orphan ordinal, one byte per chunk): 1 where §7.1–§7.4 of the whole chunk at that cut is known to
    # give its items' own messages back with nothing recorded (``unchanged_chunks`` of an earlier process, or,
    # as a bytearray, what runs at that cut learned: ``_flags_at``)
    _unchanged: tuple[int, float, bytes | bytearray] | None = None
    kept_across: bool = False  # what this plan learned is written to (or was read from) ``sweep_cache``
    min_span: int = MIN_SPAN  # (tests set 1: every whole flagged chunk then goes through the span path)
    # what gives ``whole_selection_flags`` of every chunk to a run that selects every item, when not that method
    # (the budget sweep's ``sweep_measure`` shares the pass with a forked process); the same flags either way
    whole_learner: Callable[[ChunkPlan, int, float, Any], bytes] | None = None

    @classmethod
    def build(cls, items: Sequence[ResolvedItem]) -> ChunkPlan:
        count = len(items)
        # (tool id, position) of every id an item issues or answers, in position order (a comprehension and
        # C-speed passes: this runs on the first trace of a session, 100,000 items)
        spans = [
            (tool_id, position)
            for position, item in enumerate(items)
            if item.call_ids or item.result_id
            for tool_id in ((*item.call_ids, item.result_id) if item.result_id else item.call_ids)
        ]
        last = dict(spans)  # the last position of each id wins
        first = dict(reversed(spans))  # the first one wins
        reach = list(range(count))  # position → furthest position an id first seen there reaches
        for begin, end in zip(first.values(), map(last.__getitem__, first), strict=True):
            if end > reach[begin]:
                reach[begin] = end
        # a chunk ends where no id seen so far reaches further
        ends = list(map(operator.eq, accumulate(reach, max), range(count)))
        starts = [True, *ends[:-1]] if count else []
        chunk_of = array("l", accumulate(starts, initial=-1))
        chunk_of.pop(0)  # (the running count of chunk starts, less one)
        start = array("l", compress(range(count), starts))
        stop = array("l", compress(range(1, count + 1), ends))
        plan = cls(items, chunk_of, start, stop, limit=4 * count + 1024)
        plan._evictable_single = [None] * count
        plan._fresh_single = [None] * count
        return plan

    def run(self, kept: Sequence[int], cut: int, orphan_ordinal: float, all_results: Any) -> ChunkedRun:
        """§7.1–§7.4 over the items at positions ``kept`` (ascending) then ``cut`` … end (the fresh tail)."""
        if len(kept) != cut or (cut and (kept[0] != 0 or kept[-1] != cut - 1)):  # not every position before the cut
            return self._run_again(kept, cut, orphan_ordinal, all_results)
        whole = self._whole
        if whole is not None and whole[0] == cut and whole[1] == orphan_ordinal and whole[2] is all_results:
            return whole[3].copy()
        self._learn_whole(cut, orphan_ordinal, all_results)
        whole_run = self._run(kept, cut, orphan_ordinal, all_results).copy()
        self._whole = (cut, orphan_ordinal, all_results, whole_run)
        return whole_run.copy()

    def _run_again(self, kept: Sequence[int], cut: int, orphan_ordinal: float, all_results: Any) -> ChunkedRun:
        """``_run``; a run that keeps the same items as the one before (a keystroke often does) copies its outcome,
        whose messages' list is then tagged as the same (the engine looks them up, and indexes their pairs, once)."""
        last = self._last
        if (
            last is not None and last[1] == cut and last[2] == orphan_ordinal and last[3] is all_results
            and last[0] == kept
        ):
            return last[4].copy()
        outcome = self._run(kept, cut, orphan_ordinal, all_results)
        outcome.messages = SameMessages(outcome.messages, object())  # (kept here: the caller gets a copy)
        self._last = (list(kept), cut, orphan_ordinal, all_results, outcome)
        return outcome.copy()

    def _run(self, kept: Sequence[int], cut: int, orphan_ordinal: float, all_results: Any) -> ChunkedRun:
        if len(self._groups) > self.limit:
            self._groups.clear()
        chunk_of = self.chunk_of
        stop = self.stop
        start = self.start
        evictable_single = self._evictable_single
        fresh_single = self._fresh_single
        unchanged = self._flags_at(cut, orphan_ordinal)
        entries: list[Entry] = []
        messages: list[Any] = []
        keys: list[Any] = []
        cleaned_parts: list[Cleaned] = []
        logs: list[RepairLog] = []
        fresh_from = -1
        positions = [*kept, *range(cut, len(self.items))]
        count = len(positions)
        at = 0
        fresh_chunk = chunk_of[cut] if cut < len(self.items) else len(start)  # the first chunk ending past the cut
        min_span = self.min_span
        while at < count:
            position = positions[at]
            chunk = chunk_of[position]
            if (
                unchanged[chunk] and position == start[chunk]
                and at + min_span <= count and positions[at + min_span - 1] == position + min_span - 1
            ):
                span = self._unchanged_span(positions, at, unchanged)
                if span >= at + min_span:  # whole chunks known unchanged: their items' own messages, nothing recorded
                    first_fresh = start[fresh_chunk] if fresh_chunk < len(start) else len(self.items)
                    if fresh_from < 0 and positions[span - 1] >= first_fresh:
                        fresh_from = len(entries) + max(0, first_fresh - position)
                    self._extend_unchanged(position, position + span - at, cut, entries, messages, keys)
                    at = span
                    continue
            if fresh_from < 0 and stop[chunk] > cut:
                fresh_from = len(entries)  # the first chunk that can hold a fresh item (one may straddle the cut)
            if stop[chunk] - start[chunk] == 1:
                singles = fresh_single if position >= cut else evictable_single
                outcome = singles[position]
                if outcome is None:
                    if unchanged[chunk]:
                        outcome = singles[position] = self._unchanged_outcome([position], cut)
                    else:
                        outcome = singles[position] = self._learned(
                            [position], cut, orphan_ordinal, all_results, unchanged
                        )
                at += 1
            else:
                members: list[int] = []
                end = stop[chunk]
                while at < count and positions[at] < end:
                    members.append(positions[at])
                    at += 1
                before_cut = min(max(cut - start[chunk], 0), end - start[chunk])
                key2 = (chunk, tuple(members), before_cut)
                outcome = self._groups.get(key2)
                if outcome is None:
                    if unchanged[chunk] and len(members) == end - start[chunk]:
                        outcome = self._groups[key2] = self._unchanged_outcome(members, cut)
                    else:
                        outcome = self._groups[key2] = self._learned(
                            members, cut, orphan_ordinal, all_results, unchanged
                        )
            entries.extend(outcome.entries)
            messages.extend(outcome.messages)
            keys.extend(outcome.keys)
            if outcome.cleaned is not None:
                cleaned_parts.append(outcome.cleaned)
            if outcome.log is not None:
                logs.append(outcome.log)
        if fresh_from < 0:
            fresh_from = len(entries)
        return ChunkedRun(_merge_cleaned(entries, cleaned_parts), _merge_logs(logs), messages, keys, fresh_from)

    def _flags_at(self, cut: int, orphan_ordinal: float) -> bytearray:
        """The chunks known unchanged at this cut (told by ``assume_unchanged`` or learned by runs at it); a
        run at another cut starts learning afresh.  Learned flags let a keystroke's run append the long
        stretches of whole chunks an earlier run found unchanged in one go (the span path)."""
        known = self._unchanged
        if known is not None and known[0] == cut and known[1] == orphan_ordinal:
            flags = known[2]
            if isinstance(flags, bytearray):
                return flags
        else:
            flags = bytes(len(self.start))
        learning = bytearray(flags)
        self._unchanged = (cut, orphan_ordinal, learning)
        return learning

    def _learn_whole(self, cut: int, orphan_ordinal: float, all_results: Any) -> None:
        """Before a run that selects every item: flag the chunks one whole-selection pass finds unchanged at
        this cut (``whole_selection_flags``), unless at least half of them are flagged already.  The run then
        appends the flagged ones as spans, and cleans up only the others chunk by chunk (one clean-up and
        one repair call per chunk cost ~3 s at 100,000 items; the one pass over all of them ~1 s)."""
        known = self._unchanged
        if known is not None and known[0] == cut and known[1] == orphan_ordinal:
            if 2 * sum(known[2]) >= len(known[2]):
                return
            flags = bytearray(known[2])
        else:
            flags = bytearray(len(self.start))
        learner = self.whole_learner
        learned = learner(self, cut, orphan_ordinal, all_results) if learner is not None else b""
        if len(learned) != len(flags):
            learned = self.whole_selection_flags(cut, orphan_ordinal, all_results)
        flags = bytearray(map(operator.or_, flags, learned))
        self._unchanged = (cut, orphan_ordinal, flags)

    def whole_selection_flags(
        self, cut: int, orphan_ordinal: float, all_results: Any, chunks: range | None = None
    ) -> bytes:
        """One byte per chunk of ``chunks`` (default: every chunk): 1 where §7.1–§7.4 of the whole chunk alone
        at this cut gives its items' own messages and keys back, in order, with nothing recorded
        (``_gives_back``), learned from ONE pass of the whole-selection functions over the items of those chunks
        (chunks are independent: that pass is the concatenation of the chunks' own).  A chunk is flagged only
        when each of its items comes out of the clean-up and of the repair, in order, as its own stored message
        and key, and no record names any of them; anything else (dropped, copied, moved, synthetic results,
        keys that do not map) leaves it, or every chunk, 0."""
        chunks = range(len(self.start)) if chunks is None else chunks
        flags = bytearray(b"\x01") * len(chunks)
        if not chunks:
            return bytes(flags)
        base, end = self.start[chunks.start], self.stop[chunks.stop - 1]
        items = list(self.items[base:end])
        count = len(items)
        chunk_of = [chunk - chunks.start for chunk in self.chunk_of[base:end]]  # (by position in ``items``)
        messages_of(items)  # (unpacked in blocks of the render cache file, where they are packed in one)
        fresh = {item.ordinal for item in items[max(0, cut - base) :]}
        cleaned = clean_selected(items, fresh, orphan_ordinal, all_results)
        entries = cleaned.entries
        log = RepairLog()
        messages, keys = sanitize_tool_use_result_pairing_keyed(
            [entry.message for entry in entries], [entry.item.key for entry in entries], log
        )
        position_of: dict[Any, int] | None = None

        def position(key: Any) -> int | None:
            nonlocal position_of
            if position_of is None:
                position_of = {item.key: p for p, item in enumerate(items)}
                if len(position_of) != count:  # (keys that repeat: no key says which item it is)
                    position_of = {}
            return position_of.get(key) if isinstance(key, str) else None

        recorded = [
            *cleaned.stripped_calls, *cleaned.dropped_orphan_calls, *cleaned.dropped_empty, *log.orphan_results,
            *log.duplicate_results, *log.calls_removed, *log.dropped_assistants, *log.synthetic,
            *log.moved_after_results, *log.moved_after_results.values(),
        ]
        for key in recorded:
            at = position(key)
            if at is None:
                return bytes(len(flags))
            flags[chunk_of[at]] = 0
        # the clean-up keeps the items' order and only drops: every item skipped, or not its own message, spoils
        stored = [item.stored_message for item in items]
        at = 0
        for entry in entries:
            item = entry.item
            if item is not items[at]:
                found = position(item.key)
                if found is None or found < at or items[found] is not item:
                    return bytes(len(flags))
                for skipped in range(at, found):
                    flags[chunk_of[skipped]] = 0
                at = found
            if entry.message is not stored[at]:
                flags[chunk_of[at]] = 0
            at += 1
        for skipped in range(at, count):
            flags[chunk_of[skipped]] = 0
        # the repair's output: in order, each item's own message under its key; else the chunks involved spoil
        at = 0
        for message, key in zip(messages, keys, strict=True):
            if at < count and key == items[at].key:
                if message is not stored[at]:
                    flags[chunk_of[at]] = 0
                at += 1
                continue
            found = position(key)
            if found is None:  # (a synthetic result, after its call's assistant: in the chunk just passed)
                if not at:
                    return bytes(len(flags))
                flags[chunk_of[at - 1]] = 0
                continue
            if found < at:  # (moved behind, or twice)
                flags[chunk_of[found]] = 0
                flags[chunk_of[max(0, at - 1)]] = 0
                continue
            for skipped in range(at, found):  # (dropped)
                flags[chunk_of[skipped]] = 0
            if message is not stored[found]:
                flags[chunk_of[found]] = 0
            at = found + 1
        for skipped in range(at, count):
            flags[chunk_of[skipped]] = 0
        return bytes(flags)

    def _learned(
        self, members: list[int], cut: int, orphan_ordinal: float, all_results: Any, learning: bytearray
    ) -> ChunkOutcome:
        """``_outcome``, and whether the members (when a whole chunk) came back unchanged, noted in ``learning``
        (the flags ``_flags_at`` gave the run at ``cut``)."""
        outcome = self._outcome(members, cut, orphan_ordinal, all_results)
        first = members[0]
        chunk = self.chunk_of[first]
        end = self.stop[chunk]
        if (
            len(members) == end - first and self.start[chunk] == first
            and _gives_back(outcome, self.items[first:end])
        ):
            learning[chunk] = 1
        return outcome

    def _unchanged_span(self, positions: list[int], at: int, unchanged: bytes) -> int:
        """The end (an index into ``positions``) of the longest run of whole chunks flagged ``unchanged`` from
        ``positions[at]`` (a chunk's first position) on, every position of them selected; ``at``: none."""
        chunk_of = self.chunk_of
        stop = self.stop
        count = len(positions)
        first = positions[at]
        end = at  # positions[at:end] are whole flagged chunks
        while end < count:
            chunk = chunk_of[positions[end]]
            if not unchanged[chunk]:
                break
            size = stop[chunk] - positions[end]
            last = end + size - 1
            # (positions ascend without repeats: the chunk is whole when its last position is where it would be)
            if last >= count or positions[last] != first + (last - at) or positions[end] != first + (end - at):
                break
            end = last + 1
        return end

    def _extend_unchanged(
        self, first: int, end: int, cut: int, entries: list[Entry], messages: list[Any], keys: list[Any]
    ) -> None:
        """What ``_unchanged_outcome`` gives for the whole chunks of positions ``first`` … ``end - 1``, appended
        at C speed (one outcome per chunk cost a third of a run at the whole session)."""
        items = self.items
        for low, high, segment in ((first, min(end, cut), EVICTABLE), (max(first, cut), end, FRESH)):
            if low >= high:
                continue
            members = items[low:high]
            own = list(map(_STORED, members))  # (messages a sweep file's values came for are unpacked already)
            if set(map(type, own)) != {dict}:  # (some still packed: bytes, or an index into the render cache)
                own = messages_of(members)  # (read from the render cache file in blocks, not one read each)
            entries.extend(map(Entry, own, members, repeat(segment)))
            messages.extend(own)
            keys.extend(map(_KEY, members))

    def whole_run(self) -> tuple[int, float] | None:
        """(cut, orphan ordinal) of the remembered run that selected every item, or None."""
        whole = self._whole
        return None if whole is None else (whole[0], whole[1])

    def assume_unchanged(self, cut: int, orphan_ordinal: float, flags: bytes) -> bool:
        """Take ``unchanged_chunks`` of an earlier process for the same items: a whole chunk flagged there is
        not cleaned up again at that cut.  False (nothing taken) when ``flags`` has not one byte per chunk."""
        if len(flags) != len(self.start):
            return False
        self._unchanged = (cut, orphan_ordinal, flags)
        return True

    def unchanged_chunks(self, cut: int, orphan_ordinal: float) -> bytes:
        """One byte per chunk: 1 where the remembered outcome of the whole chunk at this cut is its items' own
        messages and keys, in order, with nothing cleaned up or repaired (0: not known, or not so)."""
        items = self.items
        flags = bytearray(len(self.start))
        known = self._unchanged
        if known is not None and (known[0], known[1]) != (cut, orphan_ordinal):
            known = None
        fresh_single = self._fresh_single
        evictable_single = self._evictable_single
        for chunk, (first, end) in enumerate(zip(self.start, self.stop, strict=True)):
            if end - first == 1:  # (most chunks: one item, checked without building lists)
                outcome = (fresh_single if first >= cut else evictable_single)[first]
                if outcome is None:
                    flags[chunk] = known[2][chunk] if known is not None else 0
                elif outcome.cleaned is None and outcome.log is None and len(outcome.messages) == 1:
                    item = items[first]
                    message = outcome.messages[0]
                    entries = outcome.entries
                    flags[chunk] = (
                        message is item.stored_message and len(entries) == 1 and entries[0].message is message
                        and entries[0].item is item and outcome.keys[0] == item.key
                    )
                continue
            before_cut = min(max(cut - first, 0), end - first)
            outcome = self._groups.get((chunk, tuple(range(first, end)), before_cut))
            if outcome is None:
                flags[chunk] = known[2][chunk] if known is not None else 0
                continue
            if outcome.cleaned is not None or outcome.log is not None or len(outcome.messages) != end - first:
                continue
            members = items[first:end]
            flags[chunk] = (
                all(map(operator.is_, outcome.messages, [item.stored_message for item in members]))
                and outcome.keys == [item.key for item in members]
                and len(outcome.entries) == end - first
                and all(map(operator.is_, [e.message for e in outcome.entries], outcome.messages))
                and all(map(operator.is_, [e.item for e in outcome.entries], members))
            )
        return bytes(flags)

    def _unchanged_outcome(self, members: list[int], cut: int) -> ChunkOutcome:
        """What ``_outcome`` gives for a chunk flagged unchanged: its items' own messages, nothing recorded."""
        items = self.items
        entries: list[Entry] = []
        messages: list[Any] = []
        for position in members:
            item = items[position]
            message = item.message
            messages.append(message)
            entries.append(Entry(message, item, FRESH if position >= cut else EVICTABLE))
        return ChunkOutcome(entries, messages, [items[p].key for p in members], None, None)

    def _outcome(self, members: list[int], cut: int, orphan_ordinal: float, all_results: Any) -> ChunkOutcome:
        items = self.items
        selected = [items[p] for p in members]
        fresh = {items[p].ordinal for p in members if p >= cut}
        cleaned = clean_selected(selected, fresh, orphan_ordinal, all_results)
        log = RepairLog()
        messages, keys = sanitize_tool_use_result_pairing_keyed(
            [e.message for e in cleaned.entries], [e.item.key for e in cleaned.entries], log
        )
        recorded = (
            cleaned.removed_tool_use_block_count
            or cleaned.touched_assistant_message_count
            or cleaned.stripped_calls
            or cleaned.dropped_orphan_calls
            or cleaned.dropped_empty
        )
        logged = (
            log.orphan_results
            or log.duplicate_results
            or log.calls_removed
            or log.dropped_assistants
            or log.synthetic
            or log.moved_after_results
        )
        return ChunkOutcome(
            cleaned.entries, messages, keys, cleaned if recorded else None, log if logged else None
        )


def _gives_back(outcome: ChunkOutcome, members: Sequence[ResolvedItem]) -> bool:
    """The outcome is the members' own messages and keys, in order, with nothing cleaned up or repaired (what
    ``ChunkPlan._extend_unchanged`` appends for a flagged chunk)."""
    messages = outcome.messages
    entries = outcome.entries
    if outcome.cleaned is not None or outcome.log is not None or not len(messages) == len(members) == len(entries):
        return False
    if len(members) == 1:  # (most chunks)
        item = members[0]
        entry = entries[0]
        return (
            messages[0] is item.stored_message and entry.message is messages[0] and entry.item is item
            and outcome.keys[0] == item.key
        )
    return (
        all(map(operator.is_, messages, [item.stored_message for item in members]))
        and outcome.keys == [item.key for item in members]
        and all(map(operator.is_, [e.message for e in entries], messages))
        and all(map(operator.is_, [e.item for e in entries], members))
    )


def _merge_cleaned(entries: list[Entry], parts: list[Cleaned]) -> Cleaned:
    merged = Cleaned(entries)
    for part in parts:
        merged.removed_tool_use_block_count += part.removed_tool_use_block_count
        merged.touched_assistant_message_count += part.touched_assistant_message_count
        merged.stripped_calls.update(part.stripped_calls)
        merged.dropped_orphan_calls.update(part.dropped_orphan_calls)
        merged.dropped_empty.update(part.dropped_empty)
    return merged


def _merge_logs(logs: list[RepairLog]) -> RepairLog:
    merged = RepairLog()
    for log in logs:
        merged.orphan_results.extend(log.orphan_results)
        merged.duplicate_results.extend(log.duplicate_results)
        for key, calls in log.calls_removed.items():
            merged.calls_removed.setdefault(key, []).extend(calls)
        merged.dropped_assistants.update(log.dropped_assistants)
        for key, ids in log.synthetic.items():
            merged.synthetic.setdefault(key, []).extend(ids)
        merged.moved_after_results.update(log.moved_after_results)
    return merged
