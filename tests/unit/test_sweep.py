"""Budget sweep: the replayed budget pass, the exact thresholds and the sent-from budgets against real runs."""

from __future__ import annotations

import argparse
import bisect
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxview.cli import sweep as sweep_command
from ctxview.model import KEPT_OUTCOMES, Params, index_of
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample, ensure_demo_db
from ctxview.store import LcmStore
from ctxview.sweep import (
    SweepCancelled,
    _Plan,
    _shares,
    default_budgets,
    item_order,
    sent_range_text,
    spaced,
    sweep,
    sweep_session,
    text_chart,
)


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> SessionAssembler:
    path = tmp_path_factory.mktemp("sweep") / "medium.db"
    build_sample(path, "medium", messages=600)
    with LcmStore(path) as store:
        return SessionAssembler(store.load_session())


@pytest.fixture(scope="module")
def demo() -> SessionAssembler:
    with LcmStore(ensure_demo_db()) as store:
        return SessionAssembler(store.load_session())


MODES = [
    Params(prompt="database migration rollback", prompt_aware_eviction=True),
    Params(prompt="database migration rollback", prompt_aware_eviction=True, engine=False, fresh_tail_count=8),
    Params(prompt=None, prompt_aware_eviction=False, fresh_tail_count=16),
    Params(prompt="deploy", prompt_aware_eviction=True, reserved_tokens=300, stub_large_tool_payloads=True),
]


def test_spaced_budgets() -> None:
    assert spaced(10, 100, 4) == [10, 40, 70, 100]
    assert spaced(5, 5, 10) == [5]
    assert spaced(1, 3, 10) == [1, 2, 3]


@pytest.mark.parametrize("params", MODES)
def test_replayed_pass_equals_every_exact_run(medium: SessionAssembler, params: Params) -> None:
    budgets = default_budgets(medium, params, points=15)
    result = sweep(medium, params, budgets, runs=None)  # sweep raises if a replay disagrees with its run
    assert result.exact_runs == len(budgets) == len(result.kept_tokens)
    for budget, kept, final, items in zip(
        budgets, result.kept_tokens, result.final_tokens, result.kept_items, strict=True
    ):
        trace = medium.run(replace(params, token_budget=budget))
        assert kept == trace.summary.assembler_tokens
        assert final == trace.summary.final_tokens
        assert items == sum(1 for d in trace.decisions if d.outcome in KEPT_OUTCOMES)


@pytest.mark.parametrize("params", MODES)
def test_sent_from_is_the_first_exact_run_from_which_the_item_stays_sent(
    medium: SessionAssembler, params: Params
) -> None:
    budgets = default_budgets(medium, params, points=9)
    result = sweep(medium, params, budgets, runs=5)
    ran = [b for b, final in zip(result.budgets, result.final_tokens, strict=True) if final is not None]
    assert len(ran) == 5 and ran[0] == budgets[0] and ran[-1] == budgets[-1]
    sent: dict[str, list[bool]] = {}
    for budget in ran:
        for d in medium.run(replace(params, token_budget=budget)).decisions:
            sent.setdefault(d.key, []).append(d.outcome in KEPT_OUTCOMES)
    for key, runs in sent.items():
        if not runs[-1]:
            assert result.sent_from[key] is None and result.sent_from_text(key) == "never"
            continue
        first = len(runs) - next(i for i, kept in enumerate(reversed(runs)) if not kept) if not all(runs) else 0
        assert result.sent_from[key] == ran[first], key
        assert result.sent_after[key] == (ran[first - 1] if first else None), key


def test_sent_from_text_is_a_range_between_two_runs() -> None:
    assert sent_range_text(None, 5490) == "5,490"
    assert sent_range_text(7204, 7650) == "7,205–7,650"
    assert sent_range_text(7649, 7650) == "7,650"
    assert sent_range_text(7204, None) == "never"


@pytest.mark.parametrize("engine", [False, True])
def test_an_item_is_never_sent_before_it_is_selected(medium: SessionAssembler, engine: bool) -> None:
    """The two budgets of the chronological pass: 'sent from' is the first swept budget at or above
    'selected from', or later where clean-up (an orphan tool result) or the engine step drops it."""
    params = Params(prompt=None, prompt_aware_eviction=False, fresh_tail_count=16, engine=engine)
    budgets = default_budgets(medium, params, points=30)
    result = sweep(medium, params, budgets, runs=None)
    later = 0
    for key, at in result.sent_from.items():
        if at is None:
            continue
        first_selected = budgets[bisect.bisect_left(budgets, result.selected_from[key])]
        assert at >= first_selected, key
        if at > first_selected:
            later += 1
            trace = medium.run(replace(params, token_budget=first_selected))
            index = index_of(trace.decisions, key)
            assert index is not None
            dropped = trace.decisions[index]
            assert dropped.selected and dropped.outcome not in KEPT_OUTCOMES
    assert later > 0  # the sample has tool results whose calls are evicted first


def test_items_are_listed_by_ordinal_numerically(demo: SessionAssembler) -> None:
    assert sorted(["o:10", "l:0", "o:2", "r:cue", "o:100", "o:1.5"], key=item_order) == [
        "o:1.5", "o:2", "o:10", "o:100", "l:0", "r:cue"
    ]


@pytest.mark.parametrize("params", MODES)
def test_selected_from_is_exact_to_the_token(medium: SessionAssembler, params: Params) -> None:
    plan = _Plan.of(medium, params)
    rng = random.Random(3)
    keys = sorted(plan.thresholds)
    base = plan.base + plan.reserved
    for key in rng.sample(keys, min(25, len(keys))):
        threshold = plan.thresholds[key]
        at = {d.key: d for d in medium.run(replace(params, token_budget=threshold)).decisions}
        assert at[key].selected, (key, threshold)
        for above in (threshold + 1, threshold + rng.randint(1, 5000)):
            assert {d.key: d for d in medium.run(replace(params, token_budget=above)).decisions}[key].selected
        if threshold > base:  # fresh-tail items are kept at any budget
            below = {d.key: d for d in medium.run(replace(params, token_budget=threshold - 1)).decisions}
            assert not below[key].selected, (key, threshold)


def test_chronological_pass_is_monotone_and_prompt_aware_is_not(medium: SessionAssembler) -> None:
    assert _Plan.of(medium, MODES[2]).monotone
    assert not _Plan.of(medium, MODES[0]).monotone


def test_text_chart_and_json_from_the_cli(demo: SessionAssembler, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    sweep_command.add_arguments(parser)
    db = str(ensure_demo_db())
    args = parser.parse_args([db, "--prompt", "helm rollback", "--prompt-aware", "--points", "12", "--runs", "4",
                              "--items", "3", "--fresh-tail-count", "8"])
    assert sweep_command.run(args) == 0
    text = capsys.readouterr().out
    assert text.startswith("tokens kept by the budget pass (█) vs the budget (·)")
    assert "(exact runs)" in text and "selected from" in text and "sent from" in text
    args = parser.parse_args([db, "--prompt", "helm rollback", "--prompt-aware", "--points", "12", "--runs", "0",
                              "--format", "json", "--fresh-tail-count", "8"])
    assert sweep_command.run(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exactRuns"] == len(doc["budgets"]) == 12
    trace = demo.run(replace(Params(prompt="helm rollback", prompt_aware_eviction=True, fresh_tail_count=8),
                             token_budget=doc["budgets"][-1]))
    assert {row["key"] for row in doc["items"]} == {d.key for d in trace.decisions}
    result = sweep(demo, Params(prompt="helm rollback", prompt_aware_eviction=True, fresh_tail_count=8),
                   doc["budgets"], runs=None)
    assert doc["keptTokens"] == result.kept_tokens
    assert "runs in" in text_chart(result, width=30, height=5)


def test_sweep_needs_a_budget(demo: SessionAssembler) -> None:
    with pytest.raises(ValueError):
        sweep(demo, Params(), [0, -3])


def test_headless_sweep_does_not_import_textual() -> None:
    import subprocess
    import sys

    code = "import sys, ctxview.sweep, ctxview.cli.sweep; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False, cwd=Path(__file__).parents[2]).returncode == 0


def test_the_item_list_is_in_ordinal_order_and_says_what_each_budget_means(
    medium: SessionAssembler, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "medium.db"
    build_sample(db, "medium", messages=600)
    parser = argparse.ArgumentParser()
    sweep_command.add_arguments(parser)
    assert sweep_command.run(parser.parse_args([str(db), "--items", "-1", "--points", "8", "--runs", "4"])) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines.index(next(line for line in lines if line.split()[:1] == ["item"]))
    rows = [line.split() for line in lines[header + 1 :] if line[:8].strip().isdigit()]
    ordinals = [int(row[0]) for row in rows]
    assert ordinals == sorted(ordinals) and len(ordinals) == len(set(ordinals)) > 100
    assert ordinals[:3] == [0, 1, 2]
    assert lines[-2].startswith("selected from: ") and lines[-1].startswith("sent from: ")
    assert sweep_command.run(parser.parse_args([str(db), "--items", "5", "--sort", "sent", "--points", "8"])) == 0
    out = capsys.readouterr().out
    assert "more (--items -1 lists all)" in out


@pytest.mark.parametrize("params", MODES)
@pytest.mark.parametrize("workers", [2, 3])
def test_forked_workers_give_every_number_of_one(medium: SessionAssembler, params: Params, workers: int) -> None:
    budgets = default_budgets(medium, params, points=11)
    alone = sweep(medium, params, budgets, runs=7, workers=1)
    shared = sweep(medium, params, budgets, runs=7, workers=workers)
    assert shared.top_trace is not None and alone.top_trace is not None  # this process runs the top budget
    assert shared.top_trace.summary == alone.top_trace.summary
    alone.elapsed = shared.elapsed = 0.0
    assert shared == alone
    assert shared.exact_runs == 7 and list(shared.sent_from) == list(alone.sent_from)


def _runs_here(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The budgets this process runs (a forked child's runs are not seen here)."""
    import os

    from ctxview import sweep as sweep_module

    here: list[int] = []
    pid = os.getpid()
    plain = sweep_module._run

    def counted(assembler: SessionAssembler, params: Params) -> Any:
        if os.getpid() == pid:
            here.append(params.token_budget)
        return plain(assembler, params)

    monkeypatch.setattr(sweep_module, "_run", counted)
    return here


def _child_sends(monkeypatch: pytest.MonkeyPatch, send: Any) -> None:
    """Replace what the forked child does with its share by ``send(share, write_end)`` (it then leaves)."""
    from ctxview import sweep as sweep_module

    monkeypatch.setattr(
        sweep_module, "_send_runs", lambda _a, _p, share, _keys, _saves, write_end: send(share, write_end)
    )


def _write(fd: int, blob: bytes) -> None:
    import os

    while blob:
        blob = blob[os.write(fd, blob) :]


@pytest.mark.parametrize(
    "child",
    ["fails", "sends garbage", "sends a wrong shape", "sends one run"],
)
def test_the_runs_a_forked_child_does_not_send_are_made_here(
    medium: SessionAssembler, monkeypatch: pytest.MonkeyPatch, child: str
) -> None:
    import marshal

    from ctxview import sweep as sweep_module

    params = MODES[0]
    budgets = default_budgets(medium, params, points=11)
    alone = sweep(medium, params, budgets, runs=6, workers=1)
    exact = [b for b, final in zip(budgets, alone.final_tokens, strict=True) if final is not None]
    dealt: list[list[list[int]]] = []
    plain_shares = sweep_module._shares

    def shares(*args: Any) -> list[list[int]]:
        dealt.append(plain_shares(*args))
        return dealt[-1]

    monkeypatch.setattr(sweep_module, "_shares", shares)

    def send(share: list[int], write_end: int) -> None:
        sent_one = share[0]
        if child == "fails":
            raise RuntimeError("the child fails")
        if child == "sends garbage":
            _write(write_end, b"not marshal")
        elif child == "sends a wrong shape":
            _write(write_end, marshal.dumps([(1, 2)]))
        else:  # the first run of its share only, as the real child sends it
            run = sweep_module._ExactRun.of(medium.run(replace(params, token_budget=sent_one)))
            _write(
                write_end,
                marshal.dumps((False, [(sent_one, run.assembler_tokens, run.final_tokens, run.kept, run.keys)])),
            )

    _child_sends(monkeypatch, send)
    here = _runs_here(monkeypatch)
    shared = sweep(medium, params, budgets, runs=6, workers=2)
    (_own, theirs), = dealt
    assert len(theirs) >= 2
    expected = [b for b in exact if b != theirs[0]] if child == "sends one run" else exact
    assert sorted(here) == sorted(expected)  # this process made every run the child did not send
    alone.elapsed = shared.elapsed = 0.0
    assert shared == alone


def test_a_cancelled_sweep_ends_its_forked_child(medium: SessionAssembler, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    from ctxview import sweep as sweep_module

    _child_sends(monkeypatch, lambda _share, _fd: time.sleep(60))  # (a child still busy when the sweep stops)
    started: list[Any] = []
    plain = sweep_module._RunsChild.start

    def start(*args: Any, **kwargs: Any) -> Any:
        child = plain(*args, **kwargs)
        started.append((child, child.pid))
        return child

    monkeypatch.setattr(sweep_module._RunsChild, "start", start)
    params = MODES[0]
    budgets = default_budgets(medium, params, points=11)
    began = time.monotonic()
    with pytest.raises(SweepCancelled):
        sweep(medium, params, budgets, runs=6, workers=2, progress=lambda done, total: done < 1)
    (child, pid), = started
    assert child.pid is None and child.fd == -1
    with pytest.raises(ChildProcessError):  # ended and reaped: no such child any more
        os.waitpid(pid, os.WNOHANG)
    assert time.monotonic() - began < 30  # (not waited for)


def test_the_top_trace_is_the_run_at_the_largest_budget(medium: SessionAssembler) -> None:
    params = MODES[0]
    budgets = default_budgets(medium, params, points=6)
    result = sweep(medium, params, budgets, runs=3)
    assert result.top_trace is not None
    fresh = medium.run(replace(params, token_budget=budgets[-1]))
    assert result.top_trace.summary == fresh.summary
    assert list(result.top_trace.decisions) == list(fresh.decisions)


def test_cli_jobs_two_prints_the_same_numbers(demo: SessionAssembler, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    sweep_command.add_arguments(parser)
    db = str(ensure_demo_db())
    common = [db, "--prompt", "helm rollback", "--prompt-aware", "--points", "10", "--runs", "5", "--format", "json"]
    assert sweep_command.run(parser.parse_args(common)) == 0
    one = json.loads(capsys.readouterr().out)
    assert sweep_command.run(parser.parse_args([*common, "--jobs", "2"])) == 0
    two = json.loads(capsys.readouterr().out)
    assert one == two and one["exactRuns"] == 5


class CountingRuns:
    """The assembler with its full runs counted (everything else passes through)."""

    def __init__(self, assembler: SessionAssembler) -> None:
        self.assembler = assembler
        self.budgets: list[int] = []

    def run(self, params: Params) -> Any:
        self.budgets.append(params.token_budget)
        return self.assembler.run(params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.assembler, name)


def test_the_range_top_run_is_the_sweep_top_run(medium: SessionAssembler) -> None:
    params = MODES[1]  # no engine step: the range ends at the item total
    counting = CountingRuns(medium)
    budgets = default_budgets(counting, params, points=9)  # type: ignore[arg-type]
    assert counting.budgets == [params.token_budget, budgets[-1]]
    reused = sweep(counting, params, budgets, runs=4, workers=1)  # type: ignore[arg-type]
    ran = [b for b, final in zip(budgets, reused.final_tokens, strict=True) if final is not None]
    assert counting.budgets[2:] == ran[-2::-1]  # every exact run but the top, which the range made, largest first
    again = sweep(counting, params, budgets, runs=4, workers=1)  # type: ignore[arg-type]
    assert counting.budgets[2 + 3 :] == ran[::-1]  # handed out once: this sweep runs the top itself
    assert reused.top_trace is not None and again.top_trace is not None
    assert reused.top_trace.summary == again.top_trace.summary
    assert list(reused.top_trace.decisions) == list(again.top_trace.decisions)
    reused.elapsed = again.elapsed = 0.0
    assert reused == again


def test_the_range_top_run_is_not_used_for_other_params_or_budgets(medium: SessionAssembler) -> None:
    counting = CountingRuns(medium)
    budgets = default_budgets(counting, MODES[1], points=5)  # type: ignore[arg-type]
    other = replace(MODES[1], fresh_tail_count=17)
    sweep(counting, other, budgets, runs=2, workers=1)  # type: ignore[arg-type]
    assert counting.budgets[2:] == [budgets[-1], budgets[0]]  # (the largest first)
    # with the engine step the serialized clamp still cuts at the item total, so the range goes on to the
    # serialized size: the run at the item total is not a run of the sweep, which makes its own top run
    counting.budgets.clear()
    budgets = default_budgets(counting, MODES[2], points=5)  # type: ignore[arg-type]
    assert counting.budgets[1] < budgets[-1]
    sweep(counting, MODES[2], budgets, runs=2, workers=1)  # type: ignore[arg-type]
    assert counting.budgets[2:] == [budgets[-1], budgets[0]]


@pytest.mark.parametrize("workers", [1, 2])
def test_progress_counts_the_range_and_each_exact_run(medium: SessionAssembler, workers: int) -> None:
    calls: list[tuple[int, int]] = []
    result = sweep_session(medium, MODES[1], points=9, runs=4, workers=workers,
                           progress=lambda done, total: calls.append((done, total)) is None)
    # the range (whose top run is the sweep's), then the three other exact runs
    assert calls == [(0, 4), (1, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    assert result.exact_runs == 4
    budgets = default_budgets(medium, MODES[1], points=9)
    plain = sweep(medium, MODES[1], budgets, runs=4, workers=1)
    result.elapsed = plain.elapsed = 0.0
    assert result == plain
    calls.clear()  # where the range goes past the item total its top run is no run of the sweep: one more
    sweep_session(medium, MODES[0], points=9, runs=4, workers=workers,
                  progress=lambda done, total: calls.append((done, total)) is None)
    assert calls == [(0, 4), (1, 4), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


def test_progress_returning_false_stops_the_sweep_before_its_next_run(medium: SessionAssembler) -> None:
    counting = CountingRuns(medium)
    with pytest.raises(SweepCancelled):
        sweep_session(counting, MODES[1], points=9, runs=4, workers=1,  # type: ignore[arg-type]
                      progress=lambda done, total: done < 2)
    assert len(counting.budgets) == 3  # the range's two runs and one exact run: (2, 4) said stop
    with pytest.raises(SweepCancelled):
        sweep(counting, MODES[1], [100, 200], runs=None, workers=1,  # type: ignore[arg-type]
              progress=lambda done, total: False)
    assert len(counting.budgets) == 3


def test_shares_of_about_equal_budget_sums() -> None:
    assert _shares([10, 50, 20, 40, 30], 2) == [[50, 20, 10], [40, 30]]
    assert _shares([7], 2) == [[7], []]
    assert _shares([3, 2, 1], 1) == [[3, 2, 1]]


def test_shares_keep_the_runs_that_select_every_item_together() -> None:
    # from 5 on every item is selected: those runs go to the first share (the first of them costs about 5, each
    # other a third of that), the others are dealt by cost (their budget) to the lightest share
    assert _shares([9, 7, 5, 3, 2, 1], 2, whole=5) == [[9, 7, 5], [3, 2, 1]]
    assert _shares([9, 4, 3, 2], 2, whole=5) == [[9, 2], [4, 3]]
    assert _shares([4, 3], 2, whole=5) == [[4], [3]]  # (none that high: the largest still goes first)
    assert _shares([9, 7], 1, whole=5) == [[9, 7]]


def test_a_cancelled_sweep_keeps_no_remembered_run(medium: SessionAssembler) -> None:
    from ctxview import sweep as sweep_module

    with pytest.raises(SweepCancelled):
        sweep_session(medium, MODES[1], points=9, runs=4, workers=1, progress=lambda done, total: done < 1)
    assert not sweep_module._TOP.held()
    default_budgets(medium, MODES[1], points=9)
    assert sweep_module._TOP.held()  # held for the sweep that follows …
    sweep_session(medium, MODES[1], points=9, runs=2, workers=1, high=30_000)
    assert not sweep_module._TOP.held()  # … and dropped by a sweep that ends elsewhere


def test_automatic_workers_fork_only_where_a_core_is_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import threading

    from ctxview import sweep as sweep_module
    from ctxview.assembly import forked_map

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(sweep_module, "_can_fork", lambda: True)
    monkeypatch.setattr(forked_map, "idle_cores", lambda: None)  # (a window too short: the run queue decides)
    monkeypatch.setattr(forked_map, "_running_now", lambda: 1)  # this process alone
    monkeypatch.setattr(os, "getloadavg", lambda: (1.9, 1.9, 1.9))  # (the runs just before count in it: not read)
    count = sweep_module._worker_count
    assert count(None, 5, 100_000) == 2
    assert count(None, 1, 100_000) == 1  # one run: nothing to share
    assert count(None, 5, sweep_module.FORK_FROM_ITEMS - 1) == 1  # runs of milliseconds
    assert count(3, 5, 10) == 3 and count(3, 1, 10) == 1  # asked for: as asked, when there is anything to share
    monkeypatch.setattr(forked_map, "_running_now", lambda: 2)
    assert count(None, 5, 100_000) == 1  # the other core is busy
    monkeypatch.setattr(forked_map, "idle_cores", lambda: 0.9)  # a long enough window decides over the run queue
    assert count(None, 5, 100_000) == 2
    monkeypatch.setattr(forked_map, "idle_cores", lambda: 0.3)
    monkeypatch.setattr(forked_map, "_running_now", lambda: 1)
    assert count(None, 5, 100_000) == 1
    monkeypatch.setattr(forked_map, "idle_cores", lambda: None)
    monkeypatch.setattr(threading, "active_count", lambda: 3)
    assert count(None, 5, 100_000) == 1  # threads (the TUI): a forked child would not get them


@pytest.mark.parametrize("after_range", [True, False])
def test_a_forked_sweep_after_its_range_starts_the_child_before_making_its_plan(
    medium: SessionAssembler, monkeypatch: pytest.MonkeyPatch, after_range: bool
) -> None:
    """The range's run tells the sweep what its children need of the plan (the key column its runs share, where
    every item is selected): they start first and this process makes the plan meanwhile; without it, the plan
    comes first.  The sweep is the same either way."""
    from ctxview import sweep as sweep_module

    params = replace(MODES[0], fresh_tail_count=12)
    budgets = default_budgets(medium, params, points=9)
    alone = sweep(medium, params, budgets, runs=4, workers=1)
    if not after_range:
        sweep_module._SHAPE.clear()  # (none kept)
    order: list[str] = []
    plan_of = sweep_module._Plan.of
    start = sweep_module._RunsChild.start

    def planned(*args: Any) -> Any:
        order.append("plan")
        return plan_of(*args)

    def started(*args: Any, **kwargs: Any) -> Any:
        order.append("child")
        return start(*args, **kwargs)

    monkeypatch.setattr(sweep_module._Plan, "of", planned)
    monkeypatch.setattr(sweep_module._RunsChild, "start", started)
    shared = sweep(medium, params, budgets, runs=4, workers=2)
    assert order == (["child", "plan"] if after_range else ["plan", "child"])
    alone.elapsed = shared.elapsed = 0.0
    assert shared == alone


def test_a_sweep_session_keeps_nothing_of_its_session_after_it(medium: SessionAssembler) -> None:
    from ctxview import sweep as sweep_module

    sweep_session(medium, MODES[0], points=5, runs=3, workers=1)
    assert not sweep_module._SHAPE.held() and not sweep_module._TOP.held()
