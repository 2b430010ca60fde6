"""The OpenClaw state directory and the LCM database, found the way the host and the plugin find them.

OpenClaw and lossless-claw disagree on purpose: OpenClaw honours
``OPENCLAW_HOME`` and the legacy ``~/.clawdbot``, lossless-claw only
``OPENCLAW_STATE_DIR`` and ``HOME`` (spec §1).  Every function takes the
environment and the OS home explicitly, so tests never see the real ones.
An explicit ``--state-dir`` replaces both searches.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEW_STATE_DIRNAME = ".openclaw"
LEGACY_STATE_DIRNAMES = (".clawdbot",)
LCM_PLUGIN_ID = "lossless-claw"


def _normalized(value: str | None) -> str | None:
    """An environment value as OpenClaw reads it: trimmed; empty, ``undefined`` and ``null`` mean unset."""
    if value is None:
        return None
    trimmed = value.strip()
    if not trimmed or trimmed in ("undefined", "null"):
        return None
    return trimmed


def _os_home(env: Mapping[str, str], os_home: Path) -> Path:
    raw = _normalized(env.get("HOME")) or _normalized(env.get("USERPROFILE"))
    return Path(raw) if raw else os_home


def resolve_home(env: Mapping[str, str], os_home: Path) -> Path:
    """OpenClaw's home: ``OPENCLAW_HOME`` (a leading ``~`` is the OS home), else ``HOME``, ``USERPROFILE``, OS home."""
    explicit = _normalized(env.get("OPENCLAW_HOME"))
    if explicit is None:
        return _absolute(_os_home(env, os_home))
    if explicit == "~" or explicit.startswith(("~/", "~\\")):
        return _absolute(Path(str(_os_home(env, os_home)) + explicit[1:]))
    return _absolute(Path(explicit))


def expand_user_path(value: str, home: Path, cwd: Path | None = None) -> Path:
    """A user-written path: trimmed, ``~``/``~/…`` expanded with ``home``, made absolute against ``cwd``."""
    text = value.strip()
    if text == "~" or text.startswith(("~/", "~\\")):
        text = str(home) + text[1:]
    path = Path(text)
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return _absolute(path)


def _absolute(path: Path) -> Path:
    return Path(os.path.normpath(path if path.is_absolute() else Path.cwd() / path))


@dataclass(frozen=True, slots=True)
class StateDir:
    """The state directory and how it was chosen."""

    path: Path
    how: str  # one clause, e.g. "OPENCLAW_STATE_DIR", "--state-dir", "the default ~/.openclaw"
    exists: bool
    explicit: bool  # chosen by --state-dir: the LCM database is then looked for inside it only


def resolve_state_dir(
    env: Mapping[str, str],
    os_home: Path,
    *,
    explicit: str | os.PathLike[str] | None = None,
    cwd: Path | None = None,
) -> StateDir:
    """The state directory OpenClaw uses (first match wins), or ``explicit`` when given."""
    home = resolve_home(env, os_home)
    if explicit is not None:
        path = expand_user_path(os.fspath(explicit), home, cwd)
        return StateDir(path, "--state-dir", path.is_dir(), True)
    override = _normalized(env.get("OPENCLAW_STATE_DIR"))
    if override is not None:
        path = expand_user_path(override, home, cwd)
        return StateDir(path, "OPENCLAW_STATE_DIR", path.is_dir(), False)
    new = home / NEW_STATE_DIRNAME
    if new.exists():
        return StateDir(new, f"the default {_tilde(new, home)}", new.is_dir(), False)
    for name in LEGACY_STATE_DIRNAMES:
        legacy = home / name
        if legacy.exists():
            return StateDir(legacy, f"the legacy {_tilde(legacy, home)} (no {NEW_STATE_DIRNAME} exists)", True, False)
    return StateDir(new, f"the default {_tilde(new, home)}", False, False)


def _tilde(path: Path, home: Path) -> str:
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


@dataclass(frozen=True, slots=True)
class LcmDatabase:
    """The LCM database lossless-claw opens for this state directory."""

    path: Path
    how: str  # LCM_DATABASE_PATH | plugins.entries["lossless-claw"].config.dbPath | … | <state>/lcm.db
    exists: bool
    notes: tuple[str, ...] = ()


def lcm_plugin_config(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``plugins.entries["lossless-claw"].config`` of openclaw.json, or an empty mapping."""
    node: Any = config or {}
    for key in ("plugins", "entries", LCM_PLUGIN_ID, "config"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def resolve_lcm_database(
    env: Mapping[str, str],
    os_home: Path,
    state: StateDir,
    config: Mapping[str, Any] | None,
    *,
    cwd: Path | None = None,
) -> LcmDatabase:
    """``LCM_DATABASE_PATH``, else the plugin's ``dbPath``/``databasePath``, else ``<state>/lcm.db`` (spec §1).

    lossless-claw's own default ignores ``OPENCLAW_HOME`` and legacy directories: it is
    ``$OPENCLAW_STATE_DIR/lcm.db`` or ``$HOME/.openclaw/lcm.db``.  With ``--state-dir`` the
    environment is not consulted, and a configured path that does not exist (a state
    directory copied from another machine) gives way to ``<state>/lcm.db`` when that exists.
    """
    home = resolve_home(env, os_home)
    notes: list[str] = []
    plugin = lcm_plugin_config(config)
    env_path = None if state.explicit else env.get("LCM_DATABASE_PATH")
    if state.explicit and env.get("LCM_DATABASE_PATH"):
        notes.append("LCM_DATABASE_PATH is ignored because --state-dir was given")
    if env_path is not None and env_path.strip():
        return _lcm(expand_user_path(env_path, home, cwd), "LCM_DATABASE_PATH", notes)
    for key in ("dbPath", "databasePath"):
        value = plugin.get(key)
        if isinstance(value, str) and value.strip():
            configured = expand_user_path(value, home, cwd)
            how = f'openclaw.json plugins.entries["{LCM_PLUGIN_ID}"].config.{key}'
            if value.strip().startswith("~"):
                notes.append(f"{how} starts with ~: lossless-claw itself does not expand it, ctxview does")
            if state.explicit and not configured.exists() and (state.path / "lcm.db").exists():
                notes.append(f"{how} names {configured}, which does not exist; using <state>/lcm.db")
                break
            return _lcm(configured, how, notes)
    if state.explicit:
        base = state.path
        how = "<state>/lcm.db"
    else:
        override = _normalized(env.get("OPENCLAW_STATE_DIR"))
        base = expand_user_path(override, home, cwd) if override else _absolute(
            Path(env.get("HOME") or os_home) / NEW_STATE_DIRNAME
        )
        how = "$OPENCLAW_STATE_DIR/lcm.db" if override else "$HOME/.openclaw/lcm.db"
        if base != state.path:
            notes.append(
                f"lossless-claw looks for its database in {base}, not in the state directory {state.path} "
                "(it ignores OPENCLAW_HOME and legacy directories)"
            )
    return _lcm(base / "lcm.db", how, notes)


def _lcm(path: Path, how: str, notes: list[str]) -> LcmDatabase:
    return LcmDatabase(path=path, how=how, exists=path.is_file(), notes=tuple(notes))
