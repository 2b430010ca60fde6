"""§10.3 the prompt-recall cue: identifiers, coverage, sentence snippets, clipping, secrets, rendering.

Expected values follow the engine's rules; the JavaScript-specific ones (whitespace set,
UTF-16 clipping, lone-surrogate JSON escapes, ASCII-only case folding) were checked on Node 24.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxview.assembly.prompt_recall import (
    CUE_CLOSE,
    CUE_OPEN,
    CUE_PREAMBLE,
    PromptRecallError,
    RecallHit,
    build_prompt_recall_cue,
    clip_snippet,
    contains_sensitive_material,
    coverage_text,
    cue_fingerprint,
    extract_identifiers,
    extract_snippet,
    find_identifier_index,
    from_units,
    is_sensitive_identifier,
    normalize_for_coverage,
    recall_coverage_messages,
    render_line,
    scan_prompt_recall,
    to_units,
)
from tests.parity.corpus import case_dir

RETRY = "[Retry after the previous model attempt failed or timed out]"
SMILE = "\U0001f600"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


class FakeSearch:
    """Hits per identifier, recording the identifiers asked for."""

    def __init__(self, hits: dict[str, list[RecallHit]]) -> None:
        self.hits = hits
        self.calls: list[str] = []

    def __call__(self, identifier: str) -> list[RecallHit]:
        self.calls.append(identifier)
        return self.hits.get(identifier, [])


def cue_lines(content: str) -> list[str]:
    lines = content.split("\n")
    assert lines[:2] == [CUE_OPEN, CUE_PREAMBLE] and lines[-1] == CUE_CLOSE
    return lines[2:-1]


# --- identifiers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("why did RETRY_LIMIT and CACHE_TTL change? RETRY_LIMIT again", ["RETRY_LIMIT", "CACHE_TTL"]),
        ("A_1 and X_Y_Z2", ["A_1", "X_Y_Z2"]),
        ("RETRY alone, Retry_Limit, retry_limit", []),
        ("_RETRY_LIMIT and RETRY_LIMIT_ and A__B and 2FA_CODE", []),
        ("(RETRY_LIMIT), RETRY_LIMIT. RETRY_LIMIT-x", ["RETRY_LIMIT"]),
        ("\u00e9RETRY_LIMIT", ["RETRY_LIMIT"]),  # JS \b is ASCII: é is not a word character
        ("A_A B_B C_C D_D E_E", ["A_A", "B_B", "C_C", "D_D"]),
        ("API_KEY A_A B_B C_C D_D", ["A_A", "B_B", "C_C", "D_D"]),  # filtered before the limit of 4
        (None, []),
        ("", []),
        (" \u00a0\ufeff ", []),
    ],
)
def test_extract_identifiers(prompt: object, expected: list[str]) -> None:
    assert extract_identifiers(prompt) == expected


@pytest.mark.parametrize(
    "name",
    [
        "API_KEY",
        "APIKEY_PATH",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "DB_PASS",
        "AUTH_URL",
        "AWS_ACCESS_KEY_ID",
        "MY_DEPLOYKEY",
        "SECRET_NAME",
        "USER_CREDENTIALS",
        "USER_CREDENTIAL",
        "PRIVATE_KEY_PATH",
        "KEY_ID",
        "the key",
        "Password: x",
    ],
)
def test_sensitive_identifiers(name: str) -> None:
    assert is_sensitive_identifier(name)


@pytest.mark.parametrize(
    "name",
    ["MAX_TOKENS", "OAUTH_URL", "KEYBOARD_LAYOUT", "MONKEY_PATCH", "PASSTHROUGH_MODE", "TOKENIZER_NAME", "passwords"],
)
def test_not_sensitive_identifiers(name: str) -> None:
    assert not is_sensitive_identifier(name)


def test_sensitive_names_fold_ascii_case_only() -> None:
    # JS /i without /u never folds a non-ASCII character onto an ASCII one (U+212A KELVIN SIGN, U+017F LONG S).
    assert not is_sensitive_identifier("\u212aEY")
    assert not is_sensitive_identifier("\u017fecret")
    assert is_sensitive_identifier("\u00e9key\u00e9")  # é is outside [A-Za-z0-9], so "key" is a whole word


@pytest.mark.parametrize(
    ("text", "sensitive"),
    [
        ("use sk-abcdefghij", True),
        ("use sk-abcdefghi", False),  # 9 characters after the prefix
        ("pk_live_1234567890", True),
        ("xsk-abcdefghijklmn", False),  # no word boundary before sk
        ("AKIAABCDEFGHIJKLMNOP", True),
        ("akiaabcdefghijklmnop", True),
        ("AKIAABCDEFGHIJKLMNO", False),
        ("ghp_abcdefghij", True),
        ("ghx_abcdefghij", False),
        ("github_pat_" + "a" * 20, True),
        ("github_pat_" + "a" * 19, False),
        ("xoxb-1234567890", True),
        ("xoxz-1234567890", False),
        ("-----BEGIN OPENSSH PRIVATE KEY-----", True),
        ("a plain sentence", False),
    ],
)
def test_secret_values(text: str, sensitive: bool) -> None:
    assert contains_sensitive_material(text) is sensitive


# --- identifier positions and coverage ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "index"),
    [
        ("RETRY_LIMIT", 0),
        ("MAX_RETRY_LIMIT and RETRY_LIMITS then (RETRY_LIMIT)", 39),
        ("xRETRY_LIMIT", -1),
        ("RETRY_LIMIT_2", -1),
        ("\u00e9RETRY_LIMIT\u00e9", 1),
    ],
)
def test_find_identifier_index(text: str, index: int) -> None:
    assert find_identifier_index(text, "RETRY_LIMIT") == index


def test_coverage_text_flattens_and_collapses() -> None:
    assembled = [
        user("first\n\n line"),
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "REASONING_ONLY"},
                {"type": "text", "text": "visible\ttext"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"k": "TOOL_ONLY"}},
            ],
        },
        {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "result"}]},
    ]
    live = [user(f"{RETRY}\nstill TUNED_VALUE")]
    assert coverage_text(assembled, live) == f"first line visible text result {RETRY} still TUNED_VALUE"


def test_recall_coverage_messages_are_the_marker_volatile_ones() -> None:
    marker = user(f"{RETRY}\nRETRY_LIMIT")
    system_marker = {"role": "system", "content": RETRY}
    plain = user("RETRY_LIMIT is 3")
    assistant = {"role": "assistant", "content": RETRY}
    assert recall_coverage_messages([plain, marker, assistant, system_marker]) == [marker, system_marker]


def test_covered_identifier_is_not_searched() -> None:
    search = FakeSearch({"RETRY_LIMIT": [RecallHit(1, "user", "RETRY_LIMIT is 3.")]})
    assert build_prompt_recall_cue("RETRY_LIMIT?", [user("now (RETRY_LIMIT) is 4")], [], search) is None
    assert search.calls == []


def test_identifier_inside_longer_word_is_not_covered() -> None:
    search = FakeSearch({"RETRY_LIMIT": [RecallHit(1, "user", "RETRY_LIMIT is 3.")]})
    cue = build_prompt_recall_cue("RETRY_LIMIT?", [user("MAX_RETRY_LIMIT and RETRY_LIMITS")], [], search)
    assert cue is not None and search.calls == ["RETRY_LIMIT"]


def test_volatile_live_message_covers_an_identifier() -> None:
    search = FakeSearch({"RETRY_LIMIT": [RecallHit(1, "user", "RETRY_LIMIT is 3.")]})
    live = recall_coverage_messages([user(f"{RETRY}\nRETRY_LIMIT"), user("unrelated")])
    scan = scan_prompt_recall("RETRY_LIMIT", [user("hello")], live, search)
    assert scan.covered == ("RETRY_LIMIT",) and scan.matches == () and search.calls == []


def test_snippet_already_in_context_is_skipped() -> None:
    # "xA_B is 2" does not mention A_B as a word, but holds the snippet "A_B is 2" (trailing "." dropped).
    search = FakeSearch(
        {
            "A_B": [
                RecallHit(1, "user", "A_B is 2."),
                RecallHit(2, "user", "A_B is 2!"),
                RecallHit(3, "user", "A_B is 3."),
            ]
        }
    )
    cue = build_prompt_recall_cue("A_B", [user("see xA_B is 2 there")], [], search)
    assert cue is not None
    assert cue.lines == ('- user matched A_B: "A_B is 3."',)
    assert normalize_for_coverage(" A_B\tis 2. ") == "A_B is 2"
    assert normalize_for_coverage("A_B?!") == "A_B?"


# --- snippets ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "snippet"),
    [
        ("First sentence. Set RETRY_LIMIT to 5! Next one.", "Set RETRY_LIMIT to 5!"),
        ("v1.2 uses RETRY_LIMIT=3.Then more", "v1.2 uses RETRY_LIMIT=3.Then more"),
        ("intro.\r\nWe set RETRY_LIMIT to 3\r\nnext line.", "We set RETRY_LIMIT to 3"),
        ("one\rtwo RETRY_LIMIT three\rfour", "two RETRY_LIMIT three"),
        ("RETRY_LIMIT is 3. Later.", "RETRY_LIMIT is 3."),
        ("MAX_RETRY_LIMIT and RETRY_LIMITS. But RETRY_LIMIT = 2. End", "But RETRY_LIMIT = 2."),
        ("Hi!   RETRY_LIMIT?", "RETRY_LIMIT?"),
        ("e.g. RETRY_LIMIT", "RETRY_LIMIT"),
        ("Really?RETRY_LIMIT wins", "RETRY_LIMIT wins"),  # the text before ends at "?": a sentence break
        ("Done.\u0085RETRY_LIMIT is 3", "Done.\u0085RETRY_LIMIT is 3"),  # U+0085 is not JS whitespace
        ("Done.\ufeffRETRY_LIMIT is 3", "RETRY_LIMIT is 3"),  # U+FEFF is
        ("set\tRETRY_LIMIT\u00a0\u00a0to 3 .\u2028x", "set RETRY_LIMIT to 3 ."),
        ("RETRY_LIMIT. x", "RETRY_LIMIT."),
        ("RETRY_LIMIT is 3 . 4", "RETRY_LIMIT is 3 ."),
        ("only MAX_RETRY_LIMIT here", None),
        ("  \n RETRY_LIMIT \n ", "RETRY_LIMIT"),
    ],
)
def test_extract_snippet(content: str, snippet: str | None) -> None:
    assert extract_snippet(content, "RETRY_LIMIT") == snippet


@pytest.mark.parametrize(
    "content",
    [
        "RETRY_LIMIT uses the API_KEY.",
        "RETRY_LIMIT is the key setting.",
        "RETRY_LIMIT protects the password.",
        "RETRY_LIMIT with sk-abcdefghij12",
        "RETRY_LIMIT for AKIAABCDEFGHIJKLMNOP",
        "RETRY_LIMIT via ghp_abcdefghij",
    ],
)
def test_snippet_with_sensitive_material_is_dropped(content: str) -> None:
    assert extract_snippet(content, "RETRY_LIMIT") is None


def test_sensitive_material_outside_the_sentence_does_not_matter() -> None:
    content = "The API_KEY is elsewhere. RETRY_LIMIT stays 3. Token sk-abcdefghij12 too."
    assert extract_snippet(content, "RETRY_LIMIT") == "RETRY_LIMIT stays 3."
    assert extract_snippet("RETRY_LIMIT keeps passwords safe", "RETRY_LIMIT") == "RETRY_LIMIT keeps passwords safe"
    assert extract_snippet("RETRY_LIMIT \u212aEY \u017fecret", "RETRY_LIMIT") == "RETRY_LIMIT \u212aEY \u017fecret"


# --- clipping ------------------------------------------------------------------------------------


def test_clip_keeps_900_units_before_the_identifier() -> None:
    content = "A" * 1000 + " RETRY_LIMIT " + "B" * 1000
    expected = "..." + "A" * 899 + " RETRY_LIMIT " + "B" * 288 + "..."
    assert clip_snippet(content, "RETRY_LIMIT") == expected
    assert extract_snippet(content, "RETRY_LIMIT") == expected


def test_clip_near_the_start_and_the_end() -> None:
    head = "x RETRY_LIMIT " + "y" * 1500
    assert clip_snippet(head, "RETRY_LIMIT") == head[:1200] + "..."
    tail = "z" * 1500 + " RETRY_LIMIT"
    assert clip_snippet(tail, "RETRY_LIMIT") == "..." + tail[601:]
    exact = "w" * 1188 + " RETRY_LIMIT"  # 1200 units: not clipped
    assert clip_snippet(exact, "RETRY_LIMIT") == exact


def test_clip_counts_utf16_units_and_can_split_a_pair() -> None:
    content = SMILE * 600 + " RETRY_LIMIT"  # 1212 units; the identifier starts at unit 1201
    # the cut starts at unit 301, the low half of the 151st emoji
    expected = "...\ude00" + SMILE * 449 + " RETRY_LIMIT"
    assert clip_snippet(content, "RETRY_LIMIT") == expected
    assert extract_snippet(content, "RETRY_LIMIT") == expected
    line = render_line("RETRY_LIMIT", "user", expected)
    assert line == '- user matched RETRY_LIMIT: "...\\ude00' + SMILE * 449 + ' RETRY_LIMIT"'


def test_render_clips_the_collapsed_snippet_again() -> None:
    content = "A" * 1000 + " RETRY_LIMIT " + "B" * 1000
    search = FakeSearch({"RETRY_LIMIT": [RecallHit(7, "assistant", content)]})
    cue = build_prompt_recall_cue("RETRY_LIMIT", [], [], search)
    assert cue is not None
    # the clip gives 1206 characters; the rendered line keeps 1200 of them and adds "..."
    assert cue.lines == ('- assistant matched RETRY_LIMIT: "...' + "A" * 899 + " RETRY_LIMIT " + "B" * 285 + '..."',)


def test_render_clip_splits_a_pair_into_an_escaped_high_surrogate() -> None:
    content = "ab RETRY_LIMIT " + SMILE * 700
    search = FakeSearch({"RETRY_LIMIT": [RecallHit(2, "user", content)]})
    cue = build_prompt_recall_cue("RETRY_LIMIT", [], [], search)
    assert cue is not None
    assert cue.lines == ('- user matched RETRY_LIMIT: "ab RETRY_LIMIT ' + SMILE * 592 + '\\ud83d..."',)
    assert cue.matches[0].snippet == "ab RETRY_LIMIT " + SMILE * 592 + "\ud83d..."


def test_unit_strings_round_trip() -> None:
    text = "a" + SMILE + "\u00e9"
    units = to_units(text)
    assert len(units) == 4 and units[1:3] == "\ud83d\ude00"
    assert from_units(units) == text
    assert from_units(units[:2]) == "a\ud83d"


# --- rendering -----------------------------------------------------------------------------------


def test_render_line_escapes_like_json_stringify() -> None:
    snippet = 'RETRY_LIMIT says "hi" \\ path\u0001x\u007f\u2063'
    assert render_line("RETRY_LIMIT", "assistant", snippet) == (
        '- assistant matched RETRY_LIMIT: "RETRY_LIMIT says \\"hi\\" \\\\ path\\u0001x\u007f\u2063"'
    )
    assert render_line("A_B", "user", " A_B \n\n is\t2 ") == '- user matched A_B: "A_B is 2"'


# --- the cue -------------------------------------------------------------------------------------


def test_cue_takes_at_most_four_lines_in_search_order() -> None:
    search = FakeSearch(
        {
            "A_A": [
                RecallHit(5, "assistant", "A_A was 5."),
                RecallHit(4, "tool", "A_A from a tool."),
                RecallHit(3, "system", "A_A from system."),
                RecallHit(2, "user", "   "),
                RecallHit(5, "assistant", "A_A was 5."),  # the same message again for this identifier
                RecallHit(1, "user", "Earlier. A_A was 1! Later."),
            ],
            "B_B": [RecallHit(5, "user", "B_B too."), RecallHit(6, "user", "B_B again."), RecallHit(7, "user", "B_B.")],
            "C_C": [RecallHit(8, "user", "C_C.")],
        }
    )
    cue = build_prompt_recall_cue("A_A then B_B then C_C", [user("context")], [], search)
    assert cue is not None
    assert search.calls == ["A_A", "B_B"]  # four lines found before C_C
    assert cue.lines == (
        '- assistant matched A_A: "A_A was 5."',
        '- user matched A_A: "A_A was 1!"',
        '- user matched B_B: "B_B too."',
        '- user matched B_B: "B_B again."',
    )
    assert cue.message_ids_by_identifier() == {"A_A": (5, 1), "B_B": (5, 6)}
    assert cue.matched_messages == 4
    assert cue.scan.identifiers == ("A_A", "B_B", "C_C") and cue.scan.searched == ("A_A", "B_B")
    assert cue.message == {"role": "user", "content": "\n".join((CUE_OPEN, CUE_PREAMBLE, *cue.lines, CUE_CLOSE))}
    assert cue.token_count == (len(cue.message["content"]) + 3) // 4  # ASCII: ceil(length / 4)


def test_no_cue_without_identifiers_or_lines() -> None:
    search = FakeSearch({"A_B": [RecallHit(1, "tool", "A_B.")]})
    assert build_prompt_recall_cue("lowercase only", [], [], search) is None
    assert build_prompt_recall_cue("GITHUB_TOKEN", [], [], search) is None
    assert search.calls == []
    assert build_prompt_recall_cue("A_B", [], [], search) is None
    assert search.calls == ["A_B"]


def test_non_text_content_fails_when_reached() -> None:
    bad = RecallHit(9, "user", b"A_B blob")
    with pytest.raises(PromptRecallError):
        build_prompt_recall_cue("A_B", [], [], FakeSearch({"A_B": [bad]}))
    # a hit after the fourth line is never read, as in the engine
    good = [RecallHit(i, "user", f"A_B {i}.") for i in range(1, 5)]
    cue = build_prompt_recall_cue("A_B", [], [], FakeSearch({"A_B": [*good, bad]}))
    assert cue is not None and cue.matched_messages == 4


def test_search_errors_propagate() -> None:
    def failing(identifier: str) -> list[RecallHit]:
        raise RuntimeError("database is locked")

    with pytest.raises(RuntimeError, match="locked"):
        build_prompt_recall_cue("A_B", [], [], failing)


def test_case_303_cue_and_fingerprint() -> None:
    expected = json.loads((case_dir("303") / "expected.json").read_text(encoding="utf-8"))
    params = json.loads((case_dir("303") / "params.json").read_text(encoding="utf-8"))
    search = FakeSearch({"CACHE_TTL_SECONDS": [RecallHit(1, "user", "set CACHE_TTL_SECONDS = 42.")]})
    cue = build_prompt_recall_cue(params["prompt"], expected["stages"]["assembler"]["messages"], [], search)
    assert cue is not None
    assert cue.message == expected["messages"][0]
    # the engine's internal estimate after the cue: assembler 9 + cue 71 = 80
    assert cue.token_count == 71
    assert expected["stages"]["volatileAppend"]["estimatedTokens"] == 9 + cue.token_count
    assert cue_fingerprint(cue.message) == expected["contextProjection"]["fingerprint"]
