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
from ctxview.tui.view import OutcomeDiff, TableLayout


@dataclass(slots=True, eq=False)
class Assembly:
    """One finished run and what its views need, precomputed off the UI thread."""

    trace: Trace
    layout: TableLayout  # the items table's rows in the sort it had when the run started
    diff: OutcomeDiff  # against the trace shown before it
    elapsed: float | None  # seconds the run took (None: the app hides timings)
    edit: str = ""  # the edit that asked for it ("" for the first run)
    first: bool = False  # the first run of this conversation


@dataclass(frozen=True, slots=True, eq=False)
class Selection:
    """The item under the table's cursor, with what the detail pane explains it from."""

    trace: Trace
    decision: Decision | None
    session: Session | None


@dataclass(frozen=True, slots=True, eq=False)
class MinBudgets:
    """A budget sweep's answer: per item, the smallest budget that keeps it (None: none does).

    The sweep covers every budget, so the answer holds for any trace whose params differ from
    the swept ones in the budget alone.  It is view state: it never enters the trace, so an
    export is the same whether or not a sweep ran.
    """

    params: Params
    by_key: Mapping[str, int | None]

    def covers(self, params: Params) -> bool:
        """True when these min budgets belong to runs with ``params`` (at any budget)."""
        return replace(params, token_budget=0) == replace(self.params, token_budget=0)

    def of(self, key: str) -> int | None:
        return self.by_key.get(key)
