"""Volatile live inputs: detect, match against the context, merge, evict (spec §9.3–§9.7).

Some live messages never reach the database (inter-session announcements,
retry prompts, the channel-decorated current turn).  The engine appends the
ones the assembled context does not already contain, placing each one by the
live order of its neighbours, and if the serialized size then exceeds the
budget it evicts whole tool-pair groups — never the fresh tail, never an
assembled message that exactly matches a live one — choosing the eviction
that leaves the largest total that still fits.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from itertools import compress, islice, repeat
from operator import is_
from typing import Any

from ctxview.assembly.decoration import is_bare_face_of_current_turn
from ctxview.assembly.live import (
    assistant_pairing_ids,
    live_signature,
    pairing_view,
    result_pairing_id,
    stored_content,
    stored_role,
    stored_token_count,
)
from ctxview.assembly.tokens import ESTIMATES_OF_JSON, serialized_message_tokens
from ctxview.jsjson import (
    collapse_js_whitespace,
    h16,
    is_blank,
    js_stringify_message,
    js_stringify_message_utf8,
    js_trim,
    js_trim_start,
)

# §7.4 with a key per message: (messages, keys) -> (repaired messages, their keys; None = synthetic)
KeyedSanitizer = Callable[[list[Any], list[Any]], tuple[list[Any], list[Any]]]

# --- §9.5(a) marker-volatile content --------------------------------------------------

RETRY_MARKER = "[Retry after the previous model attempt failed or timed out]"
INTERNAL_BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
INTERNAL_END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
_INTER_SESSION = "[inter-session message]"
_TASK_COMPLETION = "[internal task completion event]"
_LINE_SPLIT = re.compile(r"\r?\n")


def normalize_overlap_text(text: str) -> str:
    """Collapse JS whitespace, trim, lowercase: the ``liveText`` of a candidate."""
    return js_trim(collapse_js_whitespace(text)).lower()


def is_volatile_content(content: str) -> bool:
    """§9.5(a) ``isVolatileContent``: retry line, or a complete internal-context block of a known kind."""
    trimmed = js_trim_start(content)
    if any(js_trim(line) == RETRY_MARKER for line in _LINE_SPLIT.split(trimmed)):
        return True
    begin = trimmed.find(INTERNAL_BEGIN)
    if begin < 0:
        return False
    if trimmed.find(INTERNAL_END, begin + len(INTERNAL_BEGIN)) < 0:
        return False
    norm = normalize_overlap_text(trimmed)
    if norm.startswith(_INTER_SESSION):
        return True
    return trimmed.startswith(INTERNAL_BEGIN) and _TASK_COMPLETION in norm


def is_marker_volatile(message: Any) -> bool:
    role = stored_role(message)
    if role not in ("user", "system"):
        return False
    content = stored_content(message)
    return not is_blank(content) and is_volatile_content(content)


def structural_current_turn(
    assembled_forms: Sequence[tuple[str, str]], live_forms: Sequence[tuple[str, str]]
) -> int | None:
    """§9.5(b): live index of the decorated current turn, or None.

    Both arguments are (stored role, stored content) pairs.  Only the last live
    user message is examined.
    """
    last_user = -1
    for index in range(len(assembled_forms) - 1, -1, -1):
        if assembled_forms[index][0] == "user":
            last_user = index
            break
    for live_index in range(len(live_forms) - 1, -1, -1):
        role, content = live_forms[live_index]
        if role != "user":
            continue
        if is_blank(content):
            return None
        for asm_index, (asm_role, asm_content) in enumerate(assembled_forms):
            if asm_role != "user":
                continue
            if is_bare_face_of_current_turn(content, asm_content, assembled_is_last_user=asm_index == last_user):
                return live_index
        return None
    return None


# --- §9.3 protected indexes ---------------------------------------------------------------


def protected_indexes(
    assembled: Sequence[Any], hashes: Iterable[str], hash_of: Callable[[Any], str] | None = None
) -> set[int]:
    """Fresh-tail messages located by hash, scanning from the newest (§9.3)."""
    own = [hash_of(m) for m in assembled] if hash_of is not None else [h16([m]) for m in assembled]
    return protected_by_hash(own, hashes)


def protected_by_hash(own: Sequence[str], hashes: Iterable[str]) -> set[int]:
    """§9.3 given the hash of each assembled message: each wanted hash takes the newest index not taken yet."""
    wanted = list(hashes)
    if len(set(wanted)) == len(wanted):  # distinct hashes (the engine's case): the newest index of each
        found = _newest_near_the_end(own, wanted)
        if found is not None:
            return found
        newest = dict(zip(own, range(len(own)), strict=True))  # a later index overwrites an earlier one
        return {newest[value] for value in wanted if value in newest}
    where: dict[str, list[int]] = {}
    for index in range(len(own) - 1, -1, -1):
        where.setdefault(own[index], []).append(index)
    protected: set[int] = set()
    for value in wanted:
        for index in where.get(value, ()):
            if index not in protected:
                protected.add(index)
                break
    return protected


def _newest_near_the_end(own: Sequence[str], wanted: list[str]) -> set[int] | None:
    """The newest index of each of the distinct ``wanted`` hashes when each of them is among the last few
    messages or nowhere (the fresh tail's hashes, whose messages end the list, or that clean-up changed: a
    map of 100,000 hashes per run is not needed for them); None when one is only before those."""
    remaining = set(wanted)
    if not remaining:
        return set()
    count = len(own)
    first = max(0, count - (4 * len(remaining) + 64))
    protected: set[int] = set()
    for index in range(count - 1, first - 1, -1):
        value = own[index]
        if value in remaining:
            remaining.discard(value)
            protected.add(index)
            if not remaining:
                return protected
    # (the others: in none of the messages before, checked at C speed)
    return protected if remaining.isdisjoint(islice(own, first)) else None


# --- §9.7 tool-pair structure ----------------------------------------------------------------


@dataclass(slots=True)
class PairIndex:
    """Who issues and who answers each call id (pairing view of §9.7)."""

    call_ids: list[list[str]]  # per assembled index
    result_id: list[str | None]
    assistants_by_id: dict[str, list[int]]
    results_by_id: dict[str, list[int]]

    @classmethod
    def build(cls, messages: Sequence[Any], memo: SerializedCache | None = None) -> PairIndex:
        if memo is not None:  # (an index is never modified once built: runs of the same messages share one)
            known = memo.answer_for("pairs", messages)
            if known is not None:
                return known  # type: ignore[no-any-return]
            index = cls._build(messages, memo)
            memo.keep_answer("pairs", messages, index)
            return index
        return cls._build(messages, memo)

    @classmethod
    def _build(cls, messages: Sequence[Any], memo: SerializedCache | None) -> PairIndex:
        if memo is not None:
            pairs = memo.pairing_of_all(messages)
            call_ids: list[list[str]] = [calls for calls, _ in pairs]
            result_id: list[str | None] = [rid for _, rid in pairs]
        else:
            call_ids = [assistant_pairing_ids(m) for m in messages]
            result_id = [result_pairing_id(m) for m in messages]
        assistants: dict[str, list[int]] = {}
        results: dict[str, list[int]] = {}
        for index in [i for i, ids in enumerate(call_ids) if ids]:  # (most messages issue no call)
            for call_id in call_ids[index]:
                assistants.setdefault(call_id, []).append(index)
        for index in [i for i, rid in enumerate(result_id) if rid is not None]:
            results.setdefault(result_id[index], []).append(index)  # type: ignore[arg-type]
        return cls(call_ids, result_id, assistants, results)

    def partners(self, index: int) -> list[int]:
        related: list[int] = []
        for call_id in self.call_ids[index]:
            related.extend(self.results_by_id.get(call_id, ()))
        rid = self.result_id[index]
        if rid is not None:
            related.extend(self.assistants_by_id.get(rid, ()))
        return related

    def expand(self, seeds: Iterable[int]) -> dict[int, int | None]:
        """``expandProtected``: seeds plus transitive tool partners; value = the partner that pulled it in.

        The reference sweeps every index in ascending order until a sweep adds nothing; a
        partner found above the sweep's position is visited in the same sweep, one below it in
        the next.  Visiting only the reached indexes in that order gives the same result (and
        the same "pulled in by") without sweeping the whole context.
        """
        reached: dict[int, int | None] = {i: None for i in seeds}
        sweep = sorted(i for i in reached if 0 <= i < len(self.call_ids))
        while sweep:
            heapify(sweep)
            later: list[int] = []
            while sweep:
                index = heappop(sweep)
                for partner in self.partners(index):
                    if partner not in reached:
                        reached[partner] = index
                        if partner > index:
                            heappush(sweep, partner)
                        else:
                            later.append(partner)
            sweep = later
        return reached

    def groups(self) -> list[tuple[int, ...]]:
        """Connected component (sorted) of every index in the call/result graph."""
        n = len(self.call_ids)
        neighbours: dict[int, set[int]] = {}
        for call_id, assistants in self.assistants_by_id.items():
            for a in assistants:
                for r in self.results_by_id.get(call_id, ()):
                    neighbours.setdefault(a, {a}).add(r)
                    neighbours.setdefault(r, {r}).add(a)
        result: list[tuple[int, ...]] = []
        for index in range(n):
            seen: set[int] = set()
            pending = [index]
            while pending:
                current = pending.pop()
                if current in seen:
                    continue
                seen.add(current)
                pending.extend(x for x in neighbours.get(current, (current,)) if x not in seen)
            result.append(tuple(sorted(seen)))
        return result

    def propagate(self, anchors: dict[int, int]) -> dict[int, int]:
        """Give every tool partner of an anchored message the smallest anchor of its pair."""
        out = dict(anchors)
        changed = True
        while changed:
            changed = False
            for index in range(len(self.call_ids)):
                live_index = out.get(index)
                if live_index is None:
                    continue
                for partner in self.partners(index):
                    existing = out.get(partner)
                    if existing is None or live_index < existing:
                        out[partner] = live_index
                        changed = True
        return out


# --- the sanitize view, used to decide when token sums are additive --------------------------

_SANITIZE_CALL_TYPES = frozenset({"toolCall", "toolUse", "tool_use", "tool-use", "functionCall", "function_call"})


def _sanitize_call_ids(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids: list[str] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") not in _SANITIZE_CALL_TYPES:
            continue
        block_id = block.get("id")
        if not (isinstance(block_id, str) and block_id):
            block_id = block.get("call_id")
        if isinstance(block_id, str) and block_id:
            ids.append(block_id)
    return ids


def _sanitize_result_id(message: dict[str, Any]) -> str | None:
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _is_terminal(message: dict[str, Any]) -> bool:
    reason = message.get("stopReason")
    if not isinstance(reason, str):
        reason = message.get("stop_reason")
    return isinstance(reason, str) and reason in ("error", "aborted")


def tool_pairs_are_clean(messages: Sequence[Any], groups: Sequence[tuple[int, ...]]) -> bool:
    """True when the pairing repair would keep every message, whatever whole groups are removed.

    Holds when each assistant's calls are answered right after it, ids are
    unique, no turn is terminal, and every (call, result) pair lies in one
    pair group.  Then the serialized size of a merge is the plain sum of its
    parts, which lets the eviction search skip the repair for each candidate.
    """
    seen_calls: set[str] = set()
    seen_results: set[str] = set()
    index = 0
    while index < len(messages):
        message = messages[index]
        if not isinstance(message, dict):
            index += 1
            continue
        role = message.get("role")
        if role == "toolResult":
            return False  # a result outside an answered block
        if role != "assistant":
            index += 1
            continue
        if _is_terminal(message):
            return False
        calls = _sanitize_call_ids(message)
        if len(set(calls)) != len(calls) or seen_calls.intersection(calls):
            return False
        seen_calls.update(calls)
        answered: list[str] = []
        for offset in range(1, len(calls) + 1):
            if index + offset >= len(messages):
                return False
            result = messages[index + offset]
            if not isinstance(result, dict) or result.get("role") != "toolResult":
                return False
            rid = _sanitize_result_id(result)
            if rid is None or rid in seen_results:
                return False
            if groups[index + offset] != groups[index]:
                return False
            seen_results.add(rid)
            answered.append(rid)
        if sorted(answered) != sorted(calls):
            return False
        index += len(calls) + 1
    return True


# --- the volatile step ------------------------------------------------------------------------


class SerializedCache:
    """Per-message values of the engine step, keyed by ``id`` (the objects are kept alive, never mutated).

    One cache may serve many runs of the same session: assembled messages are
    the resolved items' own objects unless clean-up copied them, so a warm cache
    makes a re-assembly pay only for what changed.  ``limit`` bounds the number
    of messages held (every table is emptied past it, so per-run copies cannot
    pile up).  The ``*_of_all`` readers look a whole list up at C speed.
    """

    def __init__(self, limit: int | None = None, estimate: Callable[[Any], int] = serialized_message_tokens) -> None:
        self._estimate = estimate  # the §4.3 estimate of the engine line's rules
        # the same estimate from the message's JSON: then one stringify gives both its tokens and its hash
        self._estimate_of_json = ESTIMATES_OF_JSON.get(estimate)
        self._alive: dict[int, Any] = {}  # id → message: holding it keeps the id from being reused
        self._tokens: dict[int, int] = {}
        self._h16: dict[int, str] = {}
        self._forms: dict[int, tuple[str, str]] = {}
        self._pairing: dict[int, tuple[list[str], str | None]] = {}
        # per reader (a table's id, "pairs"), the ``origin`` of the last tagged list it read whole, and its answer
        self._answers: dict[Any, tuple[Any, Any]] = {}
        self.limit = limit
        self._pending: Callable[[], Any] | None = None  # values on their way (``defer``), taken at the first list read

    @property
    def estimate(self) -> Callable[[Any], int]:
        """The §4.3 estimate this cache measures with."""
        return self._estimate

    def size(self) -> int:
        """Messages held (measured for at least one value)."""
        return len(self._alive)

    def deferred(self) -> Callable[[], Any] | None:
        """What ``defer`` was last given, until the read that calls it."""
        return self._pending

    def defer(self, take: Callable[[], Any] | None) -> None:
        """Call ``take`` (once) before the next whole-list read (``*_of_all``, ``known``): values measured
        elsewhere (a forked process) arrive there through ``remember``, while this process did other work.
        A value asked for one message before that is measured here, as always (the same value either way)."""
        self._pending = take

    def _take_pending(self) -> None:
        take, self._pending = self._pending, None
        if take is not None:
            take()

    def _hold(self, message: Any) -> int:
        key = id(message)
        if key not in self._alive:
            if self.limit is not None and len(self._alive) >= self.limit:
                for table in (self._alive, self._tokens, self._h16, self._forms, self._pairing, self._answers):
                    table.clear()
            self._alive[key] = message
        return key

    def __call__(self, message: Any) -> int:
        value = self._tokens.get(id(message))
        if value is None:
            if self._estimate_of_json is not None:
                return self._measure(message)[0]
            value = self._estimate(message)
            self._tokens[self._hold(message)] = value
        return value

    def _measure(self, message: Any) -> tuple[int, str]:
        """(tokens, h16) of a message from one ``JSON.stringify``: a run asks both of most messages."""
        assert self._estimate_of_json is not None
        text, encoded = js_stringify_message_utf8(message)
        tokens = self._estimate_of_json(message, text)
        value = h16_of_utf8(encoded)
        key = self._hold(message)
        self._tokens[key] = tokens
        self._h16[key] = value
        return tokens, value

    def _of_all(self, table: dict[int, Any], one: Callable[[Any], Any], messages: Sequence[Any]) -> list[Any]:
        """``[one(m) for m in messages]``, looking the cached ones up at C speed."""
        if self._pending is not None:
            self._take_pending()
        known = self.answer_for(id(table), messages)
        if known is not None:
            return list(known)
        ids = self.answer_for("ids", messages)  # (a tagged list's ids are made once for all three tables)
        if ids is None:
            ids = list(map(id, messages))
            self.keep_answer("ids", messages, ids)
        values: list[Any] = list(map(table.get, ids))
        if None in values:  # (the few not measured yet, found at C speed: a walk of 100,000 cost ~50 ms a list)
            missing = list(compress(range(len(values)), map(is_, values, repeat(None))))
            if self._estimate_of_json is not None:
                self._measure_all(messages, missing, values, table)
            else:
                for index in missing:
                    values[index] = one(messages[index])
        self.keep_answer(id(table), messages, list(values))
        return values

    def _measure_all(
        self, messages: Sequence[Any], indexes: list[int], values: list[Any], table: dict[int, Any]
    ) -> None:
        """Every value of the messages at ``indexes`` in one pass, each message's tokens and hash from one
        ``JSON.stringify``, and its pairing ids: a run reads all three of the same lists (one call per value
        and message through ``h16`` and ``pairing`` cost as much as the measuring).  ``values[i]`` gets the
        one of ``table``."""
        tokens_of, h16_of, pairing_of = self._tokens, self._h16, self._pairing  # (emptied in place past ``limit``)
        measure, hold = self._measure, self._hold
        for index in indexes:
            message = messages[index]
            key = id(message)
            tokens = tokens_of.get(key)
            value = h16_of.get(key)
            if tokens is None or value is None:
                tokens, value = measure(message)
            pairing = pairing_of.get(key)
            if pairing is None:
                pairing = pairing_of[hold(message)] = pairing_view(message)
            values[index] = tokens if table is tokens_of else value if table is h16_of else pairing

    def answer_for(self, reader: Any, messages: Sequence[Any]) -> Any:
        """``reader``'s kept answer for a list tagged with the same ``origin`` as ``messages`` (None: none).

        A list with an ``origin`` attribute (``chunked_repair.SameMessages``) holds the very same objects, in
        the same order, as every list with that origin: runs that send the same 100,000 messages (a budget
        sweep above the session's size) look them up, and index their pairs, once.
        """
        origin = getattr(messages, "origin", None)
        kept = self._answers.get(reader) if origin is not None else None
        return kept[1] if kept is not None and kept[0] is origin else None

    def keep_answer(self, reader: Any, messages: Sequence[Any], answer: Any) -> None:
        """Keep ``reader``'s answer for a tagged list (an untagged one: nothing kept)."""
        origin = getattr(messages, "origin", None)
        if origin is not None:
            self._answers[reader] = (origin, answer)

    def tokens_of_all(self, messages: Sequence[Any]) -> list[int]:
        """``[self(m) for m in messages]``."""
        return self._of_all(self._tokens, self, messages)

    def total(self, messages: Iterable[Any]) -> int:
        return sum(self.tokens_of_all(messages if isinstance(messages, Sequence) else list(messages)))

    def h16(self, message: Any) -> str:
        """``h16([message])`` (the §9.3 hash of one message)."""
        value = self._h16.get(id(message))
        if value is None:
            if self._estimate_of_json is not None:
                return self._measure(message)[1]
            value = h16_of_json("[" + self.json(message) + "]")
            self._h16[self._hold(message)] = value
        return value

    def h16_of_all(self, messages: Sequence[Any]) -> list[str]:
        """``[self.h16(m) for m in messages]``."""
        return self._of_all(self._h16, self.h16, messages)

    def json(self, message: Any) -> str:
        """``JSON.stringify(message)`` (not kept: only the hash of it is)."""
        return js_stringify_message(message)

    def form(self, message: Any) -> tuple[str, str]:
        """(stored role, stored content) of a message."""
        value = self._forms.get(id(message))
        if value is None:
            value = (stored_role(message), stored_content(message))
            self._forms[self._hold(message)] = value
        return value

    def pairing(self, message: Any) -> tuple[list[str], str | None]:
        """(call ids it issues, the call id it answers) in the pairing view of §9.7 (lists are shared: read only)."""
        value = self._pairing.get(id(message))
        if value is None:
            value = pairing_view(message)
            self._pairing[self._hold(message)] = value
        return value

    def pairing_of_all(self, messages: Sequence[Any]) -> list[tuple[list[str], str | None]]:
        """``[self.pairing(m) for m in messages]``."""
        return self._of_all(self._pairing, self.pairing, messages)

    def known(self, messages: Sequence[Any]) -> tuple[list[int | None], list[str | None], list[Any]]:
        """(tokens, h16, pairing) measured so far of each message, None where not (nothing is measured here)."""
        if self._pending is not None:
            self._take_pending()
        ids = list(map(id, messages))
        return list(map(self._tokens.get, ids)), list(map(self._h16.get, ids)), list(map(self._pairing.get, ids))

    def remember(
        self, messages: Sequence[Any], tokens: Sequence[int], h16s: Sequence[str], pairings: Sequence[Any]
    ) -> bool:
        """Take the values ``known`` gave in another process for messages with the same JSON text (the same
        estimate); False, and nothing taken, when they would not fit under ``limit``."""
        if self.limit is not None and len(self._alive) + len(messages) > self.limit:
            return False
        ids = list(map(id, messages))
        self._alive.update(zip(ids, messages, strict=True))
        self._tokens.update(zip(ids, tokens, strict=True))
        self._h16.update(zip(ids, h16s, strict=True))
        self._pairing.update(zip(ids, pairings, strict=True))
        return True


@dataclass(slots=True)
class Eviction:
    """One round of the eviction loop: the group removed and what it cost."""

    indexes: tuple[int, ...]
    restored: tuple[int, ...]  # live indexes of covered inputs that became appended again
    evicted_tokens: int  # Appendix A.4 statistic
    estimate_after: int


@dataclass(slots=True)
class VolatileResult:
    """The §9.7 return value (parity ``volatileAppend`` numbers) plus what happened to each input."""

    messages: list[Any]
    estimated_tokens: int
    appended_messages: int
    appended_tokens: int
    evicted_messages: int
    evicted_tokens: int
    over_budget: bool
    # what happened, for the trace
    normalized_live: list[Any] = field(default_factory=list)
    marker_indexes: list[int] = field(default_factory=list)
    structural_index: int | None = None
    candidates: list[int] = field(default_factory=list)  # live indexes, in live order
    covered: dict[int, int] = field(default_factory=dict)  # live index -> assembled index (after restores)
    appended: list[int] = field(default_factory=list)  # live indexes appended, ascending
    first_uncovered: list[int] = field(default_factory=list)  # uncovered before any eviction
    evictions: list[Eviction] = field(default_factory=list)
    exact_anchor: dict[int, int] = field(default_factory=dict)  # assembled index -> live index
    exact_protected: dict[int, int | None] = field(default_factory=dict)
    protected: dict[int, int | None] = field(default_factory=dict)
    sources: list[tuple[str, int] | None] = field(default_factory=list)  # per output message
    fast_path: bool = False
    unchanged: bool = False  # nothing appended or evicted: ``messages`` are the assembled ones, in order


@dataclass(slots=True)
class _Entry:
    """A live input waiting to be merged, ordered by its live index."""

    live_index: int
    message: Any


def _merge(
    retained: Sequence[int],
    appended: Sequence[_Entry],
    assembled: Sequence[Any],
    anchors: dict[int, int],
) -> tuple[list[Any], list[tuple[str, int]]]:
    """§9.7 ``merged``: inputs go in live order, each before the first retained row anchored after it."""
    ordered = sorted(appended, key=lambda e: e.live_index)
    out: list[Any] = []
    sources: list[tuple[str, int]] = []
    cursor = 0
    for index in retained:
        anchor = anchors.get(index)
        if anchor is not None:
            while cursor < len(ordered) and ordered[cursor].live_index < anchor:
                out.append(ordered[cursor].message)
                sources.append(("l", ordered[cursor].live_index))
                cursor += 1
        out.append(assembled[index])
        sources.append(("a", index))
    while cursor < len(ordered):
        out.append(ordered[cursor].message)
        sources.append(("l", ordered[cursor].live_index))
        cursor += 1
    return out, sources


def append_volatile_inputs(
    assembled: Sequence[Any],
    assembled_estimate: int,
    live_messages: Sequence[Any],
    protected_seed: Iterable[int],
    token_budget: int,
    *,
    sanitize: KeyedSanitizer,
    normalize: Callable[[Any], Any],
    tokens: SerializedCache | None = None,
    allow_fast: bool = True,
    pairs: PairIndex | None = None,
) -> VolatileResult:
    """§9.4–§9.7 ``appendUncoveredVolatileLiveInputsWithinBudget`` (``pairs``: the caller's index of ``assembled``)."""
    tokens = tokens or SerializedCache()
    assembled = list(assembled)
    live = [normalize(m) for m in live_messages]
    if pairs is None:
        pairs = PairIndex.build(assembled, tokens)
    protected_seed = sorted(set(protected_seed))
    protected = pairs.expand(protected_seed)

    asm_forms = [tokens.form(m) for m in assembled] if live else []  # without live inputs nothing is compared
    live_forms = [(stored_role(m), stored_content(m)) for m in live]
    marker = [i for i, m in enumerate(live) if is_marker_volatile(m)]
    structural = structural_current_turn(asm_forms, live_forms)
    candidates = sorted(set(marker) | ({structural} if structural is not None else set()))

    asm_sigs: list[str | None] = [None] * len(assembled)
    live_sigs: list[str | None] = [None] * len(live)

    def asm_sig(index: int) -> str:
        sig = asm_sigs[index]
        if sig is None:
            sig = asm_sigs[index] = live_signature(assembled[index])
        return sig

    def live_sig(index: int) -> str:
        sig = live_sigs[index]
        if sig is None:
            sig = live_sigs[index] = live_signature(live[index])
        return sig

    covered = _match_candidates(candidates, live_forms, asm_forms, live_sig, asm_sig, len(assembled))
    result = VolatileResult(
        messages=list(assembled),
        estimated_tokens=assembled_estimate,
        appended_messages=0,
        appended_tokens=0,
        evicted_messages=0,
        evicted_tokens=0,
        over_budget=assembled_estimate > token_budget,
        normalized_live=live,
        marker_indexes=marker,
        structural_index=structural,
        candidates=candidates,
        covered=dict(covered),
        protected=protected,
        sources=list(zip(repeat("a"), range(len(assembled)))),
    )
    uncovered = [li for li in candidates if li not in covered]
    result.first_uncovered = list(uncovered)
    if not uncovered:
        result.unchanged = True
        return result

    covered_by: dict[int, list[int]] = {}
    for li in candidates:
        if li in covered:
            covered_by.setdefault(covered[li], []).append(li)

    # §9.7 anchors
    # equal signatures imply equal stored (role, content), so only rows with the same stored form are compared
    by_form: dict[tuple[str, str], list[int]] = {}
    for ai in range(len(assembled) - 1, -1, -1):
        by_form.setdefault(asm_forms[ai], []).append(ai)
    exact_anchor: dict[int, int] = {}
    used: set[int] = set()
    for li in range(len(live) - 1, -1, -1):
        for ai in by_form.get(live_forms[li], ()):
            if ai in used:
                continue
            if asm_sig(ai) == live_sig(li):
                exact_anchor[ai] = li
                used.add(ai)
                break
    exact_protected = pairs.expand(sorted(exact_anchor))
    anchors = dict(exact_anchor)
    for ai, lis in covered_by.items():
        m = min(lis)
        if ai not in anchors or m < anchors[ai]:
            anchors[ai] = m
    anchors = pairs.propagate(anchors)
    result.exact_anchor = exact_anchor
    result.exact_protected = exact_protected

    groups = pairs.groups()
    retained = list(range(len(assembled)))
    appended = [_Entry(li, live[li]) for li in uncovered]
    fast = allow_fast and tool_pairs_are_clean(assembled, groups)

    def build(kept: Sequence[int], extra: Sequence[_Entry]) -> tuple[list[Any], list[Any], list[Any]]:
        merged, sources = _merge(kept, extra, assembled, anchors)
        out, out_sources = sanitize(merged, sources)
        return merged, out, out_sources

    merged, out, _ = build(retained, appended)
    estimate = tokens.total(out)
    if fast and estimate != tokens.total(merged):
        fast = False
    result.fast_path = fast

    blocked = {g: any(i in exact_protected or i in protected for i in g) for g in set(groups)}
    evicted_set: set[int] = set()
    # Fast path: a group's effect on the sum never changes (its covered inputs only leave with it),
    # so "largest total that fits, else smallest total; ties to the earliest group" becomes
    # "smallest delta >= need, else largest delta; ties to the smallest first index".
    ranking: list[tuple[int, int, tuple[int, ...]]] = []
    if fast:
        for group in {g for g in groups if not blocked[g]}:
            restored_tokens = sum(tokens(live[li]) for g in group for li in covered_by.get(g, ()))
            ranking.append((sum(tokens(assembled[i]) for i in group) - restored_tokens, group[0], group))
        ranking.sort()
    tracked = estimate
    while len(evicted_set) < len(assembled) and estimate > token_budget:
        if fast:
            if not ranking:
                break
            at = bisect_left(ranking, (estimate - token_budget, -1))
            if at == len(ranking):
                at = bisect_left(ranking, (ranking[-1][0], -1))
            delta, _first, group = ranking.pop(at)
            best: tuple[int, tuple[int, ...]] | None = (estimate - delta, group)
        else:
            best = _best_exact_eviction(
                [i for i in retained if i not in evicted_set],
                groups,
                blocked,
                covered_by,
                appended,
                live,
                build,
                tokens,
                token_budget,
            )
        if best is None:
            break
        estimate, group = best
        removed = [i for i in group if i not in evicted_set]
        restored = tuple(li for g in group for li in covered_by.get(g, ()))
        evicted_tokens = 0
        for g in removed:
            covered_by.pop(g, None)
            evicted_tokens += stored_token_count(assembled[g])
        for li in restored:
            result.covered.pop(li, None)
        evicted_set.update(removed)
        appended = appended + [_Entry(li, live[li]) for li in restored]
        result.evicted_messages += len(removed)
        result.evicted_tokens += evicted_tokens
        result.evictions.append(Eviction(tuple(removed), restored, evicted_tokens, estimate))
        tracked = estimate
    retained = [i for i in retained if i not in evicted_set]

    merged, out, out_sources = build(retained, appended)
    estimate = tokens.total(out)
    if fast and estimate != tracked:  # pragma: no cover - tool_pairs_are_clean guarantees equality
        # the additive shortcut disagreed with the real pairing repair: redo the search exactly
        return append_volatile_inputs(
            assembled,
            assembled_estimate,
            live_messages,
            protected_seed,
            token_budget,
            sanitize=sanitize,
            normalize=normalize,
            tokens=tokens,
            allow_fast=False,
            pairs=pairs,
        )
    appended_sorted = sorted(appended, key=lambda e: e.live_index)
    result.messages = out
    result.sources = list(out_sources)
    result.estimated_tokens = estimate
    result.appended = [e.live_index for e in appended_sorted]
    result.appended_messages = len(appended_sorted)
    result.appended_tokens = tokens.total(e.message for e in appended_sorted)
    result.over_budget = estimate > token_budget
    return result


def _best_exact_eviction(
    retained: list[int],
    groups: Sequence[tuple[int, ...]],
    blocked: dict[tuple[int, ...], bool],
    covered_by: dict[int, list[int]],
    appended: list[_Entry],
    live: Sequence[Any],
    build: Callable[[Sequence[int], Sequence[_Entry]], tuple[list[Any], list[Any], list[Any]]],
    tokens: SerializedCache,
    token_budget: int,
) -> tuple[int, tuple[int, ...]] | None:
    """One round of §9.7's search, re-running the merge and pairing repair for every group."""
    best: tuple[int, tuple[int, ...]] | None = None
    tried: set[tuple[int, ...]] = set()
    for index in retained:
        group = groups[index]
        if group in tried or blocked[group]:
            continue
        tried.add(group)
        restored = [li for g in group for li in covered_by.get(g, ())]
        group_set = set(group)
        cand_retained = [i for i in retained if i not in group_set]
        cand_appended = appended + [_Entry(li, live[li]) for li in restored]
        cand_estimate = tokens.total(build(cand_retained, cand_appended)[1])
        fits = cand_estimate <= token_budget
        best_fits = best is not None and best[0] <= token_budget
        if (
            best is None
            or (fits and not best_fits)
            or (fits and best_fits and cand_estimate > best[0])
            or (not fits and not best_fits and cand_estimate < best[0])
        ):
            best = (cand_estimate, group)
    return best


def _match_candidates(
    candidates: Sequence[int],
    live_forms: Sequence[tuple[str, str]],
    asm_forms: Sequence[tuple[str, str]],
    live_sig: Callable[[int], str],
    asm_sig: Callable[[int], str],
    assembled_count: int,
) -> dict[int, int]:
    """§9.6 coverage slots and maximum bipartite matching; returns live index -> assembled index."""
    groups: dict[str, list[int]] = {}
    for position, li in enumerate(candidates):
        groups.setdefault(normalize_overlap_text(live_forms[li][1]), []).append(position)
    slot_owner_index: list[int] = []  # slot -> assembled index
    slots_of: list[list[int]] = [[] for _ in candidates]

    def add_slots(members: Sequence[int], assembled_index: int, count: int) -> None:
        created = list(range(len(slot_owner_index), len(slot_owner_index) + count))
        slot_owner_index.extend([assembled_index] * count)
        for member in members:
            slots_of[member].extend(created)

    for members in groups.values():
        for ai in range(assembled_count):
            content = asm_forms[ai][1]
            if not ("<summary " in content and "</summary>" in content):
                exact = [
                    m
                    for m in members
                    if live_forms[candidates[m]] == asm_forms[ai] and live_sig(candidates[m]) == asm_sig(ai)
                ]
                if exact:
                    add_slots(exact, ai, 1)
                continue
            first = candidates[members[0]]
            capacity = 1 if live_forms[first] == asm_forms[ai] and asm_sig(ai) == live_sig(first) else 0
            if capacity <= 0:
                continue
            by_sig: dict[str, list[int]] = {}
            for m in members:
                by_sig.setdefault(live_sig(candidates[m]), []).append(m)
            exact_count = 0
            for same in by_sig.values():
                needle = live_forms[candidates[same[0]]][1]
                occurrences = _count_occurrences(content, needle) if needle else 0
                count = min(occurrences, len(same))
                if count > 0:
                    add_slots(same, ai, count)
                    exact_count += count
            generic = min(max(0, capacity - exact_count), max(0, len(members) - exact_count))
            if generic > 0:
                add_slots(members, ai, generic)

    owner: dict[int, int] = {}  # slot -> candidate position

    def try_assign(position: int, visited: set[int]) -> bool:
        for slot in slots_of[position]:
            if slot in visited:
                continue
            visited.add(slot)
            current = owner.get(slot)
            if current is None or try_assign(current, visited):
                owner[slot] = position
                return True
        return False

    for position in range(len(candidates)):
        try_assign(position, set())
    return {candidates[position]: slot_owner_index[slot] for slot, position in owner.items()}


def _count_occurrences(haystack: str, needle: str) -> int:
    count = 0
    cursor = 0
    while cursor <= len(haystack):
        found = haystack.find(needle, cursor)
        if found < 0:
            break
        count += 1
        cursor = found + len(needle)
    return count


def h16_of_utf8(encoded: bytes) -> str:
    """``h16_of_json("[" + text + "]")`` given ``text`` as UTF-8, with no copy of it."""
    digest = hashlib.sha256(b"[")
    digest.update(encoded)
    digest.update(b"]")
    return digest.hexdigest()[:16]


def h16_of_json(text: str) -> str:
    """``h16`` of a value given its ``JSON.stringify`` text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
