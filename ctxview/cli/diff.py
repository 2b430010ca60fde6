"""``ctxview diff A [B]``: compare two assembled contexts (export files, databases or params files)."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, assemble_args, terminal_width, write_stdout
from ctxview.errors import InputError
from ctxview.files import Wording, read_head, read_text

if TYPE_CHECKING:
    from ctxview.diff import DiffSide
    from ctxview.pipeline import SessionAssembler

DESCRIPTION = (
    "Compare two assembled contexts and print which items changed outcome and the first message where the "
    "assembled lists differ (everything before it is a prefix a prompt cache can reuse). A and B are each an "
    "export file (trace exports also compare item outcomes; native, jsonl, openai and anthropic exports compare "
    "messages only), an LCM database (assembled with the selection flags), or a params.json (assembled on --db "
    "with the selection flags, which override the file). Exit status: 0 identical, 1 different, 2 error."
)
EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="export file, LCM database or params.json")
    parser.add_argument(
        "b",
        metavar="B",
        nargs="?",
        help="export file, LCM database or params.json (default: A again, to compare two --engine lines)",
    )
    parser.add_argument("--db", metavar="DB", help="the database to assemble params.json sides on")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    add_selection_flags(parser, engine_per_side=True)
    sides = parser.add_argument_group(
        "per-side settings",
        "--a-FLAG applies to A only and --b-FLAG to B only, over the shared flags; with them, B defaults to A "
        "(one database, two settings). --a-add-live/--b-add-live add to the shared --add-live inputs.",
    )
    for side in ("a", "b"):
        for flag, metavar in PER_SIDE:
            kwargs: dict[str, Any] = {"metavar": metavar, "dest": f"{side}_{flag.replace('-', '_')}"}
            if flag == "prompt-aware":
                kwargs = {"action": argparse.BooleanOptionalAction, "default": None, "dest": kwargs["dest"]}
            elif flag in ("scorer", "tokenizer", "engine"):
                kwargs["choices"] = {"scorer": ("lcm", "rarity", "roi"), "tokenizer": ("lcm", "unicode"),
                                     "engine": ("0.15", "1.0")}[flag]
                kwargs.pop("metavar")
            elif flag == "add-live":
                kwargs["action"] = "append"
            sides.add_argument(f"--{side}-{flag}", help=argparse.SUPPRESS if side == "b" else f"--{flag} for A only",
                               **kwargs)


# the selection flags a side can override (``--a-scorer rarity --b-scorer lcm``)
PER_SIDE: tuple[tuple[str, str], ...] = (
    ("budget", "N"),
    ("prompt", "TEXT"),
    ("fresh-tail-count", "K"),
    ("fresh-tail-max-tokens", "T"),
    ("prompt-aware", ""),
    ("reserved", "N"),
    ("scorer", ""),
    ("tokenizer", ""),
    ("citations", "FILE"),
    ("stub-threshold", "X"),
    ("engine", ""),
    ("live", "FILE"),
    ("add-live", "KIND:TEXT"),
    ("params", "FILE"),
)


def run(args: argparse.Namespace) -> int:
    from ctxview.diff import diff_sides, diff_to_json, format_diff
    from ctxview.export.jsontext import pretty_js

    sessions: dict[tuple[str, int | None], SessionAssembler] = {}
    engines = list(args.engine or [])
    if len(engines) > 2:
        raise InputError("--engine: give it once (both sides) or twice (A, then B)")
    per_side = _has_per_side(args)
    if args.b is None and len(engines) != 2 and not per_side:
        raise InputError(
            "B is missing: give two inputs, or one database with --engine twice or per-side flags (--a-…/--b-…)"
        )
    first, second = (engines * 2)[:2] if engines else (None, None)
    side_a = _side(_for_side(_with_engine(args, first), "a"), args.a, "A", sessions)
    side_b = _side(_for_side(_with_engine(args, second), "b"), args.b if args.b is not None else args.a, "B", sessions)
    result = diff_sides(side_a, side_b)
    if getattr(args, "json", False):
        write_stdout(pretty_js(diff_to_json(result)) + "\n")
    else:
        write_stdout(format_diff(result, width=terminal_width(120)) + "\n")
    return 0 if result.identical else 1


def _has_per_side(args: argparse.Namespace) -> bool:
    return any(
        getattr(args, f"{side}_{flag.replace('-', '_')}", None) is not None for side in "ab" for flag, _ in PER_SIDE
    )


def _for_side(args: argparse.Namespace, side: str) -> argparse.Namespace:
    """The shared flags with this side's --a-…/--b-… values over them."""
    mine = copy.copy(args)
    notes: list[str] = []
    for flag, _ in PER_SIDE:
        name = flag.replace("-", "_")
        value = getattr(args, f"{side}_{name}", None)
        if value is None:
            continue
        if name == "add_live":
            notes += [f"--add-live {spec}" for spec in value]
            value = [*(args.add_live or []), *value]
        elif isinstance(value, bool):
            notes.append(f"--{'' if value else 'no-'}{flag}")
        else:
            notes.append(f"--{flag} {value}")
        setattr(mine, name, value)
    mine.side_note = " ".join(notes)
    return mine


def _with_engine(args: argparse.Namespace, engine: str | None) -> argparse.Namespace:
    side = copy.copy(args)
    side.engine = engine
    return side


def _side(
    args: argparse.Namespace, spec: str, name: str, sessions: dict[tuple[str, int | None], SessionAssembler]
) -> DiffSide:
    from ctxview.diff import load_export, side_from_trace
    from ctxview.sqlite_readonly import SQLITE_MAGIC

    path = Path(spec)
    wording = Wording(
        name,
        missing="{what}: {path} not found",
        directory="{what}: {path} is a directory",
        not_regular="{what}: {path} is not a regular file ({kind})",
        unreadable="cannot read {path}: {reason}",
    )
    label = spec if args.engine is None else f"{spec} with lossless-claw {args.engine} rules"
    if getattr(args, "side_note", ""):
        label = f"{label} ({args.side_note})"
    if read_head(spec, len(SQLITE_MAGIC), wording) == SQLITE_MAGIC:
        trace = assemble_args(args, path, None, sessions)
        return side_from_trace(trace, label)
    if _is_params_file(spec, wording):
        db = getattr(args, "db", None)
        if not db:
            raise InputError(f"{name}: {spec} is a params file; give the database to assemble it on with --db DB")
        trace = assemble_args(args, Path(db), spec, sessions)
        return side_from_trace(trace, label)
    return load_export(path, label)


def _is_params_file(path: str, wording: Wording) -> bool:
    """A parity params.json: a JSON object with assembly parameters and no messages."""
    from ctxview.jsjson import try_js_parse

    try:
        text = read_text(path, wording)
    except InputError:
        return False
    ok, data = try_js_parse(text)
    if not ok or not isinstance(data, dict) or "messages" in data:
        return False
    return bool(data.keys() & {"tokenBudget", "prompt", "freshTailCount", "liveMessages", "promptAwareEviction"})
