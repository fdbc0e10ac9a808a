"""Every way a framework's run ends gives the session's lease up, on each framework's own
loop over real HTTP against a local wire server: a failed model call, a framework's turn
limit, a tool that raises, a cancelled stream, a stream consumer that stops early. The
next run of the same relay, in the same process, goes ahead instead of failing with
``SessionInUseError`` against itself; and the error, when a run does hold the session,
says who, since when, and what to do."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.errors import SessionInUseError
from ctxrelay.integrations import Relay
from ctxrelay.store import Store
from ctxrelay.testing import Fault, OpenAIServer, Step, ToolUse
from tests.integrations.harness import (
    MODEL,
    Harness,
    LangChainHarness,
    OpenAIAgentsHarness,
    PydanticAIHarness,
)

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)


def test_a_failed_model_call_leaves_the_session_to_the_next_run(
    harness: Harness, store: Store, workspace: Path
) -> None:
    relay = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    steps = [Step(fault=Fault.http(404, "no such model")), Step(text="Done.")]

    async def twice(server: Any) -> str:
        with pytest.raises(Exception, match="no such model") as caught:
            await harness.run(relay, server, "Try once.")
        assert not isinstance(caught.value, SessionInUseError)
        return await harness.run(relay, server, "Try again.")

    with harness.server(steps) as server:
        assert asyncio.run(twice(server)) == "Done."
    assert store.lease("s1") is None


@contextlib.asynccontextmanager
async def _agents_run(relay: Any, server: OpenAIServer) -> AsyncIterator[tuple[Any, Any]]:
    """An Agents SDK agent on ``server`` (no retries by the client) and ``Runner``."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    agent: Agent[Any] = Agent(
        name="coder",
        instructions="Be careful.",
        tools=relay.tools,
        model=OpenAIChatCompletionsModel(MODEL, openai_client=client),
    )
    try:
        yield agent, Runner
    finally:
        await client.close()


@pytest.fixture
def agents_sdk() -> None:
    pytest.importorskip("agents", reason="pip install 'ctxrelay[openai-agents]'")


def _open(harness: Harness, store: Store, workspace: Path) -> Any:
    return harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)


@pytest.mark.usefixtures("agents_sdk")
def test_agents_sdk_max_turns_leaves_the_session_to_the_next_run(
    store: Store, workspace: Path
) -> None:
    from agents.exceptions import MaxTurnsExceeded

    relay = _open(OpenAIAgentsHarness(), store, workspace)
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "README.md"})]),
        Step(text="Done."),
    ]

    async def go(server: OpenAIServer) -> str:
        async with _agents_run(relay, server) as (agent, runner):
            with pytest.raises(MaxTurnsExceeded):
                await runner.run(agent, "Read it.", max_turns=1, **relay.run_kwargs())
            result = await runner.run(agent, "Go on.", **relay.run_kwargs())
            return str(result.final_output)

    with OpenAIServer(steps) as server:
        assert asyncio.run(go(server)) == "Done."
    assert store.lease("s1") is None


@pytest.mark.usefixtures("agents_sdk")
def test_agents_sdk_a_cancelled_stream_gives_the_session_up(store: Store, workspace: Path) -> None:
    relay = _open(OpenAIAgentsHarness(), store, workspace)

    async def go(server: OpenAIServer) -> str:
        async with _agents_run(relay, server) as (agent, runner):
            hold = server.hold()
            streamed = runner.run_streamed(agent, "Stream it.", **relay.run_kwargs())
            events = streamed.stream_events()
            waiting = asyncio.ensure_future(anext(events, None))
            while not hold.arrived.is_set():  # the request is at the server: the run holds it
                await asyncio.sleep(0.01)
            assert store.lease("s1") is not None
            streamed.cancel()
            await waiting
            async for _ in events:
                pass
            while not hold.hung_up.is_set():  # the SDK closed the request: no step taken
                await asyncio.sleep(0.01)
            assert store.lease("s1") is None  # the cancel ended the run, and its hold
            hold.release()
            result = await runner.run(agent, "Again.", **relay.run_kwargs())
            return str(result.final_output)

    with OpenAIServer([Step(text="Done.")]) as server:
        assert asyncio.run(go(server)) == "Done."
    assert store.lease("s1") is None


def _langchain_agent(relay: Any, harness: LangChainHarness, server: OpenAIServer) -> Any:
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    @tool
    def boom() -> str:
        """Explode."""
        raise RuntimeError("the tool broke")

    model = harness.chat_model(server)
    return model, create_agent(model, tools=[boom], middleware=[relay.middleware])


@pytest.fixture
def langchain() -> None:
    pytest.importorskip("langchain", reason="pip install 'ctxrelay[langchain]'")


@pytest.mark.usefixtures("langchain")
@pytest.mark.parametrize("ending", ["a tool raises", "the recursion limit", "the consumer stops"])
def test_langchain_every_ending_leaves_the_session_to_the_next_run(
    store: Store, workspace: Path, ending: str
) -> None:
    harness = LangChainHarness()
    relay = _open(harness, store, workspace)
    call = ToolUse("boom") if ending == "a tool raises" else ToolUse("read_file", {"path": "x"})
    steps = [
        Step(text="Working.", tool_calls=[call]),
        Step(text="Done."),
        Step(text="Done again."),
    ]

    async def go(server: OpenAIServer) -> str:
        from langgraph.errors import GraphRecursionError

        model, agent = _langchain_agent(relay, harness, server)
        request = {"messages": [{"role": "user", "content": "Work."}]}
        try:
            if ending == "a tool raises":
                with pytest.raises(RuntimeError, match="the tool broke"):
                    await agent.ainvoke(request)
            elif ending == "the recursion limit":
                with pytest.raises(GraphRecursionError):
                    await agent.ainvoke(request, {"recursion_limit": 2})
            else:
                stream = agent.astream(request, stream_mode="values")
                await anext(stream)  # the input state: the run has begun
                await anext(stream)  # the model's answer, its tool call not yet run
                await stream.aclose()  # a client disconnect
            again = {"messages": [{"role": "user", "content": "Again."}]}
            state = await agent.ainvoke(again)
            return str(state["messages"][-1].content)
        finally:
            await harness.close(model)

    with OpenAIServer(steps) as server:
        assert asyncio.run(go(server)) in ("Done.", "Done again.")
    assert store.lease("s1") is None


def test_the_error_says_who_holds_the_session_and_what_to_do(
    harness: Harness, store: Store, workspace: Path
) -> None:
    integration = _open(harness, store, workspace)
    relay: Relay = harness.relay(integration)
    run = relay.begin()
    with pytest.raises(SessionInUseError) as caught:
        relay.begin()
    error = caught.value
    text = str(error)
    assert error.mine  # this process holds it
    assert f"pid {os.getpid()}" in text
    assert "this process" in text
    assert "wait=" in text
    assert "relay.close()" in text
    assert "held for " in text
    assert "timeout" not in text
    run.release()
    relay.begin().release()


@pytest.mark.usefixtures("agents_sdk")
@pytest.mark.parametrize("where", ["RunConfig(model=)", "an agent without a model"])
def test_agents_sdk_checks_the_model_the_sdk_really_calls(
    store: Store, workspace: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents import Agent, RunConfig, Runner, set_tracing_disabled
    from agents.models.openai_provider import OpenAIProvider
    from openai import AsyncOpenAI

    from ctxrelay.errors import ConfigError
    from ctxrelay.integrations.openai_agents import AgentsRelay

    set_tracing_disabled(True)
    relay = AgentsRelay.open(store, session_id="s1", model="gpt-4.1", workspace=workspace)

    async def go(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        provider = OpenAIProvider(openai_client=client, use_responses=False)
        try:
            if where == "RunConfig(model=)":
                agent: Agent[Any] = Agent(name="a", model="gpt-4.1")
                config = RunConfig(model="gpt-4o", model_provider=provider)
            else:
                monkeypatch.setenv("OPENAI_DEFAULT_MODEL", "gpt-4o")
                agent = Agent(name="a")
                config = RunConfig(model_provider=provider)
            with pytest.raises(ConfigError, match="the agent calls gpt-4o"):
                await Runner.run(agent, "Hello.", **relay.run_kwargs(run_config=config))
        finally:
            await client.close()

    with OpenAIServer([Step(text="Done.")]) as server:
        asyncio.run(go(server))
        assert server.requests == []
    assert store.lease("s1") is None


def test_the_session_status_follows_its_runs(
    harness: Harness, store: Store, workspace: Path
) -> None:
    relay = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    steps = [Step(fault=Fault.http(404, "no such model")), Step(text="Done.")]

    async def go(server: Any) -> list[str]:
        statuses = []
        with pytest.raises(Exception, match="no such model"):
            await harness.run(relay, server, "Try once.")
        statuses.append(store.get_session("s1").status)
        await harness.run(relay, server, "Try again.")
        statuses.append(store.get_session("s1").status)
        return statuses

    with harness.server(steps) as server:
        assert asyncio.run(go(server)) == ["paused", "done"]


def test_pydantic_ai_a_usage_limit_stores_the_tool_result_as_it_is(
    store: Store, workspace: Path
) -> None:
    pytest.importorskip("pydantic_ai", reason="pip install 'ctxrelay[pydantic-ai]'")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    relay = _open(PydanticAIHarness(), store, workspace)
    steps = [Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "README.md"})])]

    async def go(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(model, capabilities=[relay.capability])
        try:
            with pytest.raises(UsageLimitExceeded):
                await agent.run("Read it.", usage_limits=UsageLimits(request_limit=1))
        finally:
            await client.close()

    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
    (result,) = [r for r in store.rows("s1") if r.kind == "tool_result"]
    assert "A tiny task list." in (result.text or "")
    assert not result.metadata["is_error"]
    assert store.lease("s1") is None
    assert store.get_session("s1").status == "paused"
