"""``ctxview diagnose DB``: the engine's overflow diagnostics (§8) as a table, or as the trace's JSON object."""

from __future__ import annotations

import argparse

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, assemble_args, terminal_width, write_stdout

DESCRIPTION = (
    "Why the prompt is big: the engine's own overflow diagnostics for a run (raw versus summary tokens, the top "
    "message and summary contributors and what happened to each, duplicate-reference and duplicate-text "
    "clusters). --json prints the object the trace carries (stages.assembler.debug.overflowDiagnostics)."
)
EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument("--json", action="store_true", help="print the diagnostics object as JSON")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxview.report import dumps
    from ctxview.whatif.diagnose import diagnostics_of, diagnostics_report

    trace = assemble_args(args, Path(args.db))
    if args.json:
        write_stdout(dumps(diagnostics_of(trace)) + "\n")
    else:
        write_stdout(diagnostics_report(trace, width=terminal_width(160)) + "\n")
    return 0
