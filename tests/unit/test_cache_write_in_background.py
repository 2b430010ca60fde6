"""Files only a later run reads are written by a process of its own, which the command does not wait for.

A headless command's render cache is written after the command has exited, and a sweep's ``.sweep`` file
after the sweep has returned.  The caller (a shell, ``$(…)``, a pipe) stops waiting when the command ends,
not when the write does: the writer has its own session and its standard streams on the null device.
``CTXVIEW_CACHE_WRITE=wait`` writes the file before going on.  Neither way writes beside the database.
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
from ctxview.assembly.forked_map import run_detached

go, report = Path(sys.argv[1]), Path(sys.argv[2])

def work():
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    streams = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
    report.write_text(f"{os.getsid(0) == os.getpid()} {streams}")

print("started" if run_detached(work) else "not started")
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

    from ctxview.assembly.forked_map import run_detached

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert run_detached(lambda: None) is False
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



# a sweep in a process of its own (no other thread: the file is written by a process of its own), with the
# writing slowed down until the test says so: the sweep has returned and its process exited before the file exists
_SWEEP_THEN_EXIT = """
import sys, time
from pathlib import Path
from ctxview import sweep_cache
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from ctxview.sweep import sweep_session

db, go = Path(sys.argv[1]), Path(sys.argv[2])
write = sweep_cache._write

def when_told(*args):
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return write(*args)

sweep_cache._write = when_told
with LcmStore(db) as store:
    assembler = SessionAssembler(store.load_session())
params = Params(prompt="database migration rollback", prompt_aware_eviction=True)
sweep_session(assembler, params, points=9, runs=4, workers=1)
print("swept")
"""


def test_a_sweep_leaves_its_file_to_a_process_of_its_own_which_the_next_sweep_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview import sweep_cache
    from ctxview.model import Params
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=400)
    cache, go = tmp_path / "cache", tmp_path / "go"
    environment = {**os.environ, "CTXVIEW_CACHE_DIR": str(cache), "CTXVIEW_CACHE_MIN_MESSAGES": "0"}
    for name in ("CTXVIEW_CACHE", "CTXVIEW_CACHE_WRITE"):
        environment.pop(name, None)
    done = subprocess.run([sys.executable, "-c", _SWEEP_THEN_EXIT, str(db), str(go)], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=environment)
    assert (done.returncode, done.stdout) == (0, "swept\n"), done.stderr
    assert not list(cache.glob(f"*{sweep_cache.SUFFIX}"))  # its writer waits for the go-ahead
    go.touch()
    _wait_until(lambda: len(list(cache.glob(f"*{sweep_cache.SUFFIX}"))) == 1 and not list(cache.glob(".entry-*")),
                "the sweep file")
    monkeypatch.setenv("CTXVIEW_CACHE_DIR", str(cache))
    monkeypatch.setenv("CTXVIEW_CACHE_MIN_MESSAGES", "0")
    monkeypatch.delenv("CTXVIEW_CACHE", raising=False)
    with LcmStore(db) as store:
        assembler = SessionAssembler(store.load_session())
    assert sweep_cache.prime(assembler, Params(prompt="database migration rollback", prompt_aware_eviction=True))
