"""Every path the CLI reads or writes besides the database: a named pipe or a symbolic-link loop is one line, at once.

Each case runs in a child process with a time limit: a blocked ``open()`` of a pipe nobody
writes to would be a timeout here, not a hang of the suite.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.safety.support import DEMO, REPO

LIMIT = 60  # seconds; each case answers in well under two


def ctxview(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=LIMIT, cwd=REPO
    )


FLAGS = {
    "--live": (["assemble", str(DEMO), "--live", "{path}"], "Live-input file {path} is not a regular file ({kind})."),
    "--params": (["assemble", str(DEMO), "--params", "{path}"], "params file is not a regular file ({kind}): {path}"),
    "--citations": (
        ["assemble", str(DEMO), "--scorer", "roi", "--citations", "{path}"],
        "command line: citation log {path} is {kind}, not a regular file",
    ),
    "database": (["conversations", "{path}"], "{path}: is {kind}, not a regular file"),
    "diff side": (["diff", str(DEMO), "{path}"], "B: {path} is not a regular file ({kind})"),
}


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_a_named_pipe_given_anywhere_is_refused_at_once(flag: str, tmp_path: Path) -> None:
    path = tmp_path / "input.json"
    os.mkfifo(path)
    args, message = FLAGS[flag]
    out = ctxview(*(arg.format(path=path) for arg in args))
    expected = message.format(path=path, kind="a named pipe")
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"ctxview: error: {expected}\n")


@pytest.mark.parametrize("flag", ["--live", "--params", "--citations", "database"])
def test_a_symlink_loop_given_anywhere_is_one_line(flag: str, tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    args, _ = FLAGS[flag]
    out = ctxview(*(arg.format(path=tmp_path / "a") for arg in args))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("ctxview: error: "), out.stderr
    assert str(tmp_path / "a") in out.stderr and "Traceback" not in out.stderr


def test_an_export_onto_a_named_pipe_never_opens_it(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    os.mkfifo(target)
    refused = ctxview("export", str(DEMO), "--format", "markdown", "-o", str(target))
    assert (refused.returncode, refused.stderr) == (2, f"ctxview: error: {target} exists; use --force to overwrite\n")
    assert stat.S_ISFIFO(target.lstat().st_mode)
    replaced = ctxview("export", str(DEMO), "--format", "markdown", "-o", str(target), "--force")
    assert replaced.returncode == 0, replaced.stderr
    assert stat.S_ISREG(target.lstat().st_mode)  # the pipe's name now holds the export: renamed over, never opened
    assert target.read_text(encoding="utf-8").startswith("#")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md"]
