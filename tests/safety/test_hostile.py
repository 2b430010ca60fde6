"""Every hostile input through every command, every scorer and the inspector: no hang, no crash, no file.

Each kind of ``tests.safety.hostile`` is built in its own folder.  Two child processes
(``hostile_runner``) share the kinds; each runs the CLI commands of its kinds and then
shows each database in one inspector under Pilot.  A watcher gives every run
``RUN_LIMIT`` seconds: a run that does not finish is recorded as hung, the child is
killed and a new one goes on with the runs after it.  For each kind:

- every run finished, exited 0 or 2 (``diff`` also 1: its sides differ), printed no
  traceback, and an error is one ``ctxview: error:`` line;
- the folder is unchanged — the same names, types, sizes and bytes, no ``-wal``, ``-shm``
  or ``-journal`` created — and no private copy outlived the process that made it;
- the inspector stayed up, showed the CLI's error as an error notification, and the
  session's first warnings as notifications.

About two minutes of CPU in all, shared by two children: under two minutes on two quiet cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.safety.hostile import DEMO_ROWS, EVERY_FORMAT, HEAVY, KINDS
from tests.safety.hostile_runner import ASSEMBLE_FORMATS, REFERENCE_RUN, TUI, commands, prepare_out
from tests.safety.support import REPO

RUN_LIMIT = 60.0  # seconds one command (or one inspector visit) may take: each takes 2 at most on a quiet machine
QUERY_DEADLINE = "5"  # no kind needs the guard (test_hostile_store trips it on purpose): only a slow machine
WORKERS = 2
Tree = dict[str, tuple[str, int, str]]
LEFTOVERS: dict[str, list[str]] = {}  # what the children left in a group's temporary folder (none killed)


def tree(folder: Path) -> Tree:
    """Every entry under ``folder`` (symbolic links not followed): kind, size, content hash or link target."""
    entries: Tree = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        name = str(path.relative_to(folder))
        if stat.S_ISLNK(info.st_mode):
            entries[name] = ("symlink", 0, os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            entries[name] = ("file", info.st_size, _digest(path, info))
        else:
            entries[name] = (stat.filemode(info.st_mode)[0], 0, "")
    return entries


def _digest(path: Path, info: os.stat_result) -> str:
    """sha256 of the bytes; of a file over 256 MB (the sparse kind), its first and last MB and its mtime."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if info.st_size > 256 << 20:
            digest.update(handle.read(1 << 20))
            handle.seek(-(1 << 20), os.SEEK_END)
            digest.update(handle.read())
            digest.update(str(info.st_mtime_ns).encode())
        else:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


@dataclass
class KindResult:
    before: Tree = field(default_factory=dict)
    after: Tree = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    build_error: str | None = None


def formats_of(name: str) -> tuple[str, ...]:
    """Every assemble format for a kind of odd rows; one, in turn, for a kind that holds the demo's rows."""
    if name in EVERY_FORMAT:
        return ASSEMBLE_FORMATS
    shared = [fmt for fmt in ASSEMBLE_FORMATS if fmt != "json"]  # json is the reference run of every kind
    others = [kind for kind in KINDS if kind not in EVERY_FORMAT]
    return (shared[others.index(name) % len(shared)],)


def run_group(names: list[str], root: Path, results: dict[str, KindResult]) -> None:
    """Build ``names``' inputs, run all their units in watched children, then look at the folders again."""
    scratch = root / "tmp"
    scratch.mkdir(parents=True)
    units: list[dict[str, Any]] = []
    folders: dict[str, Path] = {}
    for index, name in enumerate(names):
        result = results[name]
        folder, out = root / f"{index:03d}" / "input", root / f"{index:03d}" / "out"
        folder.mkdir(parents=True)
        out.mkdir()
        try:
            db = KINDS[name](folder)
        except Exception as exc:  # a builder that fails is a failed test of that kind, not of all
            result.build_error = f"{type(exc).__name__}: {exc}"
            continue
        prepare_out(out)
        folders[name] = folder
        result.before = tree(folder)
        units += [{"kind": name, "db": str(db), "out": str(out), "run": run}
                  for run in commands(str(db), str(out), formats=formats_of(name), heavy=name in HEAVY)]
    # the scorer columns in the inspector, except for kinds that hold the demo's rows (their content is the demo's)
    units += [{"kind": u["kind"], "db": u["db"], "out": u["out"], "run": TUI, "scorers": u["kind"] not in DEMO_ROWS}
              for u in units
              if u["run"][0] == "conversations" and len(u["run"]) == 2]
    env = {**os.environ, "CTXVIEW_QUERY_DEADLINE": QUERY_DEADLINE, "TMPDIR": str(scratch), "NO_COLOR": "1"}
    done = 0
    attempt = 0
    killed = False
    while done < len(units):
        attempt += 1
        plan, log = root / f"units-{attempt}.json", root / f"results-{attempt}.jsonl"
        plan.write_text(json.dumps(units[done:]))
        log.touch()
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.safety.hostile_runner", str(plan), str(log)],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        records = _watch(child, log)
        killed = killed or child.returncode is None or child.returncode < 0
        finished = [r for r in records if "run" in r]
        for record in finished:
            results[record["kind"]].runs.append(record)
        done += len(finished)
        if done < len(units):
            unit = units[done]
            stderr = child.stderr.read().decode("utf-8", "replace")[-3000:] if child.stderr else ""
            hung = child.returncode is None or child.returncode < 0
            results[unit["kind"]].runs.append(
                {"kind": unit["kind"], "run": unit["run"], "hung": hung, "traceback": None if hung else stderr}
            )
            done += 1
        if child.stderr:
            child.stderr.close()
    for name, folder in folders.items():
        results[name].after = tree(folder)
    if not killed:  # a killed child cannot remove its private copies; its hung run fails on its own
        LEFTOVERS[str(scratch)] = sorted(os.listdir(scratch))


def _watch(child: subprocess.Popen[bytes], log: Path) -> list[dict[str, Any]]:
    """Wait for ``child``; kill it when one run takes longer than ``RUN_LIMIT``.  Returns its records."""
    started = time.monotonic()
    seen = 0
    while child.poll() is None:
        time.sleep(0.1)
        lines = log.read_text().splitlines()
        if len(lines) != seen:
            seen, started = len(lines), time.monotonic()
        elif time.monotonic() - started > RUN_LIMIT:
            child.kill()
            child.wait()
            break
    return [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]


@pytest.fixture(scope="module")
def results(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, KindResult]]:
    root = tmp_path_factory.mktemp("hostile")
    selected = {item.callspec.params["name"] for item in request.session.items
                if item.module is sys.modules[__name__] and hasattr(item, "callspec")}
    names = [name for name in KINDS if name in selected]  # pytest -k picks kinds
    found = {name: KindResult() for name in names}
    groups = [names[i::WORKERS] for i in range(WORKERS)]
    threads = [threading.Thread(target=run_group, args=(group, root / f"group{i}", found))
               for i, group in enumerate(groups)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    yield found


def shown(run: list[str]) -> str:
    return " ".join(run[:1] + [part for part in run[2:] if "/" not in part])


@pytest.mark.parametrize("name", list(KINDS))
def test_every_command_finishes_cleanly_and_writes_nothing(name: str, results: dict[str, KindResult]) -> None:
    result = results[name]
    assert result.build_error is None, result.build_error
    assert result.runs, "nothing ran"
    for run in result.runs:
        what = shown(run["run"])
        assert not run.get("hung"), f"{what}: no answer within {RUN_LIMIT:.0f} s"
        assert run["traceback"] is None, f"{what}:\n{run['traceback']}"
        if run["run"] == TUI:
            continue
        allowed = (0, 1, 2) if run["run"][0] == "diff" else (0, 2)
        assert run["code"] in allowed, f"{what}: exit {run['code']}\n{run['stderr']}"
        assert "Traceback" not in run["stderr"], f"{what}:\n{run['stderr']}"
        if run["code"] == 2:
            lines = run["stderr"].strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("ctxview: error: "), f"{what}:\n{run['stderr']}"
    assert result.after == result.before, "the input folder changed"


@pytest.mark.parametrize("name", list(KINDS))
def test_the_inspector_stays_up_and_says_what_the_cli_says(name: str, results: dict[str, KindResult]) -> None:
    result = results[name]
    assert result.build_error is None, result.build_error
    runs = {shown(run["run"]): run for run in result.runs}
    tui = runs.get("tui")
    assert tui is not None and not tui.get("hung") and tui["traceback"] is None, tui
    assert tui["running"], "the inspector quit"
    cli = runs[shown([part.format(db="") for part in REFERENCE_RUN])]
    messages = [message for _severity, message in tui["notifications"]]
    if cli["code"] == 2:
        error = cli["stderr"].strip().removeprefix("ctxview: error: ")
        errors = [message for severity, message in tui["notifications"] if severity == "error"]
        assert error in errors or any(message.endswith(error) for message in errors), (error, errors)
    else:  # what the store says about the database (not the engine's log lines) is a notification too
        stored = [w for w in cli["warnings"] or [] if not w.startswith("[")]
        for warning in stored[:3]:
            assert warning in messages, (warning, messages)


def test_no_private_copy_outlives_the_process(results: dict[str, KindResult]) -> None:
    assert all(left == [] for left in LEFTOVERS.values()), LEFTOVERS
