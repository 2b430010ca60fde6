"""The headless CLI as a user runs it: real processes, exact exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.parity.corpus import case_dir

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "sample_sessions" / "demo.db"
DEMO_LIVE = REPO / "sample_sessions" / "demo-live.json"


def ctxview(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *args], capture_output=True, text=True, timeout=120, cwd=REPO
    )


def test_conversations_table_and_json() -> None:
    table = ctxview("conversations", str(DEMO))
    assert table.returncode == 0, table.stderr
    assert "Flaky prod deploy of billing-api 2.14" in table.stdout
    assert "archived" in table.stdout
    rows = json.loads(ctxview("conversations", str(DEMO), "--json").stdout)
    assert [r["conversationId"] for r in rows] == [1, 2]
    assert rows[0]["contextItemCount"] == 42
    assert rows[0]["active"] is True and rows[1]["archived"] is True


def test_assemble_trace_shows_scores_outcomes_and_reasons() -> None:
    out = ctxview(
        "assemble",
        str(DEMO),
        "--budget",
        "2000",
        "--prompt",
        "helm rollback",
        "--prompt-aware",
        "--fresh-tail-count",
        "8",
        "--no-engine",
        "--format",
        "table",
    )
    assert out.returncode == 0, out.stderr
    assert "mode prompt-aware  budget 2,000" in out.stdout
    assert "terms helm, rollback" in out.stdout
    assert "── fresh tail (ordinal ≥ 34)" in out.stdout
    assert " evicted " in out.stdout and " kept " in out.stdout
    assert "ranked 1st of 34" in out.stdout


def test_assemble_with_live_file_shows_appended_input_and_what_it_evicted() -> None:
    out = ctxview(
        "assemble",
        str(DEMO),
        "--live",
        str(DEMO_LIVE),
        "--budget",
        "2000",
        "--fresh-tail-count",
        "8",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    live = data["trace"]["liveInputs"]
    appended = [entry for entry in live if entry["outcome"] == "appended"]
    assert [entry["liveIndex"] for entry in appended] == [4, 5]
    forced = [item for item in data["trace"]["items"] if item["outcome"] == "evicted-for-live"]
    assert forced and all(item["evictedBy"] == "l:4" for item in forced)
    assert data["stages"]["volatileAppend"]["appendedMessages"] == 2
    assert data["trace"]["protectedPairs"] == [
        {"call": "o:34", "result": "o:35", "why": "fresh tail"},
        {"call": "o:34", "result": "o:36", "why": "fresh tail"},
    ]
    assert data["estimatedTokens"] <= 2000


def test_engine_and_bare_assembler_defaults_are_documented_and_applied() -> None:
    help_text = ctxview("assemble", "--help").stdout
    assert "budget 128000, fresh-tail count 64" in " ".join(help_text.split())
    assert "--no-engine" in help_text
    engine = json.loads(ctxview("assemble", str(DEMO), "--format", "json").stdout)
    bare = json.loads(ctxview("assemble", str(DEMO), "--no-engine", "--format", "json").stdout)
    assert engine["stages"]["assembler"]["input"]["freshTailCount"] == 64
    assert bare["stages"]["assembler"]["input"]["freshTailCount"] == 8
    assert bare["assemblePath"] == "assembler"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["assemble", "missing.db"], "no such file"),
        (["assemble", str(DEMO), "--budget", "-5"], "token budget must be at least 1 (got '-5')"),
        (["assemble", str(DEMO), "--budget", "0"], "token budget must be at least 1 (got '0')"),
        (["assemble", str(DEMO), "--budget", "abc"], "token budget must be a positive whole number, not 'abc'"),
        (["assemble", str(DEMO), "--budget", "lots"], "token budget"),
        (["assemble", str(DEMO), "--timezone", ""], "timezone must be a non-empty string"),
        (["assemble", str(DEMO), "--fresh-tail-max-tokens", "-1"], "fresh-tail max tokens must be a number ≥ 0"),
        (["assemble", str(DEMO), "--conversation", "99"], "99"),
        (["assemble", str(DEMO), "--live", str(REPO / "README.md")], "README.md"),
        (["assemble", str(DEMO), "--params", str(REPO / "nope.json")], "params file not found"),
        (["assemble", str(DEMO), "--format", "yaml"], "invalid choice"),
        (["conversations", str(REPO / "README.md")], "README.md"),
    ],
)
def test_errors_are_one_line_with_exit_2(args: list[str], message: str) -> None:
    out = ctxview(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("ctxview: error:")
    assert message in lines[0]
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["assemble", str(DEMO), "--live", "{fifo}"], "Live-input file {fifo} is not a regular file (a named pipe)."),
        (["assemble", str(DEMO), "--params", "{fifo}"], "params file is not a regular file (a named pipe): {fifo}"),
        (["diff", "{fifo}", str(DEMO)], "A: {fifo} is not a regular file (a named pipe)"),
        (["diff", str(DEMO), "{fifo}"], "B: {fifo} is not a regular file (a named pipe)"),
    ],
)
def test_a_named_pipe_is_refused_at_once(flags: list[str], message: str, tmp_path: Path) -> None:
    fifo = tmp_path / "input.json"
    os.mkfifo(fifo)  # nothing ever writes to it: reading it would wait forever (the run's timeout)
    out = ctxview(*(flag.format(fifo=fifo) for flag in flags))
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"ctxview: error: {message.format(fifo=fifo)}\n")


# --- params and live files outside the usual ranges: the engine's reading, and a note on stderr ------

ODD_PARAMS_CASES = {
    "307": "budget 0: the engine uses its default, 128,000",
    "308": 'timezone "" is not a time zone: the engine writes summary dates in ISO UTC',
    "322": "budget -5: the engine uses its default, 128,000",
    "331": "freshTailMaxTokens -1: the engine sets no fresh-tail token cap",
    "333": "liveMessages[0] has no string role: the engine gets it unchanged",
    "334": "liveMessages[0] is null, not a message: the engine gets it unchanged",
    "335": "liveMessages[0] is a string, not a message: the engine gets it unchanged",
}


def _canon(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("case", sorted(ODD_PARAMS_CASES))
def test_odd_params_files_assemble_like_the_engine_with_a_note_on_stderr(case: str) -> None:
    directory = case_dir(case)
    params = directory / "params.json"
    out = ctxview("assemble", str(directory / "session.db"), "--params", str(params), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert out.stderr == f"ctxview: note: {params}: {ODD_PARAMS_CASES[case]}\n"
    data = json.loads(out.stdout)  # stdout stays pure JSON
    expected = json.loads((directory / "expected.json").read_text(encoding="utf-8"))
    mine, theirs = data["stages"]["assembler"], expected["stages"]["assembler"]
    assert _canon(mine["messages"]) == _canon(theirs["messages"])
    assert mine["estimatedTokens"] == theirs["estimatedTokens"]
    assert mine["input"]["tokenBudget"] == theirs["input"]["tokenBudget"]
    for key in ("selectionMode", "freshTailOrdinal", "keptOrdinals"):
        assert data[key] == expected[key], key


def test_a_live_file_with_odd_entries_is_assembled_with_notes(tmp_path: Path) -> None:
    live = tmp_path / "live.json"
    live.write_text('[null, "hello", {"content": "x"}, {"role": "user", "content": "go", "timestamp": 1}]')
    out = ctxview("assemble", str(DEMO), "--live", str(live), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"ctxview: note: {live}: element 0 is null, not a message: the engine gets it unchanged",
        f"ctxview: note: {live}: element 1 is a string, not a message: the engine gets it unchanged",
        f"ctxview: note: {live}: element 2 has no string role: the engine gets it unchanged",
    ]
    data = json.loads(out.stdout)
    assert [entry["liveIndex"] for entry in data["trace"]["liveInputs"]] == [0, 1, 2, 3]


def test_a_params_file_the_engine_cannot_take_is_a_one_line_error(tmp_path: Path) -> None:
    params = tmp_path / "params.json"
    params.write_text('{"tokenBudget": 0, "liveMessages": {"role": "user", "content": "go"}}')
    out = ctxview("assemble", str(DEMO), "--params", str(params))
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (
        f"ctxview: error: {params}: liveMessages must be a JSON array of messages or null, not an object\n"
    )


def test_a_file_value_a_flag_replaces_earns_no_note(tmp_path: Path) -> None:
    from ctxview.cli import subcommand_parser
    from ctxview.cli.common import resolve_params_with_notes

    params_file = tmp_path / "params.json"
    params_file.write_text('{"tokenBudget": 0, "freshTailMaxTokens": -1, "liveMessages": [null]}')
    live = tmp_path / "live.json"
    live.write_text('[{"role": "user", "content": "go"}]')
    parser = subcommand_parser("assemble")
    args = parser.parse_args([str(DEMO), "--params", str(params_file), "--budget", "5000", "--live", str(live)])
    params, _conversation, notes = resolve_params_with_notes(args)
    assert (params.token_budget, params.fresh_tail_max_tokens) == (5000, None)
    assert params.live_messages == ({"role": "user", "content": "go"},)
    assert notes == [f"{params_file}: freshTailMaxTokens -1: the engine sets no fresh-tail token cap"]


def test_the_inspector_gets_the_resolved_params_and_the_notes_go_to_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ctxview.tui
    from ctxview.cli import main

    seen: dict[str, object] = {}
    monkeypatch.setattr(ctxview.tui, "run_tui", lambda db, **kwargs: seen.update(kwargs) or 0)
    params_file = tmp_path / "params.json"
    params_file.write_text('{"tokenBudget": -5, "timezone": ""}')
    assert main([str(DEMO), "--params", str(params_file)]) == 0
    assert (seen["params"].token_budget, seen["params"].timezone) == (128_000, "")  # type: ignore[attr-defined]
    assert capsys.readouterr().err.splitlines() == [
        f"ctxview: note: {params_file}: budget -5: the engine uses its default, 128,000",
        f'ctxview: note: {params_file}: timezone "" is not a time zone: the engine writes summary dates in ISO UTC',
    ]


def test_headless_commands_do_not_load_textual() -> None:
    code = (
        "import sys; from ctxview.cli import main; "
        f"main(['assemble', {str(DEMO)!r}, '--format', 'json']); "
        "print('textual' in sys.modules, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "False"


def test_a_default_assemble_loads_neither_the_export_writers_nor_the_opt_in_scorers() -> None:
    """Both load on demand: together they were a fifth of a small session's whole run."""
    code = (
        "import sys; from ctxview.cli import main; "
        f"main(['assemble', {str(DEMO)!r}, '--format', 'json', '--prompt', 'deploy']); "
        "print(sorted(m for m in ('ctxview.export.openai', 'ctxview.export.turns', 'ctxview.scorers') "
        "if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "[]"
    code = code.replace("'--prompt', 'deploy'", "'--prompt', 'deploy', '--scorer', 'rarity'").replace(
        "'--format', 'json'", "'--format', 'openai'"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "['ctxview.export.openai', 'ctxview.export.turns', 'ctxview.scorers']"


def test_database_is_byte_identical_after_every_command(tmp_path: Path) -> None:
    copy = tmp_path / "demo.db"
    copy.write_bytes(DEMO.read_bytes())
    before = copy.read_bytes()
    for args in (
        ["conversations", str(copy)],
        ["assemble", str(copy), "--format", "json", "--live", str(DEMO_LIVE)],
        ["export", str(copy), "--format", "openai"],
    ):
        assert ctxview(*args).returncode == 0
    assert copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.db"]


def test_tui_flags_reach_the_inspector(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxview.tui
    from ctxview.cli import main

    seen: dict[str, object] = {}

    def fake_run_tui(db, **kwargs):
        seen.update(kwargs, db=db)
        return 0

    monkeypatch.setattr(ctxview.tui, "run_tui", fake_run_tui)
    assert main([str(DEMO), "--watch", "--conversation", "2", "--budget", "5000", "--prompt", "x"]) == 0
    assert seen["db"] == DEMO and seen["watch"] is True and seen["conversation_id"] == 2
    params = seen["params"]
    assert params.token_budget == 5000 and params.prompt == "x" and params.fresh_tail_count == 64  # type: ignore[attr-defined]
    assert main([]) == 0  # no database: the demo, on its debugging conversation, prompt-aware
    assert seen["demo"] is True and seen["db"] is None
    assert seen["params"].prompt_aware_eviction is True  # type: ignore[attr-defined]


def test_engine_rules_are_detected_named_and_can_be_chosen(tmp_path: Path) -> None:
    detected = json.loads(ctxview("assemble", str(DEMO), "--format", "json").stdout)
    assert detected["engineRules"] == {
        "line": "0.15",
        "release": "0.15.3",
        "why": "the database has no 1.0 tables",
    }
    chosen = ctxview("assemble", str(DEMO), "--engine", "1.0", "--format", "table")
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.splitlines()[0] == (
        "lossless-claw 1.0 rules (1.0.0-beta.4): chosen (the database has no 1.0 tables)"
    )
    bad = ctxview("assemble", str(DEMO), "--engine", "2.0")
    assert bad.returncode == 2 and "invalid choice: '2.0'" in bad.stderr
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"engine": "2.0"}), encoding="utf-8")
    from_file = ctxview("assemble", str(DEMO), "--params", str(params))
    assert from_file.returncode == 2
    assert from_file.stderr == f"ctxview: error: {params}: unknown engine line '2.0': use 0.15 or 1.0\n"


def test_a_params_session_id_picks_the_conversation_the_engine_would(tmp_path: Path) -> None:
    rows = json.loads(ctxview("conversations", str(DEMO), "--json").stdout)
    second = rows[1]
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"sessionId": second["sessionId"], "conversationId": 1}), encoding="utf-8")
    out = json.loads(ctxview("assemble", str(DEMO), "--params", str(params), "--format", "json").stdout)
    # conversation 2 is archived: the engine finds no active conversation for its session id
    assert out["engineOutcome"] == "live-fallback:safe-fallback"
    assert out["trace"]["summary"]["fallbackWhy"] == f"no active conversation has session id {second['sessionId']!r}"
    named = json.loads(
        ctxview("assemble", str(DEMO), "--params", str(params), "--conversation", "1", "--format", "json").stdout
    )
    assert named["engineOutcome"] == "assembled"  # --conversation assembles that conversation as is


def test_trace_is_the_json_decision_trace_for_assemble_and_export(tmp_path: Path) -> None:
    """`trace` means one thing: the JSON decision trace; the readable table is `--format table` (the default)."""
    flags = ["--budget", "2000", "--prompt", "helm rollback", "--prompt-aware", "--fresh-tail-count", "8"]
    printed = ctxview("assemble", str(DEMO), *flags, "--format", "trace")
    assert printed.returncode == 0, printed.stderr
    written = tmp_path / "demo.trace.json"
    exported = ctxview("export", str(DEMO), *flags, "--format", "trace", "-o", str(written))
    assert exported.returncode == 0, exported.stderr
    assert json.loads(printed.stdout) == json.loads(written.read_text(encoding="utf-8"))
    assert json.loads(printed.stdout)["ctxview"]["format"] == "trace"
    default = ctxview("assemble", str(DEMO), *flags)
    assert default.stdout == ctxview("assemble", str(DEMO), *flags, "--format", "table").stdout
    assert default.stdout.startswith("lossless-claw 0.15 rules")


def test_engine_log_lines_are_notes_not_warnings() -> None:
    out = ctxview("assemble", str(DEMO), "--budget", "2000", "--prompt", "helm rollback failed deploy",
                  "--prompt-aware", "--fresh-tail-count", "8", "--live", str(DEMO_LIVE))
    assert out.returncode == 0, out.stderr
    assert "engine log: [lcm] assemble: appended unpersisted volatile live input conversation=1" in out.stdout
    assert "warning: [lcm]" not in out.stdout


@pytest.mark.parametrize("line", ["0.15", "1.0"])
def test_a_database_without_conversations_gives_the_engine_safe_fallback(tmp_path: Path, line: str) -> None:
    """The engine finds no conversation for the session and sends the live window (§9.2 step 2); without a
    session identity there is nothing to assemble, which is an input error."""
    from tests.lcmdb import LcmDbWriter

    db = tmp_path / "empty.db"
    with LcmDbWriter(db, session_id="gone") as writer:
        writer.conn.execute("DELETE FROM conversations")
    live = [
        {"role": "user", "content": "deploy status?"},
        {"role": "assistant", "content": "checking"},
    ]
    params = tmp_path / "params.json"
    params.write_text(json.dumps({
        "conversationId": 1, "sessionId": "agent-main-ingest-2", "tokenBudget": 500, "prompt": "deploy",
        "liveMessages": live, "engine": line,
    }), encoding="utf-8")
    out = ctxview("assemble", str(db), "--params", str(params), "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["engineOutcome"] == "live-fallback:safe-fallback"
    assert doc["messages"] == live[:1]  # trailing assistant messages stripped
    assert doc["estimatedTokens"] == 0
    assert "the database has no conversations" in doc["warnings"][0]
    table = ctxview("assemble", str(db), "--params", str(params))
    assert table.stdout.startswith("FALLBACK: the engine would not send the assembled context below: no ")
    assert "conversation —  mode empty" in table.stdout
    bare = ctxview("assemble", str(db))
    assert bare.returncode == 2 and bare.stderr == f"ctxview: error: {db}: the database has no conversations\n"
