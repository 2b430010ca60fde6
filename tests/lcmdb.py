"""A tiny writer of LCM databases for tests.

The schema is the LCM schema as found in the ``sqlite_master`` of a parity
case database (full-text tables left out), shared with the sample builder.  ``LcmDbWriter`` inserts
conversations, messages with their parts, summaries, context items, large
files and focus briefs, with helpers that build parts the way ingest stores
them (spec §2.7), so tests can describe a session in a few lines.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from ctxview.samples.schema import LCM_TABLES

# The LCM DDL (same tables as the parity databases); one definition, shared with the sample builder.
LCM_SCHEMA = ";\n".join(LCM_TABLES) + ";\n"


def js_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_part(text: str, role: str, **meta: Any) -> dict[str, Any]:
    """A string-content part: ``{"originalRole": role}`` metadata (plus extra keys)."""
    return {"part_type": "text", "text_content": text, "metadata": js_json({"originalRole": role, **meta})}


def block_part(block: dict[str, Any], role: str, part_type: str | None = None, **meta: Any) -> dict[str, Any]:
    """An array-content block stored with ``rawType`` and ``raw`` (tool calls get their columns)."""
    btype = block.get("type")
    ptype = part_type or {
        "text": "text",
        "thinking": "reasoning",
        "redacted_thinking": "reasoning",
        "reasoning": "reasoning",
        "toolCall": "tool",
        "tool_use": "tool",
        "toolUse": "tool",
        "tool-use": "tool",
        "functionCall": "tool",
        "function_call": "tool",
        "function_call_output": "tool",
        "tool_result": "tool",
        "toolResult": "tool",
    }.get(str(btype), "agent")
    part: dict[str, Any] = {"part_type": ptype}
    if isinstance(block.get("text"), str):
        part["text_content"] = block["text"]
    elif isinstance(block.get("thinking"), str):
        part["text_content"] = block["thinking"]
    if ptype == "tool":
        cid = block.get("id") or block.get("call_id")
        if isinstance(cid, str):
            part["tool_call_id"] = cid
        if isinstance(block.get("name"), str):
            part["tool_name"] = block["name"]
        for key in ("arguments", "input"):
            if key in block:
                part["tool_input"] = js_json(block[key])
                break
    part["metadata"] = js_json({"originalRole": role, **meta, "rawType": btype, "raw": block})
    return part


class LcmDbWriter:
    """Writes one LCM database; every insert returns the new row's id."""

    def __init__(self, path: str | Path, *, session_id: str = "test-session") -> None:
        self.path = Path(path)
        self.conn = sqlite3.connect(self.path)
        self.conn.executescript(LCM_SCHEMA)
        self.conversation_id = self.conversation(session_id)
        self._seq: dict[int, int] = {}
        self._ordinal: dict[int, int] = {}

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()

    def __enter__(self) -> LcmDbWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def conversation(
        self, session_id: str, *, active: int = 1, title: str | None = None, created_at: str | None = None
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO conversations (session_id, active, title, created_at)"
            " VALUES (?, ?, ?, COALESCE(?, datetime('now')))",
            (session_id, active, title, created_at),
        )
        return int(cur.lastrowid or 0)

    def message(
        self,
        role: str,
        content: str,
        parts: list[dict[str, Any]] | None = None,
        *,
        conversation_id: int | None = None,
        seq: int | None = None,
        token_count: int = 0,
        large_content: str | None = None,
        sender_metadata: str | None = None,
        in_context: bool = True,
        created_at: str = "2026-01-01 00:00:00",
    ) -> int:
        """Insert a message (and its parts); by default also append it to the context."""
        cid = conversation_id or self.conversation_id
        if seq is None:
            seq = self._seq.get(cid, 0)
        self._seq[cid] = max(self._seq.get(cid, 0), seq + 1)
        cur = self.conn.execute(
            "INSERT INTO messages (conversation_id, seq, role, content, token_count, large_content,"
            " openclaw_sender_metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cid, seq, role, content, token_count, large_content, sender_metadata, created_at),
        )
        mid = int(cur.lastrowid or 0)
        for ordinal, part in enumerate(parts or []):
            self.part(mid, ordinal, **part)
        if in_context:
            self.context_message(mid, conversation_id=cid)
        return mid

    def part(
        self,
        message_id: int,
        ordinal: int,
        *,
        part_type: str = "text",
        text_content: str | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        tool_input: str | None = None,
        tool_output: str | None = None,
        metadata: str | None = None,
        part_id: str | None = None,
    ) -> str:
        pid = part_id or f"part-{uuid.uuid4().hex[:12]}"
        self.conn.execute(
            "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content,"
            " tool_call_id, tool_name, tool_input, tool_output, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pid,
                message_id,
                "test-session",
                part_type,
                ordinal,
                text_content,
                tool_call_id,
                tool_name,
                tool_input,
                tool_output,
                metadata,
            ),
        )
        return pid

    # convenience shapes (what ingest stores for common live messages)

    def user(self, text: str, **kw: Any) -> int:
        return self.message("user", text, [text_part(text, "user")], **kw)

    def assistant(self, text: str, **kw: Any) -> int:
        return self.message("assistant", text, [text_part(text, "assistant")], **kw)

    def assistant_blocks(self, blocks: list[dict[str, Any]], content: str = "", **kw: Any) -> int:
        return self.message("assistant", content, [block_part(b, "assistant") for b in blocks], **kw)

    def tool_result(self, call_id: str, text: str, *, name: str = "read", is_error: bool = False, **kw: Any) -> int:
        meta = {"toolCallId": call_id, "toolName": name, "isError": is_error}
        part = block_part({"type": "text", "text": text}, "toolResult", **meta)
        part["tool_call_id"] = call_id
        part["tool_name"] = name
        return self.message("tool", text, [part], **kw)

    def context_message(
        self, message_id: int, *, ordinal: int | None = None, conversation_id: int | None = None
    ) -> int:
        return self._context("message", message_id, None, ordinal, conversation_id)

    def context_summary(
        self, summary_id: str, *, ordinal: int | None = None, conversation_id: int | None = None
    ) -> int:
        return self._context("summary", None, summary_id, ordinal, conversation_id)

    def _context(
        self, kind: str, message_id: int | None, summary_id: str | None, ordinal: int | None, cid: int | None
    ) -> int:
        cid = cid or self.conversation_id
        if ordinal is None:
            ordinal = self._ordinal.get(cid, 0)
        self._ordinal[cid] = max(self._ordinal.get(cid, 0), ordinal + 1)
        self.conn.execute(
            "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id, summary_id)"
            " VALUES (?, ?, ?, ?, ?)",
            (cid, ordinal, kind, message_id, summary_id),
        )
        return ordinal

    def summary(
        self,
        summary_id: str,
        content: str,
        *,
        kind: str = "leaf",
        depth: int = 0,
        descendant_count: int = 0,
        earliest_at: str | None = None,
        latest_at: str | None = None,
        parents: list[str] | None = None,
        source_messages: list[int] | None = None,
        in_context: bool = True,
        conversation_id: int | None = None,
        token_count: int = 0,
        created_at: str | None = None,
    ) -> str:
        cid = conversation_id or self.conversation_id
        self.conn.execute(
            "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, earliest_at,"
            " latest_at, descendant_count, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, datetime('now')))",
            (summary_id, cid, kind, depth, content, token_count, earliest_at, latest_at, descendant_count, created_at),
        )
        for ordinal, parent in enumerate(parents or []):
            self.conn.execute(
                "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)",
                (summary_id, parent, ordinal),
            )
        for ordinal, mid in enumerate(source_messages or []):
            self.conn.execute(
                "INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)",
                (summary_id, mid, ordinal),
            )
        if in_context:
            self.context_summary(summary_id, conversation_id=cid)
        return summary_id

    def maintenance(self, **columns: Any) -> None:
        """The conversation's compaction debt row (``pending=1`` unless given)."""
        values = {"conversation_id": self.conversation_id, "pending": 1, **columns}
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self.conn.execute(
            f"INSERT INTO conversation_compaction_maintenance ({names}) VALUES ({marks})", tuple(values.values())
        )

    def large_file(self, file_id: str, *, byte_size: int | None, summary: str | None = None) -> str:
        self.conn.execute(
            "INSERT INTO large_files (file_id, conversation_id, byte_size, storage_uri, exploration_summary)"
            " VALUES (?, ?, ?, ?, ?)",
            (file_id, self.conversation_id, byte_size, f"file:///tmp/{file_id}", summary),
        )
        return file_id

    def focus_brief(
        self,
        brief_id: str,
        content: str,
        *,
        prompt: str = "focus",
        status: str = "active",
        token_count: int = 0,
        target_tokens: int = 0,
        covered_latest_at: str | None = None,
        covered_message_seq: int | None = None,
        created_at: str = "2026-01-01 00:00:00",
    ) -> str:
        self.conn.execute(
            "INSERT INTO focus_briefs (brief_id, conversation_id, prompt, content, status, token_count,"
            " target_tokens, covered_latest_at, covered_message_seq, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                brief_id,
                self.conversation_id,
                prompt,
                content,
                status,
                token_count,
                target_tokens,
                covered_latest_at,
                covered_message_seq,
                created_at,
            ),
        )
        return brief_id


def load_session(path: str | Path, conversation_id: int | None = None) -> Any:
    """Open ``path`` read-only with ctxview's store and load one session."""
    from ctxview.store import LcmStore

    with LcmStore(path) as store:
        return store.load_session(conversation_id)


def assemble(path: str | Path, **params: Any) -> Any:
    """Run the reference assembler on a written database (assembler defaults: tail 8, prompt-aware on)."""
    from ctxview.assembly.assembler import assemble_context

    session = load_session(path)
    kwargs: dict[str, Any] = {
        "token_budget": 100_000,
        "prompt": None,
        "fresh_tail_count": 8,
        "fresh_tail_max_tokens": None,
        "prompt_aware_eviction": True,
        "stub_large_tool_payloads": False,
        "timezone": "UTC",
    }
    kwargs.update(params)
    return assemble_context(session, **kwargs)
