"""The OpenAI Responses provider on the official ``openai`` SDK: ``openai:MODEL``.
Responses is OpenAI's own recommended API; servers that speak only Chat Completions
(older vLLM, llama.cpp, LM Studio) are chosen explicitly with ``openai-chat:MODEL``
(``ctxrelay.runtime.providers.openai``).

ctxrelay keeps the conversation on the client (it decides what each window sends), so
every request carries the window's whole input with ``store: false``: no
``previous_response_id``, no server-side conversation.

Usage: ``input_tokens`` is the request's whole context; its cached part
(``input_tokens_details.cached_tokens``) becomes ``cache_read_input_tokens`` and leaves
``input_tokens`` (:func:`ctxrelay.pricing.openai_usage`, as for Chat Completions), so
``Usage.context_tokens`` equals ``input_tokens``. A server that reports no usage gets a
conservative size estimate instead of a zero.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ctxrelay.errors import MalformedResponseError, ProviderStatusError
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
    Failure,
    estimate_request_tokens,
    run_with_retries,
)
from ctxrelay.runtime.providers._openai_common import (
    OpenAIBase,
    model_defaults,
    tool_arguments,
)

__all__ = ["OpenAIResponsesProvider", "create", "model_defaults"]

# incomplete_details.reason -> the runtime's stop reason
_INCOMPLETE = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})


class StreamFailed(Exception):
    """The stream reported a failure itself (an ``error`` event or ``response.failed``)."""

    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.code = code


class OpenAIResponsesProvider(OpenAIBase):
    """``openai:MODEL`` over the Responses API; the key, base URL and retries as for
    :class:`OpenAIBase` (the same as the Chat Completions provider's)."""

    # -- the request --------------------------------------------------------------------

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``responses.create`` arguments for ``request``: the system prompt as
        ``instructions``, the window as input items (messages, ``function_call`` and
        ``function_call_output``), nothing stored on the server."""
        items: list[dict[str, Any]] = []
        for message in request.messages:
            texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
            if message.role == "assistant":
                if texts:
                    items.append({"role": "assistant", "content": "".join(texts)})
                items.extend(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": json.dumps(dict(call.input), ensure_ascii=False),
                    }
                    for call in message.tool_calls
                )
                continue
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    output = block.content or "(no output)"
                    if block.is_error:
                        output = f"ERROR: {output}"
                    items.append(
                        {
                            "type": "function_call_output",
                            "call_id": block.tool_call_id,
                            "output": output,
                        }
                    )
            if texts or not any(isinstance(b, ToolResultBlock) for b in message.content):
                items.append({"role": "user", "content": "\n\n".join(texts) or "(empty)"})
        params: dict[str, Any] = {
            "model": self.model,
            "input": items,
            "max_output_tokens": request.max_tokens,
            "store": False,
            "stream": True,
        }
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": dict(t.input_schema),
                    "strict": False,
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
            calls: list[Any] = []
            final: Any = None
            stream = await self._client.responses.create(**params)
            try:
                async for event in stream:
                    kind = event.type
                    if kind == "response.output_text.delta":
                        texts.append(event.delta)
                        if on_text is not None and event.delta:
                            state.emitted = True
                            on_text(event.delta)
                    elif kind == "response.output_item.done":
                        if event.item.type == "function_call":
                            calls.append(event.item)
                    elif kind in _FINAL_EVENTS:
                        final = event.response
                    elif kind == "response.failed":
                        error = event.response.error
                        raise StreamFailed(
                            error.message if error else "the response failed",
                            error.code if error else None,
                        )
                    elif kind == "error":
                        raise StreamFailed(event.message, event.code)
            finally:
                await stream.close()
            if final is None:
                raise MalformedResponseError(
                    f"the response stream from {self._who} ended without its final event"
                )
            return self._response(params, texts=texts, calls=calls, final=final)

        return await run_with_retries(attempt, self._classify, self.retry)

    def _response(
        self, params: Mapping[str, Any], *, texts: list[str], calls: list[Any], final: Any
    ) -> ModelResponse:
        if not calls:  # a server that sends the items only in the final response
            calls = [item for item in final.output or () if item.type == "function_call"]
        tool_calls = tuple(
            ToolCall(
                id=item.call_id or f"call_{index}",
                name=item.name,
                input=tool_arguments(item.arguments or ""),
            )
            for index, item in enumerate(calls)
        )
        text = "".join(texts)
        if final.usage is not None:
            counts = openai_usage(final.usage.model_dump())
        else:
            counts = {
                "input_tokens": estimate_request_tokens(
                    {
                        "instructions": params.get("instructions"),
                        "input": params["input"],
                        "tools": params.get("tools"),
                    }
                ),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": estimate_request_tokens([text, *(c.arguments for c in calls)]),
            }
        if final.status == "incomplete":
            details = final.incomplete_details
            reason = getattr(details, "reason", None) or "max_output_tokens"
            stop = _INCOMPLETE.get(reason, reason)
        else:
            stop = "tool_use" if tool_calls else "end_turn"
        return ModelResponse(
            text=text,
            tool_calls=tool_calls,
            usage=Usage(**counts),
            stop_reason=stop,
            model=final.model or self.model,
        )

    def _classify(self, exc: BaseException) -> Failure | None:
        if isinstance(exc, StreamFailed):
            return Failure(ProviderStatusError, f"{self._who} failed mid-stream ({exc})", True)
        return super()._classify(exc)


def create(model: str, **options: Any) -> OpenAIResponsesProvider:
    """The provider for ``openai:MODEL`` (the seam of ``ctxrelay.runtime.providers``);
    ``options`` are the constructor's keywords (``base_url``, ``api_key``, ``timeout``...)."""
    return OpenAIResponsesProvider(model, **options)
