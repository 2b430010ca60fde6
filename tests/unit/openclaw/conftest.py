from __future__ import annotations

from pathlib import Path

import pytest

from tests.openclaw_fixtures import StateFixture, build_state


@pytest.fixture(scope="module")
def state_tree(tmp_path_factory: pytest.TempPathFactory) -> StateFixture:
    """One fixture state directory per test module (tests only read it; the safety test checks that)."""
    return build_state(tmp_path_factory.mktemp("openclaw") / "state")


@pytest.fixture()
def fresh_state(tmp_path: Path) -> StateFixture:
    return build_state(tmp_path / "state")
