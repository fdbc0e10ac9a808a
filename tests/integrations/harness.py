"""One small adapter per framework, so the shared suite drives each the same way.

A harness opens its integration on a store, builds the framework's own agent with
ctxrelay's ``read_file``/``write_file`` (as the framework's tools) plus the
integration's ``new_context`` and ``session_history``, and runs it to its end over
real HTTP against one of the local wire servers. Another integration (or provider) is one class here
and one line in ``HARNESSES``.
"""

from __future__ import annotations

import importlib
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

    @property
    def extra(self) -> str:
        """ctxrelay's extra that installs the framework."""
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
        wait: float = 0.0,
    ) -> Any: ...

    def relay(self, integration: Any) -> Relay: ...

    def add_tool(self, integration: Any, tool: Tool) -> None:
        """Offer one more ctxrelay tool to the agents ``run`` builds."""
        ...

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str: ...


@dataclass(frozen=True)
class _Opens:
    """``open``, ``relay`` and ``add_tool``, the same for every integration: each opens
    through ``FrameworkRelay.open`` with ctxrelay's ``read_file`` and ``write_file``."""

    integration: str = ""
    """``module:Class`` of the integration."""
    tool_method: str = "tool"
    """The integration's method that makes a framework tool of a ctxrelay tool."""

    def open(
        self,
        store: Store,
        *,
        session_id: str,
        budget: Budget,
        workspace: Path,
        on_event: EventSink | None = None,
        wait: float = 0.0,
    ) -> Any:
        module, _, name = self.integration.partition(":")
        cls = getattr(importlib.import_module(module), name)
        return cls.open(
            store,
            session_id=session_id,
            budget=budget,
            model=MODEL,
            workspace=workspace,
            on_event=on_event,
            tools=[ReadFile(), WriteFile()],
            wait=wait,
        )

    def relay(self, integration: Any) -> Relay:
        relay: Relay = integration.relay
        return relay

    def add_tool(self, integration: Any, tool: Tool) -> None:
        integration.tools.append(getattr(integration, self.tool_method)(tool))


@dataclass(frozen=True)
class OpenAIAgentsHarness(_Opens):
    name: str = "openai-agents"
    module: str = "agents"
    extra: str = "openai-agents"
    integration: str = "ctxrelay.integrations.openai_agents:AgentsRelay"
    tool_method: str = "function_tool"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

    def model(self, client: Any) -> Any:
        """The SDK's model on ``client``: Chat Completions here."""
        from agents import OpenAIChatCompletionsModel

        return OpenAIChatCompletionsModel(MODEL, openai_client=client)

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from agents import Agent, Runner, set_tracing_disabled
        from openai import AsyncOpenAI

        set_tracing_disabled(True)
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        agent: Agent[Any] = Agent(
            name="coder",
            instructions="You are a careful coding agent.",
            tools=integration.tools,
            model=self.model(client),
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


@dataclass(frozen=True)
class OpenAIAgentsResponsesHarness(OpenAIAgentsHarness):
    """The Agents SDK on its default model, ``OpenAIResponsesModel`` (the Responses API)."""

    name: str = "openai-agents-responses"

    def model(self, client: Any) -> Any:
        from agents import OpenAIResponsesModel

        return OpenAIResponsesModel(MODEL, openai_client=client)


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
class PydanticAIHarness(_Opens):
    name: str = "pydantic-ai"
    module: str = "pydantic_ai"
    extra: str = "pydantic-ai"
    integration: str = "ctxrelay.integrations.pydantic_ai:PydanticAIRelay"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

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
class LangChainHarness(_Opens):
    name: str = "langchain"
    module: str = "langchain"
    extra: str = "langchain"
    integration: str = "ctxrelay.integrations.langchain:LangChainRelay"

    def server(self, steps: Any) -> WireServer:
        return OpenAIServer(steps)

    def chat_model(self, server: WireServer) -> Any:
        """The framework's chat model, pointed at ``server``."""
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        return ChatOpenAI(
            model=MODEL, base_url=server.base_url, api_key=SecretStr("test"), stream_usage=True
        )

    async def close(self, model: Any) -> None:
        """Close the chat model's HTTP clients. langchain-openai shares them between
        models of one address (a cache keyed by the base URL), so the cache is emptied
        too: a later model on that address (a reused port) must not get a closed one."""
        from langchain_openai.chat_models import _client_utils

        await model.root_async_client.close()
        model.root_client.close()
        _client_utils._cached_async_httpx_client.cache_clear()
        _client_utils._cached_sync_httpx_client.cache_clear()

    async def run(
        self, integration: Any, server: WireServer, prompt: str, *, stream: bool = False
    ) -> str:
        from langchain.agents import create_agent

        model = self.chat_model(server)
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
                return _text(last["messages"][-1].content)
            state = await agent.ainvoke(request, config)
            return _text(state["messages"][-1].content)
        finally:
            await self.close(model)


@dataclass(frozen=True)
class LangChainAnthropicHarness(LangChainHarness):
    """LangChain with ``ChatAnthropic``, against the local Messages server."""

    name: str = "langchain-anthropic"
    module: str = "langchain_anthropic"

    def server(self, steps: Any) -> WireServer:
        return AnthropicServer(steps)

    def chat_model(self, server: WireServer) -> Any:
        from langchain_anthropic import ChatAnthropic
        from pydantic import SecretStr

        return ChatAnthropic(  # streams report usage by default (stream_usage=True)
            model_name="claude-sonnet-4-6",
            base_url=server.base_url,
            api_key=SecretStr("test"),
            timeout=None,  # the defaults, which mypy asks to see spelled out
            stop=None,
        )

    async def close(self, model: Any) -> None:
        from langchain_anthropic import _client_utils  # cached per address, as above

        await model._async_client.close()
        model._client.close()
        _client_utils._get_default_async_httpx_client.cache_clear()
        _client_utils._get_default_httpx_client.cache_clear()


def _text(content: Any) -> str:
    """A final answer's text: a string, or (Anthropic) a list of content blocks."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


HARNESSES: list[Harness] = [
    OpenAIAgentsHarness(),
    OpenAIAgentsResponsesHarness(),
    PydanticAIHarness(),
    PydanticAIAnthropicHarness(),
    LangChainHarness(),
    LangChainAnthropicHarness(),
]


def installed(harness: Harness) -> bool:
    return importlib.util.find_spec(harness.module) is not None
