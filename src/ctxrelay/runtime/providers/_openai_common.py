"""What the two OpenAI providers share, whichever API they speak (Chat Completions in
``openai``, Responses in ``openai_responses``): the SDK import, the client at its endpoint
(key, ``base_url``, how errors name the server), how the SDK's errors map to failures
(context overflow, quota, a stream that broke), the tool-call argument parsing, and the
model table."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import MalformedResponseError, ProviderStatusError
from ctxrelay.runtime.providers._common import (
    Endpoint,
    Failure,
    RetryPolicy,
    StatusReply,
    api_message,
    load_sdk,
    sdk_failure,
    status_failure,
)
from ctxrelay.runtime.registry import ModelInfo, lookup_model

if TYPE_CHECKING:
    import openai as openai_sdk

__all__ = ["INVALID_ARGUMENTS_KEY", "OpenAIBase", "model_defaults", "sdk", "tool_arguments"]

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


def model_defaults(model: str) -> ModelInfo | None:
    """The registry's window and output reserve for ``model``, or ``None``."""
    return lookup_model("openai", model)


class OpenAIBase:
    """A provider on the ``openai`` SDK's client. The key comes from ``api_key`` or
    ``OPENAI_API_KEY``; with a ``base_url`` (or ``OPENAI_BASE_URL``) no key is needed for
    servers that check none. The SDK's own retries are off: the provider retries with
    ``retry`` (:func:`ctxrelay.runtime.providers._common.run_with_retries`)."""

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
        key = endpoint.key(
            api_key or os.environ.get("OPENAI_API_KEY"),
            "no OpenAI API key: set OPENAI_API_KEY (or pass --base-url for a local server "
            "that needs none)",
        )
        self._client = sdk().AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0
        )

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    async def aclose(self) -> None:
        await self._client.close()

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
