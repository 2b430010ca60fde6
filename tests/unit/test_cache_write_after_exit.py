"""A headless command leaves writing its render cache to a process that goes on after it has exited.

The caller (a shell, ``$(…)``, a pipe) stops waiting when the command ends, not when the write does: the
writer has its own session and its standard streams on the null device.  ``CTXVIEW_CACHE_WRITE=wait``
writes the file before the command exits.  Neither way writes anything beside the database.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxview.samples import build_sample

REPO = Path(__file__).resolve().parents[2]

# a process that starts a writer after it exits; the writer waits for the test's go-ahead, then reports
_WAITING_WRITER = """
import os, sys, time
from pathlib import Path
from ctxview.assembly.forked_map import run_after_exit

go, report = Path(sys.argv[1]), Path(sys.argv[2])

def work():
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    streams = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
    report.write_text(f"{os.getsid(0) == os.getpid()} {streams}")

print("started" if run_after_exit(work) else "not started")
"""


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened")
        time.sleep(0.02)


def test_the_caller_stops_waiting_when_the_process_exits_not_when_its_work_ends(tmp_path: Path) -> None:
    go, report = tmp_path / "go", tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-c", _WAITING_WRITER, str(go), str(report)],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # (returns only at the end of the output: the blocked writer does not hold it open)
    assert (done.returncode, done.stdout, done.stderr) == (0, "started\n", "")
    assert not report.exists()  # the writer is still waiting for the go-ahead
    go.touch()
    _wait_until(report.exists, "the writer's report")
    assert report.read_text() == f"True {[os.devnull] * 3}"  # a session of its own, quiet


def test_with_another_thread_nothing_is_started_and_the_caller_does_the_work() -> None:
    import threading

    from ctxview.assembly.forked_map import run_after_exit

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert run_after_exit(lambda: None) is False
    finally:
        stop.set()
        thread.join()


def _assemble(db: Path, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "CTXVIEW_CACHE_DIR": str(cache), "CTXVIEW_CACHE_MIN_MESSAGES": "0", **env}
    environment.pop("CTXVIEW_CACHE", None)
    if "CTXVIEW_CACHE_WRITE" not in env:
        environment.pop("CTXVIEW_CACHE_WRITE", None)  # (the test run's own default is to wait)
    return subprocess.run(
        [sys.executable, "-m", "ctxview", "assemble", str(db), "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=environment,
    )


@pytest.mark.parametrize("write", ["after-exit", "wait"])
def test_the_command_writes_the_same_cache_either_way_and_nothing_beside_the_database(
    tmp_path: Path, write: str
) -> None:
    db = tmp_path / "data" / "session.db"
    db.parent.mkdir()
    build_sample(db, "medium", messages=200)
    before = sorted(os.listdir(db.parent))
    cache = tmp_path / "cache"
    extra = {"CTXVIEW_CACHE_WRITE": "wait"} if write == "wait" else {}
    cold = _assemble(db, cache, **extra)
    assert cold.returncode == 0, cold.stderr
    if write == "wait":
        assert len(list(cache.glob("*.renders"))) == 1  # there as soon as the command returns
    else:
        # the whole file, its temporary gone
        _wait_until(lambda: len(list(cache.glob("*.renders"))) == 1 and not list(cache.glob(".entry-*")),
                    "the cache file")
    warm = _assemble(db, cache, **extra)
    assert (warm.returncode, warm.stdout) == (0, cold.stdout)
    assert sorted(os.listdir(db.parent)) == before

