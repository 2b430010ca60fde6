"""The parity corpus packed in the repository (``tests/parity/data``, written by ``scripts/pack_parity.py``).

The manifest is read at collection time, so pytest knows every case and which
stages it compares without unpacking anything; the archives are unpacked once
per test session into a temporary directory (see ``conftest.py``), never into
the repository.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
MANIFEST_PATH = DATA_DIR / "manifest.json"
MANIFEST_FORMAT = 1
ASSEMBLED = "assembled"
CASE_FILES = frozenset({"session.db", "params.json", "expected.json"})
_MEMBER = re.compile(r"(?P<case>[0-9]{3})/(?P<file>session\.db|params\.json|expected\.json)")


class CorpusError(Exception):
    """The packed corpus is damaged or disagrees with its manifest: re-run scripts/pack_parity.py."""


@dataclass(frozen=True)
class ParityCase:
    """One case of one engine line, as the manifest lists it."""

    line: str  # "0.15" or "1.0"
    case_id: str  # "000", the directory name in ../shared/parity
    engine_outcome: str  # the reference's engineOutcome in expected.json

    @property
    def name(self) -> str:
        return f"{self.line}-{self.case_id}"

    @property
    def compares_assembler(self) -> bool:
        """Only where the reference took its normal path is its assembler result the one it used."""
        return self.engine_outcome == ASSEMBLED


@dataclass(frozen=True)
class CaseFiles:
    """Where one unpacked case's files are."""

    directory: Path

    @property
    def db(self) -> Path:
        return self.directory / "session.db"

    @property
    def params(self) -> Path:
        return self.directory / "params.json"

    @property
    def expected(self) -> Path:
        return self.directory / "expected.json"


def read_manifest(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("formatVersion") != MANIFEST_FORMAT:
        raise CorpusError(f"{path}: formatVersion {manifest.get('formatVersion')!r}, expected {MANIFEST_FORMAT}")
    return manifest


def corpus_lines(manifest: dict[str, Any] | None = None) -> list[str]:
    """The engine lines packed, in manifest order ("0.15", "1.0")."""
    return list((manifest or read_manifest())["lines"])


def corpus_cases(line: str | None = None, manifest: dict[str, Any] | None = None) -> list[ParityCase]:
    """Every case of ``line`` (or of every line), in case order, from the manifest alone."""
    manifest = manifest or read_manifest()
    lines = [line] if line is not None else corpus_lines(manifest)
    return [
        ParityCase(name, case_id, outcome)
        for name in lines
        for case_id, outcome in sorted(manifest["lines"][name]["engineOutcomes"].items())
    ]


class ParityCorpus:
    """The unpacked corpus: ``root/<line>/<case>/{session.db,params.json,expected.json}``."""

    def __init__(self, root: Path, manifest: dict[str, Any]) -> None:
        self.root = root
        self.manifest = manifest

    def files(self, case: ParityCase) -> CaseFiles:
        return CaseFiles(self.root / case.line / case.case_id)

    def unpacked_case_ids(self, line: str) -> list[str]:
        return sorted(p.name for p in (self.root / line).iterdir())


def unpack_corpus(target: Path, data_dir: Path = DATA_DIR) -> ParityCorpus:
    """Unpack every line's archive under ``target`` after checking it against the manifest.

    Members are written one by one after their names are checked, so an archive
    can only ever create ``target/<line>/<3 digits>/<one of the three files>``.
    """
    manifest = read_manifest(data_dir / MANIFEST_PATH.name)
    for line, entry in manifest["lines"].items():
        archive = data_dir / entry["archive"]
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != entry["sha256"]:
            raise CorpusError(f"{archive}: SHA-256 {digest} is not the manifest's {entry['sha256']}")
        seen: dict[str, set[str]] = {}
        with tarfile.open(archive, mode="r|xz") as tar:
            for member in tar:
                match = _MEMBER.fullmatch(member.name)
                if match is None or not member.isfile():
                    raise CorpusError(f"{archive}: unexpected member {member.name!r}")
                source = tar.extractfile(member)
                assert source is not None  # a regular file always has contents
                directory = target / line / match["case"]
                directory.mkdir(parents=True, exist_ok=True)
                (directory / match["file"]).write_bytes(source.read())
                seen.setdefault(match["case"], set()).add(match["file"])
        incomplete = sorted(case for case, files in seen.items() if files != CASE_FILES)
        if incomplete:
            raise CorpusError(f"{archive}: cases without all three files: {incomplete}")
        if sorted(seen) != sorted(entry["engineOutcomes"]):
            raise CorpusError(f"{archive}: its cases are not the manifest's; re-run scripts/pack_parity.py")
    return ParityCorpus(target, manifest)


_UNPACKED: ParityCorpus | None = None


def shared_corpus() -> ParityCorpus:
    """The corpus unpacked once per test process, on first use, into a temporary directory removed at exit."""
    global _UNPACKED
    if _UNPACKED is None:
        root = Path(tempfile.mkdtemp(prefix="ctxview-parity-"))
        atexit.register(shutil.rmtree, root, True)
        _UNPACKED = unpack_corpus(root)
    return _UNPACKED


def case_dir(case_id: str, line: str = "0.15") -> Path:
    """The directory of one unpacked case (``session.db``, ``params.json``, ``expected.json``)."""
    return shared_corpus().root / line / case_id


def case_ids(line: str = "0.15") -> list[str]:
    """Every case id of a line, from the manifest (nothing is unpacked)."""
    return [case.case_id for case in corpus_cases(line)]
