"""Finding the state directory, the config and the LCM database as OpenClaw and lossless-claw do."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ctxview.openclaw.config import config_path, load_config, parse_json5, read_config
from ctxview.openclaw.paths import resolve_home, resolve_lcm_database, resolve_state_dir


def test_home_is_openclaw_home_then_home_then_userprofile_then_os_home(tmp_path):
    os_home = tmp_path / "os"
    assert resolve_home({}, os_home) == os_home
    assert resolve_home({"USERPROFILE": "/w/u"}, os_home) == Path("/w/u")
    assert resolve_home({"HOME": " /h/u ", "USERPROFILE": "/w/u"}, os_home) == Path("/h/u")
    assert resolve_home({"HOME": "/h/u", "OPENCLAW_HOME": "/oc"}, os_home) == Path("/oc")
    assert resolve_home({"HOME": "/h/u", "OPENCLAW_HOME": "~/alt"}, os_home) == Path("/h/u/alt")
    assert resolve_home({"HOME": "undefined", "OPENCLAW_HOME": "  "}, os_home) == os_home


def test_state_dir_first_match_wins(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    fresh = resolve_state_dir(env, tmp_path)
    assert (fresh.path, fresh.how, fresh.exists) == (home / ".openclaw", "the default ~/.openclaw", False)
    (home / ".clawdbot").mkdir()
    legacy = resolve_state_dir(env, tmp_path)
    assert (legacy.path, legacy.how) == (home / ".clawdbot", "the legacy ~/.clawdbot (no .openclaw exists)")
    (home / ".openclaw").mkdir()
    assert resolve_state_dir(env, tmp_path).path == home / ".openclaw"
    custom = resolve_state_dir({**env, "OPENCLAW_STATE_DIR": " ~/states/dev "}, tmp_path)
    assert (custom.path, custom.how, custom.explicit) == (home / "states" / "dev", "OPENCLAW_STATE_DIR", False)
    given = resolve_state_dir({**env, "OPENCLAW_STATE_DIR": "/x"}, tmp_path, explicit=str(home / ".clawdbot"))
    assert (given.path, given.how, given.explicit, given.exists) == (home / ".clawdbot", "--state-dir", True, True)


def test_openclaw_home_moves_the_state_dir_but_not_lossless_claws_default(tmp_path):
    env = {"HOME": str(tmp_path / "h"), "OPENCLAW_HOME": str(tmp_path / "oc")}
    (tmp_path / "oc" / ".openclaw").mkdir(parents=True)
    state = resolve_state_dir(env, tmp_path)
    assert state.path == tmp_path / "oc" / ".openclaw"
    lcm = resolve_lcm_database(env, tmp_path, state, {})
    assert (lcm.path, lcm.how, lcm.exists) == (tmp_path / "h" / ".openclaw" / "lcm.db", "$HOME/.openclaw/lcm.db", False)
    assert lcm.notes == (
        f"lossless-claw looks for its database in {tmp_path / 'h' / '.openclaw'}, not in the state directory "
        f"{tmp_path / 'oc' / '.openclaw'} (it ignores OPENCLAW_HOME and legacy directories)",
    )


def test_lcm_database_env_then_db_path_then_database_path_then_state(tmp_path):
    env = {"HOME": str(tmp_path), "OPENCLAW_STATE_DIR": str(tmp_path / "s")}
    state = resolve_state_dir(env, tmp_path)
    both = {"plugins": {"entries": {"lossless-claw": {"config": {"dbPath": "/a.db", "databasePath": "/b.db"}}}}}
    only_second = {"plugins": {"entries": {"lossless-claw": {"config": {"dbPath": " ", "databasePath": "/b.db"}}}}}
    assert resolve_lcm_database({**env, "LCM_DATABASE_PATH": "/e.db"}, tmp_path, state, both).path == Path("/e.db")
    first = resolve_lcm_database(env, tmp_path, state, both)
    assert (first.path, first.how) == (Path("/a.db"), 'openclaw.json plugins.entries["lossless-claw"].config.dbPath')
    second = resolve_lcm_database(env, tmp_path, state, only_second)
    assert (second.path, second.how) == (
        Path("/b.db"),
        'openclaw.json plugins.entries["lossless-claw"].config.databasePath',
    )
    default = resolve_lcm_database(env, tmp_path, state, {})
    assert (default.path, default.how, default.notes) == (tmp_path / "s" / "lcm.db", "$OPENCLAW_STATE_DIR/lcm.db", ())


def test_an_explicit_state_dir_overrides_the_environment_and_a_stale_configured_path(tmp_path):
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "lcm.db").write_bytes(b"")
    state = resolve_state_dir({"OPENCLAW_STATE_DIR": "/elsewhere"}, tmp_path, explicit=tmp_path / "copy")
    config = {"plugins": {"entries": {"lossless-claw": {"config": {"dbPath": "/old-machine/lcm.db"}}}}}
    lcm = resolve_lcm_database({"LCM_DATABASE_PATH": "/env.db"}, tmp_path, state, config)
    assert (lcm.path, lcm.how, lcm.exists) == (tmp_path / "copy" / "lcm.db", "<state>/lcm.db", True)
    assert lcm.notes == (
        "LCM_DATABASE_PATH is ignored because --state-dir was given",
        'openclaw.json plugins.entries["lossless-claw"].config.dbPath names /old-machine/lcm.db, which does not '
        "exist; using <state>/lcm.db",
    )


def test_json5_config_is_read(tmp_path):
    text = """// comment
    { a: 1, 'b': [0x10, +2, .5, 'it\\'s', "x\\
y",], /* block */ c: { d: null, e: Infinity, }, }"""
    value = parse_json5(text)
    assert value == {"a": 1, "b": [16, 2, 0.5, "it's", "xy"], "c": {"d": None, "e": math.inf}}
    with pytest.raises(ValueError, match="expected ',' or '}' on line 1"):
        parse_json5("{a: 1 b: 2}")


def test_config_path_and_bad_configs_become_notes(tmp_path):
    state = resolve_state_dir({}, tmp_path, explicit=tmp_path)
    assert config_path({}, tmp_path, state) == tmp_path / "openclaw.json"
    (tmp_path / "clawdbot.json").write_text("{}")
    assert config_path({}, tmp_path, state) == tmp_path / "clawdbot.json"
    (tmp_path / "openclaw.json").write_text("{ broken")
    config = load_config({}, tmp_path, state)
    assert config.data == {}
    assert config.notes == [
        f"{tmp_path / 'openclaw.json'}: not valid JSON5 (expected ':' on line 1); the config is not read"
    ]
    (tmp_path / "inc.json").write_text('{"agents": {"$include": "./agents.json5"}}')
    assert read_config(tmp_path / "inc.json").notes == [
        f"{tmp_path / 'inc.json'}: $include directives are not followed; settings in included files are not seen"
    ]
    assert read_config(tmp_path / "missing.json").path is None
