"""Does ctxview's re-assembly of the newest recorded turn match what the user's agent actually sent?

The pieces live in ``ctxview.openclaw`` (records, the host's live window, the
comparison, the budget derivation and search); this module runs them against
the real pipeline: the newest turn's record of one session, the live window at
that turn's leaf (or the cache trace's own ``session:limited`` messages, which
are exactly what ``assemble`` got), the prompt and tools it recorded, the engine
settings from ``openclaw.json``, and the token budget derived from the host's
configuration where the spec says how.  Where the budget cannot be derived
exactly, the budgets at which the re-assembly matches are searched, seeded
with the points where the sweep's budget pass changes what it keeps.

A record that cannot be compared (its messages were dropped or cut, or it is
older than the last compaction) is reported as such, never as a mismatch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Literal

from ctxview.model import Params
from ctxview.openclaw.engine_config import engine_settings, machine_timezone
from ctxview.openclaw.live_window import build_live_window
from ctxview.openclaw.paths import resolve_home
from ctxview.openclaw.records import TurnRecord, newest_turn, record_staleness
from ctxview.openclaw.verify import (
    BudgetDerivation,
    BudgetSearch,
    Generation,
    Verification,
    compare_messages,
    derive_token_budget,
    find_matching_budgets,
    turn_clock,
)
from ctxview.params_io import default_params

if TYPE_CHECKING:
    from ctxview.openclaw.host import HostContext
    from ctxview.pipeline import SessionAssembler

Status = Literal["matches", "differs", "stale", "lossy", "no-record"]
EXIT_CODES: dict[Status, int] = {"matches": 0, "differs": 1, "stale": 2, "lossy": 2, "no-record": 2}
BADGES: dict[Status, str] = {"matches": "✓", "differs": "✗", "stale": "…", "lossy": "…", "no-record": "·"}
SEARCH_HIGH = 2_000_000  # the largest budget the search tries (beyond every real context window)


@dataclass(slots=True)
class HostCheck:
    """The verdict on one session's newest recorded turn."""

    status: Status
    summary: str  # one line: "matches what your agent sent (turn at 14:02, 38 messages)" or what went wrong
    details: list[str] = field(default_factory=list)  # the differing message on both sides, how the budget was found
    record: TurnRecord | None = None
    verification: Verification | None = None
    budget: BudgetDerivation | None = None
    budget_ranges: list[tuple[int, int]] = field(default_factory=list)  # where the re-assembly matches
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 matches, 1 differs, 2 nothing could be compared."""
        return EXIT_CODES[self.status]

    def badge(self) -> str:
        """The TUI header's short form: a mark and a few words (``report`` has the rest)."""
        mark = BADGES[self.status]
        verdict = self.verification
        when = ""
        if self.record is not None:
            clock = verdict.turn_time if verdict is not None else None
            when = f"turn at {clock}" if clock else ""
        if self.status == "matches" and verdict is not None:
            count = f"{verdict.recorded_count} message{'s' if verdict.recorded_count != 1 else ''}"
            return f"{mark} matches what your agent sent ({when + ', ' if when else ''}{count})"
        if self.status == "differs" and verdict is not None and verdict.difference is not None:
            return f"{mark} differs from what your agent sent at message {verdict.difference.index}" + (
                f" ({when})" if when else "")
        if self.status == "stale":
            return f"{mark} not compared: the record is older than the last compaction"
        if self.status == "lossy":
            return f"{mark} not compared: the record is truncated"
        return f"{mark} {self.summary}"

    def report(self) -> str:
        """Everything ``ctxview verify`` prints."""
        lines = [self.summary, *self.details]
        if self.notes:
            lines.append("notes:")
            lines.extend(f"  - {note}" for note in self.notes)
        return "\n".join(lines)


def _ranges_text(ranges: list[tuple[int, int]], high: int) -> str:
    parts = []
    for low, top in ranges:
        if top >= high:
            parts.append(f"{low:,} or more")
        elif low == top:
            parts.append(f"{low:,}")
        else:
            parts.append(f"{low:,}–{top:,}")
    return ", ".join(parts)


def _generation(record: TurnRecord, host: HostContext) -> tuple[Generation, str]:
    """Which budget formula the host that wrote ``record`` used (spec §4: the trajectory is newer than 2026.4)."""
    if record.kind == "trajectory":
        return "newer", "the trajectory record exists only in builds newer than 2026.4"
    transcript = host.row.session.transcript
    if transcript is not None and transcript.kind == "sqlite":
        return "newer", "sessions in SQLite exist only in builds newer than 2026.4"
    return "2026.4", "a cache trace beside JSONL transcripts and no trajectory: read as a 2026.4 build"


def turn_params(host: HostContext, record: TurnRecord, live: list[Any], base: Params | None = None) -> Params:
    """The engine's inputs for the recorded turn: the plugin's settings, the prompt, the tools, the live window."""
    config = host.discovery.config.data
    settings = engine_settings(config)
    params = settings.apply(base if base is not None else default_params(engine=True))
    if settings.timezone is None:
        params = replace(params, timezone=machine_timezone(host.discovery.env) or "UTC")
    return replace(
        params,
        prompt=record.prompt,
        live_messages=tuple(live),
        available_tools=record.tool_names,
        session_id=None,
        session_key=None,
        engine=True,
    )


def check_turn(
    host: HostContext,
    assembler: SessionAssembler | None = None,
    *,
    base: Params | None = None,
    zone: tzinfo | None = None,
    env: Mapping[str, str] | None = None,
) -> HostCheck:
    """Re-assemble the newest recorded turn of ``host``'s session and compare it with the record.

    ``assembler``: the session of the session's LCM conversation, already loaded (one is
    loaded when None).  ``zone``: for the turn's clock time (local when None).
    """
    session = host.row.session
    ref = session.transcript
    discovery = host.discovery
    env = discovery.env if env is None else env
    if ref is None:
        return HostCheck("no-record", "nothing to verify: the session has no transcript, so no record of its turns")
    if host.conversation_id is None:
        return HostCheck("no-record", f"nothing to verify: {host.row.why}")
    home = resolve_home(env, discovery.os_home)
    records = newest_turn(ref, discovery.state.path, env, home)
    notes = list(records.notes)
    record = records.best
    if record is None:
        return HostCheck(
            "no-record",
            "nothing to verify: OpenClaw recorded no turn of this session (no trajectory record, and the cache "
            "trace is off or has none)",
            notes=notes,
        )
    clock = turn_clock(record.time_ms, zone)
    when = f"turn at {clock}" if clock else "newest turn"
    details = [f"record: {record.kind}, {record.source}"]
    if not record.verifiable:
        losses = "; ".join(record.losses) or "it holds no messages"
        return HostCheck("lossy", f"cannot compare the {when}: the record is truncated ({losses})", details,
                         record=record, notes=notes)
    stale = record_staleness(record, host.transcript)
    if stale:
        return HostCheck("stale", f"cannot compare the {when}: {stale[0]}", [*details, *stale[1:]],
                         record=record, notes=notes)
    if record.kind == "cache-trace" and record.live_messages is not None:
        live = list(record.live_messages)
        details.append(f"live window: the {len(live)} messages of the cache trace's session:limited line")
    else:
        if host.transcript is None:
            return HostCheck("no-record", "nothing to verify: the transcript cannot be read", details, record=record,
                             notes=notes)
        leaf = record.transcript_leaf_id
        window = build_live_window(host.transcript, leaf) if leaf else build_live_window(host.transcript)
        live = window.messages
        notes.extend(window.notes)
        details.append(window.provenance(discovery.state.path))
    if assembler is None:
        from ctxview.pipeline import SessionAssembler
        from ctxview.store import LcmStore

        with LcmStore(discovery.lcm.path) as store:
            assembler = SessionAssembler(store.load_session(host.conversation_id))
    params = turn_params(host, record, live, base)
    generation, why_generation = _generation(record, host)
    derivation = derive_token_budget(
        discovery.config.data,
        provider=record.provider,
        model_id=record.model_id,
        generation=generation,
        agent_id=session.agent_id,
        system_prompt=record.system_prompt,
        prompt=record.prompt,
    )
    settings = engine_settings(discovery.config.data)
    derived = settings.cap(derivation.budget) if derivation.budget is not None else None
    steps = [why_generation, *derivation.steps]
    if derived is not None and derived != derivation.budget:
        steps.append(f"capped at {derived:,} by maxAssemblyTokenBudget")
    recorded = record.messages
    assert recorded is not None

    def assemble_at(budget: int) -> list[Any]:
        return assembler.run(replace(params, token_budget=budget)).messages

    result = HostCheck("differs", "", details, record=record, budget=derivation, notes=notes)
    if derived is not None:
        verdict = compare_messages(recorded, assemble_at(derived), time_ms=record.time_ms, zone=zone)
        if verdict.matches and derivation.exact:
            result.status = "matches"
            result.verification = verdict
            result.summary = verdict.summary()
            result.details.append(f"token budget {derived:,}, from the host configuration: " + "; ".join(steps))
            return result
    search = _search(assembler, params, recorded, derived)
    result.budget_ranges = search.ranges
    how = "; ".join(steps)
    if search.matched:
        verdict = compare_messages(
            recorded, assemble_at(search.ranges[0][0]), time_ms=record.time_ms, zone=zone
        )
        result.status = "matches"
        result.verification = verdict
        ranges = _ranges_text(search.ranges, SEARCH_HIGH)
        result.summary = f"{verdict.summary()} at token budgets {ranges}"
        inside = derived is not None and any(a <= derived <= b for a, b in search.ranges)
        estimate = f"{derived:,}" if derived is not None else "unknown"
        result.details.append(
            f"the host's budget is not known exactly (≈ {estimate}: {how}); "
            + ("the estimate is inside the matching range" if inside else "the estimate is outside it")
        )
        result.details.extend(search.notes)
        return result
    # nothing matched: show the first difference at the budget whose output got furthest (else the derived one)
    if search.closest is not None:
        budget = search.closest[0]
        why = f"the budget whose re-assembly agrees longest with the record; the host's would be ≈ {derived:,}" if (
            derived is not None) else "the budget whose re-assembly agrees longest with the record"
    else:
        budget = derived if derived is not None else params.token_budget
        why = "the host's budget as derived"
    verdict = compare_messages(recorded, assemble_at(budget), time_ms=record.time_ms, zone=zone)
    result.verification = verdict
    result.summary = verdict.summary()
    result.details.append(f"no token budget up to {SEARCH_HIGH:,} matches; shown at {budget:,} ({why})")
    result.details.append(f"the host's budget: {how}")
    result.details.extend(_sides(verdict))
    return result


def _search(
    assembler: SessionAssembler, params: Params, recorded: list[Any], hint: int | None
) -> BudgetSearch:
    """The budgets at which the re-assembly matches, seeded with the sweep's breakpoints."""
    from ctxview.sweep import budget_range, spaced_subset, sweep

    low, high = budget_range(assembler, params)
    swept = sweep(assembler, params, [low, high], runs=0)
    breakpoints = sorted({b for b in swept.selected_from.values() if low <= b <= high})
    seeds = spaced_subset(breakpoints, 24) if breakpoints else []

    def assemble_at(budget: int) -> list[Any]:
        return assembler.run(replace(params, token_budget=budget)).messages

    return find_matching_budgets(assemble_at, recorded, low=1, high=max(SEARCH_HIGH, high), hint=hint,
                                 extra=seeds)


def _sides(verdict: Verification) -> list[str]:
    """The differing message as the record has it and as ctxview assembled it."""
    from ctxview.jsjson import js_stringify

    diff = verdict.difference
    if diff is None:
        return []

    def show(value: Any) -> str:
        if value is None:
            return "(none)"
        text = js_stringify(value)
        return text if len(text) <= 600 else text[:600] + f"… ({len(text):,} characters)"

    return [
        f"message {diff.index} in the record:  {show(diff.recorded)}",
        f"message {diff.index} in ctxview's:   {show(diff.assembled)}",
    ]
