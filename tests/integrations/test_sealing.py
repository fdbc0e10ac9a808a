"""``new_context``'s outcome is a value the relay keeps, not the words of its result: a
window seals when the call succeeded, however the framework or the user's own code
reshapes the text the model reads. Over real HTTP, against a local wire server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.integrations.harness import LangChainHarness

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
STAMP = "[tool output 12:00:00] "


def test_langchain_a_reshaped_new_context_result_still_seals(store: Store, workspace: Path) -> None:
    pytest.importorskip("langchain", reason="pip install 'ctxrelay[langchain]'")
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages import ToolMessage

    class Stamp(AgentMiddleware[Any, Any]):
        """The user's own middleware: every tool's output is stamped before the model
        reads it (as a log or an audit trail would)."""

        async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
            result = await handler(request)
            if isinstance(result, ToolMessage):
                result.content = STAMP + str(result.content)
            return result

    harness = LangChainHarness()
    relay = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    steps = [
        Step(text="Handing off.", tool_calls=[ToolUse("new_context", {})]),
        Step(text="Fresh."),
    ]

    async def go(server: OpenAIServer) -> None:
        model = harness.chat_model(server)
        agent: Any = create_agent(model, middleware=[Stamp(), relay.middleware])
        try:
            await agent.ainvoke({"messages": [{"role": "user", "content": "Go on."}]})
        finally:
            await harness.close(model)

    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
        bodies = [json.dumps(r.body) for r in server.requests if r.body]
    windows = store.windows("s1")
    assert [w.seal_reason for w in windows] == ["new_context", None]
    result = next(r for r in store.rows("s1") if r.kind == "tool_result")
    assert (result.text or "").startswith(STAMP + "window 1 will be sealed")
    assert result.metadata.get("new_context") is True
    # The fresh window's request opens with the lead-in, not the old window's prompt.
    assert len(bodies) == 2
    assert "Go on." not in bodies[1]
    assert "Window 1 was sealed by your new_context call" in bodies[1]
