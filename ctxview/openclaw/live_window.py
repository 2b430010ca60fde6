"""The host's live window: the ``messages`` OpenClaw passes to the engine's ``assemble`` (spec §4 A and B).

**Branch (A).**  Without leaf rows (every JSONL transcript, and SQLite ones that
never navigated) the branch is pi's: from the leaf — the last entry of any type,
or a given ``transcriptLeafId`` — through ``parentId`` to the root.  With leaf
rows (SQLite era) the entries are scanned in seq order as OpenClaw's tree scan
does: a valid leaf row moves the leaf to its ``targetId`` and the append parent
to ``appendParentId``; ``appendMode:"side"`` entries do not move the leaf;
entries without ``parentId`` chain onto the leaf; a non-side entry whose parent
is the append parent while the leaf differs (or whose parent is unknown) is
re-parented onto the leaf; unknown types move only the append parent; leaf rows
that name unknown ids change nothing.  Leaf rows are never on the branch.

**Messages (B).**  Only the last ``compaction`` on the branch counts: its
``compactionSummary``, the entries before it from ``firstKeptEntryId`` on, then
the entries after it.  ``message`` entries give their message as stored,
``custom_message`` a ``custom`` message, ``branch_summary`` (with a summary) a
``branchSummary`` message; nothing else gives a message.  The current prompt,
the system prompt and tools are not part of it.

Not reproduced: the host's sanitizers that run between this and ``assemble``
(``HOST_SANITIZERS``), the reset-boundary rules of newer builds and the
retention of a compaction that precedes a broken branch (spec §8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ctxview.openclaw.agents import TranscriptRef
from ctxview.openclaw.transcript import Transcript

# What the host does to the branch before assemble() (OpenClaw 2026.4.12 order, then newer additions):
# provider-, model- and config-dependent, so ctxview does not reproduce them.
HOST_SANITIZERS: tuple[str, ...] = (
    "sanitizeSessionHistory: inter-session marks, image resizing, thinking-block dropping, tool-call filtering, "
    "OpenAI reasoning downgrade, tool-call id rewrite, tool-call/result pairing repair, toolResult details "
    "stripped, usage fixes, the provider's replay hook, Google turn order",
    "validateReplayTurns",
    "filterHeartbeatPairs",
    "limitHistoryTurns (the DM history limit)",
    "a second tool-call/result pairing repair (if it leaves nothing, the unsanitized messages are passed)",
    "newer builds: preserveCompactionReplayWindow; runtime-context custom messages, __openclaw private keys and "
    "excludeFromContext messages stripped; pairing repaired again after assemble",
)

CANONICAL_TYPES = frozenset(
    (
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "reset",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    )
)

_UNSET: Any = object()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_DATE_MS = 8_640_000_000_000_000


@dataclass(slots=True)
class LiveWindow:
    """The host's ``messages`` for ``assemble`` and where they came from."""

    messages: list[Any]  # message objects as stored (shared with the transcript: do not mutate)
    entry_ids: list[str | None]  # parallel to messages: the entry each came from (the compaction for its summary)
    branch: list[str]  # entry ids on the branch, root first (leaf rows excluded)
    leaf_id: str | None  # the leaf the branch ends at (None: an empty branch)
    compaction_id: str | None  # the compaction that shaped the window, if any
    ref: TranscriptRef
    requested_leaf: str | None = None  # the transcriptLeafId asked for, if one was
    notes: list[str] = field(default_factory=list)

    def provenance(self, state_dir: Path | None = None) -> str:
        """One line for the UI, e.g. ``live window: 214 entries from agents/main session 3f2c…, transcript``."""
        ref = self.ref
        source = "transcript" if ref.kind == "jsonl" else "SQLite transcript"
        sid = ref.session_id
        short = sid[:4] + "…" if len(sid) > 4 else sid
        count = len(self.messages)
        entries = f"{count} entr{'y' if count == 1 else 'ies'}"
        line = f"live window: {entries} from agents/{ref.agent_id} session {short}, {source}"
        if self.requested_leaf is not None:
            line += f", up to entry {self.requested_leaf}"
        return line


def js_date_ms(value: Any) -> int | None:
    """``new Date(value).getTime()`` for the ISO strings and numbers transcripts hold; None where JS gives NaN."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if value != value or abs(value) > _MAX_DATE_MS:
            return None
        return int(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


@dataclass(slots=True)
class _Node:
    parent: str | None
    index: int
    leaf_control: bool


def _nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _has_leaf_rows(entries: list[dict[str, Any]]) -> bool:
    return any(e.get("type") == "leaf" for e in entries)


def _tree_scan(entries: list[dict[str, Any]], notes: list[str]) -> tuple[dict[str, _Node], str | None]:
    """OpenClaw's tree scan over entries with leaf rows: the nodes (normalized parents) and the final leaf."""
    nodes: dict[str, _Node] = {}
    invalid_controls: set[str] = set()
    leaf: str | None = None
    append_parent: str | None = None
    ignored_controls = 0

    def known(ref: str | None) -> bool:
        return ref is None or (ref in nodes and ref not in invalid_controls)

    for index, entry in enumerate(entries):
        kind = entry.get("type")
        if kind == "session":
            continue
        has_parent = "parentId" in entry
        raw_parent = entry.get("parentId")
        entry_id = _nonempty(entry.get("id"))
        parent_ok = raw_parent is None or _nonempty(raw_parent) is not None
        if kind == "leaf":
            if not has_parent or entry_id is None or not parent_ok:
                ignored_controls += 1
                continue
            target = entry.get("targetId")
            target_ok = target is None or _nonempty(target) is not None
            append = entry.get("appendParentId", target) if "appendParentId" in entry else target
            append_ok = append is None or _nonempty(append) is not None
            mode_ok = "appendMode" not in entry or entry.get("appendMode") == "side"
            if not (target_ok and append_ok and mode_ok):
                ignored_controls += 1
                continue
            if not known(target) or not known(append):
                invalid_controls.add(entry_id)
                nodes[entry_id] = _Node(raw_parent, index, True)
                notes.append(f"a leaf row ({entry_id}) names an unknown entry; it changes nothing")
                continue
            nodes[entry_id] = _Node(target, index, True)
            leaf = target
            append_parent = append
            continue
        canonical = kind in CANONICAL_TYPES
        side = entry.get("appendMode") == "side"
        if has_parent:
            if entry_id is None or not parent_ok:
                continue
            parent: str | None = raw_parent
            moves_leaf = canonical and not side
        elif canonical and entry_id is not None:
            parent = leaf
            moves_leaf = not side
        else:
            continue
        if canonical:
            logical = parent
            if has_parent and not side and parent is not None and parent not in nodes and leaf is not None:
                logical = leaf
            elif has_parent and not side and parent == append_parent and leaf != append_parent:
                logical = leaf
            parent = _through_controls(logical, nodes)
        nodes[entry_id] = _Node(parent, index, False)
        append_parent = entry_id
        if moves_leaf:
            leaf = entry_id
    if ignored_controls:
        notes.append(f"{ignored_controls} malformed leaf row{'s' if ignored_controls != 1 else ''} ignored")
    return nodes, leaf


def _through_controls(parent: str | None, nodes: dict[str, _Node]) -> str | None:
    seen: set[str] = set()
    current = parent
    while current is not None and current not in seen:
        seen.add(current)
        node = nodes.get(current)
        if node is None or not node.leaf_control:
            return current
        current = node.parent
    return current


def _walk(nodes: dict[str, _Node], leaf: str | None, notes: list[str]) -> list[str]:
    """Ids from the root to ``leaf`` (leaf rows skipped); a missing ancestor keeps the reachable suffix."""
    path: list[str] = []
    seen: set[str] = set()
    current = leaf
    while current is not None:
        if current in seen:
            notes.append(f"the parent links loop at entry {current}; the branch is empty")
            return []
        seen.add(current)
        node = nodes.get(current)
        if node is None:
            if path:
                notes.append(f"entry {current}, an ancestor on the branch, is missing; the branch starts after it")
            break
        if not node.leaf_control:
            path.append(current)
        current = node.parent
    path.reverse()
    return path


def select_branch(
    transcript: Transcript, leaf_id: str | Any | None = _UNSET
) -> tuple[list[int], str | None, list[str]]:
    """Indices (into ``transcript.entries``) of the branch root → leaf, the leaf id, and notes."""
    entries = transcript.entries
    notes: list[str] = []
    if _has_leaf_rows(entries):
        nodes, leaf = _tree_scan(entries, notes)
    else:
        nodes = {}
        for index, entry in enumerate(entries):
            entry_id = entry.get("id")
            if isinstance(entry_id, str) and entry_id:
                parent = entry.get("parentId")
                nodes[entry_id] = _Node(parent if isinstance(parent, str) and parent else None, index, False)
        last = entries[-1].get("id") if entries else None
        leaf = last if isinstance(last, str) and last in nodes else None
        if entries and leaf is None:
            notes.append("the last entry has no id; the branch is empty")
    if leaf_id is not _UNSET:
        if leaf_id is None:
            return [], None, notes
        if leaf_id in nodes and not nodes[leaf_id].leaf_control:
            leaf = leaf_id
        else:
            notes.append(f"entry {leaf_id} is not in the transcript; the branch ends at the transcript's leaf instead")
    path = _walk(nodes, leaf, notes)
    return [nodes[i].index for i in path], leaf, notes


def build_live_window(transcript: Transcript, leaf_id: str | Any | None = _UNSET) -> LiveWindow:
    """The ``messages`` the host passes to ``assemble`` for ``transcript``, ending at ``leaf_id`` when given.

    ``leaf_id`` is a record's ``transcriptLeafId`` (the leaf before that turn's prompt);
    ``None`` means an explicitly empty branch; leave it out for the transcript's own leaf.
    """
    indices, leaf, notes = select_branch(transcript, leaf_id)
    entries = transcript.entries
    path = [entries[i] for i in indices]
    messages, entry_ids, compaction_id, context_notes = session_context(path)
    window = LiveWindow(
        messages=messages,
        entry_ids=entry_ids,
        branch=[str(e.get("id")) for e in path],
        leaf_id=leaf if indices else None,
        compaction_id=compaction_id,
        ref=transcript.ref,
        requested_leaf=leaf_id if leaf_id is not _UNSET else None,
        notes=[*transcript.notes, *notes, *context_notes],
    )
    if transcript.active_seqs is not None and leaf_id is _UNSET:
        on_branch = [transcript.positions[i] for i in indices]
        if set(on_branch) != set(transcript.active_seqs):
            window.notes.append(
                f"the host's active-branch index lists {len(transcript.active_seqs)} events, the branch worked out "
                f"here {len(on_branch)}; the worked-out branch is used"
            )
    return window


def session_context(path: list[dict[str, Any]]) -> tuple[list[Any], list[str | None], str | None, list[str]]:
    """pi's ``buildSessionContext`` over a branch: (messages, entry id per message, compaction id, notes)."""
    compaction_at = -1
    for position, entry in enumerate(path):
        if entry.get("type") == "compaction":
            compaction_at = position
    messages: list[Any] = []
    ids: list[str | None] = []
    notes: list[str] = []
    skipped = 0

    def emit(entry: dict[str, Any]) -> None:
        nonlocal skipped
        message = _message_of(entry)
        if message is _SKIP:
            skipped += 1
        elif message is not None:
            messages.append(message)
            ids.append(entry.get("id") if isinstance(entry.get("id"), str) else None)

    compaction_id: str | None = None
    if compaction_at >= 0:
        compaction = path[compaction_at]
        compaction_id = compaction.get("id") if isinstance(compaction.get("id"), str) else None
        summary: dict[str, Any] = {"role": "compactionSummary"}
        _copy_present(compaction, summary, ("summary", "tokensBefore"))
        summary["timestamp"] = js_date_ms(compaction.get("timestamp"))
        messages.append(summary)
        ids.append(compaction_id)
        first_kept = compaction.get("firstKeptEntryId")
        found = False
        for entry in path[:compaction_at]:
            if entry.get("id") == first_kept:
                found = True
            if found:
                emit(entry)
        if not found:
            notes.append(
                f"the compaction's firstKeptEntryId {first_kept!r} is not on the branch; nothing before it is kept"
            )
        for entry in path[compaction_at + 1 :]:
            emit(entry)
    else:
        for entry in path:
            emit(entry)
    if skipped:
        notes.append(f"{skipped} message entr{'y' if skipped == 1 else 'ies'} without a message object skipped")
    return messages, ids, compaction_id, notes


_SKIP: Any = object()


def _message_of(entry: dict[str, Any]) -> Any:
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        return message if isinstance(message, dict) else _SKIP
    if kind == "custom_message":
        custom: dict[str, Any] = {"role": "custom"}
        _copy_present(entry, custom, ("customType", "content", "display", "details"))
        custom["timestamp"] = js_date_ms(entry.get("timestamp"))
        return custom
    if kind == "branch_summary" and entry.get("summary"):
        branch: dict[str, Any] = {"role": "branchSummary", "summary": entry["summary"]}
        _copy_present(entry, branch, ("fromId",))
        branch["timestamp"] = js_date_ms(entry.get("timestamp"))
        return branch
    return None


def _copy_present(source: dict[str, Any], target: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Copy the keys ``source`` has (JSON.stringify drops a property that is undefined)."""
    for key in keys:
        if key in source:
            target[key] = source[key]
