"""Pack the public parity cases from ``../shared/parity`` into the repository's tests.

    python scripts/pack_parity.py [--shared ../shared/parity] [--out tests/parity/data] [--check]

A fresh clone has no ``../shared`` beside it, so the parity tests read these
archives instead: one ``tar.xz`` per engine line (xz packs the 90 MB of
databases and expected outputs to about 7 MB, and ``tarfile``/``lzma`` unpack
it with the standard library alone), plus ``manifest.json``, which lists the
cases of each line with their ``engineOutcome`` (so pytest can collect one test
per case and stage without unpacking) and each archive's SHA-256 (so a
hand-edited archive or a stale manifest is caught).

Re-run it whenever ``../shared/parity`` changes.  The output is deterministic:
members in sorted order, fixed mtime, owner and mode, and a fixed xz preset, so
packing identical input again gives identical bytes (with the same liblzma) and
files that did not change are not rewritten.  ``--check`` writes nothing and
exits 1 when the repository's copy differs from ``--shared``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import os
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = ROOT.parent / "shared" / "parity"
DEFAULT_OUT = ROOT / "tests" / "parity" / "data"
MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = 1

CASE_FILES = ("expected.json", "params.json", "session.db")
XZ_PRESET = 9  # the extreme variant saves under 1 % here for twice the packing time
FIXED_MTIME = 0


@dataclass(frozen=True)
class Line:
    """One engine line: its name, its directory under ``../shared/parity``, its archive's name."""

    name: str
    source: str
    archive: str


LINES = (
    Line("0.15", "cases", "cases-0.15.tar.xz"),
    Line("1.0", "cases-1.0", "cases-1.0.tar.xz"),
)


def case_dirs(source: Path) -> list[Path]:
    """The case directories of one line, in name order; anything unexpected stops the packing."""
    if not source.is_dir():
        raise SystemExit(f"pack_parity: {source} is not a directory")
    cases = sorted(p for p in source.iterdir() if p.is_dir())
    if not cases:
        raise SystemExit(f"pack_parity: no case directories in {source}")
    for case in cases:
        present = sorted(p.name for p in case.iterdir())
        if present != sorted(CASE_FILES):
            raise SystemExit(f"pack_parity: {case} holds {present}, expected exactly {list(CASE_FILES)}")
    return cases


def build_archive(cases: Sequence[Path]) -> bytes:
    """A tar.xz of ``<case>/<file>`` members whose bytes depend only on the files' names and contents."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for case in cases:
            for name in CASE_FILES:
                data = (case / name).read_bytes()
                info = tarfile.TarInfo(f"{case.name}/{name}")
                info.size = len(data)
                info.mtime = FIXED_MTIME
                info.mode = 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(data))
    return lzma.compress(tar_bytes.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET)


def engine_outcome(case: Path) -> str:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    outcome = expected.get("engineOutcome")
    if not isinstance(outcome, str):
        raise SystemExit(f"pack_parity: {case}/expected.json has no string engineOutcome")
    return outcome


def manifest_text(entries: dict[str, dict[str, object]]) -> str:
    manifest = {"formatVersion": MANIFEST_FORMAT, "packedBy": "scripts/pack_parity.py", "lines": entries}
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def write_if_changed(path: Path, data: bytes) -> bool:
    """Replace ``path`` atomically when its bytes differ; say whether it changed."""
    if path.is_file() and path.read_bytes() == data:
        return False
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return True


def differs(path: Path, data: bytes) -> bool:
    return not path.is_file() or path.read_bytes() != data


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shared", type=Path, default=DEFAULT_SHARED, help="the parity directory (default: %(default)s)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the archives go (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the packed copy is out of date")
    args = parser.parse_args(argv)

    outputs: dict[Path, bytes] = {}
    entries: dict[str, dict[str, object]] = {}
    for line in LINES:
        cases = case_dirs(args.shared / line.source)
        archive = build_archive(cases)
        raw_size = sum((case / name).stat().st_size for case in cases for name in CASE_FILES)
        print(f"{line.name}: {len(cases)} cases, {raw_size / 1e6:.1f} MB -> {line.archive} {len(archive) / 1e6:.2f} MB")
        outputs[args.out / line.archive] = archive
        entries[line.name] = {
            "archive": line.archive,
            "source": line.source,
            "sha256": hashlib.sha256(archive).hexdigest(),
            "engineOutcomes": {case.name: engine_outcome(case) for case in cases},
        }
    outputs[args.out / MANIFEST_NAME] = manifest_text(entries).encode("utf-8")

    if args.check:
        stale = [path for path, data in outputs.items() if differs(path, data)]
        for path in stale:
            print(f"out of date: {path}")
        print(
            "packed corpus is up to date" if not stale else f"{len(stale)} file(s) out of date: re-run without --check"
        )
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for path, data in outputs.items():
        print(f"{'written' if write_if_changed(path, data) else 'unchanged'}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
