"""Compare two assembled contexts: which items changed outcome, where the messages diverge.

The first message at which two assembled lists differ is what decides
prompt-cache reuse: everything before it is a shared prefix a provider can
serve from cache.  Sides are traces (from a run or a trace export) or bare
message exports (native, jsonl, openai, anthropic), which give only the
prefix comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.errors import InputError
from ctxview.export.native import messages_sha256
from ctxview.files import Wording, read_text
from ctxview.jsjson import collapse_js_whitespace, js_parse, js_stringify, js_trim
from ctxview.model import Trace, count_text

EXPORT_FILE = Wording(
    "export",
    missing="{path} not found",
    directory="{path} is a directory",
    not_regular="{path} is not a regular file ({kind})",
    not_text="{path} is neither an LCM database nor a ctxview export (not UTF-8 text)",
    unreadable="cannot read {path}: {reason}",
)

# message families: lists of one family can be compared message by message
NATIVE, OPENAI, ANTHROPIC, UNKNOWN = "native", "openai", "anthropic", "unknown"


@dataclass(frozen=True, slots=True)
class ItemView:
    """What a diff needs of one decision."""

    key: str
    item: str  # the ordinal, or L<i> for a live input
    label: str
    outcome: str
    tokens: int | None
    score: float | None
    reason: str


@dataclass(slots=True)
class DiffSide:
    """One side of a comparison: its messages and, for traces, its decisions."""

    label: str
    kind: str  # run | trace | parity | native | jsonl | openai | anthropic | messages
    family: str  # native | openai | anthropic | unknown
    messages: list[Any]
    sha256: str
    tokens: int | None = None  # the final token estimate, where the side states one
    selection_mode: str | None = None
    token_budget: int | None = None
    items: dict[str, ItemView] | None = None  # None: the side carries no decisions

    def describe(self) -> str:
        parts = [f"{self.kind}", count_text(len(self.messages), "message")]
        if self.tokens is not None:
            parts.append(f"{self.tokens:,} tokens")
        if self.token_budget is not None:
            parts.append(f"budget {self.token_budget:,}")
        if self.selection_mode:
            parts.append(self.selection_mode)
        return f"{self.label} ({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class ItemChange:
    key: str
    item: str
    label: str
    outcome_a: str | None  # None: not in A
    outcome_b: str | None  # None: not in B
    tokens: int | None
    score_a: float | None
    score_b: float | None
    reason: str  # B's reason when the item is in B, else A's


@dataclass(slots=True)
class DiffResult:
    a: DiffSide
    b: DiffSide
    first_difference: int | None  # index of the first differing message; None when the lists are equal
    prefix_tokens: int  # serialized estimate of the shared prefix
    changes: list[ItemChange] = field(default_factory=list)

    @property
    def decisions_compared(self) -> bool:
        return self.a.items is not None and self.b.items is not None

    @property
    def messages_identical(self) -> bool:
        return self.first_difference is None

    @property
    def identical(self) -> bool:
        return self.messages_identical and not self.changes

    @property
    def prefix_messages(self) -> int:
        if self.first_difference is None:
            return len(self.a.messages)
        return self.first_difference

    @property
    def message_a(self) -> Any | None:
        return _at(self.a.messages, self.first_difference)

    @property
    def message_b(self) -> Any | None:
        return _at(self.b.messages, self.first_difference)


def _at(messages: list[Any], index: int | None) -> Any | None:
    if index is None or index >= len(messages):
        return None
    return messages[index]


# --- building sides ----------------------------------------------------------------------


def side_from_trace(trace: Trace, label: str = "A") -> DiffSide:
    items = {
        d.key: ItemView(
            key=d.key,
            item=str(d.ordinal) if d.ordinal is not None else f"L{d.live_index}",
            label=d.label,
            outcome=d.outcome,
            tokens=d.tokens,
            score=d.score,
            reason=d.reason,
        )
        for d in trace.decisions
    }
    return DiffSide(
        label=label,
        kind="run",
        family=NATIVE,
        messages=list(trace.messages),
        sha256=messages_sha256(trace.messages),
        tokens=trace.summary.final_tokens,
        selection_mode=trace.summary.selection_mode,
        token_budget=trace.summary.token_budget,
        items=items,
    )


def load_export(path: str | Path, label: str | None = None) -> DiffSide:
    """Read an export for comparison: trace, native, jsonl, openai or anthropic (or a parity expected.json)."""
    file = Path(path)
    name = label or str(file)
    text = read_text(file, EXPORT_FILE)
    if not js_trim(text):
        raise InputError(f"{file} is empty: neither an LCM database nor a ctxview export")
    try:
        data = js_parse(text)
    except (ValueError, RecursionError):
        data = _parse_jsonl(text, file)
        return _messages_side(name, "jsonl", data)
    if isinstance(data, list):
        return _messages_side(name, "native", data)
    if isinstance(data, dict) and isinstance(data.get("role"), str):
        return _messages_side(name, "jsonl", [data])  # a JSON-lines export of one message
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InputError(f"{file} is not a ctxview export (no message list in it)")
    if isinstance(data.get("decisions"), list):
        return _trace_side(name, "trace", data, _items_from_decisions(data["decisions"], file))
    if isinstance(data.get("trace"), dict) or isinstance(data.get("stages"), dict):
        return _trace_side(name, "parity", data, _items_from_parity(data.get("trace") or {}))
    return _messages_side(name, "anthropic", data["messages"], family=ANTHROPIC)


def _parse_jsonl(text: str, file: Path) -> list[Any]:
    if text.lstrip().startswith("#"):
        raise InputError(f"{file} is a Markdown export; compare trace, native, jsonl, openai or anthropic exports")
    messages: list[Any] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not js_trim(line):
            continue
        try:
            messages.append(js_parse(line))
        except (ValueError, RecursionError) as exc:
            raise InputError(f"{file} is neither JSON nor JSON lines (line {number}: {exc})") from None
    return messages


def _messages_side(label: str, kind: str, messages: list[Any], *, family: str | None = None) -> DiffSide:
    found = family or _family(messages)
    if kind == "native":
        kind = {OPENAI: "openai", UNKNOWN: "messages"}.get(found, kind)
    return DiffSide(label=label, kind=kind, family=found, messages=messages, sha256=messages_sha256(messages))


def _family(messages: list[Any]) -> str:
    roles = {m.get("role") for m in messages if isinstance(m, dict)}
    if roles & {"tool", "system", "developer"} or any(isinstance(m, dict) and "tool_calls" in m for m in messages):
        return OPENAI
    if "toolResult" in roles or any(isinstance(m, dict) and "usage" in m for m in messages):
        return NATIVE
    return UNKNOWN


def _trace_side(label: str, kind: str, data: dict[str, Any], items: dict[str, ItemView]) -> DiffSide:
    messages = data["messages"]
    summary = (data.get("trace") or {}).get("summary") if isinstance(data.get("trace"), dict) else None
    budget = summary.get("tokenBudget") if isinstance(summary, dict) else None
    if budget is None and isinstance(data.get("params"), dict):
        budget = data["params"].get("tokenBudget")
    tokens = data.get("estimatedTokens")
    return DiffSide(
        label=label,
        kind=kind,
        family=NATIVE,
        messages=messages,
        sha256=messages_sha256(messages),
        tokens=tokens if isinstance(tokens, int) else None,
        selection_mode=data.get("selectionMode") if isinstance(data.get("selectionMode"), str) else None,
        token_budget=budget if isinstance(budget, int) else None,
        items=items,
    )


def _items_from_decisions(decisions: list[Any], file: Path) -> dict[str, ItemView]:
    items: dict[str, ItemView] = {}
    for entry in decisions:
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
            raise InputError(f"{file}: a decision without a key; is this a ctxview trace export?")
        ordinal, live = entry.get("ordinal"), entry.get("liveIndex")
        items[entry["key"]] = ItemView(
            key=entry["key"],
            item=str(ordinal) if ordinal is not None else f"L{live}",
            label=str(entry.get("label") or entry.get("kind") or ""),
            outcome=str(entry.get("outcome")),
            tokens=_int_or_none(entry.get("tokens")),
            score=_float_or_none(entry.get("score")),
            reason=str(entry.get("reason") or ""),
        )
    return items


def _items_from_parity(trace: dict[str, Any]) -> dict[str, ItemView]:
    """Items of a parity ``expected.json`` (or ``assemble --format json``): selected or not."""
    items: dict[str, ItemView] = {}
    for entry in trace.get("items") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("ordinal"), int):
            continue
        outcome = entry.get("outcome")
        if not isinstance(outcome, str):
            outcome = "selected" if entry.get("selected") else "not selected"
        label = entry.get("summaryKind") if entry.get("kind") == "summary" else entry.get("role")
        items[f"o:{entry['ordinal']}"] = ItemView(
            key=f"o:{entry['ordinal']}",
            item=str(entry["ordinal"]),
            label=str(label or entry.get("kind") or ""),
            outcome=outcome,
            tokens=_int_or_none(entry.get("tokens")),
            score=_float_or_none(entry.get("score")),
            reason=str(entry.get("reason") or ""),
        )
    for entry in trace.get("liveInputs") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("liveIndex"), int):
            continue
        key = f"l:{entry['liveIndex']}"
        items[key] = ItemView(
            key=key,
            item=f"L{entry['liveIndex']}",
            label="live",
            outcome=str(entry.get("outcome")),
            tokens=_int_or_none(entry.get("tokens")),
            score=None,
            reason=str(entry.get("reason") or ""),
        )
    return items


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# --- comparing ---------------------------------------------------------------------------


def diff_sides(a: DiffSide, b: DiffSide) -> DiffResult:
    if UNKNOWN not in (a.family, b.family) and a.family != b.family:
        raise InputError(
            f"{a.label} holds {a.family} messages and {b.label} holds {b.family} messages; "
            "compare exports of the same format (trace, native and jsonl exports compare with each other)"
        )
    first, prefix_tokens = shared_prefix(a.messages, b.messages)
    return DiffResult(a=a, b=b, first_difference=first, prefix_tokens=prefix_tokens, changes=_changes(a, b))


def shared_prefix(
    a: list[Any], b: list[Any], tokens: Callable[[Any], int] = serialized_message_tokens
) -> tuple[int | None, int]:
    """Index of the first message that differs (None: the lists are equal) and the serialized tokens before it.

    Byte-identical JSON is what a provider's prompt cache matches; a message object shared by
    both lists is identical without serializing it.
    """
    prefix_tokens = 0
    for index in range(max(len(a), len(b))):
        if index >= len(a) or index >= len(b):
            return index, prefix_tokens
        left, right = a[index], b[index]
        if left is not right and js_stringify(left) != js_stringify(right):
            return index, prefix_tokens
        prefix_tokens += tokens(left)
    return None, prefix_tokens


def _changes(a: DiffSide, b: DiffSide) -> list[ItemChange]:
    if a.items is None or b.items is None:
        return []
    changes: list[ItemChange] = []
    for key in sorted(a.items.keys() | b.items.keys(), key=_key_order):
        left, right = a.items.get(key), b.items.get(key)
        outcome_a = left.outcome if left else None
        outcome_b = right.outcome if right else None
        if outcome_a == outcome_b:
            continue
        shown = right or left
        assert shown is not None
        changes.append(
            ItemChange(
                key=key,
                item=shown.item,
                label=shown.label,
                outcome_a=outcome_a,
                outcome_b=outcome_b,
                tokens=shown.tokens,
                score_a=left.score if left else None,
                score_b=right.score if right else None,
                reason=shown.reason,
            )
        )
    return changes


def _key_order(key: str) -> tuple[int, int, str]:
    kind, _, rest = key.partition(":")
    if rest.lstrip("-").isdigit():
        return ({"o": 0, "l": 1}.get(kind, 2), int(rest), key)
    return (2, 0, key)


def diff_traces(a: Trace, b: Trace, *, label_a: str = "A", label_b: str = "B") -> DiffResult:
    """Compare two runs: outcome changes per item and the shared message prefix."""
    return diff_sides(side_from_trace(a, label_a), side_from_trace(b, label_b))


def diff_exports(path_a: str | Path, path_b: str | Path) -> DiffResult:
    """Compare two export files; trace exports also give the per-item outcome changes."""
    return diff_sides(load_export(path_a), load_export(path_b))


# --- presenting --------------------------------------------------------------------------


def format_diff(result: DiffResult, *, width: int = 120) -> str:
    a, b = result.a, result.b
    lines = [f"A: {a.describe()}", f"B: {b.describe()}", ""]
    if result.first_difference is None:
        lines.append(f"assembled messages: identical ({len(a.messages):,} messages, sha256 {a.sha256[:16]}…)")
    else:
        n = result.first_difference
        if n == 0:
            lines.append("assembled messages: differ from the first message on; no shared prefix for a prompt cache")
        else:
            lines.append(
                f"assembled messages: the first {n:,} are identical (~{result.prefix_tokens:,} tokens a prompt "
                f"cache can reuse); they differ from message {n + 1} on"
            )
        lines.append(f"  A[{n + 1}]: {_snippet(result.message_a, width - 10)}")
        lines.append(f"  B[{n + 1}]: {_snippet(result.message_b, width - 10)}")
    lines.append("")
    if not result.decisions_compared:
        missing = [s.label for s in (a, b) if s.items is None]
        verb = "carries" if len(missing) == 1 else "carry"
        lines.append(
            f"item outcomes: not compared ({' and '.join(missing)} {verb} no decisions; export with --format trace)"
        )
        return "\n".join(lines)
    if not result.changes:
        lines.append(f"item outcomes: no item changed outcome ({len(a.items or {}):,} items)")
        return "\n".join(lines)
    lines.append(f"items that changed outcome: {len(result.changes):,}")
    lines.append(f"{'item':>6}  {'kind':<13} {'tokens':>7}  {'A':<21} {'B':<21} reason")
    for change in result.changes:
        tokens = f"{change.tokens:,}" if change.tokens is not None else ""
        row = (
            f"{change.item:>6}  {change.label:<13} {tokens:>7}  {_outcome(change.outcome_a):<21} "
            f"{_outcome(change.outcome_b):<21} {change.reason}"
        )
        lines.append(_clip(row, width))
    return "\n".join(lines)


def _outcome(outcome: str | None) -> str:
    return "(absent)" if outcome is None else outcome.replace("-", " ")


def _snippet(message: Any, width: int) -> str:
    if message is None:
        return "(no message: the list ends here)"
    if not isinstance(message, dict):
        return _clip(js_stringify(message), width)
    role = message.get("role", "?")
    content = message.get("content")
    text = ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        pieces: list[str] = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                pieces.append(block["text"])
            elif isinstance(block, dict):
                pieces.append(f"[{block.get('type', 'block')}{' ' + str(block['name']) if 'name' in block else ''}]")
        text = " ".join(pieces)
    elif content is not None:
        text = js_stringify(content)
    if role == "toolResult" and message.get("toolCallId"):
        text = f"(call {message['toolCallId']}) {text}"
    return _clip(f"{role}: {collapse_js_whitespace(text).strip()}", width)


def _clip(text: str, width: int) -> str:
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= width else clean[: max(1, width - 1)] + "…"


def diff_to_json(result: DiffResult) -> dict[str, Any]:
    """The comparison as data, for ``ctxview diff --json``."""

    def side(s: DiffSide) -> dict[str, Any]:
        return {
            "label": s.label,
            "kind": s.kind,
            "messageCount": len(s.messages),
            "messagesSha256": s.sha256,
            "estimatedTokens": s.tokens,
            "tokenBudget": s.token_budget,
            "selectionMode": s.selection_mode,
            "hasDecisions": s.items is not None,
        }

    return {
        "a": side(result.a),
        "b": side(result.b),
        "identical": result.identical,
        "messagesIdentical": result.messages_identical,
        "firstDifference": result.first_difference,
        "prefixMessages": result.prefix_messages,
        "prefixTokens": result.prefix_tokens,
        "decisionsCompared": result.decisions_compared,
        "changes": [
            {
                "key": c.key,
                "item": c.item,
                "label": c.label,
                "outcomeA": c.outcome_a,
                "outcomeB": c.outcome_b,
                "tokens": c.tokens,
                "scoreA": c.score_a,
                "scoreB": c.score_b,
                "reason": c.reason,
            }
            for c in result.changes
        ],
    }
