"""What a framework user meets, on each framework's own loop over real HTTP against a
local wire server: the same prompt sent twice is two prompts, and a tool call left
without its result (its run died) is answered before anything else is sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ctxrelay.budget import Budget
from ctxrelay.store import Store
from ctxrelay.testing import Step
from tests.integrations.harness import Harness

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)


def _bodies(server: Any) -> list[str]:
    return [json.dumps(r.body, ensure_ascii=False) for r in server.requests if r.body]


def test_a_repeated_first_prompt_is_a_new_prompt(
    harness: Harness, store: Store, workspace: Path
) -> None:
    relay = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    steps = [Step(text="First answer.", input_tokens=900), Step(text="Second answer.")]
    with harness.server(steps) as server:
        assert asyncio.run(harness.run(relay, server, "Say hello.")) == "First answer."
        assert asyncio.run(harness.run(relay, server, "Say hello.")) == "Second answer."
        _, second = _bodies(server)
    # The second request carries the whole conversation and ends with the prompt again.
    assert second.count("Say hello.") == 2
    assert second.index("First answer.") < second.rindex("Say hello.")
    kinds = [(r.kind, r.text) for r in store.rows("s1") if r.kind in ("user", "assistant")]
    assert kinds == [
        ("user", "Say hello."),
        ("assistant", "First answer."),
        ("user", "Say hello."),
        ("assistant", "Second answer."),
    ]
