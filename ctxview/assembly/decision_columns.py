"""The decisions of a run served lazily, and their whole columns without building a decision.

``lazy_decisions`` wraps ``run_decisions`` (``assembly/decisions.py``) in a
``LazyDecisionList``: a chunk of decisions is built when somebody reads it,
while the columns views scan whole (outcome, segment, tokens, score, …) come
from the run record directly.  Each column must equal the field of the
decisions it stands for; ``tests/unit/test_warm_caches.py`` checks them
against each other on every run it makes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from itertools import compress, repeat
from typing import Any

from ctxview.assembly.decisions import ROW_FIELDS, RunRecord, post_outcome, run_decisions, run_lookups, run_rows
from ctxview.assembly.incremental.decision_list import LazyDecisionList
from ctxview.assembly.incremental.termindex import IndexedScores
from ctxview.assembly.resolve import ResolvedItem


class _Columns:
    """Whole-trace columns of one run, computed without building a Decision (same values, tested)."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.pi = run.plan_index
        self._items: dict[int, ResolvedItem] | None = None
        self._outcomes: tuple[list[Any], dict[int, Any]] | None = None  # (outcome_changes, read again per edit)

    def _first_fresh(self) -> int:
        """First plan position whose ordinal is in the fresh tail (plan ordinals never decrease)."""
        start = self.run.tail.start
        if start is None:
            return len(self.pi.keys)
        return bisect_left(self.pi.ordinals, start)

    def _exceptions(self) -> dict[int, ResolvedItem]:
        """Positions whose item is not the canonical one or not where the ordinal says (stubs)."""
        if self._items is None:
            items: dict[int, ResolvedItem] = {}
            effective = run_lookups(self.run).effective
            if effective:
                position = self.pi.position
                plan = self.run.static.plan
                for stub in self.run.evictable:
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

    def _evictable_positions(self) -> list[int | None]:
        """Each evictable item's plan position, None where that position is not the item's own: shared by
        the runs whose evictable list is the session's last one (``run_lookups`` checks that)."""
        run = self.run
        static = run.static
        prep = run_lookups(run)
        lookups = static.evictable_lookups  # (read once: another run may replace it)
        # this run's lookups are the shared ones only while they hold this very evictable list
        shared = lookups is not None and prep.evict_index is lookups[1]
        known = static.evictable_positions
        if shared and known is not None and known[0] is lookups and known[1] is self.pi:
            return known[2]
        is_item = self.pi.is_item  # (the plan's tag is "item" there)
        at: list[int | None] = [
            pos if pos is not None and is_item[pos] else None
            for pos in map(self.pi.position.get, map(id, run.evictable))
        ]
        if shared:
            static.evictable_positions = (lookups, self.pi, at)
        return at

    def _evictable_at(self, pos: int, item: ResolvedItem) -> int | None:
        return run_lookups(self.run).evict_index.get(id(item))

    def segment(self) -> list[Any]:
        base, changes = self.segment_changes()
        out: list[Any] = list(base)
        for pos, value in changes.items():
            out[pos] = value
        return out

    def segment_changes(self) -> tuple[list[Any], dict[int, Any]]:
        """The segment column as the plan's (shared by its runs) and this run's positions that may differ."""
        pi = self.pi
        base: list[Any] = pi.evictable_or_focus
        out: dict[int, Any] = {}
        first = self._first_fresh()
        is_item = pi.is_item
        for pos in range(first, len(base)):
            if is_item[pos]:
                out[pos] = "fresh-tail"
        for pos, item in self._exceptions().items():
            out[pos] = "evictable" if self._evictable_at(pos, item) is not None else "fresh-tail"
        tail = self.run.tail
        for pos, ordinal in pi.unresolved:
            out[pos] = "fresh-tail" if tail.is_fresh(ordinal) else "evictable"
        return base, out

    def selected(self) -> list[Any]:
        """True at the plan positions of the kept evictable items and the fresh tail's items (their own
        position, where the plan has an item; stubs by whether they were selected); at C speed: the
        chronological table layout reads it on every edit."""
        pi = self.pi
        run = self.run
        out: list[Any] = [False] * len(pi.fixed)  # a focus brief is kept but never in keptOrdinals (§10.1)
        is_item = pi.is_item
        # the kept evictable items' positions (None where the plan has no item of theirs), then the fresh
        # tail's items' own positions
        positions = list(map(self._evictable_positions().__getitem__, run.selection.kept))
        first = self._first_fresh()
        plan = run.static.plan
        fresh = [plan[pos][1] for pos in compress(range(first, len(plan)), is_item[first:])]
        positions.extend(map(pi.position.get, map(id, fresh)))
        positions = [pos for pos in positions if pos is not None]
        positions = list(compress(positions, map(is_item.__getitem__, positions)))
        exceptions = self._exceptions()
        if exceptions:
            positions = [pos for pos in positions if pos not in exceptions]
        deque(map(out.__setitem__, positions, repeat(True)), maxlen=0)  # (set them all, at C speed)
        selected_ids = run.selected_ids
        for pos, item in exceptions.items():
            out[pos] = id(item) in selected_ids
        return out

    def outcome(self) -> list[Any]:
        base, changes = self.outcome_changes()
        out: list[Any] = list(base)
        for pos, value in changes.items():
            out[pos] = value
        return out

    def outcome_changes(self) -> tuple[list[Any], dict[int, Any]]:
        """The outcome column as the plan's outcomes before any run (a list every run of the plan shares) and
        this run's outcomes that may differ from it, by position: two runs differ only where either has one."""
        if self._outcomes is None:
            self._outcomes = self._outcome_changes()
        return self._outcomes

    def _outcome_changes(self) -> tuple[list[Any], dict[int, Any]]:
        run = self.run
        pi = self.pi
        base: list[Any] = pi.evicted_or_fixed
        out: dict[int, Any] = {}
        first = self._first_fresh()
        is_item = pi.is_item
        for pos in range(first, len(base)):
            if is_item[pos]:
                out[pos] = "fresh-tail"
        plan = run.static.plan
        exceptions = self._exceptions()
        at = self._evictable_positions()
        kept = [pos for pos in map(at.__getitem__, run.selection.kept) if pos is not None]  # (C-fast lookups)
        if exceptions:
            kept = [pos for pos in kept if pos not in exceptions]
        out.update(zip(kept, repeat("kept")))
        selected_ids = run.selected_ids
        for pos, item in exceptions.items():
            if self._evictable_at(pos, item) is None:
                out[pos] = "fresh-tail"
            elif id(item) in selected_ids:
                out[pos] = "stubbed" if item.stub_of is not None else "kept"
            else:
                out[pos] = "evicted"
        touched = run_lookups(run).touched
        if touched:
            index_of_key = pi.index_of_key
            for key in touched:
                pos = index_of_key.get(key)
                if pos is None:
                    continue
                tag, obj = plan[pos]
                if tag == "focus":
                    post = post_outcome(run, key)
                elif tag == "item":
                    item = exceptions.get(pos, obj)
                    post = post_outcome(run, key) if id(item) in selected_ids else None
                else:
                    post = None
                if post is not None:
                    out[pos] = post[0]
        return base, out

    def tokens(self) -> list[Any]:
        out: list[Any] = list(self.pi.tokens)
        for pos, item in self._exceptions().items():
            out[pos] = item.tokens
        return out

    def score(self) -> list[Any]:
        run = self.run
        out: list[Any] = [None] * len(self.pi.keys)
        scored = run.scored
        if scored is None:
            return out
        position = self.pi.position
        plan = run.static.plan
        exceptions = self._exceptions()
        for index, item in enumerate(run.evictable):
            pos = position.get(id(item))
            if pos is not None and plan[pos][0] == "item" and pos not in exceptions:
                out[pos] = scored[index][0]
        evict_index = run_lookups(run).evict_index
        for pos, item in exceptions.items():
            index = evict_index.get(id(item))
            out[pos] = scored[index][0] if index is not None else None
        return out


def lazy_decisions(run: RunRecord) -> LazyDecisionList:
    """The run's decisions, built a chunk at a time when read; the columns below without building any."""
    pi = run.plan_index
    columns = _Columns(run)
    count = len(pi.keys)
    return LazyDecisionList(
        count,
        lambda start, stop: run_decisions(run, start, stop),
        columns={
            "key": lambda: pi.keys,
            "ordinal": lambda: pi.ordinals,
            "live_index": lambda: pi.no_live,
            "kind": lambda: pi.kinds,
            "segment": columns.segment,
            "selected": columns.selected,
            "outcome": columns.outcome,
            "tokens": columns.tokens,
            "score": columns.score,
        },
        index_of_key=lambda: pi.index_of_key,
        rows=(ROW_FIELDS, lambda start, stop: run_rows(run, start, stop)),
        changes={"key": lambda: (pi.keys, {}), "outcome": columns.outcome_changes, "segment": columns.segment_changes},
    )


def score_summary(run: RunRecord, decisions: LazyDecisionList, *, stubbed: bool) -> tuple[bool, bool]:
    """(some decision has a score, every such score is 0) — what ``low_confidence`` reads, without decisions.

    ``decisions`` is the run's own list and ``stubbed`` whether stub substitution swapped items in.
    """
    if run.scored is None:
        return False, True
    if stubbed:  # stub substitution: read the column, exactly as the decisions have it
        scores = [s for s in decisions.column("score") if s is not None]
        return bool(scores), all(s == 0 for s in scores)
    scores = [s for s, _ in run.scored if s is not None] if run.ranking is not None else None
    if scores is not None:
        return bool(scores), all(s == 0 for s in scores)
    if isinstance(run.scored, IndexedScores):
        return len(run.scored) > 0, not run.scored.positive
    return bool(run.scored), not any(s for s, _ in run.scored)
