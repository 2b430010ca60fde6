"""The command line's help formatter finds the width as ``shutil.get_terminal_size`` does, without importing shutil."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys

import pytest

from ctxview.cli import SUBCOMMANDS
from ctxview.cli.common import Parser, _terminal_columns


@pytest.mark.parametrize("columns", [None, "", "0", "-3", "wide", "57", "200"])
def test_the_width_is_the_one_shutil_finds(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _terminal_columns() == shutil.get_terminal_size().columns
    parser = Parser(prog="ctxview demo", description="A description long enough to be wrapped " * 4)
    parser.add_argument("--flag", help="a help text long enough to be wrapped at the width " * 3)
    plain = argparse.ArgumentParser(prog="ctxview demo", description="A description long enough to be wrapped " * 4)
    plain.add_argument("--flag", help="a help text long enough to be wrapped at the width " * 3)
    assert parser.format_help() == plain.format_help()


def test_building_every_command_parser_imports_no_shutil() -> None:
    code = (
        "import sys; from ctxview.cli import SUBCOMMANDS, subcommand_parser, tui_parser\n"
        "for name in SUBCOMMANDS: subcommand_parser(name)\n"
        "tui_parser(); print(sorted({'shutil', 'tempfile'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert "assemble" in SUBCOMMANDS
