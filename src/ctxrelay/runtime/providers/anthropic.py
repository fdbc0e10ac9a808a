"""The Anthropic Messages provider on the official ``anthropic`` SDK: streaming, tool use,
usage with cache fields, prompt-cache breakpoints, retries with backoff, one-sentence errors.

Cache breakpoints (at most four per request; we use up to three): the end of the system
prompt (tools and system are the stable head of every request), the end of the window's
prefix (``request.metadata["cache_breakpoint"]``: index of the last message of the lead-in
the host wants cached for the whole window; the first message when unset), and the end of
the conversation so far (each request writes its tail, the next one reads it). The context
of a request is ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import ProviderStatusError
from ctxrelay.runtime.model import (
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from ctxrelay.runtime.providers._common import (
    Attempt,
    Endpoint,
    Failure,
    RetryPolicy,
    StatusReply,
    load_sdk,
    run_with_retries,
    sdk_failure,
    status_failure,
)
from ctxrelay.runtime.registry import ModelInfo, lookup_model

if TYPE_CHECKING:
    import anthropic as anthropic_sdk

__all__ = ["AnthropicProvider", "create", "model_defaults"]

_EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
_TOO_LONG = re.compile(
    r"prompt is too long|too long|exceeds? (the )?context|context (window|limit)|"
    r"maximum context length",
    re.IGNORECASE,
)


def _sdk() -> Any:
    return load_sdk("anthropic", "the Anthropic provider")


def _api_error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return str(body["error"].get("type", ""))
    return ""


class AnthropicProvider:
    """``anthropic:MODEL``. The key comes from ``api_key`` or ``ANTHROPIC_API_KEY``; a
    ``base_url`` (or ``ANTHROPIC_BASE_URL``) points at a compatible server. The SDK's own
    retries are off: this class retries 429/529/5xx and broken streams with backoff (a
    failure after text reached ``on_text`` is not retried, it would repeat the text)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        cache: bool = True,
        client: anthropic_sdk.AsyncAnthropic | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.retry = RetryPolicy.resolve(retry, max_retries)
        self.cache = cache
        endpoint = Endpoint.of(base_url, env="ANTHROPIC_BASE_URL", api="Anthropic")
        self.base_url, self._who = endpoint.base_url, endpoint.who
        if client is not None:
            self._client = client
            return
        sdk = _sdk()
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        token = None if key else os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if not token:
            key = endpoint.key(
                key,
                "no Anthropic API key: set ANTHROPIC_API_KEY (or pass --base-url for a "
                "compatible server that needs none)",
            )
        self._client = sdk.AsyncAnthropic(
            api_key=key,
            auth_token=token,
            base_url=self.base_url,
            timeout=timeout,
            max_retries=0,
        )

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}"

    async def aclose(self) -> None:
        await self._client.close()

    # -- the request --------------------------------------------------------------------

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``messages.create`` arguments for ``request`` (cache breakpoints included)."""
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [self._message(m) for m in request.messages],
        }
        if request.system:
            system: dict[str, Any] = {"type": "text", "text": request.system}
            if self.cache:
                system["cache_control"] = dict(_EPHEMERAL)
            params["system"] = [system]
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
                for t in request.tools
            ]
            if self.cache and not request.system:
                params["tools"][-1]["cache_control"] = dict(_EPHEMERAL)
        if self.cache:
            messages = params["messages"]
            marks = {len(messages) - 1}
            # The window's prefix: the host names it; otherwise the first message (a new
            # window's lead-in, or the task in the first window).
            prefix = request.metadata.get("cache_breakpoint", 0)
            if isinstance(prefix, int) and not isinstance(prefix, bool):
                marks.add(prefix)
            for index in sorted(marks):
                if 0 <= index < len(messages):
                    messages[index]["content"][-1]["cache_control"] = dict(_EPHEMERAL)
        return params

    @staticmethod
    def _message(message: Message) -> dict[str, Any]:
        blocks: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text:  # the API refuses empty text blocks
                    blocks.append({"type": "text", "text": block.text})
            elif isinstance(block, ToolResultBlock):
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": block.tool_call_id,
                    "content": block.content or "(no output)",
                }
                if block.is_error:
                    result["is_error"] = True
                blocks.append(result)
        for call in message.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.input)}
            )
        if not blocks:
            blocks.append({"type": "text", "text": "(empty)"})
        return {"role": message.role, "content": blocks}

    # -- the call -----------------------------------------------------------------------

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        params = self.request_params(request)

        async def attempt(state: Attempt) -> ModelResponse:
            async with self._client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "text" and event.text and on_text is not None:
                        state.emitted = True
                        on_text(event.text)
                message = await stream.get_final_message()
            return self._response(message)

        return await run_with_retries(attempt, self._classify, self.retry)

    def _response(self, message: Any) -> ModelResponse:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                raw = block.input
                calls.append(
                    ToolCall(
                        id=block.id,
                        name=block.name,
                        input=dict(raw) if isinstance(raw, Mapping) else {"input": raw},
                    )
                )
        usage = message.usage
        return ModelResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(
                input_tokens=usage.input_tokens or 0,
                output_tokens=usage.output_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
            ),
            stop_reason=message.stop_reason or "end_turn",
            model=message.model or self.model,
        )

    def _classify(self, exc: BaseException) -> Failure | None:
        sdk = _sdk()
        who = self._who
        if isinstance(exc, sdk.APIStatusError):
            reply = StatusReply.of(exc)
            if reply.status < 400:
                # An ``event: error`` inside a 200 stream: overloaded or a server fault.
                kind = _api_error_type(exc) or "api_error"
                return Failure(
                    ProviderStatusError,
                    f"{who} failed mid-stream ({kind}: {reply.detail})",
                    kind in ("overloaded_error", "api_error", "rate_limit_error"),
                    reply.status,
                )
            return status_failure(
                reply,
                who=who,
                model=self.model,
                key_env="ANTHROPIC_API_KEY",
                too_long=reply.status == 413
                or (reply.status == 400 and bool(_TOO_LONG.search(reply.detail))),
                busy="is overloaded" if reply.status in (429, 529) else "failed",
            )
        return sdk_failure(sdk, exc, who, self.timeout)


def create(model: str, **options: Any) -> AnthropicProvider:
    """The provider for ``anthropic:MODEL`` (the seam of ``ctxrelay.runtime.providers``);
    ``options`` are the constructor's keywords (``base_url``, ``api_key``, ``timeout``...)."""
    return AnthropicProvider(model, **options)


def model_defaults(model: str) -> ModelInfo | None:
    """The registry's window and output reserve for ``model``, or ``None``."""
    return lookup_model("anthropic", model)
