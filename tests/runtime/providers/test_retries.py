"""The retry loop the real providers share: what is retried, how long it waits, and
that a failure after text reached the caller is final."""

from __future__ import annotations

import asyncio

import pytest

from ctxrelay.errors import MalformedResponseError, ProviderStatusError
from ctxrelay.runtime.providers._common import (
    Attempt,
    Failure,
    RetryPolicy,
    estimate_request_tokens,
    run_with_retries,
)


class Flaky(Exception):
    pass


def classify(exc: BaseException) -> Failure | None:
    if isinstance(exc, Flaky):
        return Failure(ProviderStatusError, "the server failed (503)", True, 503, 0.0)
    if isinstance(exc, ValueError):
        return Failure(MalformedResponseError, "garbled", True)
    return None


def run(call: object, policy: RetryPolicy, waits: list[float]) -> object:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    return asyncio.run(run_with_retries(call, classify, policy, sleep=sleep))  # type: ignore[arg-type]


def test_retries_until_success_obeying_retry_after() -> None:
    seen: list[int] = []

    async def call(attempt: Attempt) -> str:
        seen.append(attempt.number)
        if attempt.number < 2:
            raise Flaky
        return "ok"

    waits: list[float] = []
    assert run(call, RetryPolicy(max_retries=3), waits) == "ok"
    assert seen == [0, 1, 2]
    assert waits == [0.0, 0.0]  # the server said retry-after: 0


def test_gives_up_after_the_budget_and_says_so() -> None:
    async def call(attempt: Attempt) -> str:
        raise Flaky

    waits: list[float] = []
    with pytest.raises(
        ProviderStatusError, match=r"^the server failed \(503\) \(after 2 retries\)$"
    ) as info:
        run(call, RetryPolicy(max_retries=2), waits)
    assert info.value.status == 503
    assert isinstance(info.value.__cause__, Flaky)
    assert len(waits) == 2


def test_no_retry_once_text_reached_the_caller() -> None:
    calls = 0

    async def call(attempt: Attempt) -> str:
        nonlocal calls
        calls += 1
        attempt.emitted = True
        raise ValueError("bad json")

    with pytest.raises(MalformedResponseError, match=r"^garbled$"):
        run(call, RetryPolicy(max_retries=5), [])
    assert calls == 1


def test_foreign_exceptions_pass_through() -> None:
    async def call(attempt: Attempt) -> str:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        run(call, RetryPolicy(), [])


def test_backoff_doubles_with_jitter_and_caps() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0, max_retry_after=60.0)
    for attempt, nominal in [(0, 1.0), (1, 2.0), (3, 8.0), (10, 30.0)]:
        delay = policy.delay(attempt, None)
        assert 0.75 * nominal <= delay <= nominal
    assert policy.delay(0, 12.5) == 12.5
    assert policy.delay(0, 3600.0) <= 1.0  # an absurd retry-after falls back to backoff


def test_estimate_is_conservative() -> None:
    assert estimate_request_tokens("x" * 3_000) >= 1_000
    assert estimate_request_tokens("") >= 1


def test_max_retries_overrides_the_given_policy_only() -> None:
    given = RetryPolicy(max_retries=7, base_delay=0.5)
    assert RetryPolicy.resolve(None, None) == RetryPolicy()
    assert RetryPolicy.resolve(given, None) is given
    assert RetryPolicy.resolve(given, 1) == RetryPolicy(max_retries=1, base_delay=0.5)
    assert RetryPolicy.resolve(None, 0) == RetryPolicy(max_retries=0)
