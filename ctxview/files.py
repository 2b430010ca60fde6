"""Writing files people asked for without ever clobbering one they did not."""

from __future__ import annotations

import os
from pathlib import Path

from ctxview.errors import InputError


def rename_no_clobber(source: Path, target: Path, *, exists_message: str) -> None:
    """Move a finished ``source`` to ``target`` unless a file appeared there meanwhile.

    A hard link fails atomically when ``target`` exists; on file systems without
    hard links an existence check then a rename is the best there is.
    """
    try:
        os.link(source, target)
    except FileExistsError:
        raise InputError(exists_message) from None
    except OSError:
        if target.exists():
            raise InputError(exists_message) from None
        os.replace(source, target)
        return
    source.unlink()
