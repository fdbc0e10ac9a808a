"""A crash under a framework that keeps its own memory, for each integration.

A child process runs the framework's agent with its memory in use (the Agents SDK's
``SQLiteSession``, pydantic-ai's ``message_history`` saved to a file, LangChain's
``SqliteSaver``) against a local wire server, and is killed with SIGKILL at a point it
reports through a pipe: while a tool runs, or after a tool's result reached the
framework's memory and before the next model call. Then the same session resumes, twice,
with "continue". Each resume completes; no request the server received carries a tool
call without its result or exceeds the usable limit; no advisory is sent twice in one
request or published twice; the framework's memory holds nothing of ctxrelay's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.integrations import Relay
from ctxrelay.store import open_store
from ctxrelay.testing import OpenAIServer, Step, ToolUse, estimate_tokens

PROJECT = Path(__file__).resolve().parents[2]
# The first prompt is above the advisory's point, and two copies of it are above the
# usable limit: a history recorded twice would show.
BUDGET = Budget(limit=64_000, output_reserve=12_000, threshold=60)
BIG = "x" * (BUDGET.usable_limit * 4 * 2 // 3)


@dataclass(frozen=True)
class Memory:
    name: str
    module: str
    extra: str


MEMORIES = [
    Memory("openai-agents", "agents", "openai-agents"),
    Memory("pydantic-ai", "pydantic_ai", "pydantic-ai"),
    Memory("langchain", "langgraph.checkpoint.sqlite", "langchain"),
]

_CHILD = """
import asyncio, json, os, sys
from pathlib import Path
from ctxrelay.store import open_store
from tests.integrations.test_crashes import BUDGET

args = json.loads(Path(sys.argv[1]).read_text())
memory = Path(args["memory"])


def stop_here():
    # Tell the test where this process is, then wait for its SIGKILL.
    os.write(args["fd"], b"here\\n")
    os.read(args["hold"], 1)
    raise SystemExit("the test never killed this process")


async def slow() -> str:
    \"\"\"Do the slow part of the job.\"\"\"
    if args["kill"] == "mid-tool":
        await asyncio.to_thread(stop_here)
    return "slow part done"


def slow_sync() -> str:
    \"\"\"Do the slow part of the job.\"\"\"
    if args["kill"] == "mid-tool":
        stop_here()
    return "slow part done"


def holds_result(items):
    return any(
        (i.get("type") if isinstance(i, dict) else None) == "function_call_output"
        for i in items
    )


async def agents():
    from agents import (
        Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI
    from ctxrelay.integrations.openai_agents import AgentsRelay

    class Session(SQLiteSession):
        async def add_items(self, items):
            await super().add_items(items)
            if args["kill"] == "after-result" and holds_result(items):
                await asyncio.to_thread(stop_here)

    set_tracing_disabled(True)
    relay = AgentsRelay.open(
        open_store(args["db"]), session_id="s1", budget=BUDGET, model="gpt-4.1",
        workspace=Path(args["ws"]),
    )
    client = AsyncOpenAI(base_url=args["base_url"], api_key="test")
    agent = Agent(
        name="coder", instructions="You are a careful coding agent.",
        tools=[function_tool(slow), *relay.tools],
        model=OpenAIChatCompletionsModel("gpt-4.1", openai_client=client),
    )
    result = await Runner.run(
        agent, args["prompt"], session=Session("s1", str(memory)), **relay.run_kwargs()
    )
    return result.final_output


async def pydantic_ai():
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

    relay = PydanticAIRelay.open(
        open_store(args["db"]), session_id="s1", budget=BUDGET, model="gpt-4.1",
        workspace=Path(args["ws"]),
    )
    client = AsyncOpenAI(base_url=args["base_url"], api_key="test")
    model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
    agent = Agent(
        model, instructions="You are a careful coding agent.", tools=[slow],
        capabilities=[relay.capability],
    )
    history = None
    if memory.exists():
        history = ModelMessagesTypeAdapter.validate_json(memory.read_bytes())
    # The history is saved at the end of each run, and, where the test kills the run
    # after a tool's result, once that result is ready to be sent as well.
    async with agent.iter(args["prompt"], message_history=history) as run:
        async for node in run:
            request = getattr(node, "request", None)
            if (
                args["kill"] == "after-result"
                and isinstance(request, ModelRequest)
                and any(isinstance(p, ToolReturnPart) for p in request.parts)
            ):
                saved = [*run.all_messages(), request]
                memory.write_bytes(ModelMessagesTypeAdapter.dump_json(saved))
                await asyncio.to_thread(stop_here)
    memory.write_bytes(ModelMessagesTypeAdapter.dump_json(run.result.all_messages()))
    return run.result.output


async def langchain():
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.sqlite import SqliteSaver
    from pydantic import SecretStr
    from ctxrelay.integrations.langchain import LangChainRelay

    relay = LangChainRelay.open(
        open_store(args["db"]), session_id="s1", budget=BUDGET, model="gpt-4.1",
        workspace=Path(args["ws"]),
    )
    model = ChatOpenAI(
        model="gpt-4.1", base_url=args["base_url"], api_key=SecretStr("test"),
        stream_usage=True,
    )
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool

    class Saver(SqliteSaver):
        def put(self, config, checkpoint, metadata, new_versions):
            saved = super().put(config, checkpoint, metadata, new_versions)
            messages = checkpoint["channel_values"].get("messages") or []
            if args["kill"] == "after-result" and isinstance(
                messages[-1] if messages else None, ToolMessage
            ):
                stop_here()
            return saved

    slow_tool = StructuredTool.from_function(func=slow_sync, name="slow")
    with Saver.from_conn_string(str(memory)) as saver:
        graph = create_agent(
            model, tools=[slow_tool], system_prompt="You are a careful coding agent.",
            middleware=[relay.middleware], checkpointer=saver,
        )
        config = {"configurable": {"thread_id": "s1"}}
        # durability="sync": each checkpoint is written before the next step starts (the
        # default writes it beside the next step, which could call the model before the
        # kill lands).
        state = await asyncio.to_thread(
            graph.invoke,
            {"messages": [{"role": "user", "content": args["prompt"]}]},
            config,
            durability="sync",
        )
    return state["messages"][-1].content


run = {"openai-agents": agents, "pydantic-ai": pydantic_ai, "langchain": langchain}
print(asyncio.run(run[args["framework"]]()))
"""


@pytest.fixture(params=MEMORIES, ids=lambda m: m.name)
def memory(request: pytest.FixtureRequest) -> Memory:
    m: Memory = request.param
    try:
        found = importlib.util.find_spec(m.module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        if m.name == "langchain":
            pytest.skip(
                "langgraph's SqliteSaver is not installed (pip install "
                "langgraph-checkpoint-sqlite); InMemorySaver does not outlive a killed process"
            )
        pytest.skip(f"{m.name} is not installed (pip install 'ctxrelay[{m.extra}]')")
    return m


@dataclass
class Child:
    memory: Memory
    db: Path
    store: Path
    ws: Path
    base_url: str

    def argv(self, prompt: str, kill: str, fd: int, hold: int) -> list[str]:
        arg = {
            "framework": self.memory.name,
            "db": str(self.db),
            "memory": str(self.store),
            "ws": str(self.ws),
            "base_url": self.base_url,
            "prompt": prompt,
            "kill": kill,
            "fd": fd,
            "hold": hold,
        }
        # A file, not an argument: the first prompt is longer than a command line may be.
        path = self.db.with_name("child.json")
        path.write_text(json.dumps(arg))
        return [sys.executable, "-c", _CHILD, str(path)]

    def run(self, prompt: str) -> str:
        done = subprocess.run(
            self.argv(prompt, "none", -1, -1),
            cwd=PROJECT,
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def kill(self, prompt: str, at: str) -> None:
        """Run ``prompt`` and SIGKILL the process where ``at`` says (it reports there)."""
        read_fd, write_fd = os.pipe()
        hold_r, hold_w = os.pipe()  # never written: the child waits on it to be killed
        try:
            with subprocess.Popen(
                self.argv(prompt, at, write_fd, hold_r),
                cwd=PROJECT,
                env=_env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                pass_fds=(write_fd, hold_r),
            ) as proc:
                os.close(write_fd)
                write_fd = -1
                try:
                    ready, _, _ = select.select([read_fd], [], [], 180)
                    assert ready, "the child never reached its kill point"
                    said = os.read(read_fd, 64)
                    if said != b"here\n":  # it ended (EOF) without getting there
                        proc.wait(60)
                        err = proc.stderr.read() if proc.stderr else ""
                        pytest.fail(f"the child never reached {at}: {err}")
                    proc.send_signal(signal.SIGKILL)
                    assert proc.wait(60) == -signal.SIGKILL
                finally:
                    if proc.poll() is None:
                        proc.kill()
        finally:
            for fd in (read_fd, write_fd, hold_r, hold_w):
                if fd >= 0:
                    os.close(fd)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PROJECT)}


def _unanswered(body: Any) -> list[str]:
    """The tool calls of a Chat Completions request that no tool message answers."""
    calls: list[str] = []
    answered: set[str] = set()
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            calls.append(str(call["id"]))
        if message.get("role") == "tool":
            answered.add(str(message.get("tool_call_id")))
    return [c for c in calls if c not in answered]


def _texts(body: Any) -> Iterator[str]:
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            yield content
        elif isinstance(content, list):
            yield from (str(p.get("text", "")) for p in content if isinstance(p, dict))


@pytest.mark.slow
@pytest.mark.parametrize("at", ["mid-tool", "after-result"])
def test_a_killed_run_resumes_with_the_frameworks_memory(
    memory: Memory, tmp_path: Path, workspace: Path, at: str
) -> None:
    steps = [
        Step(text="Read it."),
        Step(text="Starting the slow part.", tool_calls=[ToolUse("slow")]),
        Step(text="Resumed and done."),
        Step(text="Still done."),
    ]
    with OpenAIServer(steps) as server:
        child = Child(
            memory, tmp_path / "relay.db", tmp_path / "memory.db", workspace, server.base_url
        )
        assert child.run(f"Read this log: {BIG}") == "Read it."
        child.kill("Now do the slow part.", at)
        assert child.run("continue") == "Resumed and done."
        assert child.run("continue") == "Still done."
        bodies = [r.body for r in server.requests if r.body]

    assert len(bodies) == 4
    store = open_store(tmp_path / "relay.db")
    try:
        windows = store.windows("s1")
        rows = store.rows("s1")
    finally:
        store.close()
    advisories = [r for r in rows if r.kind == "warning"]
    assert advisories, "the first prompt is above the advisory's point"
    for body in bodies:
        assert _unanswered(body) == []
        assert estimate_tokens(body) <= BUDGET.usable_limit
        texts = list(_texts(body))
        for advisory in advisories:
            assert sum(advisory.text in t for t in texts if advisory.text) <= 1
        # The big prompt went out once per request: nothing was recorded twice.
        assert sum(BIG in t for t in texts) == 1
    # One window, each advisory published once, each prompt stored once.
    assert [w.seal_reason for w in windows] == [None]
    stages = [r.metadata.get("stage") for r in advisories]
    assert len(stages) == len(set(stages))
    prompts = [r.text for r in rows if r.kind == "user"]
    assert prompts == [f"Read this log: {BIG}", "Now do the slow part.", "continue", "continue"]
    results = [r for r in rows if r.kind == "tool_result"]
    if at == "mid-tool":  # the result was lost: the call is answered as interrupted
        (result,) = results
        assert "slow was interrupted by a restart" in (result.text or "")
        assert "interrupted by a restart" in json.dumps(bodies[2])
    else:  # the framework kept the result: it is the call's answer, once
        assert [r.text for r in results] == ["slow part done"]
    saved = child.store.read_bytes().decode("utf-8", "replace") if child.store.exists() else ""
    for ours in ["interrupted by a restart", *(r.text for r in advisories if r.text)]:
        assert ours not in saved


# ---- the matching rule, without a framework -----------------------------------------


def _texts_stored(store: Any) -> list[str]:
    return [r.text or "" for r in store.rows("s1")]


@pytest.mark.parametrize(
    ("resent", "recorded"),
    [
        # a run given only new input: a repeated prompt is new, not an old row
        (["continue"], ["continue"]),
        # the framework's memory lost the stored tail (a crash): only what follows its
        # last match with a stored item is new
        (["task", "go on"], ["go on"]),
        # ... and an item ctxrelay never saw after that match is recorded once, in order
        (["task", "continue", "step 1", "a result", "go on"], ["a result", "go on"]),
        # the whole history with nothing lost: as before, after the last stored item
        (["task", "continue", "step 1", "step 2", "continue"], ["continue"]),
    ],
)
def test_a_resent_history_is_matched_by_identity(
    tmp_path: Path, resent: list[str], recorded: list[str]
) -> None:
    from tests.integrations.test_runs import TextCodec

    store = open_store(tmp_path / "relay.db")
    try:
        relay = Relay(store, BUDGET, codec=TextCodec(), framework="test", session_id="s1")
        first = relay.begin()
        first.prepare(["task", "continue", "step 1", "step 2"])
        first.release()
        before = _texts_stored(store)
        second = relay.begin()
        second.prepare(resent)
        second.release()
        assert _texts_stored(store) == before + recorded
    finally:
        store.close()
