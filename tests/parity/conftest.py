"""The packed parity corpus, unpacked once per test session into a temporary directory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.parity.corpus import ParityCorpus, unpack_corpus


@pytest.fixture(scope="session")
def parity_corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ParityCorpus]:
    root = tmp_path_factory.mktemp("parity-corpus")
    yield unpack_corpus(root)
    # ~95 MB unpacked: do not leave a copy behind in each of the temporary directories pytest keeps
    shutil.rmtree(root, ignore_errors=True)
