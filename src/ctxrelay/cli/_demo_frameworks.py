"""``ctxrelay demo --framework NAME``: the demo's session through a framework's own loop.

The same scripted model steps as the built-in demo, served over real HTTP by the local
OpenAI Chat Completions server (``ctxrelay.testing``), answer the framework's requests;
ctxrelay's integration for that framework puts the policy in front of every model call.
The events are the runtime's, so the timeline and ``--json`` lines are the same, and the
session's rows (windows, lead-ins, seals) show in ``ctxrelay sessions show``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxrelay.budget import Budget
from ctxrelay.integrations import DispatchBlockedError
from ctxrelay.runtime import RunResult
from ctxrelay.runtime.events import Event, PauseEvent
from ctxrelay.runtime.model import Usage
from ctxrelay.store import Store

__all__ = ["FRAMEWORKS", "run_framework"]

FRAMEWORKS = ("openai-agents", "pydantic-ai", "langchain")
"""The frameworks ``--framework`` accepts."""

_MODEL = "gpt-4.1"
"""The model name the framework asks the local server for (any name is served)."""


async def _openai_agents(
    base_url: str,
    *,
    store: Store,
    workspace: Path,
    budget: Budget,
    task: str,
    on_event: Callable[[Event], None],
) -> str:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    from ctxrelay.integrations.openai_agents import AgentsRelay
    from ctxrelay.runtime import DEFAULT_SYSTEM
    from ctxrelay.runtime.tools import ReadFile, WriteFile

    set_tracing_disabled(True)
    relay = AgentsRelay.open(
        store, budget=budget, model=_MODEL, workspace=workspace, task=task, on_event=on_event
    )
    client = AsyncOpenAI(base_url=base_url, api_key="demo")
    try:
        agent: Agent[Any] = Agent(
            name="coder",
            instructions=DEFAULT_SYSTEM,
            tools=[relay.function_tool(ReadFile()), relay.function_tool(WriteFile()), *relay.tools],
            model=OpenAIChatCompletionsModel(_MODEL, openai_client=client),
        )
        await Runner.run(agent, task, max_turns=200, **relay.run_kwargs())
    finally:
        await client.close()
    return relay.session_id


async def _pydantic_ai(
    base_url: str,
    *,
    store: Store,
    workspace: Path,
    budget: Budget,
    task: str,
    on_event: Callable[[Event], None],
) -> str:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay
    from ctxrelay.runtime import DEFAULT_SYSTEM
    from ctxrelay.runtime.tools import ReadFile, WriteFile

    relay = PydanticAIRelay.open(
        store,
        budget=budget,
        model=_MODEL,
        workspace=workspace,
        task=task,
        on_event=on_event,
        tools=[ReadFile(), WriteFile()],
    )
    client = AsyncOpenAI(base_url=base_url, api_key="demo")
    try:
        model = OpenAIChatModel(_MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(
            model, instructions=DEFAULT_SYSTEM, capabilities=[relay.capability]
        )
        await agent.run(task)
    finally:
        await client.close()
    return relay.session_id


async def _langchain(
    base_url: str,
    *,
    store: Store,
    workspace: Path,
    budget: Budget,
    task: str,
    on_event: Callable[[Event], None],
) -> str:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from ctxrelay.integrations.langchain import LangChainRelay
    from ctxrelay.runtime import DEFAULT_SYSTEM
    from ctxrelay.runtime.tools import ReadFile, WriteFile

    relay = LangChainRelay.open(
        store,
        budget=budget,
        model=_MODEL,
        workspace=workspace,
        task=task,
        on_event=on_event,
        tools=[ReadFile(), WriteFile()],
    )
    model = ChatOpenAI(
        model=_MODEL, base_url=base_url, api_key=SecretStr("demo"), stream_usage=True
    )
    agent: Any = create_agent(model, system_prompt=DEFAULT_SYSTEM, middleware=[relay.middleware])
    try:
        request = {"messages": [{"role": "user", "content": task}]}
        await agent.ainvoke(request, {"recursion_limit": 500})
    finally:  # the chat model's own HTTP clients
        await model.root_async_client.close()
        model.root_client.close()
    return relay.session_id


_RUNNERS = {"openai-agents": _openai_agents, "pydantic-ai": _pydantic_ai, "langchain": _langchain}


def run_framework(
    framework: str,
    *,
    store: Store,
    workspace: Path,
    budget: Budget,
    task: str,
    steps: list[dict[str, Any]],
    on_event: Callable[[Event], None],
) -> RunResult:
    """Run the demo session through ``framework``'s loop; the result as the runtime's."""
    from ctxrelay.integrations._support import require
    from ctxrelay.testing import OpenAIServer, load_steps

    require(_FRAMEWORK_MODULES[framework], f"ctxrelay demo --framework {framework}", framework)
    status, reason, message = "done", None, None
    with OpenAIServer(load_steps(steps)) as server:
        try:
            session_id = asyncio.run(
                _RUNNERS[framework](
                    server.base_url,
                    store=store,
                    workspace=workspace,
                    budget=budget,
                    task=task,
                    on_event=on_event,
                )
            )
        except DispatchBlockedError as exc:
            status, reason, message = "paused", "limit", str(exc)
            session_id = store.list_sessions(limit=1)[0].id
            on_event(PauseEvent(reason, message))
    windows = store.windows(session_id)
    turns = sum(1 for r in store.rows(session_id) if r.kind == "assistant")
    store.update_session(session_id, status=status, metadata={"pause_reason": reason})
    from ctxrelay.runtime.events import EndEvent

    on_event(EndEvent(session_id, status, reason, len(windows), turns, 0.0))
    return RunResult(session_id, status, reason, len(windows), turns, 0.0, Usage(), message)


_FRAMEWORK_MODULES = {
    "openai-agents": "agents",
    "pydantic-ai": "pydantic_ai",
    "langchain": "langchain",
}
