"""ctxrelay for pydantic-ai (``pip install 'ctxrelay[pydantic-ai]'``).

One capability, pydantic-ai's own seam for model-request hooks (history processors are
built on it), and its toolset:

- ``before_model_request`` hands the messages about to be sent to ctxrelay, which records
  them, plans the dispatch and returns the open window's messages instead (the lead-in
  after a handoff, an advisory where one was published). Only the request changes: the
  run's own message history (``RunContext.messages``, ``result.all_messages()``) keeps
  every message;
- ``after_model_request`` stores each response with the usage the provider reported;
- ``get_toolset`` gives the agent ``new_context`` and ``session_history``.

::

    from pydantic_ai import Agent
    from ctxrelay.integrations.pydantic_ai import PydanticAIRelay

    relay = PydanticAIRelay.open("agent.db", session_id="ticket-42", model="gpt-4.1")
    agent = Agent("openai:gpt-4.1", instructions="...", capabilities=[relay.capability])
    result = await agent.run("Fix the test")

Give the agent its standing text with ``instructions=`` (sent with every request), not
``system_prompt=`` (a part of the first message, which a new window no longer sends).

The capability places itself innermost (``get_ordering``): wherever it is listed, your
history processors and capabilities run first, and ctxrelay sends and measures the request
as they left it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.integrations._items import Conversation
from ctxrelay.integrations._relay import (
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    FrameworkRelay,
    ItemRow,
    Relay,
    Run,
)
from ctxrelay.integrations._support import KeyCache, digest, require
from ctxrelay.runtime.tools import Tool
from ctxrelay.runtime.tools.context import SessionHistory

__all__ = ["EXTRA", "FRAMEWORK", "PydanticAICodec", "PydanticAIRelay"]

FRAMEWORK = "pydantic-ai"
EXTRA = "pydantic-ai"
_FEATURE = "the pydantic-ai integration"


def _pai() -> Any:
    return require("pydantic_ai", _FEATURE, EXTRA)


def _messages() -> Any:
    _pai()
    from pydantic_ai import messages  # noqa: PLC0415 — pydantic-ai (extra)

    return messages


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class PydanticAICodec:
    """pydantic-ai's ``ModelRequest`` and ``ModelResponse`` messages."""

    def __init__(self) -> None:
        m = _messages()
        self._m = m
        self._adapter = m.ModelMessagesTypeAdapter
        self._keys = KeyCache(self._key)

    def key(self, item: Any) -> str:
        """A message's kind and its parts' (a tool part by its call id, any other by a
        digest of its content), once per message object (pydantic-ai hands the same ones
        back at every request)."""
        return self._keys(item)

    def _key(self, item: Any) -> str:
        parts = []
        for part in item.parts:
            kind = getattr(part, "part_kind", type(part).__name__)
            call_id = getattr(part, "tool_call_id", None)
            if call_id:
                parts.append(f"{kind}:{call_id}")
            else:
                parts.append(f"{kind}:{digest(_content(getattr(part, 'content', '')))}")
        return f"{item.kind}:" + digest(parts)

    def describe(self, item: Any) -> list[ItemRow]:
        m = self._m
        rows: list[ItemRow] = []
        if isinstance(item, m.ModelResponse):
            text = "\n".join(p.content for p in item.parts if isinstance(p, m.TextPart))
            rows.append(ItemRow("assistant", text))
            for part in item.parts:
                if isinstance(part, m.ToolCallPart):
                    rows.append(
                        ItemRow(
                            "tool_call",
                            "",
                            call_id=part.tool_call_id,
                            name=part.tool_name,
                            arguments=part.args_as_dict(),
                        )
                    )
            return rows
        for part in item.parts:
            if isinstance(part, m.ToolReturnPart | m.RetryPromptPart) and part.tool_name:
                text = (
                    part.model_response()
                    if isinstance(part, m.RetryPromptPart)
                    else part.model_response_str()
                )
                rows.append(
                    ItemRow("tool_result", text, call_id=part.tool_call_id, name=part.tool_name)
                )
            elif isinstance(part, m.UserPromptPart | m.SystemPromptPart | m.RetryPromptPart):
                content = (
                    part.model_response() if isinstance(part, m.RetryPromptPart) else part.content
                )
                system = isinstance(part, m.SystemPromptPart)
                rows.append(ItemRow("user", _content(content), system=system))
        return rows or [ItemRow("user", "")]

    def dump(self, item: Any) -> Any:
        return self._adapter.dump_python([item], mode="json")[0]

    def load(self, raw: Any) -> Any:
        return self._adapter.validate_python([raw])[0]

    def text_message(self, texts: Sequence[str]) -> Any:
        return self._m.ModelRequest(parts=[self._m.UserPromptPart(t) for t in texts])

    def tool_output(self, call_id: str, name: str, text: str) -> Any:
        part = self._m.ToolReturnPart(tool_name=name, content=text, tool_call_id=call_id)
        return self._m.ModelRequest(parts=[part])


class PydanticAIRelay(FrameworkRelay):
    """ctxrelay for one session under pydantic-ai: pass :attr:`capability` to the
    agent (``Agent(..., capabilities=[relay.capability])``)."""

    def __init__(self, relay: Relay, tools: Sequence[Tool] = ()) -> None:
        _pai()
        self.relay = relay
        self.tools: list[Any] = [self._new_context_tool(), self.tool(SessionHistory())]
        self.capability: Any = self._capability()
        self.tools += [self.tool(t) for t in tools]

    FRAMEWORK = FRAMEWORK
    EXTRA = EXTRA
    FEATURE = _FEATURE
    SEAM = "pass capabilities=[relay.capability] to the Agent (it brings ctxrelay's tools)"
    CODEC = PydanticAICodec

    @classmethod
    def model_of(cls, model: Any) -> tuple[str | None, str]:
        """An ``Agent`` (its model), a ``Model`` (its ``system`` and ``model_name``), or a
        name (``openai:gpt-4.1`` as pydantic-ai spells it)."""
        pai = _pai()
        from pydantic_ai.models import Model  # noqa: PLC0415 — pydantic-ai (extra)

        setting = model.model if isinstance(model, pai.Agent) else model
        if isinstance(setting, str):
            return None, setting
        if isinstance(setting, Model):
            return _provider(setting), setting.model_name
        raise ConfigError(
            f"model={model!r} names no model ctxrelay can read; pass the model's name "
            "(model='openai:gpt-4.1')"
        )

    def tool(self, tool: Tool) -> Any:
        """One of ctxrelay's own tools as a pydantic-ai ``Tool``, confined to this
        session's workspace."""
        pai = _pai()
        relay = self.relay

        async def run(ctx: Any, **args: Any) -> str:
            result = await relay.run_tool(tool, args, str(ctx.tool_call_id or ""))
            return result.content

        return pai.Tool.from_schema(
            run, tool.name, tool.description, dict(tool.input_schema), takes_ctx=True
        )

    def _new_context_tool(self) -> Any:
        pai = _pai()
        relay = self.relay

        async def run(ctx: Any) -> str:
            return await relay.run_new_context(str(ctx.tool_call_id or ""))

        async def offered(ctx: Any, definition: Any) -> Any:
            return definition if relay.offer_new_context else None

        tool = pai.Tool.from_schema(
            run,
            NEW_CONTEXT,
            NEW_CONTEXT_DESCRIPTION,
            {"type": "object", "properties": {}, "additionalProperties": False},
            takes_ctx=True,
        )
        tool.prepare = offered  # hidden when the policy does not offer it
        return tool

    def _capability(self) -> Any:
        _pai()
        from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering  # noqa: PLC0415 — pydantic-ai (extra)
        from pydantic_ai.toolsets import FunctionToolset  # noqa: PLC0415 — pydantic-ai (extra)

        relay = self.relay
        tools = self.tools

        class CtxrelayCapability(AbstractCapability[Any]):
            """ctxrelay's policy in front of every model request of the agent. Each run
            gets its own instance (``for_run``), whose ``wrap_run`` holds the session's
            lease for the run, from its start to its end, whatever ends it. Innermost in
            the chain, so every other capability and history processor has shaped the
            request before ctxrelay measures it."""

            def __init__(self) -> None:
                self.run: Run | None = None
                self.conversation: Conversation | None = None
                """pydantic-ai's key of the run's conversation (``conversation_id``)."""
                self.unsent: Any = None
                """The next request the run built (its tool results), until it is sent."""

            def get_ordering(self) -> CapabilityOrdering:
                return CapabilityOrdering(position="innermost")

            async def for_run(self, ctx: Any) -> Any:
                return CtxrelayCapability()

            def get_toolset(self) -> Any:
                return FunctionToolset(tools)

            async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
                # pydantic-ai keys a conversation by its conversation_id: the one of the
                # message_history given (ctx.messages, before the run adds any), the one
                # passed, or a new one for a run given neither.
                cid = getattr(ctx, "conversation_id", None)
                if cid is not None:
                    self.conversation = Conversation(
                        f"conversation_id={cid!r}",
                        carried=bool(ctx.messages),
                        fresh="a run given no message_history; pass the held "
                        "conversation's message_history, or its conversation_id, to go on "
                        "with it",
                    )
                self.run = run = await relay.begin_async()
                try:
                    result = await handler()
                except BaseException:
                    # Tool results the run produced but never sent (a usage limit hit
                    # before the next request) are stored as they are.
                    if self.unsent is not None:
                        with contextlib.suppress(Exception):
                            run.record_results([self.unsent])
                    run.release()
                    raise
                run.complete()
                return result

            async def after_node_run(self, ctx: Any, *, node: Any, result: Any) -> Any:
                request = getattr(result, "request", None)  # a ModelRequestNode's
                if getattr(request, "kind", None) == "request":
                    self.unsent = request
                return result

            def _current(self) -> Run:
                if self.run is None:  # a caller that drives the hooks without a run
                    self.run = relay.begin()
                return self.run

            async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
                run = self._current()
                relay.check_model(getattr(request_context.model, "model_name", None))
                params = request_context.model_request_parameters
                run.fixed_bytes = len(json.dumps(_plain_params(params), default=str))
                self.unsent = None
                messages = list(request_context.messages)
                sent = run.prepare(messages, messages, conversation=self.conversation)
                request_context.messages = sent.items
                return request_context

            async def after_model_request(
                self, ctx: Any, *, request_context: Any, response: Any
            ) -> Any:
                usage = response.usage
                self._current().record_response(
                    [response],
                    context_tokens=int(usage.input_tokens),
                    output_tokens=int(usage.output_tokens),
                    usage={
                        "input_tokens": int(usage.input_tokens),
                        "output_tokens": int(usage.output_tokens),
                        "cache_read_input_tokens": int(usage.cache_read_tokens),
                        "cache_creation_input_tokens": int(usage.cache_write_tokens),
                    },
                )
                return response

        return CtxrelayCapability()


def _provider(model: Any) -> str | None:
    """The model table's provider of a pydantic-ai ``Model`` (its ``system``), when the
    table has one by that name."""
    system = getattr(model, "system", None)
    return system if system in ("openai", "anthropic") else None


def _plain_params(params: Any) -> Any:
    tools = [
        {"name": t.name, "description": t.description, "schema": t.parameters_json_schema}
        for t in getattr(params, "function_tools", ())
    ]
    return {"tools": tools}
