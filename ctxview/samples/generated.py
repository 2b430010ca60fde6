"""The generated sessions (``medium``, ``large``): one long seeded conversation, front-compacted.

Turns are drawn from the template topics; the oldest sixth of the messages is then summarized
into leaves and condensed summaries of increasing depth, which replace those messages at the
front of the context as repeated compactions would.  All randomness comes from one
``random.Random(seed)``, so a kind, seed and message count always give the same database.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from ctxview.samples.topics import SYSTEM_NOTES, TOPICS, fill, turn_context
from ctxview.samples.writer import (
    ASSISTANT_IDENTITY,
    Conversation,
    SessionDb,
    StoredMessage,
    StoredSummary,
    epoch_ms,
)

DEFAULT_MEDIUM_MESSAGES = 2_400
DEFAULT_LARGE_MESSAGES = 100_000


def generate_session(db: SessionDb, messages: int, rng: random.Random) -> None:
    """One long conversation of ``messages`` messages; the oldest sixth is compacted."""
    start = datetime(2025, 11, 3, 8, 0, 0)
    conv = db.conversation(
        "agent:main:main",
        f"Platform on-call, generated ({messages:,} messages)",
        start - timedelta(seconds=17),
    )
    ids = db.ids
    stored: list[StoredMessage] = []
    notes: list[tuple[int, str]] = []  # (index of the turn's first message, note)
    clock = start

    def add(message: dict[str, Any]) -> bool:
        nonlocal clock
        if len(stored) >= messages:
            return False
        message["timestamp"] = epoch_ms(clock)
        stored.append(db.ingest(conv, message, clock))
        clock += timedelta(seconds=rng.randint(6, 95))
        return True

    topic = rng.choice(TOPICS)
    while len(stored) < messages:
        if rng.random() < 0.4:
            topic = rng.choice(TOPICS)
        ctx = turn_context(rng)
        clock += timedelta(seconds=rng.randint(40, 1500))
        if rng.random() < 0.04:
            clock += timedelta(hours=rng.randint(8, 15))
        if rng.random() < 0.01:
            add({"role": "system", "content": fill(rng.choice(SYSTEM_NOTES), ctx)})
        notes.append((len(stored), fill(rng.choice(topic.notes), ctx)))
        ask = rng.choice(topic.cjk) if rng.random() < 0.03 else rng.choice(topic.asks)
        add({"role": "user", "content": fill(ask, ctx)})
        for round_index in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
            blocks: list[dict[str, Any]] = []
            if round_index == 0 and rng.random() < 0.15:
                blocks.append(
                    {"type": "thinking", "thinking": rng.choice(topic.thoughts), "thinkingSignature": ids.base64ish(64)}
                )
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": fill(rng.choice(topic.intros), ctx)})
            tools = rng.sample(topic.tools, 2) if rng.random() < 0.15 else [rng.choice(topic.tools)]
            calls = [
                {"type": "toolCall", "id": ids.tool_call(), "name": tool.name, "arguments": tool.args(ctx)}
                for tool in tools
            ]
            add({"role": "assistant", "content": blocks + calls, **ASSISTANT_IDENTITY, "stopReason": "toolUse"})
            for tool, call in zip(tools, calls, strict=True):
                if rng.random() < 0.02:
                    continue  # orphan: the result never arrived (aborted, crashed, timed out)
                add(
                    {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": tool.name,
                        "content": [{"type": "text", "text": fill(tool.output, ctx)}],
                        "isError": tool.error,
                    }
                )
        add(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": fill(rng.choice(topic.answers), ctx)}],
                **ASSISTANT_IDENTITY,
                "stopReason": "stop",
            }
        )

    _compact_front(db, conv, stored, notes, rng)


def _compact_front(
    db: SessionDb,
    conv: Conversation,
    stored: list[StoredMessage],
    notes: list[tuple[int, str]],
    rng: random.Random,
) -> None:
    """Summarize the oldest sixth into leaves and condense them, as repeated compactions would."""
    cut = len(stored) // 6 if len(stored) >= 24 else 0
    if cut == 0:
        return
    leaves: list[StoredSummary] = []
    position = 0
    note_index = 0
    while position < cut:
        size = min(rng.randint(8, 16), cut - position)
        chunk = stored[position : position + size]
        bullets: list[str] = []
        while note_index < len(notes) and notes[note_index][0] < position + size:
            bullets.append(notes[note_index][1])
            note_index += 1
        if not bullets:
            bullets.append(notes[max(0, note_index - 1)][1])
        lines = [f"- {chunk[0].created:%H:%M}-{chunk[-1].created:%H:%M} UTC: {bullets[0]}"]
        lines += [f"- {b}" for b in bullets[1:5]]
        if rng.random() < 0.5:
            lines.append("Expand for details about: exact commands, full tool output, intermediate attempts.")
        created = chunk[-1].created + timedelta(minutes=rng.randint(5, 90))
        leaves.append(db.leaf(conv, [m.message_id for m in chunk], "\n".join(lines), created))
        position += size

    levels: list[list[StoredSummary]] = []
    level = leaves
    while True:
        condensable = level[:-2] if len(level) > 2 else []
        groups: list[list[StoredSummary]] = []
        i = 0
        while len(condensable) - i >= 3:
            size = min(rng.randint(3, 5), len(condensable) - i)
            groups.append(condensable[i : i + size])
            i += size
        if not groups:
            levels.append(level)
            break
        levels.append(level[i:])
        parents = []
        for group in groups:
            first, last = group[0].earliest, group[-1].latest
            assert first is not None and last is not None
            heads = [g.content.split("\n", 1)[0].removeprefix("- ") for g in group]
            body = "\n".join(f"- {h[:200]}" for h in heads)
            content = f"{first:%b %d %H:%M} - {last:%b %d %H:%M} UTC, {len(group)} earlier summaries:\n{body}"
            created = max(g.created for g in group) + timedelta(minutes=rng.randint(1, 30))
            parents.append(db.condensed(conv, group, content, created))
        level = parents

    summary_items: list[tuple[str, int | str, datetime]] = [
        ("summary", s.summary_id, s.created) for depth_level in reversed(levels) for s in depth_level
    ]
    raw_items = [item for item in conv.context if item[0] == "message" and int(item[1]) > stored[cut - 1].message_id]
    conv.context = summary_items + raw_items
