"""The ``export`` and ``diff`` subcommands (and ``assemble --format F -o FILE``).

``cli.py`` builds the parsers and the trace; these functions add the export
and diff arguments and do the work, so the command line, the TUI and the
tests share one implementation.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from pathlib import Path
from typing import Any

from ctxview.errors import InputError
from ctxview.export_formats import FORMAT_DESCRIPTIONS, FORMATS
from ctxview.model import Trace

EXPORT_FORMAT_HELP = "; ".join(f"{fmt}: {text}" for fmt, text in FORMAT_DESCRIPTIONS.items())

DIFF_DESCRIPTION = (
    "Compare two assembled contexts and print which items changed outcome and the first message where the "
    "assembled lists differ (everything before it is a prefix a prompt cache can reuse). A and B are each an "
    "export file (trace exports also compare item outcomes; native, jsonl, openai and anthropic exports compare "
    "messages only), an LCM database (assembled with the selection flags), or a params.json (assembled on --db "
    "with the selection flags, which override the file). Exit status: 0 identical, 1 different, 2 error."
)


def add_export_arguments(parser: argparse.ArgumentParser, *, with_format: bool = True) -> None:
    """``--format``, ``-o/--output`` and ``--force`` (``with_format=False`` when the parser has its own --format)."""
    if with_format:
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default="native",
            help=f"export format (default native). {EXPORT_FORMAT_HELP}",
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


def cmd_export(args: argparse.Namespace) -> int:
    """``ctxview export DB [selection flags] [--format F] [-o FILE] [--force]``."""
    trace = _assemble(args, Path(args.db), None, {})
    return run_export(args, trace)


def write_stdout(text: str) -> None:
    """Write text as UTF-8 even where the console encoding is narrower; lone surrogates are escaped."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "backslashreplace"))
    buffer.flush()


# --- diff ----------------------------------------------------------------------------------


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    """Positional A and B, ``--db`` and ``--json`` (the selection flags come from cli.py)."""
    parser.add_argument("a", metavar="A", help="export file, LCM database or params.json")
    parser.add_argument(
        "b",
        metavar="B",
        nargs="?",
        help="export file, LCM database or params.json (default: A again, to compare two --engine lines)",
    )
    parser.add_argument("--db", metavar="DB", help="the database to assemble params.json sides on")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")


def run_diff(args: argparse.Namespace) -> int:
    from ctxview.diff import diff_sides, diff_to_json, format_diff
    from ctxview.export import pretty_js

    sessions: dict[tuple[str, int | None], Any] = {}
    engines = list(args.engine or [])
    if len(engines) > 2:
        raise InputError("--engine: give it once (both sides) or twice (A, then B)")
    if args.b is None and len(engines) != 2:
        raise InputError("B is missing: give two inputs, or one database and --engine twice to compare the lines")
    first, second = (engines * 2)[:2] if engines else (None, None)
    side_a = _side(_with_engine(args, first), args.a, "A", sessions)
    side_b = _side(_with_engine(args, second), args.b if args.b is not None else args.a, "B", sessions)
    result = diff_sides(side_a, side_b)
    if getattr(args, "json", False):
        write_stdout(pretty_js(diff_to_json(result)) + "\n")
    else:
        write_stdout(format_diff(result, width=_terminal_width()) + "\n")
    return 0 if result.identical else 1


def _with_engine(args: argparse.Namespace, engine: str | None) -> argparse.Namespace:
    side = copy.copy(args)
    side.engine = engine
    return side


def _side(args: argparse.Namespace, spec: str, name: str, sessions: dict[tuple[str, int | None], Any]) -> Any:
    from ctxview.diff import load_export, side_from_trace

    path = Path(spec)
    if not path.exists():
        raise InputError(f"{name}: {spec} not found")
    if path.is_dir():
        raise InputError(f"{name}: {spec} is a directory")
    label = spec if args.engine is None else f"{spec} with lossless-claw {args.engine} rules"
    if _is_sqlite(path):
        trace = _assemble(args, path, None, sessions)
        return side_from_trace(trace, label)
    if _is_params_file(path):
        db = getattr(args, "db", None)
        if not db:
            raise InputError(f"{name}: {spec} is a params file; give the database to assemble it on with --db DB")
        trace = _assemble(args, Path(db), spec, sessions)
        return side_from_trace(trace, label)
    return load_export(path, label)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _is_params_file(path: Path) -> bool:
    """A parity params.json: a JSON object with assembly parameters and no messages."""
    from ctxview.jsjson import try_js_parse

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    ok, data = try_js_parse(text)
    if not ok or not isinstance(data, dict) or "messages" in data:
        return False
    return bool(data.keys() & {"tokenBudget", "prompt", "freshTailCount", "liveMessages", "promptAwareEviction"})


def _assemble(
    args: argparse.Namespace, db: Path, params_file: str | None, sessions: dict[tuple[str, int | None], Any]
) -> Trace:
    """Run the assembly for one side; a database is read once even when both sides use it."""
    from ctxview.cli import print_notes, resolve_params
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    side_args = copy.copy(args)
    if params_file is not None:
        side_args.params = params_file
    params, conversation = resolve_params(side_args)
    key = (os.path.realpath(db), conversation)  # realpath: a symlink loop is the store's to report
    assembler = sessions.get(key)
    if assembler is None:
        with LcmStore(db) as store:
            assembler = SessionAssembler(store.load_session(conversation))
        print_notes(assembler.session.warnings)
        sessions[key] = assembler
    return assembler.run(params)


def _terminal_width() -> int:
    import os

    try:
        return max(80, os.get_terminal_size().columns)
    except OSError:
        return 120
