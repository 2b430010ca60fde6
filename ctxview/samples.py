"""Deterministic builders for sample LCM session databases.

ctxview needs sessions people can open without a real agent: a small,
hand-written ``demo`` (one debugging conversation with every kind of item
the assembler treats differently), and generated ``medium`` / ``large``
sessions for scale.  Every message is stored the way the engine's ingest
stores it (spec §2.7, Appendix A.2-A.4), with fixed ids and timestamps, so
two builds of the same kind and seed are byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.jsjson import is_blank, js_stringify, js_trim, try_js_parse

__all__ = [
    "SAMPLE_KINDS",
    "SampleInfo",
    "build_sample",
    "demo_live_messages",
    "ensure_demo_db",
    "write_demo_live_json",
]

SAMPLE_KINDS: tuple[str, ...] = ("demo", "medium", "large")
DEFAULT_MEDIUM_MESSAGES = 2_400
DEFAULT_LARGE_MESSAGES = 100_000
# Bumped whenever the demo content changes, so a cached copy is rebuilt.
DEMO_FORMAT_VERSION = 1

# --- the LCM schema (DDL as the reference engine creates it) -------------------------

_LCM_TABLES: tuple[str, ...] = (
    """CREATE TABLE conversations (
      conversation_id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      session_key TEXT,
      active INTEGER NOT NULL DEFAULT 1,
      archived_at TEXT,
      archive_cause TEXT,
      title TEXT,
      bootstrapped_at TEXT,
      created_at TEXT NOT NULL DEFAULT (datetime('now')),
      updated_at TEXT NOT NULL DEFAULT (datetime('now'))
    )""",
    """CREATE TABLE messages (
      message_id INTEGER PRIMARY KEY AUTOINCREMENT,
      conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
      content TEXT NOT NULL,
      token_count INTEGER NOT NULL,
      identity_hash TEXT,
      openclaw_sender_metadata TEXT,
      transcript_entry_id TEXT,
      created_at TEXT NOT NULL DEFAULT (datetime('now')), large_content TEXT, stable_event_key TEXT,
      UNIQUE (conversation_id, seq)
    )""",
    """CREATE TABLE summaries (
      summary_id TEXT PRIMARY KEY,
      conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      kind TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
      depth INTEGER NOT NULL DEFAULT 0,
      content TEXT NOT NULL,
      token_count INTEGER NOT NULL,
      earliest_at TEXT,
      latest_at TEXT,
      descendant_count INTEGER NOT NULL DEFAULT 0,
      descendant_token_count INTEGER NOT NULL DEFAULT 0,
      source_message_token_count INTEGER NOT NULL DEFAULT 0,
      created_at TEXT NOT NULL DEFAULT (datetime('now')),
      file_ids TEXT NOT NULL DEFAULT '[]'
    , model TEXT NOT NULL DEFAULT 'unknown')""",
    """CREATE TABLE message_parts (
      part_id TEXT PRIMARY KEY,
      message_id INTEGER NOT NULL REFERENCES messages(message_id) ON DELETE CASCADE,
      session_id TEXT NOT NULL,
      part_type TEXT NOT NULL CHECK (part_type IN (
        'text', 'reasoning', 'tool', 'patch', 'file',
        'subtask', 'compaction', 'step_start', 'step_finish',
        'snapshot', 'agent', 'retry'
      )),
      ordinal INTEGER NOT NULL,
      text_content TEXT,
      is_ignored INTEGER,
      is_synthetic INTEGER,
      tool_call_id TEXT,
      tool_name TEXT,
      tool_status TEXT,
      tool_input TEXT,
      tool_output TEXT,
      tool_error TEXT,
      tool_title TEXT,
      patch_hash TEXT,
      patch_files TEXT,
      file_mime TEXT,
      file_name TEXT,
      file_url TEXT,
      subtask_prompt TEXT,
      subtask_desc TEXT,
      subtask_agent TEXT,
      step_reason TEXT,
      step_cost REAL,
      step_tokens_in INTEGER,
      step_tokens_out INTEGER,
      snapshot_hash TEXT,
      compaction_auto INTEGER,
      metadata TEXT,
      UNIQUE (message_id, ordinal)
    )""",
    """CREATE TABLE summary_messages (
      summary_id TEXT NOT NULL REFERENCES summaries(summary_id) ON DELETE CASCADE,
      message_id INTEGER NOT NULL REFERENCES messages(message_id) ON DELETE RESTRICT,
      ordinal INTEGER NOT NULL,
      PRIMARY KEY (summary_id, message_id)
    )""",
    """CREATE TABLE summary_parents (
      summary_id TEXT NOT NULL REFERENCES summaries(summary_id) ON DELETE CASCADE,
      parent_summary_id TEXT NOT NULL REFERENCES summaries(summary_id) ON DELETE RESTRICT,
      ordinal INTEGER NOT NULL,
      PRIMARY KEY (summary_id, parent_summary_id)
    )""",
    """CREATE TABLE context_items (
      conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      ordinal INTEGER NOT NULL,
      item_type TEXT NOT NULL CHECK (item_type IN ('message', 'summary')),
      message_id INTEGER REFERENCES messages(message_id) ON DELETE RESTRICT,
      summary_id TEXT REFERENCES summaries(summary_id) ON DELETE RESTRICT,
      created_at TEXT NOT NULL DEFAULT (datetime('now')),
      PRIMARY KEY (conversation_id, ordinal),
      CHECK (
        (item_type = 'message' AND message_id IS NOT NULL AND summary_id IS NULL) OR
        (item_type = 'summary' AND summary_id IS NOT NULL AND message_id IS NULL)
      )
    )""",
    """CREATE TABLE large_files (
      file_id TEXT PRIMARY KEY,
      conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      file_name TEXT,
      mime_type TEXT,
      byte_size INTEGER,
      line_count INTEGER,
      storage_uri TEXT NOT NULL,
      exploration_summary TEXT,
      created_at TEXT NOT NULL DEFAULT (datetime('now'))
    )""",
    """CREATE TABLE conversation_bootstrap_state (
      conversation_id INTEGER PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      session_file_path TEXT NOT NULL,
      last_seen_size INTEGER NOT NULL,
      last_seen_mtime_ms INTEGER NOT NULL,
      last_processed_offset INTEGER NOT NULL,
      last_processed_entry_hash TEXT,
      session_header_id TEXT,
      last_processed_entry_id TEXT,
      fork_bounded INTEGER NOT NULL DEFAULT 0,
      fork_source_message_count INTEGER NOT NULL DEFAULT 0,
      soft_reset_pruned_at TEXT,
      updated_at TEXT NOT NULL DEFAULT (datetime('now'))
    )""",
    """CREATE TABLE conversation_compaction_telemetry (
      conversation_id INTEGER PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      last_observed_cache_read INTEGER,
      last_observed_cache_write INTEGER,
      last_observed_prompt_token_count INTEGER,
      last_observed_cache_hit_at TEXT,
      last_observed_cache_break_at TEXT,
      cache_state TEXT NOT NULL DEFAULT 'unknown'
        CHECK (cache_state IN ('hot', 'cold', 'unknown')),
      consecutive_cold_observations INTEGER NOT NULL DEFAULT 0,
      retention TEXT,
      last_leaf_compaction_at TEXT,
      turns_since_leaf_compaction INTEGER NOT NULL DEFAULT 0,
      tokens_accumulated_since_leaf_compaction INTEGER NOT NULL DEFAULT 0,
      last_activity_band TEXT NOT NULL DEFAULT 'low'
        CHECK (last_activity_band IN ('low', 'medium', 'high')),
      last_api_call_at TEXT,
      last_cache_touch_at TEXT,
      provider TEXT,
      model TEXT,
      updated_at TEXT NOT NULL DEFAULT (datetime('now'))
    )""",
    """CREATE TABLE conversation_compaction_maintenance (
      conversation_id INTEGER PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      pending INTEGER NOT NULL DEFAULT 0,
      requested_at TEXT,
      reason TEXT,
      running INTEGER NOT NULL DEFAULT 0,
      last_started_at TEXT,
      last_finished_at TEXT,
      last_failure_summary TEXT,
      token_budget INTEGER,
      current_token_count INTEGER,
      projected_token_count INTEGER,
      raw_tokens_outside_tail INTEGER,
      context_threshold REAL,
      context_threshold_source TEXT,
      context_fresh_tail_count INTEGER,
      context_leaf_chunk_tokens INTEGER,
      retry_attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_after TEXT,
      resolution_reason TEXT,
      resolved_at TEXT,
      maintenance_revision INTEGER NOT NULL DEFAULT 0,
      updated_at TEXT NOT NULL DEFAULT (datetime('now'))
    )""",
    """CREATE TABLE focus_briefs (
      brief_id TEXT PRIMARY KEY,
      conversation_id INTEGER NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
      session_key TEXT,
      prompt TEXT NOT NULL,
      content TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('draft', 'active', 'superseded', 'failed', 'inactive')),
      token_count INTEGER NOT NULL DEFAULT 0,
      target_tokens INTEGER NOT NULL DEFAULT 0,
      covered_latest_at TEXT,
      covered_message_seq INTEGER,
      source_context_hash TEXT NOT NULL DEFAULT '',
      generator_run_id TEXT,
      generator_session_key TEXT,
      raw_result_json TEXT,
      error TEXT,
      created_at TEXT NOT NULL DEFAULT (datetime('now')),
      updated_at TEXT NOT NULL DEFAULT (datetime('now')),
      superseded_at TEXT
    )""",
    """CREATE TABLE focus_brief_sources (
      brief_id TEXT NOT NULL REFERENCES focus_briefs(brief_id) ON DELETE CASCADE,
      summary_id TEXT NOT NULL,
      ordinal INTEGER,
      role TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (datetime('now')),
      PRIMARY KEY (brief_id, summary_id, role)
    )""",
    """CREATE TABLE lcm_migration_state (
      step_name TEXT NOT NULL,
      algorithm_version INTEGER NOT NULL,
      completed_at TEXT NOT NULL DEFAULT (datetime('now')),
      PRIMARY KEY (step_name, algorithm_version)
    )""",
    """CREATE INDEX messages_conv_seq_idx ON messages (conversation_id, seq)""",
    """CREATE INDEX summaries_conv_created_idx ON summaries (conversation_id, created_at)""",
    """CREATE INDEX summary_messages_message_idx ON summary_messages (message_id)""",
    """CREATE INDEX summary_parents_parent_summary_idx ON summary_parents (parent_summary_id)""",
    """CREATE INDEX message_parts_message_idx ON message_parts (message_id)""",
    """CREATE INDEX message_parts_type_idx ON message_parts (part_type)""",
    """CREATE INDEX context_items_conv_idx ON context_items (conversation_id, ordinal)""",
    """CREATE INDEX large_files_conv_idx ON large_files (conversation_id, created_at)""",
    """CREATE INDEX bootstrap_state_path_idx
      ON conversation_bootstrap_state (session_file_path, updated_at)""",
    """CREATE INDEX compaction_telemetry_state_idx
      ON conversation_compaction_telemetry (cache_state, updated_at)""",
    """CREATE INDEX focus_briefs_conversation_status_idx
      ON focus_briefs (conversation_id, status, created_at)""",
    """CREATE INDEX focus_brief_sources_summary_idx
      ON focus_brief_sources (summary_id)""",
    """CREATE UNIQUE INDEX conversations_active_session_key_idx
      ON conversations (session_key)
      WHERE session_key IS NOT NULL AND active = 1
    """,
    """CREATE INDEX conversations_session_key_active_created_idx
      ON conversations (session_key, active, created_at)
    """,
    """CREATE INDEX conversations_session_id_active_created_idx
      ON conversations (session_id, active, created_at)
    """,
    """CREATE INDEX messages_conv_identity_hash_idx ON messages (conversation_id, identity_hash)""",
    """CREATE UNIQUE INDEX messages_conv_entry_unique_idx
         ON messages (conversation_id, transcript_entry_id)
         WHERE transcript_entry_id IS NOT NULL""",
    """CREATE UNIQUE INDEX messages_stable_event_key_unique
         ON messages (conversation_id, stable_event_key)
         WHERE stable_event_key IS NOT NULL""",
    """CREATE INDEX summaries_conv_depth_kind_idx ON summaries (conversation_id, depth, kind)""",
)

_LCM_FTS_TABLES: tuple[str, ...] = (
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
              content,
              tokenize='porter unicode61'
            )""",
    """CREATE VIRTUAL TABLE summaries_fts USING fts5(
              summary_id UNINDEXED,
              content,
              tokenize='porter unicode61'
            )""",
    """CREATE VIRTUAL TABLE summaries_fts_cjk USING fts5(
                summary_id UNINDEXED,
                content,
                tokenize='trigram'
              )""",
)

_MIGRATION_STEPS: tuple[tuple[str, int], ...] = (
    ("repairOpenClawMetadataIdentityState", 2),
    ("backfillSummaryDepths", 1),
    ("backfillSummaryMetadata", 1),
    ("backfillToolCallColumns", 1),
)

_SUMMARY_MODEL = "anthropic/claude-haiku-4-5"
_IDENTITY = {"provider": "anthropic", "api": "anthropic-messages", "model": "claude-sonnet-4-5"}


# --- public result ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SampleInfo:
    """What a build wrote, for the CLI's one-line report and for tests."""

    path: Path
    kind: str
    conversation_ids: tuple[int, ...]
    active_conversation_id: int
    message_count: int
    part_count: int
    summary_count: int
    context_item_count: int
    large_file_count: int
    context_items_by_conversation: dict[int, int] = field(default_factory=dict)
    messages_by_conversation: dict[int, int] = field(default_factory=dict)


# --- ingest: what the engine stores for a live message (spec A.1-A.4) --------------------

_TOOL_RAW_TYPES = frozenset(
    {
        "tool_use",
        "toolUse",
        "tool-use",
        "toolCall",
        "tool_call",
        "functionCall",
        "function_call",
        "function_call_output",
        "tool_result",
        "toolResult",
        "tool_use_result",
    }
)
_REASONING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
_TEXT_KEYS = ("text", "transcript", "transcription", "message", "summary")
_ARRAY_KEYS = ("segments", "utterances", "paragraphs", "alternatives", "words", "items", "results")
_NESTED_KEYS = ("content", "output", "result", "payload", "data", "value")
_PART_TYPES = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "reasoning": "reasoning",
    "tool_use": "tool",
    "toolUse": "tool",
    "tool-use": "tool",
    "toolCall": "tool",
    "functionCall": "tool",
    "function_call": "tool",
    "function_call_output": "tool",
    "tool_result": "tool",
    "toolResult": "tool",
    "tool": "tool",
    "patch": "patch",
    "file": "file",
    "image": "file",
    "subtask": "subtask",
    "compaction": "compaction",
    "step_start": "step_start",
    "step-start": "step_start",
    "step_finish": "step_finish",
    "step-finish": "step_finish",
    "snapshot": "snapshot",
    "retry": "retry",
}


def _structured_text(value: Any, depth: int = 0) -> str | None:
    """A.2 structuredText: the readable text inside a content value, or None."""
    if value is None or depth > 6:
        return None
    if isinstance(value, str):
        trimmed = js_trim(value)
        if (trimmed.startswith("{") and trimmed.endswith("}")) or (trimmed.startswith("[") and trimmed.endswith("]")):
            ok, parsed = try_js_parse(trimmed)
            if ok:
                inner = _structured_text(parsed, depth + 1)
                if inner:
                    return inner
        return value
    if isinstance(value, list):
        texts = [t for t in (_structured_text(e, depth + 1) for e in value) if t is not None and not is_blank(t)]
        return "\n".join(texts) if texts else None
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if isinstance(kind, str) and kind in _REASONING_TYPES:
        return None
    if isinstance(kind, str) and kind in _TOOL_RAW_TYPES:
        if value.get("toolOutputExternalized") is True:
            for key in ("output", "content", "result"):
                text = _structured_text(value.get(key), depth + 1)
                if text is not None:
                    return None if is_blank(text) else text
        return None
    for key in _TEXT_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, str) and not is_blank(candidate):
            return candidate
    for key in _ARRAY_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, list):
            texts = [
                t for t in (_structured_text(e, depth + 1) for e in candidate) if t is not None and not is_blank(t)
            ]
            if texts:
                return "\n".join(texts)
    for key in _NESTED_KEYS:
        text = _structured_text(value.get(key), depth + 1)
        if text is not None and not is_blank(text):
            return text
    return None


def flatten_content(content: Any) -> str:
    """A.2 flatten: the plain-text fallback ingest writes to ``messages.content``."""
    text = _structured_text(content)
    if isinstance(text, str):
        return text
    if content is None or content == []:
        return ""
    if isinstance(content, list) and all(
        isinstance(e, dict) and isinstance(e.get("type"), str) and e["type"] in (_TOOL_RAW_TYPES | _REASONING_TYPES)
        for e in content
    ):
        return ""
    return js_stringify(content)


def _stored_role(role: str) -> str:
    if role in ("tool", "toolResult"):
        return "tool"
    if role in ("system", "user", "assistant"):
        return role
    return "assistant"


def _first_string(record: dict[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str):
            return value
    return None


def _json_if_defined(record: dict[str, Any], key: str) -> str | None:
    if key in record:
        return js_stringify(record[key])
    return None


@dataclass(slots=True)
class _Part:
    part_type: str
    ordinal: int
    text_content: str | None
    tool_call_id: str | None
    tool_name: str | None
    tool_input: str | None
    tool_output: str | None
    metadata: str


def build_parts(message: dict[str, Any]) -> list[_Part]:
    """A.3 buildParts for the shapes the samples use (string or block-list content)."""
    role = message["role"]
    top_id = _first_string(message, ("toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "call_id", "id"))
    top_name = _first_string(message, ("toolName", "tool_name"))
    top_err = next((message[k] for k in ("isError", "is_error") if isinstance(message.get(k), bool)), None)
    ident: dict[str, str] = {}
    if role == "assistant" and all(isinstance(message.get(k), str) for k in ("provider", "api", "model")):
        ident = {"modelProvider": message["provider"], "modelApi": message["api"], "modelId": message["model"]}
        if isinstance(message.get("responseModel"), str):
            ident["responseModelId"] = message["responseModel"]
    top: dict[str, Any] = {}
    for key, value in (("toolCallId", top_id), ("toolName", top_name), ("isError", top_err)):
        if value is not None:
            top[key] = value

    content = message.get("content")
    if isinstance(content, str):
        meta = {"originalRole": role, **ident, **top}
        return [_Part("text", 0, content, None, None, None, None, js_stringify(meta))]
    if not isinstance(content, list):
        raise ValueError(f"sample messages have string or list content, not {type(content).__name__}")

    parts: list[_Part] = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise ValueError("sample content blocks are objects")
        block_type = block["type"] if isinstance(block.get("type"), str) else "agent"
        text = block.get("text") if isinstance(block.get("text"), str) else block.get("thinking")
        raw_type = block["rawType"] if isinstance(block.get("rawType"), str) else block_type
        part_type = _PART_TYPES.get(raw_type, "agent")
        raw = {**block, "type": raw_type} if raw_type != block_type else block
        id_keys = ["toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "call_id"]
        if part_type == "tool":
            id_keys.append("id")
        call_id = _first_string(block, id_keys)
        tool_name = _first_string(block, ("name", "toolName", "tool_name"))
        tool_input = _json_if_defined(block, "input") or _json_if_defined(block, "arguments")
        tool_output = _json_if_defined(block, "output")
        meta: dict[str, Any] = {"originalRole": role}
        if index == 0:
            meta.update(ident)
        meta.update(top)
        for key in ("externalizedFileId", "originalByteSize", "toolOutputExternalized", "externalizationReason"):
            if key in block:
                meta[key] = block[key]
        meta["rawType"] = raw_type
        meta["raw"] = raw
        parts.append(
            _Part(
                part_type,
                index,
                text if isinstance(text, str) and text else None,
                call_id if call_id is not None else top_id,
                tool_name if tool_name is not None else top_name,
                tool_input,
                tool_output,
                js_stringify(meta),
            )
        )
    return parts


def stored_token_count(message: dict[str, Any]) -> int:
    """A.4 tokenCount: the estimate the engine stores in ``messages.token_count``."""
    content = message.get("content")
    if isinstance(content, str):
        return estimate_tokens(content)
    has_identity = message.get("role") == "assistant" and all(
        isinstance(message.get(k), str) for k in ("provider", "api", "model")
    )
    blocks: list[Any] = []
    for block in content or []:
        if block.get("type") == "thinking" and isinstance(block.get("thinkingSignature"), str) and not has_identity:
            if block["thinkingSignature"] == "reasoning_content":
                continue
            block = {k: v for k, v in block.items() if k != "thinkingSignature"}
        blocks.append(block)
    if not blocks:
        return estimate_tokens(flatten_content(content))
    if message.get("role") == "user" and len(blocks) == 1 and blocks[0].get("type") == "text":
        return estimate_tokens(blocks[0].get("text", ""))
    return estimate_tokens(js_stringify(blocks))


# --- time and ids ---------------------------------------------------------------------------


def _sql_time(moment: datetime) -> str:
    """``datetime('now')`` format: how the engine writes created_at."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _iso_ms(moment: datetime) -> str:
    """ISO-8601 with milliseconds and Z: how the engine writes summary time ranges."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _epoch_ms(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class _Ids:
    """Seeded source of realistic-looking ids (uuids, Anthropic tool-use ids, hex)."""

    def __init__(self, seed: str | int) -> None:
        self._rng = random.Random(f"ctxview-sample-ids:{seed}")

    def uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def tool_call(self) -> str:
        return "toolu_01" + "".join(self._rng.choices(_BASE62, k=22))

    def hex(self, length: int) -> str:
        return f"{self._rng.getrandbits(length * 4):0{length}x}"

    def base64ish(self, length: int) -> str:
        alphabet = _BASE62 + "+/"
        return "".join(self._rng.choices(alphabet, k=length))


# --- the rows of one database ------------------------------------------------------------


@dataclass(slots=True)
class _StoredMessage:
    message_id: int
    conversation_id: int
    seq: int
    role: str
    content: str
    token_count: int
    created: datetime
    large_content: str | None


@dataclass(slots=True)
class _StoredSummary:
    summary_id: str
    conversation_id: int
    kind: str
    depth: int
    content: str
    token_count: int
    earliest: datetime | None
    latest: datetime | None
    descendant_count: int
    descendant_token_count: int
    source_message_token_count: int
    created: datetime
    parent_ids: tuple[str, ...] = ()
    message_ids: tuple[int, ...] = ()
    file_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class _Conversation:
    conversation_id: int
    session_id: str
    session_key: str | None
    title: str | None
    created: datetime
    active: bool = True
    archived: datetime | None = None
    archive_cause: str | None = None
    # (item_type, message_id | summary_id, created)
    context: list[tuple[str, int | str, datetime]] = field(default_factory=list)
    next_seq: int = 0


class _SessionDb:
    """Collects the rows of one sample database, then writes them in one transaction."""

    def __init__(self, ids: _Ids) -> None:
        self.ids = ids
        self.conversations: list[_Conversation] = []
        self.messages: list[_StoredMessage] = []
        self.message_rows: list[tuple[Any, ...]] = []
        self.part_rows: list[tuple[Any, ...]] = []
        self.summaries: list[_StoredSummary] = []
        self.large_files: list[tuple[Any, ...]] = []
        self._by_id: dict[int, _StoredMessage] = {}

    # -- conversations and messages --

    def conversation(
        self,
        session_key: str | None,
        title: str | None,
        created: datetime,
        *,
        active: bool = True,
        archived: datetime | None = None,
        archive_cause: str | None = None,
    ) -> _Conversation:
        conv = _Conversation(
            conversation_id=len(self.conversations) + 1,
            session_id=self.ids.uuid(),
            session_key=session_key,
            title=title,
            created=created,
            active=active,
            archived=archived,
            archive_cause=archive_cause,
        )
        self.conversations.append(conv)
        return conv

    def ingest(
        self,
        conv: _Conversation,
        message: dict[str, Any],
        created: datetime,
        *,
        large_content: str | None = None,
        in_context: bool = True,
    ) -> _StoredMessage:
        """Store one live message as the engine's ingest would, and append it to the context."""
        role = _stored_role(message["role"])
        content = flatten_content(message.get("content"))
        stored = _StoredMessage(
            message_id=len(self.messages) + 1,
            conversation_id=conv.conversation_id,
            seq=conv.next_seq,
            role=role,
            content=content,
            token_count=stored_token_count(message),
            created=created,
            large_content=large_content,
        )
        conv.next_seq += 1
        self.messages.append(stored)
        self._by_id[stored.message_id] = stored
        identity_hash = hashlib.sha256(f"{role}\0{content}".encode()).hexdigest()
        self.message_rows.append(
            (
                stored.message_id,
                conv.conversation_id,
                stored.seq,
                role,
                content,
                stored.token_count,
                identity_hash,
                _sql_time(created),
                large_content,
            )
        )
        for part in build_parts(message):
            self.part_rows.append(
                (
                    self.ids.uuid(),
                    stored.message_id,
                    conv.session_id,
                    part.part_type,
                    part.ordinal,
                    part.text_content,
                    part.tool_call_id,
                    part.tool_name,
                    part.tool_input,
                    part.tool_output,
                    part.metadata,
                )
            )
        if in_context:
            conv.context.append(("message", stored.message_id, created))
        return stored

    def message(self, message_id: int) -> _StoredMessage:
        return self._by_id[message_id]

    # -- summaries --

    def _summary_id(self, content: str, created: datetime) -> str:
        return "sum_" + hashlib.sha256(f"{content}{_iso_ms(created)}".encode()).hexdigest()[:16]

    def leaf(self, conv: _Conversation, message_ids: Sequence[int], content: str, created: datetime) -> _StoredSummary:
        sources = [self.message(m) for m in message_ids]
        summary = _StoredSummary(
            summary_id=self._summary_id(content, created),
            conversation_id=conv.conversation_id,
            kind="leaf",
            depth=0,
            content=content,
            token_count=estimate_tokens(content),
            earliest=min(m.created for m in sources),
            latest=max(m.created for m in sources),
            descendant_count=0,
            descendant_token_count=0,
            source_message_token_count=sum(m.token_count for m in sources),
            created=created,
            message_ids=tuple(message_ids),
        )
        self.summaries.append(summary)
        return summary

    def condensed(
        self, conv: _Conversation, children: Sequence[_StoredSummary], content: str, created: datetime
    ) -> _StoredSummary:
        earliest = [c.earliest for c in children if c.earliest is not None]
        latest = [c.latest for c in children if c.latest is not None]
        summary = _StoredSummary(
            summary_id=self._summary_id(content, created),
            conversation_id=conv.conversation_id,
            kind="condensed",
            depth=max(c.depth for c in children) + 1,
            content=content,
            token_count=estimate_tokens(content),
            earliest=min(earliest) if earliest else None,
            latest=max(latest) if latest else None,
            descendant_count=sum(c.descendant_count + 1 for c in children),
            descendant_token_count=sum(c.token_count + c.descendant_token_count for c in children),
            source_message_token_count=sum(c.source_message_token_count for c in children),
            created=created,
            parent_ids=tuple(c.summary_id for c in children),
        )
        self.summaries.append(summary)
        return summary

    def large_file(
        self,
        conv: _Conversation,
        *,
        tool_name: str,
        payload: str,
        exploration_summary: str,
        created: datetime,
    ) -> str:
        file_id = "file_" + self.ids.hex(16)
        encoded = payload.encode("utf-8")
        self.large_files.append(
            (
                file_id,
                conv.conversation_id,
                f"{tool_name}.txt",
                "text/plain",
                len(encoded),
                payload.count("\n") + 1,
                f"/home/dev/.openclaw/lcm-files/{conv.conversation_id}/{file_id}.txt",
                exploration_summary,
                _sql_time(created),
            )
        )
        return file_id

    # -- writing --

    def write(self, path: Path) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA page_size = 4096")
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN")
            for ddl in _LCM_TABLES:
                conn.execute(ddl)
            fts = _create_fts(conn)
            self._insert(conn, fts)
            conn.execute("COMMIT")
            conn.execute("ANALYZE")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _insert(self, conn: sqlite3.Connection, fts: bool) -> None:
        conn.executemany(
            "INSERT INTO conversations (conversation_id, session_id, session_key, active, archived_at, archive_cause,"
            " title, bootstrapped_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    c.conversation_id,
                    c.session_id,
                    c.session_key,
                    1 if c.active else 0,
                    _sql_time(c.archived) if c.archived else None,
                    c.archive_cause,
                    c.title,
                    _sql_time(c.created),
                    _sql_time(c.created),
                    _sql_time(self._updated_at(c)),
                )
                for c in self.conversations
            ],
        )
        conn.executemany(
            "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count, identity_hash,"
            " created_at, large_content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.message_rows,
        )
        conn.executemany(
            "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content,"
            " tool_call_id, tool_name, tool_input, tool_output, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.part_rows,
        )
        conn.executemany(
            "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, earliest_at,"
            " latest_at, descendant_count, descendant_token_count, source_message_token_count, created_at,"
            " file_ids, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.summary_id,
                    s.conversation_id,
                    s.kind,
                    s.depth,
                    s.content,
                    s.token_count,
                    _iso_ms(s.earliest) if s.earliest else None,
                    _iso_ms(s.latest) if s.latest else None,
                    s.descendant_count,
                    s.descendant_token_count,
                    s.source_message_token_count,
                    _sql_time(s.created),
                    js_stringify(list(s.file_ids)),
                    _SUMMARY_MODEL,
                )
                for s in self.summaries
            ],
        )
        conn.executemany(
            "INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)",
            [(s.summary_id, m, i) for s in self.summaries for i, m in enumerate(s.message_ids)],
        )
        conn.executemany(
            "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)",
            [(s.summary_id, p, i) for s in self.summaries for i, p in enumerate(s.parent_ids)],
        )
        conn.executemany(
            "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id, summary_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    c.conversation_id,
                    ordinal,
                    item_type,
                    ref if item_type == "message" else None,
                    ref if item_type == "summary" else None,
                    _sql_time(created),
                )
                for c in self.conversations
                for ordinal, (item_type, ref, created) in enumerate(c.context)
            ],
        )
        conn.executemany(
            "INSERT INTO large_files (file_id, conversation_id, file_name, mime_type, byte_size, line_count,"
            " storage_uri, exploration_summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.large_files,
        )
        first = min((c.created for c in self.conversations), default=datetime(2026, 1, 1))
        conn.executemany(
            "INSERT INTO lcm_migration_state (step_name, algorithm_version, completed_at) VALUES (?, ?, ?)",
            [(name, version, _sql_time(first)) for name, version in _MIGRATION_STEPS],
        )
        if fts:
            conn.execute(
                "INSERT INTO messages_fts (rowid, content) SELECT message_id, content FROM messages"
                " WHERE content != '' ORDER BY message_id"
            )
            conn.execute(
                "INSERT INTO summaries_fts (summary_id, content) SELECT summary_id, content FROM summaries"
                " ORDER BY rowid"
            )
            conn.execute(
                "INSERT INTO summaries_fts_cjk (summary_id, content) SELECT summary_id, content FROM summaries"
                " ORDER BY rowid"
            )

    def _updated_at(self, conv: _Conversation) -> datetime:
        times = [m.created for m in self.messages if m.conversation_id == conv.conversation_id]
        times += [s.created for s in self.summaries if s.conversation_id == conv.conversation_id]
        if conv.archived:
            times.append(conv.archived)
        return max(times, default=conv.created)

    def info(self, path: Path, kind: str) -> SampleInfo:
        items = {c.conversation_id: len(c.context) for c in self.conversations}
        per_conv: dict[int, int] = {}
        for m in self.messages:
            per_conv[m.conversation_id] = per_conv.get(m.conversation_id, 0) + 1
        active = [c.conversation_id for c in self.conversations if c.active]
        return SampleInfo(
            path=path,
            kind=kind,
            conversation_ids=tuple(c.conversation_id for c in self.conversations),
            active_conversation_id=active[0] if active else self.conversations[0].conversation_id,
            message_count=len(self.messages),
            part_count=len(self.part_rows),
            summary_count=len(self.summaries),
            context_item_count=sum(items.values()),
            large_file_count=len(self.large_files),
            context_items_by_conversation=items,
            messages_by_conversation=per_conv,
        )


def _create_fts(conn: sqlite3.Connection) -> bool:
    """Create the full-text tables; an SQLite without FTS5/trigram gets a DB without them."""
    conn.execute("SAVEPOINT fts")
    try:
        for ddl in _LCM_FTS_TABLES:
            conn.execute(ddl)
    except sqlite3.OperationalError:
        conn.execute("ROLLBACK TO fts")
        conn.execute("RELEASE fts")
        return False
    conn.execute("RELEASE fts")
    return True


# --- live-message builders (the shapes OpenClaw keeps in memory) --------------------------


class _Script:
    """Writes one conversation as live messages and ingests each into the database."""

    def __init__(self, db: _SessionDb, conv: _Conversation, day: datetime, *, thinking_signatures: bool) -> None:
        self.db = db
        self.conv = conv
        self.day = day
        self.live: list[dict[str, Any]] = []  # every message, as the host held it
        self.stored: list[_StoredMessage] = []
        self._signatures = thinking_signatures
        self._usage_rng = random.Random(f"usage:{conv.session_id}")

    def at(self, clock: str) -> datetime:
        hours, minutes, seconds = (int(x) for x in clock.split(":"))
        return self.day + timedelta(hours=hours, minutes=minutes, seconds=seconds)

    # blocks

    @staticmethod
    def text(text: str) -> dict[str, Any]:
        return {"type": "text", "text": text}

    def think(self, text: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "thinking", "thinking": text}
        if self._signatures:
            block["thinkingSignature"] = self.db.ids.base64ish(96)
        return block

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"type": "toolCall", "id": self.db.ids.tool_call(), "name": name, "arguments": arguments}

    # messages

    def _add(self, message: dict[str, Any], moment: datetime, **kwargs: Any) -> _StoredMessage:
        self.live.append(message)
        stored = self.db.ingest(self.conv, message, moment, **kwargs)
        self.stored.append(stored)
        return stored

    def user(self, clock: str, text: str) -> _StoredMessage:
        moment = self.at(clock)
        return self._add({"role": "user", "content": text, "timestamp": _epoch_ms(moment)}, moment)

    def system(self, clock: str, text: str) -> _StoredMessage:
        moment = self.at(clock)
        return self._add({"role": "system", "content": text, "timestamp": _epoch_ms(moment)}, moment)

    def assistant(self, clock: str, *blocks: dict[str, Any]) -> _StoredMessage:
        moment = self.at(clock)
        output = stored_token_count({"role": "assistant", "content": list(blocks), **_IDENTITY})
        prompt = 18_000 + len(self.live) * 310 + self._usage_rng.randrange(0, 900)
        cached = (prompt // 1000) * 1000 - 2000 if len(self.live) > 2 else 0
        message = {
            "role": "assistant",
            "content": list(blocks),
            **_IDENTITY,
            "usage": {
                "input": prompt - cached,
                "output": output,
                "cacheRead": cached,
                "cacheWrite": 0,
                "totalTokens": prompt + output,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop",
            "timestamp": _epoch_ms(moment),
        }
        return self._add(message, moment)

    def result(
        self,
        clock: str,
        call: dict[str, Any],
        text: str,
        *,
        is_error: bool = False,
        large_content: str | None = None,
    ) -> _StoredMessage:
        moment = self.at(clock)
        message = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
            "timestamp": _epoch_ms(moment),
        }
        return self._add(message, moment, large_content=large_content)


# --- the demo session ---------------------------------------------------------------------
#
# One working morning on a flaky production deploy of a billing service: helm upgrades
# that time out in a pre-upgrade migration hook, a blocking index build, a single-statement
# backfill, a flaky CI test, a runbook for helm rollback.  The first part of the morning is
# compacted into leaf and condensed summaries (depths 0-2); the rest is raw context.  A
# second, archived conversation is the subagent session that dry-ran the backfill.

_DEMO_DAY = datetime(2026, 3, 12)
_SUBAGENT_DRY_RUN = "agent:main:subagent:4f0c9a1e-6b2d-4c1a-9a63-2f51d7c0b8e4"
_SUBAGENT_FLAKE_HUNT = "agent:main:subagent:b7e2d915-03c8-4f6e-8d2a-61c4a9f0e357"

_HELM_GET_ALL_58 = """NAME: billing-api
LAST DEPLOYED: Thu Mar 12 10:29:40 2026
NAMESPACE: billing
STATUS: failed
REVISION: 58
CHART: billing-api-3.9.0
APP VERSION: 2.14.1
USER-SUPPLIED VALUES:
image:
  tag: 2.14.1
ingress:
  host: billing.eu.internal.example.com
migrations:
  activeDeadlineSeconds: 300
  enabled: true
replicaCount: 4
resources:
  limits:
    memory: 1Gi
  requests:
    cpu: 500m
    memory: 768Mi

COMPUTED VALUES:
autoscaling:
  enabled: true
  maxReplicas: 12
  minReplicas: 4
  targetCPUUtilizationPercentage: 65
image:
  pullPolicy: IfNotPresent
  repository: registry.internal.example.com/billing/billing-api
  tag: 2.14.1
migrations:
  activeDeadlineSeconds: 300
  backoffLimit: 0
  command:
  - alembic
  - upgrade
  - head
  enabled: true
podDisruptionBudget:
  minAvailable: 3
readiness:
  path: /healthz/ready
  periodSeconds: 5
  failureThreshold: 3
replicaCount: 4

HOOKS:
---
# Source: billing-api/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: billing-api-migrate
  labels:
    app.kubernetes.io/name: billing-api
    app.kubernetes.io/component: migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-weight": "-5"
    "helm.sh/hook-delete-policy": before-hook-creation
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 300
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: billing-api
      containers:
        - name: migrate
          image: "registry.internal.example.com/billing/billing-api:2.14.1"
          command: ["alembic", "upgrade", "head"]
          envFrom:
            - secretRef:
                name: billing-api-db
          resources:
            requests:
              cpu: 250m
              memory: 256Mi
---
# Source: billing-api/templates/smoke-test.yaml
apiVersion: v1
kind: Pod
metadata:
  name: billing-api-smoke-test
  annotations:
    "helm.sh/hook": test
spec:
  restartPolicy: Never
  containers:
    - name: smoke
      image: curlimages/curl:8.6.0
      args: ["--fail", "--max-time", "5", "http://billing-api:8080/healthz/ready"]
MANIFEST:
---
# Source: billing-api/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: billing-api
  labels:
    app.kubernetes.io/name: billing-api
    app.kubernetes.io/version: "2.14.1"
    helm.sh/chart: billing-api-3.9.0
---
# Source: billing-api/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: billing-api-config
data:
  LOG_LEVEL: info
  DB_POOL_SIZE: "20"
  DB_STATEMENT_TIMEOUT_MS: "15000"
  INVOICE_ROLLUP_CRON: "5 0 * * *"
---
# Source: billing-api/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: billing-api
spec:
  minAvailable: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: billing-api
---
# Source: billing-api/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: billing-api
spec:
  type: ClusterIP
  ports:
    - name: http
      port: 8080
      targetPort: http
  selector:
    app.kubernetes.io/name: billing-api
---
# Source: billing-api/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: billing-api
spec:
  replicas: 4
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  selector:
    matchLabels:
      app.kubernetes.io/name: billing-api
  template:
    metadata:
      labels:
        app.kubernetes.io/name: billing-api
    spec:
      serviceAccountName: billing-api
      terminationGracePeriodSeconds: 45
      containers:
        - name: api
          image: "registry.internal.example.com/billing/billing-api:2.14.1"
          ports:
            - name: http
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /healthz/ready
              port: http
            periodSeconds: 5
            failureThreshold: 3
          livenessProbe:
            httpGet:
              path: /healthz/live
              port: http
            initialDelaySeconds: 20
            periodSeconds: 10
          envFrom:
            - configMapRef:
                name: billing-api-config
            - secretRef:
                name: billing-api-db
          resources:
            requests:
              cpu: 500m
              memory: 768Mi
            limits:
              memory: 1Gi
---
# Source: billing-api/templates/hpa.yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: billing-api
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: billing-api
  minReplicas: 4
  maxReplicas: 12
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 65"""

_HELM_GET_ALL_SUMMARY = (
    "helm get all output for release billing-api, revision 58 (status failed, chart billing-api-3.9.0, "
    "app 2.14.1), " + str(_HELM_GET_ALL_58.count("\n") + 1) + " lines of YAML.\n"
    "Sections: USER-SUPPLIED VALUES, COMPUTED VALUES, HOOKS (migrate Job, smoke-test Pod), MANIFEST "
    "(ServiceAccount, ConfigMap, PodDisruptionBudget, Service, Deployment, HorizontalPodAutoscaler).\n"
    "Key facts: the migrate Job is a pre-install,pre-upgrade hook running `alembic upgrade head` with "
    "activeDeadlineSeconds 300 and backoffLimit 0; the Deployment rolls 4 replicas with maxUnavailable 0 "
    "and a /healthz/ready readiness probe."
)

_MIGRATION_0048 = '''"""backfill invoices.currency from customers.billing_currency

Revision ID: 0048
Revises: 0047
"""
from alembic import op

revision = "0048"
down_revision = "0047"


def upgrade() -> None:
    op.execute(
        """
        UPDATE invoices AS i
           SET currency = c.billing_currency
          FROM customers AS c
         WHERE c.id = i.customer_id
           AND i.currency IS NULL
        """
    )


def downgrade() -> None:
    op.execute("UPDATE invoices SET currency = NULL")'''

_MIGRATION_0048_BATCHED = '''"""backfill invoices.currency from customers.billing_currency, in batches

Revision ID: 0048
Revises: 0047
"""
import sqlalchemy as sa
from alembic import op

revision = "0048"
down_revision = "0047"

BATCH = 10_000
BACKFILL_BATCH = sa.text(
    """
    WITH batch AS (
        SELECT i.id, c.billing_currency
          FROM invoices AS i
          JOIN customers AS c ON c.id = i.customer_id
         WHERE i.currency IS NULL
         LIMIT :batch
    )
    UPDATE invoices SET currency = batch.billing_currency
      FROM batch
     WHERE invoices.id = batch.id
    """
)


def upgrade() -> None:
    conn = op.get_bind()
    with op.get_context().autocommit_block():
        while conn.execute(BACKFILL_BATCH, {"batch": BATCH}).rowcount:
            pass


def downgrade() -> None:
    pass  # the column is dropped by 0047's downgrade'''

_RUNBOOK = """## Rollback: billing-api (prod-eu)

**Before you start:** the deploy freeze begins at 17:00 UTC; after that a rollback needs on-call sign-off (@mkaur) \
on the change ticket (CHG-2291).

1. **Find the target revision.**
   `helm history billing-api -n billing --kube-context prod-eu --max 5`
   Take the newest revision before the bad one whose APP VERSION is 2.13.2 and whose STATUS is `deployed` or \
`superseded`. Today that is **59** (itself a rollback to 57, same chart 3.8.0).
2. **Roll back.**
   `helm rollback billing-api 59 -n billing --kube-context prod-eu --wait --timeout 10m`
   The pre-upgrade hook does not run on rollback, so this takes about two minutes (4 replicas, maxUnavailable 0).
3. **Check the migration state** (read replica only, never the primary):
   `psql "$BILLING_RO_URL" -c "select version_num from alembic_version"`
   0047 (nullable column) and 0049 (concurrent index) are compatible with 2.13.2. Do **not** run \
`alembic downgrade`.
4. **If the backfill job is half done:**
   - leave the rows it already wrote; 2.13.2 never reads `invoices.currency`;
   - stop it: `kubectl delete job billing-api-backfill -n billing --kube-context prod-eu`;
   - re-run it after the next successful upgrade. It walks invoices by id from the first row with \
`currency IS NULL`, so it resumes without cleanup.
5. **Tell people:** post the old and new revision numbers in #billing-deploys and update CHG-2291."""


def _build_demo(db: _SessionDb) -> list[dict[str, Any]]:
    """Write the demo conversations; return the main conversation's live messages."""
    main = db.conversation(
        "agent:main:main",
        "Flaky prod deploy of billing-api 2.14",
        _DEMO_DAY + timedelta(hours=8, minutes=4, seconds=51),
    )
    s = _Script(db, main, _DEMO_DAY, thinking_signatures=True)

    # ---- 08:05-08:19: first look (leaf L1) ----
    l1 = [
        s.user(
            "08:05:12",
            "The billing-api deploy to prod-eu failed again this morning. `helm upgrade --atomic` timed out after "
            "5m and rolled back to 2.13.2. Third time this week, roughly one run in three, and only in prod. "
            "Can you help me figure out why?",
        ),
    ]
    events = s.call(
        "bash", {"command": "kubectl get events -n billing --kube-context prod-eu --sort-by=.lastTimestamp | tail -n 8"}
    )
    l1.append(
        s.assistant("08:05:40", s.text("Let's start with what the cluster saw during the failed upgrade."), events)
    )
    l1.append(
        s.result(
            "08:05:44",
            events,
            "LAST SEEN   TYPE      REASON              OBJECT                          MESSAGE\n"
            "21m         Normal    SuccessfulCreate    job/billing-api-migrate         Created pod: "
            "billing-api-migrate-7x2kq\n"
            "21m         Normal    Scheduled           pod/billing-api-migrate-7x2kq   Successfully assigned "
            "billing/billing-api-migrate-7x2kq to ip-10-42-3-17.eu-west-1.compute.internal\n"
            "21m         Normal    Pulled              pod/billing-api-migrate-7x2kq   Container image "
            '"registry.internal.example.com/billing/billing-api:2.14.0" already present on machine\n'
            "21m         Normal    Started             pod/billing-api-migrate-7x2kq   Started container migrate\n"
            "16m         Warning   DeadlineExceeded    job/billing-api-migrate         Job was active longer than "
            "specified deadline\n"
            "16m         Normal    SuccessfulDelete    job/billing-api-migrate         Deleted pod: "
            "billing-api-migrate-7x2kq",
        )
    )
    l1.append(
        s.assistant(
            "08:06:30",
            s.text(
                "The upgrade never reached the rollout. The pre-upgrade hook job `billing-api-migrate` ran past its "
                "300 s deadline and was killed, so Helm marked the release failed and `--atomic` rolled it back. The "
                "app pods were never replaced. So the question is why the migration is slow only in prod."
            ),
        )
    )
    l1.append(
        s.user("08:18:50", "Right, the hook runs `alembic upgrade head`. 2.14.0 ships two migrations, 0047 and 0048.")
    )

    # ---- 08:20-08:41: the blocking index (leaf L2) ----
    read_0047 = s.call("read", {"path": "migrations/versions/0047_invoice_currency_column.py"})
    l2 = [s.assistant("08:20:03", read_0047)]
    l2.append(
        s.result(
            "08:20:04",
            read_0047,
            '"""add invoices.currency\n\nRevision ID: 0047\nRevises: 0046\n"""\nfrom alembic import op\n'
            'import sqlalchemy as sa\n\nrevision = "0047"\ndown_revision = "0046"\n\n\n'
            "def upgrade() -> None:\n"
            '    op.add_column("invoices", sa.Column("currency", sa.CHAR(3), nullable=True))\n'
            '    op.create_index("ix_invoices_currency_issued_at", "invoices", ["currency", "issued_at"])\n\n\n'
            "def downgrade() -> None:\n"
            '    op.drop_index("ix_invoices_currency_issued_at", table_name="invoices")\n'
            '    op.drop_column("invoices", "currency")',
        )
    )
    l2.append(
        s.assistant(
            "08:21:10",
            s.text(
                "0047 builds `ix_invoices_currency_issued_at` with a plain CREATE INDEX. In prod `invoices` has about "
                "48M rows, so the build takes minutes and holds a SHARE lock that blocks every insert and update on "
                "the table. Staging has 1.2M rows and finishes in seconds, which is why staging never fails. 0048 "
                "then backfills `currency` in a single UPDATE. Both run inside the 300 s hook deadline."
            ),
        )
    )
    l2.append(
        s.user(
            "08:40:02",
            "Priya (DBA) confirms: during the last failed deploy the index build was queued behind the nightly "
            "reporting query, and writes to invoices piled up behind it. Checkout latency paged at the same time.",
        )
    )
    l2.append(
        s.assistant(
            "08:41:15",
            s.text(
                "That matches. Two fixes: (1) build the index with CREATE INDEX CONCURRENTLY in its own migration, "
                "outside the transaction, so it never blocks writes; (2) give migration connections a lock_timeout "
                "so they fail fast instead of queueing behind long queries. A longer hook deadline only makes sense "
                "once the migration itself is safe."
            ),
        )
    )

    # ---- 08:48-09:05: the flaky test, first look (leaf L3) ----
    l3 = [
        s.user(
            "08:48:30",
            "Before I change the migrations: CI on main has been flaky too. test_invoice_rollup "
            "fails maybe 1 in 8 runs. Is that related?",
        )
    ]
    runs = s.call("bash", {"command": "gh run list --workflow ci.yml --branch main --limit 6"})
    l3.append(s.assistant("08:48:55", runs))
    l3.append(
        s.result(
            "08:48:58",
            runs,
            "STATUS  TITLE                                WORKFLOW  BRANCH  EVENT  ID          ELAPSED  AGE\n"
            "✓       Bump sqlalchemy to 2.0.38            CI        main    push   8123401122  6m41s    2h\n"
            "X       Add invoice currency column (#476)   CI        main    push   8123377310  7m02s    5h\n"
            "✓       Retry webhook delivery on 502        CI        main    push   8123350987  6m38s    7h\n"
            "✓       Drop legacy /v1/refunds route        CI        main    push   8123299015  6m52s    1d\n"
            "X       Pin freezegun to 1.4.0               CI        main    push   8123201877  7m10s    1d\n"
            "✓       Add rollup metrics                   CI        main    push   8123188730  6m44s    1d",
        )
    )
    read_test = s.call("read", {"path": "tests/integration/test_rollup.py", "offset": 1, "limit": 40})
    l3.append(s.assistant("08:50:20", s.text("Both red runs failed in the same test. Let me read it."), read_test))
    l3.append(
        s.result(
            "08:50:21",
            read_test,
            "from datetime import date\n\nimport pytest\n\nfrom billing.rollup import rollup_day\n\n\n"
            '@pytest.mark.parametrize("currency", ["eur", "usd"])\n'
            "def test_invoice_rollup(db, invoice_factory, currency):\n"
            "    today = date.today()\n"
            "    invoice_factory(amount_cents=129900, currency=currency, issued_on=today)\n"
            "    invoice_factory(amount_cents=4500, currency=currency, issued_on=today)\n\n"
            "    rows = db.execute(rollup_day(today)).all()\n\n"
            "    assert rows[0].total_cents == 134400",
        )
    )
    l3.append(
        s.assistant(
            "09:05:44",
            s.text(
                "Not related to the deploy. Two things make this test flaky: the invoices are created with "
                "`date.today()` (the runner's local date) while the rollup groups by UTC day, so it fails when CI "
                "runs around midnight; and it asserts on `rows[0]` of a query without ORDER BY, so Postgres may "
                "return the two currencies in either order."
            ),
        )
    )

    # ---- 09:13-09:38: migrations reworked (leaf L4) ----
    l4 = [
        s.user(
            "09:13:02",
            "OK. Fix the migrations first. Split the index out of 0047 as you suggested and add the lock_timeout.",
        )
    ]
    edit_0047 = s.call(
        "edit",
        {
            "path": "migrations/versions/0047_invoice_currency_column.py",
            "oldText": '    op.create_index("ix_invoices_currency_issued_at", "invoices", ["currency", "issued_at"])\n',
            "newText": "",
        },
    )
    l4.append(s.assistant("09:14:10", edit_0047))
    l4.append(
        s.result(
            "09:14:11",
            edit_0047,
            "Successfully replaced 1 occurrence in migrations/versions/0047_invoice_currency_column.py",
        )
    )
    edit_env = s.call(
        "edit",
        {
            "path": "migrations/env.py",
            "oldText": "        context.configure(connection=connection, target_metadata=target_metadata)\n",
            "newText": "        connection.exec_driver_sql(\"SET lock_timeout = '5s'\")\n"
            "        connection.exec_driver_sql(\"SET statement_timeout = '60s'\")\n"
            "        context.configure(connection=connection, target_metadata=target_metadata)\n",
        },
    )
    l4.append(s.assistant("09:31:47", s.text("Index removed from 0047. Now the timeouts in env.py."), edit_env))
    l4.append(s.result("09:31:48", edit_env, "Successfully replaced 1 occurrence in migrations/env.py"))
    l4.append(
        s.assistant(
            "09:38:20",
            s.text(
                "Done: 0047 now only adds the nullable column (metadata-only on Postgres 15), the index moved to a new "
                "`0049_invoice_currency_index.py` that uses `postgresql_concurrently=True` inside "
                "`op.get_context().autocommit_block()`, and env.py sets lock_timeout = '5s' and "
                "statement_timeout = '60s' on the migration connection. I left 0048 (the backfill) unchanged."
            ),
        )
    )

    # ---- 09:41-09:57: staging (leaf L5) ----
    l5 = [s.user("09:41:05", "Deploy it to staging and run the upgrade three times in a row.")]
    staging = s.call(
        "bash",
        {
            "command": "for i in 1 2 3; do helm upgrade billing-api charts/billing-api -n billing "
            "--kube-context staging-eu -f values/staging.yaml --atomic --timeout 5m --wait "
            '>/dev/null && echo "run $i ok"; done',
            "timeout": 1200,
        },
    )
    l5.append(s.assistant("09:41:30", staging))
    l5.append(s.result("09:52:14", staging, "run 1 ok\nrun 2 ok\nrun 3 ok"))
    staging_log = s.call(
        "bash",
        {
            "command": "kubectl logs job/billing-api-migrate -n billing --kube-context "
            "staging-eu --timestamps | tail -n 5"
        },
    )
    l5.append(s.assistant("09:52:40", staging_log))
    l5.append(
        s.result(
            "09:52:43",
            staging_log,
            "2026-03-12T09:48:31.118Z INFO  [alembic.runtime.migration] Running upgrade 0046 -> 0047, add "
            "invoices.currency\n"
            "2026-03-12T09:48:31.164Z INFO  [alembic.runtime.migration] Running upgrade 0047 -> 0048, backfill "
            "invoices.currency from customers.billing_currency\n"
            "2026-03-12T09:48:35.402Z INFO  [alembic.runtime.migration] Running upgrade 0048 -> 0049, concurrent index "
            "on invoices(currency, issued_at)\n"
            "2026-03-12T09:49:09.377Z INFO  [alembic.runtime.migration] Done in 38.3s",
        )
    )
    l5.append(
        s.assistant(
            "09:57:02",
            s.text(
                "Staging passed 3/3. The migration job took 38 s: 4 s for the backfill (staging has 1.2M invoices) and "
                "34 s for the concurrent index build."
            ),
        )
    )

    # ---- 09:59-10:11: rollback target, platform notice (leaf L6) ----
    l6 = [
        s.user(
            "09:59:30",
            "The reviewer on PR #482 wants a rollback section in the runbook before we ship. "
            "What's the last good revision in prod?",
        )
    ]
    history_55 = s.call("bash", {"command": "helm history billing-api -n billing --kube-context prod-eu --max 3"})
    l6.append(s.assistant("09:59:52", history_55))
    l6.append(
        s.result(
            "09:59:55",
            history_55,
            "REVISION  UPDATED                   STATUS      CHART              APP VERSION  DESCRIPTION\n"
            "55        Mon Mar  9 14:12:03 2026  superseded  billing-api-3.8.0  2.13.2       Upgrade complete\n"
            '56        Thu Mar 12 07:44:19 2026  failed      billing-api-3.9.0  2.14.0       Upgrade "billing-api" '
            "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
            "57        Thu Mar 12 07:49:31 2026  deployed    billing-api-3.8.0  2.13.2       Rollback to 55",
        )
    )
    l6.append(
        s.assistant(
            "10:00:40",
            s.text(
                "Revision 57 (chart 3.8.0, app 2.13.2) is the last good release; "
                "`helm rollback billing-api 57 -n billing` "
                "restores it. Rolling back is safe for the schema because 0047 only adds a nullable column that 2.13.2 "
                "ignores."
            ),
        )
    )
    l6.append(
        s.user(
            "10:09:15",
            "Also, the platform team posted this in #infra-cn, what does it say?\n\n"
            "「本周五之前，所有服务的 Helm chart 都必须设置 activeDeadlineSeconds，"
            "并且数据库迁移任务不能超过十分钟。」",
        )
    )
    l6.append(
        s.assistant(
            "10:10:58",
            s.text(
                "It says: “By this Friday, every service's Helm chart must set activeDeadlineSeconds, and database "
                "migration jobs must not run longer than ten minutes.” Our hook already sets 300 s, so the chart "
                "complies; any long backfill will have to stay under ten minutes or move out of the migration job."
            ),
        )
    )

    # ---- 10:13-10:25: the flaky test fixed (leaf L7) ----
    l7 = [s.user("10:13:20", "Now fix test_invoice_rollup so it stops being flaky.")]
    edit_test = s.call(
        "edit",
        {
            "path": "tests/integration/test_rollup.py",
            "oldText": "    today = date.today()\n",
            "newText": "    today = date(2026, 3, 11)\n",
        },
    )
    l7.append(
        s.assistant(
            "10:14:02",
            s.text(
                "I'll pin the clock with freezegun at 23:59:30 UTC, build invoices for a fixed UTC day, and order the "
                "rollup rows by currency."
            ),
            edit_test,
        )
    )
    l7.append(s.result("10:14:03", edit_test, "Successfully replaced 1 occurrence in tests/integration/test_rollup.py"))
    rerun = s.call("bash", {"command": "pytest tests/integration/test_rollup.py -q --count=50 -p no:randomly"})
    l7.append(s.assistant("10:15:30", rerun))
    l7.append(s.result("10:16:02", rerun, "." * 76 + " [ 76%]\n" + "." * 24 + " [100%]\n100 passed in 31.08s"))
    l7.append(
        s.assistant(
            "10:16:40",
            s.text(
                "Fixed: the test freezes time at 2026-03-11T23:59:30Z, uses a fixed UTC day and the rollup query now "
                "orders by currency, issued_at. 50 repetitions of both parametrizations pass locally."
            ),
        )
    )

    # ---- 10:26-10:30: the prod attempt (leaf L8) ----
    l8 = [s.user("10:26:10", "Ship 2.14.1 to prod-eu. CHG-2291 is approved.")]
    l8.append(
        s.assistant(
            "10:26:45",
            s.text(
                "My kube context for prod-eu is read-only, so please run it yourself:\n\n"
                "`helm upgrade billing-api charts/billing-api -n billing --kube-context prod-eu -f values/prod-eu.yaml "
                "--set image.tag=2.14.1 --atomic --timeout 5m --wait`"
            ),
        )
    )
    l8.append(s.user("10:29:35", "Running it now."))

    # ---- compaction: leaves, then condensed depth 1 and 2 ----
    def ids(group: list[_StoredMessage]) -> list[int]:
        return [m.message_id for m in group]

    leaf1 = db.leaf(
        main,
        ids(l1),
        (
            "billing-api 2.14.0 deploys to prod-eu fail intermittently (third time this week, about one run in three): "
            "`helm upgrade --atomic --timeout 5m` times out and rolls back to 2.13.2. Staging never fails.\n"
            "- 08:05 Kubernetes events: the pre-upgrade hook job billing-api-migrate exceeded its 300 s "
            "activeDeadlineSeconds (DeadlineExceeded); the app pods were never replaced.\n"
            "- 08:18 The hook runs `alembic upgrade head`; 2.14.0 ships migrations 0047 and 0048.\n"
            "Expand for details about: the full event list, pod and node names."
        ),
        s.at("09:40:12"),
    )
    leaf2 = db.leaf(
        main,
        ids(l2),
        (
            "- 0047 adds nullable invoices.currency and builds ix_invoices_currency_issued_at with a plain "
            "CREATE INDEX; "
            "prod invoices has ~48M rows (staging 1.2M), so the build takes minutes and blocks writes.\n"
            "- Priya (DBA): during the last failed deploy the index build queued behind the nightly reporting query; "
            "checkout latency paged.\n"
            "- Agreed: build the index CONCURRENTLY in its own migration; set lock_timeout for migrations; a longer "
            "hook deadline only after that.\n"
            "Expand for details about: the 0047 source, the lock analysis."
        ),
        s.at("09:40:17"),
    )
    leaf3 = db.leaf(
        main,
        ids(l3),
        (
            "- test_invoice_rollup (tests/integration/test_rollup.py) fails about 1 in 8 CI runs on main "
            "(red runs 8123377310, 8123201877); unrelated to the deploy.\n"
            "- Causes: invoices built with date.today() while the rollup groups by UTC day, and an assertion on "
            "rows[0] of a query without ORDER BY.\n"
            "Expand for details about: the CI run list, the test source."
        ),
        s.at("09:40:22"),
    )
    leaf4 = db.leaf(
        main,
        ids(l4),
        (
            "- 0047 now only adds the nullable column (metadata-only on Postgres 15).\n"
            "- New 0049_invoice_currency_index builds the index with postgresql_concurrently=True inside "
            "autocommit_block().\n"
            "- migrations/env.py sets lock_timeout = '5s' and statement_timeout = '60s' on the migration connection.\n"
            "- 0048 (the backfill, one UPDATE) is unchanged."
        ),
        s.at("09:40:27"),
    )
    d1a = db.condensed(
        main,
        [leaf1, leaf2],
        (
            "Prod-eu deploy failures of billing-api 2.14.0, 08:05-08:41 UTC: the pre-upgrade migration hook "
            "(alembic upgrade head, 300 s deadline) ran out of time because 0047 built an index on the 48M-row "
            "invoices table without CONCURRENTLY and queued behind the nightly reporting query. Staging is too "
            "small to show it. Agreed fix: a concurrent index in its own migration plus a lock_timeout."
        ),
        s.at("09:45:03"),
    )
    d1b = db.condensed(
        main,
        [leaf3, leaf4],
        (
            "08:48-09:38 UTC: the flaky test_invoice_rollup was diagnosed (date.today() against UTC grouping, no "
            "ORDER BY) and left for later. Migrations reworked: 0047 column only, 0049 concurrent index in an "
            "autocommit block, env.py lock_timeout 5s / statement_timeout 60s. The 0048 backfill is still a single "
            "UPDATE."
        ),
        s.at("09:45:08"),
    )
    d2 = db.condensed(
        main,
        [d1a, d1b],
        (
            "Morning of 2026-03-12: billing-api 2.14.0 kept failing its helm upgrade on the prod-eu kubernetes "
            "cluster because the "
            "pre-upgrade database migration hook exceeded 300 s. Root cause found so far: a blocking index build on "
            "invoices (48M rows). Migrations were reworked (column-only 0047, concurrent index 0049, lock_timeout); "
            "the single-statement 0048 backfill was left as is. A separate flaky CI test, test_invoice_rollup, was "
            "diagnosed but not yet fixed."
        ),
        s.at("10:12:30"),
    )
    leaf5 = db.leaf(
        main,
        ids(l5),
        (
            "- Staging-eu: three consecutive helm upgrades with the reworked migrations succeeded.\n"
            "- Migration job 38 s: the 0048 backfill took 4 s on staging's 1.2M invoices, the concurrent index 34 s."
        ),
        s.at("10:12:20"),
    )
    leaf6 = db.leaf(
        main,
        ids(l6),
        (
            "- PR #482 reviewer wants a rollback section in the runbook.\n"
            "- prod-eu helm history: revision 56 (2.14.0) failed in the pre-upgrade hook; revision 57 (chart 3.8.0, "
            "app 2.13.2) is the last good release, restored with `helm rollback billing-api 57 -n billing`. The "
            "schema stays compatible because 0047 only adds a nullable column.\n"
            "- Platform notice in #infra-cn: 「所有服务的 Helm chart 都必须设置 activeDeadlineSeconds，"
            "并且数据库迁移任务不能超过"
            "十分钟」 (by Friday; our hook sets 300 s)."
        ),
        s.at("10:12:25"),
    )
    d1c = db.condensed(
        main,
        [leaf5, leaf6],
        (
            "09:41-10:11 UTC: the reworked migrations passed three staging upgrades (38 s job). Rollback prep: "
            "revision 57 (app 2.13.2) is the prod-eu rollback target for helm rollback, and the schema change is "
            "backwards compatible. Platform rule: charts set activeDeadlineSeconds, migrations stay under ten "
            "minutes."
        ),
        s.at("10:31:40"),
    )
    leaf7 = db.leaf(
        main,
        ids(l7),
        (
            "- Flaky test fixed: test_invoice_rollup now freezes time at 2026-03-11T23:59:30Z (freezegun), builds "
            "invoices for a fixed UTC day and orders the rollup rows by currency, issued_at.\n"
            "- 50 repetitions of both parametrizations pass locally."
        ),
        s.at("10:31:45"),
    )
    leaf8 = db.leaf(
        main,
        ids(l8),
        (
            "- CHG-2291 approved for billing-api 2.14.1 in prod-eu.\n"
            "- The assistant's prod-eu kube context is read-only, so the user ran the upgrade at 10:29: "
            "`helm upgrade billing-api charts/billing-api -n billing --kube-context prod-eu -f values/prod-eu.yaml "
            "--set image.tag=2.14.1 --atomic --timeout 5m --wait`."
        ),
        s.at("10:31:50"),
    )
    main.context = [("summary", x.summary_id, x.created) for x in (d2, d1c, leaf7, leaf8)]

    # ---- 10:35 onwards: the raw context ----
    s.system(
        "10:35:00",
        "Deploy freeze: billing-api production deploys are blocked from 17:00 UTC today until Monday 08:00 UTC. "
        "Changes during the freeze need an approved change ticket and on-call sign-off (@mkaur).",
    )
    s.user(
        "10:36:12",
        "It failed again. Same symptom: helm upgrade timed out after 5m and --atomic rolled it back. Staging was "
        "green three times on the same kubernetes setup, so what is different this time?",
    )
    history = s.call("bash", {"command": "helm history billing-api -n billing --kube-context prod-eu --max 4"})
    s.assistant(
        "10:36:30",
        s.think(
            "Staging passed three times with the concurrent index, so 0049 is probably not what's slow in prod. "
            "The release history will say whether revision 58 failed in the hook or in the rollout; then the hook "
            "job's log will show which migration was running when the deadline hit."
        ),
        s.text("Let me check the release history first."),
        history,
    )
    s.result(
        "10:36:33",
        history,
        "REVISION  UPDATED                   STATUS      CHART              APP VERSION  DESCRIPTION\n"
        '56        Thu Mar 12 07:44:19 2026  failed      billing-api-3.9.0  2.14.0       Upgrade "billing-api" '
        "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
        "57        Thu Mar 12 07:49:31 2026  superseded  billing-api-3.8.0  2.13.2       Rollback to 55\n"
        '58        Thu Mar 12 10:29:40 2026  failed      billing-api-3.9.0  2.14.1       Upgrade "billing-api" '
        "failed: pre-upgrade hooks failed: timed out waiting for the condition\n"
        "59        Thu Mar 12 10:34:52 2026  deployed    billing-api-3.8.0  2.13.2       Rollback to 57",
    )
    job_log = s.call(
        "bash", {"command": "kubectl logs job/billing-api-migrate -n billing --kube-context prod-eu --timestamps"}
    )
    s.assistant(
        "10:36:51",
        s.text("Revision 58 failed in the pre-upgrade hook again, not in the rollout. Here is the hook job's log."),
        job_log,
    )
    s.result(
        "10:36:55",
        job_log,
        "2026-03-12T10:29:52.604Z INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
        "2026-03-12T10:29:52.605Z INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
        "2026-03-12T10:29:52.671Z INFO  [alembic.runtime.migration] Running upgrade 0046 -> 0047, add "
        "invoices.currency\n"
        "2026-03-12T10:29:52.733Z INFO  [alembic.runtime.migration] Running upgrade 0047 -> 0048, backfill "
        "invoices.currency from customers.billing_currency\n"
        "2026-03-12T10:34:52.118Z ERROR [billing.migrations] received SIGTERM, aborting",
    )
    manifest = s.call("bash", {"command": "helm get all billing-api -n billing --kube-context prod-eu --revision 58"})
    s.assistant(
        "10:37:40",
        s.text(
            "This time the index is not the problem: 0047 took 60 ms and the job then sat in 0048, the backfill, "
            "for five minutes until it was killed. On staging that UPDATE touches 1.2M rows; in prod it is one "
            "transaction over 48M. Let me check how the hook is configured in the failed revision."
        ),
        manifest,
    )
    large_id = db.large_file(
        main,
        tool_name="bash",
        payload=_HELM_GET_ALL_58,
        exploration_summary=_HELM_GET_ALL_SUMMARY,
        created=s.at("10:37:44"),
    )
    s.result("10:37:44", manifest, _HELM_GET_ALL_58, large_content=large_id)
    psql = s.call(
        "bash",
        {
            "command": "kubectl exec -n billing --kube-context prod-eu deploy/billing-api -- psql "
            '"$DATABASE_URL" -c "select pid, state, wait_event_type, now() - xact_start as age, '
            "left(query, 60) from pg_stat_activity where datname = 'billing' order by age desc "
            'limit 10"'
        },
    )
    s.assistant(
        "10:38:30",
        s.text(
            "The migrate Job is a pre-install,pre-upgrade hook with activeDeadlineSeconds 300 and backoffLimit 0, "
            "so any migration longer than five minutes fails the whole release. Let me see whether the aborted "
            "backfill left anything running on the database."
        ),
        psql,
    )
    s.user(
        "10:41:02",
        "I killed that command. Please don't open psql sessions on the prod primary, we're in the reporting "
        "window. Priya checked for us: the backfill UPDATE was rolled back when the pod got SIGTERM and no locks "
        "are left, but it spent most of the five minutes waiting behind an anti-wraparound autovacuum on invoices.",
    )
    read_0048 = s.call("read", {"path": "migrations/versions/0048_backfill_invoice_currency.py"})
    grep_hooks = s.call("grep", {"pattern": "helm.sh/hook", "path": "charts/billing-api/templates", "-n": True})
    s.assistant(
        "10:41:40",
        s.text(
            "Understood, no more sessions on the primary. So the single-transaction backfill is the real problem: "
            "it cannot finish in five minutes on 48M rows, and rolling it back wastes the work. Plan:\n"
            "1. rewrite 0048 as a batched backfill (10,000 rows per batch, one commit per batch, resumable);\n"
            "2. take it out of the pre-upgrade hook and run it as a separate post-upgrade Job, so the helm upgrade "
            "only waits for schema changes.\n"
            "Let me look at the migration and at how the hooks are wired in the chart."
        ),
        read_0048,
        grep_hooks,
    )
    s.result("10:41:43", read_0048, _MIGRATION_0048)
    s.result(
        "10:41:43",
        grep_hooks,
        'charts/billing-api/templates/migrate-job.yaml:9:    "helm.sh/hook": pre-install,pre-upgrade\n'
        'charts/billing-api/templates/migrate-job.yaml:10:    "helm.sh/hook-weight": "-5"\n'
        'charts/billing-api/templates/migrate-job.yaml:11:    "helm.sh/hook-delete-policy": before-hook-creation\n'
        'charts/billing-api/templates/smoke-test.yaml:6:    "helm.sh/hook": test',
    )
    batch_write = s.call(
        "write", {"path": "migrations/versions/0048_backfill_invoice_currency.py", "content": _MIGRATION_0048_BATCHED}
    )
    s.assistant(
        "10:43:05",
        s.text(
            "The chart has one hook (the migrate Job) plus the smoke test. First the migration: each batch picks "
            "10,000 invoices with `currency IS NULL`, updates them and commits, until a batch updates nothing."
        ),
        batch_write,
    )
    s.result(
        "10:43:06",
        batch_write,
        f"Successfully wrote {_MIGRATION_0048_BATCHED.count(chr(10)) + 1} lines to "
        "migrations/versions/0048_backfill_invoice_currency.py",
    )
    s.user(
        "10:44:30",
        "From Sato-san in the Tokyo SRE channel. Can you translate it and tell me whether it changes the plan?\n\n"
        "本番環境へのデプロイは 19:00 JST（10:00 UTC）以降なら再開して大丈夫です。"
        "失敗した場合は helm rollback でリビジョン 57 に"
        "戻してください。マイグレーションを手動で実行するのはやめてください。",
    )
    s.assistant(
        "10:45:02",
        s.text(
            "Translation: “Deploying to production is fine again from 19:00 JST (10:00 UTC). If it fails, use helm "
            "rollback to go back to revision 57. Please don't run the migration by hand.”\n\n"
            "It doesn't change the plan: we are past 10:00 UTC, and the backfill will run as a Job from the chart, not "
            "by hand. One correction for the runbook: after this morning's rollback the current good revision is 59 "
            "(a rollback to 57, same chart and app version), so that is what a future rollback should target."
        ),
    )
    s.user(
        "10:46:40",
        "王磊 from the platform team replied in #infra-cn:\n\n"
        "「staging 的部署一直成功，是因为 staging 的数据库只有生产环境的四十分之一。"
        "迁移脚本必须分批执行，每批提交一次，而且中断以后要能继续。」\n\n"
        "Can you make sure the new backfill does that, and run its tests?",
    )
    pytest_1 = s.call("bash", {"command": "pytest tests/migrations/test_0048_backfill.py -q", "timeout": 120})
    s.assistant(
        "10:47:10",
        s.text(
            "He says staging deploys always succeed because the staging database is only 1/40 of production, and "
            "that the migration must run in batches, commit each batch, and be able to continue after an "
            "interruption. That is exactly the rewrite; running its tests now."
        ),
        pytest_1,
    )
    s.result(
        "10:47:29",
        pytest_1,
        "..F                                                                      [100%]\n"
        "=================================== FAILURES ===================================\n"
        "_______________ test_backfill_terminates_with_orphaned_invoices ________________\n\n"
        "db = <Connection postgresql://billing@localhost:5433/billing_test>\n\n"
        "    @pytest.mark.timeout(10)\n"
        "    def test_backfill_terminates_with_orphaned_invoices(db):\n"
        "        seed_invoices(db, 25_000, customer_currency=None, share=0.02)\n"
        '>       run_migration(db, "0048")\n'
        "E       Failed: Timeout >10.0s\n\n"
        "tests/migrations/test_0048_backfill.py:61: Failed\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/migrations/test_0048_backfill.py::test_backfill_terminates_with_orphaned_invoices - Failed: "
        "Timeout >10.0s\n"
        "1 failed, 2 passed in 12.41s",
        is_error=True,
    )
    keyset = s.call(
        "edit",
        {
            "path": "migrations/versions/0048_backfill_invoice_currency.py",
            "oldText": "WHERE i.currency IS NULL\n         LIMIT :batch",
            "newText": "WHERE i.id > :last_id\n         ORDER BY i.id\n         LIMIT :batch",
        },
    )
    s.assistant(
        "10:48:15",
        s.text(
            "The loop never ends when some customers have no billing_currency: those invoices stay NULL after the "
            "update, so every batch selects them again. Switching to keyset pagination over invoices.id (start at "
            "the first id with `currency IS NULL`, advance `last_id` each batch) fixes that and keeps the job "
            "resumable."
        ),
        keyset,
    )
    s.result(
        "10:48:16",
        keyset,
        "Successfully replaced 1 occurrence in migrations/versions/0048_backfill_invoice_currency.py",
    )
    pytest_2 = s.call("bash", {"command": "pytest tests/migrations/test_0048_backfill.py -q", "timeout": 120})
    s.assistant("10:48:40", pytest_2)
    s.result(
        "10:48:44",
        pytest_2,
        "...                                                                      [100%]\n3 passed in 3.02s",
    )
    s.user(
        "10:52:10",
        "Nice. Meanwhile CI on the PR is red again: test_invoice_rollup failed. I thought we fixed that flaky test?",
    )
    ci_log = s.call("bash", {"command": "gh run view 8124015530 --log-failed | tail -n 12"})
    s.assistant("10:52:31", ci_log)
    s.result(
        "10:52:36",
        ci_log,
        "test (3.12)  Run pytest  [gw3] FAILED tests/integration/test_rollup.py::test_invoice_rollup[eur]\n"
        "test (3.12)  Run pytest  ____________________ test_invoice_rollup[eur] ____________________\n"
        "test (3.12)  Run pytest  [gw3] linux -- Python 3.12.2 /opt/hostedtoolcache/Python/3.12.2/x64/bin/python\n"
        "test (3.12)  Run pytest  sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key "
        'value violates unique constraint "invoices_number_key"\n'
        "test (3.12)  Run pytest  DETAIL:  Key (number)=(INV-000001) already exists.\n"
        "test (3.12)  Run pytest  tests/conftest.py:88: in invoice_factory\n"
        'test (3.12)  Run pytest      number=f"INV-{next(_invoice_numbers):06d}",\n'
        "test (3.12)  Run pytest  = 1 failed, 611 passed, 4 skipped in 212.37s (0:03:32) =",
    )
    conftest = s.call(
        "edit",
        {
            "path": "tests/conftest.py",
            "oldText": '        number=f"INV-{next(_invoice_numbers):06d}",\n',
            "newText": '        number=f"INV-{worker_id}-{next(_invoice_numbers):06d}",\n',
        },
    )
    s.assistant(
        "10:53:20",
        s.text(
            "A different flake this time. The invoice_factory fixture numbers invoices from a module-level "
            "counter, and with pytest-xdist each worker has its own counter but all workers share the test "
            "database, so two workers can both insert INV-000001. Prefixing the number with the xdist worker id "
            "makes it unique."
        ),
        conftest,
    )
    s.result("10:53:21", conftest, "Successfully replaced 1 occurrence in tests/conftest.py")
    s.user(
        "10:58:00",
        "Spawn two subagents: one to dry-run the batched backfill against last night's staging snapshot and report "
        "timings, and one to rerun the rollup test 200 times with random ordering. I'll draft the runbook meanwhile.",
    )
    spawn_dry_run = s.call(
        "sessions_spawn",
        {
            "label": "backfill-dry-run",
            "task": "Dry-run the batched backfill in migrations/versions/0048_backfill_invoice_currency.py against the "
            "staging snapshot restored from 2026-03-11 (database billing_snapshot on staging-eu). Report total "
            "time, batch count, max lock wait, and whether it resumes after a forced stop. Do not touch prod.",
        },
    )
    spawn_flake = s.call(
        "sessions_spawn",
        {
            "label": "rollup-flake-hunt",
            "task": "On branch fix/deploy-migration-race, run tests/integration/test_rollup.py 200 times with "
            "pytest-randomly (seeds 1-200) and -n 4, and report every failure with its seed.",
        },
    )
    s.assistant("10:58:20", spawn_dry_run, spawn_flake)
    s.result(
        "10:58:21",
        spawn_dry_run,
        js_stringify(
            {"status": "accepted", "childSessionKey": _SUBAGENT_DRY_RUN, "runId": "run_01HQ6ZK3M8D2W4T9YV7XN5B1CE"}
        ),
    )
    s.result(
        "10:58:21",
        spawn_flake,
        js_stringify(
            {"status": "accepted", "childSessionKey": _SUBAGENT_FLAKE_HUNT, "runId": "run_01HQ6ZK3QF0R7J2C6M9AH4WS8D"}
        ),
    )
    s.assistant(
        "10:58:40",
        s.text(
            "Both subagents are running: backfill-dry-run and rollup-flake-hunt. I'll fold their results in when they "
            "report."
        ),
    )
    s.user(
        "11:14:30",
        (
            f"[Inter-session message] sourceSession={_SUBAGENT_DRY_RUN} sourceTool=subagent_announce\n"
            "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n"
            "[Internal task completion event]\n"
            "Child result: batched backfill dry-run on the staging snapshot of 2026-03-11 (48,213,377 invoices): "
            "4,822 batches of 10,000 rows, 11m42s in total, max lock wait 180 ms, no conflicts with autovacuum. "
            "Forced stop after batch 2,000; the second run resumed at batch 2,001 and finished cleanly. "
            "1,207 invoices of customers without billing_currency stay NULL, as expected.\n"
            "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
        ),
    )
    s.assistant(
        "11:15:10",
        s.text(
            "The dry run confirms the design but also settles where the backfill runs: 11m42s is well over the 300 s "
            "hook deadline and over the platform team's ten-minute limit for migration jobs. So 0048 leaves the "
            "alembic chain: the pre-upgrade hook runs only schema migrations (0047, 0049), and the backfill becomes a "
            "post-upgrade Job (`billing-api-backfill`, activeDeadlineSeconds 1800) that resumes safely if it is "
            "interrupted."
        ),
    )
    s.user(
        "11:16:05",
        "Write the rollback section for the runbook: the exact helm rollback command, how to check the migration "
        "state, and what to do if the backfill job is half done.",
    )
    s.assistant("11:17:20", s.text(_RUNBOOK))

    _build_dry_run_subagent(db)
    return s.live


def _build_dry_run_subagent(db: _SessionDb) -> None:
    """The archived subagent session whose completion the main conversation received."""
    conv = db.conversation(
        _SUBAGENT_DRY_RUN,
        "backfill-dry-run",
        _DEMO_DAY + timedelta(hours=10, minutes=58, seconds=25),
        active=False,
        archived=_DEMO_DAY + timedelta(hours=11, minutes=14, seconds=40),
        archive_cause="subagent_ended",
    )
    s = _Script(db, conv, _DEMO_DAY, thinking_signatures=True)
    s.user(
        "10:58:25",
        (
            "[Subagent Task] Dry-run the batched backfill in migrations/versions/0048_backfill_invoice_currency.py "
            "against the staging snapshot restored from 2026-03-11 (database billing_snapshot on staging-eu). Report "
            "total time, batch count, max lock wait, and whether it resumes after a forced stop. Do not touch prod."
        ),
    )
    count = s.call(
        "bash", {"command": 'psql "$SNAPSHOT_URL" -c "select count(*) from invoices where currency is null"'}
    )
    s.assistant("10:58:41", s.text("Counting the rows the backfill has to touch."), count)
    s.result("10:58:49", count, "  count\n----------\n 48213377\n(1 row)")
    first = s.call(
        "bash",
        {
            "command": 'DATABASE_URL="$SNAPSHOT_URL" python -m billing.tools.run_backfill '
            "--revision 0048 --batch-size 10000 --stop-after 2000",
            "timeout": 2400,
        },
    )
    s.assistant("10:59:02", s.text("Running the first 2,000 batches, then stopping on purpose."), first)
    s.result(
        "11:03:55",
        first,
        "batch    500/4822  rows   5,000,000  elapsed 1m12s  lock_wait_max  96 ms\n"
        "batch  1,000/4822  rows  10,000,000  elapsed 2m25s  lock_wait_max 131 ms\n"
        "batch  1,500/4822  rows  15,000,000  elapsed 3m38s  lock_wait_max 131 ms\n"
        "batch  2,000/4822  rows  20,000,000  elapsed 4m51s  lock_wait_max 180 ms\n"
        "stopped after 2,000 batches (--stop-after)",
    )
    resume = s.call(
        "bash",
        {
            "command": 'DATABASE_URL="$SNAPSHOT_URL" python -m billing.tools.run_backfill '
            "--revision 0048 --batch-size 10000",
            "timeout": 2400,
        },
    )
    s.assistant("11:04:10", s.text("Resuming without cleanup."), resume)
    s.result(
        "11:11:01",
        resume,
        "resuming at invoice id 20,000,117 (batch 2,001)\n"
        "batch  3,000/4822  rows  30,000,000  elapsed 2m26s  lock_wait_max 122 ms\n"
        "batch  4,000/4822  rows  40,000,000  elapsed 4m52s  lock_wait_max 154 ms\n"
        "batch  4,822/4822  rows  48,212,170  elapsed 6m51s  lock_wait_max 154 ms\n"
        "done: 1,207 rows left NULL (customers without billing_currency)",
    )
    s.assistant(
        "11:14:35",
        s.text(
            "Batched backfill dry-run on the staging snapshot of 2026-03-11 (48,213,377 invoices): 4,822 batches of "
            "10,000 rows, 11m42s in total, max lock wait 180 ms, no conflicts with autovacuum. Forced stop after batch "
            "2,000; the second run resumed at batch 2,001 and finished cleanly. 1,207 invoices of customers without "
            "billing_currency stay NULL, as expected."
        ),
    )


def _demo_volatile_inputs() -> list[dict[str, Any]]:
    """Live inputs the host holds this turn that were never persisted."""
    announced = _DEMO_DAY + timedelta(hours=11, minutes=21, seconds=40)
    retried = _DEMO_DAY + timedelta(hours=11, minutes=22, seconds=5)
    return [
        {
            "role": "user",
            "content": (
                f"[Inter-session message] sourceSession={_SUBAGENT_FLAKE_HUNT} sourceTool=subagent_announce\n"
                "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n"
                "[Internal task completion event]\n"
                "Child result: ran tests/integration/test_rollup.py 200 times with pytest-randomly seeds 1-200 and "
                "-n 4 on fix/deploy-migration-race: 200 passed, 0 failed. On main the same loop fails 9/200 "
                "(seeds 17, 42, 58, 91, 103, 127, 150, 176, 188), all with UniqueViolation on invoices_number_key.\n"
                "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
            ),
            "timestamp": _epoch_ms(announced),
        },
        {
            "role": "user",
            "content": (
                "[Retry after the previous model attempt failed or timed out]\n"
                "Before I start the prod deploy: double-check the helm rollback steps. Is revision 59 still the "
                "right rollback target, and does the database migration state need any manual step?"
            ),
            "timestamp": _epoch_ms(retried),
        },
    ]


_DEMO_LIVE_TAIL = 4  # persisted messages at the end of the demo that the host still holds live


def demo_live_messages() -> list[dict[str, Any]]:
    """The host's live window for the demo's next turn.

    The last persisted messages exactly as the host holds them (so they are covered by the stored
    context), then a subagent announcement and a retry prompt that were never persisted.
    """
    db = _SessionDb(_Ids("demo"))
    live = _build_demo(db)
    return [dict(m) for m in live[-_DEMO_LIVE_TAIL:]] + _demo_volatile_inputs()


# --- generated sessions (medium, large) ----------------------------------------------------
#
# Template conversations across several engineering topics, so that different prompts score
# different items.  All randomness comes from one random.Random(seed).

_SERVICES = (
    "billing-api",
    "checkout-web",
    "ledger-worker",
    "auth-gateway",
    "search-indexer",
    "notifications",
    "inventory-svc",
    "reporting-etl",
)
_ENVS = ("prod-eu", "prod-us", "staging-eu", "staging-us")
_TABLES = ("invoices", "payments", "customers", "orders", "ledger_entries", "sessions", "refunds")
_COLUMNS = ("customer_id", "created_at", "status", "external_ref", "currency", "updated_at")
_TESTS = (
    ("test_invoice_rollup", "tests/integration/test_rollup.py"),
    ("test_refund_webhook", "tests/integration/test_webhooks.py"),
    ("test_checkout_flow", "tests/e2e/test_checkout.py"),
    ("test_session_expiry", "tests/unit/test_sessions.py"),
    ("test_search_reindex", "tests/integration/test_search.py"),
    ("test_ledger_balance", "tests/unit/test_ledger.py"),
)
_PEOPLE = ("Priya", "Marco", "Aiko", "Jonas", "Fatima", "Wei", "Sam", "Lucía")
_SLUGS = (
    "add_status_index",
    "split_address_columns",
    "backfill_external_ref",
    "drop_legacy_flags",
    "partition_by_month",
    "add_currency_column",
)
_CACHE_KEYS = ("product:{id}", "cart:{id}", "price:eu:{id}", "session:{id}", "search:q:{id}")


def _turn_context(rng: random.Random) -> dict[str, Any]:
    svc = rng.choice(_SERVICES)
    pods = rng.randint(3, 12)
    rev = rng.randint(20, 400)
    minor = rng.randint(3, 30)
    test, testfile = rng.choice(_TESTS)
    ms0 = rng.randint(40, 300)
    s0 = rng.randint(40, 120)
    head = rng.randint(40, 180)
    return {
        "svc": svc,
        "ns": svc.split("-")[0],
        "env": rng.choice(_ENVS),
        "ver": f"2.{minor}.{rng.randint(1, 9)}",
        "prev": f"2.{minor}.0",
        "rev": rev,
        "rev0": rev - 1,
        "pods": pods,
        "n": rng.randint(1, pods - 1),
        "restarts": rng.randint(4, 40),
        "mem": rng.choice((256, 384, 512, 768)),
        "mem2": rng.choice((1024, 1536, 2048)),
        "table": rng.choice(_TABLES),
        "col": rng.choice(_COLUMNS),
        "rows": f"{rng.randint(2, 95)}M",
        "minutes": rng.randint(3, 40),
        "ms0": ms0,
        "ms": ms0 * rng.randint(3, 12),
        "pct": rng.randint(2, 40),
        "head": f"{head:04d}",
        "head0": f"{head - rng.randint(1, 4):04d}",
        "slug": rng.choice(_SLUGS),
        "test": test,
        "testfile": testfile,
        "run": rng.randint(8_100_000_000, 8_199_999_999),
        "k": rng.randint(1, 9),
        "s0": s0,
        "s": s0 + rng.randint(20, 200),
        "kb": rng.randint(40, 900),
        "hour": rng.randint(0, 22),
        "person": rng.choice(_PEOPLE),
        "pr": rng.randint(300, 2400),
        "pod": f"{svc}-{rng.getrandbits(36):09x}-{rng.getrandbits(20):05x}",
        "key": rng.choice(_CACHE_KEYS).format(id=rng.randint(1000, 99999)),
        "hits": rng.randint(60, 99),
        "seed": rng.randint(1, 9999),
        "lines": rng.randint(2, 60),
    }


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    args: Callable[[dict[str, Any]], dict[str, Any]]
    output: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class _Topic:
    key: str
    asks: tuple[str, ...]
    intros: tuple[str, ...]
    tools: tuple[_Tool, ...]
    answers: tuple[str, ...]
    notes: tuple[str, ...]
    cjk: tuple[str, ...]
    thoughts: tuple[str, ...]


_TOPICS: tuple[_Topic, ...] = (
    _Topic(
        key="deploy",
        asks=(
            "The {svc} rollout in {env} is stuck at {n}/{pods} ready pods. Can you see what's wrong?",
            "helm upgrade of {svc} {ver} timed out in {env}. Should we roll back?",
            "Can you roll back {svc} in {env} to the previous helm revision? {ver} returns 502s on /checkout.",
            "Pods of {svc} keep restarting after the deploy ({restarts} restarts in 10 minutes). What's going on?",
            "What changed between helm revision {rev0} and {rev} of {svc}?",
            "Readiness probes of {svc} fail in {env} since the last kubernetes deploy.",
        ),
        intros=(
            "Let me check the rollout status first.",
            "Checking the release history and the pod events.",
            "I'll look at the pods in the {ns} namespace.",
        ),
        tools=(
            _Tool(
                "bash",
                lambda c: {
                    "command": "kubectl rollout status deploy/{svc} -n {ns} --context {env} --timeout 60s".format(**c)
                },
                'Waiting for deployment "{svc}" rollout to finish: {n} of {pods} updated replicas are available...\n'
                "error: timed out waiting for the condition",
                error=True,
            ),
            _Tool(
                "bash",
                lambda c: {"command": "helm history {svc} -n {ns} --kube-context {env} --max 3".format(**c)},
                "REVISION  UPDATED                   STATUS      CHART            APP VERSION  DESCRIPTION\n"
                "{rev0}       Mon Nov  3 09:12:44 2025  superseded  {svc}-1.8.0    {prev}       Upgrade complete\n"
                "{rev}       Tue Nov  4 14:02:10 2025  deployed    {svc}-1.9.0    {ver}       Upgrade complete",
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": "kubectl get pods -n {ns} --context {env} -l app.kubernetes.io/name={svc}".format(**c)
                },
                "NAME                              READY   STATUS             RESTARTS        AGE\n"
                "{pod}   0/1     CrashLoopBackOff   {restarts} (41s ago)   12m\n"
                "{svc}-7d9c6b5f4-x2m8q            1/1     Running            0               3d",
            ),
            _Tool(
                "bash",
                lambda c: {"command": "helm rollback {svc} {rev0} -n {ns} --kube-context {env} --wait".format(**c)},
                "Rollback was a success! Happy Helming!",
            ),
            _Tool(
                "bash",
                lambda c: {"command": "kubectl describe pod {pod} -n {ns} --context {env} | tail -n 5".format(**c)},
                "Events:\n  Type     Reason     Age                From     Message\n"
                "  Warning  Unhealthy  2m (x{restarts} over 9m)  kubelet  Readiness probe failed: HTTP probe failed "
                "with statuscode: 503\n"
                "  Warning  BackOff    40s (x{n} over 8m)   kubelet  Back-off restarting failed container api",
            ),
            _Tool(
                "read",
                lambda c: {"path": "charts/{svc}/values.yaml".format(**c)},
                "replicaCount: {pods}\nimage:\n  repository: registry.internal.example.com/{ns}/{svc}\n"
                "  tag: {ver}\nstrategy:\n  maxSurge: 1\n  maxUnavailable: 0\nresources:\n  limits:\n"
                "    memory: {mem}Mi\nreadiness:\n  path: /healthz/ready\n  periodSeconds: 5",
            ),
        ),
        answers=(
            "The new ReplicaSet never became ready: the readiness probe on /healthz/ready returns 503 because {svc} "
            "{ver} waits for a config key that only exists in staging. `helm rollback {svc} {rev0}` is safe; the "
            "real fix is adding the key to values/{env}.yaml.",
            "Rollback done: {svc} is back on helm revision {rev0} in {env} and all {pods} pods are ready. The failed "
            "revision {rev} stays in the history for the post-mortem.",
            "The restarts are OOM kills: the container limit is {mem}Mi and {svc} {ver} loads the whole price "
            "catalogue at startup. Raising the limit to {mem2}Mi in values.yaml, or loading the catalogue lazily, "
            "fixes the crash loop.",
            "Between revision {rev0} and {rev} only the image tag and maxUnavailable changed (0 → 25%). With {pods} "
            "replicas that lets a pod go down before its replacement is ready, which explains the 502s during the "
            "rollout.",
        ),
        notes=(
            "{svc} rollout in {env} stalled at {n}/{pods} ready pods; readiness probe on /healthz/ready failing.",
            "Rolled back {svc} in {env} to helm revision {rev0} after {ver} returned 502s.",
            "helm upgrade of {svc} {ver} timed out in {env}; kubernetes events show readiness failures.",
            "{svc} pods OOM-killed after the {ver} deploy; memory limit raised from {mem}Mi to {mem2}Mi.",
        ),
        cjk=(
            "{svc} 在 {env} 的部署又失败了，要不要先回滚到上一个版本？",
            "{svc} の {env} へのデプロイが失敗しました。ロールバックしたほうがいいですか？",
        ),
        thoughts=(
            "The rollout is stuck, so either the new pods never become ready or the old ones cannot be removed. "
            "The pod events will tell which.",
            "Before rolling back I want the revision history, so the rollback target is the last good revision and "
            "not just the previous one.",
        ),
    ),
    _Topic(
        key="database",
        asks=(
            "The migration on {table} has been running for {minutes} minutes in {env}. Is it blocking anything?",
            "Can you write a database migration that adds an index on {table}({col}) without locking the table?",
            "Alembic says head is {head} but prod is on {head0}. How do we get there safely?",
            "Queries on {table} got slow after last night's migration: p95 went from {ms0} ms to {ms} ms.",
            "Is it safe to drop {table}.{col} now that {svc} {ver} no longer reads it?",
        ),
        intros=(
            "Checking what the migration is waiting on (read replica only).",
            "Let me read the migration first.",
            "I'll compare the query plans before and after.",
        ),
        tools=(
            _Tool(
                "bash",
                lambda c: {
                    "command": 'psql "$REPLICA_URL" -c "select pid, wait_event_type, state, '
                    "left(query, 50) from pg_stat_activity where wait_event_type = "
                    "'Lock'\"".format(**c)
                },
                "  pid  | wait_event_type | state  |                       left\n"
                "-------+-----------------+--------+---------------------------------------------------\n"
                " 48211 | Lock            | active | ALTER TABLE {table} ADD COLUMN {col}_v2 text\n"
                " 48377 | Lock            | active | INSERT INTO {table} (id, {col}, created_at) VALUES\n"
                "({n} rows)",
            ),
            _Tool(
                "read",
                lambda c: {"path": "migrations/versions/{head}_{slug}.py".format(**c)},
                '"""{slug}\n\nRevision ID: {head}\nRevises: {head0}\n"""\nfrom alembic import op\n\n'
                'revision = "{head}"\ndown_revision = "{head0}"\n\n\ndef upgrade() -> None:\n'
                '    op.create_index("ix_{table}_{col}", "{table}", ["{col}"])\n',
            ),
            _Tool(
                "bash",
                lambda c: {"command": "alembic history -r {head0}:{head}".format(**c)},
                "{head0} -> {head} (head), {slug}\n{head0} (branchpoint) -> {head0}_hotfix, fix {table} defaults",
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": 'psql "$REPLICA_URL" -c "explain analyze select * from {table} '
                    'where {col} = $1 order by created_at desc limit 50"'.format(**c)
                },
                "Limit  (cost=0.56..212.40 rows=50 width=188) (actual time={ms}.113..{ms}.402 rows=50 loops=1)\n"
                "  ->  Seq Scan on {table}  (cost=0.00..1894211.00 rows=44710 width=188)\n"
                "        Filter: ({col} = '42'::text)\n        Rows Removed by Filter: {rows}\n"
                "Planning Time: 0.412 ms\nExecution Time: {ms}.488 ms",
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "{col}".format(**c), "path": "src", "-n": True},
                "src/{ns}/models.py:{lines}:    {col} = mapped_column(String(64), index=True)\n"
                "src/{ns}/repository.py:{n}{k}:        .where({table}.c.{col} == value)",
            ),
        ),
        answers=(
            "The migration holds an ACCESS EXCLUSIVE lock on {table} while it rewrites the table, and {n} sessions "
            "are queued behind it. On {rows} rows this kind of database migration has to be split: CREATE INDEX "
            "CONCURRENTLY for indexes, batched updates for backfills.",
            "Here is a migration that builds ix_{table}_{col} CONCURRENTLY inside an autocommit block, so {table} "
            "stays writable. It takes longer (about {minutes} minutes on {rows} rows) but never blocks writes.",
            "The planner switched to a sequential scan because the migration dropped the old composite index before "
            "the new one was valid. Recreating ix_{table}_{col} brings p95 back to {ms0} ms.",
            "Yes, once {svc} {ver} is fully rolled out. Do it in two releases: stop writing the column, deploy, then "
            "drop it in a later migration so that a rollback to {prev} still works.",
        ),
        notes=(
            "Migration {head} on {table} ({rows} rows) held an ACCESS EXCLUSIVE lock for {minutes} minutes in {env}.",
            "New migration builds ix_{table}_{col} with CREATE INDEX CONCURRENTLY in an autocommit block.",
            "p95 of {table} queries regressed from {ms0} ms to {ms} ms after the migration dropped an index.",
            "Dropping {table}.{col} split into two releases so rollback to {prev} stays possible.",
        ),
        cjk=(
            "{table} 表的数据库迁移已经跑了 {minutes} 分钟，还在锁表吗？",
            "{table} のマイグレーションが {minutes} 分以上かかっています。本番のデータベースは大丈夫ですか？",
        ),
        thoughts=(
            "A migration that runs this long on a big table is usually either waiting for a lock or rewriting the "
            "table. pg_stat_activity on the replica tells which without touching the primary.",
        ),
    ),
    _Topic(
        key="tests",
        asks=(
            "{test} failed again on CI (run {run}). Is it flaky or did we break something?",
            "Can you find out why {test} only fails under pytest-xdist?",
            "CI was red {k} times this week, always in tests/integration. Is there a pattern in the flaky tests?",
            "Please quarantine {test} until we fix it, it blocks every merge.",
        ),
        intros=(
            "Let me pull the failing log from CI.",
            "I'll try to reproduce it locally with random ordering.",
            "Reading the test first.",
        ),
        tools=(
            _Tool(
                "bash",
                lambda c: {"command": "gh run view {run} --log-failed | tail -n 4".format(**c)},
                "test (3.12)  Run pytest  FAILED {testfile}::{test} - AssertionError: assert {n}{k} == {k}{n}\n"
                "test (3.12)  Run pytest  = 1 failed, {pr} passed, 4 skipped in 211.90s (0:03:31) =",
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": 'pytest {testfile}::{test} -q --count=30 -p randomly -p "randomly_seed={seed}"'.format(
                        **c
                    )
                },
                "..F....F......................                                            [100%]\n"
                "FAILED {testfile}::{test}[{k}-30] - AssertionError\n2 failed, 28 passed in 9.84s",
                error=True,
            ),
            _Tool(
                "read",
                lambda c: {"path": c["testfile"], "offset": 1, "limit": 30},
                'import time\n\nimport pytest\n\n\ndef {test}(client, worker):\n    job = client.post("/jobs").json()\n'
                "    time.sleep(0.5)  # wait for the worker\n    assert client.get(f\"/jobs/{{job['id']}}\").json()"
                '["state"] == "done"',
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "time.sleep|date.today", "path": "tests", "-n": True},
                "{testfile}:{lines}:    time.sleep(0.5)  # wait for the worker\n"
                "tests/integration/test_rollup.py:11:    today = date.today()",
            ),
        ),
        answers=(
            "{test} is flaky, not broken: it asserts on rows returned without ORDER BY and fails 2/30 runs locally "
            "with random ordering. Adding ORDER BY id makes the test deterministic.",
            "Under pytest-xdist the workers share one test database while the fixture numbers records from a "
            "module-level counter, so two workers insert the same key. Putting the worker id into the key fixes it.",
            "The {k} red runs all hit tests that sleep to wait for the background worker. Replacing the sleeps with "
            "polling on the job state made the flaky tests pass 200 reruns in a row.",
            "I marked {test} with @pytest.mark.flaky(reruns=2) and opened an issue to fix it properly; CI is green "
            "again.",
        ),
        notes=(
            "{test} is a flaky test (unordered query results), fixed with ORDER BY id; 30/30 passes with random "
            "ordering.",
            "xdist workers shared a counter-based fixture key; {test} fixed by including the worker id.",
            "Flaky integration tests traced to time.sleep() waits; replaced by polling, 200 CI reruns green.",
            "{test} quarantined with @pytest.mark.flaky(reruns=2) pending a real fix.",
        ),
        cjk=(
            "{test} 这个测试在 CI 上又失败了，是不稳定的测试吗？",
            "{test} のテストがまた CI で落ちました。フレーキーなテストでしょうか？",
        ),
        thoughts=(
            "A test that fails one run in ten is almost always order- or timing-dependent. Random ordering with a "
            "fixed seed should reproduce it.",
        ),
    ),
    _Topic(
        key="frontend",
        asks=(
            "The production build of checkout-web went from {s0}s to {s}s. What happened?",
            "The checkout bundle grew by {kb} KB after the last merge. Can you find the culprit?",
            "We get a hydration mismatch warning on /cart in production. Any idea?",
            "Lighthouse score for the product page dropped to {hits}. Is it the new hero image?",
        ),
        intros=("Let me run the build and look at the chunk sizes.", "Checking the bundle composition."),
        tools=(
            _Tool(
                "bash",
                lambda c: {"command": "npx vite build --mode production"},
                "vite v5.4.2 building for production...\n✓ 1843 modules transformed.\n"
                "dist/assets/index-4f8a2c1e.js     {kb}.{k}2 kB │ gzip: {n}{k}.41 kB\n"
                "dist/assets/vendor-9b3e7d20.js   1,204.77 kB │ gzip: 371.06 kB\n"
                "(!) Some chunks are larger than 500 kB after minification.\n✓ built in {s}.{k}s",
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "Date.now\\(\\)|Math.random\\(\\)", "path": "src/components", "-n": True},
                "src/components/CartSummary.tsx:{lines}:  const renderedAt = Date.now();\n"
                "src/components/PromoBanner.tsx:{n}{k}:  const variant = Math.random() > 0.5 ? 'a' : 'b';",
            ),
            _Tool(
                "read",
                lambda c: {"path": "vite.config.ts"},
                "export default defineConfig({{\n  plugins: [react()],\n  build: {{\n    sourcemap: true,\n"
                "    rollupOptions: {{ output: {{ manualChunks: undefined }} }},\n  }},\n}});",
            ),
        ),
        answers=(
            "The build got slower because source maps were switched on for production in vite.config.ts; with "
            "1,843 modules that doubles the time. Turning them into hidden source maps keeps error reports working.",
            "The {kb} KB come from importing the whole date-fns locale set in PromoBanner. Importing only the two "
            "locales we ship brings the bundle back under 500 kB.",
            "The hydration mismatch comes from CartSummary rendering Date.now() on the server and again on the "
            "client. Rendering the timestamp in an effect removes the warning.",
        ),
        notes=(
            "checkout-web production build slowed from {s0}s to {s}s: source maps enabled in vite.config.ts.",
            "Bundle +{kb} KB traced to a full date-fns locale import in PromoBanner.",
            "Hydration mismatch on /cart caused by Date.now() during server rendering.",
        ),
        cjk=("结账页面的打包体积又变大了 {kb} KB，能查一下原因吗？",),
        thoughts=("Build time and bundle size usually move together; the chunk report shows which one changed.",),
    ),
    _Topic(
        key="auth",
        asks=(
            "Users get logged out after {minutes} minutes even though the session TTL is 12h. Can you check "
            "auth-gateway?",
            "The OAuth callback fails with invalid_grant for some users since this morning.",
            "Rotate the JWT signing key for auth-gateway without logging everyone out.",
            "SSO login from the partner portal loops back to /login. What broke?",
        ),
        intros=("Let me look at the session settings.", "Checking the token endpoint responses."),
        tools=(
            _Tool(
                "read",
                lambda c: {"path": "services/auth-gateway/config/{env}.yaml".format(**c)},
                "session:\n  ttl: 12h\n  refresh_window: 15m\n  cookie:\n    same_site: strict\n"
                "jwt:\n  issuer: https://auth.internal.example.com\n  access_token_ttl: {minutes}m\n"
                "  signing_keys: [key-2025-10]",
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": "kubectl logs deploy/auth-gateway -n auth --context {env} --since=1h "
                    "| grep invalid_grant | tail -n 3".format(**c)
                },
                '2025-11-04T0{k}:12:03Z WARN token exchange failed error=invalid_grant reason="code expired" '
                "skew_ms={ms}\n"
                '2025-11-04T0{k}:12:41Z WARN token exchange failed error=invalid_grant reason="code expired" '
                "skew_ms={ms0}",
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "same_site|SameSite", "path": "services/auth-gateway", "-n": True},
                "services/auth-gateway/config/{env}.yaml:5:    same_site: strict\n"
                "services/auth-gateway/src/session.ts:{lines}:  sameSite: config.session.cookie.same_site,",
            ),
        ),
        answers=(
            "The 12h TTL is fine; the access token lives {minutes} minutes and the refresh window is only 15 "
            "minutes, so clients that sleep longer cannot refresh the session. Widening the refresh window fixes "
            "the early logouts.",
            "invalid_grant comes from clock skew: pods on two nodes are {ms} ms behind NTP, so authorization codes "
            "look expired. Restarting chrony on those nodes fixed it.",
            "Key rotation plan: publish key-2025-11 in the JWKS next to key-2025-10, sign new tokens with the new "
            "key, and drop the old key after the longest token TTL has passed. Nobody gets logged out.",
            "The SSO loop is the session cookie's SameSite=strict: the partner portal redirect is cross-site, so "
            "the browser drops the cookie. SameSite=lax is enough for a top-level redirect.",
        ),
        notes=(
            "Early logouts: access token TTL {minutes}m with a 15m refresh window; refresh window widened.",
            "OAuth invalid_grant caused by {ms} ms clock skew on two nodes; chrony restarted.",
            "JWT signing key rotation planned with both keys in the JWKS during the overlap.",
            "SSO redirect loop fixed by switching the session cookie from SameSite=strict to lax.",
        ),
        cjk=("合作伙伴门户的单点登录又一直跳回登录页了。",),
        thoughts=("Logouts long before the TTL usually mean the refresh path fails, not the session store.",),
    ),
    _Topic(
        key="observability",
        asks=(
            "The p99 latency alert for {svc} fired at {hour}:00. Is it real?",
            "Can you add a Prometheus alert for {svc} when the 5xx rate is above {pct}% for 10 minutes?",
            "Grafana shows a gap in the {svc} metrics between {hour}:00 and {hour}:20. Did scraping stop?",
        ),
        intros=("Querying Prometheus for the last hour.", "Let me look at the alert rules."),
        tools=(
            _Tool(
                "bash",
                lambda c: {
                    "command": "promql 'histogram_quantile(0.99, sum by (le) (rate("
                    'http_request_duration_seconds_bucket{{service="{svc}"}}[5m])))\' '
                    "--since 1h".format(**c)
                },
                "time                  value\n{hour}:00  0.{k}{n}1\n{hour}:05  {n}.{k}04\n{hour}:10  {n}.{k}87\n"
                "{hour}:15  0.{k}12",
            ),
            _Tool(
                "read",
                lambda c: {"path": "deploy/alerts/{svc}.rules.yaml".format(**c)},
                "groups:\n  - name: {svc}\n    rules:\n      - alert: {svc}HighLatency\n"
                "        expr: histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket"
                '{{service="{svc}"}}[5m]))) > 1\n        for: 5m',
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": "kubectl get servicemonitor {svc} -n monitoring -o "
                    "jsonpath='{{.spec.endpoints[0].interval}}'".format(**c)
                },
                "30s",
            ),
        ),
        answers=(
            "The alert is real but short: p99 went over 1 s for about 12 minutes around {hour}:05, in step with a "
            "batch job that saturated the database pool. It recovered without intervention.",
            "Added {svc}HighErrorRate: sum(rate(5xx)) / sum(rate(all)) > {pct}% for 10m, severity page, with a "
            "runbook link. promtool check rules passes.",
            "Scraping did not stop; the Prometheus pod was rescheduled at {hour}:00 and its WAL replay took 20 "
            "minutes. Enabling the second replica avoids the gap.",
        ),
        notes=(
            "{svc} p99 latency alert at {hour}:00 was real: database pool saturation from a batch job.",
            "New Prometheus alert {svc}HighErrorRate (5xx > {pct}% for 10m) with runbook link.",
            "Metrics gap {hour}:00-{hour}:20 caused by a Prometheus reschedule and WAL replay.",
        ),
        cjk=("{svc} の p99 レイテンシのアラートが {hour} 時に鳴りました。本物ですか？",),
        thoughts=("Before trusting the alert I want the raw quantile over the window, not just the alert state.",),
    ),
    _Topic(
        key="cache",
        asks=(
            "Redis memory on cache-{env} is at {hits}% and evictions started. What's filling it?",
            "After the deploy every cache miss on product pages hits the database at once. Is this a cache stampede?",
            "The cache hit rate for {svc} dropped from {hits}% to {pct}% overnight.",
        ),
        intros=("Checking Redis memory and the biggest keys.", "Let me look at the cache TTL settings."),
        tools=(
            _Tool(
                "bash",
                lambda c: {"command": "redis-cli -h cache-{env} info memory | head -n 4".format(**c)},
                "# Memory\nused_memory_human:{n}.{k}1G\nmaxmemory_human:{pods}.00G\nmaxmemory_policy:allkeys-lru",
            ),
            _Tool(
                "bash",
                lambda c: {"command": "redis-cli -h cache-{env} --bigkeys | tail -n 3".format(**c)},
                "Biggest string found '{key}' has {kb}{k}12 bytes\n"
                "Biggest   hash found 'search:facets:all' has {pr} fields\n"
                "{pr}{k} keys with {n}{k}.2M bytes total",
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "ttl=|expire", "path": "src/{ns}/cache".format(**c), "-n": True},
                "src/{ns}/cache/products.py:{lines}:    cache.set(key, value, ttl=3600)\n"
                "src/{ns}/cache/search.py:{n}:    cache.set(key, facets)  # no expire",
            ),
        ),
        answers=(
            "Memory is full of search:facets keys written without a TTL; they never expire, so LRU evicts product "
            "pages instead. Adding a 15-minute TTL to the facets cache frees about {n} GB.",
            "Yes, a stampede: all product keys were written with the same 3600 s TTL during the deploy warm-up, so "
            "they expire together. Adding jitter to the TTL and a single-flight lock on misses fixes it.",
            "The hit rate dropped because {svc} {ver} changed the cache key format, so every old entry became a "
            "miss. It recovers as the cache refills; next time, version the key prefix and warm it before the "
            "switch.",
        ),
        notes=(
            "cache-{env} Redis at {hits}% memory: search facets stored without TTL; 15-minute TTL added.",
            "Cache stampede on product pages after deploy: synchronized TTLs; jitter and single-flight added.",
            "{svc} cache hit rate fell to {pct}% after a key-format change in {ver}.",
        ),
        cjk=("缓存命中率一夜之间从 {hits}% 掉到了 {pct}%，是不是部署导致的？",),
        thoughts=("Evictions with allkeys-lru mean something large and long-lived is crowding out the hot keys.",),
    ),
    _Topic(
        key="payments",
        asks=(
            "Some orders are marked paid twice. Can you check the payment webhook handler?",
            "Stripe webhook deliveries to {svc} fail with 400 since the deploy of {ver}.",
            "A customer was refunded twice for order {pr}{k}. How did that happen?",
        ),
        intros=("Let me read the webhook handler.", "Checking the webhook delivery log."),
        tools=(
            _Tool(
                "read",
                lambda c: {"path": "src/payments/webhook_handler.py"},
                'def handle(event: dict) -> None:\n    order = orders.get(event["data"]["object"]["metadata"]'
                '["order_id"])\n    order.mark_paid(event["data"]["object"]["amount_received"])\n'
                '    ledger.record_payment(order, event["id"])',
            ),
            _Tool(
                "grep",
                lambda c: {"pattern": "idempotency|event_id", "path": "src/payments", "-n": True},
                "src/payments/refunds.py:{lines}:    stripe.Refund.create(payment_intent=pi, "
                "idempotency_key=None)\n"
                "src/payments/ledger.py:{n}{k}:    def record_payment(self, order, event_id):",
            ),
            _Tool(
                "bash",
                lambda c: {
                    "command": "kubectl logs deploy/{svc} -n payments --context {env} --since=30m | "
                    "grep webhook | tail -n 2".format(**c)
                },
                'WARN webhook rejected status=400 reason="No signatures found matching the expected signature for '
                'payload" event=evt_{seed}\nWARN webhook rejected status=400 reason="No signatures found" '
                "event=evt_{pr}",
            ),
        ),
        answers=(
            "The handler is not idempotent: Stripe retries a webhook when our response takes more than 10 s, and "
            "each retry marks the order paid again. Storing processed event ids under a unique constraint makes "
            "retries harmless.",
            "{ver} parses the JSON body before verifying the signature, so the bytes no longer match what Stripe "
            "signed. Verifying against the raw request body fixes the 400s.",
            "The refund call passes idempotency_key=None, so the client's automatic retry after a timeout created a "
            "second refund. Using the order id plus the refund reason as the idempotency key prevents it.",
        ),
        notes=(
            "Double-paid orders caused by webhook retries; processed event ids now stored with a unique constraint.",
            "Webhook 400s after {ver}: signature verified on parsed JSON instead of the raw body.",
            "Double refund for order {pr}{k}: refund created without an idempotency key.",
        ),
        cjk=("有些订单被重复标记为已支付了，能看一下支付回调吗？",),
        thoughts=("Double effects from a webhook almost always mean retries plus a handler without idempotency.",),
    ),
)

_SYSTEM_NOTES = (
    "Deploy freeze for all production services from 17:00 UTC Friday to 08:00 UTC Monday.",
    "On-call handover: {person} is primary for the platform rotation this week.",
    "Maintenance window: the {env} Postgres primary fails over at 02:00 UTC for a minor version upgrade.",
)


def _fill(template: str, ctx: dict[str, Any]) -> str:
    return template.format(**ctx)


def _generate_session(db: _SessionDb, messages: int, rng: random.Random) -> None:
    """One long conversation of ``messages`` messages; the oldest sixth is compacted."""
    start = datetime(2025, 11, 3, 8, 0, 0)
    conv = db.conversation(
        "agent:main:main",
        f"Platform on-call, generated ({messages:,} messages)",
        start - timedelta(seconds=17),
    )
    ids = db.ids
    stored: list[_StoredMessage] = []
    notes: list[tuple[int, str]] = []  # (index of the turn's first message, note)
    clock = start

    def add(message: dict[str, Any]) -> bool:
        nonlocal clock
        if len(stored) >= messages:
            return False
        message["timestamp"] = _epoch_ms(clock)
        stored.append(db.ingest(conv, message, clock))
        clock += timedelta(seconds=rng.randint(6, 95))
        return True

    topic = rng.choice(_TOPICS)
    while len(stored) < messages:
        if rng.random() < 0.4:
            topic = rng.choice(_TOPICS)
        ctx = _turn_context(rng)
        clock += timedelta(seconds=rng.randint(40, 1500))
        if rng.random() < 0.04:
            clock += timedelta(hours=rng.randint(8, 15))
        if rng.random() < 0.01:
            add({"role": "system", "content": _fill(rng.choice(_SYSTEM_NOTES), ctx)})
        notes.append((len(stored), _fill(rng.choice(topic.notes), ctx)))
        ask = rng.choice(topic.cjk) if rng.random() < 0.03 else rng.choice(topic.asks)
        add({"role": "user", "content": _fill(ask, ctx)})
        for round_index in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
            blocks: list[dict[str, Any]] = []
            if round_index == 0 and rng.random() < 0.15:
                blocks.append(
                    {"type": "thinking", "thinking": rng.choice(topic.thoughts), "thinkingSignature": ids.base64ish(64)}
                )
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": _fill(rng.choice(topic.intros), ctx)})
            tools = rng.sample(topic.tools, 2) if rng.random() < 0.15 else [rng.choice(topic.tools)]
            calls = [
                {"type": "toolCall", "id": ids.tool_call(), "name": tool.name, "arguments": tool.args(ctx)}
                for tool in tools
            ]
            add({"role": "assistant", "content": blocks + calls, **_IDENTITY, "stopReason": "toolUse"})
            for tool, call in zip(tools, calls, strict=True):
                if rng.random() < 0.02:
                    continue  # orphan: the result never arrived (aborted, crashed, timed out)
                add(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": tool.name,
                        "content": [{"type": "text", "text": _fill(tool.output, ctx)}],
                        "isError": tool.error,
                    }
                )
        add(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": _fill(rng.choice(topic.answers), ctx)}],
                **_IDENTITY,
                "stopReason": "stop",
            }
        )

    _compact_front(db, conv, stored, notes, rng)


def _compact_front(
    db: _SessionDb,
    conv: _Conversation,
    stored: list[_StoredMessage],
    notes: list[tuple[int, str]],
    rng: random.Random,
) -> None:
    """Summarize the oldest sixth into leaves and condense them, as repeated compactions would."""
    cut = len(stored) // 6 if len(stored) >= 24 else 0
    if cut == 0:
        return
    leaves: list[_StoredSummary] = []
    position = 0
    note_index = 0
    while position < cut:
        size = min(rng.randint(8, 16), cut - position)
        chunk = stored[position : position + size]
        bullets: list[str] = []
        while note_index < len(notes) and notes[note_index][0] < position + size:
            bullets.append(notes[note_index][1])
            note_index += 1
        if not bullets:
            bullets.append(notes[max(0, note_index - 1)][1])
        lines = [f"- {chunk[0].created:%H:%M}-{chunk[-1].created:%H:%M} UTC: {bullets[0]}"]
        lines += [f"- {b}" for b in bullets[1:5]]
        if rng.random() < 0.5:
            lines.append("Expand for details about: exact commands, full tool output, intermediate attempts.")
        created = chunk[-1].created + timedelta(minutes=rng.randint(5, 90))
        leaves.append(db.leaf(conv, [m.message_id for m in chunk], "\n".join(lines), created))
        position += size

    levels: list[list[_StoredSummary]] = []
    level = leaves
    while True:
        condensable = level[:-2] if len(level) > 2 else []
        groups: list[list[_StoredSummary]] = []
        i = 0
        while len(condensable) - i >= 3:
            size = min(rng.randint(3, 5), len(condensable) - i)
            groups.append(condensable[i : i + size])
            i += size
        if not groups:
            levels.append(level)
            break
        levels.append(level[i:])
        parents = []
        for group in groups:
            first, last = group[0].earliest, group[-1].latest
            assert first is not None and last is not None
            heads = [g.content.split("\n", 1)[0].removeprefix("- ") for g in group]
            body = "\n".join(f"- {h[:200]}" for h in heads)
            content = f"{first:%b %d %H:%M} - {last:%b %d %H:%M} UTC, {len(group)} earlier summaries:\n{body}"
            created = max(g.created for g in group) + timedelta(minutes=rng.randint(1, 30))
            parents.append(db.condensed(conv, group, content, created))
        level = parents

    summary_items: list[tuple[str, int | str, datetime]] = [
        ("summary", s.summary_id, s.created) for depth_level in reversed(levels) for s in depth_level
    ]
    raw_items = [item for item in conv.context if item[0] == "message" and int(item[1]) > stored[cut - 1].message_id]
    conv.context = summary_items + raw_items


# --- public API ------------------------------------------------------------------------------


def build_sample(
    path: str | os.PathLike[str],
    kind: str,
    *,
    seed: int = 7,
    messages: int | None = None,
    overwrite: bool = False,
) -> SampleInfo:
    """Write a brand-new sample database of ``kind`` to ``path``.

    ``seed`` and ``messages`` shape the generated kinds (``medium``, ``large``); the demo is
    hand-written and always the same.  The file is built next to its destination and renamed
    into place, so a reader never sees a half-written database.
    """
    if kind not in SAMPLE_KINDS:
        raise InputError(f"unknown sample kind {kind!r}; choose one of: {', '.join(SAMPLE_KINDS)}")
    if kind == "demo" and messages is not None:
        raise InputError("the demo sample has a fixed size; --messages only applies to medium and large")
    if messages is not None and (isinstance(messages, bool) or not isinstance(messages, int) or messages < 1):
        raise InputError(f"messages must be a positive integer, not {messages!r}")
    target = Path(path)
    if target.exists() and not overwrite:
        raise InputError(f"{target} already exists; choose another path or allow overwriting")
    if not target.parent.is_dir():
        raise InputError(f"directory {target.parent} does not exist")

    if kind == "demo":
        db = _SessionDb(_Ids("demo"))
        _build_demo(db)
    else:
        count = (
            messages
            if messages is not None
            else (DEFAULT_MEDIUM_MESSAGES if kind == "medium" else DEFAULT_LARGE_MESSAGES)
        )
        rng = random.Random(seed)
        db = _SessionDb(_Ids(f"{kind}:{seed}"))
        _generate_session(db, count, rng)

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()  # let SQLite create the file itself
        db.write(tmp)
        if overwrite:
            os.replace(tmp, target)
        else:
            _rename_no_clobber(tmp, target)
    except BaseException:
        for leftover in (tmp, Path(f"{tmp}-journal")):
            leftover.unlink(missing_ok=True)
        raise
    return db.info(target, kind)


def _rename_no_clobber(source: Path, target: Path) -> None:
    """Move ``source`` to ``target`` unless something appeared there meanwhile."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise InputError(f"{target} already exists; choose another path or allow overwriting") from None
    except OSError:
        # Filesystems without hard links: a plain rename (the existence check above still applies).
        if target.exists():
            raise InputError(f"{target} already exists; choose another path or allow overwriting") from None
        os.replace(source, target)
        return
    source.unlink()


def _repo_demo_path() -> Path:
    return Path(__file__).resolve().parent.parent / "sample_sessions" / "demo.db"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "ctxview"


def ensure_demo_db() -> Path:
    """Path of a demo database: the repository's copy, else one built once into the user cache."""
    committed = _repo_demo_path()
    if committed.is_file():
        return committed
    cached = _cache_dir() / f"demo-v{DEMO_FORMAT_VERSION}.db"
    if cached.is_file():
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    try:
        build_sample(cached, "demo")
    except InputError:
        if not cached.is_file():  # lost a race with another process: its copy is as good as ours
            raise
    return cached


def write_demo_live_json(path: str | os.PathLike[str]) -> Path:
    """Write :func:`demo_live_messages` as a 2-space indented JSON array (sample_sessions/demo-live.json)."""
    target = Path(path)
    target.write_text(json.dumps(demo_live_messages(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return target
