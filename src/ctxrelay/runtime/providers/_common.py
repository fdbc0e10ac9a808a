"""What the real providers share: their endpoint (base URL, key, how errors name the
server) and SDK import, the retry loop with backoff, how an SDK's HTTP status error maps to
a failure, the SDK's timeout and the transport errors of its HTTP client, and the rough
size estimate used when a server reports no usage."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from ctxrelay.errors import (
    ContextOverflowError,
    MalformedResponseError,
    MissingExtraError,
    ModelUnavailableError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
)

__all__ = [
    "Attempt",
    "Endpoint",
    "Failure",
    "RetryPolicy",
    "StatusReply",
    "api_message",
    "estimate_request_tokens",
    "load_sdk",
    "run_with_retries",
    "sdk_failure",
    "status_failure",
    "transport_failure",
]

T = TypeVar("T")

# HTTP statuses worth another try: timeouts, conflicts, rate limits, overload, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def load_sdk(module: str, provider: str) -> Any:
    """The official SDK ``module`` (``anthropic``, ``openai``: each the name of its extra
    too), or the error that names the extra to install for ``provider``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(provider, module) from None


@dataclass(frozen=True, slots=True)
class Endpoint:
    """The server a provider talks to: its ``base_url`` (``None``: the vendor's own API)
    and how a sentence names it (``who``)."""

    base_url: str | None
    who: str

    @classmethod
    def of(cls, base_url: str | None, *, env: str, api: str) -> Endpoint:
        """The base URL given, else the ``env`` variable's; ``api`` names the vendor's
        API ("Anthropic", "OpenAI") in sentences."""
        url = base_url or os.environ.get(env) or None
        who = f"the {api}-compatible server at {url}" if url else f"the {api} API"
        return cls(url, who)

    def key(self, key: str | None, missing: str) -> str:
        """The API key to send: ``key`` when there is one; a placeholder for a server at a
        base URL (a local server that checks no key still needs the header); else a
        :class:`ProviderAuthError` saying ``missing``."""
        if key:
            return key
        if not self.base_url:
            raise ProviderAuthError(missing)
        return "none"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_retries`` further attempts after the first; exponential backoff from
    ``base_delay`` seconds (with jitter) capped at ``max_delay``, unless the server said
    how long to wait (``retry-after``, honoured up to ``max_retry_after``)."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    @classmethod
    def resolve(cls, policy: RetryPolicy | None, max_retries: int | None) -> RetryPolicy:
        """A provider's policy: the one given (else the default), with ``max_retries``
        (the ``--max-retries`` option) taking precedence when set."""
        policy = policy or cls()
        if max_retries is None:
            return policy
        return replace(policy, max_retries=max_retries)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after:
            return retry_after
        backoff = min(self.base_delay * 2.0**attempt, self.max_delay)
        return float(backoff * (0.75 + 0.25 * random.random()))


@dataclass(slots=True)
class Attempt:
    """Per-attempt state: once text reached the caller, a retry would repeat it, so a
    failure after that point is final."""

    number: int = 0
    emitted: bool = False


@dataclass(frozen=True, slots=True)
class Failure:
    """How one exception maps to a ``ProviderError``: its class, its one-sentence message,
    the HTTP status (for ``ProviderStatusError`` kinds), and whether to try again."""

    kind: type[ProviderError]
    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None

    def error(self, retries: int = 0) -> ProviderError:
        message = self.message
        if retries:
            message += f" (after {retries} retr{'y' if retries == 1 else 'ies'})"
        if issubclass(self.kind, ProviderStatusError):
            return self.kind(message, self.status)
        return self.kind(message)


async def run_with_retries(
    call: Callable[[Attempt], Awaitable[T]],
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run ``call`` until it succeeds, a failure is not retryable, or retries run out.
    ``classify`` maps an exception to a :class:`Failure` (``None``: not ours, re-raise)."""
    attempt = Attempt()
    while True:
        try:
            return await call(attempt)
        except ProviderError:
            raise
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            last = attempt.number >= policy.max_retries
            if not failure.retryable or attempt.emitted or last:
                spent = attempt.number if failure.retryable else 0
                raise failure.error(spent) from exc
            await sleep(policy.delay(attempt.number, failure.retry_after))
            attempt = Attempt(number=attempt.number + 1)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asked for, in seconds (``retry-after-ms`` before ``retry-after``);
    ``None`` when it named none or none that parses."""
    if not headers:
        return None
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(key)
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue
    return None


def api_message(exc: Any) -> str:
    """The server's own sentence from an SDK error: ``{"error": {"message": ...}}`` (or a
    bare ``{"message": ...}``) in its body, else the SDK's message."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
    return str(getattr(exc, "message", "") or exc)


@dataclass(frozen=True, slots=True)
class StatusReply:
    """What an SDK's status error says: the HTTP status, the server's sentence, and the
    wait it asked for."""

    status: int
    detail: str
    retry_after: float | None

    @classmethod
    def of(cls, exc: Any) -> StatusReply:
        """Read an SDK's ``APIStatusError`` (both SDKs shape it alike)."""
        response = getattr(exc, "response", None)
        return cls(
            exc.status_code,
            api_message(exc),
            _retry_after(response.headers if response else None),
        )

    @property
    def said(self) -> str:
        return f"({self.status}: {self.detail})"


def status_failure(
    reply: StatusReply,
    *,
    who: str,
    model: str,
    key_env: str,
    too_long: bool,
    busy: str,
) -> Failure:
    """The failure for an HTTP status both providers read alike: a rejected key (check
    ``key_env``), a model the server does not serve, a request ``too_long`` for the model
    (the provider knows its servers' wording), a status worth retrying (the server ``busy``
    as the provider words it), or a plain refusal. Provider-only cases come first, in the
    provider."""
    status, said = reply.status, reply.said
    if status == 401:
        return Failure(
            ProviderAuthError, f"{who} rejected the API key {said}; check {key_env}", False, status
        )
    if status == 403:
        return Failure(
            ProviderAuthError, f"{who} refused this API key access to {model} {said}", False, status
        )
    if status == 404:
        return Failure(
            ModelUnavailableError,
            f"{who} does not serve the model {model!r} {said}; check --model (and --base-url)",
            False,
            status,
        )
    if too_long:
        return Failure(
            ContextOverflowError,
            f"{who} refused the request as too long for {model} {said}",
            False,
            status,
        )
    if status in RETRYABLE_STATUSES:
        return Failure(
            ProviderStatusError,
            f"{who} {busy} {said}; try again later",
            True,
            status,
            reply.retry_after,
        )
    return Failure(ProviderStatusError, f"{who} refused the request {said}", False, status)


def sdk_failure(sdk: Any, exc: BaseException, who: str, timeout: float) -> Failure | None:
    """The failure for what both SDKs raise alike, once the provider has read their status
    errors: the SDK's own timeout (no answer at all within ``timeout``), a server it
    cannot reach, and the errors below the SDK (:func:`transport_failure`)."""
    if isinstance(exc, sdk.APITimeoutError):
        return Failure(
            ProviderTimeoutError,
            f"{who} did not answer within {timeout:g} s; try again, or raise --timeout for a "
            "slow server",
            False,
        )
    if isinstance(exc, sdk.APIConnectionError):
        return Failure(ProviderConnectionError, f"cannot reach {who}: {exc.__cause__ or exc}", True)
    return transport_failure(exc, who, timeout)


def _transport_classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, other transport classes) of whichever HTTP client the SDKs use:
    current SDKs ship ``httpx2``, older ones ``httpx``."""
    timeouts: list[type[BaseException]] = []
    transport: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.TransportError)
    return tuple(timeouts), tuple(transport)


def transport_failure(exc: BaseException, who: str, timeout: float | None) -> Failure | None:
    """A failure for an error raised below the SDK's own exceptions (mid-stream reads):
    a timeout, a broken connection, or a body that does not parse."""
    timeouts, transport = _transport_classes()
    if isinstance(exc, timeouts):
        within = f" within {timeout:g} s" if timeout else ""
        return Failure(
            ProviderTimeoutError,
            f"{who} stopped answering{within}; try again, or raise --timeout for a slow server",
            retryable=False,
        )
    if isinstance(exc, transport):
        detail = str(exc) or type(exc).__name__
        connect = type(exc).__name__.startswith("Connect")
        if connect:
            return Failure(ProviderConnectionError, f"cannot reach {who}: {detail}", True)
        return Failure(
            MalformedResponseError, f"the response stream from {who} broke off ({detail})", True
        )
    if isinstance(exc, ValueError):  # json.JSONDecodeError and the SDKs' parse errors
        return Failure(
            MalformedResponseError,
            f"{who} sent a response that is not its wire format ({exc})",
            True,
        )
    return None


def estimate_request_tokens(payload: Any) -> int:
    """A conservative token count (three bytes a token) for a request whose server
    reported no usage: over-counting only hands off early, under-counting overflows."""
    size = len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
    return max(1, -(-size // 3))
