"""Tokenizers the scorers share: the reference LCM one and a Unicode/CJK-aware option.

The reference tokenizer (spec §6.2, scorers.md A) lowercases, splits on every
run of characters outside ``[a-z0-9]`` and keeps pieces of ≥ 2 characters, so
any non-ASCII letter is a separator and a Chinese or Japanese prompt has no
terms at all.  The ``unicode`` tokenizer keeps words of every script that
writes spaces and cuts CJK runs into overlapping character bigrams (the
usual trick of CJK search indexes), so such prompts can score.  On ASCII
text both give the same terms, so switching tokenizer only changes what the
reference one cannot see.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from ctxview.assembly.resolve import tokenize as _reference_tokenize
from ctxview.errors import InputError

__all__ = [
    "LCM",
    "TOKENIZERS",
    "UNICODE",
    "Tokenizer",
    "get_tokenizer",
    "is_cjk",
    "lcm_tokenize",
    "unicode_tokenize",
]

# The reference tokenizer is the assembler's own (§6.2): one implementation for both.
lcm_tokenize = _reference_tokenize


# Scripts written without spaces between words, cut into bigrams.
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana (incl. ー)
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK extensions B–G
)


def is_cjk(ch: str) -> bool:
    """True for a Han, Kana or Hangul character (the bigram scripts)."""
    code = ord(ch)
    if code < 0x1100:
        return False
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def unicode_tokenize(text: str) -> list[str]:
    """Unicode-aware terms: NFKC, lowercase, words of ≥ 2 characters, CJK bigrams.

    A run of CJK characters gives its overlapping bigrams (``数据库`` →
    ``数据, 据库``); a CJK character standing alone is kept as a unigram,
    because one ideograph is a word.  Other letters, digits and combining
    marks form words; everything else (punctuation, ``_``, spaces) separates.
    """
    folded = unicodedata.normalize("NFKC", text).lower()
    if folded.isascii():
        return _reference_tokenize(folded)
    terms: list[str] = []
    run: list[str] = []
    run_cjk = False

    def flush() -> None:
        if not run:
            return
        if run_cjk:
            if len(run) == 1:
                terms.append(run[0])
            else:
                terms.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
        elif len(run) >= 2:
            terms.append("".join(run))
        run.clear()

    for ch in folded:
        if ch.isascii():
            cjk = False
            word = ch.isalnum()
        else:
            category = unicodedata.category(ch)[0]
            if category == "M":
                # a combining mark belongs to the word it follows; on an ideograph
                # (or with nothing before it) it is ignored without breaking the run
                if run and not run_cjk:
                    run.append(ch)
                continue
            word = category in "LN"
            cjk = word and is_cjk(ch)
        if not word:
            flush()
            continue
        if run and cjk != run_cjk:
            flush()
        run_cjk = cjk
        run.append(ch)
    flush()
    return terms


def _identity(text: str) -> str:
    return text


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """A named tokenizer plus the text normalisation its substring matches use."""

    name: str
    tokenize: Callable[[str], list[str]]
    normalize: Callable[[str], str]  # applied before lowercasing for substring matching
    unicode_letters: bool  # rarity term extraction admits non-ASCII letters

    def fold(self, text: str) -> str:
        """The form substring matches compare: normalised, then lowercased."""
        return self.normalize(text).lower()


LCM = Tokenizer("lcm", lcm_tokenize, _identity, unicode_letters=False)
UNICODE = Tokenizer("unicode", unicode_tokenize, _nfkc, unicode_letters=True)
TOKENIZERS: dict[str, Tokenizer] = {"lcm": LCM, "unicode": UNICODE}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """``lcm`` (the reference) or ``unicode``; anything else is an InputError."""
    if isinstance(name, Tokenizer):
        return name
    tokenizer = TOKENIZERS.get(name)
    if tokenizer is None:
        choices = ", ".join(TOKENIZERS)
        raise InputError(f"unknown tokenizer {name!r}; choose one of: {choices}")
    return tokenizer
