"""files.py: reading named input files (one-line errors, no blocking on pipes) and the atomic write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.errors import InputError
from ctxview.files import Wording, read_head, read_text, replacing, write_bytes_atomically

PLAIN = Wording("params file")
SENTENCES = Wording(
    "live-input file",
    missing="Live-input file {path} does not exist.",
    not_regular="Live-input file {path} is not a regular file ({kind}).",
)


def error_of(path: Path | str, wording: Wording = PLAIN, **kwargs: str) -> str:
    with pytest.raises(InputError) as caught:
        read_text(path, wording, **kwargs)
    return str(caught.value)


def test_each_problem_is_one_line_in_the_wording_given(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert error_of(missing) == f"params file not found: {missing}"
    assert error_of(missing, SENTENCES) == f"Live-input file {missing} does not exist."
    assert error_of(tmp_path) == f"params file is a directory, not a file: {tmp_path}"
    binary = tmp_path / "bin.json"
    binary.write_bytes(b'{"a": 1}\n\xff')
    assert error_of(binary) == f"params file is not UTF-8 text: {binary} (byte 9)"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "gone")
    assert error_of(dangling) == f"params file not found: {dangling}"


def test_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    message = error_of(tmp_path / "a")
    assert message.startswith(f"cannot read params file {tmp_path / 'a'}: ")
    assert "\n" not in message and "Errno" not in message


def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "live.json"
    os.mkfifo(fifo)
    # no writer ever opens the pipe: opening it for reading the ordinary way would wait forever
    code = (
        "import sys; from ctxview.files import Wording, read_text\n"
        "try:\n    read_text(sys.argv[1], Wording('live-input file'))\n"
        "except Exception as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert out.stdout == f"live-input file is not a regular file (a named pipe): {fifo}\n"
    assert error_of(fifo, SENTENCES) == f"Live-input file {fifo} is not a regular file (a named pipe)."


def test_a_device_is_refused() -> None:
    assert error_of("/dev/null") == "params file is not a regular file (a character device): /dev/null"


def test_unreadable_files_say_why_in_the_system_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text("{}")

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", refuse)  # the tests run as root, who may read any file
    assert error_of(secret) == f"cannot read params file {secret}: Permission denied"


def test_text_reads_newlines_as_text_mode_does_and_can_drop_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\xef\xbb\xbfa\r\nb\rc\n")
    assert read_text(path, PLAIN) == "\ufeffa\nb\nc\n"
    assert read_text(path, PLAIN, encoding="utf-8-sig") == "a\nb\nc\n"
    assert read_text(path, PLAIN) == path.read_text(encoding="utf-8")


def test_read_head_reads_only_the_start(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert read_head(path, 16, PLAIN) == b"SQLite format 3\x00"
    short = tmp_path / "short"
    short.write_bytes(b"ab")
    assert read_head(short, 16, PLAIN) == b"ab"


# --- writing ---------------------------------------------------------------------------------


def test_replacing_moves_the_finished_file_into_place_and_leaves_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "out.db"
    with replacing(target, overwrite=False, exists_message="taken") as temporary:
        assert temporary.parent == tmp_path and temporary != target
        temporary.write_text("done")
        Path(f"{temporary}-journal").write_text("sqlite's")
    assert target.read_text() == "done"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.db"]


def test_replacing_never_clobbers_without_overwrite_and_cleans_up_after_a_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    with pytest.raises(InputError, match=r"^taken$"):
        with replacing(target, overwrite=False, exists_message="taken") as temporary:
            temporary.write_text("new")
            target.write_text("appeared meanwhile")
    assert target.read_text() == "appeared meanwhile"
    with pytest.raises(RuntimeError):
        with replacing(target, overwrite=True, exists_message="taken") as temporary:
            temporary.write_text("half")
            raise RuntimeError("the writer failed")
    assert target.read_text() == "appeared meanwhile"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    with replacing(target, overwrite=True, exists_message="taken") as temporary:
        temporary.write_text("replaced")
    assert target.read_text() == "replaced"


def test_write_bytes_atomically_gives_the_usual_mode_of_a_new_file(tmp_path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    target = tmp_path / "export.json"
    write_bytes_atomically(target, b"[]\n", overwrite=False, exists_message="taken")
    assert target.read_bytes() == b"[]\n"
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_not_regular_reason_names_each_kind_of_file(tmp_path: Path) -> None:
    from ctxview.files import not_regular_reason

    regular = tmp_path / "a.db"
    regular.write_bytes(b"x")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    assert not_regular_reason(regular) is None
    assert not_regular_reason(fifo) == "is a named pipe, not a regular file"
    assert not_regular_reason(tmp_path) == "is a directory"
    assert not_regular_reason("/dev/null") == "is a character device, not a regular file"
    assert not_regular_reason(tmp_path / "loop1") == "is a symbolic link loop, not a regular file"
    assert not_regular_reason(tmp_path / "dangling") == "a symbolic link to a missing file"
    assert not_regular_reason(tmp_path / "nothing") == "no such file"


def test_read_regular_bytes_refuses_a_pipe_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    code = (
        "import sys; from ctxview.files import read_regular_bytes\n"
        "try:\n    read_regular_bytes(sys.argv[1])\n"
        "except OSError as exc:\n    print(exc.strerror)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert out.stdout == "not a regular file (a named pipe)\n"
    data = tmp_path / "data.bin"
    data.write_bytes(b"\x00\xffok")
    from ctxview.files import read_regular_bytes

    assert read_regular_bytes(data) == b"\x00\xffok"
