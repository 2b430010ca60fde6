"""``build_sample``: check the arguments, run the demo script or the generator, write the file."""

from __future__ import annotations

import os
import random
from pathlib import Path

from ctxview.errors import InputError
from ctxview.samples.demo import build_demo
from ctxview.samples.generated import DEFAULT_LARGE_MESSAGES, DEFAULT_MEDIUM_MESSAGES, generate_session
from ctxview.samples.writer import Ids, SampleInfo, SessionDb, write_atomically

SAMPLE_KINDS: tuple[str, ...] = ("demo", "medium", "large")


def build_sample(
    path: str | os.PathLike[str],
    kind: str,
    *,
    seed: int = 7,
    messages: int | None = None,
    overwrite: bool = False,
) -> SampleInfo:
    """Write a brand-new sample database of ``kind`` to ``path``.

    ``seed`` and ``messages`` shape the generated kinds (``medium``, ``large``); the demo is
    hand-written and always the same.  The file is built next to its destination and renamed
    into place, so a reader never sees a half-written database.
    """
    if kind not in SAMPLE_KINDS:
        raise InputError(f"unknown sample kind {kind!r}; choose one of: {', '.join(SAMPLE_KINDS)}")
    if kind == "demo" and messages is not None:
        raise InputError("the demo sample has a fixed size; --messages only applies to medium and large")
    if messages is not None and (isinstance(messages, bool) or not isinstance(messages, int) or messages < 1):
        raise InputError(f"messages must be a positive integer, not {messages!r}")
    target = Path(path)
    if target.exists() and not overwrite:
        raise InputError(f"{target} already exists; choose another path or allow overwriting")
    if not target.parent.is_dir():
        raise InputError(f"directory {target.parent} does not exist")

    if kind == "demo":
        db = SessionDb(Ids("demo"))
        build_demo(db)
    else:
        count = (
            messages
            if messages is not None
            else (DEFAULT_MEDIUM_MESSAGES if kind == "medium" else DEFAULT_LARGE_MESSAGES)
        )
        rng = random.Random(seed)
        db = SessionDb(Ids(f"{kind}:{seed}"))
        generate_session(db, count, rng)

    write_atomically(db, target, overwrite=overwrite)
    return db.info(target, kind)
