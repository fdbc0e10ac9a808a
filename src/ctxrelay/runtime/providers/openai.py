"""The OpenAI Chat Completions provider on the official ``openai`` SDK, for OpenAI and any
compatible server (vLLM, Ollama, llama.cpp, LM Studio) through ``base_url``.

Usage: ``prompt_tokens`` is the request's whole context; cached prompt tokens
(``prompt_tokens_details.cached_tokens``) become ``cache_read_input_tokens`` and leave
``input_tokens`` (the conversion is :func:`ctxrelay.pricing.openai_usage`, shared with the
analyzer), so ``Usage.context_tokens`` equals ``prompt_tokens``. A server that reports no
usage in its stream gets a conservative size estimate instead of a zero.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import MalformedResponseError
from ctxrelay.pricing import openai_usage
from ctxrelay.runtime.model import (
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from ctxrelay.runtime.providers._common import (
    Attempt,
    RetryPolicy,
    estimate_request_tokens,
    run_with_retries,
)
from ctxrelay.runtime.providers._openai_common import (
    INVALID_ARGUMENTS_KEY,
    OpenAIBase,
    model_defaults,
    tool_arguments,
)

if TYPE_CHECKING:
    import openai as openai_sdk

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
    (:mod:`ctxrelay.runtime.providers.openai_chat`); the key and base URL as for
    :class:`OpenAIBase`. ``max_tokens_field``: OpenAI's own
    API wants ``max_completion_tokens``; many local servers only read ``max_tokens`` (the
    default when a base URL is given)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        max_tokens_field: str | None = None,
        client: openai_sdk.AsyncOpenAI | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            retry=retry,
            max_retries=max_retries,
            client=client,
        )
        self.max_tokens_field = max_tokens_field or (
            "max_tokens" if self.base_url else "max_completion_tokens"
        )

    # -- the request --------------------------------------------------------------------

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for ``request``."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
            if message.role == "assistant":
                entry: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
                if message.tool_calls:
                    entry["tool_calls"] = [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(dict(call.input), ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ]
                elif entry["content"] is None:
                    entry["content"] = ""
                messages.append(entry)
                continue
            # Tool results are messages of their own and must directly follow the
            # assistant turn that called them, before any new user text.
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    content = block.content or "(no output)"
                    if block.is_error:
                        content = f"ERROR: {content}"
                    messages.append(
                        {"role": "tool", "tool_call_id": block.tool_call_id, "content": content}
                    )
            if texts or not any(isinstance(b, ToolResultBlock) for b in message.content):
                messages.append({"role": "user", "content": "\n\n".join(texts) or "(empty)"})
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

    # -- the call -----------------------------------------------------------------------

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        params = self.request_params(request)

        async def attempt(state: Attempt) -> ModelResponse:
            texts: list[str] = []
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
                        if delta.content:
                            texts.append(delta.content)
                            if on_text is not None:
                                state.emitted = True
                                on_text(delta.content)
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
                params, texts=texts, calls=calls, finish=finish, usage=usage, model=model
            )

        return await run_with_retries(attempt, self._classify, self.retry)

    def _response(
        self,
        params: Mapping[str, Any],
        *,
        texts: list[str],
        calls: Mapping[int, Mapping[str, str]],
        finish: str,
        usage: Mapping[str, Any] | None,
        model: str,
    ) -> ModelResponse:
        tool_calls = tuple(
            ToolCall(
                id=entry["id"] or f"call_{index}",
                name=entry["name"],
                input=tool_arguments(entry["args"]),
            )
            for index, entry in sorted(calls.items())
        )
        text = "".join(texts)
        if usage is not None:
            counts = openai_usage(usage)
        else:
            counts = {
                "input_tokens": estimate_request_tokens(
                    {"messages": params["messages"], "tools": params.get("tools")}
                ),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": estimate_request_tokens(
                    [text, *(c["args"] for c in calls.values())]
                ),
            }
        return ModelResponse(
            text=text,
            tool_calls=tool_calls,
            usage=Usage(**counts),
            stop_reason=_FINISH.get(finish, finish),
            model=model,
        )


def create(model: str, **options: Any) -> OpenAIProvider:
    """The Chat Completions provider for ``MODEL``; ``options`` are the constructor's
    keywords (``base_url``, ``api_key``, ``timeout``...)."""
    return OpenAIProvider(model, **options)
