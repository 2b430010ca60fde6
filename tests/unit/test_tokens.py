from __future__ import annotations

from ctxview.assembly.tokens import estimate_tokens, serialized_message_tokens, serialized_tokens


def test_estimate_tokens_golden_vectors() -> None:
    # spec §12 G4 and §11.9
    assert estimate_tokens("hello") == 2
    assert estimate_tokens("你好") == 3
    assert estimate_tokens("😀") == 2
    assert estimate_tokens("") == 0
    assert estimate_tokens("Start the job\nnow — 你好 😀") == 11


def test_estimate_tokens_weights_each_script() -> None:
    assert estimate_tokens("a" * 8) == 2
    assert estimate_tokens("ひらがなカタカナ") == 12  # kana 1.5 each
    assert estimate_tokens("한국") == 3  # hangul
    assert estimate_tokens("\U00020001") == 2  # CJK extension B: 1.5, rounded up
    assert estimate_tokens("Ａ") == 2  # full-width form: 1.5
    assert estimate_tokens("。") == 2  # CJK punctuation: 1.5
    assert estimate_tokens("😀😀a") == 5  # 2 + 2 + 0.25


def test_serialized_estimate_counts_the_whole_object() -> None:
    message = {"role": "user", "content": "Start the job\nnow — 你好 😀"}
    assert serialized_message_tokens(message) == 18  # §12 G4: "\n" is two characters once serialized
    assert serialized_tokens([message, message]) == 36


def test_opaque_payloads_cost_a_fixed_surcharge() -> None:
    b64 = ("QUJDRA0" * 700)[:4200]
    image = {"role": "user", "content": [{"type": "image", "data": b64}]}
    placeholder_only = {"role": "user", "content": [{"type": "image", "data": "[opaque binary payload]"}]}
    assert serialized_message_tokens(image) == serialized_message_tokens(placeholder_only) + 1600
    data_url = {"role": "user", "content": "data:image/png;base64," + "A1" * 2100}
    assert (
        serialized_message_tokens(data_url)
        == estimate_tokens('{"role":"user","content":"[opaque binary payload]"}') + 1600
    )


def test_long_text_is_never_treated_as_opaque() -> None:
    prose = "word " * 1000
    as_text = {"role": "user", "content": [{"type": "text", "text": prose}]}
    assert serialized_message_tokens(as_text) == estimate_tokens(
        '{"role":"user","content":[{"type":"text","text":"' + prose + '"}]}'
    )
    b64_in_text = {"type": "text", "text": "QUJDRA0" * 700}
    assert serialized_message_tokens(b64_in_text) == estimate_tokens('{"type":"text","text":"' + "QUJDRA0" * 700 + '"}')


def _replacer_estimate(message: object) -> int:
    """The §4.3 estimate the long way: replace opaque payloads everywhere, then stringify (no short cut)."""
    from ctxview.assembly.tokens import OPAQUE_SURCHARGE, _replace_opaque
    from ctxview.jsjson import js_stringify

    counter = [0]
    replaced = _replace_opaque(message, "", counter)
    return estimate_tokens(js_stringify(replaced)) + OPAQUE_SURCHARGE * counter[0]


def test_the_short_text_short_cut_agrees_with_the_replacer_at_every_length() -> None:
    """Messages around the lengths where the short cut and the replacer change their minds."""
    payload_b64 = "QUJDRA0x" * 600  # 4,800 characters of base64-looking text
    cases: list[object] = []
    for n in (2045, 2046, 2047, 2048, 2049, 2050, 4094, 4095, 4096, 4097):
        for text in ("a" * n, "é" * n, "中" * n, "\n" * n, "😀" * (n // 2), "data:" + "A" * n):
            cases.append({"role": "user", "content": text})
            cases.append({"role": "tool", "content": [{"type": "image", "data": text}, {"type": "text", "text": "x"}]})
            cases.append([text, {"source": text[: n // 2]}])
    cases.append({"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": payload_b64}}]})
    cases.append({"role": "user", "content": [{"type": "image", "bytes": payload_b64}], "n": 3, "ok": None})
    for message in cases:
        assert serialized_message_tokens(message) == _replacer_estimate(message), str(message)[:60]
