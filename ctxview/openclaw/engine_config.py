"""The settings lossless-claw assembles with, read from ``openclaw.json`` the way the plugin reads them.

The plugin takes ``freshTailCount``, ``freshTailMaxTokens``, ``promptAwareEviction``,
``stubLargeToolPayloads``, ``timezone`` and ``maxAssemblyTokenBudget`` from
``plugins.entries["lossless-claw"].config`` unless an ``LCM_*`` variable in the
agent's own environment overrides them; ctxview cannot see the agent's
environment, so a note says when a value is the config's or the default.
The time zone falls back to the machine's own zone, as the host's does.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxview.model import Params
from ctxview.openclaw.paths import LCM_PLUGIN_ID, lcm_plugin_config

ENV_NOTE = "an LCM_* variable in the agent's environment would override these; ctxview cannot see it"


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """What the plugin config sets (None: not set, the engine's default applies)."""

    fresh_tail_count: float | None = None
    fresh_tail_max_tokens: int | None = None
    prompt_aware_eviction: bool | None = None
    stub_large_tool_payloads: bool | None = None
    timezone: str | None = None
    max_assembly_token_budget: int | None = None
    steps: tuple[str, ...] = ()  # one clause per value read, for the user

    def apply(self, params: Params, keep: frozenset[str] = frozenset()) -> Params:
        """``params`` with every setting the config gives, except the Params fields named in ``keep``."""
        changes: dict[str, Any] = {}
        for name in ("fresh_tail_count", "fresh_tail_max_tokens", "prompt_aware_eviction", "stub_large_tool_payloads",
                     "timezone"):
            value = getattr(self, name)
            if value is not None and name not in keep:
                changes[name] = value
        return replace(params, **changes) if changes else params

    def cap(self, budget: int) -> int:
        """The engine's ``min(budget, maxAssemblyTokenBudget)``."""
        limit = self.max_assembly_token_budget
        return min(budget, limit) if limit is not None and limit > 0 else budget


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and value.strip():
        try:
            parsed = float(value.strip())
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def engine_settings(config: Mapping[str, Any] | None) -> EngineSettings:
    """The plugin's settings from ``openclaw.json`` (``config`` is its parsed data)."""
    plugin = lcm_plugin_config(config)
    where = f'plugins.entries["{LCM_PLUGIN_ID}"].config'
    steps: list[str] = []
    values: dict[str, Any] = {}
    tail = _number(plugin.get("freshTailCount"))
    if tail is not None:
        values["fresh_tail_count"] = int(tail) if tail.is_integer() else tail
        steps.append(f"freshTailCount {values['fresh_tail_count']} from {where}")
    cap = _number(plugin.get("freshTailMaxTokens"))
    if cap is not None:
        values["fresh_tail_max_tokens"] = int(cap)
        steps.append(f"freshTailMaxTokens {int(cap):,} from {where}")
    for key, name in (("promptAwareEviction", "prompt_aware_eviction"),
                      ("stubLargeToolPayloads", "stub_large_tool_payloads")):
        flag = _bool(plugin.get(key))
        if flag is not None:
            values[name] = flag
            steps.append(f"{key} {'true' if flag else 'false'} from {where}")
    zone = plugin.get("timezone")
    if isinstance(zone, str) and zone.strip():
        values["timezone"] = zone.strip()
        steps.append(f"timezone {zone.strip()} from {where}")
    limit = _number(plugin.get("maxAssemblyTokenBudget"))
    if limit is not None and limit > 0:
        values["max_assembly_token_budget"] = int(limit)
        steps.append(f"maxAssemblyTokenBudget {int(limit):,} from {where}")
    return EngineSettings(**values, steps=tuple(steps))


def machine_timezone(env: Mapping[str, str], localtime: Path = Path("/etc/localtime")) -> str | None:
    """The IANA zone this machine runs in (``TZ``, else the ``/etc/localtime`` link), or None when unknown."""
    zone = env.get("TZ", "").strip().lstrip(":")
    if zone and ("/" in zone or zone == "UTC"):
        return zone
    try:
        target = os.readlink(localtime)
    except OSError:
        return None
    marker = "zoneinfo/"
    at = target.find(marker)
    return target[at + len(marker):] if at >= 0 else None
