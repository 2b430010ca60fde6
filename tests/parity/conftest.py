"""The packed parity corpus, unpacked once per test process into a temporary directory."""

from __future__ import annotations

import pytest

from tests.parity.corpus import ParityCorpus, shared_corpus


@pytest.fixture(scope="session")
def parity_corpus() -> ParityCorpus:
    return shared_corpus()
