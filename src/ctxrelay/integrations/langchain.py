"""ctxrelay for LangChain agents (``create_agent`` on LangGraph;
``pip install 'ctxrelay[langchain]'``).

One agent middleware, LangChain's own seam around the model call:

- ``wrap_model_call`` / ``awrap_model_call`` hand the request's messages to ctxrelay,
  which records them, plans the dispatch and returns the open window's messages; the
  request is sent with those (``request.override(messages=...)``) and the answer's usage
  is stored. The graph's state (and its checkpointer) keeps every message;
- the middleware's ``tools`` are ``new_context`` and ``session_history``.

::

    from langchain.agents import create_agent
    from ctxrelay.integrations.langchain import LangChainRelay

    relay = LangChainRelay.open("agent.db", session_id="ticket-42", model="gpt-4.1")
    agent = create_agent("openai:gpt-4.1", tools=my_tools, middleware=[relay.middleware])
    agent.invoke({"messages": [{"role": "user", "content": "Fix the test"}]})

Other middleware composes: whatever shaped the graph's state before the model call (a
``SummarizationMiddleware`` that replaced old messages by a summary) is what ctxrelay's
window follows, sends and measures, in either order of the ``middleware`` list.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine, Sequence
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from ctxrelay.errors import ConfigError
from ctxrelay.integrations._relay import (
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    FrameworkRelay,
    ItemRow,
    Relay,
    Run,
)
from ctxrelay.integrations._support import KeyCache, digest, require, warn_once
from ctxrelay.runtime.tools import Tool
from ctxrelay.runtime.tools.context import SessionHistory

__all__ = ["EXTRA", "FRAMEWORK", "LangChainCodec", "LangChainRelay"]

FRAMEWORK = "langchain"
EXTRA = "langchain"
_FEATURE = "the LangChain integration"


def _lc() -> Any:
    return require("langchain.agents", _FEATURE, EXTRA)


def _text(content: Any) -> str:
    """A message's text: its string, or the text of its content blocks (an Anthropic
    answer's ``tool_use`` blocks carry no text and add none)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p["text"]) if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or "text" in p
        )
    return str(content)


class LangChainCodec:
    """LangChain's messages (``HumanMessage``, ``AIMessage``, ``ToolMessage``, ...)."""

    def __init__(self) -> None:
        _lc()
        from langchain_core import messages  # noqa: PLC0415 — langchain (extra)

        self._m = messages
        self._keys = KeyCache(self._key)

    def key(self, item: Any) -> str:
        """A tool message by its call id, any other by its type, text and calls' ids, once
        per message object (the graph's state hands the same ones back at every call)."""
        return self._keys(item)

    def _key(self, item: Any) -> str:
        m = self._m
        if isinstance(item, m.ToolMessage):
            return f"tool:{item.tool_call_id}"
        calls = [c.get("id") for c in getattr(item, "tool_calls", None) or []]
        return f"{item.type}:" + digest([_text(item.content), calls])

    def describe(self, item: Any) -> list[ItemRow]:
        m = self._m
        if isinstance(item, m.AIMessage):
            rows = [ItemRow("assistant", _text(item.content))]
            rows += [
                ItemRow(
                    "tool_call",
                    "",
                    call_id=str(c.get("id")),
                    name=str(c.get("name")),
                    arguments=dict(c.get("args") or {}),
                )
                for c in item.tool_calls
            ]
            return rows
        if isinstance(item, m.ToolMessage):
            return [
                ItemRow(
                    "tool_result", _text(item.content), call_id=item.tool_call_id, name=item.name
                )
            ]
        return [ItemRow("user", _text(item.content), system=isinstance(item, m.SystemMessage))]

    def dump(self, item: Any) -> Any:
        return self._m.messages_to_dict([item])[0]

    def load(self, raw: Any) -> Any:
        return self._m.messages_from_dict([raw])[0]

    def text_message(self, texts: Sequence[str]) -> Any:
        return self._m.HumanMessage(content=[{"type": "text", "text": t} for t in texts])

    def tool_output(self, call_id: str, name: str, text: str) -> Any:
        return self._m.ToolMessage(content=text, tool_call_id=call_id, name=name)


# A chat model's package, by the model table's provider.
_PROVIDERS = {"langchain_openai": "openai", "langchain_anthropic": "anthropic"}


def _chat_model_name(model: Any) -> str | None:
    """The model name of a LangChain chat model (``model_name`` or ``model``)."""
    for attr in ("model_name", "model"):
        name = getattr(model, attr, None)
        if isinstance(name, str) and name:
            return name
    return None


class _Ends:
    """The end of every LangChain invocation, which no middleware hook sees when it ends
    by an exception (a tool's, ``GraphRecursionError``) or when its consumer stops
    streaming (a client that disconnects): LangGraph reports it to the callback handlers
    of the invocation's root run, whatever ended it. One handler, added to every run by
    LangChain's own configure hook, keeps which run is whose parent while they last and
    calls what a middleware asked for when the root of its invocation ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parents: dict[UUID, UUID | None] = {}
        self._ends: dict[UUID, list[Callable[[], object]]] = {}

    def started(self, run_id: UUID, parent: UUID | None) -> None:
        with self._lock:
            self._parents[run_id] = parent

    def ended(self, run_id: UUID) -> None:
        with self._lock:
            self._parents.pop(run_id, None)
            ends = self._ends.pop(run_id, [])
        for end in ends:
            end()

    def at_end(self, run_id: UUID, end: Callable[[], object]) -> None:
        """Call ``end`` when the root of the invocation ``run_id`` belongs to ends."""
        with self._lock:
            root = run_id
            while (parent := self._parents.get(root)) is not None:
                root = parent
            self._ends.setdefault(root, []).append(end)


@functools.cache
def _ends() -> _Ends:
    """The process's one :class:`_Ends`, its handler installed (once) on LangChain's
    configure hook."""
    from langchain_core.callbacks import BaseCallbackHandler  # noqa: PLC0415 — langchain (extra)
    from langchain_core.tracers.context import register_configure_hook  # noqa: PLC0415 — langchain (extra)

    ends = _Ends()

    class Handler(BaseCallbackHandler):
        run_inline = True  # in the caller's thread and order: before the invocation returns

        def on_chain_start(
            self,
            serialized: Any,
            inputs: Any,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            **kwargs: Any,
        ) -> None:
            ends.started(run_id, parent_run_id)

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            ends.ended(run_id)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            ends.ended(run_id)

    # A default value, not a value set in one context: every invocation gets the handler,
    # in every thread and task.
    hook: ContextVar[Any | None] = ContextVar("ctxrelay_langchain_ends", default=Handler())  # noqa: B039 — on purpose, above
    register_configure_hook(hook, True)
    return ends


def _thread_id() -> str | None:
    """The ``thread_id`` of the invocation a middleware hook runs in (``None``: none, or
    outside a graph): LangGraph's key of a conversation."""
    from langgraph.config import get_config  # noqa: PLC0415 — langchain (extra)

    try:
        thread = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:
        return None
    return None if thread is None else str(thread)


def _invocation() -> UUID | None:
    """The id of the LangChain run a middleware hook runs under (``None``: none)."""
    from langgraph.config import get_config  # noqa: PLC0415 — langchain (extra)

    try:
        callbacks = get_config().get("callbacks")
    except RuntimeError:  # called outside a graph
        return None
    parent = getattr(callbacks, "parent_run_id", None)
    return parent if isinstance(parent, UUID) else None


def _blocking(run: Callable[..., Coroutine[Any, Any, str]]) -> Callable[..., str]:
    """The tool for a synchronous ``invoke`` (LangGraph runs it on a worker thread, which
    has no event loop of its own)."""

    def call(**args: Any) -> str:
        return asyncio.run(run(**args))

    return call


class LangChainRelay(FrameworkRelay):
    """ctxrelay for one session under a LangChain agent: pass :attr:`middleware` to
    ``create_agent(..., middleware=[relay.middleware])``."""

    def __init__(self, relay: Relay, tools: Sequence[Tool] = ()) -> None:
        _lc()
        self.relay = relay
        self.tools: list[Any] = [self._new_context_tool(), self.tool(SessionHistory())]
        self.tools += [self.tool(t) for t in tools]
        self.middleware: Any = self._middleware()

    FRAMEWORK = FRAMEWORK
    EXTRA = EXTRA
    FEATURE = _FEATURE
    SEAM = "pass middleware=[relay.middleware] to create_agent (it brings ctxrelay's tools)"
    CODEC = LangChainCodec

    @classmethod
    def model_of(cls, model: Any) -> tuple[str | None, str]:
        """A chat model (``ChatOpenAI``, ``ChatAnthropic``: its name and provider) or a
        name (``openai:gpt-4.1`` as ``init_chat_model`` spells it)."""
        if isinstance(model, str):
            return None, model
        name = _chat_model_name(model)
        if name is None:
            raise ConfigError(
                f"model={model!r} names no model ctxrelay can read; pass the model's name "
                "(model='gpt-4.1')"
            )
        module = type(model).__module__.split(".")[0]
        return _PROVIDERS.get(module), name

    def tool(self, tool: Tool) -> Any:
        """One of ctxrelay's own tools as a LangChain ``StructuredTool``."""
        from langchain_core.tools import StructuredTool  # noqa: PLC0415 — langchain (extra)

        relay = self.relay

        async def run(**args: Any) -> str:
            return (await relay.run_tool(tool, args)).content

        return StructuredTool.from_function(
            func=_blocking(run),
            coroutine=run,
            name=tool.name,
            description=tool.description,
            args_schema=dict(tool.input_schema),
        )

    def _new_context_tool(self) -> Any:
        from langchain_core.tools import StructuredTool  # noqa: PLC0415 — langchain (extra)

        relay = self.relay

        async def run() -> str:
            return await relay.run_new_context()

        return StructuredTool.from_function(
            func=_blocking(run),
            coroutine=run,
            name=NEW_CONTEXT,
            description=NEW_CONTEXT_DESCRIPTION,
            args_schema={"type": "object", "properties": {}, "additionalProperties": False},
        )

    def _middleware(self) -> Any:
        from langchain.agents.middleware import AgentMiddleware  # noqa: PLC0415 — langchain (extra)
        from langchain_core.messages import AIMessage  # noqa: PLC0415 — langchain (extra)

        from ctxrelay.integrations._langchain_state import RUN_KEY, RelayState  # noqa: PLC0415 — langchain (extra): the state schema subclasses langchain's

        relay = self.relay
        tools = self.tools
        # The runs in progress, by the token each keeps in its graph state: the middleware
        # is shared by every invocation of the agent, the state is not.
        runs: dict[str, Run] = {}

        ends = _ends()

        def begun(run: Run, token: str | None = None) -> dict[str, Any]:
            token = token or run.lease.token
            runs[token] = run
            invocation = _invocation()
            if invocation is not None:  # however the invocation ends, so does the run
                ends.at_end(invocation, functools.partial(finish, {RUN_KEY: token}))
            return {RUN_KEY: token}

        def current(state: Any) -> Run:
            token = state.get(RUN_KEY) if isinstance(state, dict) else None
            run = runs.get(token) if isinstance(token, str) else None
            if run is None:  # resumed from a checkpoint (an interrupt), for example
                run = relay.begin()
                begun(run, token if isinstance(token, str) else None)
            return run

        def bind() -> None:
            thread = _thread_id()
            if thread is not None:  # a relay is one conversation: one thread_id
                relay.bind(f"thread_id={thread!r}")

        def finish(state: Any, *, done: bool = False) -> dict[str, Any]:
            token = state.get(RUN_KEY) if isinstance(state, dict) else None
            run = runs.pop(token, None) if isinstance(token, str) else None
            if run is not None and done:
                run.complete()
            elif run is not None:
                run.release()
            return {RUN_KEY: None}

        def failed(state: Any) -> None:
            finish(state)  # an error leaves the run: so does its lease

        def prepare(request: Any) -> Any:
            run = current(request.state)
            relay.check_model(_chat_model_name(request.model))
            fixed = len(str(getattr(request.system_message, "content", "") or ""))
            for t in request.tools:
                fixed += len(str(getattr(t, "name", ""))) + len(str(getattr(t, "description", "")))
            run.fixed_bytes = fixed
            offered = [
                t
                for t in request.tools
                if relay.offer_new_context or getattr(t, "name", None) != NEW_CONTEXT
            ]
            messages = list(request.messages)
            sent = run.prepare(messages, messages)
            return request.override(messages=sent.items, tools=offered)

        def record(request: Any, response: Any) -> None:
            run = current(request.state)
            result = response.result if hasattr(response, "result") else [response]
            for message in result:
                if isinstance(message, AIMessage):
                    usage: dict[str, Any] = dict(message.usage_metadata or {})
                    if not usage:
                        warn_once(
                            relay.warned,
                            "usage",
                            "the chat model reported no usage for a response (a stream "
                            "without usage), so ctxrelay estimates the whole request from "
                            "its size, which errs high: pass stream_usage=True to the chat "
                            "model (ChatOpenAI(..., stream_usage=True))",
                        )
                    run.record_response(
                        [message],
                        context_tokens=int(usage.get("input_tokens", 0)),
                        output_tokens=int(usage.get("output_tokens", 0)),
                        usage={
                            "input_tokens": int(usage.get("input_tokens", 0)),
                            "output_tokens": int(usage.get("output_tokens", 0)),
                        },
                    )

        class CtxrelayMiddleware(AgentMiddleware):
            """ctxrelay's policy around every model call of the agent; each invocation
            holds the session's lease from ``before_agent`` to ``after_agent``."""

            state_schema = RelayState

            def __init__(self) -> None:
                super().__init__()
                self.tools = tools

            def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
                bind()
                return begun(relay.begin())

            async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
                bind()
                return begun(await relay.begin_async())

            def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
                return finish(state, done=True)

            async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
                return finish(state, done=True)

            def wrap_model_call(self, request: Any, handler: Any) -> Any:
                try:
                    response = handler(prepare(request))
                    record(request, response)
                except BaseException:
                    failed(request.state)
                    raise
                return response

            async def awrap_model_call(self, request: Any, handler: Any) -> Any:
                try:
                    response = await handler(prepare(request))
                    record(request, response)
                except BaseException:
                    failed(request.state)
                    raise
                return response

        return CtxrelayMiddleware()
