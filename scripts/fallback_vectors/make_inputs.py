"""Write random inputs for the degrade and fork-bounded fallbacks (tests/unit/data/fallback_vectors.json).

Each case's ``expected`` result was recorded from the reference engine's own fallback functions
(run outside this repository, which holds none of the engine's code or a recipe to run it);
``tests/unit/test_fallbacks.py`` compares ctxview with it.

    python scripts/fallback_vectors/make_inputs.py > /tmp/fallback_inputs.json
"""

from __future__ import annotations

import copy
import json
import random
import sys
from typing import Any

WORDS = ["alpha", "beta", "helm", "日本語", "テスト", "😀", "x" * 12, "ok", "  ", "\n"]
ROLES = ["system", "developer", "Developer", "SYSTEM", "user", "user", "user", "assistant", "assistant", "toolResult"]


def text(rng: random.Random, most: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, most)))


def message(rng: random.Random, role: str | None = None) -> dict[str, Any]:
    role = role or rng.choice(ROLES)
    shape = rng.random()
    msg: dict[str, Any] = {"role": role}
    if role == "assistant":
        if shape < 0.3:
            msg["content"] = [{"type": "text", "text": text(rng, 12)}]
        elif shape < 0.45:
            msg["content"] = [{"type": "thinking", "thinking": text(rng, 6)}]
        elif shape < 0.6:
            call_id = f"call_{rng.randint(1, 4)}"
            msg["content"] = [{"type": "toolCall", "id": call_id, "name": "exec", "arguments": {"cmd": text(rng, 3)}}]
        elif shape < 0.7:
            msg["content"] = ""
        elif shape < 0.75:
            msg["content"] = []
            msg["tool_calls"] = [{"id": "call_9", "type": "function"}]
        else:
            msg["content"] = text(rng, 10)
    elif role == "toolResult":
        msg["toolCallId"] = f"call_{rng.randint(1, 4)}"
        msg["toolName"] = "exec"
        msg["content"] = [{"type": "text", "text": text(rng, 12)}]
    else:
        msg["content"] = text(rng, 16) if shape < 0.8 else [{"type": "text", "text": text(rng, 8)}]
    if rng.random() < 0.3:
        msg["timestamp"] = 1745752514000 + rng.randint(0, 10**6)
    return msg


def live_list(rng: random.Random, most: int) -> list[dict[str, Any]]:
    count = rng.randint(0, most)
    messages = [message(rng) for _ in range(count)]
    if messages and rng.random() < 0.4:  # a leading system/developer run
        for index in range(rng.randint(1, min(3, count))):
            messages[index] = message(rng, rng.choice(["system", "developer", "SYSTEM"]))
    return messages


def rough_size(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False)) // 4 + 1 for m in messages)


def degraded(rng: random.Random) -> dict[str, Any]:
    live = live_list(rng, 9)
    return {"live": live, "budget": rng.randint(1, rough_size(live) + 40), "preserve": rng.random() < 0.5}


def fork_pair(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    live = live_list(rng, 8)
    assembled = [message(rng, rng.choice(["user", "assistant", "toolResult"])) for _ in range(rng.randint(0, 6))]
    for source in live:
        if rng.random() < 0.35:  # the same message in the stored context, sometimes with other metadata
            twin = copy.deepcopy(source)
            if rng.random() < 0.3:
                twin["timestamp"] = 1
            assembled.insert(rng.randint(0, len(assembled)), twin)
    return assembled, live


def fork_append(rng: random.Random) -> dict[str, Any]:
    assembled, live = fork_pair(rng)
    return {
        "assembled": assembled,
        "assembledEstimate": rng.randint(0, 400),
        "live": live,
        "forkCount": rng.randint(0, len(live) + 2),
        "budget": rng.randint(1, rough_size(assembled) + rough_size(live) + 40),
        "preserve": rng.random() < 0.5,
    }


def fork_fallback(rng: random.Random) -> dict[str, Any]:
    live = live_list(rng, 9)
    return {
        "live": live,
        "forkCount": rng.randint(0, len(live) + 2),
        "budget": rng.randint(1, rough_size(live) + 40),
        "bootstrapMax": rng.choice([6000, rng.randint(1, rough_size(live) + 20)]),
        "preserve": rng.random() < 0.5,
    }


def main() -> None:
    rng = random.Random(20261125)
    inputs = {
        "degraded": [degraded(rng) for _ in range(35)],
        "forkAppend": [fork_append(rng) for _ in range(35)],
        "forkFallback": [fork_fallback(rng) for _ in range(35)],
    }
    # values the engine cannot read a role or a stored form from
    user = {"role": "user", "content": "hi"}
    inputs["degraded"] += [
        {"live": [None, user], "budget": 50, "preserve": False},
        {"live": [user, None, "text"], "budget": 50, "preserve": False},
    ]
    inputs["forkAppend"].append(
        {
            "assembled": [user],
            "assembledEstimate": 1,
            "live": [user, "hello"],
            "forkCount": 0,
            "budget": 50,
            "preserve": False,
        }
    )
    inputs["forkFallback"].append(
        {"live": [None], "forkCount": 1, "budget": 50, "bootstrapMax": 6000, "preserve": False}
    )
    json.dump(inputs, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
