"""Headless renderings of a Trace: parity-shaped JSON and a readable table.

The JSON has the fields of the parity ``expected.json`` plus ctxview's own
per-item decision fields, so the reference checker and people read the same
object.  No Textual here: the CLI stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C string encoder json uses
from typing import Any

from ctxview.assembly.decisions import ROW_FIELDS
from ctxview.jsjson import escape_lone_surrogates, js_stringify
from ctxview.model import Decision, TermMatch, Trace, column, count_text, describe_key, format_score, outcome_text

_SEGMENT_JSON = {"evictable": "evictable", "fresh-tail": "freshTail", "focus": "focus", "live": "live"}


def trace_to_json(
    trace: Trace, decisions_json: Sequence[dict[str, Any]] | None = None, *, with_items: bool = True
) -> dict[str, Any]:
    """The parity ``expected.json`` shape, with ctxview's decisions added per item.

    ``decisions_json``: ``decision_json`` of each of ``trace.decisions``, when the caller has made them already.
    ``with_items=False`` leaves the three per-decision lists empty (``write_trace_json`` streams them).
    """
    stages = trace.stage_records()
    assembler = stages.get("assembler", {})
    debug = assembler.get("debug") or {}
    if not with_items:
        decisions_json = ()
    elif decisions_json is None:
        decisions_json = [decision_json(d) for d in trace.decisions]
    items: list[dict[str, Any]] = []
    replaced: list[dict[str, Any]] = []  # summaries a focus brief stands in for: no longer items (§10.1)
    live: list[dict[str, Any]] = []
    for d, full in zip(trace.decisions if with_items else (), decisions_json, strict=True):
        if d.ordinal is not None and d.outcome != "unresolved":
            (replaced if d.outcome == "replaced-by-focus" else items).append(_item_json(full))
        if d.live_index is not None:
            live.append({name: full[name] for name in _LIVE_FIELDS})
    return {
        "formatVersion": 1,
        "assemblePath": "engine" if trace.params.engine else "assembler",
        "engineOutcome": trace.summary.engine_outcome,
        "messages": trace.messages,
        "estimatedTokens": trace.summary.final_tokens,
        "selectionMode": trace.summary.selection_mode,
        "freshTailOrdinal": debug.get("freshTailOrdinal", trace.summary.fresh_tail_ordinal),
        "keptOrdinals": trace.kept_ordinals,
        "stages": stages,
        "engineRules": {
            "line": trace.summary.engine_line,
            "release": trace.summary.engine_release,
            "why": trace.summary.engine_rules_why,
        },
        "trace": {
            "contextOrdinals": trace.context_ordinals,
            "unresolvedOrdinals": trace.unresolved_ordinals,
            "items": items,
            "replacedByFocus": replaced,
            "liveInputs": live,
            "protectedPairs": [
                {"call": call, "result": result, "why": why} for call, result, why in trace.protected_pairs
            ],
            "summary": _summary_json(trace),
        },
        "warnings": trace.warnings,
        "notes": trace.notes,
    }


_ITEMS_PLACEHOLDER = "\u0000ctxview: the trace items go here\u0000"
_STREAM_BATCH = 2048  # items encoded together: few encoder calls, little held at once


def write_trace_json(trace: Trace, write: Callable[[str], Any], *, fork: bool = False) -> None:
    """Write ``dumps(trace_to_json(trace))`` in pieces, byte for byte the same text.

    The document is encoded once with a marker where the items go; the items are
    written a batch at a time from the decision list's rows (``scan_rows``: the
    run's values, no ``Decision`` built), so a 100,000-item trace never holds every
    item object, nor the whole text, at once.  ``fork``: where a core is idle and the
    trace is long, a forked copy of this process writes the later items meanwhile
    (``forked_map.ForkedText``), while this one writes the rest of the document.
    """
    decisions = trace.decisions
    later, split = _forked_items(decisions) if fork else (None, None)
    try:
        document = trace_to_json(trace, with_items=False)  # everything but the per-item lists
        body = document["trace"]
        body["items"] = _ITEMS_PLACEHOLDER
        body["replacedByFocus"], body["liveInputs"] = _replaced_and_live(decisions)
        # the message lists are spliced in from each message's own JSON text, which the assembler's debug
        # record has made already for most of them (``message_json``: ``JSON.stringify`` of a list is its
        # members' texts joined by commas)
        lists = _message_lists(document)
        marker = dumps(_ITEMS_PLACEHOLDER)
        whole = dumps(document)
        if whole.count(marker) != 1 or any(whole.count(spliced) != 1 for spliced, _ in lists):
            write(dumps(trace_to_json(trace)))  # (a stored text that spells a marker: no shortcut)
            return
        at = whole.index(marker)
        _write_spliced(write, whole[:at], lists)
        tail = whole[at + len(marker) :]
        del whole
        write("[")
        wrote = False
        for piece in _item_pieces(decisions, 0, split):
            write("," + piece if wrote else piece)
            wrote = True
        if later is not None and split is not None:
            done, later = later.write_to(write, skip=0 if wrote else 1), None
            if not done:  # the forked process failed: its items are written here
                for piece in _item_pieces(decisions, split, None):
                    write("," + piece if wrote else piece)
                    wrote = True
        write("]")
        _write_spliced(write, tail, lists)
    finally:
        if later is not None:
            later.cancel()


_MESSAGES_PLACEHOLDER = "\u0000ctxview: the messages of {} go here\u0000"


def _message_lists(document: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """Put placeholders in place of the message lists of ``document`` (made for this write) and of its
    assembler stage (a copy of it: the stages are the trace's own): [(the placeholder's JSON, the list)]."""
    found: list[tuple[str, list[Any]]] = []

    def replaced(holder: dict[str, Any], name: str) -> dict[str, Any]:
        placeholder = _MESSAGES_PLACEHOLDER.format(name)
        found.append((dumps(placeholder), holder["messages"]))
        return {**holder, "messages": placeholder}

    if isinstance(document.get("messages"), list) and document["messages"]:
        document["messages"] = replaced(document, "final")["messages"]
    stages = document.get("stages")
    assembler = stages.get("assembler") if isinstance(stages, dict) else None
    if isinstance(assembler, dict) and isinstance(assembler.get("messages"), list) and assembler["messages"]:
        document["stages"] = {**stages, "assembler": replaced(assembler, "assembler")}
    return found


def _write_spliced(write: Callable[[str], Any], text: str, lists: list[tuple[str, list[Any]]]) -> None:
    """``write`` ``text`` with each placeholder it holds replaced by the JSON of its message list."""
    from ctxview.assembly.incremental.message_json import message_json

    spots = sorted((text.index(spliced), index) for index, (spliced, _) in enumerate(lists) if spliced in text)
    done = 0
    for at, index in spots:
        spliced, messages = lists[index]
        write(text[done:at])
        write("[" + ",".join(map(message_json, messages)) + "]")
        done = at + len(spliced)
    write(text[done:])


# the items a forked process writes (the later part of them), from this many decisions
FORK_ITEMS_FROM = 4000
# what the rest of the document costs this process, in items' worth of writing (the assembler's debug record with
# the overflow diagnostics; the message lists are mostly spliced in from the texts the debug record made): this
# many, plus this share of the items (~6,000 at 10,000 items, ~25,000 at 100,000: the CPU of both processes' parts,
# measured 26 Nov 03:20 with the fork forced)
DOCUMENT_ITEMS = 4000
DOCUMENT_ITEMS_SHARE = 0.2


def _forked_items(decisions: Sequence[Decision]) -> tuple[Any, int | None]:
    """(the forked process writing the items from position ``split`` on, ``split``), or (None, None)."""
    from ctxview.assembly.forked_map import ForkedText, fork_helps
    from ctxview.assembly.incremental.decision_list import CHUNK

    count = getattr(decisions, "base_count", None)
    if count is None or count < FORK_ITEMS_FROM or not fork_helps(count):
        return None, None
    split = _fork_split(count)
    if split % CHUNK or not 0 <= split < count:
        return None, None
    try:
        later = ForkedText(lambda: ("," + piece for piece in _item_pieces(decisions, split, None)))
    except OSError:
        return None, None
    return later, split


def _fork_split(count: int) -> int:
    """The first position the forked process writes, at a chunk's start: both processes then finish about
    together (this one also encodes the rest of the document, and copies out the other's text)."""
    from ctxview.assembly.incremental.decision_list import CHUNK

    own = (count - DOCUMENT_ITEMS - count * DOCUMENT_ITEMS_SHARE) / 2
    return max(0, int(own)) // CHUNK * CHUNK


def _item_pieces(decisions: Sequence[Decision], start: int, stop: int | None) -> Iterable[str]:
    """The item texts of the decisions at positions ``start`` to ``stop`` (None: to the end, appended ones
    included), ``_STREAM_BATCH`` items a piece joined by commas; empty pieces are left out."""
    scan_rows = getattr(decisions, "scan_rows", None)
    rows: Iterable[list[Any]] = (
        scan_rows(ROW_FIELDS, start)
        if scan_rows is not None
        else ([getattr(d, name) for name in ROW_FIELDS] for d in decisions[start:])
    )
    left = -1 if stop is None else stop - start
    if left == 0:
        return
    batch: list[list[Any]] = []
    for row in rows:
        if left == 0:
            break
        left -= 1
        # row[1] ordinal, row[14] outcome: the context items the parity trace lists
        if row[1] is not None and row[14] not in _NOT_ITEMS:
            batch.append(row)
            if len(batch) == _STREAM_BATCH:
                yield rows_text(batch)
                batch = []
    if batch:
        yield rows_text(batch)


_NOT_ITEMS = frozenset(("unresolved", "replaced-by-focus"))


def _replaced_and_live(decisions: Sequence[Decision]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The parity trace's ``replacedByFocus`` and ``liveInputs``: a few decisions, found by column."""
    ordinals = column(decisions, "ordinal")
    outcomes = column(decisions, "outcome")
    live_indexes = column(decisions, "live_index")
    replaced = [
        item_json(decisions[i])
        for i, outcome in enumerate(outcomes)
        if outcome == "replaced-by-focus" and ordinals[i] is not None
    ]
    live = []
    for i, live_index in enumerate(live_indexes):
        if live_index is not None:
            full = decision_json(decisions[i])
            live.append({name: full[name] for name in _LIVE_FIELDS})
    return replaced, live


def rules_text(trace: Trace) -> str:
    """Which engine line's rules ran, and why: the first thing to know about any result."""
    s = trace.summary
    return f"lossless-claw {s.engine_line} rules ({s.engine_release}): {s.engine_rules_why}"


def fallback_text(trace: Trace) -> str:
    """Why the engine sent the live transcript, in words, with its own reason name."""
    s = trace.summary
    reason = s.engine_outcome.removeprefix("live-fallback:")
    why = s.fallback_why or reason
    return why if why == reason else f"{why} ({reason})"


def dumps(value: Any) -> str:
    """Compact JSON with JavaScript number formatting (stored floats print as the reference would)."""
    return js_stringify(value)


def decision_json(d: Decision) -> dict[str, Any]:
    """Every field of one decision, with JSON names: the one mapping every JSON view of a decision projects."""
    return {
        "key": d.key,
        "ordinal": d.ordinal,
        "liveIndex": d.live_index,
        "kind": d.kind,
        "label": d.label,
        "labelExtra": d.label_extra,
        "role": d.role,
        "sourceRole": d.source_role,
        "messageId": d.message_id,
        "seq": d.seq,
        "summaryId": d.summary_id,
        "summaryKind": d.summary_kind,
        "tokens": d.tokens,
        "serializedTokens": d.serialized_tokens,
        "score": d.score,
        "matchedTerms": [
            {"term": m.term, "count": m.count, "contribution": m.contribution, "weight": m.weight, "note": m.note}
            for m in d.matched_terms
        ],
        "segment": d.segment,
        "selected": d.selected,
        "outcome": d.outcome,
        "reason": d.reason,
        "pairWith": list(d.pair_with),
        "toolCallIds": list(d.tool_call_ids),
        "syntheticResultFor": list(d.synthetic_result_for),
        "outputIndex": d.output_index,
        "protected": d.protected,
        "evictedBy": d.evicted_by,
        "coveredBy": d.covered_by,
        "minBudget": d.min_budget,
    }


# the parity trace's item and live-input objects: fields of ``decision_json``, in parity order
_ITEM_FIELDS = (
    "ordinal",
    "kind",
    "sourceRole",
    "role",
    "messageId",
    "seq",
    "summaryId",
    "summaryKind",
    "tokens",
    "segment",
    "selected",
    "score",
    "outcome",
    "reason",
    "matchedTerms",
    "pairWith",
    "toolCallIds",
    "outputIndex",
    "protected",
    "evictedBy",
)
_LIVE_FIELDS = ("liveIndex", "role", "tokens", "serializedTokens", "outcome", "reason", "coveredBy", "outputIndex")
_TERM_FIELDS = ("term", "count", "contribution", "weight")


def item_json(d: Decision) -> dict[str, Any]:
    """``_item_json(decision_json(d))`` in one step: the CLI writes 100,000 of them."""
    segment = d.segment
    return {
        "ordinal": d.ordinal,
        "kind": d.kind,
        "sourceRole": d.source_role,
        "role": d.role,
        "messageId": d.message_id,
        "seq": d.seq,
        "summaryId": d.summary_id,
        "summaryKind": d.summary_kind,
        "tokens": d.tokens,
        "segment": _SEGMENT_JSON.get(segment, segment),
        "selected": d.selected,
        "score": d.score,
        "outcome": d.outcome,
        "reason": d.reason,
        "matchedTerms": [
            {"term": m.term, "count": m.count, "contribution": m.contribution, "weight": m.weight}
            for m in d.matched_terms
        ],
        "pairWith": list(d.pair_with),
        "toolCallIds": list(d.tool_call_ids),
        "outputIndex": d.output_index,
        "protected": d.protected,
        "evictedBy": d.evicted_by,
    }


def items_text(decisions: Sequence[Decision]) -> str:
    """``dumps([item_json(d) for d in decisions])[1:-1]``, the same text, written without the item dicts."""
    return rows_text([[getattr(d, name) for name in ROW_FIELDS] for d in decisions])


def rows_text(rows: Sequence[list[Any]]) -> str:
    """``items_text`` of decisions given as rows of their ``ROW_FIELDS`` values.

    Each value is encoded as the JS-exact encoder encodes it (the C string encoder, ``repr`` of
    a finite float); a value of any other type, or a text the encoder would rewrite afterwards,
    sends the batch through ``dumps`` itself.
    """
    try:
        text = ",".join([_row_text(row) for row in rows])
    except _Unusual:
        return dumps([_row_item_json(row) for row in rows])[1:-1]
    if _ENCODED_SENTINEL in text:  # the encoder's number marker spelled by a stored text: let it decide
        return dumps([_row_item_json(row) for row in rows])[1:-1]
    return escape_lone_surrogates(text)


class _Unusual(Exception):
    """A value ``items_text`` does not encode itself."""


def _float_text(value: float) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    raise _Unusual


def _unusual(value: Any) -> str:
    raise _Unusual


_ENCODE: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    bool: lambda value: "true" if value else "false",
    type(None): lambda _value: "null",
    float: _float_text,
}
_ENCODED_SENTINEL = dumps("\u0000")[1:-1]  # every number marker of the encoder starts with this escape


def _json_value(value: Any) -> str:
    return _ENCODE.get(value.__class__, _unusual)(value)


# JSON of the few texts most fields take (roles, kinds, outcomes), each encoded once; str and None keys only
_WORDS: dict[str | None, str] = {None: "null"}
# JSON of a segment: the parity trace's camelCase names
_SEGMENT_WORDS: dict[Any, str] = {name: encode_basestring(json_name) for name, json_name in _SEGMENT_JSON.items()}


def _word(value: Any) -> str:
    text = _json_value(value)
    if value.__class__ is str and len(_WORDS) < 256:
        _WORDS[value] = text
    return text


def _strings_text(values: Sequence[str]) -> str:
    try:  # (the C encoder takes only a str: anything else raises)
        return "[" + ",".join(map(encode_basestring, values)) + "]"
    except TypeError:
        return "[" + ",".join([_json_value(v) for v in values]) + "]"


def _terms_text(terms: Sequence[TermMatch]) -> str:
    v = _json_value
    return (
        "["
        + ",".join(
            [
                f'{{"term":{v(m.term)},"count":{v(m.count)},"contribution":{v(m.contribution)},"weight":{v(m.weight)}}}'
                for m in terms
            ]
        )
        + "]"
    )


def _nullable(value: Any) -> str:
    return "null" if value is None else _json_value(value)


def _row_text(row: list[Any]) -> str:
    """One item of ``rows_text``: the fields of ``item_json`` in its order.

    The common types are written inline (an int as ``str`` writes it, a text with the C
    encoder, a word from ``_WORDS``); anything else goes through ``_json_value``.
    """
    (
        _key, ordinal, _live_index, kind, source_role, role, message_id, seq, summary_id, summary_kind,
        tokens, segment, selected, score, outcome, reason, matched, pair_with, tool_call_ids,
        output_index, protected, evicted_by,
    ) = row  # fmt: skip
    v = _json_value
    words = _WORDS
    return (
        f'{{"ordinal":{ordinal if ordinal.__class__ is int else v(ordinal)},'
        f'"kind":{words.get(kind) or _word(kind)},'
        f'"sourceRole":{words.get(source_role) or _word(source_role)},'
        f'"role":{words.get(role) or _word(role)},'
        f'"messageId":{message_id if message_id.__class__ is int else v(message_id)},'
        f'"seq":{seq if seq.__class__ is int else v(seq)},'
        f'"summaryId":{"null" if summary_id is None else v(summary_id)},'
        f'"summaryKind":{words.get(summary_kind) or _word(summary_kind)},'
        f'"tokens":{tokens if tokens.__class__ is int else v(tokens)},'
        f'"segment":{_SEGMENT_WORDS.get(segment) or v(segment)},'
        f'"selected":{"true" if selected is True else "false" if selected is False else v(selected)},'
        f'"score":{score if score.__class__ is float and score - score == 0.0 else _nullable(score)},'
        f'"outcome":{words.get(outcome) or _word(outcome)},'
        f'"reason":{encode_basestring(reason) if reason.__class__ is str else v(reason)},'
        f'"matchedTerms":{_terms_text(matched) if matched else "[]"},'
        f'"pairWith":{_strings_text(pair_with) if pair_with else "[]"},'
        f'"toolCallIds":{_strings_text(tool_call_ids) if tool_call_ids else "[]"},'
        f'"outputIndex":{output_index if output_index.__class__ is int else v(output_index)},'
        f'"protected":{"null" if protected is None else v(protected)},'
        f'"evictedBy":{"null" if evicted_by is None else v(evicted_by)}}}'
    )


def _row_item_json(row: list[Any]) -> dict[str, Any]:
    """The item object of a row, for the encoder itself."""
    values = dict(zip(ROW_FIELDS, row, strict=True))
    segment = values["segment"]
    return {
        "ordinal": values["ordinal"],
        "kind": values["kind"],
        "sourceRole": values["source_role"],
        "role": values["role"],
        "messageId": values["message_id"],
        "seq": values["seq"],
        "summaryId": values["summary_id"],
        "summaryKind": values["summary_kind"],
        "tokens": values["tokens"],
        "segment": _SEGMENT_JSON.get(segment, segment),
        "selected": values["selected"],
        "score": values["score"],
        "outcome": values["outcome"],
        "reason": values["reason"],
        "matchedTerms": [
            {"term": m.term, "count": m.count, "contribution": m.contribution, "weight": m.weight}
            for m in values["matched_terms"]
        ],
        "pairWith": list(values["pair_with"]),
        "toolCallIds": list(values["tool_call_ids"]),
        "outputIndex": values["output_index"],
        "protected": values["protected"],
        "evictedBy": values["evicted_by"],
    }


def _item_json(full: dict[str, Any]) -> dict[str, Any]:
    """A context item as the parity trace lists it: camelCase segments, matched terms without notes."""
    item = {name: full[name] for name in _ITEM_FIELDS}
    item["segment"] = _SEGMENT_JSON.get(item["segment"], item["segment"])
    if item["matchedTerms"]:
        item["matchedTerms"] = [{name: term[name] for name in _TERM_FIELDS} for term in item["matchedTerms"]]
    return item


def _summary_json(trace: Trace) -> dict[str, Any]:
    s = trace.summary
    return {
        "fallbackWhy": s.fallback_why,
        "selectionMode": s.selection_mode,
        "freshTailOrdinal": s.fresh_tail_ordinal,
        "tokenBudget": s.token_budget,
        "effectiveBudget": s.effective_budget,
        "reservedTokens": s.reserved_tokens,
        "tailTokens": s.tail_tokens,
        "focusTokens": s.focus_tokens,
        "evictableTotalTokens": s.evictable_total_tokens,
        "keptEvictableTokens": s.kept_evictable_tokens,
        "remainingBudget": s.remaining_budget,
        "assemblerTokens": s.assembler_tokens,
        "finalTokens": s.final_tokens,
        "liveAppendedTokens": s.live_appended_tokens,
        "recallTokens": s.recall_tokens,
        "evictedForLiveTokens": s.evicted_for_live_tokens,
        "promptTerms": list(s.prompt_terms),
        "lowConfidence": s.low_confidence,
        "overBudget": s.over_budget,
        "clamped": s.clamped,
        "outcomes": trace.outcome_counts(),
    }


# --- the readable table ------------------------------------------------------------------


def trace_table(trace: Trace, *, width: int = 160) -> str:
    """A fixed-width per-item table with a header that states the run."""
    s = trace.summary
    p = trace.params
    lines = []
    if s.engine_outcome.startswith("live-fallback"):
        lines.append(
            f"FALLBACK: the engine would not send the assembled context below: {fallback_text(trace)}. "
            f"It sends the live transcript instead ({count_text(len(trace.messages), 'message')}, "
            f"{count_text(s.final_tokens, 'token')})."
        )
    lines += [
        f"{rules_text(trace)}",
        f"conversation {'—' if trace.conversation_id is None else trace.conversation_id}"
        + f"  mode {s.selection_mode}  budget {s.token_budget:,}"
        + (f" (−{s.reserved_tokens:,} reserved = {s.effective_budget:,})" if s.reserved_tokens else "")
        + f"  fresh tail from ordinal {s.fresh_tail_ordinal if s.fresh_tail_ordinal is not None else '—'}"
        + f" ({s.tail_tokens:,} tokens)",
        f"prompt {p.prompt!r}  terms {', '.join(s.prompt_terms) or '—'}"
        + f"  prompt-aware {'on' if p.prompt_aware_eviction else 'off'}"
        + f"  engine {'on' if p.engine else 'off'}",
        f"assembler {s.assembler_tokens:,} tokens (kept evictable {s.kept_evictable_tokens:,} of "
        f"{s.evictable_total_tokens:,}); final {s.final_tokens:,} serialized tokens in "
        f"{count_text(len(trace.messages), 'message')}"
        + (f"; live appended {s.live_appended_tokens:,}" if s.live_appended_tokens else "")
        + (f", evicted for it {s.evicted_for_live_tokens:,}" if s.evicted_for_live_tokens else "")
        + ("; CLAMPED" if s.clamped else "")
        + ("; OVER BUDGET" if s.over_budget else ""),
    ]
    if s.low_confidence:
        lines.append("note: the prompt matches no item (every score is 0); selection is effectively by recency")
    for note in trace.notes:
        lines.append(f"note: {note}")
    for warning in trace.warnings:
        # the engine's own log lines are what it reports on a normal turn, not alarms
        lines.append(f"engine log: {warning}" if warning.startswith("[lcm]") else f"warning: {warning}")
    header = f"{'item':>6}  {'kind':<13} {'tokens':>7} {'score':>8}  {'segment':<10} {'outcome':<21} reason"
    lines += ["", header, "-" * min(width, 140)]
    boundary = s.fresh_tail_ordinal
    drawn = False
    for d in trace.decisions:
        if not drawn and boundary is not None and d.ordinal is not None and d.ordinal >= boundary:
            lines.append(f"{'':>6}  ── fresh tail (ordinal ≥ {boundary}) " + "─" * 40)
            drawn = True
        if d.live_index is not None and d.live_index == 0:
            lines.append(f"{'':>6}  ── live inputs " + "─" * 40)
        reason = d.reason
        extra = []
        if d.pair_with:
            extra.append("pair " + ",".join(k.split(":", 1)[1] for k in d.pair_with))
        if d.evicted_by:
            extra.append(f"for {d.evicted_by}")
        if extra:
            reason = f"{reason} [{'; '.join(extra)}]"
        row = (
            f"{d.item_id:>6}  {d.label:<13} {d.tokens:>7,} {format_score(d.score):>8}  "
            f"{d.segment:<10} {outcome_text(d.outcome):<21} {reason}"
        )
        lines.append(_clip(row, width))
    if trace.protected_pairs:
        lines += ["", "protected tool pairs (the engine may not evict them):"]
        for call, result, why in trace.protected_pairs:
            lines.append(f"  {describe_key(call)} → {describe_key(result)}: {why}")
    counts = trace.outcome_counts()
    lines += ["", "outcomes: " + ", ".join(f"{outcome_text(k)} {v}" for k, v in sorted(counts.items()))]
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= width else clean[: width - 1] + "…"
