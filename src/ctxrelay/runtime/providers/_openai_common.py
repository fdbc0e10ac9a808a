"""What the two OpenAI providers share, whichever API they speak (Chat Completions in
``openai``, Responses in ``openai_responses``): the SDK import, the client at its endpoint
(key, ``base_url``, how errors name the server), the call with retries, how the SDK's
errors map to failures (context overflow, quota, a stream that broke), the order of a
window's turns, how a tool call's arguments are written and read, the usage (or its
estimate), and the model table."""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    Endpoint,
    Failure,
    RetryPolicy,
    StatusReply,
    api_message,
    estimate_request_tokens,
    load_sdk,
    run_with_retries,
    sdk_failure,
    status_failure,
)
from ctxrelay.runtime.registry import ModelInfo, lookup_model

if TYPE_CHECKING:
    import openai as openai_sdk

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "OpenAIBase",
    "StreamedText",
    "call_arguments",
    "model_defaults",
    "sdk",
    "tool_arguments",
    "tool_call",
    "usage_of",
]

# A tool call whose arguments are not a JSON object (small local models do this) reaches
# the tool as ``{INVALID_ARGUMENTS_KEY: raw}``; tools answer with an input error the model
# can correct, instead of the session failing.
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"

# How OpenAI and compatible servers word a request too long for the model.
_TOO_LONG = re.compile(
    r"maximum context length|context length|context window|too many tokens|"
    r"prompt is too long|exceeds? the (available )?context",
    re.IGNORECASE,
)


def sdk() -> Any:
    """The ``openai`` SDK, or the error that names its extra."""
    return load_sdk("openai", "the OpenAI provider")


def tool_arguments(raw: str) -> dict[str, Any]:
    """A tool call's arguments as the model sent them (a JSON object as text); anything
    else becomes ``{INVALID_ARGUMENTS_KEY: raw}``."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {INVALID_ARGUMENTS_KEY: raw}
    return value if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: raw}


def tool_call(index: int, call_id: str | None, name: str, arguments: str | None) -> ToolCall:
    """The ``index``-th tool call of an answer as the runtime keeps it (an id made up from
    ``index`` where the server sent none)."""
    return ToolCall(id=call_id or f"call_{index}", name=name, input=tool_arguments(arguments or ""))


def call_arguments(call: ToolCall) -> str:
    """A tool call's arguments as the wire carries them: a JSON object as text."""
    return json.dumps(dict(call.input), ensure_ascii=False)


@dataclass(slots=True)
class StreamedText:
    """One attempt's text as it streams: kept, and handed to ``on_text`` as it comes (the
    attempt then may not be retried, or the caller would see the text twice)."""

    state: Attempt
    on_text: Callable[[str], None] | None
    parts: list[str] = field(default_factory=list)

    def add(self, delta: str | None) -> None:
        if not delta:
            return
        self.parts.append(delta)
        if self.on_text is not None:
            self.state.emitted = True
            self.on_text(delta)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def usage_of(reported: Mapping[str, Any] | None, sent: Any, outputs: Iterable[str]) -> Usage:
    """The usage the server ``reported`` (:func:`ctxrelay.pricing.openai_usage`), else a
    conservative estimate from what was ``sent`` and the ``outputs`` received."""
    if reported is not None:
        return Usage(**openai_usage(reported))
    return Usage(
        input_tokens=estimate_request_tokens(sent),
        cache_creation_input_tokens=0,
        cache_read_input_tokens=0,
        output_tokens=estimate_request_tokens(list(outputs)),
    )


def model_defaults(model: str) -> ModelInfo | None:
    """The registry's window and output reserve for ``model``, or ``None``."""
    return lookup_model("openai", model)


class OpenAIBase(ABC):
    """A provider on the ``openai`` SDK's client. The key comes from ``api_key`` or
    ``OPENAI_API_KEY``; with a ``base_url`` (or ``OPENAI_BASE_URL``) no key is needed for
    servers that check none. The SDK's own retries are off: :meth:`complete` retries with
    ``retry``. A subclass writes the request (:meth:`request_params`, with the window's
    turns from :meth:`_window`) and reads one streamed answer (:meth:`_stream`)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        client: openai_sdk.AsyncOpenAI | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.retry = RetryPolicy.resolve(retry, max_retries)
        endpoint = Endpoint.of(base_url, env="OPENAI_BASE_URL", api="OpenAI")
        self.base_url, self._who = endpoint.base_url, endpoint.who
        if client is not None:
            self._client = client
            return
        openai = sdk()  # a missing extra is said before a missing key
        key = endpoint.key(
            api_key or os.environ.get("OPENAI_API_KEY"),
            "no OpenAI API key: set OPENAI_API_KEY (or pass --base-url for a local server "
            "that needs none)",
        )
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
        )

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    async def aclose(self) -> None:
        await self._client.close()

    @abstractmethod
    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The SDK call's arguments for ``request``."""

    @abstractmethod
    def _assistant_items(self, text: str, calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
        """An assistant turn (its ``text``, maybe empty, and its tool ``calls``) on the wire."""

    @abstractmethod
    def _result_item(self, call_id: str, output: str) -> dict[str, Any]:
        """One tool result on the wire."""

    @abstractmethod
    async def _stream(self, params: dict[str, Any], text: StreamedText) -> ModelResponse:
        """One attempt: send ``params`` and read the stream to its end, its text into
        ``text``."""

    def _window(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The window's messages in the API's items. A user turn's tool results go first,
        right after the assistant turn that called them (an error's output marked
        ``ERROR:``), then its text; a turn with neither says ``(empty)``."""
        items: list[dict[str, Any]] = []
        for message in request.messages:
            texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
            if message.role == "assistant":
                items.extend(self._assistant_items("".join(texts), message.tool_calls))
                continue
            results = [b for b in message.content if isinstance(b, ToolResultBlock)]
            for block in results:
                output = block.content or "(no output)"
                if block.is_error:
                    output = f"ERROR: {output}"
                items.append(self._result_item(block.tool_call_id, output))
            if texts or not results:
                items.append({"role": "user", "content": "\n\n".join(texts) or "(empty)"})
        return items

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        params = self.request_params(request)
        return await run_with_retries(
            lambda state: self._stream(params, StreamedText(state, on_text)),
            self._classify,
            self.retry,
        )

    def _classify(self, exc: BaseException) -> Failure | None:
        """The failure for what the SDK raised (``None``: not the SDK's, re-raise)."""
        openai = sdk()
        who = self._who
        if isinstance(exc, openai.APIStatusError):
            reply = StatusReply.of(exc)
            code = getattr(exc, "code", None)
            if reply.status == 429 and code == "insufficient_quota":
                return Failure(
                    ProviderStatusError,
                    f"{who} says this key has no quota left {reply.said}; check the account's "
                    "billing",
                    False,
                    reply.status,
                )
            return status_failure(
                reply,
                who=who,
                model=self.model,
                key_env="OPENAI_API_KEY",
                too_long=reply.status == 413
                or (
                    reply.status == 400
                    and (code == "context_length_exceeded" or bool(_TOO_LONG.search(reply.detail)))
                ),
                busy="is rate-limiting this key" if reply.status == 429 else "failed",
            )
        cause = exc.__cause__
        if (
            isinstance(exc, openai.APIConnectionError)
            and not isinstance(exc, openai.APITimeoutError)
            and cause is not None
            and not type(cause).__name__.startswith("Connect")
        ):
            # The SDK raises its connection error for a stream that broke after it connected.
            return Failure(
                MalformedResponseError, f"the response stream from {who} broke off ({cause})", True
            )
        if isinstance(exc, openai.APIError) and not isinstance(exc, openai.APIConnectionError):
            # an error object inside the stream
            return Failure(
                ProviderStatusError, f"{who} failed mid-stream ({api_message(exc)})", True
            )
        return sdk_failure(openai, exc, who, self.timeout)
