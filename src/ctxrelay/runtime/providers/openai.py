"""The OpenAI Chat Completions provider on the official ``openai`` SDK, for OpenAI and any
compatible server (vLLM, Ollama, llama.cpp, LM Studio) through ``base_url``.

Usage: ``prompt_tokens`` is the request's whole context; cached prompt tokens
(``prompt_tokens_details.cached_tokens``) become ``cache_read_input_tokens`` and leave
``input_tokens`` (the conversion is :func:`ctxrelay.pricing.openai_usage`, shared with the
analyzer), so ``Usage.context_tokens`` equals ``prompt_tokens``. A server that reports no
usage in its stream gets a conservative size estimate instead of a zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxrelay.errors import MalformedResponseError
from ctxrelay.runtime.model import ModelRequest, ModelResponse, ToolCall
from ctxrelay.runtime.providers._openai_common import (
    INVALID_ARGUMENTS_KEY,
    OpenAIBase,
    StreamedText,
    call_arguments,
    model_defaults,
    tool_call,
    usage_of,
)

__all__ = ["INVALID_ARGUMENTS_KEY", "OpenAIProvider", "create", "model_defaults"]

_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _call_index(part: Any, calls: Mapping[int, Mapping[str, str]]) -> int:
    """Which tool call a delta continues. The API numbers them (``index``); some local
    servers leave it out and send each call whole: a new id then starts a new call."""
    index = getattr(part, "index", None)
    if isinstance(index, int):
        return index
    if not calls:
        return 0
    last = max(calls)
    if part.id and calls[last]["id"] and part.id != calls[last]["id"]:
        return last + 1
    return last


class OpenAIProvider(OpenAIBase):
    """Chat Completions, chosen as ``openai-chat:MODEL``
    (:mod:`ctxrelay.runtime.providers.openai_chat`); ``options`` (key, base URL, timeout,
    retries, client) as for :class:`OpenAIBase`. ``max_tokens_field``: OpenAI's own API
    wants ``max_completion_tokens``; many local servers only read ``max_tokens`` (the
    default when a base URL is given)."""

    def __init__(self, model: str, *, max_tokens_field: str | None = None, **options: Any) -> None:
        super().__init__(model, **options)
        self.max_tokens_field = max_tokens_field or (
            "max_tokens" if self.base_url else "max_completion_tokens"
        )

    # -- the request --------------------------------------------------------------------

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for ``request``."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        # Tool results are messages of their own (role "tool").
        messages.extend(self._window(request))
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self.max_tokens_field: request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": dict(t.input_schema),
                    },
                }
                for t in request.tools
            ]
        return params

    def _assistant_items(self, text: str, calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            entry["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call_arguments(call)},
                }
                for call in calls
            ]
        elif entry["content"] is None:
            entry["content"] = ""
        return [entry]

    def _result_item(self, call_id: str, output: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call_id, "content": output}

    # -- the call -----------------------------------------------------------------------

    async def _stream(self, params: dict[str, Any], text: StreamedText) -> ModelResponse:
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Mapping[str, Any] | None = None
        model = self.model
        stream = await self._client.chat.completions.create(**params)
        try:
            async for chunk in stream:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = chunk.usage.model_dump()
                for choice in chunk.choices:
                    delta = choice.delta
                    text.add(delta.content)
                    for part in delta.tool_calls or ():
                        entry = calls.setdefault(
                            _call_index(part, calls), {"id": "", "name": "", "args": ""}
                        )
                        entry["id"] = part.id or entry["id"]
                        if part.function is not None:
                            entry["name"] += part.function.name or ""
                            entry["args"] += part.function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
        finally:
            await stream.close()
        if finish is None:
            raise MalformedResponseError(
                f"the response stream from {self._who} ended without a finish reason"
            )
        return self._response(
            params, text=text.text, calls=calls, finish=finish, usage=usage, model=model
        )

    def _response(
        self,
        params: Mapping[str, Any],
        *,
        text: str,
        calls: Mapping[int, Mapping[str, str]],
        finish: str,
        usage: Mapping[str, Any] | None,
        model: str,
    ) -> ModelResponse:
        tool_calls = tuple(
            tool_call(index, entry["id"], entry["name"], entry["args"])
            for index, entry in sorted(calls.items())
        )
        sent = {"messages": params["messages"], "tools": params.get("tools")}
        outputs = [text, *(c["args"] for c in calls.values())]
        return ModelResponse(
            text=text,
            tool_calls=tool_calls,
            usage=usage_of(usage, sent, outputs),
            stop_reason=_FINISH.get(finish, finish),
            model=model,
        )


def create(model: str, **options: Any) -> OpenAIProvider:
    """The Chat Completions provider for ``MODEL``; ``options`` are the constructor's
    keywords (``base_url``, ``api_key``, ``timeout``...)."""
    return OpenAIProvider(model, **options)
