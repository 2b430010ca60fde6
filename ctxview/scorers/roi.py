"""Section ROI scoring with a citation log and stubs ("section-roi" mode, scorers.md C).

Items are grouped into sections (kuro-style tagged blocks, or coarse item
groups such as ``tool:read``).  A citation log — kuro's ``crs-baseline.jsonl``
or one derived from the session — says, per cycle, which sections were in the
context and which the model's reply cited.  Each section gets a 0–1 score
from its citation rate, trigger relevance, recency and size efficiency; a
section below the threshold is not evicted whole but replaced by a one-line
stub that says it exists, how big it is and when it was last cited.  The
default selection then runs with the stubs' token counts.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.files import Wording, read_text
from ctxview.jsjson import JS_WHITESPACE, collapse_js_whitespace, utf16_len
from ctxview.model import MessageRow, Session, TermMatch
from ctxview.scorers.base import FACTOR_NOTE, ScoreDoc, ScoreResult, TextCache
from ctxview.scorers.bm25lite import bm25_counts, prompt_terms
from ctxview.scorers.tokenize import LCM, Tokenizer, get_tokenizer

__all__ = [
    "HALF_LIFE",
    "KURO_KEYWORDS",
    "KURO_PROTECTED",
    "MIN_OBS",
    "RATE_FULL",
    "ROI_MODES",
    "THRESHOLD",
    "WEIGHTS",
    "WINDOW",
    "CitationCycle",
    "CitationLog",
    "Factor",
    "PreparedRoi",
    "RoiConfig",
    "RoiScorer",
    "SectionScore",
    "SectionStats",
    "TaggedSection",
    "derive_citation_log",
    "doc_section",
    "loop_e_citations",
    "make_roi",
    "message_section",
    "parse_citation_lines",
    "read_citation_log",
    "roi_category",
    "scan_sections",
    "score_section",
    "section_keywords",
    "section_stats",
    "stub_line",
    "stub_tagged_text",
]

# C.4.5 constants (PROPOSED; see spec F.5).
WINDOW = 50
MIN_OBS = 5
RATE_FULL = 0.15
HALF_LIFE = 50.0
THRESHOLD = 0.30
WEIGHTS: tuple[float, float, float, float] = (0.40, 0.30, 0.15, 0.15)
ROI_MODES = ("share", "per_kchar")

# C.2.4 keyword table at kuro HEAD: the default keyword preset.
KURO_KEYWORDS: dict[str, tuple[str, ...]] = {
    "temporal": ("time", "schedule", "when", "date", "calendar"),
    "capabilities": ("capability", "tool", "plugin", "skill", "mcp", "provider", "model"),
    "process": ("process", "memory", "cpu", "pid", "debug", "slow", "performance", "kill"),
    "system": ("system", "disk", "cpu", "resource", "space", "full"),
    "logs": ("error", "log", "fail", "bug", "debug", "crash"),
    "network": ("port", "network", "service", "connect", "http", "api", "url"),
    "config": ("config", "setting", "compose", "cron", "loop", "skill"),
    "activity": ("activity", "behavior", "action", "recent"),
    "trail": ("trail", "decision", "triage", "scout"),
    "achievements": ("achievement", "milestone", "ship", "momentum"),
    "pulse": ("pulse", "habit", "behavior", "pattern", "streak", "action ratio", "momentum", "signal"),
    "commitments": ("commitment", "promise", "overdue", "committed", "pledge"),
    "route-efficiency": ("route", "efficiency", "nutrient", "slime", "path", "forge"),
    "stale-tasks": ("stale", "overdue", "stuck", "abandon", "backlog"),
    "recent-activity": ("activity", "behavior", "journal", "recent action", "what did"),
    "decision-quality-warning": ("quality", "decision", "score", "depth", "dq"),
    "structural-health": ("health", "structural", "report", "upgrade", "commit"),
    "problem-alignment": ("alignment", "priority", "problem", "direction", "focus", "wrong question"),
    "myelin-framework": ("myelin", "rule", "crystallize", "decision", "triage", "route", "pattern"),
}
# C.2.4 never-demote list at kuro HEAD: the ``protected="kuro"`` preset.
KURO_PROTECTED: tuple[str, ...] = (
    "environment", "soul-core", "inbox", "workspace", "telegram", "memory", "heartbeat-active",
    "recent_conversations", "next", "priority-focus", "self", "chat-room-recent",
)  # fmt: skip

STUB_PREFIX = "[ctxview stub]"
_MAX_TAG_NAME = 128  # a guard against quadratic scans of tag-like noise; real tags are short


# --- tagged sections (C.2.1) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaggedSection:
    """One match of ``<(\\S+?)[\\s>][\\s\\S]*?<\\/\\1>`` in a text."""

    name: str
    start: int
    end: int
    chars: int  # UTF-16 length of the whole match, tags included (as kuro counts)
    body_start: int | None  # just after the opening tag's ``>``; None when it has none
    body_end: int  # where ``</name>`` starts
    attr_name: str | None  # value of a name="…" attribute in the opening tag


def scan_sections(text: str) -> list[TaggedSection]:
    """kuro's section scan: scan left to right, resume after each match (nested tags not counted)."""
    found: list[TaggedSection] = []
    closers: dict[str, list[int]] = {}
    pos = 0
    while True:
        start = text.find("<", pos)
        if start < 0:
            break
        match = _match_at(text, start, closers)
        if match is None:
            pos = start + 1
        else:
            found.append(match)
            pos = match.end
    return found


def _closer_positions(text: str, name: str, closers: dict[str, list[int]]) -> list[int]:
    positions = closers.get(name)
    if positions is None:
        needle = f"</{name}>"
        positions = []
        at = text.find(needle)
        while at >= 0:
            positions.append(at)
            at = text.find(needle, at + 1)
        closers[name] = positions
    return positions


def _first_at_or_after(positions: list[int], at: int) -> int:
    lo, hi = 0, len(positions)
    while lo < hi:
        mid = (lo + hi) // 2
        if positions[mid] < at:
            lo = mid + 1
        else:
            hi = mid
    return positions[lo] if lo < len(positions) else -1


def _match_at(text: str, start: int, closers: dict[str, list[int]]) -> TaggedSection | None:
    size = len(text)
    if start + 1 >= size or text[start + 1] in JS_WHITESPACE:
        return None
    j = start + 2
    limit = min(size, start + 2 + _MAX_TAG_NAME)
    while j < limit:
        ch = text[j]
        is_space = ch in JS_WHITESPACE
        if is_space or ch == ">":
            name = text[start + 1 : j]
            close = _first_at_or_after(_closer_positions(text, name, closers), j + 1)
            if close >= 0:
                end = close + len(name) + 3
                open_end = j + 1 if ch == ">" else text.find(">", j, close) + 1
                attr = _name_attribute(text[j:close] if open_end <= 0 else text[j:open_end])
                return TaggedSection(
                    name=name,
                    start=start,
                    end=end,
                    chars=utf16_len(text[start:end]),
                    body_start=open_end if open_end > 0 else None,
                    body_end=close,
                    attr_name=attr,
                )
            if is_space:  # the name cannot run past whitespace
                return None
        j += 1
    return None


def _name_attribute(opening: str) -> str | None:
    at = opening.find('name="')
    while at >= 0:
        if at == 0 or opening[at - 1] in JS_WHITESPACE:
            end = opening.find('"', at + 6)
            return opening[at + 6 : end] if end >= 0 else None
        at = opening.find('name="', at + 1)
    return None


def loop_e_citations(sections: Sequence[str], action: str) -> list[str]:
    """kuro Loop E: cited if the action has ``<name>``, else (name > 3 chars) name with ``-`` → space.

    Returns the cited names in section order, each once.
    """
    tags = set()
    at = action.find("<")
    while at >= 0:
        end = action.find(">", at + 1)
        if end < 0:
            break
        candidate = action[at + 1 : end]
        if _is_tag_name(candidate):
            tags.add(candidate)
        at = action.find("<", at + 1)
    lowered = action.lower()
    cited: list[str] = []
    for name in dict.fromkeys(sections):
        if name in tags:
            cited.append(name)
            continue
        spaced = name.replace("-", " ")
        if len(spaced) > 3 and spaced in lowered:
            cited.append(name)
    return cited


def _is_tag_name(name: str) -> bool:
    """``\\w[\\w-]+`` (JS ``\\w`` is ASCII)."""
    if len(name) < 2 or not name.isascii():
        return False
    if not (name[0].isalnum() or name[0] == "_"):
        return False
    return all(ch.isalnum() or ch in "_-" for ch in name[1:])


# --- the citation log (C.4.2, C.4.3) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CitationCycle:
    index: int  # 1..N in file order
    sections: tuple[tuple[str, int], ...]  # merged: (name, summed chars), first-appearance order
    cited: tuple[str, ...]  # distinct cited names that were included
    timestamp: str | None = None
    trigger: str | None = None
    line: int | None = None  # source line (file logs)

    def included(self) -> dict[str, int]:
        return dict(self.sections)


@dataclass(frozen=True, slots=True)
class CitationLog:
    cycles: tuple[CitationCycle, ...] = ()
    malformed: int = 0  # skipped lines
    ignored_citations: int = 0  # citations of names not included in their cycle
    problems: tuple[str, ...] = ()  # one message per skipped line
    source: str = ""  # a path, "derived" or "" (none)

    @property
    def n_cycles(self) -> int:
        return len(self.cycles)


class _BadLine(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_record(line: str) -> tuple[list[tuple[str, int]], list[str], str | None, str | None]:
    try:
        record = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise _BadLine(f"not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise _BadLine("not a JSON object")
    if "sections" not in record:
        raise _BadLine('missing "sections"')
    sections = record["sections"]
    if not isinstance(sections, list):
        raise _BadLine('"sections" is not a list')
    parsed: list[tuple[str, int]] = []
    for number, entry in enumerate(sections):
        if not isinstance(entry, dict):
            raise _BadLine(f'"sections"[{number}] is not an object')
        name = entry.get("name")
        chars = entry.get("chars")
        if not isinstance(name, str) or not name:
            raise _BadLine(f'"sections"[{number}].name is not a non-empty string')
        if not isinstance(chars, int) or isinstance(chars, bool) or chars < 0:
            raise _BadLine(f'"sections"[{number}].chars is not a non-negative integer')
        parsed.append((name, chars))
    if "citations" not in record:
        raise _BadLine('missing "citations"')
    citations = record["citations"]
    if not isinstance(citations, list) or not all(isinstance(c, str) for c in citations):
        raise _BadLine('"citations" is not a list of strings')
    timestamp = record.get("timestamp")
    trigger = record.get("triggerReason")
    return (
        parsed,
        citations,
        timestamp if isinstance(timestamp, str) else None,
        trigger if isinstance(trigger, str) else None,
    )


def parse_citation_lines(lines: Iterable[str], *, source: str = "citation log", strict: bool = False) -> CitationLog:
    """Parse JSONL citation records; malformed lines are skipped and counted (``strict``: raise).

    Blank lines are ignored.  Cycles are numbered 1..N over the valid records,
    in file order.  Repeated section names in a record are merged (chars
    summed); citations of names the record did not include are dropped and
    counted.
    """
    cycles: list[CitationCycle] = []
    malformed = 0
    ignored = 0
    problems: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            sections, citations, timestamp, trigger = _parse_record(line)
        except _BadLine as exc:
            message = f"{source} line {number}: {exc}"
            if strict:
                raise InputError(message) from None
            malformed += 1
            problems.append(message)
            continue
        merged: dict[str, int] = {}
        for name, chars in sections:
            merged[name] = merged.get(name, 0) + chars
        cited: list[str] = []
        for name in dict.fromkeys(citations):
            if name in merged:
                cited.append(name)
            else:
                ignored += 1
        cycles.append(CitationCycle(len(cycles) + 1, tuple(merged.items()), tuple(cited), timestamp, trigger, number))
    return CitationLog(tuple(cycles), malformed, ignored, tuple(problems), source)


def read_citation_log(path: str | os.PathLike[str], *, strict: bool = False) -> CitationLog:
    """Read a kuro-style JSONL citation log; unreadable files and files with no valid record are InputErrors."""
    name = os.fspath(path)
    wording = Wording("citation log", directory="{what} is a directory, not a JSONL file: {path}")
    lines = read_text(name, wording, encoding="utf-8-sig").splitlines()
    log = parse_citation_lines(lines, source=name, strict=strict)
    if log.malformed and not log.cycles:
        raise InputError(
            f"{name}: no valid citation record ({log.malformed} malformed line"
            f"{'s' if log.malformed != 1 else ''}; first: {log.problems[0]})"
        )
    return log


def message_tool_names(message: MessageRow) -> tuple[str, ...]:
    """Distinct tool names of a message's parts (column, then metadata toolName / raw.name)."""
    names: list[str] = []
    for part in message.parts:  # in the store's order: SQLite's ORDER BY ordinal, whatever the ordinals hold
        name = part.tool_name if part.tool_name else _metadata_tool_name(part.metadata, part.part_type == "tool")
        if name:
            names.append(name)
    return tuple(dict.fromkeys(names))


def _metadata_tool_name(metadata: str | None, tool_part: bool) -> str | None:
    if not metadata or ("ool" not in metadata and "name" not in metadata):
        return None
    try:
        meta = json.loads(metadata)
    except ValueError:
        return None
    if not isinstance(meta, dict):
        return None
    name = meta.get("toolName")
    if isinstance(name, str) and name:
        return name
    raw = meta.get("raw")
    if tool_part and isinstance(raw, dict):
        name = raw.get("name")
        if isinstance(name, str) and name:
            return name
    return None


def message_section(message: MessageRow) -> str:
    """C.4.1 group key of a stored message: ``tool:<name>``, else its DB role."""
    names = message_tool_names(message)
    if names:
        return f"tool:{names[0]}"
    if message.role == "tool":
        return "tool:unknown"
    return message.role


def _name_form(section: str) -> str:
    return section.lower().replace(":", " ").replace("-", " ").replace("_", " ")


def derive_citation_log(source: Session | Iterable[MessageRow]) -> CitationLog:
    """C.4.3: cycle k = the k-th assistant message by seq; it includes every earlier message.

    A section counts as cited when the reply (lowercased) contains a slug of
    one of its member messages (tool names) or the section key with ``:``,
    ``-`` and ``_`` as spaces (when that is longer than 3 characters).  An
    approximation: the DB keeps no history of what each turn really saw.
    """
    messages = source.messages.values() if isinstance(source, Session) else source
    ordered = sorted(messages, key=lambda m: (m.seq, m.message_id))
    included: dict[str, int] = {}
    slugs: dict[str, dict[str, None]] = {}
    cycles: list[CitationCycle] = []
    for message in ordered:
        if message.role == "assistant":
            reply = message.content.lower()
            cited: list[str] = []
            for section in included:
                name = _name_form(section)
                if any(slug in reply for slug in slugs[section]) or (len(name) > 3 and name in reply):
                    cited.append(section)
            cycles.append(
                CitationCycle(len(cycles) + 1, tuple(included.items()), tuple(cited), message.created_at, None, None)
            )
        section = message_section(message)
        included[section] = included.get(section, 0) + utf16_len(message.content)
        members = slugs.setdefault(section, {})
        for name in message_tool_names(message):
            if name.lower():
                members[name.lower()] = None
    return CitationLog(tuple(cycles), 0, 0, (), "derived")


# --- statistics and scores (C.4.4, C.4.5) ----------------------------------------------------


def roi_category(roi: float | None) -> str:
    """WASTE below 0.5, LOW from 0.5 to 2 inclusive, MED+ above 2, n/a when undefined."""
    if roi is None:
        return "n/a"
    if roi < 0.5:
        return "WASTE"
    if roi <= 2:
        return "LOW"
    return "MED+"


@dataclass(frozen=True, slots=True)
class SectionStats:
    section: str
    included_w: int  # cycles in the window that included it
    cited_w: int  # cycles in the window that cited it
    chars_w: int  # its chars summed over the window
    r: float | None  # cited_w / included_w
    last: int | None  # last citing cycle in the whole log
    age: int | None  # N − last
    last_timestamp: str | None
    size_share: float | None
    cite_share: float | None
    roi: float | None
    category: str


def section_stats(
    log: CitationLog,
    sections: Iterable[str] = (),
    *,
    window: int = WINDOW,
    roi_mode: str = "share",
) -> dict[str, SectionStats]:
    """Per-section statistics over the last ``window`` cycles (``last`` over the whole log).

    Covers every section named in the log plus ``sections``, in that order
    of first appearance.
    """
    cycles = log.cycles
    n = len(cycles)
    recent = cycles[-window:] if window > 0 else ()
    names: dict[str, None] = {}
    for cycle in cycles:
        for name, _chars in cycle.sections:
            names.setdefault(name, None)
    for name in sections:
        names.setdefault(name, None)
    included: dict[str, int] = dict.fromkeys(names, 0)
    cited: dict[str, int] = dict.fromkeys(names, 0)
    chars: dict[str, int] = dict.fromkeys(names, 0)
    total_chars = 0
    for cycle in recent:
        for name, size in cycle.sections:
            included[name] += 1
            chars[name] += size
            total_chars += size
        for name in cycle.cited:
            cited[name] += 1
    total_cited = sum(cited.values())
    last: dict[str, CitationCycle] = {}
    for cycle in cycles:
        for name in cycle.cited:
            last[name] = cycle
    out: dict[str, SectionStats] = {}
    for name in names:
        inc, cit, size = included[name], cited[name], chars[name]
        size_share = size / total_chars if total_chars else None
        cite_share = cit / total_cited if total_cited else None
        roi: float | None = None
        if total_cited:
            if roi_mode == "per_kchar":
                mean = size / inc if inc else 0
                roi = cit / (mean / 1000) if mean else None
            elif size_share:
                roi = (cite_share or 0.0) / size_share
        last_cycle = last.get(name)
        out[name] = SectionStats(
            section=name,
            included_w=inc,
            cited_w=cit,
            chars_w=size,
            r=cit / inc if inc else None,
            last=last_cycle.index if last_cycle else None,
            age=n - last_cycle.index if last_cycle else None,
            last_timestamp=last_cycle.timestamp if last_cycle else None,
            size_share=size_share,
            cite_share=cite_share,
            roi=roi,
            category=roi_category(roi),
        )
    return out


def section_keywords(section: str, preset: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Preset keywords, then the lowercase name and its spaced form (those only if > 3 chars)."""
    words: list[str] = list((preset or {}).get(section, ()))
    low = section.lower()
    spaced = low.replace("-", " ").replace("_", " ").replace(":", " ")
    words.extend(w for w in (low, spaced) if len(w) > 3)
    return list(dict.fromkeys(words))


@dataclass(frozen=True, slots=True)
class Factor:
    name: str  # C | T | R | S
    label: str
    value: float
    weight: float
    product: float


@dataclass(frozen=True, slots=True)
class RoiConfig:
    threshold: float = THRESHOLD
    weights: tuple[float, float, float, float] = WEIGHTS
    window: int = WINDOW
    min_obs: int = MIN_OBS
    rate_full: float = RATE_FULL
    half_life: float = HALF_LIFE
    roi_mode: str = "share"
    keywords: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(KURO_KEYWORDS))
    protected: frozenset[str] = frozenset()
    trigger: str = ""
    stub_only_if_smaller: bool = True

    def __post_init__(self) -> None:
        if not _finite(self.threshold) or not 0 <= self.threshold <= 1:
            raise InputError(f"stub threshold must be a number from 0 to 1, not {self.threshold!r}")
        if len(self.weights) != 4 or not all(_finite(w) and w >= 0 for w in self.weights):
            raise InputError(f"ROI weights must be four non-negative numbers (C, T, R, S), not {self.weights!r}")
        if not isinstance(self.window, int) or self.window < 1:
            raise InputError(f"ROI window must be a positive whole number of cycles, not {self.window!r}")
        if not isinstance(self.min_obs, int) or self.min_obs < 0:
            raise InputError(f"ROI minimum observations must be a whole number ≥ 0, not {self.min_obs!r}")
        if not _finite(self.rate_full) or self.rate_full <= 0:
            raise InputError(f"ROI full citation rate must be a positive number, not {self.rate_full!r}")
        if not _finite(self.half_life) or self.half_life <= 0:
            raise InputError(f"ROI recency half-life must be a positive number, not {self.half_life!r}")
        if self.roi_mode not in ROI_MODES:
            raise InputError(f"unknown ROI mode {self.roi_mode!r}; choose one of: {', '.join(ROI_MODES)}")

    def constants(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "weights": dict(zip("CTRS", self.weights, strict=True)),
            "window": self.window,
            "min_obs": self.min_obs,
            "rate_full": self.rate_full,
            "half_life": self.half_life,
            "roi_mode": self.roi_mode,
            "protected": sorted(self.protected),
            "trigger": self.trigger,
        }


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class SectionScore:
    section: str
    score: float | None  # None: not scored (protected, insufficient data)
    decision: str  # load | stub
    status: str  # scored | protected | insufficient data
    factors: tuple[Factor, ...]  # C, T, R, S when scored
    keyword: str | None  # the keyword that made T = 1
    stats: SectionStats
    threshold: float
    n_cycles: int
    min_obs: int = MIN_OBS

    def summary_line(self) -> str:
        """``section topic-memory 0.249 < 0.300 -> stub (C .133 T 0 R .115 S 0; ROI 0.18 WASTE)``."""
        if self.score is None:
            if self.status == "protected":
                return f"section {self.section} not scored (protected) -> load"
            return (
                f"section {self.section} not scored (insufficient data: "
                f"{self.stats.included_w} inclusions, needs {self.min_obs}) -> load"
            )
        relation = ">=" if self.decision == "load" else "<"
        products = " ".join(f"{f.name} {_short(f.product)}" for f in self.factors)
        roi = "ROI n/a" if self.stats.roi is None else f"ROI {self.stats.roi:.2f} {self.stats.category}"
        return (
            f"section {self.section} {self.score:.3f} {relation} {self.threshold:.3f} -> {self.decision} "
            f"({products}; {roi})"
        )

    def explain(self) -> list[str]:
        """C.4.7: the four factors (value × weight = product), then the statistics behind them."""
        lines = [self.summary_line()]
        for f in self.factors:
            extra = f" (keyword {self.keyword!r})" if f.name == "T" and self.keyword else ""
            lines.append(f"{f.name} {f.label}: {f.value:.4f} × {f.weight:g} = {f.product:.4f}{extra}")
        s = self.stats
        lines.append(
            f"r {_opt(s.r)}, included {s.included_w}, cited {s.cited_w}, "
            f"age {'never cited' if s.age is None else f'{s.age} cycles'}, size share {_opt(s.size_share)}, "
            f"cite share {_opt(s.cite_share)}, ROI {_opt(s.roi)}, {s.category}"
        )
        return lines

    def rows(self) -> tuple[TermMatch, ...]:
        """The factor rows of ``ScoreResult.terms``; their contributions add up to ``score``."""
        return tuple(
            TermMatch(f.name, 0, f.product, f.weight, f"{FACTOR_NOTE} {f.label} {f.value:.4f}") for f in self.factors
        )


def _short(value: float) -> str:
    if value == 0:
        return "0"
    text = f"{value:.3f}"
    return text[1:] if text.startswith("0.") else text


def _opt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def score_section(
    section: str, hint: str, stats: SectionStats, n_cycles: int, config: RoiConfig | None = None
) -> SectionScore:
    """C.4.5: ``wC·C + wT·T + wR·R + wS·S`` (summed in that order); load when ≥ threshold."""
    config = config or RoiConfig()
    if section in config.protected:
        return SectionScore(
            section, None, "load", "protected", (), None, stats, config.threshold, n_cycles, config.min_obs
        )
    if stats.included_w < config.min_obs or stats.r is None:
        return SectionScore(
            section, None, "load", "insufficient data", (), None, stats, config.threshold, n_cycles, config.min_obs
        )
    c = min(1.0, stats.r / config.rate_full)
    keyword = next((k for k in section_keywords(section, config.keywords) if k in hint), None)
    t = 1.0 if keyword is not None else 0.0
    r = 0.5 ** ((n_cycles - stats.last) / config.half_life) if stats.last is not None else 0.0
    if stats.roi is None:
        s = 0.5
    elif stats.roi == 0:
        s = 0.0
    else:
        s = min(1.0, max(0.0, 0.5 + 0.5 * math.log2(stats.roi)))
    w_c, w_t, w_r, w_s = config.weights
    factors = (
        Factor("C", "citation rate", c, w_c, w_c * c),
        Factor("T", "trigger relevance", t, w_t, w_t * t),
        Factor("R", "recency", r, w_r, w_r * r),
        Factor("S", "size efficiency", s, w_s, w_s * s),
    )
    score = 0.0
    for factor in factors:
        score += factor.product
    decision = "load" if round(score, 9) >= config.threshold else "stub"
    return SectionScore(
        section, score, decision, "scored", factors, keyword, stats, config.threshold, n_cycles, config.min_obs
    )


# --- stubs (C.4.6) ----------------------------------------------------------------------------


def stub_line(section: str, chars: int, verdict: SectionScore) -> str:
    """``[ctxview stub] <section> | <chars> chars | last cited … | section score S < T``, one line."""
    stats = verdict.stats
    if stats.last is None:
        cited = "never cited"
    else:
        cited = f"last cited {verdict.n_cycles - stats.last} cycles ago"
        if stats.last_timestamp:
            cited += f" ({_one_line(stats.last_timestamp)})"
    score = verdict.score if verdict.score is not None else 0.0
    return (
        f"{STUB_PREFIX} {_one_line(section)} | {chars} chars | {cited} | "
        f"section score {score:.3f} < {verdict.threshold:.3f}"
    )


def _one_line(text: str) -> str:
    return collapse_js_whitespace(text.replace("\r", " ").replace("\n", " ")).strip(JS_WHITESPACE)


def stub_tagged_text(
    text: str, verdicts: Mapping[str, SectionScore], *, only_if_smaller: bool = False
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Replace the body of every tagged block whose section is stubbed; the tags stay.

    Returns the new text, the names of the stubbed blocks and the names of the
    blocks left alone because their stub would not be smaller than their body
    (only with ``only_if_smaller``), both in text order.  Only verdicts with
    ``decision == "stub"`` apply.
    """
    stubbed = {name: v for name, v in verdicts.items() if v.decision == "stub"}
    if not stubbed or not any(f"<{name}" in text for name in stubbed):
        return text, (), ()
    pieces: list[str] = []
    names: list[str] = []
    kept: list[str] = []
    pos = 0
    for block in scan_sections(text):
        verdict = stubbed.get(block.name)
        if verdict is None or block.body_start is None:
            continue
        line = stub_line(block.name, block.chars, verdict)
        if only_if_smaller and estimate_tokens(line) >= estimate_tokens(text[block.body_start : block.body_end]):
            kept.append(block.name)
            continue
        pieces.append(text[pos : block.body_start])
        pieces.append(line)
        pos = block.body_end
        names.append(block.name)
    if not names:
        return text, (), tuple(kept)
    pieces.append(text[pos:])
    return "".join(pieces), tuple(names), tuple(kept)


# --- the scorer --------------------------------------------------------------------------------


def doc_section(doc: ScoreDoc) -> str:
    """C.4.1 item group: summary:leaf|condensed, tool:<name>, user/assistant/system, focus-brief, live:<source>."""
    if doc.kind == "summary":
        return f"summary:{doc.summary_kind or 'leaf'}"
    if doc.kind == "focus":
        return "focus-brief"
    if doc.kind == "live":
        return f"live:{doc.live_source or 'unknown'}"
    if doc.tool_names:
        return f"tool:{doc.tool_names[0]}"
    role = doc.source_role or doc.role or "unknown"
    if role in ("tool", "toolResult"):
        return "tool:unknown"
    return role


def _stub_blocker(doc: ScoreDoc) -> str | None:
    if doc.kind == "focus":
        return "focus brief"
    if doc.kind == "live":
        return "live input"
    if doc.pool_index is None or doc.segment != "evictable":
        return "fresh tail" if doc.segment in ("fresh-tail", "evictable") else doc.segment
    if doc.has_tool_calls:
        return "assistant message with tool calls (keeps tool pairing intact)"
    return None


@dataclass(frozen=True, slots=True)
class RoiScorer:
    tokenizer: Tokenizer = LCM
    citations: CitationLog = field(default_factory=CitationLog)
    config: RoiConfig = field(default_factory=RoiConfig)
    name: str = "section-roi"

    def prepare(self, docs: Sequence[ScoreDoc], prompt: str | None, *, cache: TextCache | None = None) -> PreparedRoi:
        cache = cache or TextCache()
        groups: dict[str, list[ScoreDoc]] = {}
        for doc in docs:
            groups.setdefault(doc_section(doc), []).append(doc)
        stats = section_stats(self.citations, groups, window=self.config.window, roi_mode=self.config.roi_mode)
        hint = self.tokenizer.fold(f"{prompt if isinstance(prompt, str) else ''} {self.config.trigger}")
        n = self.citations.n_cycles
        verdicts = {name: score_section(name, hint, st, n, self.config) for name, st in stats.items()}
        # table order: the items' sections first (in item order), then the log's other sections
        order = list(groups) + [name for name in stats if name not in groups]
        return PreparedRoi(
            scorer=self,
            tokenizer=self.tokenizer,
            hint=hint,
            base_terms=prompt_terms(prompt, self.tokenizer),
            verdicts={name: verdicts[name] for name in order},
            groups={name: tuple(members) for name, members in groups.items()},
            cache=cache,
        )


@dataclass(frozen=True, slots=True)
class PreparedRoi:
    scorer: RoiScorer
    tokenizer: Tokenizer
    hint: str
    base_terms: tuple[str, ...]
    verdicts: dict[str, SectionScore]
    groups: dict[str, tuple[ScoreDoc, ...]]
    cache: TextCache = field(default_factory=TextCache, compare=False)

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def ranks(self) -> bool:
        """Section ROI only stubs; selection is the default one (prompt-aware when A can search)."""
        return bool(self.base_terms)

    @property
    def config(self) -> RoiConfig:
        return self.scorer.config

    def verdict(self, section: str) -> SectionScore:
        found = self.verdicts.get(section)
        if found is not None:
            return found
        empty = section_stats(CitationLog(), (section,))[section]
        return score_section(section, self.hint, empty, self.scorer.citations.n_cycles, self.config)

    def stub_text_for(self, text: str) -> str | None:
        """The text with stubbed tagged blocks replaced, or None; for each text block of list content."""
        new_text, names, _kept = stub_tagged_text(text, self.verdicts, only_if_smaller=self.config.stub_only_if_smaller)
        return new_text if names else None

    def score(self, doc: ScoreDoc) -> ScoreResult:
        section = doc_section(doc)
        verdict = self.verdict(section)
        reasons = [verdict.summary_line()]
        blocker = _stub_blocker(doc)
        stub: str | None = None
        if verdict.decision == "stub":
            if blocker is not None:
                reasons.append(f"stub skipped: {blocker}")
            else:
                line = stub_line(section, utf16_len(doc.text), verdict)
                if self.config.stub_only_if_smaller and estimate_tokens(line) >= doc.tokens:
                    reasons.append("stub skipped: the stub would not be smaller than the item")
                else:
                    stub = line
        if stub is None:
            only_if_smaller = self.config.stub_only_if_smaller
            new_text, names, kept = stub_tagged_text(doc.text, self.verdicts, only_if_smaller=only_if_smaller)
            if names and blocker is not None:
                reasons.append(f"stub skipped for tagged {_names(names)}: {blocker}")
            elif names:
                stub = new_text
                reasons.append(f"tagged sections stubbed: {_names(names)}")
            if kept:
                reasons.append(f"stub skipped for tagged {_names(kept)}: the stub would not be smaller than the block")
        scored_text = stub if stub is not None else doc.text
        if self.base_terms:
            if stub is None:
                counts, total = self.cache.term_counts(self.tokenizer, scored_text)
            else:  # stub texts vary with the section score, so they stay out of the session cache
                terms = self.tokenizer.tokenize(scored_text)
                counts, total = _count(terms), len(terms)
            base, _rows = bm25_counts(counts, total, self.base_terms)
        else:
            base = 0.0
        return ScoreResult(
            score=verdict.score,
            terms=verdict.rows(),
            label=verdict.stats.category,
            reason="; ".join(reasons),
            sort_key=() if doc.pool_index is None else (-base, float(-doc.pool_index)),
            base=base,
            section=section,
            stub=stub,
            stub_tokens=estimate_tokens(stub) if stub is not None else None,
        )

    def table_rows(self) -> list[dict[str, Any]]:
        """One plain dict per section for the ROI table (WASTE / LOW / MED+)."""
        rows: list[dict[str, Any]] = []
        for name, verdict in self.verdicts.items():
            s = verdict.stats
            members = self.groups.get(name, ())
            factors = {f.name: f.value for f in verdict.factors}
            rows.append(
                {
                    "section": name,
                    "category": s.category,
                    "score": verdict.score,
                    "decision": verdict.decision,
                    "status": verdict.status,
                    "threshold": verdict.threshold,
                    "C": factors.get("C"),
                    "T": factors.get("T"),
                    "R": factors.get("R"),
                    "S": factors.get("S"),
                    "keyword": verdict.keyword,
                    "included": s.included_w,
                    "cited": s.cited_w,
                    "r": s.r,
                    "last_cited": s.last,
                    "age": s.age,
                    "last_timestamp": s.last_timestamp,
                    "chars": s.chars_w,
                    "size_share": s.size_share,
                    "cite_share": s.cite_share,
                    "roi": s.roi,
                    "items": len(members),
                    "tokens": sum(d.tokens for d in members),
                    "reason": verdict.summary_line(),
                }
            )
        return rows

    def stats(self) -> dict[str, Any]:
        log = self.scorer.citations
        return {
            "scorer": self.name,
            "tokenizer": self.tokenizer.name,
            "source": log.source,
            "cycles": log.n_cycles,
            "malformed": log.malformed,
            "ignored_citations": log.ignored_citations,
            "problems": list(log.problems[:20]),
            "hint": self.hint,
            "constants": self.config.constants(),
            "searchable": bool(self.base_terms),
            "sections": self.table_rows(),
        }


def _names(names: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(names))


def _count(terms: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return counts


def make_roi(
    tokenizer: str | Tokenizer = "lcm",
    *,
    citations: CitationLog | str | os.PathLike[str] | None = None,
    threshold: float = THRESHOLD,
    weights: Sequence[float] = WEIGHTS,
    window: int = WINDOW,
    min_obs: int = MIN_OBS,
    rate_full: float = RATE_FULL,
    half_life: float = HALF_LIFE,
    roi_mode: str = "share",
    keywords: str | Mapping[str, Sequence[str]] | None = "kuro",
    protected: str | Iterable[str] = (),
    trigger: str = "",
    stub_only_if_smaller: bool = True,
) -> RoiScorer:
    """Build a section-ROI scorer; a citations path is read here, never in ``score()``."""
    if citations is None:
        log = CitationLog()
    elif isinstance(citations, CitationLog):
        log = citations
    else:
        log = read_citation_log(citations)
    if keywords == "kuro":
        keyword_map: dict[str, tuple[str, ...]] = dict(KURO_KEYWORDS)
    elif keywords is None:
        keyword_map = {}
    elif isinstance(keywords, str):
        raise InputError(f"unknown keyword preset {keywords!r}; use 'kuro', none, or a mapping")
    else:
        keyword_map = {str(k): tuple(str(w).lower() for w in v) for k, v in keywords.items()}
    if protected == "kuro":
        protected_set = frozenset(KURO_PROTECTED)
    elif isinstance(protected, str):
        raise InputError(f"unknown protected-sections preset {protected!r}; use 'kuro' or a list of names")
    else:
        protected_set = frozenset(protected)
    config = RoiConfig(
        threshold=threshold,
        weights=tuple(weights),  # type: ignore[arg-type]
        window=window,
        min_obs=min_obs,
        rate_full=rate_full,
        half_life=half_life,
        roi_mode=roi_mode,
        keywords=keyword_map,
        protected=protected_set,
        trigger=trigger,
        stub_only_if_smaller=stub_only_if_smaller,
    )
    return RoiScorer(get_tokenizer(tokenizer), log, config)
