"""Running ``ctxview assemble --format json`` in-process on a case, and comparing its output.

The assembler and final comparisons are the parity checker's
(``../shared/parity/check.py``): the same fields, the same canonical JSON, the
same "first difference" report.  Running ``ctxview.cli.main`` in-process takes
the path the checker's subprocess takes (argument parsing, the params file,
the pipeline, ``trace_to_json`` and its JSON writer) without a process start
per case.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from typing import Any

from ctxview.cli import main
from tests.parity.corpus import CaseFiles

ASSEMBLER_FIELDS = (
    "stages.assembler.messages",
    "stages.assembler.estimatedTokens",
    "selectionMode",
    "freshTailOrdinal",
    "keptOrdinals",
)
FINAL_FIELDS = ("messages", "estimatedTokens", "engineOutcome")

# engine stages recorded beside the final result (fallbackClamp: the 1.0 line's clamp of a live
# fallback); the clamp's serializedTokens is the final estimatedTokens, which the final stage compares
STAGE_RECORDS = ("promptRecall", "volatileAppend", "serializedClamp", "fallbackClamp")
DUPLICATES_OF_FINAL = {("serializedClamp", "serializedTokens")}

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
OTHER_DEBUG = ("selectionMode", "promotedOrdinals", "stubStats")
ITEM_FIELDS = ("kind", "sourceRole", "role", "messageId", "seq", "summaryId", "summaryKind", "tokens", "segment")
ITEM_FIELDS_SELECTED = (*ITEM_FIELDS, "selected")
SCORE_TOLERANCE = 1e-9
MISSING = "<missing>"


@dataclass(frozen=True)
class CliRun:
    """What ``ctxview assemble DB --params PARAMS --format json`` did."""

    exit_code: int
    stdout: str
    stderr: str

    def output(self) -> tuple[dict[str, Any] | None, str]:
        """(the printed JSON object, "") or (None, why there is none) — the checker's reading."""
        if self.exit_code != 0:
            return None, f"exit {self.exit_code}: {self.stderr.strip()[-300:]}"
        try:
            value = json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            return None, f"output is not JSON: {exc}"
        if not isinstance(value, dict):
            return None, f"output is a JSON {type(value).__name__}, not an object"
        return value, ""


def run_assemble(files: CaseFiles) -> CliRun:
    argv = ["assemble", str(files.db), "--params", str(files.params), "--format", "json"]
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    return CliRun(code, stdout.getvalue(), stderr.getvalue())


# --- the checker's comparison ----------------------------------------------------------------


def canon(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def dig(obj: object, path: str) -> object:
    for key in path.split("."):
        if not isinstance(obj, dict) or key not in obj:
            return MISSING
        obj = obj[key]
    return obj


def first_difference(expected: object, actual: object, where: str = "") -> str:
    """The path of the first place where two JSON values differ, with both values (clipped)."""
    if type(expected) is not type(actual):
        return f"{where or '<root>'}: expected {canon(expected)[:160]} got {canon(actual)[:160]}"
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{where}.{key}: missing in actual"
            if key not in expected:
                return f"{where}.{key}: unexpected in actual"
            if canon(expected[key]) != canon(actual[key]):
                return first_difference(expected[key], actual[key], f"{where}.{key}")
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} elements, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            if canon(want) != canon(got):
                return first_difference(want, got, f"{where}[{index}]")
    return f"{where or '<root>'}: expected {canon(expected)[:160]} got {canon(actual)[:160]}"


def compare_fields(expected: dict[str, Any], actual: dict[str, Any], fields: tuple[str, ...]) -> str:
    """ "" when every dotted field is equal as canonical JSON, else the first difference."""
    for field in fields:
        want, got = dig(expected, field), dig(actual, field)
        if canon(want) != canon(got):
            return first_difference(want, got, field)
    return ""


# --- the engine's stage records --------------------------------------------------------------


def volatile_output(document: dict[str, Any], record: dict[str, Any]) -> object:
    """The volatile step's message list, written out or named by ``messagesSameAs``."""
    if record.get("messages") is not None:
        return record["messages"]
    same_as = record.get("messagesSameAs")
    if same_as == "final":
        return document.get("messages", MISSING)
    if same_as == "assembler":
        return dig(document, "stages.assembler.messages")
    return MISSING


def stage_records_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    """Compare the records the expected file has, field by field.

    An older case file may lack a record or some fields (nothing to compare
    there); a null record means the reference never ran that step, so ours must
    be null or absent too.  The volatile step's output list is compared when it is not the
    final list (that one the final stage compares), whichever way each side
    writes it.
    """
    for stage in STAGE_RECORDS:
        want = dig(expected, f"stages.{stage}")
        if want == MISSING:
            continue
        got = dig(actual, f"stages.{stage}")
        if want is None and got == MISSING:
            continue  # a step that never ran: no record either way
        if want is None or not isinstance(got, dict):
            if canon(want) != canon(got):
                return first_difference(want, got, f"stages.{stage}")
            continue
        assert isinstance(want, dict)
        for field, value in want.items():
            if field in ("messages", "messagesSameAs") or (stage, field) in DUPLICATES_OF_FINAL:
                continue
            if canon(value) != canon(got.get(field, MISSING)):
                return first_difference(value, got.get(field, MISSING), f"stages.{stage}.{field}")
        if stage == "volatileAppend":
            want_list = volatile_output(expected, want)
            if canon(want_list) != canon(expected.get("messages")):
                got_list = volatile_output(actual, got)
                if canon(want_list) != canon(got_list):
                    return first_difference(want_list, got_list, "stages.volatileAppend.messages (resolved)")
    return ""


# --- the assembler's per-item trace -----------------------------------------------------------


def assembler_trace_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    """The assembler's stats, numeric debug fields and per-item trace (what the inspector shows).

    The hashes, ``overflowDiagnostics`` and ``warnings`` are informational in
    the parity README and not compared; scores are compared within 1e-9.
    """
    stats = compare_fields(expected, actual, ("stages.assembler.stats",))
    if stats:
        return stats
    want_debug = dig(expected, "stages.assembler.debug")
    if isinstance(want_debug, dict):
        fields = tuple(
            f"stages.assembler.debug.{name}" for name in (*NUMERIC_DEBUG, *OTHER_DEBUG) if name in want_debug
        )
        debug = compare_fields(expected, actual, fields)
        if debug:
            return debug
    if "trace" not in expected:  # the older case files carry no trace
        return ""
    ordinals = compare_fields(expected, actual, ("trace.contextOrdinals", "trace.unresolvedOrdinals"))
    if ordinals:
        return ordinals
    want_items = {item["ordinal"]: item for item in expected["trace"]["items"]}
    got_items = {item.get("ordinal"): item for item in actual["trace"]["items"]}
    if set(want_items) != set(got_items):
        missing = sorted(set(want_items) - set(got_items))
        unexpected = sorted(map(str, set(got_items) - set(want_items)))
        return f"trace.items: ordinals missing in actual {missing[:20]}, unexpected {unexpected[:20]}"
    for ordinal, want in want_items.items():
        got = got_items[ordinal]
        for field in ITEM_FIELDS_SELECTED:
            if canon(want.get(field)) != canon(got.get(field, MISSING)):
                return first_difference(
                    want.get(field), got.get(field, MISSING), f"trace.items[ordinal {ordinal}].{field}"
                )
        want_score, got_score = want.get("score"), got.get("score", MISSING)
        same_score = (
            got_score is None
            if want_score is None
            else isinstance(got_score, int | float) and abs(got_score - want_score) <= SCORE_TOLERANCE
        )
        if not same_score:
            return f"trace.items[ordinal {ordinal}].score: expected {want_score} got {got_score}"
    return ""


# --- ctxview's own decisions explain its output -------------------------------------------------


def decisions_difference(actual: dict[str, Any], live_messages: list[Any] | None) -> str:
    """The per-item and per-live-input decisions agree with the messages and the volatile record.

    Live inputs can be appended by more than the volatile step (a fork-bounded
    conversation appends its live suffix), so appended inputs are not counted
    against ``volatileAppend.appendedMessages``; evictions happen only there.
    """
    messages = actual["messages"]
    items = actual["trace"]["items"]
    live = actual["trace"]["liveInputs"]
    if [d["liveIndex"] for d in live] != list(range(len(live_messages or []))):
        return f"trace.liveInputs: live indexes {[d['liveIndex'] for d in live]} for {len(live_messages or [])} inputs"
    indexes = [d["outputIndex"] for d in (*items, *live) if d["outputIndex"] is not None]
    if len(indexes) != len(set(indexes)) or not all(0 <= i < len(messages) for i in indexes):
        return f"trace: output indexes {sorted(indexes)} are not distinct positions in {len(messages)} messages"
    for d in live:
        if (d["outputIndex"] is not None) != (d["outcome"] == "appended"):
            return f"trace.liveInputs[{d['liveIndex']}]: outcome {d['outcome']} with output index {d['outputIndex']}"
        if d["outcome"] == "covered" and d["coveredBy"] is None:
            return f"trace.liveInputs[{d['liveIndex']}]: covered by nothing"
    record = actual["stages"].get("volatileAppend")
    if record is None:  # no volatile step (a live fallback): its eviction counts do not apply
        return ""
    evicted = [d for d in items if d["outcome"] == "evicted-for-live"]
    if len(evicted) != record["evictedMessages"]:
        return (
            f"{len(evicted)} items evicted for live inputs, volatileAppend.evictedMessages {record['evictedMessages']}"
        )
    for d in evicted:
        if not str(d["evictedBy"]).startswith("l:") or d["outputIndex"] is not None:
            return f"item {d['ordinal']}: evicted for live input {d['evictedBy']} at output index {d['outputIndex']}"
    return ""
