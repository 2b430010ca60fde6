"""Tokenizers of ctxview.scorers: the reference one (E1, E2) and the Unicode/CJK option."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.errors import InputError
from ctxview.scorers.bm25lite import prompt_terms
from ctxview.scorers.tokenize import LCM, UNICODE, get_tokenizer, is_cjk, lcm_tokenize, unicode_tokenize

# --- E1: the reference tokenizer -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Hello, WORLD! a b2 c", ["hello", "world", "b2"]),
        ("café naïve", ["caf", "na", "ve"]),
        ("snake_case v1.2 x", ["snake", "case", "v1"]),
        ("数据库迁移", []),
        ("Hello World, a b_c d1", ["hello", "world", "d1"]),  # the §6.2 example
        ("", []),
    ],
)
def test_e1_reference_tokenizer(text: str, terms: list[str]) -> None:
    assert lcm_tokenize(text) == terms


def _transcribed_tokenize(text: str) -> list[str]:
    """§6.2 word for word: lowercase, split on runs outside [a-z0-9], drop pieces of length ≤ 1."""
    return [piece for piece in re.split(r"[^a-z0-9]+", text.lower()) if len(piece) > 1]


_TEXT = st.text(
    alphabet=st.sampled_from(list('abcXYZ019 _-.,:\n\t"{}[]éİKßΣ数据库データ한글😀\u3000\u00a0')), max_size=60
)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_reference_tokenizer_equals_the_spec_transcription(text: str) -> None:
    assert lcm_tokenize(text) == _transcribed_tokenize(text)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_reference_tokenizer_equals_the_assemblers(text: str) -> None:
    resolve = pytest.importorskip("ctxview.assembly.resolve")
    assert lcm_tokenize(text) == resolve.tokenize(text)


# --- E2: searchability ---------------------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["a I", "数据库迁移", "", "   ", "!!! ?", None])
def test_e2_prompts_without_terms_are_not_searchable(prompt: str | None) -> None:
    assert prompt_terms(prompt, LCM) == ()


def test_e2_cjk_prompt_is_searchable_with_the_unicode_tokenizer() -> None:
    assert prompt_terms("数据库迁移", UNICODE) == ("数据", "据库", "库迁", "迁移")


# --- the Unicode / CJK tokenizer -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("café naïve", ["café", "naïve"]),
        ("cafe\u0301", ["café"]),  # NFKC composes the combining accent
        ("数据库迁移", ["数据", "据库", "库迁", "迁移"]),
        ("猫", ["猫"]),  # a lone ideograph is a word
        ("猫 と 犬", ["猫", "と", "犬"]),
        ("Привет, мир", ["привет", "мир"]),
        ("数据库migration失败", ["数据", "据库", "migration", "失败"]),
        ("ＡＰＩ key", ["api", "key"]),  # fullwidth Latin folds to ASCII
        ("データベースの移行、完了", ["デー", "ータ", "タベ", "ベー", "ース", "スの", "の移", "移行", "完了"]),
        ("데이터베이스 마이그레이션", ["데이", "이터", "터베", "베이", "이스", "마이", "이그", "그레", "레이", "이션"]),
        ("snake_case v1.2 x", ["snake", "case", "v1"]),
        ("", []),
    ],
)
def test_unicode_tokenizer(text: str, terms: list[str]) -> None:
    assert unicode_tokenize(text) == terms


_ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=80)


@settings(max_examples=300, deadline=None)
@given(_ASCII)
def test_unicode_tokenizer_equals_the_reference_on_ascii(text: str) -> None:
    assert unicode_tokenize(text) == lcm_tokenize(text)


def test_is_cjk_covers_han_kana_hangul_only() -> None:
    assert all(is_cjk(ch) for ch in "数据ひらカタ한글々ー\U00020000")
    assert not any(is_cjk(ch) for ch in "aé€、。😀Я")
    # the Katakana middle dot is in the Kana block but is punctuation: it separates
    assert unicode_tokenize("データ・ベース") == ["デー", "ータ", "ベー", "ース"]


def test_get_tokenizer() -> None:
    assert get_tokenizer("lcm") is LCM
    assert get_tokenizer("unicode") is UNICODE
    assert get_tokenizer(UNICODE) is UNICODE
    with pytest.raises(InputError, match="unknown tokenizer 'icu'; choose one of: lcm, unicode"):
        get_tokenizer("icu")


def test_fold_is_what_substring_matches_compare() -> None:
    assert LCM.fold("ＡＰＩ Key") == "ａｐｉ key"
    assert UNICODE.fold("ＡＰＩ Key") == "api key"
