"""The layout of a render cache file, for tests that damage one on purpose."""

from __future__ import annotations

from ctxview import render_cache


def payload_end(data: bytes | bytearray) -> int:
    """Where a cache file's checksummed payload ends and its tail (the packed messages) begins."""
    magic = render_cache._MAGIC
    header_size = int.from_bytes(data[len(magic) : len(magic) + 8], "big")
    start = len(magic) + 8 + header_size + render_cache.DIGEST_BYTES
    return start + 8 + int.from_bytes(data[start : start + 8], "big")
