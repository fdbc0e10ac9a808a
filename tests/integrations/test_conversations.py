"""One relay is one conversation: each framework keys its conversations itself
(LangGraph's ``thread_id``, the Agents SDK's ``session=``, pydantic-ai's
``message_history``), and a relay handed a second one fails before anything is stored
or sent, instead of carrying the first user's messages into the second's requests. Over
real HTTP, against a local wire server."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.errors import ConversationError
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, Step
from tests.integrations.harness import (
    MODEL,
    LangChainHarness,
    OpenAIAgentsHarness,
    PydanticAIHarness,
)

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
SECRET = "Alice's card is 4111 1111 1111 1111."


def _sent(server: OpenAIServer) -> list[str]:
    return [json.dumps(r.body) for r in server.requests if r.body]


def _open(harness: Any, store: Store, workspace: Path) -> Any:
    return harness.open(store, session_id="alice", budget=BUDGET, workspace=workspace)


def _nothing_of_bob(sent: list[str], store: Store) -> None:
    """No request carried the second user's words, the session stored none of them, and
    no lease is left."""
    assert not any("Bob" in body for body in sent)
    assert not any("Bob" in (r.text or "") for r in store.rows("alice"))
    assert store.lease("alice") is None


@contextlib.asynccontextmanager
async def _pydantic_model(server: OpenAIServer) -> AsyncIterator[Any]:
    """pydantic-ai's OpenAI model, pointed at ``server`` (its client closed after)."""
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=server.base_url, api_key="test")
    try:
        yield OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    finally:
        await client.close()


def test_langchain_a_second_thread_id_is_refused(store: Store, workspace: Path) -> None:
    pytest.importorskip("langgraph", reason="pip install 'ctxrelay[langchain]'")
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    harness = LangChainHarness()
    relay = _open(harness, store, workspace)

    async def go(server: OpenAIServer) -> None:
        model = harness.chat_model(server)
        agent: Any = create_agent(
            model, middleware=[relay.middleware], checkpointer=InMemorySaver()
        )
        try:
            alice = {"configurable": {"thread_id": "alice"}}
            await agent.ainvoke({"messages": [{"role": "user", "content": SECRET}]}, alice)
            bob = {"configurable": {"thread_id": "bob"}}
            with pytest.raises(ConversationError, match="thread_id='bob'") as caught:
                await agent.ainvoke({"messages": [{"role": "user", "content": "Hi, Bob."}]}, bob)
            assert caught.value.bound == "thread_id='alice'"
            # Alice's own thread goes on.
            await agent.ainvoke({"messages": [{"role": "user", "content": "More."}]}, alice)
        finally:
            await harness.close(model)

    with OpenAIServer([Step(text="Noted."), Step(text="Sure.")]) as server:
        asyncio.run(go(server))
        sent = _sent(server)
    assert len(sent) == 2
    _nothing_of_bob(sent, store)


def test_agents_sdk_a_second_session_is_refused(store: Store, workspace: Path) -> None:
    pytest.importorskip("agents", reason="pip install 'ctxrelay[openai-agents]'")
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        SQLiteSession,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    relay = _open(OpenAIAgentsHarness(), store, workspace)

    async def go(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        agent: Agent[Any] = Agent(
            name="a", model=OpenAIChatCompletionsModel(MODEL, openai_client=client)
        )
        try:
            alice, bob = SQLiteSession("alice"), SQLiteSession("bob")
            await Runner.run(agent, SECRET, **relay.run_kwargs(session=alice))
            with pytest.raises(ConversationError, match="session_id='bob'"):
                relay.run_kwargs(session=bob)
            # Bob's session passed to Runner.run itself: its memory is no one's here.
            await Runner.run(agent, "Hi, I am Bob.", session=bob)  # without ctxrelay
            with pytest.raises(ConversationError, match="another conversation"):
                await Runner.run(agent, "Bob again.", session=bob, **relay.run_kwargs())
            # A run with no session is a new conversation to the SDK (a new user's).
            with pytest.raises(ConversationError, match="no session=") as caught:
                relay.run_kwargs()
            assert caught.value.bound == "session_id='alice'"
        finally:
            await client.close()

    with OpenAIServer([Step(text="Noted."), Step(text="Hello Bob.")]) as server:
        asyncio.run(go(server))
        sent = _sent(server)
    assert len(sent) == 2
    assert "Alice" not in sent[1]  # Bob's own run, without ctxrelay
    assert not any("Bob" in (r.text or "") for r in store.rows("alice"))
    assert store.lease("alice") is None


def test_pydantic_ai_another_message_history_is_refused(store: Store, workspace: Path) -> None:
    pytest.importorskip("pydantic_ai", reason="pip install 'ctxrelay[pydantic-ai]'")
    from pydantic_ai import Agent

    relay = _open(PydanticAIHarness(), store, workspace)

    async def go(server: OpenAIServer) -> None:
        async with _pydantic_model(server) as model:
            plain: Agent[None, str] = Agent(model)
            relayed: Agent[None, str] = Agent(model, capabilities=[relay.capability])
            await relayed.run(SECRET)
            bobs = await plain.run("Hi, I am Bob.")  # Bob's conversation, elsewhere
            with pytest.raises(ConversationError, match="another conversation"):
                await relayed.run("Bob again.", message_history=bobs.all_messages())

    with OpenAIServer([Step(text="Noted."), Step(text="Hello Bob.")]) as server:
        asyncio.run(go(server))
        sent = _sent(server)
    assert len(sent) == 2
    assert not any("Bob" in (r.text or "") for r in store.rows("alice"))
    assert store.lease("alice") is None


def test_pydantic_ai_a_new_user_without_history_is_refused(store: Store, workspace: Path) -> None:
    """pydantic-ai keys a conversation by its ``conversation_id``: a run given no
    ``message_history`` is a new conversation. A relay whose conversation the saved
    history carries refuses it, instead of sending the new user the held window."""
    pytest.importorskip("pydantic_ai", reason="pip install 'ctxrelay[pydantic-ai]'")
    from pydantic_ai import Agent

    relay = _open(PydanticAIHarness(), store, workspace)

    async def go(server: OpenAIServer) -> None:
        async with _pydantic_model(server) as model:
            agent: Agent[None, str] = Agent(model, capabilities=[relay.capability])
            first = await agent.run(SECRET)
            history = first.all_messages()
            second = await agent.run("And my name?", message_history=history)
            alice = second.conversation_id
            with pytest.raises(ConversationError, match="no message_history") as caught:
                await agent.run("Hi, I am Bob.")  # a new user: no history of his own
            assert caught.value.bound == f"conversation_id={alice!r}"
            # Alice goes on, with her history or with her conversation_id.
            third = await agent.run("More.", message_history=second.all_messages())
            await agent.run("Even more.", conversation_id=third.conversation_id)

    steps = [Step(text="Noted."), Step(text="Alice."), Step(text="Sure."), Step(text="Yes.")]
    with OpenAIServer(steps) as server:
        asyncio.run(go(server))
        sent = _sent(server)
    assert len(sent) == 4
    _nothing_of_bob(sent, store)


def test_pydantic_ai_the_relay_as_memory_goes_on_without_history(
    store: Store, workspace: Path
) -> None:
    """A relay never given a ``message_history`` is the conversation's memory: each run
    (a new ``conversation_id`` to pydantic-ai) goes on with the held window."""
    pytest.importorskip("pydantic_ai", reason="pip install 'ctxrelay[pydantic-ai]'")
    from pydantic_ai import Agent

    relay = _open(PydanticAIHarness(), store, workspace)

    async def go(server: OpenAIServer) -> None:
        async with _pydantic_model(server) as model:
            agent: Agent[None, str] = Agent(model, capabilities=[relay.capability])
            await agent.run(SECRET)
            await agent.run("What is my card?")

    with OpenAIServer([Step(text="Noted."), Step(text="4111.")]) as server:
        asyncio.run(go(server))
        sent = _sent(server)
    assert SECRET in sent[1]
