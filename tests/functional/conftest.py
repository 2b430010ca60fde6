"""Fixtures of the inspector's Pilot tests: the demo database and a warm assembler over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_CONVERSATION_ID, ensure_demo_db
from ctxview.store import LcmStore


@pytest.fixture(scope="module")
def demo_db() -> Path:
    return ensure_demo_db()


@pytest.fixture(scope="module")
def assembler(demo_db: Path) -> SessionAssembler:
    with LcmStore(demo_db) as store:
        return SessionAssembler(store.load_session(DEMO_CONVERSATION_ID))
