"""A session's transcript entries, from a ``.jsonl`` file or the agent database's ``transcript_events``.

Both formats yield the same thing: the header and the entries in file (or
``seq``) order, parsed with JavaScript's ``JSON.parse`` rules so that message
key order survives (the engine compares messages by their JSON).  Bad lines
are skipped as the host skips them and counted in a note; a JSONL transcript
of format version 1 or 2 is migrated as the host migrates it on load.  A
zstd-compressed event body is decoded on demand (the ``zstandard`` module is
imported only then); a body that fails to decode is a note, not an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxview.errors import CtxviewError
from ctxview.files import not_regular_reason, read_regular_bytes
from ctxview.jsjson import try_js_parse
from ctxview.openclaw.agent_db import DEFAULT_TIMEOUT, AgentDatabase, open_agent_database
from ctxview.openclaw.agents import TranscriptRef

# Entry types the host knows (pi's session entries, OpenClaw's leaf controls and resets).
KNOWN_TYPES = frozenset(
    (
        "session",
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
        "leaf",
        "reset",
    )
)
MAX_EVENT_BYTES = 64 * 1024 * 1024  # a decoded event body larger than this is refused (the host writes ≤ 4 MiB)


@dataclass(slots=True)
class Transcript:
    ref: TranscriptRef
    header: dict[str, Any] | None
    entries: list[dict[str, Any]]  # every non-header entry, in file / seq order
    positions: list[int]  # parallel to entries: the line number (JSONL) or the event seq (SQLite)
    notes: list[str] = field(default_factory=list)
    # SQLite era: the event seqs of session_transcript_active_events, when its index is current (else None)
    active_seqs: list[int] | None = None
    cold_archived: bool = False  # a cold-archive row exists: older events may be gone from transcript_events

    @property
    def version(self) -> int:
        """The header's format version (absent means 1)."""
        value = self.header.get("version") if self.header else None
        return value if isinstance(value, int) and not isinstance(value, bool) else 1

    def where(self, index: int) -> str:
        """Where entry ``index`` is, for notes: ``line 12`` or ``seq 12``."""
        unit = "line" if self.ref.kind == "jsonl" else "seq"
        return f"{unit} {self.positions[index]}"


def read_transcript(ref: TranscriptRef, *, timeout: float = DEFAULT_TIMEOUT) -> Transcript:
    """The transcript ``ref`` names; an unreadable one is empty with a note."""
    if ref.kind == "jsonl":
        problem = not_regular_reason(ref.path)
        if problem is not None:
            return Transcript(ref, None, [], [], [f"{ref.path}: {problem}; the transcript is not read"])
        try:
            data = read_regular_bytes(ref.path)
        except OSError as exc:
            return Transcript(ref, None, [], [], [f"{ref.path}: cannot be read ({exc.strerror or exc})"])
        return parse_jsonl_transcript(data.decode("utf-8", "replace"), ref)
    db, problem = open_agent_database(ref.path, timeout=timeout)
    if db is None:
        return Transcript(ref, None, [], [], [f"{problem}; the transcript is not read"])
    with db:
        try:
            return read_sqlite_transcript(db, ref)
        except CtxviewError as exc:
            return Transcript(ref, None, [], [], [str(exc)])


# --- JSONL -------------------------------------------------------------------------------------


def parse_jsonl_transcript(text: str, ref: TranscriptRef) -> Transcript:
    """Entries of a JSONL transcript as the host loads them (bad lines skipped, old versions migrated)."""
    values: list[dict[str, Any]] = []
    positions: list[int] = []
    bad: list[int] = []
    not_objects: list[int] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        ok, value = try_js_parse(line)
        if not ok:
            bad.append(number)
            continue
        if not isinstance(value, dict):
            not_objects.append(number)
            continue
        values.append(value)
        positions.append(number)
    notes: list[str] = []
    if bad:
        last = bad[-1] == _last_non_blank(lines)
        notes.append(
            f"{_count(len(bad), 'line')} not valid JSON, skipped ({_lines_list(bad)})"
            + ("; the last one looks cut off (a write in progress?)" if last else "")
        )
    if not_objects:
        notes.append(f"{_count(len(not_objects), 'line')} not a JSON object, skipped ({_lines_list(not_objects)})")
    if not values:
        return Transcript(ref, None, [], [], [*notes, f"{ref.path}: no entries"])
    first = values[0]
    if first.get("type") != "session" or not isinstance(first.get("id"), str):
        notes.append(
            f"{ref.path}: line {positions[0]} is not a session header; OpenClaw reads this transcript as empty"
        )
        return Transcript(ref, None, [], [], notes)
    header = first
    entries = values[1:]
    positions = positions[1:]
    transcript = Transcript(ref, header, entries, positions, notes)
    _migrate(transcript)
    _note_types(transcript)
    return transcript


def _migrate(transcript: Transcript) -> None:
    """Format 1 → 2 (ids and parent links by position), 2 → 3 (``hookMessage`` role → ``custom``)."""
    version = transcript.version
    entries = transcript.entries
    if version < 2:
        previous: str | None = None
        for number, entry in enumerate(entries, start=1):
            if entry.get("type") == "session":
                continue
            entry["id"] = f"v1-{number}"
            entry["parentId"] = previous
            previous = entry["id"]
        for entry in entries:
            index = entry.get("firstKeptEntryIndex")
            if entry.get("type") == "compaction" and isinstance(index, int) and not isinstance(index, bool):
                # the index counts the header as entry 0
                target = entries[index - 1] if 1 <= index <= len(entries) else None
                if target is not None and target.get("type") != "session":
                    entry["firstKeptEntryId"] = target["id"]
                del entry["firstKeptEntryIndex"]
        transcript.notes.append(
            "a format-1 transcript: entry ids and parent links made up by position, as the host does"
        )
    if version < 3:
        for entry in entries:
            message = entry.get("message")
            if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def _note_types(transcript: Transcript) -> None:
    unknown: dict[str, int] = {}
    for entry in transcript.entries:
        kind = entry.get("type")
        if kind not in KNOWN_TYPES:
            label = kind if isinstance(kind, str) else "(no type)"
            unknown[label] = unknown.get(label, 0) + 1
    if unknown:
        listed = ", ".join(f"{name!r} ×{n}" for name, n in sorted(unknown.items()))
        transcript.notes.append(f"entries of unknown type ({listed}) give no message")


def _last_non_blank(lines: list[str]) -> int:
    for number in range(len(lines), 0, -1):
        if lines[number - 1].strip():
            return number
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _lines_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    more = f" … ({len(numbers)} in all)" if len(numbers) > 5 else ""
    return ("line " if len(numbers) == 1 else "lines ") + shown + more


# --- SQLite ------------------------------------------------------------------------------------


class _Zstd:
    """The zstandard decompressor, imported the first time a compressed body is met."""

    def __init__(self) -> None:
        self._decompressor: Any = None
        self.missing = False

    def decode(self, blob: bytes, size: int | None) -> bytes:
        if self._decompressor is None:
            try:
                import zstandard
            except ImportError as exc:
                self.missing = True
                raise ValueError("the zstandard module is not installed") from exc
            self._decompressor = zstandard.ZstdDecompressor()
        limit = size if isinstance(size, int) and 0 < size <= MAX_EVENT_BYTES else MAX_EVENT_BYTES
        try:
            return bytes(self._decompressor.decompress(blob, max_output_size=limit))
        except Exception as exc:  # zstandard raises its own ZstdError
            raise ValueError(str(exc) or type(exc).__name__) from exc


def decode_event_zstd(blob: bytes, size: int | None) -> str:
    """One ``event_zstd`` body as text (``size`` is ``event_utf8_bytes``); ValueError when it cannot be decoded."""
    data = _Zstd().decode(blob, size)
    if isinstance(size, int) and len(data) != size:
        raise ValueError(f"decoded to {len(data)} bytes, not the {size} event_utf8_bytes says")
    return data.decode("utf-8", "replace")


def read_sqlite_transcript(db: AgentDatabase, ref: TranscriptRef) -> Transcript:
    """The session's events in seq order (header first), with the host's active-branch index when it is current."""
    t = "transcript_events"
    rows = db.query(
        f"SELECT seq, {db.col(t, 'event_json')}, {db.col(t, 'event_zstd')}, {db.col(t, 'event_utf8_bytes')} "
        "FROM transcript_events WHERE session_id = ? ORDER BY seq",
        (ref.session_id,),
    )
    zstd = _Zstd()
    values: list[dict[str, Any]] = []
    positions: list[int] = []
    problems: list[str] = []
    compressed = 0
    for seq, event_json, event_zstd, size in rows:
        text: str | None = None
        if isinstance(event_json, str):
            text = event_json
        elif isinstance(event_zstd, bytes):
            compressed += 1
            try:
                data = zstd.decode(event_zstd, size if isinstance(size, int) else None)
            except ValueError as exc:
                problems.append(f"seq {seq}: its zstd body cannot be decoded ({exc})")
                continue
            if isinstance(size, int) and len(data) != size:
                problems.append(f"seq {seq}: its zstd body decoded to {len(data)} bytes, not {size}")
            text = data.decode("utf-8", "replace")
        else:
            problems.append(f"seq {seq}: neither event_json nor event_zstd holds the event")
            continue
        ok, value = try_js_parse(text)
        if not ok or not isinstance(value, dict):
            problems.append(f"seq {seq}: not a JSON object")
            continue
        values.append(value)
        positions.append(int(seq))
    notes: list[str] = []
    if problems:
        shown = "; ".join(problems[:5]) + (f"; … ({len(problems)} in all)" if len(problems) > 5 else "")
        notes.append(f"{_count(len(problems), 'event')} skipped: {shown}")
    header: dict[str, Any] | None = None
    if values and values[0].get("type") == "session":
        header = values.pop(0)
        positions.pop(0)
    elif rows:
        notes.append("the first event is not a session header")
    if not rows:
        notes.append(f"no events for session {ref.session_id} in {db.path}")
    transcript = Transcript(ref, header, values, positions, notes)
    _note_types(transcript)
    if compressed and not zstd.missing:
        transcript.notes.append(f"{_count(compressed, 'event')} stored zstd-compressed")
    transcript.active_seqs = _active_index(db, ref.session_id, int(rows[-1][0]) if rows else None, transcript.notes)
    if db.has("session_transcript_cold_archives", "session_id"):
        archived = db.query(
            "SELECT 1 FROM session_transcript_cold_archives WHERE session_id = ? LIMIT 1", (ref.session_id,)
        )
        if archived:
            transcript.cold_archived = True
            transcript.notes.append(
                "the session has a cold archive: older events may be gone from transcript_events "
                "(ctxview cannot read it)"
            )
    return transcript


def _active_index(db: AgentDatabase, session_id: str, max_seq: int | None, notes: list[str]) -> list[int] | None:
    """``session_transcript_active_events`` in position order, if its index state says it is current."""
    if not db.has("session_transcript_active_events", "event_seq") or not db.has("session_transcript_index_state"):
        return None
    state = db.query(
        f"SELECT {db.col('session_transcript_index_state', 'indexed_seq')}, "
        f"{db.col('session_transcript_index_state', 'needs_rebuild')} "
        "FROM session_transcript_index_state WHERE session_id = ?",
        (session_id,),
    )
    if not state:
        return None
    indexed_seq, needs_rebuild = state[0]
    if needs_rebuild != 0 or max_seq is None or indexed_seq != max_seq:
        notes.append("the host's active-branch index is not current (it would rebuild it); the branch is worked out")
        return None
    order = "active_position" if db.has("session_transcript_active_events", "active_position") else "event_seq"
    rows = db.query(
        f"SELECT event_seq FROM session_transcript_active_events WHERE session_id = ? ORDER BY {order}", (session_id,)
    )
    return [int(seq) for (seq,) in rows if isinstance(seq, int)]


def transcript_for(path: Path, agent_id: str, session_id: str) -> TranscriptRef:
    """A reference to a JSONL transcript given by path (for ``--live-from-transcript FILE``)."""
    return TranscriptRef("jsonl", agent_id, session_id, path)
