"""Appendix B and §9.5(b): recognizing the channel-decorated face of the current turn."""

from __future__ import annotations

from ctxview.assembly.decoration import (
    contains_bare_body,
    decorated_bodies_match,
    decorated_body,
    is_bare_face_of_current_turn,
    is_recap_entry_line,
    is_recognized_decorated_bare_body,
    recap_length,
    split_context_blocks,
    split_prelude,
    strip_tags,
    strip_timestamp,
)

TS = "[Sun 2026-06-21 13:19 GMT+3]"
FENCE = "```"


def meta_block(body: str, heading: str = "Conversation info (untrusted metadata)") -> str:
    return f"{heading}:\n{FENCE}json\n{body}\n{FENCE}"


# --- B.1 -------------------------------------------------------------------------------------


def test_strip_timestamp() -> None:
    assert strip_timestamp(f"{TS} hello") == "hello"
    assert strip_timestamp(f"  {TS}\n\thello") == "hello"
    assert strip_timestamp("[Sun 2026-06-21 13:19 UTC] hello") == "[Sun 2026-06-21 13:19 UTC] hello"
    assert strip_timestamp("hello [Sun 2026-06-21 13:19 GMT] x") == "hello [Sun 2026-06-21 13:19 GMT] x"
    # JS whitespace: U+FEFF is \s in JS (not in Python); U+001C is \s in Python but not in JS
    assert strip_timestamp(f"\ufeff{TS} hi") == "hi"
    assert strip_timestamp(f"\x1c{TS} hi") == f"\x1c{TS} hi"
    # ASCII digits only (JS \d)
    assert strip_timestamp("[Sun ２026-06-21 GMT] hi") == "[Sun ２026-06-21 GMT] hi"


# --- B.2 / B.3 / B.4 -------------------------------------------------------------------------------


def test_decorated_body_basic_and_separator() -> None:
    content = meta_block('{"message_id": "1"}') + "\n\nhello"
    assert decorated_body(content, strip=False) == "hello"
    assert decorated_body(f"{TS} " + content, strip=False) == "hello"
    assert decorated_body(content + "\n", strip=False) == "hello\n"
    # only one separator (up to two line breaks) is removed
    assert decorated_body(meta_block('{"message_id": "1"}') + "\n\n\nhello", strip=False) == "\nhello"


def test_metadata_block_must_be_a_known_object() -> None:
    assert decorated_body(meta_block('{"unknown": 1}') + "\nx", strip=False) is None
    assert decorated_body(meta_block('[{"message_id": 1}]') + "\nx", strip=False) is None
    assert decorated_body(meta_block("{not json}") + "\nx", strip=False) is None
    # JSON.parse accepts only JSON whitespace around the value
    assert decorated_body(meta_block('\u00a0{"message_id": "1"}') + "\nx", strip=False) is None
    assert decorated_body(meta_block('{"name": "a"}', "Sender (untrusted metadata)") + "\nx", strip=False) == "x"
    assert decorated_body(meta_block('{"chat_id": "a"}', "Sender (untrusted metadata)") + "\nx", strip=False) is None


def test_second_metadata_block_is_consumed() -> None:
    content = (
        meta_block('{"sender_id": "7"}')
        + "\n\n"
        + meta_block('{"name": "Ann"}', "Sender (untrusted metadata)")
        + "\n\nbody text"
    )
    assert decorated_body(content, strip=False) == "body text"


def test_delivery_prelude() -> None:
    content = "Delivery: webchat\nmore\n\n" + meta_block('{"message_id": "1"}') + "\nhi"
    assert split_prelude(content) == ("Delivery: webchat\nmore\n\n", meta_block('{"message_id": "1"}') + "\nhi")
    assert decorated_body(content, strip=False) == "hi"
    assert split_prelude("  plain") == ("", "plain")


def test_strip_tags() -> None:
    assert strip_tags("<relevant-memories>m</relevant-memories>\n<derived-focus>f</derived-focus> body") == " body"
    assert strip_tags("  <derived-focus> never closed") == "  <derived-focus> never closed"
    assert strip_tags("<custom>x</custom> body") == "<custom>x</custom> body"


def test_decorated_bodies_match() -> None:
    live = meta_block('{"message_id": "1"}') + "\n\n<relevant-memories>m</relevant-memories>\nhello"
    assembled = meta_block('{"message_id": "2"}') + "\n\nhello"
    assert decorated_bodies_match(live, assembled)
    # whitespace-only difference
    assert not decorated_bodies_match(live, meta_block('{"message_id": "2"}') + "\n\nhello ")
    # a user-typed known tag in the assembled face is kept there
    tagged = meta_block('{"message_id": "2"}') + "\n\n<relevant-memories>m</relevant-memories>\nhello"
    assert not decorated_bodies_match(live, tagged)
    # an undecorated assembled row has no body
    assert not decorated_bodies_match(live, "hello")
    # blank bodies never match
    assert not decorated_bodies_match(
        meta_block('{"message_id": "1"}') + "\n ", meta_block('{"message_id": "2"}') + "\n "
    )


# --- B.6 -------------------------------------------------------------------------------------------

RECAP = "Chat history since last reply (untrusted, for context):"


def test_recap_line_form() -> None:
    text = f"{RECAP}\n#12 Mon 2026-06-22 10:00:00 UTC alice: hi there\n#13 bob: hello\n\nactual body"
    assert text[recap_length(text) :] == "\n\nactual body"
    assert recap_length(f"{RECAP}\n#13 bob: hello") == len(f"{RECAP}\n#13 bob: hello")
    assert recap_length(f"{RECAP}\r\n#13 bob: hello\r\n") == len(f"{RECAP}\r\n#13 bob: hello")
    # a run that peters out into other text is not stripped at all
    assert recap_length(f"{RECAP}\n#13 bob: hello\nactual body") == 0
    # entries need an anchor token
    assert recap_length(f"{RECAP}\nbob: hello\n\nx") == 0
    assert recap_length("Conversation context (untrusted, chronological, selected for current message):\n#1 a: b") > 0


def test_recap_entry_lines() -> None:
    assert is_recap_entry_line("#a b: c")
    assert is_recap_entry_line("Mon 2026-06-22 10:00:00 UTC x: y")
    assert is_recap_entry_line("#1 : a: b")  # ": " searched from index 1
    assert not is_recap_entry_line("alice: hi")
    assert not is_recap_entry_line("#1 alice: ")
    assert not is_recap_entry_line("#1 : x")
    assert not is_recap_entry_line("#1alice: hi")


def test_recap_json_form() -> None:
    good = f'{RECAP}\n{FENCE}json\n[{{"sender": "a", "body": "x"}}]\n{FENCE}\n\nbody'
    assert good[recap_length(good) :] == "\n\nbody"
    for payload in ("[]", "[1]", '{"sender": "a"}', '[{"other": 1}]'):
        assert recap_length(f"{RECAP}\n{FENCE}json\n{payload}\n{FENCE}\n#1 a: b") == 0


def test_context_blocks_then_recap_in_a_body() -> None:
    reply = f'Reply target of current user message (untrusted, for context):\n{FENCE}json\n{{"a": 1}}\n{FENCE}'
    assert split_context_blocks(f"\n{reply}\n rest") == "\n rest"
    assert split_context_blocks(f"Location (untrusted metadata):\n{FENCE}json\nnull\n{FENCE}x").startswith("Location")
    content = meta_block('{"history_count": 2}') + "\n\n" + reply + f"\n\n{RECAP}\n#12 alice: hi\n\nthe question"
    assert decorated_body(content, strip=False) == "the question"
    # without history_count the recap is part of the body
    no_history = meta_block('{"message_id": "1"}') + f"\n\n{RECAP}\n#12 alice: hi\n\nq"
    assert decorated_body(no_history, strip=False) == f"{RECAP}\n#12 alice: hi\n\nq"
    fractional = meta_block('{"history_count": 1.5}') + f"\n\n{RECAP}\n#12 alice: hi\n\nq"
    assert decorated_body(fractional, strip=False) == f"{RECAP}\n#12 alice: hi\n\nq"


# --- §9.5(b) -------------------------------------------------------------------------------------------


def test_contains_bare_body() -> None:
    assert contains_bare_body(f"{TS} B", "B")
    assert contains_bare_body("memory\nB  ", "B")
    assert contains_bare_body(f"memory\n{TS} B", f"{TS} B")
    assert contains_bare_body("memory\nline one\nline two", "line one\nline two")
    assert contains_bare_body(f"memory\n{TS} line one\nline two", "line one\nline two")
    assert not contains_bare_body("memoryB", "B")
    assert not contains_bare_body("x B", "B")
    assert not contains_bare_body("B", "   ")
    assert not contains_bare_body(f"{TS}", TS)


def test_recognized_decorated_bare_body() -> None:
    assert is_recognized_decorated_bare_body(f"{TS} B", "B")
    assert is_recognized_decorated_bare_body(f"<relevant-memories>m</relevant-memories>\n{TS} B", "B")
    assert is_recognized_decorated_bare_body(f"memory\n{TS} line one\nline two", "line one\nline two")
    # §11.6 #49: a plain final line is not decoration evidence
    assert not is_recognized_decorated_bare_body("here is some unrelated preamble text\nok", "ok")


def test_bare_face_of_current_turn() -> None:
    live = "<relevant-memories>m</relevant-memories>\nhere is more context\nok"
    assert is_bare_face_of_current_turn(live, "ok", assembled_is_last_user=True)
    assert not is_bare_face_of_current_turn(live, "ok", assembled_is_last_user=False)
    assert not is_bare_face_of_current_turn("ok", "ok", assembled_is_last_user=True)
    # the assembled row must be strictly shorter in UTF-16 units
    assert not is_bare_face_of_current_turn(f"{TS} 😀", f"{TS} 😀", assembled_is_last_user=False)
    assert is_bare_face_of_current_turn(f"{TS} 😀", "😀", assembled_is_last_user=False)
    decorated = meta_block('{"message_id": "1"}') + "\n\n<relevant-memories>m</relevant-memories>\nhello"
    assembled = meta_block('{"message_id": "2"}') + "\n\nhello"
    assert is_bare_face_of_current_turn(decorated, assembled, assembled_is_last_user=True)
    assert not is_bare_face_of_current_turn(decorated, assembled, assembled_is_last_user=False)
