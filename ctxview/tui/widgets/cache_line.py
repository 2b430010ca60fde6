"""One line after every edit: how much of the assembled prefix stayed byte-identical (a prompt cache's reuse).

Bound to the inspector's ``assembly``, whose ``cache`` the run measured against
the trace shown before it (``ctxview.whatif.cache_prefix``, the computation of
``ctxview diff``).  Hidden until the first edit: before it there is nothing to compare.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from ctxview.tui.state import Assembly
from ctxview.whatif.cache_prefix import CachePrefix


def cache_text(cache: CachePrefix | None) -> Text:
    if cache is None:
        return Text("cache prefix: measured after the first edit", style="dim")
    line = Text(cache.text())
    if cache.unchanged:
        line.append("  (the whole context is unchanged)", style="dim")
    elif cache.first_changed is not None:
        where = "the list got shorter" if cache.first_changed >= cache.total_messages else (
            f"message {cache.first_changed} is the first that changed"  # numbered as the assembled pane numbers
        )
        line.append(f"  ({where})", style="dim")
    return line


class CachePrefixLine(Static):
    """``cache prefix: 12 of 14 messages, 1,520 of 1,977 tokens unchanged``."""

    COMPONENT_CLASSES: ClassVar[set[str]] = set()

    DEFAULT_CSS = """
    CachePrefixLine { height: 1; padding: 0 1; color: $text-muted; display: none; }
    CachePrefixLine.-measured { display: block; }
    """

    assembly: var[Assembly | None] = var(None, init=False)

    def watch_assembly(self, assembly: Assembly | None) -> None:
        if assembly is not None:
            self.update(cache_text(assembly.cache), layout=False)
            self.set_class(assembly.cache is not None, "-measured")
