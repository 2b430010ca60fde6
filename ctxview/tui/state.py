"""The inspector's state as its views read it: plain records, no Textual.

``InspectorScreen`` owns one of each as a reactive (``assembly``, ``selection``,
``min_budgets``, and ``roi`` from ``scoring_view``); its widgets bind to them
with ``data_bind`` and redraw in their watchers, and the sub-screens it opens
are handed the ones they show.  The records compare by identity
(``eq=False``): a new run is always news, and comparing two 100,000-item
traces field by field would cost more than drawing them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ctxview.model import Decision, Params, Session, Trace
from ctxview.sweep import SweepResult
from ctxview.tui.view import OutcomeDiff, TableLayout
from ctxview.whatif.cache_prefix import CachePrefix


@dataclass(slots=True, eq=False)
class Assembly:
    """One finished run and what its views need, precomputed off the UI thread."""

    trace: Trace
    layout: TableLayout  # the items table's rows in the sort it had when the run started
    diff: OutcomeDiff  # against the trace shown before it
    elapsed: float | None  # seconds the run took (None: the app hides timings)
    edit: str = ""  # the edit that asked for it ("" for the first run)
    first: bool = False  # the first run of this conversation
    cache: CachePrefix | None = None  # the prompt-cache prefix this run kept of the one shown before it
    sent: dict[str, int] | None = None  # the tokens sent per budget-bar segment (``view.sent_parts``)
    base: Trace | None = None  # the trace ``diff`` compares with (the one on screen when the run started)
    counts: dict[str, int] | None = None  # decisions per outcome (``view.outcome_counts``); None: count them
    counts_before: dict[str, int] | None = None  # ``counts`` of ``base`` (what ``counts`` is carried over from)


@dataclass(frozen=True, slots=True, eq=False)
class Selection:
    """The item under the table's cursor, with what the detail pane explains it from."""

    trace: Trace
    decision: Decision | None
    session: Session | None
    cache_key: str | None = None  # the first message the last edit changed (the prompt cache ends before it)


@dataclass(frozen=True, slots=True, eq=False)
class MinBudgets:
    """A budget sweep's answer: per item, the budget from which it is sent (``SweepResult.sent_from_text``).

    The sweep covers every budget, so the answer holds for any trace whose params differ from
    the swept ones in the budget alone.  It is view state: it never enters the trace, so an
    export is the same whether or not a sweep ran.
    """

    params: Params
    by_key: Mapping[str, str]  # key → "never", "5,490" or "7,205–7,650"

    def covers(self, params: Params) -> bool:
        """True when these min budgets belong to runs with ``params`` (at any budget)."""
        return replace(params, token_budget=0) == replace(self.params, token_budget=0)

    def of(self, key: str) -> str | None:
        return self.by_key.get(key)

    @classmethod
    def of_sweep(cls, params: Params, result: SweepResult) -> MinBudgets:
        return cls(params, {key: result.sent_from_text(key) for key in result.sent_from})
