"""One small adapter per framework, so the shared suite drives each the same way.

A harness opens its integration on a store, builds the framework's own agent with
ctxrelay's ``read_file``/``write_file`` (as the framework's tools) plus the
integration's ``new_context`` and ``session_history``, and runs it to its end over
real HTTP against one of the local wire servers. A fourth integration is one class here
and one line in ``HARNESSES``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctxrelay.budget import Budget
from ctxrelay.integrations import Relay
from ctxrelay.runtime.events import EventSink
from ctxrelay.runtime.tools import ReadFile, Tool, WriteFile
from ctxrelay.store import Store
from ctxrelay.testing import AnthropicServer, OpenAIServer

MODEL = "gpt-4.1"


WireServer = OpenAIServer | AnthropicServer


class Harness(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def module(self) -> str:
        """The framework's import name (the suite skips when it is not installed)."""
        ...

    def server(self, steps: Any) -> WireServer: ...

    def open(
        self,
        store: Store,
        *,
        session_id: str,
        budget: Budget,
        workspace: Path,
        on_event: EventSink | None = None,
    ) -> Any: ...

    def relay(self, integration: Any) -> Relay: ...

    def add_tool(self, integration: Any, tool: Tool) -> None:
        """Offer one more ctxrelay tool to the agents ``run`` builds."""
        ...

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str: ...


@dataclass(frozen=True)
class OpenAIAgentsHarness:
    name: str = "openai-agents"
    module: str = "agents"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

    def open(
        self,
        store: Store,
        *,
        session_id: str,
        budget: Budget,
        workspace: Path,
        on_event: EventSink | None = None,
    ) -> Any:
        from ctxrelay.integrations.openai_agents import AgentsRelay

        return AgentsRelay.open(
            store,
            session_id=session_id,
            budget=budget,
            model=MODEL,
            workspace=workspace,
            on_event=on_event,
        )

    def relay(self, integration: Any) -> Relay:
        relay: Relay = integration.relay
        return relay

    def add_tool(self, integration: Any, tool: Tool) -> None:
        integration.tools.append(integration.function_tool(tool))

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
        from openai import AsyncOpenAI

        set_tracing_disabled(True)
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        agent: Agent[Any] = Agent(
            name="coder",
            instructions="You are a careful coding agent.",
            tools=[
                integration.function_tool(ReadFile()),
                integration.function_tool(WriteFile()),
                *integration.tools,
            ],
            model=OpenAIChatCompletionsModel(MODEL, openai_client=client),
        )
        kwargs = integration.run_kwargs()
        try:
            if stream:
                streamed = Runner.run_streamed(agent, prompt, max_turns=100, **kwargs)
                async for _ in streamed.stream_events():
                    pass
                return str(streamed.final_output)
            result = await Runner.run(agent, prompt, max_turns=100, **kwargs)
            return str(result.final_output)
        finally:
            await client.close()


async def _run_pydantic_ai(integration: Any, model: Any, prompt: str, *, stream: bool) -> str:
    from pydantic_ai import Agent

    agent: Agent[None, str] = Agent(
        model,
        instructions="You are a careful coding agent.",
        capabilities=[integration.capability],
    )
    if stream:

        async def drain(_ctx: Any, events: Any) -> None:
            async for _ in events:
                pass

        result = await agent.run(prompt, event_stream_handler=drain)
    else:
        result = await agent.run(prompt)
    return str(result.output)


@dataclass(frozen=True)
class PydanticAIHarness:
    name: str = "pydantic-ai"
    module: str = "pydantic_ai"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

    def open(
        self,
        store: Store,
        *,
        session_id: str,
        budget: Budget,
        workspace: Path,
        on_event: EventSink | None = None,
    ) -> Any:
        from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

        return PydanticAIRelay.open(
            store,
            session_id=session_id,
            budget=budget,
            model=MODEL,
            workspace=workspace,
            on_event=on_event,
            tools=[ReadFile(), WriteFile()],
        )

    def relay(self, integration: Any) -> Relay:
        relay: Relay = integration.relay
        return relay

    def add_tool(self, integration: Any, tool: Tool) -> None:
        integration.tools.append(integration.tool(tool))

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        try:
            return await _run_pydantic_ai(integration, model, prompt, stream=stream)
        finally:
            await client.close()


@dataclass(frozen=True)
class PydanticAIAnthropicHarness(PydanticAIHarness):
    """pydantic-ai with its Anthropic model, against the local Messages server."""

    name: str = "pydantic-ai-anthropic"

    def server(self, steps: Any) -> WireServer:
        return AnthropicServer(steps)

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(base_url=server.base_url, api_key="test")
        model = AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(anthropic_client=client)
        )
        try:
            return await _run_pydantic_ai(integration, model, prompt, stream=stream)
        finally:
            await client.close()


@dataclass(frozen=True)
class LangChainHarness:
    name: str = "langchain"
    module: str = "langchain"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

    def open(
        self,
        store: Store,
        *,
        session_id: str,
        budget: Budget,
        workspace: Path,
        on_event: EventSink | None = None,
    ) -> Any:
        from ctxrelay.integrations.langchain import LangChainRelay

        return LangChainRelay.open(
            store,
            session_id=session_id,
            budget=budget,
            model=MODEL,
            workspace=workspace,
            on_event=on_event,
            tools=[ReadFile(), WriteFile()],
        )

    def relay(self, integration: Any) -> Relay:
        relay: Relay = integration.relay
        return relay

    def add_tool(self, integration: Any, tool: Tool) -> None:
        integration.tools.append(integration.tool(tool))

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from langchain.agents import create_agent
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        model = ChatOpenAI(
            model=MODEL, base_url=server.base_url, api_key=SecretStr("test"), stream_usage=True
        )
        agent: Any = create_agent(
            model,
            system_prompt="You are a careful coding agent.",
            middleware=[integration.middleware],
        )
        request = {"messages": [{"role": "user", "content": prompt}]}
        config = {"recursion_limit": 200}
        try:
            if stream:  # "messages" makes the model stream its tokens
                last: Any = None
                async for mode, data in agent.astream(
                    request, config, stream_mode=["messages", "values"]
                ):
                    if mode == "values":
                        last = data
                return str(last["messages"][-1].content)
            state = await agent.ainvoke(request, config)
            return str(state["messages"][-1].content)
        finally:  # the chat model's own HTTP clients
            await model.root_async_client.close()
            model.root_client.close()


HARNESSES: list[Harness] = [
    OpenAIAgentsHarness(),
    PydanticAIHarness(),
    PydanticAIAnthropicHarness(),
    LangChainHarness(),
]


def installed(harness: Harness) -> bool:
    return importlib.util.find_spec(harness.module) is not None
