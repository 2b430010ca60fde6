"""The §6.2 tokenizer and BM25-lite score, with per-term explanation (§11.1 #17)."""

from __future__ import annotations

from ctxview.assembly.resolve import ResolvedItem, tokenize
from ctxview.assembly.scoring import is_searchable, prompt_terms, score_item, score_text
from ctxview.model import TermMatch


def test_tokenizer() -> None:
    assert tokenize("Hello World") == ["hello", "world"]
    assert tokenize("I am a test") == ["am", "test"]
    assert tokenize("") == []
    assert tokenize("   ") == []
    assert tokenize("auth2 login-flow v3.1") == ["auth2", "login", "flow", "v3"]
    assert tokenize("Hello World, a b_c d1") == ["hello", "world", "d1"]
    assert tokenize("内存泄漏 🔥 café") == ["caf"]


def test_searchable_prompts() -> None:
    assert prompt_terms("Deploy deploy PROD") == ["deploy", "prod"]
    for prompt in (None, "", "   ", "?!", "a b c", "内存泄漏", "é ü ñ"):
        assert not is_searchable(prompt)
    assert is_searchable("ok")


def test_score_rules() -> None:
    assert score_text("", "deploy") == (0.0, ())
    assert score_text("deploy", "") == (0.0, ())
    assert score_text("nothing here", "deploy")[0] == 0.0
    # repeating a prompt word does not change the score; matching is case-insensitive
    assert score_text("Deploy the app", "deploy deploy DEPLOY")[0] == score_text("deploy the app", "deploy")[0]
    score, matches = score_text("deploy to prod then deploy again", "prod deploy")
    assert score == 1 / 6 + 2 / 6
    assert matches == (TermMatch("prod", 1, 1 / 6), TermMatch("deploy", 2, 2 / 6))


def test_summation_order_is_the_prompt_order() -> None:
    text = " ".join(["alpha"] * 1 + ["beta"] * 3 + ["gamma"] * 7 + ["pad"] * 10)
    expected = 0.0
    for tf in (7, 1, 3):  # gamma, alpha, beta
        expected += tf / 21
    assert score_text(text, "gamma alpha beta")[0] == expected
    assert [m.term for m in score_text(text, "gamma alpha beta")[1]] == ["gamma", "alpha", "beta"]


def test_g2_scores_on_json_item_text() -> None:
    # §12 G2: the assistant item text is the JSON of its block list ("type", "text", "text" count)
    assistant_text = '[{"type":"text","text":"Use the deploy script with the prod flag."}]'
    assert score_text("How do we deploy to prod?", "deploy prod")[0] == 2 / 6
    assert score_text(assistant_text, "deploy prod")[0] == 2 / 11
    assert score_text("Discussed the deploy pipeline & <config> for staging.", "deploy prod")[0] == 1 / 7


def test_item_scores_are_cached_per_prompt() -> None:
    item = ResolvedItem(
        ordinal=0, stored_message={"role": "user", "content": "x"}, tokens=1, is_message=True, text="deploy prod deploy"
    )
    first = score_item(item, ("deploy",))
    assert first == (2 / 3, (TermMatch("deploy", 2, 2 / 3),))
    assert score_item(item, ("deploy",))[1][0] is first[1][0]
    assert score_item(item, ("prod",))[0] == 1 / 3


def test_long_prompts_score_like_short_ones() -> None:
    # a long prompt walks the item's terms, but the sum still runs in prompt order (bit-identical)
    from ctxview.assembly.scoring import score_counts

    vocab = [f"w{i}" for i in range(200)]
    text = " ".join(vocab[(i * 7) % 200] for i in range(60))
    prompt_words = [vocab[(i * 13) % 200] for i in range(300)]
    terms = tuple(prompt_terms(" ".join(prompt_words)))
    item = ResolvedItem(ordinal=0, stored_message={"role": "user", "content": "x"}, tokens=1, is_message=True,
                        text=text)
    assert len(terms) > 8 and len(item.term_counts()[0]) < len(terms)
    assert score_item(item, terms) == score_counts(*item.term_counts(), terms)
