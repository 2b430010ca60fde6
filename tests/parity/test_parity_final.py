"""Final-stage parity: assembler + engine reconcile against every case of the reference.

For each case in ``<repo>/../shared/parity/cases`` the session is loaded, the
assembler runs with the case parameters, and ``reconcile`` runs with the live
messages; the top-level messages and estimate and the ``volatileAppend`` /
``serializedClamp`` / ``promptRecall`` stage records must equal expected.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.assembler import assemble_context
from ctxview.assembly.engine import reconcile
from ctxview.jsjson import js_parse, to_plain
from ctxview.store import LcmStore

CASES_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "parity" / "cases"
CASES = sorted(p for p in CASES_DIR.glob("*") if (p / "expected.json").is_file()) if CASES_DIR.is_dir() else []


def canon(value: Any) -> str:
    return json.dumps(to_plain(value), sort_keys=True, ensure_ascii=False)


def run_case(case: Path) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    params = js_parse((case / "params.json").read_text(encoding="utf-8"))
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    store = LcmStore(case / "session.db")
    session = store.load_session(params["conversationId"])
    asm = assemble_context(
        session,
        token_budget=params["tokenBudget"],
        prompt=params["prompt"],
        fresh_tail_count=params["freshTailCount"],
        fresh_tail_max_tokens=params["freshTailMaxTokens"],
        prompt_aware_eviction=params["promptAwareEviction"],
        stub_large_tool_payloads=params["stubLargeToolPayloads"],
        timezone=params["timezone"],
    )
    result = reconcile(
        asm.messages,
        asm.message_keys,
        asm.estimated_tokens,
        asm.protection_hashes,
        live_messages=params["liveMessages"],
        token_budget=params["tokenBudget"],
        prompt=params["prompt"],
        available_tools=params["availableTools"],
        context_item_count=len(session.items),
        has_summary_items=any(item.item_type == "summary" for item in session.items),
        conversation_id=params["conversationId"],
        session_id=params["sessionId"],
    )
    return result, expected, params


def test_cases_present() -> None:
    if not CASES:
        pytest.skip(f"PARITY CASES NOT FOUND at {CASES_DIR}: final-stage parity was NOT checked")
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_final_parity(case: Path) -> None:
    result, expected, _params = run_case(case)
    assert canon(result.messages) == canon(expected["messages"])
    assert result.estimated_tokens == expected["estimatedTokens"]
    assert result.engine_outcome == expected["engineOutcome"]
    for stage in ("volatileAppend", "serializedClamp", "promptRecall"):
        assert canon(result.stages[stage]) == canon(expected["stages"][stage]), stage
    assert result.warnings == expected["warnings"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_final_keys_and_decisions_are_consistent(case: Path) -> None:
    result, _expected, params = run_case(case)
    live = params["liveMessages"] or []
    assert len(result.message_keys) == len(result.messages)
    assert [d.key for d in result.live_decisions] == [f"l:{i}" for i in range(len(live))]
    for decision in result.live_decisions:
        in_output = decision.key in result.message_keys
        assert in_output == (decision.outcome == "appended"), decision
        if decision.outcome == "covered":
            assert decision.covered_by is not None
    appended = sum(1 for d in result.live_decisions if d.outcome in ("appended", "live-dropped"))
    assert appended == result.stages["volatileAppend"]["appendedMessages"]
    evicted = [k for k, u in result.item_updates.items() if u.get("outcome") == "evicted-for-live"]
    assert len(evicted) == result.stages["volatileAppend"]["evictedMessages"]
    for key in evicted:
        assert result.item_updates[key]["evicted_by"].startswith("l:")
        assert key not in result.message_keys
