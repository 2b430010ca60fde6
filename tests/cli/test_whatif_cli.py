"""diagnose, check, summaries and --add-live, each checked against ``assemble --format json`` of the same settings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxview.cli import main

REPO = Path(__file__).resolve().parents[2]
DEMO = str(REPO / "sample_sessions" / "demo.db")
TIGHT = ["--budget", "3000", "--prompt", "helm rollback revision"]
RETRY = "[Retry after the previous model attempt failed or timed out]"
BEGIN, END = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>", "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assembled(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = run(capsys, "assemble", DEMO, *args, "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


# --- diagnose ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags", [TIGHT, ["--budget", "128000"], ["--budget", "2000", "--prompt-aware", "--prompt", "alembic"]]
)
def test_diagnose_json_is_the_traces_object(capsys: pytest.CaptureFixture[str], flags: list[str]) -> None:
    expected = assembled(capsys, *flags)["stages"]["assembler"]["debug"]["overflowDiagnostics"]
    code, out, _ = run(capsys, "diagnose", DEMO, *flags, "--json")
    assert code == 0
    assert json.loads(out) == expected


def test_diagnose_table_states_split_contributors_and_outcomes(capsys: pytest.CaptureFixture[str]) -> None:
    data = assembled(capsys, *TIGHT)
    diag = data["stages"]["assembler"]["debug"]["overflowDiagnostics"]
    outcome = {item["ordinal"]: item["outcome"].replace("-", " ") for item in data["trace"]["items"]}
    code, out, _ = run(capsys, "diagnose", DEMO, *TIGHT)
    assert code == 0
    lines = out.splitlines()
    total, budget = diag["totalContextTokens"], diag["tokenBudget"]
    assert lines[0] == (
        f"budget {budget:,} tokens; the context holds {diag['totalContextItems']} items of {total:,} tokens "
        f"({100 * total / budget:.0f} % of the budget, {total - budget:,} over the budget)"
    )
    assert lines[1].split() == [
        "raw", "messages", f"{diag['rawMessageTokens']:,}", "tokens", f"{100 * diag['rawMessageTokens'] / total:.0f}",
        "%", f"{diag['rawMessageCount']}", "items,", f"{diag['selectedRawMessageCount']}", "selected",
    ]
    start = lines.index("top summary contributors:") + 2
    for row, line in zip(diag["topSummaryContributors"], lines[start:], strict=False):
        words = line.split()
        assert words[:3] == [str(row["ordinal"]), f"{row['tokens']:,}", "yes" if row["selected"] else "no"]
        assert " ".join(words[3:]).startswith(outcome[row["ordinal"]])
        assert line.endswith(row["summaryId"])


# --- check ------------------------------------------------------------------------------------


def _item(data: dict[str, Any], **match: Any) -> dict[str, Any]:
    return next(i for i in data["trace"]["items"] if all(i.get(k) == v for k, v in match.items()))


def test_check_passes_when_every_expectation_holds(capsys: pytest.CaptureFixture[str]) -> None:
    data = assembled(capsys, *TIGHT)
    kept = [i for i in data["trace"]["items"] if i["outcome"] in ("kept", "fresh-tail")]
    evicted = [i for i in data["trace"]["items"] if i["outcome"] == "evicted"]
    assert kept and evicted
    code, out, _ = run(
        capsys, "check", DEMO, *TIGHT, "--keep", str(kept[0]["ordinal"]), "--keep", f"msg:{kept[-1]['messageId']}",
        "--evict", str(evicted[0]["summaryId"] or evicted[0]["ordinal"]), "--max-tokens", str(data["estimatedTokens"]),
    )
    assert code == 0
    assert out == f"ok: 4 expectations hold ({data['estimatedTokens']:,} tokens)\n"


def test_check_fails_with_the_traces_reason(capsys: pytest.CaptureFixture[str]) -> None:
    data = assembled(capsys, *TIGHT)
    summary = next(i for i in data["trace"]["items"] if i["kind"] == "summary" and i["outcome"] == "evicted")
    tail = next(i for i in data["trace"]["items"] if i["outcome"] == "fresh-tail")
    cap = data["estimatedTokens"] - 1
    code, out, err = run(
        capsys, "check", DEMO, *TIGHT, "--keep", summary["summaryId"], "--evict", str(tail["ordinal"]),
        "--max-tokens", str(cap),
    )
    assert code == 1
    assert out.splitlines() == [
        f"FAIL summary {summary['summaryId']} (item {summary['ordinal']}) evicted: "
        + summary["reason"].removeprefix("evicted: "),
        f"FAIL {tail['role']} msg:{tail['messageId']} (item {tail['ordinal']}) fresh tail (expected evicted): "
        + tail["reason"].removeprefix("fresh tail: "),
        f"FAIL final context {data['estimatedTokens']:,} tokens exceeds --max-tokens {cap:,} "
        f"({len(data['messages'])} messages, budget 3,000)",
    ]
    assert err == "ctxview check: 3 of 3 expectations failed\n"


def test_check_prompt_aware_reason_names_rank(capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--budget", "6000", "--prompt-aware", "--prompt", "alembic migration", "--fresh-tail-count", "8"]
    data = assembled(capsys, *flags)
    evicted = next(i for i in data["trace"]["items"] if i["outcome"] == "evicted")
    assert "ranked" in evicted["reason"]
    code, out, _ = run(capsys, "check", DEMO, *flags, "--keep", str(evicted["ordinal"]))
    assert code == 1
    assert out.endswith(evicted["reason"].removeprefix("evicted: ") + "\n")


def test_check_tool_call_id_names_call_and_result(capsys: pytest.CaptureFixture[str]) -> None:
    data = assembled(capsys, *TIGHT)
    clamped = next(i for i in data["trace"]["items"] if i["toolCallIds"] and i["outcome"] == "clamped")
    call_id = clamped["toolCallIds"][0]
    carriers = [i for i in data["trace"]["items"] if call_id in i["toolCallIds"]]
    assert len(carriers) == 2
    code, out, _ = run(capsys, "check", DEMO, *TIGHT, "--keep", call_id)
    assert code == 1
    assert [line.split(" (item ")[1].split(")")[0] for line in out.splitlines()] == [
        str(i["ordinal"]) for i in carriers if i["outcome"] not in ("kept", "fresh-tail")
    ]


def test_check_expect_file_toml_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = assembled(capsys, *TIGHT)
    summary = next(i for i in data["trace"]["items"] if i["kind"] == "summary")
    toml = tmp_path / "guards.toml"
    toml.write_text(f'keep = ["{summary["summaryId"]}"]\nevict = [40]\nmax-tokens = 100000\n')
    code, out, _ = run(capsys, "check", DEMO, *TIGHT, "--expect", str(toml))
    assert code == 1
    assert len(out.splitlines()) == 2  # the summary is evicted and item 40 is in the fresh tail
    js = tmp_path / "guards.json"
    js.write_text(json.dumps({"evict": [summary["summaryId"]], "max-tokens": data["estimatedTokens"]}))
    assert run(capsys, "check", DEMO, *TIGHT, "--expect", str(js))[0] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--keep", "sum_nothing"], "no item matches 'sum_nothing'"),
        (["--keep", "999"], "no item matches '999' in this conversation"),
        ([], "nothing to check"),
    ],
)
def test_check_bad_input_exits_2(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = run(capsys, "check", DEMO, *args)
    assert code == 2 and out == ""
    assert message in err


def test_check_bad_expect_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("keep = [\n")
    code, _, err = run(capsys, "check", DEMO, "--expect", str(bad))
    assert code == 2 and "not valid TOML" in err
    odd = tmp_path / "odd.json"
    odd.write_text('{"keeps": [1]}')
    code, _, err = run(capsys, "check", DEMO, "--expect", str(odd))
    assert code == 2 and "unknown key 'keeps'" in err


# --- summaries --------------------------------------------------------------------------------


def _db_tree() -> tuple[dict[str, list[str]], dict[str, list[int]], dict[int, int], dict[str, int]]:
    conn = sqlite3.connect(DEMO)
    children: dict[str, list[str]] = {}
    for sid, parent in conn.execute("SELECT summary_id, parent_summary_id FROM summary_parents ORDER BY ordinal"):
        children.setdefault(sid, []).append(parent)
    sources: dict[str, list[int]] = {}
    for sid, mid in conn.execute("SELECT summary_id, message_id FROM summary_messages ORDER BY ordinal"):
        sources.setdefault(sid, []).append(mid)
    tokens = dict(conn.execute("SELECT message_id, token_count FROM messages"))
    stored = dict(conn.execute("SELECT summary_id, token_count FROM summaries WHERE conversation_id = 1"))
    return children, sources, tokens, stored


def test_summaries_json_matches_the_database_and_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    data = assembled(capsys, *TIGHT)
    in_context = {i["summaryId"]: i for i in data["trace"]["items"] if i["kind"] == "summary"}
    code, out, _ = run(capsys, "summaries", DEMO, *TIGHT, "--json")
    assert code == 0
    tree = json.loads(out)
    children, sources, tokens, stored = _db_tree()

    def covered(sid: str) -> set[int]:
        found = set(sources.get(sid, []))
        for child in children.get(sid, []):
            found |= covered(child)
        return found

    nodes = {n["summaryId"]: n for n in tree["summaries"]}
    assert set(nodes) == set(stored)
    condensed_away = {c for cs in children.values() for c in cs}
    assert set(tree["roots"]) == set(stored) - condensed_away
    for sid, node in nodes.items():
        assert node["tokens"] == stored[sid]
        assert node["children"] == children.get(sid, [])
        assert node["coveredTokens"] == sum(tokens[m] for m in covered(sid))
        assert node["compressionRatio"] == round(node["coveredTokens"] / stored[sid], 4)
        item = in_context.get(sid)
        assert node["inContext"] is (item is not None)
        assert node["outcome"] == (item["outcome"] if item else None)
        assert node["ordinal"] == (item["ordinal"] if item else None)


def test_summaries_tree_draws_roots_first_then_children(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "summaries", DEMO, *TIGHT, "--messages")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("condensed d2 sum_a052049e383801f2  ")
    assert lines[0].endswith("item 0: evicted")
    assert lines[1].startswith("├─ condensed d1 sum_6bdfebdc2957c3e2  ")
    assert lines[2].startswith("│  ├─ leaf d0 sum_acc5b08bf88e91e9  ")
    assert lines[3].startswith("│  │  ├─ msg:1 seq 0 user 57 tok  The billing-api deploy")


# --- --add-live -------------------------------------------------------------------------------

TEXT = "Deploy is green on prod-eu; close the incident."
BY_HAND = {
    "retry": f"{RETRY}\n{TEXT}",
    "subagent": (
        "[Inter-session message] sourceSession=agent:main:subagent:ctxview-what-if sourceTool=subagent_announce\n"
        f"{BEGIN}\n[Internal task completion event]\nChild result: {TEXT}\n{END}"
    ),
    "inter-session": (
        "[Inter-session message] sourceSession=agent:main:ctxview-what-if sourceTool=sessions_send\n"
        f"{BEGIN}\n{TEXT}\n{END}"
    ),
    "user": TEXT,
}


@pytest.mark.parametrize("kind", list(BY_HAND))
def test_add_live_is_the_same_run_as_a_live_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str
) -> None:
    live = tmp_path / "live.json"
    live.write_text(json.dumps([{"role": "user", "content": BY_HAND[kind]}]))
    from_file = assembled(capsys, "--budget", "4000", "--live", str(live))
    by_flag = assembled(capsys, "--budget", "4000", "--add-live", f"{kind}:{TEXT}")
    assert by_flag == from_file
    outcome = by_flag["trace"]["liveInputs"][0]["outcome"]
    assert outcome == ("live-ignored" if kind == "user" else "appended")


def test_add_live_follows_the_live_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    host = json.loads((REPO / "sample_sessions" / "demo-live.json").read_text())
    live = tmp_path / "live.json"
    live.write_text(json.dumps([*host, {"role": "user", "content": BY_HAND["retry"]}]))
    demo_live = str(REPO / "sample_sessions" / "demo-live.json")
    by_flag = assembled(capsys, "--live", demo_live, "--add-live", f"retry:{TEXT}")
    assert by_flag == assembled(capsys, "--live", str(live))
    assert len(by_flag["trace"]["liveInputs"]) == len(host) + 1


@pytest.mark.parametrize("spec", ["shout:hello", "retry:", "no colon"])
def test_add_live_bad_spec_exits_2(capsys: pytest.CaptureFixture[str], spec: str) -> None:
    code, out, err = run(capsys, "assemble", DEMO, "--add-live", spec)
    assert code == 2 and out == ""
    assert err.startswith("ctxview: error: --add-live")


# --- diff with per-side settings -------------------------------------------------------------

SIDE = ["--budget", "3000", "--prompt-aware", "--fresh-tail-count", "8", "--prompt", "helm rollback revision"]


@pytest.mark.parametrize(
    ("a_flags", "b_flags"),
    [
        (["--scorer", "rarity"], ["--scorer", "lcm"]),
        (["--budget", "2500"], ["--budget", "4000"]),
        (["--no-prompt-aware"], ["--prompt-aware"]),
        (["--add-live", f"retry:{TEXT}"], []),
    ],
)
def test_diff_per_side_flags_compare_two_assemble_runs(
    capsys: pytest.CaptureFixture[str], a_flags: list[str], b_flags: list[str]
) -> None:
    a = assembled(capsys, *SIDE, *a_flags)
    b = assembled(capsys, *SIDE, *b_flags)
    per_side = [f"--a-{f[2:]}" if f.startswith("--") and not f.startswith("--no-") else f for f in a_flags]
    per_side = [f"--no-a-{f[5:]}" if f.startswith("--no-") else f for f in per_side]
    per_side += [f"--b-{f[2:]}" if f.startswith("--") else f for f in b_flags]
    code, out, err = run(capsys, "diff", DEMO, *SIDE, *per_side, "--json")
    result = json.loads(out)
    assert code == (0 if result["identical"] else 1), err
    outcome_a = {f"o:{i['ordinal']}": i["outcome"] for i in a["trace"]["items"]}
    outcome_a |= {f"l:{i['liveIndex']}": i["outcome"] for i in a["trace"]["liveInputs"]}
    outcome_b = {f"o:{i['ordinal']}": i["outcome"] for i in b["trace"]["items"]}
    outcome_b |= {f"l:{i['liveIndex']}": i["outcome"] for i in b["trace"]["liveInputs"]}
    expected = sorted(k for k in outcome_a.keys() | outcome_b.keys() if outcome_a.get(k) != outcome_b.get(k))
    assert sorted(c["key"] for c in result["changes"]) == expected
    assert expected  # each pair of settings changes something
    assert result["a"]["estimatedTokens"] == a["estimatedTokens"]
    assert result["b"]["estimatedTokens"] == b["estimatedTokens"]
    same = 0
    for left, right in zip(a["messages"], b["messages"], strict=False):
        if left != right:
            break
        same += 1
    assert result["prefixMessages"] == same


def test_diff_side_labels_name_the_per_side_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", DEMO, *SIDE, "--a-scorer", "rarity", "--b-scorer", "lcm")
    assert code == 1
    assert out.splitlines()[0].startswith(f"A: {DEMO} (--scorer rarity) (run, ")
    assert out.splitlines()[1].startswith(f"B: {DEMO} (--scorer lcm) (run, ")
