"""Every command under the README's "Using it" runs as written, in order, after the README's install.

Headless commands run for real (in a scratch directory that sees the repository's
``sample_sessions``); the inspector's command lines are parsed and their inputs checked,
since a test has no terminal to open it on.  The one slow command (building a
100,000-message session) is parsed only.  The headless example of the demo's first screen
must print exactly what the README shows.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.cli import SUBCOMMANDS, subcommand_parser, tui_parser
from ctxview.cli.common import resolve_params

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
SLOW = {("sample", "big.db")}  # parsed, not run: a 100,000-message build takes about a minute


def using_it_commands() -> list[list[str]]:
    """The ``ctxview`` lines of the first bash block under "## Using it", comments and ``[…]`` dropped."""
    section = README.split("## Using it", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    commands = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "ctxview":
            commands.append([w for w in words[1:] if not (w.startswith("[") and w.endswith("]"))])
    return commands


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd)}  # no ~/.openclaw of the machine running the tests
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def test_the_block_starts_with_activating_the_venv() -> None:
    section = README.split("## Using it", 1)[1]
    assert section.split("```bash\n", 1)[1].startswith("source .venv/bin/activate")


def test_every_command_under_using_it_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "sample_sessions").symlink_to(REPO / "sample_sessions")
    commands = using_it_commands()
    assert len(commands) >= 10
    for args in commands:
        if args and args[0] in SUBCOMMANDS:
            parsed = subcommand_parser(args[0]).parse_args(args[1:])
            if (args[0], args[1]) in SLOW:
                continue
            out = run(args, tmp_path)
            assert out.returncode == 0, (args, out.stderr)
            assert out.stdout.strip(), args
            assert "Traceback" not in out.stderr, args
            if args[0] == "assemble" and getattr(parsed, "format", None) in ("json", "trace"):
                assert out.stdout.lstrip().startswith("{"), args
            continue
        # the inspector: its flags parse, its database and files exist, its params resolve
        parsed = tui_parser().parse_args(args)
        old = Path.cwd()
        os.chdir(tmp_path)
        try:
            resolve_params(parsed)
            if parsed.db:
                assert Path(parsed.db).is_file(), args
        finally:
            os.chdir(old)


def test_the_headless_example_prints_the_demo_first_screen() -> None:
    section = README.split("## Using it", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```console\n\$ (ctxview [^\n]+)\n(.*?)```", section, re.S)
    assert example is not None
    args = shlex.split(example.group(1))[1:]
    shown = example.group(2)
    out = run(args, REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout == shown


@pytest.mark.parametrize("flag", ["--params", "--live"])
def test_the_headless_example_uses_the_demo_settings(flag: str) -> None:
    """The example's files are the demo's own settings (``DEMO_PARAMS`` and its live window)."""
    from ctxview.livefile import load_live_messages
    from ctxview.params_io import build_params, default_params, read_params_file
    from ctxview.samples import DEMO_PARAMS, demo_live_messages

    if flag == "--params":
        fields, conversation = read_params_file(REPO / "sample_sessions" / "demo-params.json")
        assert conversation is None
        assert build_params(default_params(), fields, from_file=True) == DEMO_PARAMS
    else:
        assert load_live_messages(REPO / "sample_sessions" / "demo-live.json") == demo_live_messages()
