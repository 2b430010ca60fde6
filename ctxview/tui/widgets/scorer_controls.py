"""The scorer and tokenizer selectors of the controls row (issue 5).

Two compact ``Select`` widgets: the scorer (lcm / rarity / roi, key ``c``)
and the tokenizer (lcm / unicode, key ``u``).  ``Controls`` composes them
and turns their changes into new Params like every other field, so a switch
re-assembles through the same debounced worker.
"""

from __future__ import annotations

from typing import ClassVar

from textual.widgets import Select

from ctxview.tui.actions import app_key
from ctxview.tui.scoring_view import (
    SCORER_HELP,
    TOKENIZER_CYCLE,
    TOKENIZER_HELP,
    scorer_choice,
    scorer_options,
)


class ChoiceSelect(Select[str]):
    """A borderless Select whose value is one of a few names; the controls row draws the border."""

    DEFAULT_CSS = """
    ChoiceSelect {
        & > SelectCurrent { padding: 0 0 0 0; background: transparent; }
        & > SelectOverlay { width: 24; }
    }
    """

    FIELD: ClassVar[str] = ""  # the Params field it edits

    def __init__(self, names: list[str], value: str, *, id: str | None = None) -> None:
        super().__init__([(name, name) for name in names], value=value, allow_blank=False, compact=True, id=id)
        self.names = tuple(names)


class ScorerSelect(ChoiceSelect):
    """Which scorer ranks the evictable items (``Params.scorer``)."""

    FIELD = "scorer"

    def __init__(self, scorer: str, *, id: str | None = None) -> None:
        super().__init__(scorer_options(scorer), scorer_choice(scorer), id=id)

    def on_mount(self) -> None:
        self.tooltip = f"Scorer ({app_key(self.app, 'inspector.cycle_scorer')} cycles):\n" + "\n".join(
            f"{name}: {SCORER_HELP[name]}" for name in self.names if name in SCORER_HELP
        )


class TokenizerSelect(ChoiceSelect):
    """How prompt and items are cut into terms (``Params.tokenizer``)."""

    FIELD = "tokenizer"

    def __init__(self, tokenizer: str, *, id: str | None = None) -> None:
        names = list(TOKENIZER_CYCLE) if tokenizer in TOKENIZER_CYCLE else [*TOKENIZER_CYCLE, tokenizer]
        super().__init__(names, tokenizer, id=id)

    def on_mount(self) -> None:
        self.tooltip = f"Tokenizer ({app_key(self.app, 'inspector.toggle_tokenizer')} toggles):\n" + "\n".join(
            f"{name}: {TOKENIZER_HELP[name]}" for name in TOKENIZER_CYCLE
        )
