"""Command-palette provider: the inspector's actions by name (ctrl+p)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ctxview.export.formats import format_list

# (name, help, action on the inspector screen)
INSPECTOR_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Toggle prompt-aware eviction", "evict by prompt relevance instead of age (t)", "toggle_prompt_aware"),
    ("Toggle engine step (live inputs)", "append live inputs and clamp to the budget (l)", "toggle_engine"),
    ("Switch engine rules 0.15 / 1.0", "run the other lossless-claw line's rules: what an upgrade changes (E)",
     "switch_rules"),
    ("Cycle sort order", "ordinal → score → tokens (o)", "cycle_sort"),
    ("Cycle scorer", "lcm → rarity → roi (c)", "cycle_scorer"),
    ("Scorer: lcm (reference BM25-lite)", "the default; exactly what the reference engine does", "set_scorer('lcm')"),
    ("Scorer: rarity", "rarity-weighted exact match with a slug bonus, plus BM25-lite", "set_scorer('rarity')"),
    ("Scorer: roi (section ROI)", "sections rated from the citation log; waste becomes stubs", "set_scorer('roi')"),
    ("Toggle tokenizer", "lcm ↔ unicode, for Chinese, Japanese and Korean prompts (u)", "toggle_tokenizer"),
    ("Show the ROI table", "section-ROI bands, factors and decisions (i)", "roi_view"),
    ("Jump to tool-pair partner", "from a tool call to its result and back (p)", "jump_partner"),
    ("Edit the prompt", "focus the prompt input (/)", "focus_prompt"),
    ("Budget +10 %", "raise the token budget (+)", "budget_step(1)"),
    ("Budget −10 %", "lower the token budget (-)", "budget_step(-1)"),
    ("Budget ×2", "double the token budget (>)", "budget_step(1, True)"),
    ("Budget ÷2", "halve the token budget (<)", "budget_step(-1, True)"),
    ("Reset budget", "back to the starting budget (0)", "budget_reset"),
    ("Export assembled context", f"{format_list(last=' or ')}; file or clipboard (e)",
     "export"),
    ("Reload database", "re-read the session, keep the parameters (r)", "reload"),
    ("Back to conversations", "the conversation picker (b)", "back"),
    ("Show or hide detail pane", "on small terminals (d)", "toggle_side"),
)

APP_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Help: keys and legend", "every key and what the colours mean (?)", "help"),
    ("Save screenshot", "SVG of the screen in the current directory (s)", "screenshot"),
)


class CtxviewCommands(Provider):
    """The main actions of the screen the palette was opened from."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from ctxview.tui.screens.inspector import InspectorScreen

        found: list[tuple[str, str, Callable[[], object]]] = []
        if isinstance(self.screen, InspectorScreen):
            screen = self.screen
            for name, help_text, action in INSPECTOR_COMMANDS:
                found.append((name, help_text, partial(screen.run_action, action)))
        for name, help_text, action in APP_COMMANDS:
            found.append((name, help_text, partial(self.app.run_action, action)))
        return found

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
