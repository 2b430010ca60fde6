"""Does ctxview's re-assembly match what the agent actually sent?  And at which token budget?

``compare_messages`` is exact where the record is exact and tolerant where the
record is lossy by design (spec §6): a ``{truncated:true,…}`` marker, a cut
message list, a ``<redacted…>`` image payload, a deleted secret-named key or a
masked secret (``***``, ``abcdef…wxyz``) matches what ctxview has there, and
the verdict lists each such place.  Everything else must be identical, key
order included (the engine compares messages by their JSON).

The record carries no token budget.  ``derive_token_budget`` works it out from
``openclaw.json`` where the spec says how (§4); ``find_matching_budgets``
searches for the budgets at which a re-assembly matches the record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal

from ctxview.jsjson import JSNumber, js_stringify, utf16_len
from ctxview.openclaw.records import is_redacted_string, is_truncation_marker, recorded_count

_SECRET_KEY = re.compile(r"(token|apikey|api_key|password|passwd|secret|authorization)$", re.IGNORECASE)
_MASK = re.compile(r"\*\*\*|…redacted…|…")


@dataclass(frozen=True, slots=True)
class Difference:
    index: int  # the first message that differs (or the first one only one side has)
    recorded: Any  # the record's message there (None when the record has none)
    assembled: Any  # ctxview's message there (None when ctxview has none)
    reason: str  # short, e.g. "content[0].text differs at character 41"


@dataclass(frozen=True, slots=True)
class Verification:
    matches: bool
    recorded_count: int  # messages the turn sent (the original count when the record cut the list)
    assembled_count: int
    difference: Difference | None
    lossy: tuple[str, ...] = ()  # places where the match relied on what the record lost
    turn_time: str | None = None  # "14:02" in the caller's time zone

    def summary(self) -> str:
        """One sentence for the user."""
        when = f"turn at {self.turn_time}, " if self.turn_time else ""
        if self.matches:
            text = f"matches what your agent sent ({when}{_plural(self.recorded_count, 'message')})"
            if self.lossy:
                text += f"; where the record is lossy it was not checked ({'; '.join(self.lossy)})"
            return text
        diff = self.difference
        assert diff is not None
        return (
            f"differs from what your agent sent ({when}{_plural(self.recorded_count, 'message')}; ctxview has "
            f"{self.assembled_count}) at message {diff.index}: {diff.reason}"
        )


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def turn_clock(time_ms: int | None, zone: tzinfo | None = None) -> str | None:
    """``HH:MM`` of a record's time in ``zone`` (the local zone when None)."""
    if time_ms is None:
        return None
    moment = datetime.fromtimestamp(time_ms / 1000, tz=UTC)
    return moment.astimezone(zone).strftime("%H:%M")


def compare_messages(
    recorded: Sequence[Any], assembled: Sequence[Any], *, time_ms: int | None = None, zone: tzinfo | None = None
) -> Verification:
    """The first difference between the record's compiled messages and ctxview's final messages, if any."""
    recorded = list(recorded)
    count = recorded_count(recorded)
    cut = len(recorded) > 0 and count != len(recorded) and is_truncation_marker(recorded[-1])
    shown = recorded[:-1] if cut else recorded
    lossy: list[str] = []
    clock = turn_clock(time_ms, zone)
    for index in range(min(len(shown), len(assembled))):
        rec, act = shown[index], assembled[index]
        reason = _message_difference(rec, act, lossy)
        if reason is not None:
            return Verification(False, count, len(assembled), Difference(index, rec, act, reason), (), clock)
    if len(assembled) != count:
        index = min(len(assembled), count) if cut else min(len(shown), len(assembled))
        extra = len(assembled) - count
        reason = (
            f"ctxview has {_plural(extra, 'more message')}" if extra > 0 else f"ctxview has {-extra} fewer messages"
        )
        rec = shown[index] if index < len(shown) else None
        act = assembled[index] if index < len(assembled) else None
        return Verification(False, count, len(assembled), Difference(index, rec, act, reason), (), clock)
    if cut:
        lossy.insert(0, f"only the first {len(shown)} of {count} messages were recorded and compared")
    return Verification(True, count, len(assembled), None, tuple(_dedupe(lossy)), clock)


def _dedupe(items: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    for item in items:
        seen[item] = seen.get(item, 0) + 1
    return [f"{item} ×{n}" if n > 1 else item for item, n in seen.items()]


def _message_difference(rec: Any, act: Any, lossy: list[str]) -> str | None:
    if type(rec) is type(act) and js_stringify(rec) == js_stringify(act):
        return None
    if isinstance(rec, dict) and isinstance(act, dict) and rec.get("role") != act.get("role"):
        return f"role {rec.get('role')!r} in the record, {act.get('role')!r} in ctxview's"
    return _difference(rec, act, "", lossy)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, JSNumber)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _difference(rec: Any, act: Any, path: str, lossy: list[str]) -> str | None:
    where = path or "the message"
    if is_truncation_marker(rec):
        lossy.append(f"{where} was cut by the record ({rec['reason']})")
        return None
    if is_redacted_string(rec) and isinstance(act, str):
        lossy.append(f"{where} was redacted by the record")
        return None
    if _kind(rec) != _kind(act):
        return f"{where} is {_kind(rec)} in the record, {_kind(act)} in ctxview's"
    if isinstance(rec, dict):
        return _dict_difference(rec, act, path, lossy)
    if isinstance(rec, list):
        return _list_difference(rec, act, path, lossy)
    if isinstance(rec, str):
        return _string_difference(rec, act, where, lossy)
    if js_stringify(rec) != js_stringify(act):
        return f"{where} is {js_stringify(rec)} in the record, {js_stringify(act)} in ctxview's"
    return None


def _dict_difference(rec: dict[str, Any], act: dict[str, Any], path: str, lossy: list[str]) -> str | None:
    object_cut = is_truncation_marker(rec.get("_truncated"))
    redacted_payload = any(is_redacted_string(v) for v in rec.values())
    for key, value in rec.items():
        sub = f"{path}.{key}" if path else key
        if key == "_truncated" and object_cut:
            lossy.append(f"{path or 'the message'} lost keys to the record's size limit")
            continue
        if key not in act:
            if redacted_payload and key in ("bytes", "sha256"):
                continue
            return f"{sub} is only in the record"
        found = _difference(value, act[key], sub, lossy)
        if found is not None:
            return found
    for key in act:
        if key in rec:
            continue
        sub = f"{path}.{key}" if path else key
        if _SECRET_KEY.search(key):
            lossy.append(f"{sub} was deleted by the record's secret filter")
            continue
        if object_cut:
            continue
        return f"{sub} is only in ctxview's"
    shared_rec = [k for k in rec if k in act]
    shared_act = [k for k in act if k in rec]
    if shared_rec != shared_act:
        return f"{path or 'the message'} has its keys in another order ({', '.join(shared_rec)} in the record)"
    return None


def _list_difference(rec: list[Any], act: list[Any], path: str, lossy: list[str]) -> str | None:
    items = rec
    if rec and is_truncation_marker(rec[-1]) and rec[-1].get("reason") == "trajectory-array-size-limit":
        items = rec[:-1]
        original = rec[-1].get("originalLength")
        if isinstance(original, int) and original != len(act):
            return f"{path} has {original} items in the record, {len(act)} in ctxview's"
        lossy.append(f"{path} was cut to {len(items)} items by the record")
    elif len(rec) != len(act):
        return f"{path} has {len(rec)} items in the record, {len(act)} in ctxview's"
    for index, (r, a) in enumerate(zip(items, act, strict=False)):
        found = _difference(r, a, f"{path}[{index}]", lossy)
        if found is not None:
            return found
    return None


def _string_difference(rec: str, act: str, where: str, lossy: list[str]) -> str | None:
    if rec == act:
        return None
    if _MASK.search(rec) and _matches_masked(rec, act):
        lossy.append(f"{where} had a secret masked by the record")
        return None
    at = next((i for i, (a, b) in enumerate(zip(rec, act, strict=False)) if a != b), min(len(rec), len(act)))
    return (
        f"{where} differs at character {at}: {_excerpt(rec, at)} in the record, {_excerpt(act, at)} in ctxview's"
    )


def _matches_masked(rec: str, act: str) -> bool:
    """``act`` could be ``rec`` before masking: the unmasked pieces appear in order, anchored at both ends."""
    pieces = _MASK.split(rec)
    if not act.startswith(pieces[0]) or not act.endswith(pieces[-1]):
        return False
    position = len(pieces[0])
    for piece in pieces[1:-1]:
        found = act.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return position <= len(act) - len(pieces[-1])


def _excerpt(text: str, at: int) -> str:
    start = max(0, at - 12)
    piece = text[start : at + 12]
    return "'" + ("…" if start else "") + repr(piece)[1:-1] + ("…" if at + 12 < len(text) else "") + "'"


# --- the token budget -----------------------------------------------------------------------------------

DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_RESERVE_TOKENS = 16_384
DEFAULT_RESERVE_FLOOR = 20_000
Generation = Literal["2026.4", "newer"]


@dataclass(frozen=True, slots=True)
class BudgetDerivation:
    budget: int | None  # the tokenBudget the host passed to assemble(); None when it cannot be told
    context_window: int | None
    reserve: int | None  # newer builds: the compaction reserve R
    prompt_estimate: int | None  # newer builds: est(systemPrompt + prompt)
    generation: Generation
    exact: bool  # every input came from the config or the record (no default, no unverified estimate)
    steps: tuple[str, ...]  # how it was worked out, for the user


def _get(node: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if value > 0 else None


def _non_negative_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value >= 0 else None


def configured_context_window(config: Mapping[str, Any], provider: str | None, model_id: str | None) -> int | None:
    """``models.providers[provider].models[model_id]``'s ``contextTokens`` or ``contextWindow`` (list or map)."""
    models = _get(config, "models", "providers", provider or "", "models")
    entry: Any = None
    if isinstance(models, Mapping):
        entry = models.get(model_id or "")
    elif isinstance(models, list):
        entry = next((m for m in models if isinstance(m, Mapping) and m.get("id") == model_id), None)
    if not isinstance(entry, Mapping):
        return None
    return _positive_int(entry.get("contextTokens")) or _positive_int(entry.get("contextWindow"))


def estimate_tokens(text: str) -> int:
    """ceil(UTF-16 length / 4): the usual chars/4 estimate (the host's exact est() is unverified, spec §8)."""
    return math.ceil(utf16_len(text) / 4)


def derive_token_budget(
    config: Mapping[str, Any],
    *,
    provider: str | None,
    model_id: str | None,
    generation: Generation,
    agent_id: str | None = None,
    system_prompt: str | None = None,
    prompt: str | None = None,
) -> BudgetDerivation:
    """The tokenBudget the host passed to assemble() (spec §4 tokenBudget).

    2026.4 builds pass the context window C: the config's model entry, else the model's
    built-in metadata (unknown to ctxview: 200,000 is assumed and the result is not exact),
    capped by ``agents.defaults.contextTokens`` (a per-agent ``agents.list[].contextTokens``
    takes its place when set — an assumption).  Newer builds pass
    ``max(1, max(1, C − R) − est(systemPrompt + prompt))`` with
    R = max(``compaction.reserveTokens`` or 16,384, ``compaction.reserveTokensFloor`` or 20,000).
    """
    steps: list[str] = []
    exact = True
    window = configured_context_window(config, provider, model_id)
    if window is not None:
        steps.append(f"context window {window:,} from models.providers.{provider}.models[{model_id}]")
    else:
        window = DEFAULT_CONTEXT_WINDOW
        exact = False
        steps.append(
            f"the config does not give {provider}/{model_id}'s context window; the model's own metadata is "
            f"not known to ctxview, so {DEFAULT_CONTEXT_WINDOW:,} (the host's last resort) is assumed"
        )
    cap = _positive_int(_get(config, "agents", "defaults", "contextTokens"))
    cap_source = "agents.defaults.contextTokens"
    agents = _get(config, "agents", "list")
    if agent_id is not None and isinstance(agents, list):
        own = next((a for a in agents if isinstance(a, Mapping) and a.get("id") == agent_id), None)
        own_cap = _positive_int(own.get("contextTokens")) if isinstance(own, Mapping) else None
        if own_cap is not None:
            cap, cap_source = own_cap, f"agents.list[{agent_id}].contextTokens"
    if cap is not None and cap < window:
        steps.append(f"capped at {cap:,} by {cap_source}")
        window = cap
    if generation == "2026.4":
        steps.append(f"tokenBudget = the context window = {window:,}")
        return BudgetDerivation(window, window, None, None, generation, exact, tuple(steps))
    compaction = _get(config, "agents", "defaults", "compaction")
    reserve_tokens = _non_negative_int(_get(compaction, "reserveTokens"))
    floor = _non_negative_int(_get(compaction, "reserveTokensFloor"))
    reserve = max(
        reserve_tokens if reserve_tokens is not None else DEFAULT_RESERVE_TOKENS,
        floor if floor is not None else DEFAULT_RESERVE_FLOOR,
    )
    steps.append(f"compaction reserve R = {reserve:,} (reserveTokens, at least reserveTokensFloor)")
    text = (system_prompt or "") + (prompt or "")
    estimate = estimate_tokens(text)
    steps.append(f"est(systemPrompt + prompt) ≈ {estimate:,} (chars/4; the host's estimator is unverified)")
    exact = False
    budget = max(1, max(1, window - reserve) - estimate)
    steps.append(f"tokenBudget ≈ max(1, max(1, {window:,} − {reserve:,}) − {estimate:,}) = {budget:,}")
    return BudgetDerivation(budget, window, reserve, estimate, generation, exact, tuple(steps))


# --- searching the budget ---------------------------------------------------------------------------------


@dataclass(slots=True)
class BudgetSearch:
    """Budgets at which the re-assembly matched the record."""

    ranges: list[tuple[int, int]]  # inclusive, ascending; every budget probed inside matched
    closest: tuple[int, Verification] | None  # when nothing matched: the budget whose output got furthest
    calls: int  # how many times assemble_at ran
    notes: list[str] = field(default_factory=list)

    @property
    def matched(self) -> bool:
        return bool(self.ranges)


def find_matching_budgets(
    assemble_at: Callable[[int], Sequence[Any]],
    recorded: Sequence[Any],
    *,
    low: int = 1,
    high: int = 2_000_000,
    hint: int | None = None,
    samples: int = 8,
    extra: Sequence[int] = (),
) -> BudgetSearch:
    """The budgets in [low, high] at which ``assemble_at(budget)`` matches ``recorded``.

    The number of messages assembled grows with the budget almost everywhere, but not
    strictly (a bigger budget can keep one large item in place of two small ones).  So:
    (1) bisect for the first budget whose output has at least as many messages as the
    record and the first with more — that bracket is where a match can be if the count
    is monotone; (2) compare at its ends, at ``hint`` and at ``samples`` evenly spaced
    budgets inside it; (3) from each match, gallop then bisect outwards for the edges of
    its run of matches; (4) if the bracket held no match (a dip in the count can make the
    bisection overshoot the run), gallop outwards from both ends of the bracket through
    budgets whose count is within one of the record's and compare where it is equal;
    (5) failing that, compare at ``samples`` × 3 budgets spread geometrically over
    [low, high] and grow any match found the same way.  ``extra`` budgets (the sweep's
    breakpoints, where the budget pass changes what it keeps) are compared in step (2)
    too.  A reported range is exact at its edges if matching is
    contiguous between probes — a run broken between two probes is not seen.  Each
    budget is assembled at most once.
    """
    target = recorded_count(list(recorded))
    cache: dict[int, Sequence[Any]] = {}
    verdicts: dict[int, Verification] = {}

    def output(budget: int) -> Sequence[Any]:
        if budget not in cache:
            cache[budget] = assemble_at(budget)
        return cache[budget]

    def matches(budget: int) -> bool:
        if budget not in verdicts:
            verdicts[budget] = compare_messages(recorded, output(budget))
        return verdicts[budget].matches

    def first_with_at_least(count: int) -> int:
        lo, hi = low, high + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if len(output(mid)) >= count:
                hi = mid
            else:
                lo = mid + 1
        return lo

    start = first_with_at_least(target)
    end = first_with_at_least(target + 1) - 1 if start <= high else high
    candidates = [start, end, *extra]
    if hint is not None and low <= hint <= high:
        candidates.insert(0, hint)
    if start <= end:
        span = end - start
        candidates += [start + span * k // (samples + 1) for k in range(1, samples + 1)]
    ranges = _grow_all([b for b in candidates if low <= b <= high], matches, low, high)
    notes: list[str] = []
    if not ranges:
        # a dip in the count next to the bracket can hide the run of matches: gallop outwards from each end
        # through budgets whose count is within one of the record's, comparing where it is equal
        near: list[int] = []
        for origin, step in ((start, -1), (end, 1)):
            distance = 1
            for _ in range(24):
                budget = origin + step * distance
                if budget < low or budget > high or abs(len(output(budget)) - target) > 1:
                    break
                if len(output(budget)) == target:
                    near.append(budget)
                distance *= 2
        ranges = _grow_all(near, matches, low, high)
    if not ranges:
        spread = _geometric(low, high, samples * 3)
        ranges = _grow_all(spread, matches, low, high)
        if ranges:
            notes.append("the message count is not monotone here: the match lies outside the bracket")
    closest = None
    if not ranges and verdicts:
        best = max(verdicts.items(), key=lambda kv: _progress(kv[1]))
        closest = best
    return BudgetSearch(ranges, closest, len(cache), notes)


def _progress(verdict: Verification) -> tuple[int, int]:
    index = verdict.difference.index if verdict.difference else verdict.recorded_count
    return (index, -abs(verdict.assembled_count - verdict.recorded_count))


def _geometric(low: int, high: int, count: int) -> list[int]:
    if high <= low:
        return [low]
    ratio = (high / max(1, low)) ** (1 / max(1, count - 1))
    points = sorted({min(high, max(low, round(max(1, low) * ratio**k))) for k in range(count)})
    return points


def _grow_all(candidates: list[int], matches: Callable[[int], bool], low: int, high: int) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for budget in candidates:
        if any(a <= budget <= b for a, b in ranges) or not matches(budget):
            continue
        ranges.append(_grow(budget, matches, low, high))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for a, b in ranges:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _grow(seed: int, matches: Callable[[int], bool], low: int, high: int) -> tuple[int, int]:
    """The run of matching budgets around ``seed``: gallop outwards, then bisect each edge."""
    lower = _edge(seed, matches, low, -1)
    upper = _edge(seed, matches, high, 1)
    return lower, upper


def _edge(seed: int, matches: Callable[[int], bool], limit: int, step: int) -> int:
    good = seed
    distance = 1
    bad: int | None = None
    while True:
        probe = seed + step * distance
        if (step < 0 and probe < limit) or (step > 0 and probe > limit):
            probe = limit
        if probe == good:
            return good
        if matches(probe):
            good = probe
            if probe == limit:
                return good
            distance *= 2
        else:
            bad = probe
            break
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        if matches(mid):
            good = mid
        else:
            bad = mid
    return good
