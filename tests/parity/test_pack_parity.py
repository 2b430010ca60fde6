"""scripts/pack_parity.py and the corpus loader, on a small made-up ``shared/parity`` tree."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.parity.corpus import CorpusError, ParityCase, corpus_cases, read_manifest, unpack_corpus

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pack_parity.py"


@pytest.fixture(scope="module")
def packer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pack_parity", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pack_parity"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def light_preset(packer: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    # the real preset reserves ~700 MB while compressing; these inputs are a few hundred bytes
    monkeypatch.setattr(packer, "XZ_PRESET", 1)


CASES = {
    "cases": {"000": "assembled", "001": "live-fallback:no-user-turns", "300": "assembled"},
    "cases-1.0": {"400": "assembled"},
}


def make_shared(root: Path) -> Path:
    for source, outcomes in CASES.items():
        for case_id, outcome in outcomes.items():
            case = root / source / case_id
            case.mkdir(parents=True)
            (case / "session.db").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * int(case_id[1:] or 1))
            (case / "params.json").write_text(json.dumps({"caseId": case_id, "tokenBudget": 100}), encoding="utf-8")
            (case / "expected.json").write_text(json.dumps({"engineOutcome": outcome}), encoding="utf-8")
    return root


def pack(packer: ModuleType, shared: Path, out: Path, *extra: str) -> int:
    return packer.main(["--shared", str(shared), "--out", str(out), *extra])


def packed_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_packing_twice_gives_identical_bytes_whatever_the_mtimes(packer: ModuleType, tmp_path: Path) -> None:
    shared = make_shared(tmp_path / "shared")
    assert pack(packer, shared, tmp_path / "a") == 0
    for path in shared.rglob("*"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    assert pack(packer, shared, tmp_path / "b") == 0
    first, second = packed_bytes(tmp_path / "a"), packed_bytes(tmp_path / "b")
    assert sorted(first) == ["cases-0.15.tar.xz", "cases-1.0.tar.xz", "manifest.json"]
    assert first == second


def test_the_manifest_lists_each_lines_cases_and_archive(packer: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pack(packer, make_shared(tmp_path / "shared"), out)
    manifest = read_manifest(out / "manifest.json")
    assert list(manifest["lines"]) == ["0.15", "1.0"]
    line = manifest["lines"]["0.15"]
    assert line["archive"] == "cases-0.15.tar.xz"
    assert line["source"] == "cases"
    assert line["engineOutcomes"] == CASES["cases"]
    assert line["sha256"] == hashlib.sha256((out / "cases-0.15.tar.xz").read_bytes()).hexdigest()
    assert corpus_cases("1.0", manifest) == [ParityCase("1.0", "400", "assembled")]
    fallback = corpus_cases("0.15", manifest)[1]
    assert (fallback.name, fallback.compares_assembler) == ("0.15-001", False)


def test_members_are_sorted_with_fixed_metadata(packer: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pack(packer, make_shared(tmp_path / "shared"), out)
    with tarfile.open(out / "cases-0.15.tar.xz", "r:xz") as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [
        f"{case}/{name}" for case in ("000", "001", "300") for name in ("expected.json", "params.json", "session.db")
    ]
    assert {(m.mtime, m.mode, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0o644, 0, 0, "", "")}


def test_unpacking_restores_every_file_byte_for_byte(packer: ModuleType, tmp_path: Path) -> None:
    shared, out = make_shared(tmp_path / "shared"), tmp_path / "out"
    pack(packer, shared, out)
    corpus = unpack_corpus(tmp_path / "unpacked", data_dir=out)
    assert corpus.unpacked_case_ids("0.15") == ["000", "001", "300"]
    for case in corpus_cases(manifest=corpus.manifest):
        source = shared / ("cases" if case.line == "0.15" else "cases-1.0") / case.case_id
        files = corpus.files(case)
        for packed, original in (
            (files.db, "session.db"),
            (files.params, "params.json"),
            (files.expected, "expected.json"),
        ):
            assert packed.read_bytes() == (source / original).read_bytes()


def test_check_reports_a_stale_copy_and_writes_nothing(packer: ModuleType, tmp_path: Path) -> None:
    shared, out = make_shared(tmp_path / "shared"), tmp_path / "out"
    pack(packer, shared, out)
    assert pack(packer, shared, out, "--check") == 0
    before = packed_bytes(out)
    (shared / "cases-1.0" / "400" / "expected.json").write_text('{"engineOutcome": "assembled", "x": 1}')
    assert pack(packer, shared, out, "--check") == 1
    assert packed_bytes(out) == before
    assert pack(packer, shared, out) == 0
    assert packed_bytes(out)["cases-1.0.tar.xz"] != before["cases-1.0.tar.xz"]
    assert packed_bytes(out)["cases-0.15.tar.xz"] == before["cases-0.15.tar.xz"]


def test_a_case_with_other_files_stops_the_packing(packer: ModuleType, tmp_path: Path) -> None:
    shared = make_shared(tmp_path / "shared")
    (shared / "cases" / "300" / "session.db-journal").write_bytes(b"")
    with pytest.raises(SystemExit, match=re.escape("session.db-journal")):
        pack(packer, shared, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_archive_that_is_not_the_manifests_is_refused(packer: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pack(packer, make_shared(tmp_path / "shared"), out)
    archive = out / "cases-1.0.tar.xz"
    archive.write_bytes(archive.read_bytes() + b"\x00")
    with pytest.raises(CorpusError, match="SHA-256"):
        unpack_corpus(tmp_path / "unpacked", data_dir=out)


def test_a_manifest_listing_other_cases_is_refused(packer: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pack(packer, make_shared(tmp_path / "shared"), out)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["lines"]["1.0"]["engineOutcomes"]["401"] = "assembled"
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CorpusError, match="not the manifest's"):
        unpack_corpus(tmp_path / "unpacked", data_dir=out)


def test_a_member_outside_the_case_layout_is_refused(packer: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pack(packer, make_shared(tmp_path / "shared"), out)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("../escaped.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    archive = out / "cases-1.0.tar.xz"
    archive.write_bytes(packer.lzma.compress(raw.getvalue(), preset=1))
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["lines"]["1.0"]["sha256"] = hashlib.sha256(archive.read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CorpusError, match=re.escape("unexpected member '../escaped.json'")):
        unpack_corpus(tmp_path / "unpacked" / "inner", data_dir=out)
    assert not (tmp_path / "unpacked" / "escaped.json").exists()
