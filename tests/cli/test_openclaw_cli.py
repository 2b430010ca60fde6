"""The OpenClaw commands as a user runs them: ``conversations --state-dir``, ``--live-from-transcript``, ``verify``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.openclaw_case_fixture import CASE, CASE_SESSION_ID, build_case_state
from tests.openclaw_fixtures import SID_CODER, build_state, tree

REPO = Path(__file__).resolve().parents[2]


def ctxview(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TZ": "UTC", "HOME": str(home)}
    for name in ("OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "LCM_DATABASE_PATH", "OPENCLAW_CONFIG_PATH"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120, cwd=REPO, env=env
    )


@pytest.fixture(scope="module")
def case_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("case")
    return {v: build_case_state(base / v, v) for v in ("match", "differs", "stale", "truncated")}


def test_conversations_lists_agents_and_sessions_from_the_state_dir(case_states, tmp_path):
    root = case_states["match"]
    out = ctxview("conversations", "--state-dir", str(root), home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "\n".join([
        f"state directory: {root} (--state-dir)",
        f"LCM database: {root / 'lcm.db'} (<state>/lcm.db); lossless-claw 0.15 rules",
        "",
        "agent main · JSONL transcripts · 1 session",
        "  last activity     session                                   conv  messages summaries  items  id",
        "  2026-04-12 23:02  agent:main:main                              1        11         0     11  agent-ma…",
        "",
    ])
    data = json.loads(ctxview("conversations", "--state-dir", str(root), "--json", home=tmp_path).stdout)
    (agent,) = data["agents"]
    (session,) = agent["sessions"]
    assert (agent["agentId"], agent["era"]) == ("main", "jsonl")
    assert (session["sessionKey"], session["sessionId"]) == ("agent:main:main", CASE_SESSION_ID)
    assert session["missing"] is None
    conversation = session["conversation"]
    assert (conversation["conversationId"], conversation["messageCount"]) == (1, 11)
    assert session["transcript"] == {"kind": "jsonl", "path": f"agents/main/sessions/{CASE_SESSION_ID}.jsonl"}


def test_conversations_says_what_is_missing(tmp_path):
    root = build_state(tmp_path / "state").root
    out = ctxview("conversations", "--state-dir", str(root), home=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    ops = next(line for line in lines if "agent:ops:main" in line)
    assert ops.endswith("— no LCM conversation: no active conversation has session id "
                        "'0a5e0a5e-2222-4333-8444-555566667777'")
    gone = next(line for line in lines if "telegram" in line)
    assert gone.endswith("; no transcript: agents/main/sessions/deadbeef-0000-4000-8000-000000000000.jsonl does not "
                         "exist")
    at = lines.index("LCM conversations without a transcript (no listed session has one for them)")
    assert lines[at + 1 : at + 3] == [
        "  conversation 2 (archived) agent:main:main  session 0b0b0b0b…  0 messages, 0 summaries, 0 items",
        "  conversation 5 (active) agent:gone:main  session 0e0e0e0e…  0 messages, 0 summaries, 0 items",
    ]
    assert "  - agent broken: " in out.stdout  # the agent database that is not SQLite is a note


def test_live_from_transcript_is_the_hosts_live_window(case_states, tmp_path):
    root = case_states["match"]
    live = tmp_path / "live.json"
    live.write_text(json.dumps(CASE["params"]["liveMessages"]), encoding="utf-8")
    flags = ["--budget", "1171", "--fresh-tail-count", "8", "--prompt-aware", "--prompt", " ", "--format", "native"]
    from_file = ctxview("assemble", str(root / "lcm.db"), "--live", str(live), *flags, home=tmp_path)
    from_transcript = ctxview("assemble", str(root / "lcm.db"), "--live-from-transcript", *flags, home=tmp_path)
    assert from_transcript.returncode == 0, from_transcript.stderr
    assert from_transcript.stdout == from_file.stdout
    assert from_transcript.stderr == (
        "ctxview: note: live window: 3 entries from agents/main session agen…, transcript\n"
    )
    export = ctxview("export", str(root / "lcm.db"), "--live-from-transcript", *flags, home=tmp_path)
    assert export.stdout == from_file.stdout
    same = ctxview("diff", str(root / "lcm.db"), str(root / "lcm.db"), "--live-from-transcript", "--budget", "1171",
                   home=tmp_path)
    assert same.returncode == 0, same.stderr  # identical sides, both with the transcript's window
    assert same.stderr == "ctxview: note: live window: 3 entries from agents/main session agen…, transcript\n" * 2
    both = ctxview("assemble", str(root / "lcm.db"), "--live", str(live), "--live-from-transcript", home=tmp_path)
    assert (both.returncode, both.stderr) == (
        2, "ctxview: error: --live and --live-from-transcript both give the live inputs: use one\n")


def test_live_from_transcript_reads_sqlite_transcripts_with_compressed_bodies(tmp_path):
    root = build_state(tmp_path / "state").root
    out = ctxview("assemble", str(root / "lcm.db"), "--conversation", "3", "--live-from-transcript", "--format",
                  "json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[0] == "ctxview: note: live window: 6 entries from agents/coder session c0de…, " \
        "SQLite transcript"
    assert "ctxview: note: 1 event stored zstd-compressed" in out.stderr
    missing = ctxview("assemble", str(root / "lcm.db"), "--conversation", "5", "--live-from-transcript", home=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2, f"ctxview: error: --live-from-transcript: no session in {root} maps to conversation 5\n")
    assert SID_CODER.startswith("c0de")


def test_verify_exit_codes_and_verdicts(case_states, tmp_path):
    before = {name: tree(root) for name, root in case_states.items()}
    match = ctxview("verify", str(case_states["match"]), home=tmp_path)
    assert match.returncode == 0, match.stderr
    first, verdict = match.stdout.splitlines()[:2]
    assert first == "agents/main session agent:main:main → conversation 1"
    assert verdict.startswith("matches what your agent sent (turn at 23:02, 4 messages) at token budgets ")
    differs = ctxview("verify", str(case_states["differs"] / "lcm.db"), "--session", "agent-main", home=tmp_path)
    assert differs.returncode == 1
    assert differs.stdout.splitlines()[1].startswith(
        "differs from what your agent sent (turn at 23:02, 4 messages; ctxview has 4) at message 3: ")
    stale = ctxview("verify", str(case_states["stale"]), home=tmp_path)
    assert stale.returncode == 2
    assert stale.stdout.splitlines()[1].startswith("cannot compare the turn at 23:02: the record is older than the "
                                                   "last compaction (entry compact1")
    truncated = ctxview("verify", str(case_states["truncated"]), home=tmp_path)
    assert truncated.returncode == 2
    assert "the record is truncated" in truncated.stdout.splitlines()[1]
    bad = ctxview("verify", str(case_states["match"]), "--session", "nope", home=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == f"ctxview: error: no session 'nope' in {case_states['match']}; sessions: agent:main:main\n"
    nothing = ctxview("verify", str(tmp_path / "missing"), home=tmp_path)
    assert (nothing.returncode, nothing.stderr) == (2, f"ctxview: error: {tmp_path / 'missing'}: no such file or "
                                                       "directory\n")
    assert {name: tree(root) for name, root in case_states.items()} == before
