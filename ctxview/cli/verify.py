"""``ctxview verify DB-or-state-dir [--session ID]``: does ctxview's re-assembly match what the agent sent?"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ctxview.cli.common import write_stdout
from ctxview.errors import InputError

DESCRIPTION = (
    "Re-assemble the newest turn OpenClaw recorded (the trajectory record, or the cache trace when it is on) from "
    "its prompt and the host's live window, and compare it with the messages the agent actually sent. Exit status: "
    "0 matches, 1 differs, 2 nothing could be compared (bad input, no record, a truncated record, or one older "
    "than the last compaction)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="DB-or-state-dir",
        nargs="?",
        help="an OpenClaw state directory, or an LCM database (its state directory is found from it); default: "
        "the state directory OpenClaw uses",
    )
    parser.add_argument(
        "--session",
        metavar="ID",
        help="session id, unique id prefix or session key (default: the newest session with a conversation and a "
        "recorded turn)",
    )
    parser.add_argument("--state-dir", metavar="DIR", help="the state directory, when DB is outside it")


def run(args: argparse.Namespace) -> int:
    from ctxview.host_check import check_turn
    from ctxview.openclaw.host import discover, open_session, state_dir_for_database

    env, home = os.environ, Path.home()
    lcm_path: Path | None = None
    state_dir: str | None = args.state_dir
    if args.target is not None:
        target = Path(args.target)
        if target.is_dir():
            if state_dir is not None:
                raise InputError("give the state directory once: as the argument or with --state-dir")
            state_dir = str(target)
        elif target.is_file():
            lcm_path = target
            if state_dir is None:
                state = state_dir_for_database(target, env, home)
                if state is None:
                    raise InputError(f"no OpenClaw state directory holds {target}: give it with --state-dir DIR")
                state_dir = str(state.path)
        else:
            raise InputError(f"{target}: no such file or directory")
    found = discover(env, home, state_dir=state_dir, lcm_path=lcm_path)
    if not found.state.exists:
        raise InputError(found.where_looked())
    if not found.lcm.exists:
        raise InputError(f"no LCM database at {found.lcm.path} ({found.lcm.how})")
    if args.session is not None:
        row, why = found.row_for_session(args.session)
        if row is None:
            raise InputError(why or f"no session {args.session!r}")
        result = check_turn(open_session(found, row))
    else:
        candidates = [r for r in found.scan.rows if r.conversation is not None and r.session.transcript is not None]
        if not candidates:
            raise InputError(f"no session in {found.state.path} has both an LCM conversation and a transcript")
        result = None
        for row in candidates:  # newest first: the first one with a record of a turn
            result = check_turn(open_session(found, row))
            if result.status != "no-record":
                break
        assert result is not None
        row = candidates[0] if result.status == "no-record" else row
    session = row.session
    conv = row.conversation.conversation_id if row.conversation else "—"
    head = f"agents/{session.agent_id} session {session.session_key or session.session_id} → conversation {conv}"
    write_stdout(f"{head}\n{result.report()}\n")
    return result.exit_code
