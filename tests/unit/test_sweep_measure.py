"""The first sweep's engine values measured in a forked process (``ctxview.sweep_measure``)."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxview import sweep_measure
from ctxview.assembly.resolve import messages_of
from ctxview.assembly.volatile import SerializedCache
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from ctxview.sweep import budget_range, sweep, sweep_session

# (budgets well under the session's ~45,000 tokens: the range's first run measures only what it sends)
PARAMS = Params(token_budget=8000, prompt="database migration rollback", prompt_aware_eviction=True)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("measure") / "medium.db"
    build_sample(path, "medium", messages=600)
    return path


def fresh(db: Path) -> SessionAssembler:
    """A newly loaded session: its engine memo holds nothing yet (as in a new process)."""
    with LcmStore(db) as store:
        return SessionAssembler(store.load_session())


def items_and_memo(assembler: SessionAssembler, params: Params) -> tuple[list[Any], SerializedCache]:
    from ctxview.assembly.incremental.static import chunk_plan_of, static_of

    rules = assembler.rules(params)[0]
    resolved = assembler.resolved(params.timezone, rules.sender_metadata)
    plan = chunk_plan_of(static_of(assembler.session, resolved, params.timezone), resolved)
    return list(plan.items), assembler.engine_memo(rules)


def test_the_forked_values_are_those_this_process_would_measure(db: Path) -> None:
    assembler = fresh(db)
    items, memo = items_and_memo(assembler, PARAMS)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None and memo.deferred() == fork.take
    messages = messages_of(items)
    tokens, h16s, pairings = memo.known(messages)  # (a whole-list read: takes the child's values first)
    assert fork.taken is True and memo.deferred() is None
    assert_measured_as_here(memo, messages, tokens, h16s, pairings)
    assert any(calls or answers for calls, answers in pairings)  # (the session issues and answers calls)
    fork.close()  # (taken: the child leaves by itself, and is waited for)
    assert fork.pid == 0 and fork.fd == -1
    assert sweep_measure.start(assembler, PARAMS) is None  # the memo holds every message now: no second fork


def assert_measured_as_here(
    memo: SerializedCache, messages: list[Any], tokens: list[Any], h16s: list[Any], pairings: list[Any]
) -> None:
    own = SerializedCache(estimate=memo.estimate)
    assert tokens == [own(m) for m in messages]
    assert h16s == [own.h16(m) for m in messages]
    assert pairings == [own.pairing(m) for m in messages]


def test_this_process_measures_from_the_front_while_the_child_is_slow(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child starts late: this process measures every message itself, the child finds nothing left to
    claim and sends an empty share; every value is there, measured once."""
    child = sweep_measure._child

    def late(*args: Any, **options: Any) -> None:  # (starts once this process has claimed every message)
        items, shared = args[2], args[4]
        waited = 0.0
        while sweep_measure._get(shared, sweep_measure._FRONT) < len(items) and waited < 10:
            time.sleep(0.005)
            waited += 0.005
        child(*args, **options)

    monkeypatch.setattr(sweep_measure, "_child", late)
    monkeypatch.setattr(sweep_measure, "BATCH", 64)
    assembler = fresh(db)
    items, memo = items_and_memo(assembler, PARAMS)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None
    assert fork.take() is True and fork.measured_here == len(items)
    messages = messages_of(items)
    assert_measured_as_here(memo, messages, *memo.known(messages))


def test_the_child_and_this_process_meet_in_the_middle(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_measure, "BATCH", 8)
    assembler = fresh(db)
    items, memo = items_and_memo(assembler, PARAMS)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None
    waited = 0.0
    while sweep_measure._get(fork.shared, sweep_measure._BACK) == len(items) and waited < 10:
        time.sleep(0.01)  # (until the child has claimed its first batch)
        waited += 0.01
    assert fork.take() is True and fork.measured_here < len(items)
    messages = messages_of(items)
    assert_measured_as_here(memo, messages, *memo.known(messages))


def test_a_fork_never_taken_is_ended_and_leaves_the_memo_as_it_was(db: Path) -> None:
    assembler = fresh(db)
    _, memo = items_and_memo(assembler, PARAMS)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None
    pid = fork.pid
    fork.close()
    assert fork.taken is False and memo.deferred() is None and memo.size() == 0
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # (reaped)
    assert fork.take() is False


def test_a_child_that_fails_gives_nothing_and_the_run_measures_as_usual(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **options: Any) -> None:
        raise RuntimeError("the child fails")

    monkeypatch.setattr(sweep_measure, "_child", broken)
    assembler = fresh(db)
    _, memo = items_and_memo(assembler, PARAMS)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None
    assert fork.take() is False and memo.size() == fork.measured_here  # (what it measured itself, no more)
    budget = budget_range(fresh(db), PARAMS, workers=1)[1]
    top = replace(PARAMS, token_budget=budget)
    assert assembler.run(top).summary == fresh(db).run(top).summary


@pytest.mark.parametrize(
    "params", [PARAMS, Params(token_budget=4000, prompt=None, prompt_aware_eviction=False, fresh_tail_count=16)]
)
def test_a_sweep_whose_range_measured_in_a_fork_is_the_sweep_of_one_process(
    db: Path, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[sweep_measure.MeasuringFork] = []
    start = sweep_measure.start

    def recorded(assembler: SessionAssembler, params: Params, **options: Any) -> Any:
        fork = start(assembler, params, **options)
        if isinstance(fork, sweep_measure.MeasuringFork):
            started.append(fork)
        return fork

    monkeypatch.setattr(sweep_measure, "start", recorded)
    alone = sweep_session(fresh(db), params, points=9, runs=4, workers=1)
    assert not started  # (one process: no fork)
    shared = sweep_session(fresh(db), params, points=9, runs=4, workers=2)
    assert len(started) == 1 and started[0].taken is True  # the range's top run took the child's values
    assert shared.top_trace is not None and alone.top_trace is not None
    assert shared.top_trace.summary == alone.top_trace.summary
    alone.elapsed = shared.elapsed = 0.0
    assert shared == alone
    assembler = fresh(db)
    low, high = budget_range(assembler, params, workers=2)
    assert (low, high) == (alone.budgets[0], alone.budgets[-1])
    again = sweep(assembler, params, alone.budgets, runs=4, workers=1)
    again.elapsed = 0.0
    assert again == alone


def whole_run_args(assembler: SessionAssembler, params: Params) -> tuple[Any, int, float, Any]:
    """(plan, cut, orphan ordinal, result ids) of a run that selects every item, its fresh tail the last 8."""
    from ctxview.assembly.incremental.static import chunk_plan_of, static_of

    rules = assembler.rules(params)[0]
    resolved = assembler.resolved(params.timezone, rules.sender_metadata)
    static = static_of(assembler.session, resolved, params.timezone)
    plan = chunk_plan_of(static, resolved)
    cut = len(plan.items) - 8
    return plan, cut, plan.items[cut].ordinal, static.all_results


@pytest.mark.parametrize("fails", [False, True])
def test_the_flags_learned_in_two_processes_are_those_of_one_pass(
    db: Path, fails: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process learns from the first chunk up (slowly here: the child learns a good part from the last
    down), and the two meet; a child that fails leaves every chunk to this process."""
    if fails:
        monkeypatch.setattr(sweep_measure, "_child", lambda *args, **options: os._exit(3))
    monkeypatch.setattr(sweep_measure, "CHUNK_BATCH", 16)
    assembler = fresh(db)
    plan, cut, orphan, all_results = whole_run_args(assembler, PARAMS)
    expected = plan.whole_selection_flags(cut, orphan, all_results)
    assert 0 < expected.count(1) < len(expected) and len(expected) > 64
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None and plan.whole_learner == fork.learn
    learn_here = type(plan).whole_selection_flags

    def slowly(*args: Any) -> bytes:  # (in this process only: the child was forked before)
        waited = 0.0  # (a child that works waits for no scheduler luck: this process lets it claim a batch first)
        while not fails and sweep_measure._get(fork.shared, sweep_measure._CHUNK_BACK) == len(expected) and waited < 10:
            time.sleep(0.005)
            waited += 0.005
        return learn_here(*args)

    monkeypatch.setattr(type(plan), "whole_selection_flags", slowly)
    try:
        assert fork.learn(plan, cut, orphan, all_results) == expected
        if fails:
            assert fork.flags_from_child == 0
        else:
            assert 0 < fork.flags_from_child < len(expected)
        assert fork.learn(plan, cut, orphan, frozenset()) == learn_here(plan, cut, orphan, frozenset())
    finally:
        fork.close()
    assert plan.whole_learner is None and fork.pid == 0


def test_a_child_done_measuring_still_learns_the_flags_asked_of_it_while_this_process_lives(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child waits after sending its values for as long as this process lives and may still ask for the
    flags: it knows this process by the pid it had before the fork (after it, its own pid is the child's)."""
    import select

    monkeypatch.setattr(sweep_measure, "CHUNK_BATCH", 16)
    assembler = fresh(db)
    plan, cut, orphan, all_results = whole_run_args(assembler, PARAMS)
    expected = plan.whole_selection_flags(cut, orphan, all_results)
    fork = sweep_measure.start(assembler, PARAMS)
    assert fork is not None
    try:
        readable, _, _ = select.select([fork.fd], [], [], 60)  # its values sent: every message measured there
        assert readable and sweep_measure._get(fork.shared, sweep_measure._BACK) == 0
        learn_here = type(plan).whole_selection_flags

        deadline = time.monotonic() + 10  # (one wait in all: a child that is gone never claims)

        def after_the_child_claims(*args: Any) -> bytes:  # (this process lets the child claim a batch first)
            while sweep_measure._get(fork.shared, sweep_measure._CHUNK_BACK) == len(expected) and (
                time.monotonic() < deadline
            ):
                time.sleep(0.005)
            return learn_here(*args)

        monkeypatch.setattr(type(plan), "whole_selection_flags", after_the_child_claims)
        assert fork.learn(plan, cut, orphan, all_results) == expected
        assert 0 < fork.flags_from_child < len(expected)
    finally:
        fork.close()
