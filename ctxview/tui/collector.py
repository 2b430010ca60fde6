"""Python's cyclic garbage collector kept out of an edit's way, from the keystroke until its result is drawn.

A keystroke's run and view work at 100,000 items allocate lists of 100,000 entries;
each collection of the youngest generation that finds one alive walks all its entries,
and a full collection walks every object the session's first run and term index
left behind (0.2 s).  Collections are only postponed: the inspector switches the
collector back on once the edits pause (or after many in a row), and it catches up
while the user reads the result.
"""

from __future__ import annotations

import gc


class CollectorHold:
    """Switches the collector off for an edit in flight, and back on only if this hold switched it off."""

    __slots__ = ("_held", "held_edits")

    def __init__(self) -> None:
        self._held = False
        self.held_edits = 0  # edits since the collector was switched off

    @property
    def held(self) -> bool:
        return self._held

    def hold(self) -> None:
        """The collector off until ``release`` (a no-op while someone else has it off)."""
        if not self._held and gc.isenabled():
            gc.disable()
            self._held = True
        if self._held:
            self.held_edits += 1

    def release(self) -> None:
        """The collector back on, if ``hold`` switched it off."""
        self.held_edits = 0
        if self._held:
            self._held = False
            gc.enable()


def freeze_long_lived() -> None:
    """Take every object alive now out of the collector's generations (``gc.freeze``).

    For the session's first run and term index, which live as long as the session: no
    full collection in the middle of a later keystroke walks them again.
    """
    gc.freeze()
