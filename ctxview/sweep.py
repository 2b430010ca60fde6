"""Budget sweep: what is kept at every budget from the fresh-tail size to the whole session.

Each item gets two budgets, one per stage, each defined in one sentence (the CLI,
the README and the help screen repeat these sentences):

* **selected from** — the smallest budget from which the budget pass (§6)
  selects the item at every larger budget; exact to the token.  The pass is
  monotone where it can be: the chronological walk keeps item *i* exactly when
  the tokens from *i* to the newest fit, and the prompt-aware greedy walk keeps
  the *k*-th item of its priority order at every budget ≥ the tokens of the
  first *k*.  One ordering with prefix sums gives every threshold (below it the
  greedy walk may still keep an item by skipping a larger one; that is not
  "at every larger budget").
* **sent from** — the smallest budget from which the item is in what the model
  receives at every larger exact run, known to lie between the exact run before
  it (not sent there) and that run: ``7,205–7,650``.  Exact runs are
  ``SessionAssembler.run`` (selection, clean-up, pairing repair, engine step,
  clamp), so this can only be as fine as the runs; ``--runs`` buys resolution.

An item is never sent before it is selected, so "sent from" is the later of the
two; the gap between them is what clean-up, the live inputs and the clamp take.

Pure: no Textual, no printing (``text_chart`` returns a string).
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import accumulate, compress
from typing import TYPE_CHECKING, Any

from ctxview import sweep_cache, sweep_measure
from ctxview.assembly.assembler import empty_result
from ctxview.assembly.forked_map import core_left_idle, fork_with_pipe, look_again
from ctxview.assembly.select import SelectionOrder
from ctxview.gc_pause import gc_paused
from ctxview.jserrors import JSError
from ctxview.model import KEPT_OUTCOMES, Params, Trace, column, count_text

if TYPE_CHECKING:
    from ctxview.pipeline import SessionAssembler

DEFAULT_POINTS = 64
DEFAULT_RUNS = 6


@dataclass(slots=True)
class SweepResult:
    """Tokens kept per budget and, per decision key, the budgets from which it is kept."""

    budgets: list[int]  # token budgets assembled exactly, ascending
    kept_tokens: list[int]  # assembler estimate (§6) per budget: the tokens the budget pass kept (every budget)
    final_tokens: list[int | None]  # what the model receives (serialized, after the engine); exact runs only
    kept_items: list[int | None]  # decisions with a kept outcome, per budget; exact runs only
    sent_from: dict[str, int | None]  # key → first exact run from which it is sent at every larger run (None: never)
    sent_after: dict[str, int | None]  # key → the exact run before ``sent_from`` (not sent there); None: the first
    selected_from: dict[str, int]  # key → budget from which the budget pass selects it at every larger budget
    selection_mode: str  # chronological | prompt-aware | full-fit (at the smallest budget)
    monotone: bool  # the budget pass is monotone for these params (chronological walk)
    tail_tokens: int  # fresh tail + focus brief (always kept)
    total_tokens: int  # tail + every evictable item: from here on everything fits
    reserved_tokens: int
    exact_runs: int
    elapsed: float = 0.0
    notes: list[str] = field(default_factory=list)
    top_trace: Trace | None = field(default=None, repr=False, compare=False)  # the largest budget's run, if kept

    def sent_from_text(self, key: str) -> str:
        """``sent from`` as shown everywhere: ``never``, ``5,490`` or the range ``7,205–7,650``."""
        return sent_range_text(self.sent_after.get(key), self.sent_from.get(key))


def sent_range_text(after: int | None, at: int | None) -> str:
    """The range in which an item starts to be sent: above ``after`` (not sent there), at most ``at``."""
    if at is None:
        return "never"
    if after is None or after + 1 >= at:
        return f"{at:,}"
    return f"{after + 1:,}–{at:,}"


SELECTED_FROM_SENTENCE = "selected from: the budget pass selects it at every budget from here on (exact to the token)"
SENT_FROM_SENTENCE = (
    "sent from: in what the model receives at every larger exact run; a range when the first of them is not "
    "the smallest (not sent at the run before; --runs narrows it)"
)


def budget_range(assembler: SessionAssembler, params: Params, *, workers: int | None = None) -> tuple[int, int]:
    """(smallest, largest) token budget worth sweeping: the fresh-tail size and the whole session.

    With the engine step on, the top is where nothing is cut any more: the whole
    session's serialized size when the serialized clamp still cuts at its item total.
    That size is measured by a run at the item total, unless an earlier sweep of this database
    state with the same params kept it (``sweep_cache.known_cut``).  That run takes the engine's values
    of the messages from the render cache file they were read from, where it keeps them; ``workers`` as
    for ``sweep``: where it allows two processes, a forked one shares the clean-up with this one and
    measures the messages the file does not give (``sweep_measure``; 1: never).
    """
    # (collector paused throughout: the runs' traces it drops are freed as they go, and what lives on, the top
    # trace kept for the sweep, is frozen rather than walked by the first collection after: ~0.15 s at 100,000)
    with gc_paused(keep=True):
        return _range_runs(assembler, params, workers)


def _range_runs(assembler: SessionAssembler, params: Params, workers: int | None = None) -> tuple[int, int]:
    first = _run(assembler, params)
    low, high = _range_of(first)
    _SHAPE.put(assembler.session, _shape_key(params), (column(first.decisions, "key"), high))
    top_params = replace(params, token_budget=high)
    reserved = max(0, params.reserved_tokens)
    sweep_cache.prime(assembler, params)  # what an earlier sweep of this database state learned at the top
    known = sweep_cache.known_cut(assembler, top_params)  # (that run's own outcome, kept: it is not run again)
    if known is not None:
        _TOP.clear()
        return low, known + reserved
    # (a forked process where one helps; the render cache file's values of the messages where it keeps them)
    measuring = sweep_measure.start(
        assembler, top_params, fork=_worker_count(workers, 2, len(assembler.session.items)) > 1
    )
    try:
        top = _run(assembler, top_params)
    finally:
        if measuring is not None:
            measuring.close()
    clamp = top.stages.get("serializedClamp") or {}
    if clamp.get("clamped"):
        before = clamp.get("serializedTokensBefore")
        if isinstance(before, int) and before > high - reserved:
            sweep_cache.note_cut(assembler, top_params, before)
            _TOP.clear()
            return low, before + reserved
    _TOP.put(assembler.session, top_params, top)  # the sweep's top exact run, usually: run once, not twice
    return low, high


class _Handoff:
    """One value ``budget_range`` hands to the sweep that follows it, for one session and one key: taken once by
    the sweep of the same pair (a run depends on nothing but the session and the params), and let go of at the
    end of ``sweep_session`` (it holds the session)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: tuple[Any, Any, Any] | None = None  # (session, key, value)

    def put(self, session: Any, key: Any, value: Any) -> None:
        with self._lock:
            self._held = (session, key, value)

    def clear(self) -> None:
        with self._lock:
            self._held = None

    def held(self) -> bool:
        return self._held is not None

    def take(self, session: Any, key: Any) -> Any:
        """The value kept for exactly this session and key (then no longer kept); None: none."""
        with self._lock:
            held = self._held
            if held is None or held[0] is not session or held[1] != key:
                return None
            self._held = None
            return held[2]


# the last top run of ``budget_range`` (key: its params; the trace), the sweep's top exact run when at that budget
_TOP = _Handoff()
# what the sweep needs before its plan to start its forked runs (key: the params with no budget; the decisions' key
# column its runs share, and the budget from which every item is selected)
_SHAPE = _Handoff()


def _shape_key(params: Params) -> Params:
    return replace(params, token_budget=0)


def _run(assembler: SessionAssembler, params: Params) -> Trace:
    """One exact run with the cyclic GC paused: a run allocates hundreds of thousands of objects that live
    as long as it does, and each full collection in it walks the session's heap again (at 100,000 items a
    warm run took 0.8–1.1 s of CPU with collections, 0.55–0.8 s without)."""
    with gc_paused():
        return assembler.run(params)


def _range_of(trace: Trace) -> tuple[int, int]:
    s = trace.summary
    reserved = max(0, trace.params.reserved_tokens)
    low = max(1, s.tail_tokens + s.focus_tokens + reserved)
    high = max(low, s.tail_tokens + s.focus_tokens + s.evictable_total_tokens + reserved)
    return low, high


def default_budgets(
    assembler: SessionAssembler, params: Params, points: int = DEFAULT_POINTS, *, workers: int | None = None
) -> list[int]:
    """``points`` budgets evenly spaced from the fresh-tail size to the total, both ends included."""
    low, high = budget_range(assembler, params, workers=workers)
    return spaced(low, high, points)


def spaced(low: int, high: int, points: int) -> list[int]:
    """Whole budgets from ``low`` to ``high`` inclusive, about ``points`` of them, ascending, no repeats."""
    if points < 2 or high <= low:
        return sorted({low, high})
    step = (high - low) / (points - 1)
    return sorted({max(1, round(low + i * step)) for i in range(points)} | {low, high})


SweepProgress = Callable[[int, int], bool]  # (exact runs done, of how many) → False: stop the sweep


class SweepCancelled(Exception):
    """The caller's progress function asked the sweep to stop (it stops before its next exact run)."""


def sweep(
    assembler: SessionAssembler,
    params: Params,
    budgets: list[int],
    *,
    runs: int | None = DEFAULT_RUNS,
    workers: int | None = None,
    progress: SweepProgress | None = None,
) -> SweepResult:
    """Tokens kept at every budget of ``budgets``; exact full runs at ``runs`` of them (None: all).

    ``kept_tokens`` (the assembler's estimate, fixed by the budget pass) is exact at
    every budget: the pass is replayed from one ordering, no clean-up needed.
    ``final_tokens`` and ``kept_items`` come from the exact runs (None elsewhere),
    and so do ``sent_from`` and ``sent_after``.  The top exact run is the one
    ``budget_range`` just made when it was at the same budget (not run twice).

    ``workers`` > 1 shares the exact runs among forked processes (each inherits the
    assembler's caches; the numbers are the same); None picks 2 when that is safe and
    useful: ``os.fork``, two cores of which one is idle (``core_left_idle``), no other
    thread in this process (a forked child gets no copy of them), at least two runs left
    and ``FORK_FROM_ITEMS`` items.  This process runs a share
    too, the one with the largest budget, so ``top_trace`` (the trace of the largest
    budget, None when it is not an exact run) is always kept.

    ``progress(done, total)`` is called before and after each exact run this call makes;
    when it returns False the sweep raises ``SweepCancelled`` (before its next run).
    """
    started = time.perf_counter()
    budgets = sorted({int(b) for b in budgets if int(b) >= 1})
    if not budgets:
        raise ValueError("a sweep needs at least one budget ≥ 1")
    plans: list[_Plan] = []

    def planned() -> _Plan:
        if not plans:
            plans.append(_Plan.of(assembler, params))
        return plans[0]

    exact = set(budgets if runs is None else spaced_subset(budgets, runs))
    ordered = [budget for budget in budgets if budget in exact]
    outcomes: dict[int, _ExactRun] = {}
    top_params = replace(params, token_budget=budgets[-1])
    top_trace = _TOP.take(assembler.session, top_params) if budgets[-1] in exact else None
    if top_trace is not None:
        outcomes[budgets[-1]] = _ExactRun.of(top_trace)
    pending = [budget for budget in ordered if budget not in outcomes]
    report = _Progress(progress, len(pending))
    report.check()
    if pending:
        sweep_cache.prime(assembler, params)
    tops: list[Trace] = [top_trace] if top_trace is not None else []

    def keep(budget: int, trace: Trace) -> None:
        if budget == budgets[-1]:
            tops.append(trace)

    processes = _worker_count(workers, len(pending), len(assembler.session.items))
    if processes > 1:
        # the children start before the plan is made (this process makes it meanwhile) when the range's run told
        # what they need of it: the key column the runs share (not sent back) and where every item is selected
        shape = _SHAPE.take(assembler.session, _shape_key(params))
        if shape is None:
            plan = planned()
            shape = plan.keys, plan.base + plan.total + plan.reserved
        keys, whole = shape
        outcomes.update(
            _exact_runs_forked(assembler, params, pending, processes, report, keep, keys, whole, prepare=planned)
        )
    else:
        # (between the runs too: a collection there would walk the last run's objects; and what lives on, the top
        # trace and what the runs added to the session's caches, is frozen rather than walked once they are done)
        with gc_paused(keep=True):
            for budget in reversed(pending):  # (the largest first, as a forked share: the whole session warms them all)
                trace = _run(assembler, replace(params, token_budget=budget))
                outcomes[budget] = _ExactRun.of(trace)
                keep(budget, trace)
                report.done_one()
    top_trace = tops[0] if tops else None
    plan = planned()
    kept_tokens = [plan.kept_tokens(budget) for budget in budgets]
    final_tokens: list[int | None] = []
    kept_items: list[int | None] = []
    ran: list[tuple[int, _ExactRun]] = []  # the exact runs, ascending
    for budget in budgets:
        if budget not in exact:
            final_tokens.append(None)
            kept_items.append(None)
            continue
        run = outcomes[budget]
        if run.assembler_tokens != plan.kept_tokens(budget):
            raise RuntimeError(f"sweep replay disagrees with the assembler at budget {budget}")  # a bug, loudly
        final_tokens.append(run.final_tokens)
        kept_items.append(run.kept.count(1))
        ran.append((budget, run))
    sent_from, sent_after = _sent_budgets(ran)
    with gc_paused():
        # for the next sweep of this database state (when none was read), by a process of its own where one can
        # be started: the caller does not wait for it
        sweep_cache.save(assembler, params, background=True)
    notes = [
        f"tokens kept: the budget pass replayed exactly at each of the {len(budgets)} budgets",
        f"{len(exact)} exact runs (selection, clean-up, pairing repair, engine step, clamp) give the final "
        "tokens and sent from, exact at their resolution",
        "selected from: exact to the token, from the "
        + ("chronological walk (monotone)" if plan.monotone else "greedy priority order"),
    ]
    return SweepResult(
        budgets=budgets,
        kept_tokens=kept_tokens,
        final_tokens=final_tokens,
        kept_items=kept_items,
        sent_from=sent_from,
        sent_after=sent_after,
        selected_from=plan.thresholds,
        selection_mode=plan.mode,
        monotone=plan.monotone,
        tail_tokens=plan.base,
        total_tokens=plan.base + plan.total,
        reserved_tokens=plan.reserved,
        exact_runs=len(exact),
        elapsed=time.perf_counter() - started,
        notes=notes,
        top_trace=top_trace,
    )


def _sent_budgets(ran: list[tuple[int, _ExactRun]]) -> tuple[dict[str, int | None], dict[str, int | None]]:
    """(sent from, sent after) of every key of the exact runs ``ran`` (ascending budgets).

    An item is sent from the run after the last run that does not send it (None: the largest
    does not), and ``sent after`` is that last run.  When every run has the same keys (the
    usual case: one decision per item), that last run is found for all items at once: one
    byte per key in one integer, each run's unsent keys written over it with whole-run masks;
    otherwise item by item.
    """
    if not ran:
        return {}, {}
    keys = ran[0][1].keys
    if (
        any(run.keys != keys for _, run in ran) or len(set(keys)) != len(keys)
        or len(ran) >= 255  # (a run's index + 1 must fit in a byte)
    ):
        return _sent_budgets_by_key(ran)
    count = len(keys)
    lanes = int.from_bytes(b"\x01" * count, "big")  # a 1 in each key's byte
    # per key, in its byte: 1 + the index in ``ran`` of the last run that does not send it (0: every run sends it)
    after = 0
    for index, (_, run) in enumerate(ran):
        unsent = lanes & ~int.from_bytes(run.kept, "big")  # (kept masks hold 0 or 1 per key)
        after = (after & ~(unsent * 0xFF)) | (unsent * (index + 1))
    after_last = after.to_bytes(count, "big")
    budgets: list[int | None] = [budget for budget, _ in ran]
    # sent from the run after the last unsent one (None: the largest does not send it); after that one (None: none)
    sent_from = dict(zip(keys, map([*budgets, None].__getitem__, after_last), strict=True))
    sent_after = dict(zip(keys, map([None, *budgets].__getitem__, after_last), strict=True))
    return sent_from, sent_after


def _sent_budgets_by_key(ran: list[tuple[int, _ExactRun]]) -> tuple[dict[str, int | None], dict[str, int | None]]:
    """``_sent_budgets`` one key at a time, for runs whose keys differ (e.g. a live input in some runs only)."""
    sent_from: dict[str, int | None] = {}
    sent_after: dict[str, int | None] = {}
    previous: int | None = None  # the exact run before this one
    for budget, run in ran:
        for key, kept in zip(run.keys, run.kept, strict=True):
            if kept:
                if sent_from.get(key) is None:  # sent from here on, unless a larger run drops it again
                    sent_from[key] = budget
                    sent_after[key] = previous
            else:
                sent_from[key] = None
                sent_after[key] = budget
        previous = budget
    return sent_from, sent_after


def sweep_session(
    assembler: SessionAssembler,
    params: Params,
    *,
    points: int = DEFAULT_POINTS,
    runs: int | None = DEFAULT_RUNS,
    low: int | None = None,
    high: int | None = None,
    workers: int | None = None,
    progress: SweepProgress | None = None,
) -> SweepResult:
    """``budget_range`` then ``sweep`` over ``points`` budgets, with one progress count for both.

    Finding the range is the first step of the count (its run at the whole session is the
    sweep's top exact run, and the dearest: every message is cleaned up and serialized there);
    each remaining exact run is one more.  ``low``/``high`` replace the range's ends.
    """
    expected = 1 + max(0, (points if runs is None else min(runs, points)) - 1)  # (sweep corrects it)
    report = _Progress(progress, expected)
    report.check()
    found_low, found_high = budget_range(assembler, params, workers=workers)
    try:  # the range's top run waits for the sweep; whatever happens, it is not kept past it
        report.done_one()
        low = found_low if low is None else low
        high = found_high if high is None else high
        if low < 1 or high < low:
            raise ValueError(f"budget range {low:,}…{high:,} is empty")
        offset = report.done

        def counted(done: int, total: int) -> bool:
            return report.reach(offset + done, offset + total)

        return sweep(assembler, params, spaced(low, high, points), runs=runs, workers=workers,
                     progress=counted if progress is not None else None)
    finally:
        _TOP.clear()
        _SHAPE.clear()


class _Progress:
    """Exact runs done of how many, told to the caller's progress function (which may stop the sweep)."""

    def __init__(self, progress: SweepProgress | None, total: int) -> None:
        self.progress = progress
        self.total = max(1, total)
        self.done = 0

    def reach(self, done: int, total: int) -> bool:
        self.done, self.total = done, max(1, total)
        return self.progress is None or self.progress(done, self.total)

    def check(self) -> None:
        if not self.reach(self.done, self.total):
            raise SweepCancelled

    def done_one(self) -> None:
        self.done += 1
        self.check()


# below this many items an exact run takes milliseconds: starting a process costs more than it saves
FORK_FROM_ITEMS = 4000


def _worker_count(workers: int | None, runs: int, items: int) -> int:
    """Processes for ``runs`` exact runs: ``workers``, or for None 2 where forking is safe and helps."""
    if workers is not None:
        return workers if runs > 1 and _can_fork() else 1
    if runs < 2 or items < FORK_FROM_ITEMS or not core_left_idle():  # (no idle core: a fork would only wait)
        return 1
    return 2 if _can_fork() else 1


@dataclass(slots=True)
class _ExactRun:
    """What the sweep reads of one exact run: small enough to send back from a forked worker."""

    assembler_tokens: int
    final_tokens: int
    keys: list[str]
    kept: bytes  # 1 where the decision's outcome is a kept one

    @classmethod
    def of(cls, trace: Trace) -> _ExactRun:
        kept = _kept_mask(trace.decisions)
        keys = column(trace.decisions, "key")  # (often the plan's own list, shared by its runs: read only)
        return cls(trace.summary.assembler_tokens, trace.summary.final_tokens, keys, kept)


# the last base outcome column read (shared by the runs of one plan) and its kept mask
_BASE_KEPT: tuple[list[Any], bytes] | None = None
_BASE_KEPT_LOCK = threading.Lock()


def _kept_mask(decisions: Any) -> bytes:
    """One byte per decision, 1 where its outcome is a kept one.

    From the outcome column's base (shared by every run of a plan: its mask is made once) and the
    positions this run changes, whenever the decisions give that form, even where most positions change
    (a run that selects every item): the whole column is that base with the changes written in one by
    one in Python, after the same changes are made.
    """
    global _BASE_KEPT
    parts = decisions.column_changes("outcome") if hasattr(decisions, "column_changes") else None
    if parts is None:
        return bytes(map(KEPT_OUTCOMES.__contains__, column(decisions, "outcome")))  # (at C speed)
    base, changes, extra = parts
    with _BASE_KEPT_LOCK:
        known = _BASE_KEPT
        if known is None or known[0] is not base:
            known = _BASE_KEPT = (base, bytes(map(KEPT_OUTCOMES.__contains__, base)))
    mask = bytearray(known[1])
    deque(map(mask.__setitem__, changes, map(KEPT_OUTCOMES.__contains__, changes.values())), maxlen=0)  # (C loop)
    mask.extend(map(KEPT_OUTCOMES.__contains__, extra))
    return bytes(mask)


def _can_fork() -> bool:
    """A fork exists here (``multiprocessing`` is not imported for this: ~30 ms on the sweep's path)."""
    return hasattr(os, "fork")


def _shares(budgets: list[int], count: int, whole: int | None = None) -> list[list[int]]:
    """``budgets`` dealt into ``count`` shares of about equal cost, largest first; the first share gets the largest
    budget.

    A run costs more the more it keeps: about its budget, up to ``whole`` (the whole session's size: from
    there on every item is selected).  Runs from ``whole`` up go together, to the first share: the first of
    them cleans up every chunk and indexes every pair, and the others of its process reuse that (each costs
    about a third of the first); the runs below are dealt to the lightest share, the largest first.
    """
    shares: list[list[int]] = [[] for _ in range(count)]
    sums = [0.0] * count
    ordered = sorted(budgets, reverse=True)
    if whole is not None and count > 1:
        above = [budget for budget in ordered if budget >= whole]
        shares[0].extend(above)
        sums[0] = whole * (1 + (len(above) - 1) / 3) if above else 0.0
        ordered = [budget for budget in ordered if budget < whole]
    for budget in ordered:
        lightest = sums.index(min(sums))
        shares[lightest].append(budget)
        sums[lightest] += budget if whole is None else min(budget, whole)
    return shares


def _exact_runs_forked(
    assembler: SessionAssembler,
    params: Params,
    budgets: list[int],
    workers: int,
    report: _Progress,
    keep: Callable[[int, Trace], None],
    plan_keys: list[str],
    whole: int | None = None,
    prepare: Callable[[], Any] | None = None,
) -> dict[int, _ExactRun]:
    """The exact runs of ``budgets`` in this process and ``workers - 1`` forked ones, in shares of about
    equal cost; this process runs the share with the largest budget (``keep`` sees its traces).  ``report``
    hears of each run as it finishes and may stop them all.  The runs of a child that fails or dies are made
    here (the same numbers).  The first child, its runs sent, starts the ``sweep_cache`` writer (it has what
    this process would write: the run at the whole session came before the fork): this process then neither
    forks for it nor shares its pages with it while it finishes the sweep.  ``prepare`` is called once the
    children are started, before this process's runs."""
    workers = min(workers, len(budgets))
    own, *others = _shares(budgets, workers, whole)
    gc.freeze()  # the children's collections then skip the inherited heap (and it stays frozen: the session lives on)
    children: list[_RunsChild] = []
    outcomes: dict[int, _ExactRun] = {}
    try:
        children.extend(
            _RunsChild.start(assembler, params, share, plan_keys, saves=index == 0)
            for index, share in enumerate(others) if share
        )
        if prepare is not None:
            with gc_paused(keep=True):
                prepare()
        # (the collector paused between the runs too, as in one process: the first collection after a run walked
        # everything it left, 0.1–0.3 s at 100,000 items; what lives on is frozen once they are done)
        with gc_paused(keep=True):
            for budget in own:
                trace = _run(assembler, replace(params, token_budget=budget))
                outcomes[budget] = _ExactRun.of(trace)
                keep(budget, trace)
                del trace  # (let go while the children run: a page shared with one costs a copy to write)
                report.done_one()
            for child in children:
                for budget, run in child.collect(plan_keys).items():
                    outcomes[budget] = run
                    report.done_one()
                for budget in child.share:  # (what the child did not send: made here)
                    if budget not in outcomes:
                        outcomes[budget] = _ExactRun.of(_run(assembler, replace(params, token_budget=budget)))
                        report.done_one()
        if any(child.saved for child in children):
            sweep_cache.saved_elsewhere(assembler, params)
    finally:
        for child in children:
            child.end()
        look_again()  # (the children's busy cores say nothing of whether the next fork finds one idle)
    return outcomes


class _RunsChild:
    """A forked copy of this process making the exact runs of ``share``; it sends them all at the end (one
    ``marshal`` blob through a pipe: sending as it goes would stall on the full pipe while this process
    makes its own share) and leaves at once."""

    def __init__(self, share: list[int], pid: int | None, fd: int) -> None:
        self.share = share
        self.pid = pid  # None: no child (the fork failed, or it was reaped)
        self.fd = fd
        self.saved = False  # it started the ``sweep_cache`` writer

    @classmethod
    def start(
        cls, assembler: SessionAssembler, params: Params, share: list[int], plan_keys: list[str], *, saves: bool
    ) -> _RunsChild:
        """``saves``: once its runs are made, it starts the ``sweep_cache`` writer (``sweep_cache.start_save``)."""
        started = fork_with_pipe(partial(_send_runs, assembler, params, share, plan_keys, saves))
        if started is None:
            return cls(share, None, -1)
        pid, read_end = started
        return cls(share, pid, read_end)

    def collect(self, plan_keys: list[str]) -> dict[int, _ExactRun]:
        """The child's runs (none when it failed: they are then made here), once it is done."""
        if self.pid is None:
            return {}
        try:
            with os.fdopen(self.fd, "rb") as reader:  # (closes the descriptor)
                self.fd = -1
                blob = reader.read()
        except OSError:
            blob = b""
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if status != 0:
            return {}
        try:
            saved, sent = marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            return {}
        self.saved = saved is True
        runs: dict[int, _ExactRun] = {}
        try:
            for budget, assembler_tokens, final_tokens, kept, keys in sent:
                if budget in self.share:
                    runs[budget] = _ExactRun(assembler_tokens, final_tokens, plan_keys if keys is None else keys, kept)
        except (TypeError, ValueError):  # (not what ``_send_runs`` sends: made here)
            return {}
        return runs

    def end(self) -> None:
        """End the child (when it was not collected: this process failed or was cancelled) and let its pipe go."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _send_runs(
    assembler: SessionAssembler, params: Params, share: list[int], plan_keys: list[str], saves: bool, write_end: int
) -> None:
    """In the child: the runs of ``share``, then (``saves``) the ``sweep_cache`` writer started, then whether it
    was and every run's numbers (keys as None where they are the plan's own list: 100,000 keys for a list
    the parent already has)."""
    gc.disable()  # (this process leaves when its runs are done: a collection would only walk what they built)
    sent = []
    for budget in share:
        run = _ExactRun.of(_run(assembler, replace(params, token_budget=budget)))
        keys = None if run.keys is plan_keys else run.keys
        sent.append((budget, run.assembler_tokens, run.final_tokens, run.kept, keys))
    saved = saves and sweep_cache.start_save(assembler, params, leave=(write_end,))  # (its end waits for ours)
    view = memoryview(marshal.dumps((saved, sent)))
    while view:
        view = view[os.write(write_end, view) :]


def item_order(key: str) -> tuple[int, float, str]:
    """Stored items by ordinal (numerically), then live inputs by position, then anything else."""
    kind, _, rest = key.partition(":")
    rank = {"o": 0, "l": 1}.get(kind, 2)
    try:
        number = float(rest)
    except ValueError:
        number = float("inf")
    return rank, number, key


def spaced_subset(budgets: list[int], count: int) -> list[int]:
    """About ``count`` budgets of a sorted list, evenly spread, both ends included."""
    if count >= len(budgets):
        return list(budgets)
    if count <= 1:
        return [budgets[-1]]
    step = (len(budgets) - 1) / (count - 1)
    return sorted({budgets[round(i * step)] for i in range(count)})


_ALWAYS_KEPT = frozenset({"fresh-tail", "focus"})  # the segments the budget pass keeps at any budget


@dataclass(slots=True)
class _Plan:
    """The budget pass for fixed non-budget parameters: one walk order, replayed at any budget."""

    order: SelectionOrder  # the §6 walk (the assembly's own rules replay it)
    base: int  # fresh tail + focus tokens
    total: int  # every evictable token
    reserved: int
    thresholds: dict[str, int]  # key → budget from which the pass keeps it at every larger budget
    mode: str
    monotone: bool
    keys: list[str]  # the decisions' key column (the runs of these params usually share this very list)

    @classmethod
    def of(cls, assembler: SessionAssembler, params: Params) -> _Plan:
        reserved = max(0, params.reserved_tokens)
        # a budget of 1 puts the pass in its eviction mode; the order it walks does not depend on the budget
        try:
            asm = assembler.assemble(params, 1)
        except JSError:  # the engine cannot resolve the session and falls back: its assembler keeps nothing
            asm = empty_result()
        base = asm.tail_tokens + asm.focus_tokens
        order = asm.selection_order()
        # an evictable item is kept at every budget that fits it and everything before it in the walk
        # (the greedy walk may keep it earlier by skipping a larger one; only the exact runs show that)
        offset = base + reserved
        if offset >= 1 and min(order.tokens, default=0) >= 0:  # (every sum ≥ 1 already: made at C speed)
            thresholds = dict(zip(order.keys, map(offset.__add__, accumulate(order.tokens)), strict=True))
        else:
            thresholds = {
                key: max(1, needed + offset) for key, needed in zip(order.keys, accumulate(order.tokens), strict=True)
            }
        # fresh-tail and focus items are kept at any budget: from the fresh-tail size on
        keys = column(asm.decisions, "key")
        segments = column(asm.decisions, "segment")
        if len(keys) != len(segments):
            raise ValueError("the decisions' key and segment columns differ in length")
        always = max(1, base + reserved)
        for key in compress(keys, map(_ALWAYS_KEPT.__contains__, segments)):  # (the few of them, found at C speed)
            if key not in thresholds:
                thresholds[key] = always
        mode = asm.selection_mode
        return cls(order, base, order.total, reserved, thresholds, mode, mode != "prompt-aware", keys)

    def kept_tokens(self, budget: int) -> int:
        """The assembler's estimate at ``budget``: fresh tail + focus + what the pass keeps."""
        effective = max(1, budget - self.reserved)
        return self.base + self.order.kept_tokens(max(0, effective - self.base))


# --- the chart -----------------------------------------------------------------------------------

_BLOCKS = " ▁▂▃▄▅▆▇█"


def chart_rows(result: SweepResult, width: int, height: int) -> list[str]:
    """Columns of eighth-blocks: tokens kept (bars) against the budget; ``·`` marks the budget itself."""
    width = max(8, width)
    height = max(3, height)
    budgets = result.budgets
    top, floor = y_range(result)
    cells = [[" "] * width for _ in range(height)]
    low, high = budgets[0], budgets[-1]
    span = max(1, high - low)
    for x in range(width):
        budget = low + span * x / max(1, width - 1)
        # the last swept budget at or below this column (a step function, as the runs are)
        at = 0
        for i, b in enumerate(budgets):
            if b <= budget + 1e-9:
                at = i
        value = (result.kept_tokens[at] - floor) / max(1, top - floor) * height
        full = int(value)
        for y in range(height):
            level = height - 1 - y
            if level < full:
                cells[y][x] = "█"
            elif level == full:
                cells[y][x] = _BLOCKS[int((value - full) * 8)]
        diagonal = int((budget - floor) / max(1, top - floor) * height)
        if 0 <= diagonal < height:
            y = height - 1 - diagonal
            if cells[y][x] == " ":
                cells[y][x] = "·"
    return ["".join(row) for row in cells]


def y_range(result: SweepResult) -> tuple[int, int]:
    """(top, floor) of the token axis: from just below the smallest value to the largest."""
    values = [*result.kept_tokens, *result.budgets]
    top, low = max([*values, 1]), min(values)
    floor = max(0, low - max(1, (top - low) // 10))
    return top, floor


def text_chart(result: SweepResult, width: int = 64, height: int = 12) -> str:
    """The sweep as text: the chart with axes, then the numbers of every exact run."""
    rows = chart_rows(result, width, height)
    top, floor = y_range(result)
    label_width = len(f"{top:,}")
    lines = ["tokens kept by the budget pass (█) vs the budget (·)"]
    for i, row in enumerate(rows):
        label = f"{top:,}" if i == 0 else (f"{floor:,}" if i == len(rows) - 1 else "")
        lines.append(f"{label:>{label_width}} │{row}")
    lines.append(" " * label_width + " └" + "─" * len(rows[0]))
    low, high = f"{result.budgets[0]:,}", f"{result.budgets[-1]:,}"
    gap = max(1, len(rows[0]) - len(low) - len(high))
    lines.append(" " * (label_width + 2) + low + " " * gap + high + "  budget")
    lines.append("")
    lines.append(f"{'budget':>12} {'kept':>12} {'final':>12} {'items kept':>11}   (exact runs)")
    for budget, kept, final, items in zip(
        result.budgets, result.kept_tokens, result.final_tokens, result.kept_items, strict=True
    ):
        if final is not None and items is not None:
            lines.append(f"{budget:>12,} {kept:>12,} {final:>12,} {items:>11,}")
    lines.append("")
    lines.extend(f"note: {note}" for note in result.notes)
    lines.append(f"{count_text(result.exact_runs, 'run')} in {result.elapsed:.2f} s")
    return "\n".join(lines)


def sweep_json(result: SweepResult) -> dict[str, Any]:
    """The sweep as a JSON document (keys in camelCase like the rest of ctxview's JSON)."""
    return {
        "budgets": result.budgets,
        "keptTokens": result.kept_tokens,
        "finalTokens": result.final_tokens,
        "keptItems": result.kept_items,
        "selectionMode": result.selection_mode,
        "monotone": result.monotone,
        "tailTokens": result.tail_tokens,
        "totalTokens": result.total_tokens,
        "reservedTokens": result.reserved_tokens,
        "exactRuns": result.exact_runs,
        "items": [
            {
                "key": key,
                "selectedFrom": result.selected_from.get(key),
                "sentFrom": result.sent_from.get(key),
                "sentAfter": result.sent_after.get(key),
            }
            for key in sorted(result.sent_from, key=item_order)
        ],
        "notes": list(result.notes),
    }
