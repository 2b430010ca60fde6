"""Context items → resolved items (spec §1.2, §2.6, §3), built once per session.

A resolved item is everything about one context slot that does not depend on
the assembly parameters: the rendered message, its token estimate, the text
the relevance scorer reads, and lazily cached derived values (term counts,
JSON text, content hash, stub variant).  The assembler only reads these
items, so one resolution serves every re-assembly while the user types.
Items are never mutated after construction except to fill those caches.
"""

from __future__ import annotations

import hashlib
import marshal
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any

from ctxview.assembly.forked_map import CHILD_SHARE, forked_map
from ctxview.assembly.render import RenderedMessage, render_message, render_summary
from ctxview.assembly.tokens import estimate_tokens
from ctxview.gc_pause import gc_paused
from ctxview.jsjson import js_stringify_message
from ctxview.model import ContextItemRow, FocusBriefRow, MessageRow, Session, SummaryRow

# §7.1 / §7.4 call-block types (note: "tool_call" is not one of them).
CALL_TYPES = frozenset({"toolCall", "toolUse", "tool_use", "tool-use", "functionCall", "function_call"})

_TERM_RE = re.compile(r"[a-z0-9]{2,}")
_UNPACKING = threading.Lock()
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def tokenize(text: str) -> list[str]:
    """§6.2 tokenizer: lowercase, split on non-[a-z0-9], keep pieces of ≥ 2 characters."""
    return _TERM_RE.findall(text.lower())


def block_type(block: Any) -> str | None:
    """A block's ``type`` when the block is an object and the type a string."""
    if isinstance(block, dict):
        value = block.get("type")
        if isinstance(value, str):
            return value
    return None


def block_call_id(block: dict[str, Any]) -> str | None:
    """§7.1 block call id: ``id`` if a non-empty string, else ``call_id``."""
    value = block.get("id")
    if isinstance(value, str) and value:
        return value
    value = block.get("call_id")
    if isinstance(value, str) and value:
        return value
    return None


def message_result_id(message: Any) -> str | None:
    """§7.1 / §7.4 result id: top-level ``toolCallId`` then ``toolUseId`` (any role)."""
    if not isinstance(message, dict):
        return None
    for key in ("toolCallId", "toolUseId"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def message_call_ids(message: Any) -> tuple[str, ...]:
    """Ids of the call blocks of an assistant message (pairing view of §7.1)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return ()
    content = message.get("content")
    if not isinstance(content, list):
        return ()
    ids: list[str] = []
    for block in content:
        if block_type(block) in CALL_TYPES:
            cid = block_call_id(block)
            if cid is not None:
                ids.append(cid)
    return tuple(ids)


def text_hash(text: str) -> str:
    """First 16 hex of SHA-256 over the UTF-8 text, as Node hashes a JS string."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: Node encodes it as U+FFFD
        data = _SURROGATE_RE.sub("\ufffd", text).encode("utf-8")
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(slots=True, eq=False)
class ResolvedItem:
    """One resolved context item (§1.2), or the focus-brief item of §10.1."""

    ordinal: int
    # the agent message, its ``marshal`` bytes, or its index in the render cache file ``packed_in``: most
    # items of a large session are never sent nor shown, so their message is built only when something
    # reads ``message``
    stored_message: dict[str, Any] | bytes | int
    tokens: int
    is_message: bool
    text: str
    message_id: int | None = None
    seq: int | None = None
    source_role: str | None = None  # DB role of a message item
    summary: SummaryRow | None = None
    summary_max_source_seq: int | None = None
    is_focus_brief: bool = False
    brief: FocusBriefRow | None = None
    covered_ordinals: tuple[int, ...] = ()  # focus item: the summaries it replaces
    degraded: bool = False  # stored toolResult without call id, emitted as assistant
    # §10.2 stub eligibility
    file_id: str | None = None
    file_byte_size: Any = None
    file_summary: str | None = None
    stub_tool_name: str | None = None
    stub_tool_call_id: str | None = None
    stub_of: ResolvedItem | None = None  # set on a stubbed copy: the original item
    # derived, cheap, filled at construction (given with a packed message: reading them must not unpack it)
    result_id: str | None = None
    call_ids: tuple[str, ...] = ()
    message_role: Any = None  # the message's ``role`` value as stored in it
    packed_in: Any = None  # the ``render_cache.MessageFile`` holding the message (``stored_message``: its index)
    packed_at: int | None = None  # that index (kept once the message is unpacked: the file's values are by index)
    # the stable decision key, ``o:<ordinal>`` (``f:<ordinal>`` for the focus item): one string per item,
    # read by every run for every item and shared by every index built on it
    key: str = field(init=False, default="")
    # lazily filled caches (parameter independent)
    _terms: tuple[Counter[str], int] | None = field(default=None, repr=False)
    _json: str | None = field(default=None, repr=False)
    _stub: Any = field(default=None, repr=False)
    _score: Any = field(default=None, repr=False)  # (prompt terms, score, matches) of the last scoring
    _clean: Any = field(default=None, repr=False)  # (§7.2 normalized message, §7.3 empty reason)

    def __post_init__(self) -> None:
        self.key = ("f:" if self.is_focus_brief else "o:") + str(self.ordinal)
        message = self.stored_message
        if isinstance(message, dict):
            self.result_id = message_result_id(message)
            self.call_ids = message_call_ids(message)
            self.message_role = message.get("role")

    @property
    def message(self) -> dict[str, Any]:
        """The agent message (unpacked on first use, then kept: the same object on every read, in any thread)."""
        message = self.stored_message
        if type(message) is not dict:
            with _UNPACKING:  # (two threads unpacking at once would each keep their own object)
                message = self.stored_message
                if type(message) is bytes:
                    message = self.stored_message = marshal.loads(message)
                elif type(message) is int:
                    message = self.stored_message = self.packed_in.message(message, self.message_id)
        return message  # type: ignore[return-value]

    @property
    def role(self) -> str:
        return str(self.message_role)

    @property
    def stub_eligible(self) -> bool:
        return self.file_id is not None and self.message_id is not None and self.message_role == "toolResult"

    def term_counts(self) -> tuple[Counter[str], int]:
        """Term frequencies of ``text`` and the number of terms (for §6.2)."""
        if self._terms is None:
            terms = tokenize(self.text)
            self._terms = (Counter(terms), len(terms))
        return self._terms

    def message_json(self) -> str:
        """``JSON.stringify(message)``, cached."""
        if self._json is None:
            self._json = js_stringify_message(self.message)
        return self._json


def messages_of(items: Sequence[ResolvedItem]) -> list[dict[str, Any]]:
    """``item.message`` of every item; those packed in a render cache file are read from it in blocks."""
    with _UNPACKING:
        packed: dict[int, tuple[Any, list[ResolvedItem]]] = {}
        for item in items:
            if type(item.stored_message) is int and item.packed_in is not None:
                packed.setdefault(id(item.packed_in), (item.packed_in, []))[1].append(item)
        for source, group in packed.values():
            read = source.messages([item.stored_message for item in group], [item.message_id for item in group])
            for item, message in zip(group, read, strict=True):
                item.stored_message = message
    return [item.message for item in items]


def adopt_messages(items: Sequence[ResolvedItem], messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``item.message`` of every item, where a packed one is given its message from ``messages`` (what it
    unpacks to, read elsewhere in one piece: ``sweep_cache``) instead of unpacking its own; an item already
    unpacked keeps its own object."""
    out: list[dict[str, Any]] = []
    with _UNPACKING:
        for item, message in zip(items, messages, strict=True):
            own = item.stored_message
            if type(own) is dict:
                out.append(own)
            else:
                item.stored_message = message
                out.append(message)
    return out


class ResolvedItems(list[ResolvedItem]):
    """The resolved list of a session, with per-list caches the assembler fills."""

    def __init__(self, items: list[ResolvedItem], *, timezone: str = "UTC", brief: FocusBriefRow | None = None) -> None:
        super().__init__(items)
        self.timezone = timezone
        self.brief = brief
        self.cache: dict[str, Any] = {}


def _packed_item(row: ContextItemRow, msg: MessageRow, made: tuple[Any, ...], in_file: Any) -> ResolvedItem:
    """The item of a message whose render is packed (``pack_render``); ``in_file``: the render cache file
    its message is in when the packed message is an index (``render_cache.MessageFile``)."""
    packed, tokens, text, _role, _call, _tool, degraded, result_id, call_ids, message_role = made
    # by position, in the order of ``_PACKED_FIELDS`` (checked at import): keywords cost 40% more, and a warm
    # open makes 100,000 of these
    packed_at = packed if type(packed) is int else None
    return ResolvedItem(
        row.ordinal, packed, tokens, True, text, msg.message_id, msg.seq, msg.role,
        None, None, False, None, (), degraded, None, None, None, None, None, None,
        result_id, call_ids, message_role, None if packed_at is None else in_file, packed_at,
    )  # fmt: skip


_PACKED_FIELDS = (
    "ordinal", "stored_message", "tokens", "is_message", "text", "message_id", "seq", "source_role",
    "summary", "summary_max_source_seq", "is_focus_brief", "brief", "covered_ordinals", "degraded", "file_id",
    "file_byte_size", "file_summary", "stub_tool_name", "stub_tool_call_id", "stub_of",
    "result_id", "call_ids", "message_role", "packed_in", "packed_at",
)  # fmt: skip
if tuple(f.name for f in fields(ResolvedItem))[: len(_PACKED_FIELDS)] != _PACKED_FIELDS:
    raise ImportError("ResolvedItem's fields moved: _packed_item passes them by position")


def _resolve_message(
    row: ContextItemRow, session: Session, sender_metadata: bool, renders: Renders | None = None
) -> ResolvedItem | None:
    msg = session.messages.get(row.message_id) if row.message_id is not None else None
    if msg is None:
        return None
    made: Any = _NOT_MADE
    if renders is not None:
        made = renders.fresh.get(msg.message_id, _NOT_MADE)
        if made is _NOT_MADE:
            made = renders.cached.get(msg.message_id, _NOT_MADE)
    if made is None:
        return None
    if type(made) is tuple:  # packed (pack_render)
        role, tool_call_id, tool_name = made[3], made[4], made[5]
        item = _packed_item(row, msg, made, getattr(renders.cached, "messages", None))
    else:
        rendered = made if isinstance(made, RenderedMessage) else render_message(msg, sender_metadata)
        if rendered is None:
            return None
        role, tool_call_id, tool_name = rendered.role, rendered.tool_call_id, rendered.tool_name
        item = ResolvedItem(
            ordinal=row.ordinal,
            stored_message=rendered.message,
            tokens=rendered.tokens,
            is_message=True,
            text=rendered.text,
            message_id=msg.message_id,
            seq=msg.seq,
            source_role=msg.role,
            degraded=rendered.degraded,
        )
    large = msg.large_content
    if isinstance(large, str) and large.startswith("file_") and role == "toolResult":
        file_row = session.large_files.get(large)
        if file_row is not None:
            item.file_id = large
            item.file_byte_size = file_row.byte_size if file_row.byte_size is not None else 0
            item.file_summary = file_row.exploration_summary or None
            item.stub_tool_name = tool_name or None
            item.stub_tool_call_id = tool_call_id or None
    return item


def _resolve_summary(row: ContextItemRow, session: Session, timezone: str) -> ResolvedItem | None:
    summary = session.summaries.get(row.summary_id) if row.summary_id is not None else None
    if summary is None:
        return None
    content = render_summary(summary, timezone)
    return ResolvedItem(
        ordinal=row.ordinal,
        stored_message={"role": "user", "content": content},
        tokens=estimate_tokens(content),
        is_message=False,
        text=summary.content if isinstance(summary.content, str) else str(summary.content),
        summary=summary,
        summary_max_source_seq=summary.max_source_seq,
    )


def resolve_item(
    row: ContextItemRow, session: Session, timezone: str, sender_metadata: bool = True, renders: Renders | None = None
) -> ResolvedItem | None:
    """§1.2: one context row → resolved item, or None when it does not resolve."""
    if row.item_type == "message" and row.message_id is not None:
        return _resolve_message(row, session, sender_metadata, renders)
    if row.item_type == "summary" and row.summary_id is not None:
        return _resolve_summary(row, session, timezone)
    return None


@dataclass(slots=True)
class Renders:
    """Message renders from an earlier run of the same database state, and those made in this one.

    ``cached`` maps a message id to its ``pack_render`` tuple (None: the message is skipped);
    ``fresh`` collects what this resolution rendered itself: the same tuples, or a ``RenderedMessage``
    (not ``pack``, or a message ``marshal`` cannot hold), for the caller to keep when ``keep`` says so.
    A resolution given a ``Renders`` renders every message it lacks at once (on two cores where one is
    idle: the forked process sends its renders packed).
    """

    cached: Mapping[int, Any] = field(default_factory=dict)
    fresh: dict[int, Any] = field(default_factory=dict)
    keep: bool = True
    # the renders made here packed too (held as ``marshal`` bytes, as ``cached`` holds them), not as dicts:
    # 100,000 messages' dicts hold far more memory (and what the cache keeps is packed anyway)
    pack: bool = True
    # called on each message once its render is made (or handed to the forked process), to let go of what
    # only the render reads (its parts: ``store.parts_releaser``)
    release: Callable[[MessageRow], None] | None = None


_NOT_MADE: Any = object()
# from this many messages, the renders made here are packed as they are made: below it, their dicts hold
# less than ~25 MB more, and packing them first (then unpacking those a run sends) costs more than that saves
PACK_FROM_MESSAGES = 25_000


# the forked process's share of the renders when this one does not pack its own: the child packs every render
# it sends (~a fifth more work per message), so it takes fewer and both finish about together (10,000 messages)
UNPACKED_CHILD_SHARE = 0.45


def pack_render(render: RenderedMessage | None) -> Any:
    """A render as the render cache keeps it (``render_cache`` FORMAT 4): the message as ``marshal`` bytes
    (unpacked only when read) and the facts the assembler reads of every item, so that reading them never
    unpacks it; None for a skipped message.

    Raises ``ValueError`` for a message ``marshal`` cannot hold (a JS number kept as text).
    """
    if render is None:
        return None
    message = render.message
    return (marshal.dumps(message), render.tokens, render.text, render.role, render.tool_call_id, render.tool_name,
            render.degraded, message_result_id(message), message_call_ids(message), message.get("role"))


def _render_made(
    row: MessageRow, sender_metadata: bool, release: Callable[[MessageRow], None] | None, pack: bool
) -> Any:
    render = render_message(row, sender_metadata)
    if release is not None:
        release(row)
    return _packed(render) if pack else render


def _packed(render: RenderedMessage | None) -> Any:
    try:
        return pack_render(render)
    except ValueError:
        return render  # (kept as it is: its message stays a dict)


def _sendable(made: Any) -> Any:
    """What the forked process sends of a render: packed (``ValueError`` where marshal cannot hold it: the
    message is then rendered again here)."""
    return made if made is None or type(made) is tuple else pack_render(made)


def _release_all(release: Callable[[MessageRow], None], rows: Sequence[MessageRow]) -> None:
    for row in rows:
        release(row)


def render_missing(session: Session, sender_metadata: bool, renders: Renders) -> None:
    """Render every context message ``renders`` lacks into ``renders.fresh`` (packed, as ``renders.pack`` says).

    The messages are rendered in this process and, where a core is idle and the session is large, a forked
    one (``forked_map``), unless a message's parts are not in memory (``DeferredParts``: only this process
    ever reads the database).  ``renders.release`` is told of each message as soon as its render is made
    here, or the forked process has its own copy of it.
    """
    messages = session.messages
    if not messages.keys() - renders.cached.keys():
        return  # (a warm open: the cache has a render of every message)
    rows: list[MessageRow] = []
    seen: set[int] = set()
    for item in session.items:
        if item.item_type != "message" or item.message_id is None:
            continue
        msg = messages.get(item.message_id)
        if msg is None or msg.message_id in seen or msg.message_id in renders.cached:
            continue
        seen.add(msg.message_id)
        rows.append(msg)
    if not rows:
        return
    in_memory = all(type(row.parts) is tuple for row in rows)
    release = renders.release
    made = forked_map(
        partial(_render_made, sender_metadata=sender_metadata, release=release, pack=renders.pack),
        rows,
        fork=None if in_memory else False,
        child_share=CHILD_SHARE if renders.pack else UNPACKED_CHILD_SHARE,
        handed_off=partial(_release_all, release) if release is not None else None,
        send=_sendable,
    )
    renders.fresh.update(zip((row.message_id for row in rows), made, strict=True))


def resolve_session(
    session: Session, timezone: str, sender_metadata: bool = True, renders: Renders | None = None
) -> ResolvedItems:
    """Resolve every context item in ordinal order; unresolvable rows are left out.

    ``sender_metadata`` is the engine line's rule (False on 1.0: the column is never read).
    ``renders``: message renders to reuse, and where to put the new ones (the pipeline's cache).
    """
    items: list[ResolvedItem] = []
    # the resolution lives as long as its session and holds no cycles worth collecting: frozen out of the
    # cyclic GC's generations, or every full collection would walk it in the middle of a keystroke
    with gc_paused(keep=True):
        if renders is not None:
            render_missing(session, sender_metadata, renders)
            _resolve_packed(session, timezone, sender_metadata, renders, items)
        else:
            for row in session.items:
                item = resolve_item(row, session, timezone, sender_metadata, renders)
                if item is not None:
                    items.append(item)
    return ResolvedItems(items, timezone=timezone, brief=session.focus_brief)


def _resolve_packed(
    session: Session, timezone: str, sender_metadata: bool, renders: Renders, items: list[ResolvedItem]
) -> None:
    """``resolve_item`` of every row into ``items``, the usual row (a message with a packed render and no
    large file) done here in one loop: a warm open resolves 100,000 of them."""
    messages = session.messages
    fresh = renders.fresh.get
    cached = renders.cached.get
    in_file = getattr(renders.cached, "messages", None)
    for row in session.items:
        msg = messages.get(row.message_id) if row.item_type == "message" and row.message_id is not None else None
        if msg is not None and msg.large_content is None:
            made = fresh(msg.message_id, _NOT_MADE)
            if made is _NOT_MADE:
                made = cached(msg.message_id, _NOT_MADE)
            if type(made) is tuple:
                items.append(_packed_item(row, msg, made, in_file))
                continue
        item = resolve_item(row, session, timezone, sender_metadata, renders)
        if item is not None:
            items.append(item)


def unresolved_reason(row: ContextItemRow, session: Session) -> str:
    """Why a context row did not resolve, for the trace."""
    if row.item_type == "message":
        if row.message_id is None:
            return "unresolved: message item without a message_id"
        msg = session.messages.get(row.message_id)
        if msg is None:
            return f"unresolved: message {row.message_id} does not exist"
        return f"unresolved: assistant message {row.message_id} is empty (blank content, no parts)"
    if row.item_type == "summary":
        if row.summary_id is None:
            return "unresolved: summary item without a summary_id"
        return f"unresolved: summary {row.summary_id} does not exist"
    return f"unresolved: unknown item_type {row.item_type!r}"
