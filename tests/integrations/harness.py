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
from ctxrelay.runtime.tools import ReadFile, WriteFile
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


HARNESSES: list[Harness] = [OpenAIAgentsHarness()]


def installed(harness: Harness) -> bool:
    return importlib.util.find_spec(harness.module) is not None
