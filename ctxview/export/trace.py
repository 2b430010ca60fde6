"""``trace``: the whole decision record of a run, deterministic, with a hash of the messages.

It is the parity-shaped result of ``ctxview assemble --format json`` plus the
run's parameters and every decision with all its fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxview.export.jsontext import pretty_js
from ctxview.export.native import messages_sha256
from ctxview.report import decision_json, trace_to_json

if TYPE_CHECKING:
    from ctxview.model import Params, Trace

# the trace export's own format version (its "ctxview" header)
EXPORT_VERSION = 1


def params_json(params: Params) -> dict[str, Any]:
    """The run's parameters under the parity ``params.json`` names (plus ctxview's own)."""
    return {
        "tokenBudget": params.token_budget,
        "prompt": params.prompt,
        "freshTailCount": params.fresh_tail_count,
        "freshTailMaxTokens": params.fresh_tail_max_tokens,
        "promptAwareEviction": params.prompt_aware_eviction,
        "timezone": params.timezone,
        "liveMessages": list(params.live_messages) if params.live_messages is not None else None,
        "availableTools": list(params.available_tools) if params.available_tools is not None else None,
        "stubLargeToolPayloads": params.stub_large_tool_payloads,
        "engine": params.engine,
        "engineLine": params.engine_line,
        "sessionId": params.session_id,
        "sessionKey": params.session_key,
        "reservedTokens": params.reserved_tokens,
        "scorer": params.scorer,
        "tokenizer": params.tokenizer,
    }


def trace_document(trace: Trace) -> dict[str, Any]:
    """The trace export: the parity-shaped result plus every decision and a hash of the messages.

    Deterministic (no timings), so two exports of the same run are identical.
    """
    document: dict[str, Any] = {
        "ctxview": {"format": "trace", "version": EXPORT_VERSION},
        "conversationId": trace.conversation_id,
        "params": params_json(trace.params),
        "messagesSha256": messages_sha256(trace.messages),
        "messageCount": len(trace.messages),
        "messageKeys": list(trace.message_keys),
        "decisions": [decision_json(d) for d in trace.decisions],
    }
    for key, value in trace_to_json(trace, document["decisions"]).items():
        document.setdefault(key, value)
    return document


def to_trace_json(trace: Trace) -> str:
    """The trace export as indented JSON (numbers formatted as JavaScript would)."""
    return pretty_js(trace_document(trace)) + "\n"
