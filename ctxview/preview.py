"""The first rows of a session, read before the whole of it: what a viewer draws while a big session loads.

Reading and assembling 100,000 items takes seconds; the first screenful of rows (item, kind, tokens)
needs only the first few context items.  They are read as a session of their own
(``LcmStore.load_head``) and resolved exactly as the whole session will be, so each row shows the
same kind and tokens it has once the trace arrives.  Outcomes, scores and the budget's use need the
whole session: a preview has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxview.model import Params

if TYPE_CHECKING:
    from ctxview.store import LcmStore

PREVIEW_ROWS = 200  # a tall terminal's screenful, with room to scroll a little


@dataclass(frozen=True, slots=True)
class PreviewRow:
    """One context item as the items table will show it, before any outcome."""

    item_id: str
    kind: str
    tokens: int


@dataclass(frozen=True, slots=True)
class SessionPreview:
    """The first context items of a conversation, and how many the whole conversation has."""

    conversation_id: int
    item_count: int
    rows: tuple[PreviewRow, ...]


def read_preview(
    store: LcmStore, conversation_id: int | None, params: Params, limit: int = PREVIEW_ROWS
) -> SessionPreview:
    """The first ``limit`` items of the conversation, resolved with the engine line and time zone of ``params``.

    ``store`` is the one the whole session is read from next (a database that needs a private copy
    is copied once).  Raises what reading the session raises (the whole read reports it properly).
    """
    from ctxview.assembly.incremental.static import item_label
    from ctxview.pipeline import SessionAssembler

    head = store.load_head(conversation_id, limit)
    assembler = SessionAssembler(head)
    resolved = assembler.resolved(params.timezone, assembler.rules(params)[0].sender_metadata)
    rows = tuple(PreviewRow(str(item.ordinal), item_label(item), item.tokens) for item in resolved)
    conversation = head.conversation
    return SessionPreview(conversation.conversation_id, conversation.context_item_count, rows)
