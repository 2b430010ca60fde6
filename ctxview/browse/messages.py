"""Every message of a conversation, paged, each marked by where it stands in the stored context.

A message is *in the context* when a ``context_items`` row names it, *summarised* when a
summary in the context covers it (``summary_messages`` of that summary or of any summary
condensed into it through ``summary_parents``), and otherwise *not in the context*.
Coverage is computed once, top-down from the context's summaries (one recursive query);
the messages themselves are read a page at a time (``LIMIT``/``OFFSET`` on the
``(conversation_id, seq)`` index), so a 100,000-message conversation never sits in memory.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Literal

from ctxview.browse.schema import SchemaProbe, as_int, as_text, plural, verb

Mark = Literal["context", "summarised", "not-in-context"]
PAGE_SIZE = 200
SCAN_SIZE = 5_000  # message ids read per query when looking for the next change of mark
PREVIEW_CHARS = 240

MARK_WORDS: dict[str, str] = {
    "context": "in the context",
    "summarised": "summarised",
    "not-in-context": "not in the context",
}


@dataclass(frozen=True, slots=True)
class Cover:
    """The context summary that covers a message (the one the model sees), and through which leaf."""

    summary_id: str  # the summary that is a context item
    ordinal: int  # its context_items ordinal (the inspector's key is ``o:<ordinal>``)


@dataclass(frozen=True, slots=True)
class BrowsedMessage:
    position: int  # 0-based row in seq order
    message_id: int
    seq: int | None
    role: str
    preview: str  # the first PREVIEW_CHARS characters of ``content``, on one line
    token_count: int | None
    created_at: str | None
    mark: Mark
    context_ordinal: int | None  # its own context item (mark "context")
    cover: Cover | None  # the context summary covering it (mark "summarised")
    direct_summaries: tuple[str, ...]  # summaries that list it in summary_messages (any, in or out of context)

    @property
    def mark_text(self) -> str:
        if self.mark == "context":
            return f"in the context (item {self.context_ordinal})"
        if self.mark == "summarised" and self.cover is not None:
            return f"summarised into {self.cover.summary_id} (item {self.cover.ordinal})"
        if self.direct_summaries:
            return f"not in the context (summarised into {', '.join(self.direct_summaries)}, itself not in the context)"
        return "not in the context"


@dataclass(frozen=True, slots=True)
class SummaryText:
    summary_id: str
    kind: str
    depth: int | None
    token_count: int | None
    content: str
    context_ordinal: int | None  # where it is a context item, else None
    source_messages: int  # summary_messages rows
    missing_sources: int  # of them, rows whose message does not exist
    parents: tuple[str, ...]  # summaries condensed into it (summary_parents)


@dataclass(slots=True)
class MessageBrowser:
    """A conversation's messages for a paged view; build with ``open_browser``."""

    probe: SchemaProbe
    conversation_id: int
    count: int
    in_context: dict[int, int]  # message_id → its context ordinal
    covered: dict[int, Cover]  # message_id → the context summary covering it
    mark_counts: dict[str, int]
    notes: list[str] = field(default_factory=list)
    _pages: dict[int, list[BrowsedMessage]] = field(default_factory=dict)

    def _col(self, column: str) -> str:
        return self.probe.col("messages", column, "m")

    def page(self, offset: int, limit: int = PAGE_SIZE) -> list[BrowsedMessage]:
        """Rows ``offset`` … ``offset + limit - 1`` in (seq, message_id) order."""
        rows = self.probe.query(
            f"SELECT m.message_id, m.seq, m.role, substr(m.content, 1, {PREVIEW_CHARS}),"
            f" {self._col('token_count')}, {self._col('created_at')}"
            " FROM messages m WHERE m.conversation_id = ? ORDER BY m.seq, m.message_id LIMIT ? OFFSET ?",
            (self.conversation_id, limit, offset),
        )
        ids = [as_int(r[0]) for r in rows]
        direct: dict[int, list[str]] = {}
        wanted = [i for i in ids if i is not None]
        if wanted:
            marks = ",".join("?" * len(wanted))
            for mid, sid in self.probe.query(
                f"SELECT message_id, summary_id FROM summary_messages WHERE message_id IN ({marks})"
                " ORDER BY message_id, summary_id",
                wanted,
            ):
                direct.setdefault(mid, []).append(as_text(sid) or "")
        blank = [
            mid for row, mid in zip(rows, ids, strict=True) if mid is not None and not (as_text(row[3]) or "").strip()
        ]
        from_parts = self._part_previews(blank)
        found: list[BrowsedMessage] = []
        for index, (row, mid) in enumerate(zip(rows, ids, strict=True)):
            if mid is None:
                continue
            ordinal = self.in_context.get(mid)
            cover = self.covered.get(mid) if ordinal is None else None
            mark: Mark = "context" if ordinal is not None else "summarised" if cover is not None else "not-in-context"
            found.append(
                BrowsedMessage(
                    position=offset + index,
                    message_id=mid,
                    seq=as_int(row[1]),
                    role=as_text(row[2]) or "",
                    preview=one_line(as_text(row[3]) or "") or from_parts.get(mid, ""),
                    token_count=as_int(row[4]),
                    created_at=as_text(row[5]),
                    mark=mark,
                    context_ordinal=ordinal,
                    cover=cover,
                    direct_summaries=tuple(direct.get(mid, ())),
                )
            )
        return found

    def _part_previews(self, message_ids: list[int]) -> dict[int, str]:
        """A line for messages whose ``content`` is blank (a tool call alone), made from their parts."""
        if not message_ids or not self.probe.has("message_parts", "message_id"):
            return {}
        t = "message_parts"
        marks = ",".join("?" * len(message_ids))
        pieces: dict[int, list[str]] = {}
        for mid, ptype, name, text in self.probe.query(
            f"SELECT message_id, part_type, {self.probe.col(t, 'tool_name')},"
            f" substr({self.probe.col(t, 'text_content')}, 1, {PREVIEW_CHARS})"
            f" FROM message_parts WHERE message_id IN ({marks}) ORDER BY message_id, ordinal",
            message_ids,
        ):
            pieces.setdefault(mid, []).append(part_line(as_text(ptype) or "", as_text(name), as_text(text)))
        return {mid: one_line(" ".join(p for p in parts if p))[:PREVIEW_CHARS] for mid, parts in pieces.items()}

    def row(self, position: int) -> BrowsedMessage | None:
        """One row by position, through a cache of whole pages (what a virtual list asks for per line)."""
        if not 0 <= position < self.count:
            return None
        start = position - position % PAGE_SIZE
        page = self._pages.get(start)
        if page is None:
            if len(self._pages) > 64:
                self._pages.clear()
            page = self._pages[start] = self.page(start)
        index = position - start
        return page[index] if index < len(page) else None

    def position_of(self, message_id: int) -> int | None:
        """The row of a message (its place in seq order), or None when it is not in this conversation."""
        rows = self.probe.query(
            "SELECT seq FROM messages WHERE message_id = ? AND conversation_id = ?", (message_id, self.conversation_id)
        )
        if not rows:
            return None
        seq = rows[0][0]
        before = self.probe.query(
            "SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND (seq < ? OR (seq = ? AND message_id < ?))",
            (self.conversation_id, seq, seq, message_id),
        )
        return int(before[0][0])

    def mark_of(self, message_id: int) -> Mark:
        if message_id in self.in_context:
            return "context"
        return "summarised" if message_id in self.covered else "not-in-context"

    def next_with_mark(self, position: int, direction: int, mark: Mark | None = None) -> int | None:
        """The nearest row after (direction 1) or before (-1) ``position`` whose mark differs from its own
        (or equals ``mark`` when given): one jump over a long run of same-marked messages.

        It walks message ids only, SCAN_SIZE at a time from the row's (seq, message_id) on, and builds no rows.
        """
        here = self.row(position)
        if here is None or here.seq is None:
            return None
        order = "ASC" if direction > 0 else "DESC"
        compare = ">" if direction > 0 else "<"
        boundary: tuple[int, int] = (here.seq, here.message_id)
        probe = position
        while True:
            rows = self.probe.query(
                f"SELECT message_id, seq FROM messages WHERE conversation_id = ? AND (seq, message_id) {compare} (?, ?)"
                f" ORDER BY seq {order}, message_id {order} LIMIT ?",
                (self.conversation_id, *boundary, SCAN_SIZE),
            )
            for mid, _seq in rows:
                probe += direction
                found = self.mark_of(mid)
                if (found == mark) if mark is not None else (found != here.mark):
                    return probe
            if len(rows) < SCAN_SIZE:
                return None
            boundary = (rows[-1][1], rows[-1][0])

    def message_text(self, message_id: int) -> str:
        """The stored ``content``; for a message whose content is blank, its parts (text, tool calls, results)."""
        rows = self.probe.query("SELECT content FROM messages WHERE message_id = ?", (message_id,))
        content = (as_text(rows[0][0]) or "") if rows else ""
        if content.strip() or not self.probe.has("message_parts", "message_id"):
            return content
        t = "message_parts"
        lines: list[str] = []
        for ptype, name, text, tool_input, tool_output in self.probe.query(
            f"SELECT part_type, {self.probe.col(t, 'tool_name')}, {self.probe.col(t, 'text_content')},"
            f" {self.probe.col(t, 'tool_input')}, {self.probe.col(t, 'tool_output')}"
            " FROM message_parts WHERE message_id = ? ORDER BY ordinal",
            (message_id,),
        ):
            head = part_line(as_text(ptype) or "", as_text(name), None)
            body = as_text(text) or as_text(tool_input) or as_text(tool_output) or ""
            lines.append(f"{head} {body}".strip() if head else body)
        return "\n".join(lines)

    def summary(self, summary_id: str) -> SummaryText | None:
        """A summary's text and where it stands; None when no such row exists."""
        t = "summaries"
        rows = self.probe.query(
            f"SELECT kind, {self.probe.col(t, 'depth')}, {self.probe.col(t, 'token_count')}, content"
            " FROM summaries WHERE summary_id = ?",
            (summary_id,),
        )
        if not rows:
            return None
        kind, depth, tokens, content = rows[0]
        ordinal_rows = self.probe.query(
            "SELECT MIN(ordinal) FROM context_items WHERE conversation_id = ? AND summary_id = ?",
            (self.conversation_id, summary_id),
        )
        sources = self.probe.query(
            "SELECT COUNT(*), SUM(CASE WHEN m.message_id IS NULL THEN 1 ELSE 0 END) FROM summary_messages sm"
            " LEFT JOIN messages m ON m.message_id = sm.message_id WHERE sm.summary_id = ?",
            (summary_id,),
        )
        parents = self.probe.query(
            "SELECT parent_summary_id FROM summary_parents WHERE summary_id = ? ORDER BY ordinal", (summary_id,)
        )
        return SummaryText(
            summary_id=summary_id,
            kind=as_text(kind) or "",
            depth=as_int(depth),
            token_count=as_int(tokens),
            content=as_text(content) or "",
            context_ordinal=as_int(ordinal_rows[0][0]) if ordinal_rows else None,
            source_messages=int(sources[0][0] or 0),
            missing_sources=int(sources[0][1] or 0),
            parents=tuple(as_text(p[0]) or "" for p in parents),
        )


def part_line(part_type: str, tool_name: str | None, text: str | None) -> str:
    """How one part reads in a list: its text, or what it is (a tool call, reasoning)."""
    if part_type == "tool":
        return f"[tool {tool_name}]" if tool_name else "[tool]"
    if part_type == "reasoning":
        return "[reasoning]"
    return text or ""


def one_line(text: str) -> str:
    """Whitespace runs (newlines included) as one space, stripped."""
    return " ".join(text.split())


@dataclass(slots=True)
class StoredContext:
    """What the stored context holds: its own messages, and the messages its summaries cover."""

    in_context: dict[int, int]  # message_id → its context ordinal
    covered: dict[int, Cover]  # message_id → the first context summary (by ordinal) covering it
    summary_ordinals: dict[str, int]  # summary_id → its first context ordinal
    notes: list[str]


def read_stored_context(probe: SchemaProbe, conversation_id: int) -> StoredContext:
    """The context items and the coverage of their summaries; missing rows are notes."""
    notes: list[str] = []
    in_context: dict[int, int] = {}
    summary_ordinals: dict[str, int] = {}
    summary_items: list[tuple[str, int]] = []
    missing_messages = missing_summaries = 0
    for ordinal, kind, mid, sid, message_exists, summary_exists in probe.query(
        "SELECT ci.ordinal, ci.item_type, ci.message_id, ci.summary_id,"
        " EXISTS(SELECT 1 FROM messages m WHERE m.message_id = ci.message_id),"
        " EXISTS(SELECT 1 FROM summaries s WHERE s.summary_id = ci.summary_id)"
        " FROM context_items ci WHERE ci.conversation_id = ? ORDER BY ci.ordinal",
        (conversation_id,),
    ):
        ordinal = as_int(ordinal)
        if ordinal is None:
            continue
        if kind == "message" and as_int(mid) is not None:
            if not message_exists:
                missing_messages += 1
            in_context.setdefault(as_int(mid) or 0, ordinal)
        elif kind == "summary" and sid is not None:
            if not summary_exists:
                missing_summaries += 1
            summary_items.append((as_text(sid) or "", ordinal))
            summary_ordinals.setdefault(as_text(sid) or "", ordinal)
    if missing_messages:
        names = verb(missing_messages, "names", "name")
        notes.append(f"{plural(missing_messages, 'context item')} {names} a message that does not exist")
    if missing_summaries:
        names = verb(missing_summaries, "names", "name")
        notes.append(f"{plural(missing_summaries, 'context item')} {names} a summary that does not exist")
    covered = _coverage(probe, conversation_id, summary_items, notes)
    return StoredContext(in_context, covered, summary_ordinals, notes)


def open_browser(connection: sqlite3.Connection, conversation_id: int) -> MessageBrowser:
    """Counts, the context's own messages and the coverage of its summaries; what is inconsistent is a note."""
    probe = SchemaProbe(connection)
    cid = conversation_id
    count = int(probe.query("SELECT COUNT(*) FROM messages WHERE conversation_id = ?", (cid,))[0][0])
    stored = read_stored_context(probe, cid)
    in_context, covered = stored.in_context, stored.covered
    present = {mid for (mid,) in probe.query("SELECT message_id FROM messages WHERE conversation_id = ?", (cid,))}
    own = sum(1 for mid in in_context if mid in present)
    summarised = sum(1 for mid in covered if mid not in in_context and mid in present)
    mark_counts = {"context": own, "summarised": summarised, "not-in-context": max(0, count - own - summarised)}
    return MessageBrowser(probe, cid, count, in_context, covered, mark_counts, stored.notes)


def _coverage(probe: SchemaProbe, cid: int, summary_items: list[tuple[str, int]], notes: list[str]) -> dict[int, Cover]:
    """message_id → the first context summary (by ordinal) whose subtree lists it in summary_messages."""
    if not summary_items:
        return {}
    covers: dict[str, Cover] = {}
    for sid, ordinal in summary_items:
        if sid not in covers or covers[sid].ordinal > ordinal:
            covers[sid] = Cover(sid, ordinal)
    covered: dict[int, Cover] = {}
    missing: set[tuple[str, int]] = set()
    rows = probe.query(
        "WITH RECURSIVE roots(root) AS ("
        "  SELECT DISTINCT summary_id FROM context_items"
        "  WHERE conversation_id = ? AND item_type = 'summary' AND summary_id IS NOT NULL),"
        " down(root, sid) AS ("
        "  SELECT root, root FROM roots"
        "  UNION SELECT down.root, sp.parent_summary_id FROM summary_parents sp JOIN down ON sp.summary_id = down.sid)"
        " SELECT sm.message_id, down.root, m.message_id IS NOT NULL"
        " FROM down JOIN summary_messages sm ON sm.summary_id = down.sid"
        " LEFT JOIN messages m ON m.message_id = sm.message_id",
        (cid,),
    )
    for mid, root, exists in rows:
        message_id = mid if type(mid) is int else as_int(mid)
        cover = covers.get(root if type(root) is str else as_text(root) or "")
        if message_id is None or cover is None:
            continue
        if not exists:
            missing.add((cover.summary_id, message_id))
            continue
        known = covered.get(message_id)
        if known is None or known.ordinal > cover.ordinal:
            covered[message_id] = cover
    if missing:
        roots = sorted({root for root, _ in missing})
        shown = ", ".join(roots[:3]) + (f" and {len(roots) - 3} more" if len(roots) > 3 else "")
        lost_ids = len({mid for _, mid in missing})
        does = verb(lost_ids, "does", "do")
        lost = plural(lost_ids, "message")
        notes.append(f"summaries in the context ({shown}) cover {lost} that {does} not exist")
    dangling = probe.query(
        "WITH RECURSIVE down(sid, depth) AS ("
        "  SELECT summary_id, 0 FROM context_items WHERE conversation_id = ? AND summary_id IS NOT NULL"
        "  UNION SELECT sp.parent_summary_id, 1 FROM summary_parents sp JOIN down ON sp.summary_id = down.sid)"
        " SELECT COUNT(DISTINCT sid) FROM down"
        " WHERE depth = 1 AND NOT EXISTS(SELECT 1 FROM summaries s WHERE s.summary_id = down.sid)",
        (cid,),
    )
    gone = int(dangling[0][0]) if dangling else 0
    if gone:
        notes.append(f"{plural(gone, 'source summary')} named in summary_parents {verb(gone, 'does', 'do')} not exist")
    return covered
