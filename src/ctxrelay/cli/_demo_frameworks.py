"""``ctxrelay demo --framework NAME``: the demo's session through a framework's own loop.

The same scripted model steps as the built-in demo, served over real HTTP by the local
OpenAI server (``ctxrelay.testing``, no key), answer the framework's requests on the API
its default OpenAI model speaks (Responses for the Agents SDK, Chat Completions for
pydantic-ai and LangChain); ctxrelay's integration for that framework puts the policy in
front of every model call.
The events are the runtime's, so the timeline and ``--json`` lines are the same, and the
session's rows (windows, lead-ins, seals) show in ``ctxrelay sessions show``.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.budget import Budget
from ctxrelay.integrations import DispatchBlockedError, require
from ctxrelay.runtime import DEFAULT_SYSTEM, RunResult
from ctxrelay.runtime.events import EndEvent, Event, PauseEvent
from ctxrelay.runtime.model import Usage
from ctxrelay.runtime.tools import ReadFile, WriteFile
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, load_steps

if TYPE_CHECKING:
    from ctxrelay.integrations._relay import FrameworkRelay
    from ctxrelay.integrations.langchain import LangChainRelay
    from ctxrelay.integrations.openai_agents import AgentsRelay
    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

__all__ = ["FRAMEWORKS", "run_framework"]

_MODEL = "gpt-4.1"
"""The model name the framework asks the local server for (any name is served)."""


async def _openai_agents(base_url: str, relay: AgentsRelay, task: str) -> None:
    from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled  # noqa: PLC0415 — openai-agents (extra)
    from openai import AsyncOpenAI  # noqa: PLC0415 — openai (extra)

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="demo")
    try:
        agent: Agent[Any] = Agent(
            name="coder",
            instructions=DEFAULT_SYSTEM,
            tools=[*relay.tools],
            # the SDK's default model class, on its own client for the local server
            model=OpenAIResponsesModel(_MODEL, openai_client=client),
        )
        await Runner.run(agent, task, max_turns=200, **relay.run_kwargs())
    finally:
        await client.close()


async def _pydantic_ai(base_url: str, relay: PydanticAIRelay, task: str) -> None:
    from openai import AsyncOpenAI  # noqa: PLC0415 — openai (extra)
    from pydantic_ai import Agent  # noqa: PLC0415 — pydantic-ai (extra)
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415 — pydantic-ai (extra)
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415 — pydantic-ai (extra)

    client = AsyncOpenAI(base_url=base_url, api_key="demo")
    try:
        model = OpenAIChatModel(_MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(
            model, instructions=DEFAULT_SYSTEM, capabilities=[relay.capability]
        )
        await agent.run(task)
    finally:
        await client.close()


async def _langchain(base_url: str, relay: LangChainRelay, task: str) -> None:
    from langchain.agents import create_agent  # noqa: PLC0415 — langchain (extra)
    from langchain_openai import ChatOpenAI  # noqa: PLC0415 — langchain (extra)
    from pydantic import SecretStr  # noqa: PLC0415 — pydantic (with the langchain extra)

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


# framework -> (its import name, the integration's module and class, the demo's loop)
_FRAMEWORKS: dict[str, tuple[str, str, str, Callable[..., Coroutine[Any, Any, None]]]] = {
    "openai-agents": (
        "agents",
        "ctxrelay.integrations.openai_agents",
        "AgentsRelay",
        _openai_agents,
    ),
    "pydantic-ai": (
        "pydantic_ai",
        "ctxrelay.integrations.pydantic_ai",
        "PydanticAIRelay",
        _pydantic_ai,
    ),
    "langchain": ("langchain", "ctxrelay.integrations.langchain", "LangChainRelay", _langchain),
}

FRAMEWORKS = tuple(_FRAMEWORKS)
"""The frameworks ``--framework`` accepts."""


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
    module, module_name, class_name, loop = _FRAMEWORKS[framework]
    require(module, f"ctxrelay demo --framework {framework}", framework)
    integration: FrameworkRelay = getattr(importlib.import_module(module_name), class_name)
    relay = integration.open(
        store,
        budget=budget,
        model=_MODEL,
        workspace=workspace,
        task=task,
        on_event=on_event,
        tools=[ReadFile(), WriteFile()],
    )
    session_id = relay.session_id
    status, reason, message = "done", None, None
    with OpenAIServer(load_steps(steps)) as server:
        try:
            asyncio.run(loop(server.base_url, relay, task))
        except DispatchBlockedError as exc:
            status, reason, message = "paused", "limit", str(exc)
            on_event(PauseEvent(reason, message))
    windows = store.windows(session_id)
    turns = sum(1 for r in store.rows(session_id) if r.kind == "assistant")
    store.update_session(session_id, status=status, metadata={"pause_reason": reason})
    on_event(EndEvent(session_id, status, reason, len(windows), turns, 0.0))
    return RunResult(session_id, status, reason, len(windows), turns, 0.0, Usage(), message)
