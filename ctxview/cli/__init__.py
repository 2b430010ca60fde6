"""Command line: ``ctxview [DB]`` opens the inspector; subcommands run headless.

Each subcommand is a module of this package with ``DESCRIPTION``, an optional
``EPILOG``, ``add_arguments(parser)`` and ``run(args) -> int``; ``SUBCOMMANDS``
names them, and only the one asked for is imported.  Headless commands never
import Textual, so they start fast; every error a user can cause is one line
on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from ctxview import dataclass_code

# before any module of ours defines a dataclass: their methods compile once, not on every start; the command's
# process only (a program importing ctxview as a library keeps its ``dataclasses`` as it was)
dataclass_code.install()

from ctxview.cli.common import DEFAULTS_HELP, Parser  # noqa: E402
from ctxview.errors import CtxviewError  # noqa: E402
from ctxview.gc_pause import gc_paused  # noqa: E402

# subcommand -> its module, in the order the inspector's --help lists them
SUBCOMMANDS: dict[str, str] = {
    "conversations": "ctxview.cli.conversations",
    "assemble": "ctxview.cli.assemble",
    "export": "ctxview.cli.export",
    "diff": "ctxview.cli.diff",
    "sweep": "ctxview.cli.sweep",
    "verify": "ctxview.cli.verify",
    "diagnose": "ctxview.cli.diagnose",
    "check": "ctxview.cli.check",
    "summaries": "ctxview.cli.summaries",
    "sample": "ctxview.cli.sample",
}


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of ``ctxview NAME``, built from its module."""
    command = _command(name)
    parser = Parser(prog=f"ctxview {name}", description=command.DESCRIPTION, epilog=getattr(command, "EPILOG", None))
    command.add_arguments(parser)
    return parser


def tui_parser() -> argparse.ArgumentParser:
    """The parser of ``ctxview [DB]``, the inspector."""
    from ctxview.cli import tui

    parser = Parser(
        prog="ctxview",
        description=tui.DESCRIPTION.format(subcommands=", ".join(SUBCOMMANDS)),
        epilog=DEFAULTS_HELP,
    )
    tui.add_arguments(parser)
    return parser


def _command(name: str) -> ModuleType:
    return importlib.import_module(SUBCOMMANDS[name])


def _save_renders(*, after_exit: bool = False) -> None:
    """Once the output is out: keep the messages this run rendered for the next run (ctxview.render_cache).

    ``after_exit`` (the program itself, about to exit): by a forked process that goes on after this one
    ends, so the caller gets its prompt (or the end of the output it reads) without waiting for the write
    (~1.3 s at 100,000 messages), unless ``CTXVIEW_CACHE_WRITE=wait`` or a fork is unsafe.
    """
    pipeline = sys.modules.get("ctxview.pipeline")  # a command that assembled nothing never imports it
    if pipeline is None:
        return
    for stream in (sys.stdout, sys.stderr):  # (before a fork too: the child never writes them)
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if after_exit and pipeline.has_pending_renders():
        from ctxview import render_cache
        from ctxview.assembly.forked_map import run_detached

        if render_cache.write_in_background() and run_detached(pipeline.save_pending_renders):
            return
    pipeline.save_pending_renders()


def _exit_now(status: int) -> None:
    """End the process without freeing its heap object by object (a 100,000-item run: ~0.4 s of millions of frees).

    The output is flushed and the exit handlers run (private database copies are removed) first;
    if the output cannot be flushed (a closed pipe), the normal exit reports it.
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in SUBCOMMANDS:
            name = arguments[0]
            args = subcommand_parser(name).parse_args(arguments[1:])
            # A one-shot run builds millions of acyclic objects (rows, rendered messages, decisions) and exits;
            # each full collection would walk them all again (a third of a 100,000-item export's time).
            with gc_paused():
                status = _command(name).run(args)
            _save_renders(after_exit=argv is None)
            if argv is None:  # the program itself, not a caller in this process
                _exit_now(status)
            return status
        from ctxview.cli import tui

        return tui.run(tui_parser().parse_args(arguments))
    except CtxviewError as exc:
        print(f"ctxview: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # output piped into `head` and closed early: not an error worth a traceback
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
