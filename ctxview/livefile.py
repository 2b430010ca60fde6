"""Load the host's live message window from a file, for ``--live``.

Two formats: a JSON array of message objects (the ``liveMessages`` shape of
the parity cases), or an OpenClaw session transcript (``.jsonl``: one JSON
entry per line, where message entries are ``{"type": "message", "message":
{...}}`` or bare message objects).  Key order inside messages is kept, because
the engine compares live and stored messages by their serialized JSON.

A JSON array is taken whole, as the engine would take it: entries that are not
message objects (null, strings, objects without a role) go to the engine step
unchanged, and a note names them.  A file that is not such an array, and a
transcript line that cannot be read, are one-line errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxview.errors import InputError
from ctxview.files import Wording, read_text
from ctxview.jsjson import js_parse, js_trim
from ctxview.params_io import describe, odd_live_entry_notes

_JSONL_SUFFIXES = (".jsonl", ".ndjson")

LIVE_FILE = Wording(
    "live-input file",
    missing="Live-input file {path} does not exist.",
    directory="Live-input path {path} is a directory, not a file.",
    not_regular="Live-input file {path} is not a regular file ({kind}).",
    not_text="Live-input file {path} is not UTF-8 text.",
    unreadable="Cannot read live-input file {path}: {reason}.",
)


def load_live_messages(path: str | Path, notes: list[str] | None = None) -> list[Any]:
    """Read live messages from a JSON array file or a ``.jsonl`` session transcript.

    Notes about entries that are not messages go to ``notes`` (when given) as ``"<file>: …"``.
    """
    file = Path(path)
    text = read_text(file, LIVE_FILE)
    if file.suffix.lower() in _JSONL_SUFFIXES:
        return parse_transcript(text, str(file))
    try:
        value = js_parse(text)
    except (ValueError, RecursionError):
        if _looks_like_jsonl(text):
            return parse_transcript(text, str(file))
        raise InputError(
            f"Live-input file {file} is not valid JSON (expected an array of messages or a .jsonl transcript)."
        ) from None
    return parse_message_array(value, str(file), notes)


def parse_message_array(value: Any, source: str = "live input", notes: list[str] | None = None) -> list[Any]:
    """A parsed JSON array, every entry kept; notes name the entries that are not message objects."""
    if not isinstance(value, list):
        raise InputError(f"{source} must hold a JSON array of message objects, not {describe(value)}.")
    if notes is not None:
        notes.extend(f"{source}: {note}" for note in odd_live_entry_notes(value, "element {index}", "elements"))
    return list(value)


def parse_transcript(text: str, source: str = "transcript") -> list[dict[str, Any]]:
    """Messages of an OpenClaw session transcript, in file order; other entry types are skipped."""
    messages: list[dict[str, Any]] = []
    for number, line in enumerate(_lines(text), start=1):
        if js_trim(line) == "":
            continue
        try:
            entry = js_parse(line)
        except (ValueError, RecursionError):
            raise InputError(f"{source}: line {number} is not valid JSON.") from None
        if not isinstance(entry, dict):
            raise InputError(f"{source}: line {number} is {describe(entry)}, not a JSON object.")
        if entry.get("type") == "message" and "message" in entry:
            message = entry["message"]
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise InputError(f"{source}: line {number} is a message entry without a message object with a role.")
            messages.append(message)
        elif isinstance(entry.get("role"), str):
            messages.append(entry)
    return messages


def _lines(text: str) -> list[str]:
    """Split on LF only (JSON strings may hold U+2028 and other characters ``splitlines`` breaks on)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _looks_like_jsonl(text: str) -> bool:
    lines = [line for line in _lines(text) if js_trim(line)]
    if len(lines) < 2:
        return False
    try:
        first = js_parse(lines[0])
    except (ValueError, RecursionError):
        return False
    return isinstance(first, dict)
