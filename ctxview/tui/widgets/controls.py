"""The controls: prompt, token budget, fresh-tail count, reserved tokens, two switches, scorer and tokenizer.

Each edit is validated here (a typed number once typing pauses or on Enter,
so a half-typed number never runs); a good value becomes new Params (posted as
``Controls.ParamsChanged``), a bad one marks its input invalid and posts
``Controls.Invalid`` so the screen can say why while the last trace stays.
Params the screen changes itself (keys, the palette) come back through
``set_params``, which sets the fields without posting their change events.
The controls are not bound to the screen's params: an edit typed here is
already shown, and a bound copy arriving after the next keystroke would
overwrite it with the older value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.timer import Timer
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Input, Select, Switch

from ctxview.errors import InputError
from ctxview.model import Params
from ctxview.tui.actions import active_keymap, app_key
from ctxview.tui.scoring_view import scorer_choice
from ctxview.tui.view import parse_budget_text, parse_count_text, parse_whole_text
from ctxview.tui.widgets.scorer_controls import ChoiceSelect, ScorerSelect, TokenizerSelect


class FieldInput(Input):
    """``Input`` whose text growing by a character repaints the field alone.

    Textual's input sets its virtual width to its text's on every change, a reactive
    that re-lays out (and repaints) the whole screen: per keystroke in the prompt, more
    than the items table's new rows cost.  The field's own size never depends on its
    text here (the controls give it a width), and it has no scrollbar, so the new width
    is set quietly; what scrolls the text to the cursor reads it all the same.
    """

    on_edit: Callable[[], None] | None = None  # called as the text changes, before its echo is painted

    def on_mount(self) -> None:
        # the validity classes ``Input`` sets at the first change of the text, set now, while the screen is
        # styled anyway: at the first keystroke they restyled the field on the way to its run (~4 ms)
        self.validate(self.value)

    def _watch_value(self, value: str) -> None:
        if self.on_edit is not None:
            self.on_edit()
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))  # the value Input sets next
            self.refresh()
        super()._watch_value(value)


class _ParseValidator(Validator):
    """Adapts one of the ``view.parse_*`` functions to Textual's validation (for the invalid style)."""

    def __init__(self, parse: Any) -> None:
        super().__init__()
        self._parse = parse

    def validate(self, value: str) -> ValidationResult:
        try:
            self._parse(value)
        except InputError as exc:
            return self.failure(str(exc))
        return self.success()


def _budget(text: str) -> int:
    return parse_budget_text(text)


def _tail(text: str) -> float:
    return parse_count_text(text, "fresh-tail count")


def _reserved(text: str) -> int:
    return parse_whole_text(text, "reserved tokens")


_PARSERS = {"budget": _budget, "tail": _tail, "reserved": _reserved}
_FIELDS = {"budget": "token_budget", "tail": "fresh_tail_count", "reserved": "reserved_tokens"}


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class Controls(Horizontal):
    """The parameter editor at the top of the inspector."""

    DEFAULT_CSS = """
    Controls {
        height: auto;
        layout: grid;
        grid-size: 8 1;
        grid-columns: 1fr 14 10 14 18 17 13 15;
        grid-rows: 3;
        & Input, & Switch, & Select {
            border: round $foreground 30%;
            border-title-color: $text-muted;
            background: $surface;
            padding: 0 1;
        }
        & Input:focus, & Switch:focus, & Select:focus { border: round $accent; border-title-color: $foreground; }
        & Input.-invalid { border: round $error 70%; border-title-color: $error; }
        & Input.-invalid:focus { border: round $error; }
        & Switch { width: 100%; }
    }
    Controls.-narrow { grid-columns: 1fr 12 10 10 11 10 13 15; }
    """

    class ParamsChanged(Message):
        def __init__(self, params: Params, field: str) -> None:
            super().__init__()
            self.params = params
            self.field = field

    class Invalid(Message):
        def __init__(self, field: str, reason: str) -> None:
            super().__init__()
            self.field = field
            self.reason = reason

    # titles of the fields; "{key}": the key that focuses the prompt, from the active keymap
    BORDER_TITLES: ClassVar[dict[str, str]] = {
        "prompt": "prompt  {key}",
        "budget": "budget",
        "tail": "tail",
        "reserved": "reserved",
        "prompt-aware": "prompt-aware",
        "engine": "live inputs",
        "scorer": "scorer",
        "tokenizer": "tokenizer",
    }

    SHORT_TITLES: ClassVar[dict[str, str]] = {
        "prompt": "prompt {key}",
        "budget": "budget",
        "tail": "tail",
        "reserved": "resv",
        "prompt-aware": "aware",
        "engine": "live",
        "scorer": "scorer",
        "tokenizer": "tokenizer",
    }

    TYPING_PAUSE: ClassVar[float] = 0.6  # seconds without a keystroke after which a typed number applies
    NARROW_WIDTH: ClassVar[int] = 140  # below it: short titles, narrower cells, more room for the prompt

    def __init__(self, params: Params, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.params = params
        self._narrow = False  # short titles (set on resize)
        self._keymap_shown: dict[str, str] = {}  # the keymap the titles and tooltips name keys from
        self._pending: set[str] = set()  # number fields typed in since the last apply
        self._pause_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        p = self.params
        yield FieldInput(p.prompt or "", placeholder="type the next user prompt…", id="prompt")
        yield FieldInput(str(p.token_budget), id="budget", validators=[_ParseValidator(_budget)])
        yield FieldInput(_number_text(p.fresh_tail_count), id="tail", validators=[_ParseValidator(_tail)])
        yield FieldInput(str(p.reserved_tokens), id="reserved", validators=[_ParseValidator(_reserved)])
        yield Switch(p.prompt_aware_eviction, id="prompt-aware")
        yield Switch(p.engine, id="engine")
        yield ScorerSelect(p.scorer, id="scorer")
        yield TokenizerSelect(p.tokenizer, id="tokenizer")

    def on_mount(self) -> None:
        self._show_key_hints()
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_updated)

    def _bindings_updated(self, _screen: object) -> None:
        if active_keymap(self.app) != self._keymap_shown:  # a new keymap (App.set_keymap), not a focus change
            self._show_key_hints()

    def _show_key_hints(self) -> None:
        """Titles and tooltips, with the keys of the active keymap."""
        self._keymap_shown = dict(active_keymap(self.app))
        self._set_titles(self.SHORT_TITLES if self._narrow else self.BORDER_TITLES)
        budget_keys = " ".join(
            app_key(self.app, f"inspector.{name}")
            for name in ("budget_up", "budget_down", "budget_double", "budget_half", "budget_reset")
        )
        self.query_one("#prompt", Input).tooltip = "The incoming user prompt: drives the relevance scores."
        self.query_one("#budget", Input).tooltip = f"Token budget: a number, or 8k / 1.5m. Table keys: {budget_keys}"
        self.query_one("#tail", Input).tooltip = "Fresh-tail count: newest raw messages that are always kept."
        self.query_one("#reserved", Input).tooltip = "Tokens reserved for host costs (system prompt, tool schemas)."
        self.query_one("#prompt-aware", Switch).tooltip = "Evict by prompt relevance instead of age."
        self.query_one("#engine", Switch).tooltip = "Run the engine step: live inputs and the serialized clamp."

    def _set_titles(self, titles: dict[str, str]) -> None:
        key = app_key(self.app, "inspector.focus_prompt")
        for widget_id, title in titles.items():
            self.query_one(f"#{widget_id}").border_title = title.format(key=key)

    def on_resize(self, event: Resize) -> None:
        self._narrow = event.size.width < self.NARROW_WIDTH
        self._set_titles(self.SHORT_TITLES if self._narrow else self.BORDER_TITLES)
        self.set_class(self._narrow, "-narrow")

    def set_params(self, params: Params) -> None:
        """Show params changed elsewhere (keys, the palette) without echoing them back as edits."""
        self.params = params
        values = {
            "prompt": params.prompt or "",
            "budget": str(params.token_budget),
            "tail": _number_text(params.fresh_tail_count),
            "reserved": str(params.reserved_tokens),
        }
        with self.prevent(Input.Changed, Switch.Changed, Select.Changed):
            for widget_id, value in values.items():
                field = self.query_one(f"#{widget_id}", Input)
                if widget_id in _PARSERS and self._parses_to(widget_id, field.value, params):
                    continue  # keep what the user typed ("8k") when it means the same
                if field.value != value:
                    field.value = value
            self.query_one("#prompt-aware", Switch).value = params.prompt_aware_eviction
            self.query_one("#engine", Switch).value = params.engine
            for select, value in (
                (self.query_one("#scorer", ScorerSelect), scorer_choice(params.scorer)),
                (self.query_one("#tokenizer", TokenizerSelect), params.tokenizer),
            ):
                if value in select.names and select.value != value:
                    select.value = value

    def _parses_to(self, widget_id: str, text: str, params: Params) -> bool:
        try:
            return _PARSERS[widget_id](text) == getattr(params, _FIELDS[widget_id])
        except InputError:
            return False

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        widget_id = event.input.id or ""
        if event.value != event.input.value:
            return  # stale: the field has changed again since; its own event follows
        if widget_id == "prompt":
            self._emit(replace(self.params, prompt=event.value if event.value else None), widget_id)
            return
        if widget_id not in _PARSERS:
            return
        # a number is applied on Enter or once typing pauses: overwriting 2000 with 2500 must not
        # assemble at 2, 25 and 250 on the way (nor compare 2,500 with 250 in the change line)
        self._pending.add(widget_id)
        if self._pause_timer is not None:
            self._pause_timer.stop()
        self._pause_timer = self.set_timer(self.TYPING_PAUSE, self._apply_pending, name="apply typed numbers")

    def _apply_pending(self) -> None:
        """Apply the numbers typed since the last apply (a field that does not parse says why and waits)."""
        if self._pause_timer is not None:
            self._pause_timer.stop()
            self._pause_timer = None
        pending, self._pending = self._pending, set()
        params = self.params
        edited: list[str] = []
        for widget_id in sorted(pending):
            text = self.query_one(f"#{widget_id}", Input).value
            try:
                value = _PARSERS[widget_id](text)
            except InputError as exc:
                self.post_message(self.Invalid(widget_id, str(exc)))
                continue
            if getattr(params, _FIELDS[widget_id]) != value:
                params = replace(params, **{_FIELDS[widget_id]: value})
                edited.append(widget_id)
        if edited:
            self._emit(params, ", ".join(edited))

    @property
    def typing(self) -> bool:
        """True while a typed number waits for Enter or a pause (for tests and scripts)."""
        return bool(self._pending)

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        if event.value != event.switch.value:
            return  # stale: toggled again since
        if event.switch.id == "prompt-aware":
            self._emit(replace(self.params, prompt_aware_eviction=event.value), "prompt-aware")
        elif event.switch.id == "engine":
            self._emit(replace(self.params, engine=event.value), "engine")

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        select = event.select
        if not isinstance(select, ChoiceSelect) or not isinstance(event.value, str):
            return
        if event.value != select.value:
            return  # stale: changed again since
        current = getattr(self.params, select.FIELD)
        if (scorer_choice(current) if select.FIELD == "scorer" else current) == event.value:
            return  # the scorer it is already (perhaps under another name)
        self._emit(replace(self.params, **{select.FIELD: event.value}), select.FIELD)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        # Enter in a field: apply what was typed, hand the keyboard back to the table
        event.stop()
        self._apply_pending()
        self.post_message(self.Done())

    class Done(Message):
        """The user pressed Enter in a field."""

    def _emit(self, params: Params, field: str) -> None:
        if params == self.params:
            return
        self.params = params
        self.post_message(self.ParamsChanged(params, field))
