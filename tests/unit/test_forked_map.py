"""``forked_map``: the same list as a plain map, whichever process computed each item.

The functions return the pid of the process that ran them, so each test sees which items the child
did and which ones this process did (or did again, where the child could not).
"""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from ctxview.assembly import forked_map as forked
from ctxview.assembly.forked_map import FORK_FROM_ITEMS, fork_helps, forked_map

PARENT = os.getpid()


def _square(value: int) -> tuple[int, int]:
    return value * value, os.getpid()


def test_the_child_computes_the_first_share_and_this_process_the_rest() -> None:
    items = list(range(100))
    results = forked_map(_square, items, fork=True, child_share=0.6)
    assert [value for value, _ in results] == [i * i for i in items]
    pids = [pid for _, pid in results]
    assert len(set(pids[:60])) == 1 and pids[0] != PARENT
    assert pids[60:] == [PARENT] * 40


def test_without_a_fork_everything_is_computed_here() -> None:
    results = forked_map(_square, list(range(10)), fork=False)
    assert results == [(i * i, PARENT) for i in range(10)]


def test_a_few_items_are_never_forked() -> None:
    assert not fork_helps(FORK_FROM_ITEMS - 1)
    results = forked_map(_square, list(range(50)))  # fork=None: fork_helps decides
    assert results == [(i * i, PARENT) for i in range(50)]


def test_another_thread_means_no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "idle_cores", lambda: None)
    monkeypatch.setattr(forked, "_running_now", lambda: None)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert fork_helps(FORK_FROM_ITEMS)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fork_helps(FORK_FROM_ITEMS)
    finally:
        stop.set()
        thread.join()


def test_a_busy_machine_or_a_single_core_means_no_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "idle_cores", lambda: None)  # (no idle time or run queue to go by: the load
    monkeypatch.setattr(forked, "_running_now", lambda: None)  # average decides)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.9, 0.0, 0.0))
    assert fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.0, 0.0, 0.0))
    assert not fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert not fork_helps(FORK_FROM_ITEMS)


def test_the_idle_time_since_the_last_look_decides_over_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 0.0, 0.0))  # (this process and its last child count in it)
    monkeypatch.setattr(forked, "idle_cores", lambda: 0.9)
    assert fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(forked, "idle_cores", lambda: 0.5)
    assert not fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)  # the machine's idle time is not only this process's cores'
    assert fork_helps(FORK_FROM_ITEMS)


def test_without_an_idle_time_window_the_run_queue_decides_over_the_load_average(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(forked, "idle_cores", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 0.0, 0.0))  # (a run just before this one counts in it)
    monkeypatch.setattr(forked, "_running_now", lambda: 1)  # only this process runs now
    assert fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(forked, "_running_now", lambda: 2)  # another process has the other core
    assert not fork_helps(FORK_FROM_ITEMS)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)  # the machine's run queue is not only this process's cores'
    assert fork_helps(FORK_FROM_ITEMS)


def test_a_blip_in_the_run_queue_does_not_refuse_the_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(forked, "idle_cores", lambda: None)
    monkeypatch.setattr(forked, "RUN_QUEUE_GAP", 0.0)
    looks = iter([2, 1, 2])  # another process at one look only (waking up, or being torn down)
    monkeypatch.setattr(forked, "_running_now", lambda: next(looks))
    assert fork_helps(FORK_FROM_ITEMS)
    looks = iter([2, 2, 2])  # at every look: it is busy on the other core
    assert not fork_helps(FORK_FROM_ITEMS)


def test_running_now_reads_the_run_queue() -> None:
    with open("/proc/loadavg", "rb") as file:
        expected_fields = len(file.read().split())
    running = forked._running_now()
    assert expected_fields == 5 and running is not None and running >= 1  # (this process runs as it reads)


def test_idle_cores_is_the_machines_idle_share_since_the_last_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    times = iter([(1000, 5000), (1010, 5020), (1110, 5220), (1110, 5220)])
    monkeypatch.setattr(forked, "_cpu_times", lambda: next(times))
    forked.look_again()  # (1000, 5000)
    assert forked.idle_cores() is None  # 20 ticks: too short a window, which goes on
    assert forked.idle_cores() == 110 / 220 * 2  # (1110, 5220) against (1000, 5000): the last judged look
    assert forked.idle_cores() is None  # the window starts again at each judged look
    monkeypatch.setattr(forked, "_cpu_times", lambda: None)
    forked.look_again()
    assert forked.idle_cores() is None  # no /proc/stat


def test_cpu_times_reads_the_machines_ticks() -> None:
    times = forked._cpu_times()
    assert times is not None and 0 <= times[0] <= times[1]


def _fails_in_the_child_for_three(value: int) -> tuple[int, int]:
    if value == 3 and os.getpid() != PARENT:
        raise RuntimeError("only in the child")
    return value * value, os.getpid()


def test_an_item_the_child_could_not_do_is_done_here() -> None:
    results = forked_map(_fails_in_the_child_for_three, list(range(10)), fork=True, child_share=0.5)
    assert [value for value, _ in results] == [i * i for i in range(10)]
    pids = [pid for _, pid in results]
    assert pids[3] == PARENT
    assert all(pid != PARENT for i, pid in enumerate(pids[:5]) if i != 3)


class _Unsendable:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unsendable)

    def __hash__(self) -> int:
        return 0


def _unsendable_for_even(value: int) -> Any:
    return _Unsendable() if value % 2 == 0 else (value, os.getpid())


def test_a_result_marshal_cannot_hold_is_done_here_and_the_others_still_come_back() -> None:
    results = forked_map(_unsendable_for_even, list(range(8)), fork=True, child_share=0.5)
    assert results[0] == results[2] == _Unsendable()
    assert results[1][0] == 1 and results[1][1] != PARENT
    assert results[3][0] == 3 and results[3][1] != PARENT
    assert results[4:] == [_Unsendable(), (5, PARENT), _Unsendable(), (7, PARENT)]


def _dies_in_the_child(value: int) -> tuple[int, int]:
    if os.getpid() != PARENT:
        os._exit(3)
    return value * value, os.getpid()


def test_a_child_that_dies_leaves_its_share_to_this_process() -> None:
    results = forked_map(_dies_in_the_child, list(range(6)), fork=True)
    assert results == [(i * i, PARENT) for i in range(6)]


def _fails_here_for_nine(value: int) -> int:
    if value == 9 and os.getpid() == PARENT:
        raise ValueError("nine")
    return value


def test_an_exception_here_propagates_and_the_child_is_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    forks: list[int] = []
    fork = os.fork

    def recording_fork() -> int:
        pid = fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(forked.os, "fork", recording_fork)
    with pytest.raises(ValueError, match="nine"):
        forked_map(_fails_here_for_nine, list(range(10)), fork=True, child_share=0.5)
    assert len(forks) == 1
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], 0)  # already waited for: no zombie left behind


def test_an_empty_list_or_an_empty_child_share_forks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(forked.os, "fork", no_fork)
    assert forked_map(_square, [], fork=True) == []
    assert forked_map(_square, [2], fork=True, child_share=0.2) == [(4, PARENT)]


def _labelled(value: int) -> Any:
    return ("here", value) if os.getpid() == PARENT else ("child", value)


def _as_list(result: Any) -> Any:
    if result[1] == 1:
        raise ValueError("cannot send one")
    return [result[0], result[1]]


def test_the_child_sends_what_send_makes_of_its_results_and_hands_off_its_items() -> None:
    handed: list[list[int]] = []
    results = forked_map(_labelled, list(range(6)), fork=True, child_share=0.5,
                         handed_off=lambda items: handed.append(list(items)), send=_as_list)
    # the child's results as send made them (one it could not send: done here), this process's as they are
    assert results == [["child", 0], ("here", 1), ["child", 2], ("here", 3), ("here", 4), ("here", 5)]
    assert handed == [[0, 1, 2]]
