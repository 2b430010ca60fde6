"""The keys of an item's tool-pair partners (a decision's ``pair_with``), worked out when a decision asks.

Every item that shares a tool id with another lies in the same tool-id chunk (``ChunkPlan``): an
item's partners are found among its chunk's members, most often one or two.  Working them out
for every item up front was a fifth of a 100,000-item session's first run, for the few rows a
screen shows (the export asks for every item, and pays the same as before).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxview.assembly.incremental.chunked_repair import ChunkPlan
from ctxview.assembly.resolve import ResolvedItem

# chunks with more members than this get id → members maps (built once), not a scan per asked id
SCAN_MEMBERS = 24


class ToolPartners:
    """Partners of the items of one list (the focus overlay's items), by the list's tool-id chunks.

    An item's partners are the items answering one of its calls (call by call, each in list
    order), then the items issuing the call it answers (in list order), itself never, each key once.
    """

    __slots__ = ("_big", "_chunks", "_items", "_position")

    def __init__(self, items: Sequence[ResolvedItem], chunks: ChunkPlan) -> None:
        self._items = items
        self._chunks = chunks
        self._position: dict[int, int] | None = None  # id(item) → position, when a caller gives none
        self._big: dict[int, tuple[dict[str, list[ResolvedItem]], dict[str, list[ResolvedItem]]]] = {}

    def of(self, item: ResolvedItem, position: int = -1) -> tuple[str, ...]:
        """The keys of ``item``'s partners; ``position``: where it is likely to be in the list (checked)."""
        call_ids = item.call_ids
        result_id = item.result_id
        if not call_ids and not result_id:
            return ()
        items = self._items
        if not (0 <= position < len(items) and items[position] is item):
            if self._position is None:
                self._position = {id(member): index for index, member in enumerate(items)}
            found = self._position.get(id(item))
            if found is None:
                return ()
            position = found
        chunks = self._chunks
        chunk = chunks.chunk_of[position]
        begin, end = chunks.start[chunk], chunks.stop[chunk]
        if end - begin == 1:
            return ()
        partners: dict[str, None] = {}
        if end - begin > SCAN_MEMBERS:
            answering, issuing = self._maps(chunk, begin, end)
            for cid in call_ids:
                for other in answering.get(cid, ()):
                    if other is not item:
                        partners[other.key] = None
            if result_id:
                for other in issuing.get(result_id, ()):
                    if other is not item:
                        partners[other.key] = None
            return tuple(partners)
        members = items[begin:end]
        for cid in call_ids:
            for other in members:
                if other.result_id == cid and other is not item:
                    partners[other.key] = None
        if result_id:
            for other in members:
                if other is not item and result_id in other.call_ids:
                    partners[other.key] = None
        return tuple(partners)

    def _maps(
        self, chunk: int, begin: int, end: int
    ) -> tuple[dict[str, list[ResolvedItem]], dict[str, list[ResolvedItem]]]:
        """A big chunk's result id → answering members and call id → issuing members (list order)."""
        maps = self._big.get(chunk)
        if maps is None:
            answering: dict[str, list[ResolvedItem]] = {}
            issuing: dict[str, list[ResolvedItem]] = {}
            for member in self._items[begin:end]:
                if member.result_id:
                    answering.setdefault(member.result_id, []).append(member)
                for cid in member.call_ids:
                    issuing.setdefault(cid, []).append(member)
            maps = self._big[chunk] = (answering, issuing)
        return maps
