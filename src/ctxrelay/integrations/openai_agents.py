"""ctxrelay for the OpenAI Agents SDK (``pip install 'ctxrelay[openai-agents]'``).

Three of the SDK's own seams, no patching:

- ``RunConfig.call_model_input_filter`` runs right before every model call with the
  whole input the runner is about to send: ctxrelay records it, plans the dispatch and
  returns the open window's items instead (its lead-in after a handoff, an advisory
  where one was published, never an item of a sealed window);
- ``RunHooks.on_llm_end`` receives every response with the usage the provider reported:
  ctxrelay stores it, so the next estimate starts from the provider's count;
- ``new_context`` and ``session_history`` are ``FunctionTool`` values for the agent
  (``new_context`` is disabled, through ``is_enabled``, when the policy does not offer it).

::

    from agents import Agent, Runner
    from ctxrelay.integrations.openai_agents import AgentsRelay

    relay = AgentsRelay.open("agent.db", session_id="ticket-42", model="gpt-4.1")
    agent = Agent(name="coder", instructions="...", tools=[*my_tools, *relay.tools])
    result = await Runner.run(agent, "Fix the test", **relay.run_kwargs())

Your own ``hooks=``, ``run_config=`` and ``call_model_input_filter=`` go to
``relay.run_kwargs(...)``, which merges them with ctxrelay's: both sets of hooks run,
your ``RunConfig`` is kept with ctxrelay's fields set on a copy, and your filter runs
first, on the SDK's input, before ctxrelay measures and sends the request.

The SDK's own session memory (``session=``), if used, is left alone: it keeps every item
of the conversation; ctxrelay only decides which of them are sent (see
``docs/integrations.md``). Conversation state kept on the server (``Runner.run``'s
``previous_response_id``, ``conversation_id``, ``auto_previous_response_id``, the
compaction session) is refused with ``ServerStateError``: ctxrelay must send the window
itself. Any model works, the default ``OpenAIResponsesModel`` included.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import ConfigError, ConversationError, ServerStateError
from ctxrelay.integrations._relay import (
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    FrameworkRelay,
    ItemRow,
    Relay,
    Run,
)
from ctxrelay.integrations._support import digest, require
from ctxrelay.runtime.tools import Tool
from ctxrelay.runtime.tools.context import SessionHistory

if TYPE_CHECKING:
    from agents import FunctionTool, RunConfig, RunHooks, Session
    from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData

__all__ = ["EXTRA", "FRAMEWORK", "AgentsCodec", "AgentsRelay"]

FRAMEWORK = "openai-agents"
EXTRA = "openai-agents"
_FEATURE = "the OpenAI Agents SDK integration"

# Runner.run's arguments that keep the conversation on the server.
_SERVER_STATE = ("previous_response_id", "conversation_id", "auto_previous_response_id")


def _agents() -> Any:
    return require("agents", _FEATURE, EXTRA)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text") or part.get("refusal")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def _plain(item: Any) -> Any:
    """An input item as plain JSON (the SDK hands out dicts, sometimes models)."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dump(exclude_unset=True)
    return item


class AgentsCodec:
    """The Responses-format input items the Agents SDK sends (whatever the model
    provider: its Chat Completions and LiteLLM models convert the same items)."""

    def __init__(self) -> None:
        _agents()  # the SDK must be installed (as for the other frameworks' codecs)

    def key(self, item: Any) -> str:
        raw = _plain(item)
        if not isinstance(raw, Mapping):
            return "raw:" + digest(raw)
        kind = raw.get("type")
        if kind in ("function_call", "function_call_output") and raw.get("call_id"):
            return f"{kind}:{raw['call_id']}"
        role = raw.get("role")
        if isinstance(role, str):
            return f"{role}:" + digest(_text(raw.get("content")))
        body = {k: v for k, v in raw.items() if k not in ("id", "status")}
        return f"{kind}:" + digest(body)

    def describe(self, item: Any) -> list[ItemRow]:
        return [self._describe(item)]

    def _describe(self, item: Any) -> ItemRow:
        raw = _plain(item)
        if not isinstance(raw, Mapping):
            return ItemRow("user", str(raw))
        kind = raw.get("type")
        if kind == "function_call":
            try:
                args = json.loads(str(raw.get("arguments") or "{}"))
            except ValueError:
                args = {}
            return ItemRow(
                "tool_call",
                "",
                call_id=str(raw.get("call_id")),
                name=str(raw.get("name")),
                arguments=args if isinstance(args, dict) else {},
            )
        if kind == "function_call_output":
            return ItemRow("tool_result", _text(raw.get("output")), call_id=str(raw.get("call_id")))
        role = raw.get("role")
        if role == "assistant":
            return ItemRow("assistant", _text(raw.get("content")))
        if role in ("user", "system", "developer"):
            return ItemRow("user", _text(raw.get("content")), system=role != "user")
        return ItemRow("assistant" if kind == "reasoning" else "user", "")

    def dump(self, item: Any) -> Any:
        return _plain(item)

    def load(self, raw: Any) -> Any:
        return raw

    def text_message(self, texts: Sequence[str]) -> Any:
        return {"role": "user", "content": [{"type": "input_text", "text": t} for t in texts]}

    def tool_output(self, call_id: str, name: str, text: str) -> Any:
        return {"type": "function_call_output", "call_id": call_id, "output": text}


def _model_name(model: Any) -> str | None:
    """The name of an Agents SDK model setting (a name, or a ``Model`` such as
    ``OpenAIResponsesModel``, whose ``model`` is its name); ``None`` when not known."""
    if isinstance(model, str):
        return model or None
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None


class _AgentsRun:
    """The seams of one ``Runner.run``: its input filter and its hooks, bound to the
    :class:`Run` that takes the session's lease at the run's first model call and gives
    it up at the run's final output (or when the run fails in ctxrelay's filter).
    ``theirs`` is the caller's own input filter, which runs first."""

    def __init__(self, relay: Relay, theirs: CallModelInputFilter | None = None) -> None:
        self.relay = relay
        self.run: Run | None = None
        self.theirs = theirs
        self.model: Any = None
        """The run's ``RunConfig.model`` (``None``: each agent's own)."""
        # The SDK's input only grows during a run, and is rebuilt at every call: what the
        # server-state check saw (its length, first and last keys, the calls it met) and
        # the size of the last agent's tools, so a call looks only at what is new.
        self._seen: tuple[int, str, str] | None = None
        self._called: set[str] = set()
        self._tools: tuple[list[Any], int] | None = None

    async def _current(self) -> Run:
        if self.run is None:
            self.run = await self.relay.begin_async()
        return self.run

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        from agents.run_config import ModelInputData  # noqa: PLC0415 — openai-agents (extra)

        run = await self._current()
        model_data = data.model_data
        held = self._server_held(model_data.input, run.memory.key)
        if held is not None:
            run.release()  # nothing is sent: the run ends here
            raise ServerStateError(held)
        try:
            self.relay.check_model(self._model(data.agent))
            processed: list[Any] | None = None
            instructions = model_data.instructions
            if self.theirs is not None:  # the caller's filter first, on the SDK's input
                mine = ModelInputData(
                    input=list(model_data.input), instructions=model_data.instructions
                )
                answer = self.theirs(dataclasses.replace(data, model_data=mine))
                theirs = await answer if inspect.isawaitable(answer) else answer
                processed, instructions = list(theirs.input), theirs.instructions
            run.fixed_bytes = len((instructions or "").encode()) + self._tools_bytes(data.agent)
            sent = run.prepare(list(model_data.input), processed)
        except BaseException:
            run.release()
            raise
        return ModelInputData(input=sent.items, instructions=instructions)

    def _model(self, agent: Any) -> str | None:
        """The model the SDK calls for ``agent``, by its own precedence: the run's
        ``RunConfig(model=...)``, else the agent's, else the SDK's default model."""
        for setting in (self.model, agent.model):
            if setting is not None and setting != "":
                return _model_name(setting)
        from agents.models import get_default_model  # noqa: PLC0415 — openai-agents (extra)

        return get_default_model()

    def _server_held(
        self, items: Sequence[Any], key: Callable[[Any], str] | None = None
    ) -> str | None:
        """What makes the run keep its conversation on the server, from the input the
        SDK is about to send (``None``: the history is all here). A compaction item is
        opaque history; a tool output without its call means the SDK left the call out
        because the server holds it (it drops such orphans from a session's history
        itself, so nothing else sends one). Only the items after those an earlier call
        of the run checked are looked at; ``key``: the run's (each object keyed once),
        else the codec's."""
        key = key or self.relay.codec.key
        seen, start = self._seen, 0
        if (
            seen is not None
            and len(items) >= seen[0]
            and key(items[0]) == seen[1]
            and key(items[seen[0] - 1]) == seen[2]
        ):
            start = seen[0]
        else:
            self._called = set()
        self._seen = (len(items), key(items[0]), key(items[-1])) if items else None
        called = self._called
        for item in items[start:]:
            raw = _plain(item)
            if not isinstance(raw, Mapping):
                continue
            kind = raw.get("type")
            if kind == "compaction":
                return "OpenAIResponsesCompactionSession (its compaction items)"
            if kind == "item_reference":
                return "an item_reference input item"
            call_id = str(raw.get("call_id"))
            if kind == "function_call":
                called.add(call_id)
            elif kind == "function_call_output" and call_id not in called:
                return " / ".join(f"Runner.run's {name}" for name in _SERVER_STATE)
        return None

    def _tools_bytes(self, agent: Any) -> int:
        """The bytes the agent's tools add to every request (names, descriptions and
        schemas), measured again only when the agent's tools are other objects."""
        tools = list(getattr(agent, "tools", ()))
        cached = self._tools
        if (
            cached is not None
            and len(cached[0]) == len(tools)
            and all(map(operator.is_, cached[0], tools))
        ):
            return cached[1]
        size = 0
        for tool in tools:
            schema = getattr(tool, "params_json_schema", None)
            size += len(str(getattr(tool, "name", ""))) + len(str(getattr(tool, "description", "")))
            if schema is not None:
                size += len(json.dumps(schema, separators=(",", ":")))
        self._tools = (tools, size)
        return size

    def hooks(self, theirs: RunHooks[Any] | None = None) -> RunHooks[Any]:
        """ctxrelay's run hooks, which call ``theirs`` (the caller's own) after their own
        work at every event."""
        agents = _agents()
        seams = self

        class _Hooks(agents.RunHooks):  # type: ignore[misc,name-defined]
            async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
                if theirs is not None:
                    await theirs.on_llm_start(*args, **kwargs)

            async def on_agent_start(self, *args: Any, **kwargs: Any) -> None:
                if theirs is not None:
                    await theirs.on_agent_start(*args, **kwargs)

            async def on_handoff(self, *args: Any, **kwargs: Any) -> None:
                if theirs is not None:
                    await theirs.on_handoff(*args, **kwargs)

            async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
                if theirs is not None:
                    await theirs.on_tool_start(*args, **kwargs)

            async def on_tool_end(self, *args: Any, **kwargs: Any) -> None:
                if theirs is not None:
                    await theirs.on_tool_end(*args, **kwargs)

            async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
                run = await seams._current()
                usage = response.usage
                details = getattr(usage, "input_tokens_details", None)
                cached = int(getattr(details, "cached_tokens", 0) or 0)
                run.record_response(
                    response.to_input_items(),
                    context_tokens=int(usage.input_tokens),
                    output_tokens=int(usage.output_tokens),
                    usage={
                        "input_tokens": int(usage.input_tokens),
                        "output_tokens": int(usage.output_tokens),
                        "cache_read_input_tokens": cached,
                    },
                )
                if theirs is not None:
                    await theirs.on_llm_end(context, agent, response)

            async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
                if seams.run is not None:  # the run's final output: its end
                    seams.run.complete()
                if theirs is not None:
                    await theirs.on_agent_end(context, agent, output)

        return _Hooks()


class AgentsRelay(FrameworkRelay):
    """ctxrelay for one session under the Agents SDK: pass :attr:`tools` to the agent
    and :meth:`run_kwargs` to ``Runner.run`` / ``Runner.run_streamed``, fresh for each
    run (each run holds the session's lease; see ``docs/integrations.md``)."""

    def __init__(self, relay: Relay, tools: Sequence[Tool] = ()) -> None:
        _agents()
        self.relay = relay
        self.tools: list[FunctionTool] = [self._new_context_tool(), self._history_tool()]
        self.tools += [self.function_tool(t) for t in tools]

    FRAMEWORK = FRAMEWORK
    EXTRA = EXTRA
    FEATURE = _FEATURE
    SEAM = "pass **relay.run_kwargs() to Runner.run (or Runner.run_streamed) for each run"
    CODEC = AgentsCodec

    @classmethod
    def model_of(cls, model: Any) -> tuple[str | None, str]:
        """An ``Agent`` (its ``model``), a ``Model`` (its name) or a name."""
        if isinstance(model, str):
            return None, model
        agents = _agents()
        setting = model.model if isinstance(model, agents.Agent) else model
        name = _model_name(setting)
        if name is None:
            raise ConfigError(
                f"model={model!r} names no model ctxrelay can read; pass the model's name "
                "(model='gpt-4.1')"
            )
        # the SDK's own models are OpenAI's; a LiteLLM name says its provider itself
        return ("openai" if isinstance(setting, agents.Model) and "/" not in name else None), name

    # -- the seams ---------------------------------------------------------------------

    def _run_config(
        self, relay: Relay, config: RunConfig | None, fields: dict[str, Any]
    ) -> tuple[RunConfig, _AgentsRun]:
        """The run's ``RunConfig``: the caller's (or a new one) with ``fields`` and
        ctxrelay's input filter (wrapping the caller's) set on a copy, and streams asked
        for usage unless the caller said otherwise."""
        agents = _agents()
        for name in _SERVER_STATE:
            if fields.get(name):
                raise ServerStateError(name)
        if config is not None and not isinstance(config, agents.RunConfig):
            raise ConfigError(f"run_config must be an agents.RunConfig, not {config!r}")
        try:
            config = dataclasses.replace(config or agents.RunConfig(), **fields)
        except TypeError as exc:  # a name RunConfig does not have
            raise ConfigError(f"run_kwargs: {exc}") from None
        seams = _AgentsRun(relay, config.call_model_input_filter)
        # Streams report usage only when asked (the SDK asks OpenAI's own host only):
        # ctxrelay needs the provider's count of every request.
        settings = config.model_settings or agents.ModelSettings()
        if settings.include_usage is None:
            settings = settings.resolve(agents.ModelSettings(include_usage=True))
        config = dataclasses.replace(
            config, call_model_input_filter=seams.input_filter, model_settings=settings
        )
        seams.model = config.model
        return config, seams

    def run_config(self, run_config: RunConfig | None = None, **fields: Any) -> RunConfig:
        """A ``RunConfig`` with ctxrelay's input filter for one run (``run_config`` kept,
        ``fields`` set on it); prefer :meth:`run_kwargs`, which also stores each
        response's usage."""
        return self._run_config(self.relay, run_config, fields)[0]

    def run_kwargs(
        self,
        *,
        hooks: RunHooks[Any] | None = None,
        run_config: RunConfig | None = None,
        session: Session | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """``run_config`` and ``hooks`` for one ``Runner.run``/``run_streamed``: call it
        for each run (the two share that run's state, and no other run's).

        Yours merge with ctxrelay's: ``hooks`` (your ``RunHooks``) run after ctxrelay's at
        every event; ``run_config`` (your ``RunConfig``) is kept, with ``fields`` (any of
        its fields, ``call_model_input_filter=`` included) and ctxrelay's input filter set
        on a copy; your input filter runs first, on the SDK's input, and ctxrelay sends
        and measures what it returns (see ``docs/integrations.md``).

        ``session`` (the SDK's session memory) is passed on to the run, and binds this
        relay to that session's conversation: a relay given another session's id raises
        :class:`~ctxrelay.errors.ConversationError` (one relay per conversation), and so
        does a run given no session once one was given: to the SDK, that run is a new
        conversation."""
        relay = self.relay
        if session is not None:
            relay.bind(f"session_id={session.session_id!r}")
        elif (bound := relay.bound()) is not None and bound.startswith("session_id="):
            raise ConversationError(
                relay.id,
                bound,
                "a run with no session= (another conversation: the SDK starts a new one "
                "without a session; pass the held session to go on with it)",
                relay.framework,
            )
        config, seams = self._run_config(self.relay, run_config, fields)
        kwargs: dict[str, Any] = {"run_config": config, "hooks": seams.hooks(hooks)}
        if session is not None:
            kwargs["session"] = session
        return kwargs

    def function_tool(self, tool: Tool) -> FunctionTool:
        """One of ctxrelay's own tools (for example ``ReadFile()``, ``WriteFile()`` from
        ``ctxrelay.runtime.tools``) as an Agents SDK ``FunctionTool`` confined to this
        session's workspace."""
        agents = _agents()
        relay = self.relay

        async def invoke(ctx: Any, args: str) -> str:
            try:
                parsed = json.loads(args or "{}")
            except ValueError:
                return f"{tool.name}: the arguments are not JSON"
            if not isinstance(parsed, dict):
                return f"{tool.name}: the arguments must be an object"
            result = await relay.run_tool(tool, parsed, str(getattr(ctx, "tool_call_id", "")))
            return result.content

        return agents.FunctionTool(  # type: ignore[no-any-return]
            name=tool.name,
            description=tool.description,
            params_json_schema=dict(tool.input_schema),
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    def _new_context_tool(self) -> FunctionTool:
        agents = _agents()
        relay = self.relay

        async def invoke(ctx: Any, _args: str) -> str:
            return await relay.run_new_context(str(getattr(ctx, "tool_call_id", "")))

        return agents.FunctionTool(  # type: ignore[no-any-return]
            name=NEW_CONTEXT,
            description=NEW_CONTEXT_DESCRIPTION,
            params_json_schema={"type": "object", "properties": {}, "additionalProperties": False},
            on_invoke_tool=invoke,
            strict_json_schema=False,
            is_enabled=lambda _ctx, _agent: relay.offer_new_context,
        )

    def _history_tool(self) -> FunctionTool:
        return self.function_tool(SessionHistory())
