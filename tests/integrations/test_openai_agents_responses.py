"""The Agents SDK on its default model, ``OpenAIResponsesModel``, against the local
Responses route: the usage ctxrelay reads, the fresh window the model really sends, and
the refusal of conversation state kept on the server (``previous_response_id``,
``conversation_id``, ``auto_previous_response_id``, the compaction session)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.errors import ConfigError, ServerStateError
from ctxrelay.store import Store
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.integrations.harness import MODEL
from tests.integrations.test_conformance import BUDGET, _handoff_steps

pytest.importorskip("agents")
from agents import Agent, OpenAIResponsesModel, Runner, SQLiteSession, set_tracing_disabled
from agents.memory import OpenAIResponsesCompactionSession
from openai import AsyncOpenAI

from ctxrelay.integrations.openai_agents import AgentsRelay
from ctxrelay.runtime.tools import ReadFile, WriteFile

ROUTE = "/v1/responses"


def _relay(store: Store, workspace: Path, session_id: str = "s1") -> AgentsRelay:
    return AgentsRelay.open(
        store,
        session_id=session_id,
        budget=BUDGET,
        model=MODEL,
        workspace=workspace,
        tools=[ReadFile(), WriteFile()],
    )


async def _run(relay: AgentsRelay, server: OpenAIServer, prompt: str, **runner: Any) -> Any:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    agent: Agent[Any] = Agent(
        name="coder",
        instructions="You are a careful coding agent.",
        tools=list(relay.tools),
        model=OpenAIResponsesModel(MODEL, openai_client=client),
    )
    try:
        return await Runner.run(agent, prompt, max_turns=50, **runner, **relay.run_kwargs())
    finally:
        await client.close()


def _read(path: str = "README.md") -> list[ToolUse]:
    return [ToolUse("read_file", {"path": path})]


def test_the_default_model_sends_responses_and_its_cached_usage_is_read(
    store: Store, workspace: Path
) -> None:
    steps = [
        Step(text="Reading.", tool_calls=_read(), input_tokens=900, cache_read_input_tokens=20_000),
        Step(text="Done.", input_tokens=1_000, cache_read_input_tokens=20_900),
    ]
    relay = _relay(store, workspace)
    with OpenAIServer(steps) as server:
        result = asyncio.run(_run(relay, server, "Read the README."))
        routes = [r.route for r in server.requests]
    assert result.final_output == "Done."
    assert routes == [ROUTE, ROUTE]
    replies = [r for r in store.rows("s1") if r.kind == "assistant"]
    # The context is the whole input, its cached part read as cache reads.
    assert [r.metadata["context_tokens"] for r in replies] == [20_900, 21_900]
    assert [r.metadata["usage"]["cache_read_input_tokens"] for r in replies] == [20_000, 20_900]
    assert [r.metadata["usage"]["input_tokens"] for r in replies] == [20_900, 21_900]


def test_the_fresh_window_is_what_the_responses_model_sends(store: Store, workspace: Path) -> None:
    relay = _relay(store, workspace)
    with OpenAIServer(_handoff_steps()) as server:
        asyncio.run(_run(relay, server, "Add a --json flag to todo list."))
        bodies = [r.body for r in server.requests_to(ROUTE)]
    window_one_calls = {
        item["call_id"]
        for body in bodies[:5]
        for item in body["input"]
        if item.get("type") == "function_call"
    }
    fresh = bodies[5]["input"]
    # The lead-in of window 2 and nothing of window 1: no call, no output, no task.
    assert len(fresh) <= 3
    assert not {i.get("call_id") for i in fresh} & window_one_calls
    text = json.dumps(fresh, ensure_ascii=False)
    assert "Add a --json flag" not in text
    assert "This is context window 2" in text
    assert len(text.encode()) < 1_024
    assert bodies[5]["instructions"] == "You are a careful coding agent."


def test_run_kwargs_refuse_server_state_arguments(store: Store, workspace: Path) -> None:
    relay = _relay(store, workspace)
    for name in ("previous_response_id", "conversation_id", "auto_previous_response_id"):
        value: Any = True if name.startswith("auto") else "resp_1"
        with pytest.raises(ServerStateError, match=rf"^{name} keeps the conversation") as caught:
            relay.run_kwargs(**{name: value})
        assert caught.value.argument == name
        assert isinstance(caught.value, ConfigError)


@pytest.mark.parametrize("how", ["auto_previous_response_id", "conversation_id"])
def test_conversation_state_on_the_server_is_refused_before_the_next_request(
    store: Store, workspace: Path, how: str
) -> None:
    steps = [Step(text="Reading.", tool_calls=_read()), Step(text="never sent")]
    relay = _relay(store, workspace)
    with OpenAIServer(steps) as server:
        runner: dict[str, Any] = {}
        if how == "conversation_id":
            runner["conversation_id"] = _new_conversation(server)
        else:
            runner["auto_previous_response_id"] = True
        with pytest.raises(ServerStateError, match=r"Runner.run's previous_response_id") as err:
            asyncio.run(_run(relay, server, "Read the README.", **runner))
        assert how in str(err.value)
        # The second request (the tool's output alone, the rest left on the server) was
        # never sent.
        assert len(server.requests_to(ROUTE)) == 1


def _new_conversation(server: OpenAIServer) -> str:
    from openai import OpenAI

    with OpenAI(base_url=server.base_url, api_key="test") as client:
        return str(client.conversations.create().id)


def test_previous_response_id_is_refused_at_the_first_request_ctxrelay_can_tell(
    store: Store, workspace: Path
) -> None:
    steps = [
        Step(text="First run done."),
        Step(text="Reading.", tool_calls=_read()),
        Step(text="never sent"),
    ]
    relay = _relay(store, workspace)
    with OpenAIServer(steps) as server:
        first = asyncio.run(_run(relay, server, "Hello."))
        with pytest.raises(ServerStateError, match="previous_response_id"):
            asyncio.run(
                _run(relay, server, "Read it.", previous_response_id=first.last_response_id)
            )
        sent = server.requests_to(ROUTE)
    # Its first request went out as the SDK built it (no seam shows ctxrelay the id);
    # the one that would carry the tool output alone did not.
    assert len(sent) == 2
    assert sent[1].body["previous_response_id"] == first.last_response_id


def test_the_compaction_session_is_refused_once_it_holds_a_compaction(
    store: Store, workspace: Path, tmp_path: Path
) -> None:
    relay = _relay(store, workspace)

    async def two_runs(server: OpenAIServer) -> None:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        session = OpenAIResponsesCompactionSession(
            "s1",
            SQLiteSession("s1", str(tmp_path / "agents.db")),
            client=client,
            model=MODEL,
            should_trigger_compaction=lambda _context: True,
        )
        try:
            await _run(relay, server, "Hello.", session=session)
            assert len(server.requests_to(ROUTE + "/compact")) == 1
            with pytest.raises(ServerStateError, match=r"^OpenAIResponsesCompactionSession"):
                await _run(relay, server, "Go on.", session=session)
        finally:
            await client.close()

    with OpenAIServer([Step(text="One."), Step(text="never sent")]) as server:
        asyncio.run(two_runs(server))
        assert len(server.requests_to(ROUTE)) == 1


def test_the_server_state_check_carries_what_it_saw_only_across_an_input_that_grew(
    store: Store, workspace: Path
) -> None:
    from ctxrelay.integrations.openai_agents import _AgentsRun

    user = {"role": "user", "content": "Read the README."}
    call = {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "# README"}
    orphan = {"type": "function_call_output", "call_id": "c2", "output": "# NOTES"}
    relay = _relay(store, workspace).relay

    grown = _AgentsRun(relay)
    assert grown._server_held([user, call]) is None
    # Only the new output is looked at, and its call was seen at the earlier call.
    assert grown._server_held([user, call, output]) is None
    assert grown._server_held([user, call, output, orphan]) is not None

    rebuilt = _AgentsRun(relay)
    assert rebuilt._server_held([user, call, output]) is None
    # Not the last input grown: read whole again, and c1's call no longer counts.
    assert rebuilt._server_held([user, dict(output)]) is not None
    assert rebuilt._server_held([user, orphan, call]) is not None
