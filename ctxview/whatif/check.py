"""Context guards for CI: expectations about a run, and the trace's own words when one fails.

An expectation keeps or evicts an item, or caps the final token count.  An item
is named as a person finds it: a context ordinal (``12``), a live input
(``L0``), a message id (``msg:17``), a summary id (``sum_ab12…``) or a tool
call id (every item carrying that call: the call and its result).  A failed
expectation reads like the trace: ``summary sum_ab12 (item 2) evicted: …``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxview.errors import InputError
from ctxview.files import Wording, read_text
from ctxview.jsjson import js_parse
from ctxview.model import Decision, Trace, column, count_text, outcome_text

KEEP, EVICT, MAX_TOKENS = "keep", "evict", "max-tokens"

EXPECT_FILE = Wording(
    "expectations file",
    missing="expectations file {path} not found",
    directory="expectations file {path} is a directory",
    not_regular="expectations file {path} is not a regular file ({kind})",
    not_text="expectations file {path} is not UTF-8 text",
    unreadable="cannot read expectations file {path}: {reason}",
)


@dataclass(frozen=True, slots=True)
class Expectation:
    kind: str  # keep | evict | max-tokens
    item: str = ""  # the item as written (keep, evict)
    tokens: int = 0  # the cap (max-tokens)

    def describe(self) -> str:
        return f"--max-tokens {self.tokens:,}" if self.kind == MAX_TOKENS else f"--{self.kind} {self.item}"


@dataclass(frozen=True, slots=True)
class Failure:
    expectation: Expectation
    line: str  # one line, in the trace's words


def find_items(trace: Trace, item: str) -> list[Decision]:
    """The decisions an item reference names (input error when it names none)."""
    text = item.strip()
    decisions = trace.decisions
    if text.lstrip("-").isdigit():
        return _where(decisions, "ordinal", int(text), item)
    if text[:1] in "Ll" and text[1:].isdigit():
        return _where(decisions, "live_index", int(text[1:]), item)
    prefix, colon, rest = text.partition(":")
    if colon and prefix.lower() in ("msg", "message") and rest.strip().isdigit():
        return _where(decisions, "message_id", int(rest), item)
    summaries = _where(decisions, "summary_id", text, None)
    if summaries:
        return summaries
    calls = [index for index, ids in enumerate(column(decisions, "tool_call_ids")) if text in ids]
    if calls:
        return [decisions[index] for index in calls]
    raise InputError(
        f"no item matches {item!r} (write an ordinal, L<n> for a live input, msg:<message id>, a summary id or a "
        "tool call id)"
    )


def _where(decisions: Any, name: str, value: Any, item: str | None) -> list[Decision]:
    found = [decisions[index] for index, v in enumerate(column(decisions, name)) if v == value]
    if not found and item is not None:
        raise InputError(f"no item matches {item!r} in this conversation")
    return found


def item_name(decision: Decision) -> str:
    """``summary sum_ab12 (item 2)``, ``message msg:17 (item 4)``, ``live input L0``."""
    if decision.summary_id is not None and decision.kind == "summary":
        return f"summary {decision.summary_id} (item {decision.ordinal})"
    if decision.message_id is not None:
        return f"{decision.label} msg:{decision.message_id} (item {decision.ordinal})"
    if decision.live_index is not None:
        return f"live input L{decision.live_index}"
    return f"{decision.kind} item {decision.item_id}"


def _why(decision: Decision) -> str:
    """The trace's reason without a lead word that repeats the outcome (``evicted: …``)."""
    reason = decision.reason
    for lead in (decision.outcome, outcome_text(decision.outcome)):
        if reason.startswith(lead + ": "):
            return reason[len(lead) + 2 :]
    return reason


def check_trace(trace: Trace, expectations: Iterable[Expectation]) -> list[Failure]:
    """Every expectation that does not hold, each with its one line."""
    failures: list[Failure] = []
    for expectation in expectations:
        if expectation.kind == MAX_TOKENS:
            final = trace.summary.final_tokens
            if final > expectation.tokens:
                failures.append(Failure(expectation, (
                    f"final context {final:,} tokens exceeds --max-tokens {expectation.tokens:,} "
                    f"({count_text(len(trace.messages), 'message')}, budget {trace.summary.token_budget:,})"
                )))
            continue
        want_kept = expectation.kind == KEEP
        for decision in find_items(trace, expectation.item):
            if decision.is_kept == want_kept:
                continue
            wanted = "" if want_kept else " (expected evicted)"
            failures.append(Failure(
                expectation, f"{item_name(decision)} {outcome_text(decision.outcome)}{wanted}: {_why(decision)}"
            ))
    return failures


def expectations_from(keep: Sequence[str], evict: Sequence[str], max_tokens: int | None) -> list[Expectation]:
    found = [Expectation(KEEP, item) for item in keep] + [Expectation(EVICT, item) for item in evict]
    if max_tokens is not None:
        found.append(Expectation(MAX_TOKENS, tokens=max_tokens))
    return found


def load_expectations(path: str | Path) -> list[Expectation]:
    """``keep = [...]``, ``evict = [...]``, ``max-tokens = N`` (or ``max_tokens``) from a TOML or JSON file."""
    file = Path(path)
    text = read_text(file, EXPECT_FILE)
    data: Any
    if file.suffix.lower() == ".json":
        try:
            data = js_parse(text)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"expectations file {file} is not valid JSON: {exc}") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"expectations file {file} is not valid TOML: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"expectations file {file} must hold an object with keep, evict and max-tokens")
    unknown = set(data) - {"keep", "evict", "max-tokens", "max_tokens", "maxTokens"}
    if unknown:
        raise InputError(f"expectations file {file}: unknown key {sorted(unknown)[0]!r} (use keep, evict, max-tokens)")
    keep, evict = _items(data, "keep", file), _items(data, "evict", file)
    cap = next((data[k] for k in ("max-tokens", "max_tokens", "maxTokens") if k in data), None)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
        raise InputError(f"expectations file {file}: max-tokens must be a whole number of tokens, not {cap!r}")
    return expectations_from(keep, evict, cap)


def _items(data: dict[str, Any], key: str, file: Path) -> list[str]:
    value = data.get(key, [])
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise InputError(f"expectations file {file}: {key} must be a list of items (ordinals or ids)")
    return [str(v) for v in value]
