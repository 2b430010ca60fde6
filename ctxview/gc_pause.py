"""Pausing Python's cyclic garbage collector around bulk work.

Loading, resolving and exporting a session build millions of acyclic objects;
every collection pass on the way would walk all of them again for nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused(*, keep: bool = False) -> Iterator[None]:
    """Pause the cyclic GC for the block; restore it only if it was running before.

    ``keep``: what the block built lives on (a loaded session, its resolution): it is moved out of
    the collector's generations (``gc.freeze``), or the first collection after the block would walk
    every object of it, and the next full one again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if enabled:
            gc.enable()
