"""The LCM schema, DDL as the reference engine creates it: tables, indexes, full-text tables.

Kept apart from the row writer because it is a fixed description of the file format (the
parity databases have the same schema, which a test checks), not logic.
"""

from __future__ import annotations

LCM_TABLES: tuple[str, ...] = (
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

LCM_FTS_TABLES: tuple[str, ...] = (
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

MIGRATION_STEPS: tuple[tuple[str, int], ...] = (
    ("repairOpenClawMetadataIdentityState", 2),
    ("backfillSummaryDepths", 1),
    ("backfillSummaryMetadata", 1),
    ("backfillToolCallColumns", 1),
)
