"""Instructions a framework carries as a message (pydantic-ai's ``system_prompt=``, a
LangChain ``SystemMessage`` in the input) are part of the first window only: the first
handoff says so, once, instead of dropping them silently. Over real HTTP, against a
local wire server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.integrations import IntegrationWarning
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.integrations.harness import MODEL, LangChainHarness, PydanticAIHarness

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
STANDING = "Always answer in French."
STEPS = [Step(text="Handing off.", tool_calls=[ToolUse("new_context")]), Step(text="Fini.")]


def _sent(server: OpenAIServer) -> list[str]:
    return [json.dumps(r.body) for r in server.requests if r.body]


def test_pydantic_ai_system_prompt_lost_at_a_handoff_warns(store: Store, workspace: Path) -> None:
    pytest.importorskip("pydantic_ai", reason="pip install 'ctxrelay[pydantic-ai]'")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    relay = PydanticAIHarness().open(store, session_id="s1", budget=BUDGET, workspace=workspace)

    async def go(server: OpenAIServer) -> str:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(
            model, system_prompt=STANDING, capabilities=[relay.capability]
        )
        try:
            return (await agent.run("Bonjour.")).output
        finally:
            await client.close()

    with OpenAIServer(STEPS) as server:
        with pytest.warns(IntegrationWarning, match="system_prompt="):
            assert asyncio.run(go(server)) == "Fini."
        first, second = _sent(server)
    assert STANDING in first
    assert STANDING not in second  # what the warning said


def test_langchain_system_message_lost_at_a_handoff_warns(store: Store, workspace: Path) -> None:
    pytest.importorskip("langchain", reason="pip install 'ctxrelay[langchain]'")
    from langchain.agents import create_agent

    harness = LangChainHarness()
    relay = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)

    async def go(server: OpenAIServer) -> Any:
        model = harness.chat_model(server)
        agent: Any = create_agent(model, middleware=[relay.middleware])
        messages = [{"role": "system", "content": STANDING}, {"role": "user", "content": "Hi."}]
        try:
            return await agent.ainvoke({"messages": messages})
        finally:
            await harness.close(model)

    with OpenAIServer(STEPS) as server:
        with pytest.warns(IntegrationWarning, match="SystemMessage"):
            state = asyncio.run(go(server))
        first, second = _sent(server)
    assert state["messages"][-1].content == "Fini."
    assert STANDING in first
    assert STANDING not in second
