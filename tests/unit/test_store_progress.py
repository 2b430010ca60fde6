"""Opening a session tells its progress: items read of the total, ending at the total."""

from __future__ import annotations

from pathlib import Path

from ctxview.samples import build_sample
from ctxview.store import LcmStore


def test_load_progress_counts_items_up_to_the_total(tmp_path: Path) -> None:
    db = tmp_path / "medium.db"
    build_sample(db, "medium", messages=6000)
    calls: list[tuple[int, int]] = []
    with LcmStore(db) as store:
        session = store.load_session(progress=lambda read, total: calls.append((read, total)))
        plain = store.load_session()
    total = len(session.items)
    assert total > 4096
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert {t for _, t in calls} == {total}
    reads = [r for r, _ in calls]
    assert reads == sorted(reads) and len(calls) >= 4  # steps between the ends, never backwards
    assert session.items == plain.items and session.messages == plain.messages  # progress changes nothing read
