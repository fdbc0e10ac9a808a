"""Mistakes with an integration are caught, in the API's words: a seam left out warns once
and ``new_context`` says what to pass; a stream without usage warns once; a framework
outside the supported range, an unknown model, a model that is not the agent's and a
store that cannot be written fail at ``open()`` (or before the first request) naming
the argument to change; ``str`` paths work.

The runs use the real frameworks against the local wire servers, as the other tests do.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import subprocess
import tomllib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.budget.models import model_facts
from ctxrelay.errors import (
    ConfigError,
    StoreUnavailableError,
    UnknownModelError,
    UnsupportedFrameworkError,
)
from ctxrelay.integrations import IntegrationWarning
from ctxrelay.integrations._relay import FrameworkRelay
from ctxrelay.integrations._support import supported_ranges
from ctxrelay.integrations.langchain import LangChainRelay
from ctxrelay.integrations.openai_agents import AgentsRelay
from ctxrelay.integrations.pydantic_ai import PydanticAIRelay
from ctxrelay.runtime.tools import ReadFile
from ctxrelay.store import Store, open_store
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.integrations.harness import MODEL, LangChainHarness

PROJECT = Path(__file__).resolve().parents[2]
BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
RELAYS: list[type[FrameworkRelay]] = [AgentsRelay, PydanticAIRelay, LangChainRelay]

# One agent run per framework: (integration, server, prompt, model name, with ctxrelay's
# seam) -> the final answer.
Runner = Callable[[Any, OpenAIServer, str, str, bool], Coroutine[Any, Any, str]]


async def _agents(relay: Any, server: OpenAIServer, prompt: str, model: str, seam: bool) -> str:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=server.base_url, api_key="test")
    tools: list[Any] = [*relay.tools]
    agent: Agent[Any] = Agent(
        name="coder", tools=tools, model=OpenAIChatCompletionsModel(model, openai_client=client)
    )
    try:
        kwargs = relay.run_kwargs() if seam else {}
        return str((await Runner.run(agent, prompt, **kwargs)).final_output)
    finally:
        await client.close()


async def _pydantic_ai(
    relay: Any, server: OpenAIServer, prompt: str, model: str, seam: bool
) -> str:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=server.base_url, api_key="test")
    chat = OpenAIChatModel(model, provider=OpenAIProvider(openai_client=client))
    agent: Agent[None, str] = (
        Agent(chat, capabilities=[relay.capability]) if seam else Agent(chat, tools=relay.tools)
    )
    try:
        return (await agent.run(prompt)).output
    finally:
        await client.close()


async def _langchain(relay: Any, server: OpenAIServer, prompt: str, model: str, seam: bool) -> str:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    chat = ChatOpenAI(model=model, base_url=server.base_url, api_key=SecretStr("test"))
    agent: Any = (
        create_agent(chat, middleware=[relay.middleware])
        if seam
        else create_agent(chat, tools=relay.tools)
    )
    try:
        state = await agent.ainvoke({"messages": [{"role": "user", "content": prompt}]})
        return str(state["messages"][-1].content)
    finally:
        await LangChainHarness().close(chat)


RUNS: list[tuple[type[FrameworkRelay], Runner, str]] = [
    (AgentsRelay, _agents, "run_kwargs"),
    (PydanticAIRelay, _pydantic_ai, "capabilities=[relay.capability]"),
    (LangChainRelay, _langchain, "middleware=[relay.middleware]"),
]
IDS = ["openai-agents", "pydantic-ai", "langchain"]


@pytest.mark.parametrize(("cls", "run", "seam"), RUNS, ids=IDS)
def test_tools_without_the_seam_warn_once_and_new_context_says_what_to_pass(
    cls: type[FrameworkRelay], run: Runner, seam: str, store: Store, workspace: Path
) -> None:
    relay = cls.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    steps = [
        Step(text="Handing off.", tool_calls=[ToolUse("new_context")]),
        Step(text="Looking back.", tool_calls=[ToolUse("session_history", {"action": "list"})]),
        Step(text="Done."),
    ]
    with pytest.warns(IntegrationWarning) as caught, OpenAIServer(steps) as server:
        asyncio.run(run(relay, server, "Hand off.", MODEL, False))
    assert len([w for w in caught if w.category is IntegrationWarning]) == 1
    assert seam in str(caught[0].message)
    # The model was told the truth, with what to pass, instead of "window 1 will be sealed".
    answer = json.dumps(server.requests[1].body)
    assert "new_context failed" in answer
    assert seam in answer
    assert "will be sealed" not in answer
    assert store.rows("s1") == []


def test_a_langchain_stream_without_usage_warns_once(store: Store, workspace: Path) -> None:
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    relay = LangChainRelay.open(
        store, session_id="s1", budget=BUDGET, workspace=workspace, tools=[ReadFile()]
    )
    steps = [
        Step(text="Reading.", tool_calls=[ToolUse("read_file", {"path": "README.md"})]),
        Step(text="Done."),
    ]

    async def go(server: OpenAIServer) -> None:
        chat = ChatOpenAI(model=MODEL, base_url=server.base_url, api_key=SecretStr("t"))
        agent: Any = create_agent(chat, middleware=[relay.middleware])
        request = {"messages": [{"role": "user", "content": "Read the readme."}]}
        try:
            async for _ in agent.astream(request, stream_mode="messages"):
                pass
        finally:
            await LangChainHarness().close(chat)

    with (
        pytest.warns(IntegrationWarning, match="stream_usage=True") as caught,
        OpenAIServer(steps) as server,
    ):
        asyncio.run(go(server))
    assert len(caught) == 1
    assert len([r for r in store.rows("s1") if r.kind == "assistant"]) == 2


# -- open(): versions, models, paths, stores ---------------------------------------------


def test_the_supported_ranges_are_the_extras_of_pyproject() -> None:
    extras = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    from packaging.requirements import Requirement

    for cls in RELAYS:
        declared = {(r := Requirement(line)).name: str(r.specifier) for line in extras[cls.EXTRA]}
        assert supported_ranges(cls.EXTRA) == declared, cls.EXTRA


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
def test_a_framework_outside_the_range_fails_at_open_naming_range_and_extra(
    cls: type[FrameworkRelay], store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, spec = next(iter(supported_ranges(cls.EXTRA).items()))
    real = importlib.metadata.version

    def version(dist: str) -> str:
        return "0.1.0" if dist == name else real(dist)

    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(UnsupportedFrameworkError) as err:
        cls.open(store, budget=BUDGET)
    message = str(err.value)
    assert f"{name}{spec}" in message
    assert "not the installed 0.1.0" in message
    assert f"pip install 'ctxrelay[{cls.EXTRA}]'" in message
    assert err.value.distribution == name
    assert store.list_sessions() == []  # nothing stored


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
def test_an_unknown_model_names_the_argument_not_a_flag(
    cls: type[FrameworkRelay], store: Store
) -> None:
    with pytest.raises(UnknownModelError) as err:
        cls.open(store, model="my-local-model")
    message = str(err.value)
    assert "--limit" not in message
    assert "budget=budget_for('openai', 'my-local-model', limit=TOKENS)" in message


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
def test_no_model_and_no_budget_names_both_arguments(
    cls: type[FrameworkRelay], store: Store
) -> None:
    with pytest.raises(ConfigError, match=r"pass model= .* or budget=budget_for"):
        cls.open(store)
    assert store.list_sessions() == []


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
def test_a_claude_model_gets_its_own_provider(cls: type[FrameworkRelay], store: Store) -> None:
    facts = model_facts("claude-sonnet-4-5")
    assert facts is not None
    relay = cls.open(store, model="claude-sonnet-4-5")
    assert relay.relay.budget.limit == facts.context_window
    # Asked for it on another provider, the error says which provider the table knows.
    with pytest.raises(UnknownModelError, match="pass provider='anthropic'"):
        cls.open(store, model="claude-sonnet-4-5", provider="openai")


def test_the_model_is_read_from_the_frameworks_own_objects(store: Store) -> None:
    from agents import Agent, OpenAIResponsesModel
    from anthropic import AsyncAnthropic
    from langchain_anthropic import ChatAnthropic
    from openai import AsyncOpenAI
    from pydantic import SecretStr
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    claude = model_facts("claude-sonnet-4-6")
    assert claude is not None
    openai_client = AsyncOpenAI(api_key="t", base_url="http://127.0.0.1:9")
    sdk_agent: Agent[Any] = Agent(
        name="a", model=OpenAIResponsesModel("gpt-4.1", openai_client=openai_client)
    )
    assert AgentsRelay.open(store, model=sdk_agent).relay.model == "gpt-4.1"
    provider = AnthropicProvider(anthropic_client=AsyncAnthropic(api_key="t"))
    agent: PydanticAgent[None, str] = PydanticAgent(
        AnthropicModel("claude-sonnet-4-6", provider=provider)
    )
    opened = PydanticAIRelay.open(store, model=agent)
    assert opened.relay.model == "claude-sonnet-4-6"
    assert opened.relay.budget.limit == claude.context_window
    chat = ChatAnthropic(
        model_name="claude-sonnet-4-6", api_key=SecretStr("t"), timeout=None, stop=None
    )
    lc = LangChainRelay.open(store, model=chat)
    assert (lc.relay.model, lc.relay.budget.limit) == ("claude-sonnet-4-6", claude.context_window)
    with pytest.raises(ConfigError, match="model="):
        LangChainRelay.open(store, model=object())


@pytest.mark.parametrize(("cls", "run", "seam"), RUNS, ids=IDS)
def test_an_agent_on_another_model_than_the_budgets_fails_before_sending(
    cls: type[FrameworkRelay], run: Runner, seam: str, store: Store, workspace: Path
) -> None:
    relay = cls.open(store, session_id="s1", model="gpt-4.1", workspace=workspace)
    with OpenAIServer([Step(text="Done.")]) as server, pytest.raises(ConfigError) as err:
        asyncio.run(run(relay, server, "Hello.", "gpt-4o", True))
    assert "the agent calls gpt-4o" in str(err.value)
    assert "model='gpt-4o'" in str(err.value)
    assert server.requests == []
    # The same model passes (a date suffix is the same model).
    with OpenAIServer([Step(text="Done.")]) as server:
        assert asyncio.run(run(relay, server, "Hello.", "gpt-4.1-2025-04-14", True)) == "Done."


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
def test_str_paths_are_accepted(cls: type[FrameworkRelay], tmp_path: Path, workspace: Path) -> None:
    opened = cls.open(str(tmp_path / "agent.db"), budget=BUDGET, workspace=str(workspace))
    relay = opened.relay
    assert relay.workspace == workspace.resolve()
    run = relay.begin()
    try:
        result = asyncio.run(relay.run_tool(ReadFile(), {"path": "README.md"}))
    finally:
        run.release()
    assert "A tiny task list." in result.content


def _read_only(path: Path) -> None:
    """Make ``path`` unwritable, even for root (an immutable file), or skip."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a file read-only as root here: {done.stderr.decode().strip()}")


def _writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    path.chmod(0o644)


@pytest.mark.parametrize("cls", RELAYS, ids=IDS)
@pytest.mark.parametrize("session", ["existing", "new"])
def test_a_store_that_cannot_be_written_fails_at_open(
    cls: type[FrameworkRelay], session: str, tmp_path: Path
) -> None:
    db = tmp_path / "agent.db"
    s = open_store(str(db))
    s.create_session(metadata={}, session_id="s1")
    s.close()
    _read_only(db)
    try:
        with pytest.raises(StoreUnavailableError, match="cannot be written"):
            cls.open(db, session_id="s1" if session == "existing" else "s2", budget=BUDGET)
    finally:
        _writable(db)
