"""``overflowDiagnostics`` of the assembler debug record (spec §8).

Totals per item kind, duplicate clusters (the same message/summary referenced
twice, or identical message text) and the top token contributors, computed
from the resolved list (stubbed values included) and the §6 selection.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ctxview.assembly.resolve import ResolvedItem, text_hash
from ctxview.jsjson import has_lone_surrogates

_SURROGATE_RE = re.compile("[\ud800-\udfff]")

# ICU root collation order of ASCII punctuation and symbols (JS localeCompare, "en").
_PUNCT_ORDER = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCT_RANK = {ch: i for i, ch in enumerate(_PUNCT_ORDER)}


def _collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Approximate ``localeCompare`` order: punctuation < digits < letters, case second."""
    primary: list[int] = []
    tertiary: list[int] = []
    for ch in text:
        if ch.isspace():
            primary.append(0)
            tertiary.append(0)
        elif ch in _PUNCT_RANK:
            primary.append(1 + _PUNCT_RANK[ch])
            tertiary.append(0)
        elif ch.isdigit() and ch.isascii():
            primary.append(100 + ord(ch))
            tertiary.append(0)
        elif ch.isascii() and ch.isalpha():
            primary.append(200 + ord(ch.lower()))
            tertiary.append(1 if ch.isupper() else 0)
        else:
            primary.append(1000 + ord(ch))
            tertiary.append(0)
    return tuple(primary), tuple(tertiary)


def _clusters(groups: dict[str, list[ResolvedItem]], kind_for: Callable[[str], str]) -> list[dict[str, Any]]:
    """The five largest groups of two or more, by tokens, then count, then key.

    A long session has tens of thousands of small groups; the collation key (a
    per-character walk) is only taken for those that can still reach the top five.
    """
    sized = [(-sum(item.tokens for item in items), -len(items), key) for key, items in groups.items() if len(items) > 1]
    if len(sized) > 5:
        fifth = heapq.nsmallest(5, (size[:2] for size in sized))[-1]
        sized = [size for size in sized if size[:2] <= fifth]
    sized.sort(key=lambda size: (size[0], size[1], _collation_key(size[2])))
    rows: list[dict[str, Any]] = []
    for tokens, count, key in sized[:5]:
        items = groups[key]
        row: dict[str, Any] = {
            "key": key,
            "kind": kind_for(key),
            "count": -count,
            "tokens": -tokens,
            "ordinals": [item.ordinal for item in items][:8],
        }
        if any(item.seq is not None for item in items):
            row["seqs"] = [item.seq for item in items if item.seq is not None][:8]
        rows.append(row)
    return rows


def duplicate_ref_clusters(resolved: Sequence[ResolvedItem]) -> list[dict[str, Any]]:
    """Items that reference the same message or summary (by the text key ``message:<id>`` / ``summary:<id>``).

    Grouped by the id itself, the text keys made for groups of two or more only; distinct int
    message ids and str summary ids always print distinct keys (other id types: by text key).
    The ids are counted first (at C speed): only the few referenced twice are grouped.
    """
    message_ids: list[Any] = []
    summary_ids: list[Any] = []
    for item in resolved:
        if item.is_message:
            if item.message_id is not None:
                message_ids.append(item.message_id)
        elif item.summary is not None:
            summary_ids.append(item.summary.summary_id)
    if not set(map(type, message_ids)) <= {int} or not set(map(type, summary_ids)) <= {str}:
        return _ref_clusters_by_text(resolved)
    twice_messages = _twice(message_ids)
    twice_summaries = _twice(summary_ids)
    if not twice_messages and not twice_summaries:
        return []
    groups: dict[str, list[ResolvedItem]] = {}  # in the order each id is first referenced
    for item in resolved:
        if item.is_message:
            if item.message_id in twice_messages:
                groups.setdefault(f"message:{item.message_id}", []).append(item)
        elif item.summary is not None and item.summary.summary_id in twice_summaries:
            groups.setdefault(f"summary:{item.summary.summary_id}", []).append(item)
    return _clusters(groups, _ref_kind)


def _twice(values: list[Any]) -> set[Any]:
    """The values ``values`` holds more than once."""
    if len(set(values)) == len(values):
        return set()
    return {value for value, count in Counter(values).items() if count > 1}


def _ref_kind(key: str) -> str:
    return "message-ref" if key.startswith("message:") else "summary-ref"


def _ref_clusters_by_text(resolved: Sequence[ResolvedItem]) -> list[dict[str, Any]]:
    groups: dict[str, list[ResolvedItem]] = {}
    for item in resolved:
        if item.is_message:
            if item.message_id is None:
                continue
            key = f"message:{item.message_id}"
        else:
            if item.summary is None:
                continue
            key = f"summary:{item.summary.summary_id}"
        groups.setdefault(key, []).append(item)
    return _clusters(groups, _ref_kind)


def duplicate_message_clusters(resolved: Iterable[ResolvedItem]) -> list[dict[str, Any]]:
    """Messages grouped by the hash of their text, hashing only the texts of groups of two or more.

    Distinct texts hash alike only when Node's U+FFFD for a lone surrogate makes them equal:
    texts are grouped by the text Node hashes, so a text alone in its group (nearly every one
    of a long session) is never hashed.  Where no text holds a lone surrogate (the usual session),
    the texts are counted first (at C speed) and only those seen twice are grouped.
    """
    resolved = list(resolved)
    counts = Counter([item.text for item in resolved if item.is_message and item.text])
    if any(map(has_lone_surrogates, counts)):
        return _message_clusters_by_node_text(resolved)
    if len(counts) == counts.total():
        return []
    twice = {text for text, count in counts.items() if count > 1}
    by_text: dict[str, list[ResolvedItem]] = {}  # in the order each text is first seen
    for item in resolved:
        if item.is_message and item.text in twice:
            by_text.setdefault(item.text, []).append(item)
    return _clusters({text_hash(text): items for text, items in by_text.items()}, _message_content_kind)


def _message_content_kind(_key: str) -> str:
    return "message-content"


def _message_clusters_by_node_text(resolved: Iterable[ResolvedItem]) -> list[dict[str, Any]]:
    """``duplicate_message_clusters`` where a text holds a lone surrogate: grouped by the text Node hashes."""
    by_text: dict[str, list[ResolvedItem]] = {}
    for item in resolved:
        if item.is_message and item.text:
            by_text.setdefault(item.text, []).append(item)
    alike: dict[str, list[str]] = {}  # the text Node hashes → the distinct texts it stands for
    for text in by_text:
        node_text = _SURROGATE_RE.sub("\ufffd", text) if has_lone_surrogates(text) else text
        alike.setdefault(node_text, []).append(text)
    groups: dict[str, list[ResolvedItem]] = {}
    for texts in alike.values():
        if len(texts) == 1:
            items = by_text[texts[0]]
        else:  # texts that differ only in lone surrogates: one group, in context order
            items = sorted([item for text in texts for item in by_text[text]], key=lambda item: item.ordinal)
        if len(items) > 1:
            groups[text_hash(texts[0])] = items
    return _clusters(groups, _message_content_kind)


def top_contributors(
    resolved: Iterable[ResolvedItem], selected_ordinals: set[int], is_message: bool
) -> list[dict[str, Any]]:
    candidates = [item for item in resolved if item.is_message == is_message]
    top = heapq.nsmallest(5, candidates, key=lambda item: (-item.tokens, item.ordinal))
    rows: list[dict[str, Any]] = []
    for item in top:
        row: dict[str, Any] = {
            "ordinal": item.ordinal,
            "tokens": item.tokens,
            "selected": item.ordinal in selected_ordinals,
        }
        if item.message_id is not None:
            row["messageId"] = item.message_id
        if item.seq is not None:
            row["seq"] = item.seq
        if item.source_role:
            row["role"] = item.source_role
        if item.summary is not None:
            row["summaryId"] = item.summary.summary_id
            row["summaryKind"] = item.summary.kind
            row["summaryDepth"] = item.summary.depth
        rows.append(row)
    return rows


# The parts of the diagnostics that only depend on the resolved list, for the last few lists seen
# (keyed by identity; the list itself is held so that its id cannot be reused while cached).
_STATIC: dict[int, tuple[Sequence[ResolvedItem], dict[str, Any]]] = {}
_STATIC_LIMIT = 8


def _static_part(resolved: Sequence[ResolvedItem]) -> dict[str, Any]:
    hit = _STATIC.get(id(resolved))
    if hit is not None and hit[0] is resolved and len(resolved) == hit[1]["totalContextItems"]:
        return hit[1]
    raw_tokens = raw_count = summary_tokens = summary_count = 0
    for item in resolved:
        if item.is_message:
            raw_tokens += item.tokens
            raw_count += 1
        else:
            summary_tokens += item.tokens
            summary_count += 1
    part: dict[str, Any] = {
        "totalContextTokens": raw_tokens + summary_tokens,
        "rawMessageTokens": raw_tokens,
        "summaryTokens": summary_tokens,
        "rawMessageCount": raw_count,
        "summaryCount": summary_count,
        "totalContextItems": len(resolved),
        "duplicateRefClusters": duplicate_ref_clusters(resolved),
        "duplicateMessageClusters": duplicate_message_clusters(resolved),
        # the top five by tokens: which ones were selected is the only per-run part
        "topMessages": top_contributors(resolved, set(), True),
        "topSummaries": top_contributors(resolved, set(), False),
    }
    if len(_STATIC) >= _STATIC_LIMIT:
        _STATIC.pop(next(iter(_STATIC)))
    _STATIC[id(resolved)] = (resolved, part)
    return part


def _copy_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: (list(v) if isinstance(v, list) else v) for k, v in row.items()} for row in rows]


def overflow_diagnostics(
    resolved: Sequence[ResolvedItem], selected: Sequence[ResolvedItem], token_budget: int
) -> dict[str, Any]:
    """§8 ``overflowDiagnostics`` (focus items count with the summaries here)."""
    part = _static_part(resolved)
    selected_ordinals = {item.ordinal for item in selected}
    selected_raw = sum(1 for item in selected if item.is_message)
    top_messages = _copy_rows(part["topMessages"])
    top_summaries = _copy_rows(part["topSummaries"])
    for row in (*top_messages, *top_summaries):
        row["selected"] = row["ordinal"] in selected_ordinals
    return {
        "tokenBudget": token_budget,
        "totalContextTokens": part["totalContextTokens"],
        "rawMessageTokens": part["rawMessageTokens"],
        "summaryTokens": part["summaryTokens"],
        "rawMessageCount": part["rawMessageCount"],
        "summaryCount": part["summaryCount"],
        "totalContextItems": part["totalContextItems"],
        "selectedRawMessageCount": selected_raw,
        "selectedSummaryCount": len(selected) - selected_raw,
        "duplicateRefClusters": _copy_rows(part["duplicateRefClusters"]),
        "duplicateMessageClusters": _copy_rows(part["duplicateMessageClusters"]),
        "topMessageContributors": top_messages,
        "topSummaryContributors": top_summaries,
    }
