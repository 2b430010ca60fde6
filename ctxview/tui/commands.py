"""Command-palette provider (ctrl+p): the actions of the action table that have a palette name.

The inspector's actions are offered on the inspector, the app's everywhere.
Each line ends with the action's key as the active keymap has it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ctxview.tui.actions import Action, Keymap, actions, active_keymap, key_hint


def palette_line(action: Action, keymap: Keymap) -> tuple[str, str, str]:
    """(name, help, action) of a palette entry; the help names the key, if the action has one."""
    key = key_hint(action.id, keymap) if action.keys else ""
    help_text = f"{action.palette_help} ({key})" if key else action.palette_help
    return action.palette, help_text, action.action


def palette_lines(scope: str, keymap: Keymap) -> tuple[tuple[str, str, str], ...]:
    return tuple(palette_line(action, keymap) for action in actions(scope) if action.palette)


# the palette with the default keys (name, help, action on the inspector screen / the app)
INSPECTOR_COMMANDS: tuple[tuple[str, str, str], ...] = palette_lines("inspector", {})
APP_COMMANDS: tuple[tuple[str, str, str], ...] = palette_lines("app", {})


def _words_score(query: str, text: str) -> float:
    """0.5 when every word of ``query`` starts a word of ``text`` (what fuzzy matching on the name misses)."""
    words = query.lower().split()
    haystack = [word.strip("()·;,:") for word in text.lower().split()]
    return 0.5 if words and all(any(h.startswith(w) for h in haystack) for w in words) else 0.0


class CtxviewCommands(Provider):
    """The main actions of the screen the palette was opened from."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        from ctxview.tui.screens.inspector import InspectorScreen

        keymap = active_keymap(self.app)
        found: list[tuple[str, str, Callable[[], object]]] = []
        if isinstance(self.screen, InspectorScreen):
            screen = self.screen
            for name, help_text, action in palette_lines("inspector", keymap):
                found.append((name, help_text, partial(screen.run_action, action)))
        for name, help_text, action in palette_lines("app", keymap):
            found.append((name, help_text, partial(self.app.run_action, action)))
        return found

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            # the name first; else any word of the help ("sweep", "clipboard", "budget"): half the score
            score = max(matcher.match(name), matcher.match(help_text) / 2, _words_score(query, help_text))
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
