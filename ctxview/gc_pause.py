"""Pausing Python's cyclic garbage collector around bulk work.

Loading, resolving and exporting a session build millions of acyclic objects;
every collection pass on the way would walk all of them again for nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block; restore it only if it was running before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
