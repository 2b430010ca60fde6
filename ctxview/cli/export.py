"""``ctxview export DB``: write a conversation's assembled context in one of the export formats.

``assemble --format F -o FILE`` writes exports too: it shares ``add_output_arguments`` and ``run_export``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, assemble_args, write_stdout
from ctxview.export.formats import FORMATS, format_help

if TYPE_CHECKING:
    from ctxview.model import Trace

DESCRIPTION = "Export a conversation's assembled context (to replay it, attach it to a report, diff it)."
EPILOG = DEFAULTS_HELP

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    add_output_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """``ctxview export DB [selection flags] [--format F] [-o FILE] [--force]``."""
    return run_export(args, assemble_args(args, Path(args.db)))


def add_output_arguments(parser: argparse.ArgumentParser, *, with_format: bool = True) -> None:
    """``--format``, ``-o/--output`` and ``--force`` (``with_format=False`` when the parser has its own --format)."""
    if with_format:
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default="native",
            help=f"export format (default native). {format_help()}",
        )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of standard output ('-')"
    )
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")


def run_export(args: argparse.Namespace, trace: Trace) -> int:
    """Render ``trace`` in ``args.format``; write it to ``args.output`` or standard output."""
    from ctxview.export import render, write_export  # the writers load only when an export runs

    text = render(trace, args.format)
    output = getattr(args, "output", None)
    if output and output != "-":
        path = write_export(text, output, force=bool(getattr(args, "force", False)))
        print(
            f"wrote {path} ({args.format}: {len(trace.messages):,} messages, {trace.summary.final_tokens:,} tokens)",
            file=sys.stderr,
        )
        return 0
    write_stdout(text)
    return 0
