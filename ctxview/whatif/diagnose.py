"""The engine's overflow diagnostics (spec §8) as a person reads them.

The assembler records them in its debug record on every run; ``diagnostics_of``
takes that object from a trace as it is (``ctxview diagnose --json`` prints it,
the same object as ``stages.assembler.debug.overflowDiagnostics`` of
``assemble --format json``), and ``diagnostics_lines`` lays it out: the raw
versus summary split, the top contributors with what happened to each at these
settings, and the duplicate clusters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxview.model import Decision, Trace, column, count_text, outcome_text


def diagnostics_of(trace: Trace) -> dict[str, Any] | None:
    """``overflowDiagnostics`` of the trace's assembler record; None when the assembler wrote none (no items)."""
    assembler = trace.stage_records().get("assembler")
    if not isinstance(assembler, dict):
        return None
    debug = assembler.get("debug")
    if not isinstance(debug, dict):
        return None
    found = debug.get("overflowDiagnostics")
    return found if isinstance(found, dict) else None


@dataclass(frozen=True, slots=True)
class Contributor:
    """One top contributor with what happened to it at these settings (the §8 row says only ``selected``)."""

    row: dict[str, Any]
    decision: Decision | None

    @property
    def key(self) -> str:
        return f"o:{self.row.get('ordinal')}"

    @property
    def outcome(self) -> str:
        return outcome_text(self.decision.outcome) if self.decision is not None else "—"

    @property
    def name(self) -> str:
        row = self.row
        if "summaryId" in row:
            return f"{row.get('summaryKind', 'summary')} d{row.get('summaryDepth', '?')} {row['summaryId']}"
        if "summaryId" not in row and "messageId" not in row:
            return "focus brief"
        return f"{row.get('role', 'message')} msg:{row['messageId']}" + (f" seq {row['seq']}" if "seq" in row else "")


def contributors(trace: Trace, rows: list[dict[str, Any]]) -> list[Contributor]:
    """The rows with the trace's decision of each ordinal."""
    ordinals = column(trace.decisions, "ordinal")
    position = {ordinal: index for index, ordinal in enumerate(ordinals) if ordinal is not None}
    found: list[Contributor] = []
    for row in rows:
        index = position.get(row.get("ordinal"))
        found.append(Contributor(row, trace.decisions[index] if index is not None else None))
    return found


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "—"


def split_lines(diag: dict[str, Any]) -> list[str]:
    """Budget, totals and the raw versus summary split."""
    total = int(diag.get("totalContextTokens", 0))
    raw, summaries = int(diag.get("rawMessageTokens", 0)), int(diag.get("summaryTokens", 0))
    budget = int(diag.get("tokenBudget", 0))
    over = f", {total - budget:,} over the budget" if total > budget else ""
    return [
        f"budget {budget:,} tokens; the context holds {count_text(int(diag.get('totalContextItems', 0)), 'item')} "
        f"of {total:,} tokens ({_share(total, budget)} of the budget{over})",
        f"  raw messages  {raw:>9,} tokens  {_share(raw, total):>5}  "
        f"{diag.get('rawMessageCount', 0):>6,} items, {diag.get('selectedRawMessageCount', 0):,} selected",
        f"  summaries     {summaries:>9,} tokens  {_share(summaries, total):>5}  "
        f"{diag.get('summaryCount', 0):>6,} items, {diag.get('selectedSummaryCount', 0):,} selected",
    ]


def _clusters(title: str, rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return [f"{title}: none"]
    lines = [f"{title}:", f"  {'key':<28} {'count':>5} {'tokens':>8}  ordinals"]
    for row in rows:
        ordinals = ", ".join(str(o) for o in row.get("ordinals", []))
        more = "…" if int(row.get("count", 0)) > len(row.get("ordinals", [])) else ""
        key, count, tokens = row.get("key"), row.get("count", 0), row.get("tokens", 0)
        lines.append(f"  {key!s:<28} {count:>5} {tokens:>8,}  {ordinals}{more}")
    return lines


def _contributor_lines(title: str, found: list[Contributor]) -> list[str]:
    if not found:
        return [f"{title}: none"]
    lines = [f"{title}:", f"  {'item':>6} {'tokens':>8}  {'selected':<8}  {'now':<21} what"]
    for c in found:
        selected = "yes" if c.row.get("selected") else "no"
        ordinal, tokens = c.row.get("ordinal", "?"), c.row.get("tokens", 0)
        lines.append(f"  {ordinal:>6} {tokens:>8,}  {selected:<8}  {c.outcome:<21} {c.name}")
    return lines


def diagnostics_lines(trace: Trace, diag: dict[str, Any]) -> list[str]:
    """The whole readable report (``ctxview diagnose``)."""
    lines = split_lines(diag)
    lines.append("")
    lines += _contributor_lines("top message contributors", contributors(trace, diag.get("topMessageContributors", [])))
    lines.append("")
    lines += _contributor_lines("top summary contributors", contributors(trace, diag.get("topSummaryContributors", [])))
    lines.append("")
    lines += _clusters("duplicate references (one message or summary in the context more than once)",
                       diag.get("duplicateRefClusters", []))
    lines.append("")
    lines += _clusters("duplicate message text (identical content under different messages)",
                       diag.get("duplicateMessageClusters", []))
    return lines


def diagnostics_report(trace: Trace, width: int = 160) -> str:
    diag = diagnostics_of(trace)
    if diag is None:
        return "no diagnostics: the conversation has no context items, so the assembler recorded none"
    return "\n".join(_clip(line, width) for line in diagnostics_lines(trace, diag))


def _clip(text: str, width: int) -> str:
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= width else clean[: width - 1] + "…"
