"""``openclaw.json``: where it is and what ctxview reads from it.

OpenClaw writes the file as JSON5 (comments, trailing commas, unquoted keys,
single-quoted strings), so a small JSON5 reader lives here rather than a new
dependency.  ``$include`` directives are not followed (a note says so).  A
config that cannot be read is an empty config plus a note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxview.files import not_regular_reason, read_regular_bytes
from ctxview.jsjson import js_parse
from ctxview.openclaw.paths import StateDir, _normalized, expand_user_path, resolve_home

CONFIG_FILENAME = "openclaw.json"
LEGACY_CONFIG_FILENAMES = ("clawdbot.json",)
MAX_CONFIG_BYTES = 16 * 1024 * 1024


@dataclass(slots=True)
class OpenClawConfig:
    """The parsed config (an empty mapping when there is none) and where it came from."""

    data: dict[str, Any]
    path: Path | None  # None: no config file was found
    notes: list[str] = field(default_factory=list)

    def get(self, *keys: str) -> Any:
        """A nested value, or None when any step is missing or not an object."""
        node: Any = self.data
        for key in keys:
            if not isinstance(node, Mapping):
                return None
            node = node.get(key)
        return node


def config_path(env: Mapping[str, str], os_home: Path, state: StateDir) -> Path:
    """``OPENCLAW_CONFIG_PATH``, else the first existing ``openclaw.json``/``clawdbot.json`` in the state dir."""
    override = None if state.explicit else _normalized(env.get("OPENCLAW_CONFIG_PATH"))
    if override is not None:
        return expand_user_path(override, resolve_home(env, os_home))
    for name in (CONFIG_FILENAME, *LEGACY_CONFIG_FILENAMES):
        candidate = state.path / name
        if candidate.exists():
            return candidate
    return state.path / CONFIG_FILENAME


def read_config(path: Path) -> OpenClawConfig:
    """Parse ``path`` as JSON5; a missing, unreadable or malformed file gives an empty config and a note."""
    if not path.exists() and not path.is_symlink():
        return OpenClawConfig({}, None)
    problem = not_regular_reason(path)
    if problem is not None:
        return OpenClawConfig({}, None, [f"{path}: {problem}; the config is not read"])
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return OpenClawConfig({}, None, [f"{path}: larger than 16 MiB; the config is not read"])
        text = read_regular_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return OpenClawConfig({}, None, [f"{path}: cannot be read ({exc}); the config is not read"])
    try:
        value = parse_json5(text)
    except ValueError as exc:
        return OpenClawConfig({}, path, [f"{path}: not valid JSON5 ({exc}); the config is not read"])
    if not isinstance(value, dict):
        return OpenClawConfig({}, path, [f"{path}: not a JSON object; the config is not read"])
    notes = []
    if _has_include(value):
        notes.append(f"{path}: $include directives are not followed; settings in included files are not seen")
    return OpenClawConfig(value, path, notes)


def load_config(env: Mapping[str, str], os_home: Path, state: StateDir) -> OpenClawConfig:
    return read_config(config_path(env, os_home, state))


def _has_include(value: Any, depth: int = 0) -> bool:
    if depth > 8:
        return False
    if isinstance(value, dict):
        return "$include" in value or any(_has_include(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_include(v, depth + 1) for v in value)
    return False


def sessions_store_path(config: OpenClawConfig, agent_id: str, agent_dir: Path, home: Path) -> tuple[Path, str]:
    """Where an agent's ``sessions.json`` is: config ``session.store`` (``{agentId}`` substituted) or the default."""
    store = config.get("session", "store")
    if isinstance(store, str) and store.strip():
        return expand_user_path(store.replace("{agentId}", agent_id), home), "config session.store"
    return agent_dir / "sessions" / "sessions.json", "default"


# --- JSON5 ------------------------------------------------------------------------------------

_IDENT_START = re.compile(r"[A-Za-z_$\u0080-\uffff]")
_IDENT = re.compile(r"[A-Za-z0-9_$\u0080-\uffff]*")
_NUMBER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|Infinity|NaN|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}
_WHITESPACE = " \t\n\r\v\f\u00a0\ufeff\u2028\u2029"


def parse_json5(text: str) -> Any:
    """A JSON5 document; plain JSON goes through the JSON parser."""
    try:
        return js_parse(text)
    except (ValueError, RecursionError):
        pass
    parser = _Json5(text)
    value = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise ValueError(f"unexpected text at offset {parser.pos}")
    return value


class _Json5:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def fail(self, what: str) -> ValueError:
        line = self.text.count("\n", 0, self.pos) + 1
        return ValueError(f"{what} on line {line}")

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in _WHITESPACE:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Any:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end")
        ch = self.text[self.pos]
        if ch in "{[":
            self.depth += 1
            if self.depth > 200:
                raise self.fail("nested too deeply")
            result = self.object() if ch == "{" else self.array()
            self.depth -= 1
            return result
        if ch in "\"'":
            return self.string()
        for word, value in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return value
        return self.number()

    def object(self) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return result
            key = self.key()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            result[key] = self.value()
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")

    def array(self) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return result
            result.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")

    def key(self) -> str:
        if self.pos < len(self.text) and self.text[self.pos] in "\"'":
            return self.string()
        if self.pos < len(self.text) and _IDENT_START.match(self.text, self.pos):
            match = _IDENT.match(self.text, self.pos + 1)
            end = match.end() if match else self.pos + 1
            key = self.text[self.pos : end]
            self.pos = end
            return key
        raise self.fail("expected a key")

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        out: list[str] = []
        text = self.text
        while True:
            if self.pos >= len(text):
                raise self.fail("unterminated string")
            ch = text[self.pos]
            if ch == quote:
                self.pos += 1
                return "".join(out)
            if ch == "\\":
                self.pos += 1
                esc = text[self.pos : self.pos + 1]
                if esc == "u":
                    out.append(chr(int(text[self.pos + 1 : self.pos + 5], 16)))
                    self.pos += 5
                    continue
                if esc == "x":
                    out.append(chr(int(text[self.pos + 1 : self.pos + 3], 16)))
                    self.pos += 3
                    continue
                if esc == "\r" and text.startswith("\n", self.pos + 1):
                    self.pos += 2
                    continue
                if esc in ("\n", "\r", "\u2028", "\u2029"):
                    self.pos += 1
                    continue
                out.append(_ESCAPES.get(esc, esc))
                self.pos += 1
                continue
            if ch == "\n":
                raise self.fail("line break in a string")
            out.append(ch)
            self.pos += 1

    def number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if not match:
            raise self.fail("unexpected character")
        self.pos = match.end()
        raw = match.group(0)
        sign = -1 if raw.startswith("-") else 1
        body = raw.lstrip("+-")
        if body == "Infinity":
            return sign * math.inf
        if body == "NaN":
            return math.nan
        if body[:2].lower() == "0x":
            return sign * int(body, 16)
        value = float(body)
        return int(value) * sign if value.is_integer() and "." not in body and "e" not in body.lower() else value * sign

