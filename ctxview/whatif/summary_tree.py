"""The conversation's summaries as a tree: condensed summaries over leaves over source messages.

``read_summary_tree`` reads every summary of a conversation (not only those in
the context), its sources (``summary_parents``: the summaries condensed into
it; ``summary_messages``: the messages a leaf covers) and the source messages'
sizes.  Each node knows how many raw tokens it stands for (its source messages,
reached through its children, each counted once), so its compression ratio is
``covered / tokens``.  ``with_outcomes`` adds what a run did with each summary:
in the context or not, and kept or evicted at these settings.  Roots are the
summaries nothing condenses further, newest context position first.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.fallback_summary import FALLBACK_DIRECTIVE_SUMMARY_MARKER, FALLBACK_SUMMARY_MARKER
from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import DatabaseError
from ctxview.model import Trace, column, outcome_text

SNIPPET = 160  # characters of a source message kept for the tree

# content markers of summaries the engine wrote without a summary model, or cut to size
_BADGES: tuple[tuple[str, str], ...] = (
    (FALLBACK_SUMMARY_MARKER, "fallback"),
    (FALLBACK_DIRECTIVE_SUMMARY_MARKER, "fallback"),
    ("[Truncated from ", "truncated"),
    ("[Capped from ", "capped"),
    ("[Capped to ~", "capped"),
    ("\n[Capped]", "capped"),
)


def badges_of(content: str) -> tuple[str, ...]:
    """``fallback`` (the emergency summarizer's marker), ``truncated``, ``capped``: each once, in that order."""
    found: list[str] = []
    for marker, badge in _BADGES:
        if marker in content and badge not in found:
            found.append(badge)
    return tuple(found)


@dataclass(slots=True)
class SourceMessage:
    message_id: int
    seq: int | None
    role: str
    tokens: int  # the stored token_count, or an estimate from the text's length when there is none
    created_at: str | None
    snippet: str


@dataclass(slots=True)
class SummaryNode:
    summary_id: str
    kind: str
    depth: int
    tokens: int
    content: str
    earliest_at: str | None
    latest_at: str | None
    children: list[str] = field(default_factory=list)  # summaries condensed into this one, in stored order
    message_ids: list[int] = field(default_factory=list)  # messages a leaf covers, in stored order
    covered_tokens: int = 0  # raw tokens of every source message under it, each counted once
    covered_messages: int = 0
    badges: tuple[str, ...] = ()
    ordinal: int | None = None  # its context position, when it is in the context
    outcome: str | None = None  # what the run did with it (None: not in the context, or no run)
    reason: str = ""

    @property
    def ratio(self) -> float | None:
        """Covered tokens per summary token (None when either is zero)."""
        return self.covered_tokens / self.tokens if self.tokens and self.covered_tokens else None

    @property
    def in_context(self) -> bool:
        return self.ordinal is not None


@dataclass(slots=True)
class SummaryTree:
    conversation_id: int
    nodes: dict[str, SummaryNode]
    messages: dict[int, SourceMessage]
    roots: list[str]  # summaries no other summary condenses

    def walk(self) -> list[tuple[int, SummaryNode]]:
        """Every summary under the roots, depth first, with its level (a summary met twice is listed once)."""
        seen: set[str] = set()
        order: list[tuple[int, SummaryNode]] = []

        def visit(summary_id: str, level: int) -> None:
            if summary_id in seen or summary_id not in self.nodes:
                return
            seen.add(summary_id)
            node = self.nodes[summary_id]
            order.append((level, node))
            for child in node.children:
                visit(child, level + 1)

        for root in self.roots:
            visit(root, 0)
        return order


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def read_summary_tree(conn: sqlite3.Connection, conversation_id: int) -> SummaryTree:
    """Every summary of one conversation with its sources, from a read-only connection."""
    try:
        return _read(conn, conversation_id)
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot read the summaries: {exc}") from exc


def _read(conn: sqlite3.Connection, cid: int) -> SummaryTree:
    have = _columns(conn, "summaries")
    optional = ", ".join(f"s.{c}" if c in have else "NULL" for c in ("token_count", "earliest_at", "latest_at"))
    nodes: dict[str, SummaryNode] = {}
    for sid, kind, depth, content, tokens, earliest, latest in conn.execute(
        f"SELECT s.summary_id, s.kind, s.depth, s.content, {optional} FROM summaries s"
        " WHERE s.conversation_id = ? ORDER BY s.rowid",
        (cid,),
    ):
        text = content if isinstance(content, str) else ""
        nodes[str(sid)] = SummaryNode(
            summary_id=str(sid),
            kind=str(kind or ""),
            depth=depth if isinstance(depth, int) else 0,
            tokens=tokens if isinstance(tokens, int) and tokens >= 0 else estimate_tokens(text),
            content=text,
            earliest_at=earliest if isinstance(earliest, str) else None,
            latest_at=latest if isinstance(latest, str) else None,
            badges=badges_of(text),
        )
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    condensed: set[str] = set()
    if "summary_parents" in tables:
        for sid, source in conn.execute(
            "SELECT sp.summary_id, sp.parent_summary_id FROM summary_parents sp"
            " JOIN summaries s ON s.summary_id = sp.summary_id WHERE s.conversation_id = ?"
            " ORDER BY sp.summary_id, sp.ordinal",
            (cid,),
        ):
            node = nodes.get(str(sid))
            if node is not None and str(source) in nodes and str(source) != node.summary_id:
                node.children.append(str(source))
                condensed.add(str(source))
    messages: dict[int, SourceMessage] = {}
    if "summary_messages" in tables:
        for sid, mid in conn.execute(
            "SELECT sm.summary_id, sm.message_id FROM summary_messages sm"
            " JOIN summaries s ON s.summary_id = sm.summary_id WHERE s.conversation_id = ?"
            " ORDER BY sm.summary_id, sm.ordinal",
            (cid,),
        ):
            node = nodes.get(str(sid))
            if node is not None and isinstance(mid, int):
                node.message_ids.append(mid)
        token_column = "m.token_count" if "token_count" in _columns(conn, "messages") else "NULL"
        created_column = "m.created_at" if "created_at" in _columns(conn, "messages") else "NULL"
        for mid, seq, role, tokens, created, length, snippet in conn.execute(
            f"SELECT m.message_id, m.seq, m.role, {token_column}, {created_column}, length(m.content),"
            f" substr(m.content, 1, {SNIPPET}) FROM messages m WHERE m.message_id IN"
            " (SELECT sm.message_id FROM summary_messages sm JOIN summaries s ON s.summary_id = sm.summary_id"
            " WHERE s.conversation_id = ?)",
            (cid,),
        ):
            if not isinstance(mid, int):
                continue
            text = snippet if isinstance(snippet, str) else ""
            size = tokens if isinstance(tokens, int) and tokens >= 0 else -(-(length or 0) // 4)
            messages[mid] = SourceMessage(
                mid, seq if isinstance(seq, int) else None, str(role or ""), size,
                created if isinstance(created, str) else None, text,
            )
    tree = SummaryTree(cid, nodes, messages, [])
    _cover(tree)
    roots = [sid for sid in nodes if sid not in condensed]
    roots.sort(key=lambda sid: (nodes[sid].earliest_at or "", -nodes[sid].depth, sid))
    tree.roots = roots
    return tree


def _cover(tree: SummaryTree) -> None:
    """Covered tokens and messages of every node (each source message once, cycles cut)."""
    memo: dict[str, frozenset[int]] = {}

    def sources(sid: str, path: frozenset[str]) -> frozenset[int]:
        if sid in memo:
            return memo[sid]
        node = tree.nodes[sid]
        found = set(mid for mid in node.message_ids if mid in tree.messages)
        for child in node.children:
            if child not in path:
                found |= sources(child, path | {sid})
        memo[sid] = frozenset(found)
        return memo[sid]

    for sid, node in tree.nodes.items():
        covered = sources(sid, frozenset())
        node.covered_messages = len(covered)
        node.covered_tokens = sum(tree.messages[mid].tokens for mid in covered)


def with_outcomes(tree: SummaryTree, trace: Trace | None) -> SummaryTree:
    """Mark each summary with its context position and what the run did with it."""
    for node in tree.nodes.values():
        node.ordinal = node.outcome = None
        node.reason = ""
    if trace is None:
        return tree
    decisions = trace.decisions
    for index, sid in enumerate(column(decisions, "summary_id")):
        node = tree.nodes.get(sid) if sid is not None else None
        if node is None or node.ordinal is not None:
            continue
        decision = decisions[index]
        if decision.ordinal is None:
            continue
        node.ordinal = decision.ordinal
        node.outcome = decision.outcome
        node.reason = decision.reason
    # a summary not in the context itself but condensed into one that is: say so in the tree, not as an outcome
    return tree


def node_state(node: SummaryNode) -> str:
    """``kept``, ``evicted``, ``not in context`` …: what the tree shows after the sizes."""
    if node.ordinal is None:
        return "not in context"
    if node.outcome is None:
        return f"in context (item {node.ordinal})"
    return f"item {node.ordinal}: {outcome_text(node.outcome)}"


def ratio_text(node: SummaryNode) -> str:
    return f"{node.ratio:.1f}×" if node.ratio is not None else "—"


def time_range(node: SummaryNode) -> str:
    first, last = _short(node.earliest_at), _short(node.latest_at)
    if not first and not last:
        return "no time range"
    return first if first == last or not last else f"{first} – {last}" if first else last


def _short(stamp: str | None) -> str:
    if not stamp:
        return ""
    return stamp.replace("T", " ")[:16]


def node_line(node: SummaryNode) -> str:
    """One line per summary: kind, depth, sizes, compression, time range, state, badges."""
    badges = "".join(f" [{b}]" for b in node.badges)
    return (
        f"{node.kind} d{node.depth} {node.summary_id}  {node.tokens:,} tok ← {node.covered_tokens:,} tok "
        f"in {node.covered_messages:,} msgs ({ratio_text(node)})  {time_range(node)}  {node_state(node)}{badges}"
    )


def message_line(message: SourceMessage) -> str:
    text = " ".join(message.snippet.split())
    seq = f"seq {message.seq} " if message.seq is not None else ""
    return f"msg:{message.message_id} {seq}{message.role} {message.tokens:,} tok  {text}"


def tree_lines(tree: SummaryTree, *, messages: bool = False, width: int = 160) -> list[str]:
    """The tree drawn with guides, for the terminal (``messages``: list each leaf's source messages)."""
    lines: list[str] = []
    seen: set[str] = set()

    def visit(sid: str, prefix: str, last: bool, top: bool) -> None:
        node = tree.nodes[sid]
        branch = "" if top else ("└─ " if last else "├─ ")
        repeat = sid in seen
        lines.append(_clip(prefix + branch + node_line(node) + (" (shown above)" if repeat else ""), width))
        if repeat:
            return
        seen.add(sid)
        inner = prefix + ("" if top else ("   " if last else "│  "))
        children: list[tuple[str, str | int]] = [("s", c) for c in node.children if c in tree.nodes]
        if messages:
            children += [("m", m) for m in node.message_ids if m in tree.messages]
        for index, (kind, ref) in enumerate(children):
            end = index == len(children) - 1
            if kind == "s":
                visit(str(ref), inner, end, False)
            else:
                message = tree.messages[int(ref)]
                lines.append(_clip(inner + ("└─ " if end else "├─ ") + message_line(message), width))

    for root in tree.roots:
        visit(root, "", True, True)
    return lines


def tree_to_json(tree: SummaryTree, *, messages: bool = True) -> dict[str, Any]:
    """The tree as data: every summary once (children by id), the roots, and the source messages."""
    def node_json(node: SummaryNode) -> dict[str, Any]:
        return {
            "summaryId": node.summary_id,
            "kind": node.kind,
            "depth": node.depth,
            "tokens": node.tokens,
            "coveredTokens": node.covered_tokens,
            "coveredMessages": node.covered_messages,
            "compressionRatio": round(node.ratio, 4) if node.ratio is not None else None,
            "earliestAt": node.earliest_at,
            "latestAt": node.latest_at,
            "children": list(node.children),
            "messageIds": list(node.message_ids),
            "badges": list(node.badges),
            "inContext": node.in_context,
            "ordinal": node.ordinal,
            "outcome": node.outcome,
            "reason": node.reason,
        }

    data: dict[str, Any] = {
        "conversationId": tree.conversation_id,
        "roots": list(tree.roots),
        "summaries": [node_json(node) for node in tree.nodes.values()],
    }
    if messages:
        data["messages"] = [
            {"messageId": m.message_id, "seq": m.seq, "role": m.role, "tokens": m.tokens, "createdAt": m.created_at}
            for m in tree.messages.values()
        ]
    return data


def _clip(text: str, width: int) -> str:
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= width else clean[: width - 1] + "…"
