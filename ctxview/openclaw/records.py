"""Records of what a turn actually sent (spec §6): the trajectory's ``context.compiled`` and the cache trace.

A record is a check, not a source: the host redacts secrets and image data
and (newer builds) cuts long strings, long arrays, wide objects and deep
values, or drops a whole oversized event.  ``TurnRecord.losses`` says what a
record lost, so a comparison can say "matches except where the record is
lossy" instead of a false mismatch.  Only the newest turn is loaded; files are
scanned from the end and lines are parsed only when they can be the one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxview.errors import CtxviewError
from ctxview.files import not_regular_reason, read_regular_bytes
from ctxview.jsjson import try_js_parse
from ctxview.openclaw.agent_db import DEFAULT_TIMEOUT, open_agent_database
from ctxview.openclaw.agents import TranscriptRef
from ctxview.openclaw.live_window import js_date_ms, select_branch
from ctxview.openclaw.paths import _normalized, expand_user_path
from ctxview.openclaw.transcript import Transcript

MAX_RECORD_FILE_BYTES = 1024 * 1024 * 1024
_TRUNCATION_REASONS = {
    "trajectory-field-size-limit": "a string longer than 32,768 characters",
    "trajectory-array-size-limit": "an array longer than 64 items",
    "trajectory-object-size-limit": "an object with more than 64 keys",
    "trajectory-depth-limit": "a value nested 6 or more levels deep",
    "trajectory-circular-reference": "a circular reference",
}


@dataclass(slots=True)
class TurnRecord:
    """The newest turn of a session as a record saw it."""

    kind: Literal["trajectory", "cache-trace"]
    source: str  # file and line, or table and seq
    session_id: str | None
    session_key: str | None
    run_id: str | None
    time: str | None  # the record's ``ts`` as written (ISO)
    time_ms: int | None
    prompt: str | None
    system_prompt: str | None
    messages: list[Any] | None  # the compiled (post-assembly) messages; None when the record has none
    message_count: int | None  # how many messages the turn compiled (the original length if the list was cut)
    transcript_leaf_id: str | None  # trajectory: the leaf before this turn's prompt
    live_messages: list[Any] | None = None  # cache trace: the session:limited messages (assemble's input)
    provider: str | None = None
    model_id: str | None = None
    model_api: str | None = None
    tool_names: tuple[str, ...] | None = None  # trajectory: the names in ``data.tools`` (None: no list)
    losses: list[str] = field(default_factory=list)  # what the record lost; empty means complete
    notes: list[str] = field(default_factory=list)

    @property
    def verifiable(self) -> bool:
        """The record holds compiled messages to compare with (possibly lossy ones)."""
        return self.messages is not None


# --- losses -------------------------------------------------------------------------------------------


def is_truncation_marker(value: Any) -> bool:
    """``{truncated: true, reason: …}``: the value the trajectory writes in place of what it cut."""
    return isinstance(value, dict) and value.get("truncated") is True and isinstance(value.get("reason"), str)


def is_redacted_string(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("<redacted")


def describe_losses(messages: list[Any]) -> list[str]:
    """What a recorded message list lost, one clause per kind (counted)."""
    cuts: dict[str, int] = {}
    redacted = 0
    stack: list[Any] = [messages]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if is_truncation_marker(value):
                reason = value["reason"]
                cuts[reason] = cuts.get(reason, 0) + 1
                continue
            for key, item in value.items():
                if key == "_truncated" and is_truncation_marker(item):
                    cuts[item["reason"]] = cuts.get(item["reason"], 0) + 1
                else:
                    stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
        elif is_redacted_string(value):
            redacted += 1
    losses = []
    tail = messages[-1] if messages else None
    if is_truncation_marker(tail) and tail["reason"] == "trajectory-array-size-limit":
        original = tail.get("originalLength")
        losses.append(f"only the first {len(messages) - 1} of {original} messages were recorded")
        cuts["trajectory-array-size-limit"] -= 1
    for reason, count in sorted(cuts.items()):
        if count:
            what = _TRUNCATION_REASONS.get(reason, reason)
            losses.append(f"{count} value{'s' if count != 1 else ''} cut ({what})")
    if redacted:
        losses.append(f"{redacted} value{'s' if redacted != 1 else ''} redacted (image data)")
    return losses


def recorded_count(messages: list[Any]) -> int:
    """How many messages the turn had: the list's length, or the original length a cut list reports."""
    tail = messages[-1] if messages else None
    if is_truncation_marker(tail) and tail.get("reason") == "trajectory-array-size-limit":
        original = tail.get("originalLength")
        if isinstance(original, int) and not isinstance(original, bool):
            return original
    return len(messages)


# --- trajectory ---------------------------------------------------------------------------------------


def trajectory_candidates(transcript_path: Path, session_id: str, env: Mapping[str, str], home: Path) -> list[Path]:
    """Where a JSONL-era session's trajectory may be: the sidecar, the pointer's file, ``$OPENCLAW_TRAJECTORY_DIR``."""
    stem = str(transcript_path)[: -len(".jsonl")] if transcript_path.name.endswith(".jsonl") else str(transcript_path)
    found = [Path(stem + ".trajectory.jsonl")]
    pointer = Path(stem + ".trajectory-path.json")
    if not_regular_reason(pointer) is None:
        try:
            ok, value = try_js_parse(read_regular_bytes(pointer).decode("utf-8", "replace"))
        except OSError:
            ok, value = False, None
        runtime = value.get("runtimeFile") if ok and isinstance(value, dict) else None
        if isinstance(runtime, str) and runtime.strip():
            found.append(Path(runtime.strip()))
    directory = _normalized(env.get("OPENCLAW_TRAJECTORY_DIR"))
    if directory:
        found.append(expand_user_path(directory, home) / f"{safe_file_name(session_id)}.jsonl")
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def safe_file_name(session_id: str) -> str:
    """A session id as a file name (characters other than letters, digits, ``.``, ``_``, ``-`` become ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", session_id) or "session"


def _event_record(event: dict[str, Any], source: str) -> TurnRecord:
    data = event.get("data")
    record = TurnRecord(
        kind="trajectory",
        source=source,
        session_id=_s(event.get("sessionId")),
        session_key=_s(event.get("sessionKey")),
        run_id=_s(event.get("runId")),
        time=_s(event.get("ts")),
        time_ms=js_date_ms(event.get("ts")),
        prompt=None,
        system_prompt=None,
        messages=None,
        message_count=None,
        transcript_leaf_id=None,
        provider=_s(event.get("provider")),
        model_id=_s(event.get("modelId")),
        model_api=_s(event.get("modelApi")),
    )
    if not isinstance(data, dict):
        record.losses.append("the event has no data")
        return record
    if is_truncation_marker(data):
        size = data.get("originalBytes")
        limit = data.get("limitBytes")
        record.losses.append(
            f"the whole event was too large ({_bytes(size)} > {_bytes(limit)}) and its data was dropped"
            if isinstance(size, int) and isinstance(limit, int)
            else f"the event's data was dropped ({data['reason']})"
        )
        return record
    record.prompt = _s(data.get("prompt"), empty=True)
    record.system_prompt = _s(data.get("systemPrompt"), empty=True)
    record.transcript_leaf_id = _s(data.get("transcriptLeafId"))
    tools = data.get("tools")
    if isinstance(tools, list):
        record.tool_names = tuple(t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str))
    messages = data.get("messages")
    if isinstance(messages, list):
        record.messages = messages
        record.message_count = recorded_count(messages)
        record.losses.extend(describe_losses(messages))
    elif is_truncation_marker(messages):
        what = _TRUNCATION_REASONS.get(messages["reason"], messages["reason"])
        record.losses.append(f"the messages were cut ({what})")
    else:
        record.losses.append("the record has no messages (the Codex harness omits them; large events drop them)")
    for key in ("prompt", "systemPrompt"):
        if is_truncation_marker(data.get(key)):
            record.losses.append(f"the {key} was cut")
    return record


def _bytes(value: Any) -> str:
    return f"{value:,} bytes" if isinstance(value, int) else "?"


def _s(value: Any, *, empty: bool = False) -> str | None:
    if isinstance(value, str) and (empty or value):
        return value
    return None


def load_trajectory_jsonl(path: Path, session_id: str | None = None) -> tuple[TurnRecord | None, list[str]]:
    """The last ``context.compiled`` line of a trajectory file (of ``session_id`` when given)."""
    lines, notes = _read_lines(path)
    for number in range(len(lines), 0, -1):
        line = lines[number - 1]
        if "context.compiled" not in line:
            continue
        ok, event = try_js_parse(line)
        if not ok or not isinstance(event, dict):
            notes.append(f"{path} line {number}: not valid JSON (cut off?); skipped")
            continue
        if event.get("type") != "context.compiled":
            continue
        if session_id is not None and event.get("sessionId") not in (None, session_id):
            continue
        return _event_record(event, f"{path} line {number}"), notes
    return None, notes


def load_trajectory_sqlite(
    db_path: Path, session_id: str, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[TurnRecord | None, list[str]]:
    """The highest-seq ``context.compiled`` row of ``trajectory_runtime_events`` for the session."""
    db, problem = open_agent_database(db_path, timeout=timeout)
    if db is None:
        return None, [f"{problem}; the trajectory is not read"]
    with db:
        if not db.has("trajectory_runtime_events", "event_json"):
            return None, []
        notes = list(db.notes)
        offset = 0
        try:
            while True:
                rows = db.query(
                    "SELECT seq, event_json FROM trajectory_runtime_events WHERE session_id = ? "
                    "AND event_json LIKE '%context.compiled%' ORDER BY seq DESC LIMIT 16 OFFSET ?",
                    (session_id, offset),
                )
                if not rows:
                    return None, notes
                for seq, text in rows:
                    ok, event = try_js_parse(text) if isinstance(text, str) else (False, None)
                    if not ok or not isinstance(event, dict):
                        notes.append(f"trajectory_runtime_events seq {seq}: not valid JSON; skipped")
                        continue
                    if event.get("type") == "context.compiled":
                        return _event_record(event, f"{db_path} trajectory_runtime_events seq {seq}"), notes
                offset += len(rows)
        except CtxviewError as exc:
            return None, [*notes, str(exc)]


# --- cache trace ---------------------------------------------------------------------------------------


def cache_trace_path(env: Mapping[str, str], home: Path, state_dir: Path) -> Path:
    """``$OPENCLAW_CACHE_TRACE_FILE``, else ``<state>/logs/cache-trace.jsonl``."""
    override = _normalized(env.get("OPENCLAW_CACHE_TRACE_FILE"))
    return expand_user_path(override, home) if override else state_dir / "logs" / "cache-trace.jsonl"


def load_cache_trace(path: Path, session_id: str) -> tuple[TurnRecord | None, list[str]]:
    """The session's last ``session:limited`` line and the ``prompt:before`` line of the same run."""
    lines, notes = _read_lines(path)
    limited: tuple[int, dict[str, Any]] | None = None
    for number in range(len(lines), 0, -1):
        line = lines[number - 1]
        if session_id not in line or "session:limited" not in line:
            continue
        ok, event = try_js_parse(line)
        if ok and isinstance(event, dict) and event.get("stage") == "session:limited":
            if event.get("sessionId") == session_id:
                limited = (number, event)
                break
    if limited is None:
        return None, notes
    limited_line, limited_event = limited
    run_id = limited_event.get("runId")
    before: tuple[int, dict[str, Any]] | None = None
    for number in range(len(lines), 0, -1):
        line = lines[number - 1]
        if "prompt:before" not in line or not isinstance(run_id, str) or run_id not in line:
            continue
        ok, event = try_js_parse(line)
        if ok and isinstance(event, dict) and event.get("stage") == "prompt:before" and event.get("runId") == run_id:
            before = (number, event)
            break
    source = f"{path} line {limited_line}"
    record = TurnRecord(
        kind="cache-trace",
        source=source,
        session_id=session_id,
        session_key=_s(limited_event.get("sessionKey")),
        run_id=_s(run_id),
        time=_s(limited_event.get("ts")),
        time_ms=js_date_ms(limited_event.get("ts")),
        prompt=None,
        system_prompt=None,
        messages=None,
        message_count=None,
        transcript_leaf_id=None,
        provider=_s(limited_event.get("provider")),
        model_id=_s(limited_event.get("modelId")),
        model_api=_s(limited_event.get("modelApi")),
    )
    live = limited_event.get("messages")
    if isinstance(live, list):
        record.live_messages = live
    else:
        record.losses.append("the session:limited line has no messages (OPENCLAW_CACHE_TRACE_MESSAGES=0?)")
    if before is None:
        record.losses.append(f"no prompt:before line of run {run_id} (the turn may not have reached the model)")
        return record, notes
    before_line, before_event = before
    record.source = f"{path} lines {limited_line} and {before_line}"
    record.time = _s(before_event.get("ts")) or record.time
    record.time_ms = js_date_ms(before_event.get("ts")) if before_event.get("ts") is not None else record.time_ms
    record.prompt = _s(before_event.get("prompt"), empty=True)
    record.system_prompt = _s(before_event.get("system"), empty=True)
    messages = before_event.get("messages")
    count = before_event.get("messageCount")
    if isinstance(messages, list):
        record.messages = messages
        record.message_count = len(messages)
        record.losses.extend(describe_losses(messages))
    else:
        record.losses.append("the prompt:before line has no messages (OPENCLAW_CACHE_TRACE_MESSAGES=0?)")
        if isinstance(count, int) and not isinstance(count, bool):
            record.message_count = count
    return record, notes


def _read_lines(path: Path) -> tuple[list[str], list[str]]:
    if not path.exists() and not path.is_symlink():
        return [], []
    problem = not_regular_reason(path)
    if problem is not None:
        return [], [f"{path}: {problem}; not read"]
    try:
        if path.stat().st_size > MAX_RECORD_FILE_BYTES:
            return [], [f"{path}: larger than 1 GiB; not read"]
        text = read_regular_bytes(path).decode("utf-8", "replace")
    except OSError as exc:
        return [], [f"{path}: cannot be read ({exc.strerror or exc})"]
    return text.split("\n"), []


# --- the newest turn of a session ------------------------------------------------------------------------


@dataclass(slots=True)
class TurnRecords:
    trajectory: TurnRecord | None
    cache_trace: TurnRecord | None
    notes: list[str] = field(default_factory=list)

    @property
    def best(self) -> TurnRecord | None:
        """The newer of the two records that holds messages (the trajectory on a tie: it names the leaf)."""
        usable = [r for r in (self.trajectory, self.cache_trace) if r is not None and r.verifiable]
        if not usable:
            return self.trajectory or self.cache_trace
        return max(usable, key=lambda r: (r.time_ms or 0, r.kind == "trajectory"))


def newest_turn(
    ref: TranscriptRef, state_dir: Path, env: Mapping[str, str], home: Path, *, timeout: float = DEFAULT_TIMEOUT
) -> TurnRecords:
    """Both records of a session's newest turn (each may be None), with notes on what could not be read."""
    notes: list[str] = []
    trajectory: TurnRecord | None = None
    if ref.kind == "sqlite":
        trajectory, found = load_trajectory_sqlite(ref.path, ref.session_id, timeout=timeout)
        notes.extend(found)
    else:
        for candidate in trajectory_candidates(ref.path, ref.session_id, env, home):
            record, found = load_trajectory_jsonl(candidate, ref.session_id)
            notes.extend(found)
            if record is not None and (trajectory is None or (record.time_ms or 0) > (trajectory.time_ms or 0)):
                trajectory = record
    cache, found = load_cache_trace(cache_trace_path(env, home, state_dir), ref.session_id)
    notes.extend(found)
    return TurnRecords(trajectory, cache, notes)


def record_staleness(record: TurnRecord, transcript: Transcript | None) -> list[str]:
    """Why re-assembling this record's turn from today's state may not reproduce it (empty: no reason known).

    A compaction on the transcript's branch after the record's leaf (or after its time)
    rewrote the history the turn saw; a leaf that is no longer in the transcript cannot
    be re-assembled at all.
    """
    reasons: list[str] = []
    if transcript is None:
        return reasons
    indices, _leaf, _notes = select_branch(transcript)
    entries = transcript.entries
    ids = [entries[i].get("id") for i in indices]
    leaf = record.transcript_leaf_id
    if leaf is not None and not any(e.get("id") == leaf for e in entries):
        reasons.append(f"the record's transcript leaf {leaf} is not in the transcript (rewritten or archived)")
        return reasons
    leaf_position = ids.index(leaf) if leaf in ids else None
    if leaf is not None and leaf_position is None:
        reasons.append(f"the record's transcript leaf {leaf} is on another branch than the transcript's current one")
    for position in range(len(indices) - 1, -1, -1):
        entry = entries[indices[position]]
        if entry.get("type") != "compaction":
            continue
        when = js_date_ms(entry.get("timestamp"))
        after_leaf = leaf_position is not None and position > leaf_position
        after_time = (
            leaf_position is None and record.time_ms is not None and when is not None and when > record.time_ms
        )
        if after_leaf or after_time:
            stamp = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else "?"
            reasons.append(
                f"the record is older than the last compaction (entry {entry.get('id')} at {stamp}): "
                "the history it was assembled from has been rewritten"
            )
        break
    return reasons
