"""What the real providers share: the retry loop with backoff, the transport errors of
the SDKs' HTTP client, and the rough size estimate used when a server reports no usage."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxrelay.errors import (
    MalformedResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderStatusError,
    ProviderTimeoutError,
)

__all__ = [
    "Attempt",
    "Failure",
    "RetryPolicy",
    "estimate_request_tokens",
    "run_with_retries",
    "transport_failure",
]

T = TypeVar("T")

# HTTP statuses worth another try: timeouts, conflicts, rate limits, overload, server errors.
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``max_retries`` further attempts after the first; exponential backoff from
    ``base_delay`` seconds (with jitter) capped at ``max_delay``, unless the server said
    how long to wait (``retry-after``, honoured up to ``max_retry_after``)."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 60.0

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


def _transport_classes() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, other transport classes) of whichever HTTP client the SDKs use:
    current SDKs ship ``httpx2``, older ones ``httpx``."""
    timeouts: list[type[BaseException]] = []
    transport: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
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
