"""Which engine line's rules an assembly follows: lossless-claw 0.15 or 1.0.

The two lines share one assembler.  Where 1.0 differs (spec
``lcm-assembly-1.0-delta.md``, D1–D6) the difference is one field of
``EngineRules`` that the step reading it consults, never a second pipeline.
A database says which line wrote it through its tables (1.0 creates
``message_transcript_anchor_trust`` and ``conversation_transcript_epochs``;
no 0.x release does); ``--engine`` or ``params.json`` can override that.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

# Tables only the 1.0 line creates (every 1.0 beta, on fresh and on upgraded databases).
ONE_ZERO_TABLES = ("message_transcript_anchor_trust", "conversation_transcript_epochs")
ENGINE_LINES = ("0.15", "1.0")


@dataclass(frozen=True, slots=True)
class EngineRules:
    """The rules of one engine line, and the release whose behaviour they reproduce."""

    line: str  # "0.15" | "1.0"
    release: str  # the reference version the parity cases were produced with
    # D1: a tool result's serialized size is the larger of the JSON estimate and the boundary estimate
    tool_result_boundary_estimate: bool
    # D2: the serialized clamp fires above floor(0.9 × budget) instead of above the budget
    clamp_triggers_at_target: bool
    # D3: user messages carry ``__openclaw`` sender metadata, and its JSON counts in their tokens
    sender_metadata: bool
    # D4: isolated cron session keys are looked up by session id, a stale run gets the safe fallback
    isolated_cron_lookup: bool
    # D5: fork-bounded conversations append the live suffix (§10.6)
    fork_bounded: bool

    @property
    def name(self) -> str:
        return f"lossless-claw {self.line}"

    def serialized_tokens(self) -> Callable[[Any], int]:
        """The §4.3 serialized estimate of one message under these rules."""
        from ctxview.assembly.tokens import serialized_message_tokens, serialized_message_tokens_1_0

        return serialized_message_tokens_1_0 if self.tool_result_boundary_estimate else serialized_message_tokens


RULES_0_15 = EngineRules(
    line="0.15",
    release="0.15.3",
    tool_result_boundary_estimate=False,
    clamp_triggers_at_target=False,
    sender_metadata=True,
    isolated_cron_lookup=False,
    fork_bounded=True,
)
RULES_1_0 = EngineRules(
    line="1.0",
    release="1.0.0-beta.4",
    tool_result_boundary_estimate=True,
    clamp_triggers_at_target=True,
    sender_metadata=False,
    isolated_cron_lookup=True,
    fork_bounded=False,
)
_BY_LINE = {RULES_0_15.line: RULES_0_15, RULES_1_0.line: RULES_1_0}


def rules_for(line: str) -> EngineRules:
    """The rules of an engine line named as people write it (``0.15``, ``1.0``, ``1``, ``0.15.3`` …)."""
    text = line.strip().lower().removeprefix("lossless-claw").strip().removeprefix("v")
    if text in _BY_LINE:
        return _BY_LINE[text]
    if text in ("1", "1.0.0") or text.startswith("1.0.") or text.startswith("1.0-"):
        return RULES_1_0
    if text.startswith("0.15"):
        return RULES_0_15
    raise ValueError(f"unknown engine line {line!r}: use 0.15 or 1.0")


@dataclass(frozen=True, slots=True)
class DetectedLine:
    """The engine line a database's tables point to, and why (shown wherever the rules are named)."""

    rules: EngineRules
    why: str


def detect_line(tables: Collection[str]) -> DetectedLine:
    """1.0 rules where a 1.0-only table exists; 0.15 rules otherwise."""
    found = [name for name in ONE_ZERO_TABLES if name in tables]
    if found:
        upgraded = " (a 0.x database upgraded by 1.0)" if "conversation_bootstrap_state" in tables else ""
        return DetectedLine(RULES_1_0, f"the database has 1.0 tables ({', '.join(found)}){upgraded}")
    return DetectedLine(RULES_0_15, "the database has no 1.0 tables")
