"""The assembler, store and headless commands must not import Textual (keeps the CLI fast)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS_MODULES = [
    "ctxview.model",
    "ctxview.store",
    "ctxview.assembly.assembler",
    "ctxview.assembly.engine",
    "ctxview.pipeline",
    "ctxview.report",
    "ctxview.export",
    "ctxview.export.formats",
    "ctxview.export.native",
    "ctxview.export.turns",
    "ctxview.export.openai",
    "ctxview.export.anthropic",
    "ctxview.export.markdown",
    "ctxview.export.trace",
    "ctxview.export.write",
    "ctxview.cli",
    "ctxview.cli.common",
    "ctxview.cli.conversations",
    "ctxview.cli.assemble",
    "ctxview.cli.export",
    "ctxview.cli.diff",
    "ctxview.cli.sweep",
    "ctxview.cli.sample",
    "ctxview.cli.tui",
    "ctxview.samples",
]


@pytest.mark.parametrize("module", HEADLESS_MODULES)
def test_headless_module_does_not_import_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
