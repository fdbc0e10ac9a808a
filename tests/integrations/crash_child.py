"""The process ``test_crashes.py`` kills: one framework's agent, with that framework's own
memory in use, run against a local wire server for each prompt it is given.

The memory: the Agents SDK's ``SQLiteSession`` (on its Chat Completions model or its
default Responses model), pydantic-ai's ``message_history`` saved to a JSON file after
each run, LangChain's ``SqliteSaver`` (``durability="sync"``). The agent has one tool of
its own, ``slow``, beside ctxrelay's ``new_context`` and ``session_history``.

Where the test asks it to (``Args.kill``), the process says so on its pipe and waits
there for its SIGKILL: ``mid-tool`` (``slow`` is running), ``after-result`` (``slow``'s
result reached the framework's memory, the next model call has not begun), ``mid-seal``
(the ``new_context`` result row is stored, the window not yet sealed: the seal's first
write is visible, its second is not), ``after-new-context`` (``new_context`` ran and its
outcome is kept in the session, its result is stored nowhere yet) and ``after-seal``
(the window is sealed, the fresh window's first request not yet sent). ``mid-request``
needs nothing here: the test's server holds the request. A run that ends sends its
answers and every string the framework's memory then holds.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ctxrelay.budget import Budget
from ctxrelay.store import Store
from ctxrelay.store.sqlite import SqliteStore

BUDGET = Budget(limit=64_000, output_reserve=12_000, threshold=60)
MODEL = "gpt-4.1"
SESSION = "s1"
#: ``slow``'s result: large enough that the request which carries it passes the handoff
#: advisory's point (the first prompt alone passes only the warning's).
SLOW_DONE = "slow part done\n" + "a line of the slow part's output\n" * 2_000
#: Long enough that only the dead holder's pid can free the lease before a resume.
LEASE_TTL = 3600.0


@dataclass(frozen=True)
class Args:
    framework: str
    db: str
    memory: str
    workspace: str
    base_url: str
    prompts: tuple[str, ...]
    kill: str = "none"


class Stop:
    """Where the test kills this process: say where, then wait for the signal."""

    def __init__(self, args: Args, conn: Connection) -> None:
        self.at = args.kill
        self.conn = conn

    def __call__(self, at: str) -> None:
        if at != self.at:
            return
        self.conn.send(("here", at))
        self.conn.recv()  # never sent: the test kills this process instead
        raise SystemExit(f"the test never killed this process at {at}")


class _SealStore(SqliteStore):
    """The relay's store, stopping before and after the seal's one transaction, and once
    ``new_context``'s outcome is kept."""

    stop: Stop

    def update_session(self, *args: Any, **kwargs: Any) -> Any:
        info = super().update_session(*args, **kwargs)
        if "new_context" in (kwargs.get("metadata") or {}):
            self.stop("after-new-context")
        return info

    def rollover(self, *args: Any, **kwargs: Any) -> Any:
        self.stop("mid-seal")
        window = super().rollover(*args, **kwargs)
        self.stop("after-seal")
        return window


def _store(args: Args, stop: Stop) -> Store:
    store = _SealStore(args.db)
    store.stop = stop
    return store


def _relay_options(args: Args, store: Store) -> dict[str, Any]:
    return {
        "store": store,
        "session_id": SESSION,
        "budget": BUDGET,
        "model": MODEL,
        "workspace": Path(args.workspace),
        "lease_ttl": LEASE_TTL,
    }


async def _slow(stop: Stop) -> str:
    await asyncio.to_thread(stop, "mid-tool")
    return SLOW_DONE


# ---- the Agents SDK ------------------------------------------------------------------


async def _agents(args: Args, prompt: str, stop: Stop) -> str:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        Runner,
        SQLiteSession,
        TResponseInputItem,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    from ctxrelay.integrations.openai_agents import AgentsRelay

    class Session(SQLiteSession):
        async def add_items(self, items: list[TResponseInputItem]) -> None:
            await super().add_items(items)
            if any(_get(i, "type") == "function_call_output" for i in items):
                await asyncio.to_thread(stop, "after-result")

    async def slow() -> str:
        """Do the slow part of the job."""
        return await _slow(stop)

    set_tracing_disabled(True)
    store = _store(args, stop)
    client = AsyncOpenAI(base_url=args.base_url, api_key="test")
    try:
        relay = AgentsRelay.open(**_relay_options(args, store))
        model: Any = (
            OpenAIResponsesModel(MODEL, openai_client=client)
            if args.framework == "openai-agents-responses"
            else OpenAIChatCompletionsModel(MODEL, openai_client=client)
        )
        agent: Agent[Any] = Agent(
            name="coder",
            instructions="You are a careful coding agent.",
            tools=[function_tool(slow), *relay.tools],
            model=model,
        )
        session = Session(SESSION, args.memory)
        result = await Runner.run(agent, prompt, session=session, **relay.run_kwargs())
        session.close()
        return str(result.final_output)
    finally:
        await client.close()
        store.close()


async def _agents_memory(args: Args) -> list[Any]:
    from agents import SQLiteSession

    session = SQLiteSession(SESSION, args.memory)
    try:
        return list(await session.get_items())
    finally:
        session.close()


# ---- pydantic-ai ---------------------------------------------------------------------


async def _pydantic_ai(args: Args, prompt: str, stop: Stop) -> str:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

    async def slow() -> str:
        """Do the slow part of the job."""
        return await _slow(stop)

    memory = Path(args.memory)
    store = _store(args, stop)
    client = AsyncOpenAI(base_url=args.base_url, api_key="test")
    try:
        relay = PydanticAIRelay.open(**_relay_options(args, store))
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
        agent: Agent[None, str] = Agent(
            model,
            instructions="You are a careful coding agent.",
            tools=[slow],
            capabilities=[relay.capability],
        )
        history = None
        if memory.exists():
            history = ModelMessagesTypeAdapter.validate_json(memory.read_bytes())
        # The history is saved at the end of each run, and once a tool's result is ready
        # to be sent (as a caller that saves each step of agent.iter does).
        async with agent.iter(prompt, message_history=history) as run:
            async for node in run:
                request = getattr(node, "request", None)
                if isinstance(request, ModelRequest) and any(
                    isinstance(p, ToolReturnPart) and p.tool_name == "slow" for p in request.parts
                ):
                    saved = [*run.all_messages(), request]
                    memory.write_bytes(ModelMessagesTypeAdapter.dump_json(saved))
                    await asyncio.to_thread(stop, "after-result")
        assert run.result is not None
        memory.write_bytes(ModelMessagesTypeAdapter.dump_json(run.result.all_messages()))
        return str(run.result.output)
    finally:
        await client.close()
        store.close()


async def _pydantic_ai_memory(args: Args) -> list[Any]:
    memory = Path(args.memory)
    return list(json.loads(memory.read_bytes())) if memory.exists() else []


# ---- LangChain -----------------------------------------------------------------------


async def _langchain(args: Args, prompt: str, stop: Stop) -> str:
    from langchain.agents import create_agent
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.sqlite import SqliteSaver
    from pydantic import SecretStr

    from ctxrelay.integrations.langchain import LangChainRelay

    class Saver(SqliteSaver):
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            saved = super().put(config, checkpoint, metadata, new_versions)
            messages = checkpoint["channel_values"].get("messages") or []
            if messages and isinstance(messages[-1], ToolMessage) and messages[-1].name == "slow":
                stop("after-result")
            return saved

    def slow() -> str:
        """Do the slow part of the job."""
        stop("mid-tool")
        return SLOW_DONE

    store = _store(args, stop)
    model = ChatOpenAI(
        model=MODEL, base_url=args.base_url, api_key=SecretStr("test"), stream_usage=True
    )
    try:
        relay = LangChainRelay.open(**_relay_options(args, store))
        slow_tool = StructuredTool.from_function(func=slow, name="slow")
        with Saver.from_conn_string(args.memory) as saver:
            graph: Any = create_agent(
                model,
                tools=[slow_tool],
                system_prompt="You are a careful coding agent.",
                middleware=[relay.middleware],
                checkpointer=saver,
            )
            # durability="sync": each checkpoint is written before the next step starts
            # (the default writes it beside the next step, which could call the model
            # before the kill lands).
            state = await asyncio.to_thread(
                graph.invoke,
                {"messages": [{"role": "user", "content": prompt}]},
                {"configurable": {"thread_id": SESSION}},
                durability="sync",
            )
        return str(state["messages"][-1].content)
    finally:
        store.close()


async def _langchain_memory(args: Args) -> list[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(args.memory) as saver:
        config: Any = {"configurable": {"thread_id": SESSION}}
        return [
            {"checkpoint": t.checkpoint["channel_values"], "writes": t.pending_writes}
            for t in saver.list(config)
        ]


# ---- the process ---------------------------------------------------------------------

Run = Callable[[Args, str, Stop], Coroutine[Any, Any, str]]
Memory = Callable[[Args], Coroutine[Any, Any, list[Any]]]
FRAMEWORKS: dict[str, tuple[Run, Memory]] = {
    "openai-agents": (_agents, _agents_memory),
    "openai-agents-responses": (_agents, _agents_memory),
    "pydantic-ai": (_pydantic_ai, _pydantic_ai_memory),
    "langchain": (_langchain, _langchain_memory),
}


def strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (JSON, or a framework's objects as pydantic dumps them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)
    elif callable(getattr(value, "model_dump", None)):
        yield from strings(value.model_dump())


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def main(args: Args, conn: Connection) -> None:
    """Run each prompt of ``args`` in turn, then send ``("done", answers, memory)``: the
    answers and the strings the framework's memory holds (``("failed", traceback)``)."""
    try:
        run, memory = FRAMEWORKS[args.framework]
        stop = Stop(args, conn)
        answers = [asyncio.run(run(args, prompt, stop)) for prompt in args.prompts]
        held = list(strings(asyncio.run(memory(args))))
        conn.send(("done", answers, held))
    except BaseException:
        conn.send(("failed", traceback.format_exc()))
        raise
