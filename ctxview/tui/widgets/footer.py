"""A footer that shows as many keys as fit, never one drawn over another.

Textual's footer lays every shown key out in one row and docks the palette key
on the right, over whatever reaches it: at 80 or 100 columns the last keys and
``^p palette`` garble each other.  This one keeps the keys, in the action
table's order, that fit beside the palette key, and lays them out again when
the width changes.  Every key stays in the help (``?``) and the palette.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def key_cells(key: FooterKey, compact: bool = True) -> int:
    """The cells a footer key takes (its margin included), as Footer's styles draw it."""
    text = cell_len(key.key_display)
    if key.description:
        text += cell_len(key.description) + 1
    return text + 1 if compact else text + 3


def fitting(keys: list[FooterKey], width: int, compact: bool = True) -> list[FooterKey]:
    """The leading keys that fit in ``width`` cells."""
    shown: list[FooterKey] = []
    used = 0
    for key in keys:
        cells = key_cells(key, compact)
        if used + cells > width:
            break
        shown.append(key)
        used += cells
    return shown


class FittingFooter(Footer):
    """``Footer`` that leaves out the keys that would not fit."""

    def __init__(self, *, compact: bool = True) -> None:
        super().__init__(compact=compact)
        self._laid_out_for = 0
        self._composed_for: tuple[Any, ...] | None = None

    def _signature(self) -> tuple[Any, ...]:
        """What ``compose`` reads: the screen's shown bindings (with their state), the width and the flags."""
        shown = tuple(
            (binding.key, binding.description, binding.action, binding.show, binding.group, enabled, tooltip)
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
            if binding.show
        )
        width = self.size.width or self.app.size.width
        return (self._bindings_ready, shown, width, self.compact, self.show_command_palette)

    async def recompose(self) -> None:
        """Compose again only when what it reads changed: the footer is told of every focus change (an
        open changes focus several times), and mounting its keys again restyles each of them."""
        if self.is_attached and self._composed_for is not None and self._signature() == self._composed_for:
            return
        await super().recompose()

    def compose(self) -> Iterable[Widget]:  # type: ignore[override]
        self._composed_for = self._signature() if self.is_attached else None
        widgets = list(super().compose())
        palette = [w for w in widgets if isinstance(w, FooterKey) and w.has_class("-command-palette")]
        keys = [w for w in widgets if isinstance(w, FooterKey) and w not in palette]
        width = self.size.width or self.app.size.width
        self._laid_out_for = width
        room = width - sum(key_cells(p, self.compact) + 1 for p in palette)
        shown = fitting(keys, room, self.compact)
        self.styles.grid_size_columns = max(1, len(shown))
        yield from shown
        yield from palette

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._laid_out_for:
            self.call_after_refresh(self.recompose)
