"""Parity with the reference assembler on every case in ``../shared/parity/cases`` (assembler stage).

Compared after JSON canonicalization, as the parity README's "How to compare"
says: the assembler's messages, estimate, stats, selection mode, fresh-tail
ordinal, kept ordinals, per-item trace, unresolved ordinals, every numeric
debug field, and the hashes that prove key order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.assembler import AssemblerResult, assemble_context
from ctxview.jsjson import to_plain
from ctxview.store import LcmStore

REPO = Path(__file__).resolve().parents[2]


def _cases_dir() -> Path | None:
    for base in (REPO, *REPO.parents):
        candidate = base / "shared" / "parity" / "cases"
        if candidate.is_dir():
            return candidate
    return None


CASES_DIR = _cases_dir()
CASES = sorted(p for p in CASES_DIR.iterdir() if (p / "expected.json").is_file()) if CASES_DIR else []


def canon(value: Any) -> str:
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False)


def run_case(case: Path) -> tuple[AssemblerResult, dict[str, Any]]:
    params = json.loads((case / "params.json").read_text(encoding="utf-8"))
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    with LcmStore(case / "session.db") as store:
        session = store.load_session(params["conversationId"])
    result = assemble_context(
        session,
        token_budget=params["tokenBudget"],
        prompt=params["prompt"],
        fresh_tail_count=params["freshTailCount"],
        fresh_tail_max_tokens=params["freshTailMaxTokens"],
        prompt_aware_eviction=params["promptAwareEviction"],
        stub_large_tool_payloads=params["stubLargeToolPayloads"],
        timezone=params["timezone"],
    )
    return result, expected


NUMERIC_DEBUG = (
    "freshTailOrdinal",
    "orphanStrippingOrdinal",
    "baseFreshTailCount",
    "freshTailCount",
    "tailTokens",
    "remainingBudget",
    "evictableTotalTokens",
    "promotedToolResultCount",
    "removedToolUseBlockCount",
    "touchedAssistantMessageCount",
    "preSanitizeEvictableCount",
    "preSanitizeFreshTailCount",
)
HASH_DEBUG = (
    "finalMessagesHash",
    "preSanitizeMessagesHash",
    "preSanitizeEvictableHash",
    "preSanitizeFreshTailHash",
    "preSanitizeFreshTailMessageHashes",
    "freshTailProtectionMessageHashes",
)


def test_cases_are_present() -> None:
    if CASES_DIR is None:
        pytest.skip("PARITY CASES NOT FOUND: expected <repo>/../shared/parity/cases; the parity suite did not run")
    assert CASES, f"no cases in {CASES_DIR}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_assembler_stage(case: Path) -> None:
    result, expected = run_case(case)
    stage = expected["stages"]["assembler"]
    assert canon(result.messages) == canon(stage["messages"])
    assert result.estimated_tokens == stage["estimatedTokens"]
    assert result.stats == stage["stats"]
    assert result.selection_mode == expected["selectionMode"]
    assert result.fresh_tail_ordinal == expected["freshTailOrdinal"]
    assert result.kept_ordinals == expected["keptOrdinals"]
    assert result.unresolved_ordinals == expected["trace"]["unresolvedOrdinals"]
    assert result.context_ordinals == expected["trace"]["contextOrdinals"]

    debug = stage["debug"]
    assert result.debug is not None
    for name in NUMERIC_DEBUG + HASH_DEBUG:
        assert result.debug[name] == debug[name], name
    assert result.debug["selectionMode"] == debug["selectionMode"]
    assert result.debug["promotedOrdinals"] == debug["promotedOrdinals"]
    assert result.debug["stubStats"] == debug["stubStats"]
    assert canon(result.debug["overflowDiagnostics"]) == canon(debug["overflowDiagnostics"])

    want = {item["ordinal"]: item for item in expected["trace"]["items"]}
    got = {item["ordinal"]: item for item in result.trace_items}
    assert sorted(got) == sorted(want)
    for ordinal, item in want.items():
        mine = got[ordinal]
        for field in (
            "tokens",
            "segment",
            "selected",
            "kind",
            "role",
            "sourceRole",
            "messageId",
            "seq",
            "summaryId",
            "summaryKind",
        ):
            assert mine[field] == item[field], (ordinal, field)
        if item["score"] is None:
            assert mine["score"] is None, ordinal
        else:
            assert mine["score"] == pytest.approx(item["score"], abs=1e-9), ordinal

    # the decision trace agrees with the parity trace
    decided = {d.ordinal: d for d in result.decisions if d.kind != "focus"}
    for ordinal, item in want.items():
        assert decided[ordinal].selected == item["selected"]
        assert decided[ordinal].tokens == item["tokens"]
    emitted = [k for k in result.message_keys if k is not None]
    assert len(emitted) == len(set(emitted))
    for index, key in enumerate(result.message_keys):
        if key is not None:
            assert next(d for d in result.decisions if d.key == key).output_index == index
