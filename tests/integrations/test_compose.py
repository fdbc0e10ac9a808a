"""ctxrelay composed with each framework's own tools for the same job: the Agents SDK's
hooks, ``RunConfig`` and model-input filter (its ``ToolOutputTrimmer``), pydantic-ai's
history processors on either side of ctxrelay's capability, and LangChain's
``SummarizationMiddleware`` on either side of ctxrelay's middleware.

Each test runs the real framework against a local wire server and checks what the server
received: the request as the user's own tool shaped it, with ctxrelay's policy measured on
that request (the response row's ``request_bytes``), and ctxrelay's store still holding
every item for ``session_history``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.runtime.tools import ReadFile
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.integrations.harness import (
    MODEL,
    LangChainHarness,
    OpenAIAgentsHarness,
    OpenAIAgentsResponsesHarness,
)

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
BIG = "line 000100 PASSED"  # a line of big.log, the workspace's large file


def _bodies(server: OpenAIServer) -> list[str]:
    return [json.dumps(r.body, ensure_ascii=False) for r in server.requests if r.body]


def _responses(store: Store) -> list[Any]:
    return [r for r in store.rows("s1") if r.kind == "assistant"]


def _big_result(store: Store) -> str:
    texts = [r.text or "" for r in store.rows("s1") if r.kind == "tool_result"]
    return next(t for t in texts if BIG in t)


# -- OpenAI Agents SDK ------------------------------------------------------------------


@pytest.mark.parametrize(
    "agents_harness",
    [OpenAIAgentsHarness(), OpenAIAgentsResponsesHarness()],
    ids=["chat-completions", "responses"],
)
def test_agents_sdk_merges_your_hooks_run_config_and_trimmer(
    agents_harness: OpenAIAgentsHarness, store: Store, workspace: Path
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, ModelSettings, RunConfig, RunHooks, Runner, SQLiteSession
    from agents.extensions import ToolOutputTrimmer
    from openai import AsyncOpenAI

    from ctxrelay.integrations.openai_agents import AgentsRelay

    class Counting(RunHooks[Any]):
        def __init__(self) -> None:
            self.seen: list[str] = []

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            self.seen.append("llm_end")

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
            self.seen.append(f"tool_end:{tool.name}")

        async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
            self.seen.append("agent_end")

    relay = AgentsRelay.open(
        store, session_id="s1", budget=BUDGET, workspace=workspace, tools=[ReadFile()]
    )
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "big.log"})]),
        Step(text="Read it."),
        Step(text="Again, the small one.", tool_calls=[ToolUse("read_file", {"path": "todo.py"})]),
        Step(text="Done."),
    ]
    mine = RunConfig(
        model_settings=ModelSettings(temperature=0.25),
        workflow_name="mine",
        call_model_input_filter=ToolOutputTrimmer(recent_turns=1, max_output_chars=500),
    )
    hooks = Counting()

    async def go(server: OpenAIServer) -> None:
        from agents import set_tracing_disabled

        set_tracing_disabled(True)
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        tools: list[Any] = [*relay.tools]
        agent: Agent[Any] = Agent(
            name="coder",
            instructions="Be careful.",
            tools=tools,
            model=agents_harness.model(client),
        )
        session = SQLiteSession("s1")
        try:
            for prompt in ("Read big.log.", "Now read todo.py."):
                kwargs = relay.run_kwargs(hooks=hooks, run_config=mine)
                await Runner.run(agent, prompt, session=session, **kwargs)
        finally:
            await client.close()

    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
    bodies = _bodies(server)
    assert len(bodies) == 4
    # Your RunConfig is kept (its model settings reach the wire) and left unchanged.
    assert all('"temperature": 0.25' in b for b in bodies)
    assert mine.call_model_input_filter.__class__ is ToolOutputTrimmer
    # Your hooks ran at every event, and ctxrelay's stored every response's usage.
    assert hooks.seen.count("llm_end") == 4
    assert hooks.seen.count("agent_end") == 2
    assert "tool_end:read_file" in hooks.seen
    responses = _responses(store)
    assert len(responses) == 4
    assert all(r.metadata["context_tokens"] > 0 for r in responses)
    # The first run's second request carries big.log whole (it is the newest turn); in
    # the second run your trimmer cut it, and ctxrelay sent it cut ...
    assert BIG in bodies[1]
    assert BIG not in bodies[2]
    assert BIG not in bodies[3]
    assert "[Trimmed: read_file output" in bodies[2]
    # ... and measured the request it sent, not its own copy of the output.
    full = _big_result(store)
    assert responses[1].metadata["request_bytes"] > len(full)
    assert responses[2].metadata["request_bytes"] < len(full) // 4
    # ctxrelay's store keeps the whole output for session_history.
    assert len(full) > 50_000


def test_agents_sdk_sends_what_your_filter_adds_once_and_stores_none_of_it(
    store: Store, workspace: Path
) -> None:
    pytest.importorskip("agents")
    from agents import Agent, Runner
    from agents.run_config import CallModelData, ModelInputData
    from openai import AsyncOpenAI

    from ctxrelay.integrations.openai_agents import AgentsRelay

    note: Any = {"role": "developer", "content": "Answer tersely."}

    async def remind(data: CallModelData[Any]) -> ModelInputData:  # an async filter
        model_data = data.model_data
        return ModelInputData(input=[note, *model_data.input], instructions=model_data.instructions)

    relay = AgentsRelay.open(
        store, session_id="s1", budget=BUDGET, workspace=workspace, tools=[ReadFile()]
    )
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "todo.py"})]),
        Step(text="Done."),
        Step(text="Again done."),
    ]

    async def go(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        tools: list[Any] = [*relay.tools]
        agent: Agent[Any] = Agent(
            name="coder", tools=tools, model=OpenAIAgentsHarness().model(client)
        )
        try:
            for prompt in ("Read todo.py.", "And now?"):  # no session: ctxrelay's window
                kwargs = relay.run_kwargs(call_model_input_filter=remind)
                await Runner.run(agent, prompt, **kwargs)
        finally:
            await client.close()

    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
    bodies = _bodies(server)
    assert len(bodies) == 3
    for body in bodies:
        assert body.count("Answer tersely.") == 1
    # The second run's request: the first run's items (ctxrelay's window), then the
    # note the filter put ahead of this run's prompt, then the prompt.
    last = bodies[2]
    assert last.index("Read todo.py.") < last.index("Answer tersely.") < last.index("And now?")
    assert all("Answer tersely." not in (r.text or "") for r in store.rows("s1"))


# -- pydantic-ai --------------------------------------------------------------------------


def _trim_old_returns(messages: list[Any]) -> list[Any]:
    """A history processor: every tool return but the newest message's becomes a stub."""
    from dataclasses import replace

    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    out = []
    for i, message in enumerate(messages):
        if i < len(messages) - 1 and isinstance(message, ModelRequest):
            parts = [
                ToolReturnPart(p.tool_name, "[trimmed]", p.tool_call_id)
                if isinstance(p, ToolReturnPart)
                else p
                for p in message.parts
            ]
            out.append(replace(message, parts=parts))
        else:
            out.append(message)
    return out


@pytest.mark.parametrize("where", ["before", "after"])
def test_pydantic_ai_measures_the_request_your_history_processor_made(
    where: str, store: Store, workspace: Path
) -> None:
    pytest.importorskip("pydantic_ai")
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

    relay = PydanticAIRelay.open(
        store, session_id="s1", budget=BUDGET, workspace=workspace, tools=[ReadFile()]
    )
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "big.log"})]),
        Step(text="And the code.", tool_calls=[ToolUse("read_file", {"path": "todo.py"})]),
        Step(text="Done."),
    ]
    mine = ProcessHistory(_trim_old_returns)  # what a history processor is in pydantic-ai 2
    capabilities = [mine, relay.capability] if where == "before" else [relay.capability, mine]

    async def go(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(
            model,
            instructions="Be careful.",
            capabilities=capabilities,
        )
        try:
            await agent.run("Read big.log, then todo.py.")
        finally:
            await client.close()

    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
    bodies = _bodies(server)
    assert len(bodies) == 3
    assert BIG in bodies[1]  # the newest tool return is left whole
    assert BIG not in bodies[2]  # your processor stubbed it, and ctxrelay sent the stub
    assert "[trimmed]" in bodies[2]
    full = _big_result(store)
    responses = _responses(store)
    assert responses[1].metadata["request_bytes"] > len(full)
    assert responses[2].metadata["request_bytes"] < len(full) // 4
    assert len(full) > 50_000  # ctxrelay's store keeps the whole output


# -- LangChain ----------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["summarization-first", "ctxrelay-first"])
def test_langchain_window_follows_the_summarized_state(
    order: str, store: Store, workspace: Path
) -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langgraph.checkpoint.memory import InMemorySaver

    from ctxrelay.integrations.langchain import LangChainRelay

    harness = LangChainHarness()
    relay = LangChainRelay.open(
        store, session_id="s1", budget=BUDGET, workspace=workspace, tools=[ReadFile()]
    )
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "big.log"})]),
        Step(text="The readme.", tool_calls=[ToolUse("read_file", {"path": "README.md"})]),
        Step(text="The code.", tool_calls=[ToolUse("read_file", {"path": "todo.py"})]),
        Step(text="Done."),
        Step(text="Still done."),
    ]
    summary = "SUMMARY: big.log passed, README and todo.py were read."

    async def go(server: OpenAIServer, summarizer: OpenAIServer) -> None:
        model = harness.chat_model(server)
        summarize = harness.chat_model(summarizer)
        mine = SummarizationMiddleware(
            model=summarize,
            trigger=("messages", 6),
            keep=("messages", 2),
            trim_tokens_to_summarize=None,  # big.log goes to the summarizer whole
        )
        middleware = (
            [mine, relay.middleware] if order == "summarization-first" else [relay.middleware, mine]
        )
        agent: Any = create_agent(
            model, system_prompt="Be careful.", middleware=middleware, checkpointer=InMemorySaver()
        )
        config: Any = {"recursion_limit": 50, "configurable": {"thread_id": "t1"}}
        try:
            for prompt in ("Read big.log, README.md and todo.py.", "Anything else?"):
                await agent.ainvoke({"messages": [{"role": "user", "content": prompt}]}, config)
        finally:
            await harness.close(model)
            await harness.close(summarize)

    with OpenAIServer(steps) as server, OpenAIServer([Step(text=summary)]) as summarizer:
        asyncio.run(go(server, summarizer))
    bodies = _bodies(server)
    assert len(bodies) == 5
    assert BIG in bodies[2]  # before the summary, the window is whole
    # From the summary on, every request carries it in place of what it replaced (the
    # second invocation too, which resumes from the checkpointed, summarized state) ...
    for body in bodies[3:]:
        assert summary in body
        assert BIG not in body
        assert "Read big.log, README.md and todo.py." not in body
    assert "Anything else?" in bodies[4]
    # ... and ctxrelay measured what it sent.
    full = _big_result(store)
    responses = _responses(store)
    assert responses[2].metadata["request_bytes"] > len(full)
    assert responses[3].metadata["request_bytes"] < len(full) // 4
    # The store keeps every message; the summary is the framework's, not a row.
    assert len([r for r in store.rows("s1") if r.kind == "tool_result"]) == 3
    assert all(summary not in (r.text or "") for r in store.rows("s1"))
