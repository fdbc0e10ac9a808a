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

from collections.abc import Mapping, Sequence
from typing import Any

from ctxrelay.errors import MalformedResponseError, ProviderStatusError
from ctxrelay.runtime.model import ModelRequest, ModelResponse, ToolCall
from ctxrelay.runtime.providers._common import Failure
from ctxrelay.runtime.providers._openai_common import (
    OpenAIBase,
    StreamedText,
    call_arguments,
    model_defaults,
    tool_call,
    usage_of,
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
        params: dict[str, Any] = {
            "model": self.model,
            "input": self._window(request),
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

    def _assistant_items(self, text: str, calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call_arguments(call),
            }
            for call in calls
        )
        return items

    def _result_item(self, call_id: str, output: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": output}

    # -- the call -----------------------------------------------------------------------

    async def _stream(self, params: dict[str, Any], text: StreamedText) -> ModelResponse:
        calls: list[Any] = []
        final: Any = None
        stream = await self._client.responses.create(**params)
        try:
            async for event in stream:
                kind = event.type
                if kind == "response.output_text.delta":
                    text.add(event.delta)
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
        return self._response(params, text=text.text, calls=calls, final=final)

    def _response(
        self, params: Mapping[str, Any], *, text: str, calls: list[Any], final: Any
    ) -> ModelResponse:
        if not calls:  # a server that sends the items only in the final response
            calls = [item for item in final.output or () if item.type == "function_call"]
        tool_calls = tuple(
            tool_call(index, item.call_id, item.name, item.arguments)
            for index, item in enumerate(calls)
        )
        reported = final.usage.model_dump() if final.usage is not None else None
        sent = {
            "instructions": params.get("instructions"),
            "input": params["input"],
            "tools": params.get("tools"),
        }
        outputs = [text, *(c.arguments for c in calls)]
        if final.status == "incomplete":
            details = final.incomplete_details
            reason = getattr(details, "reason", None) or "max_output_tokens"
            stop = _INCOMPLETE.get(reason, reason)
        else:
            stop = "tool_use" if tool_calls else "end_turn"
        return ModelResponse(
            text=text,
            tool_calls=tool_calls,
            usage=usage_of(reported, sent, outputs),
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
