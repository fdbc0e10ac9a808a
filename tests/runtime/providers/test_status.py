"""How both providers read an SDK status error (``StatusReply``) and map it to a failure
(``status_failure``): the branches the server-backed provider tests do not reach."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ctxrelay.errors import (
    ContextOverflowError,
    ModelUnavailableError,
    ProviderAuthError,
    ProviderError,
    ProviderStatusError,
)
from ctxrelay.runtime.providers._common import StatusReply, status_failure

WHO = "the test server"


def sdk_error(status: int, body: object, headers: dict[str, str] | None = None) -> object:
    """Shaped like both SDKs' ``APIStatusError``: ``status_code``, ``body``, ``message``,
    ``response.headers``."""
    response = SimpleNamespace(headers=headers or {})
    return SimpleNamespace(status_code=status, body=body, message="sdk says", response=response)


def fail(reply: StatusReply, *, too_long: bool = False) -> tuple[type[ProviderError], str, bool]:
    failure = status_failure(
        reply, who=WHO, model="m-1", key_env="M_KEY", too_long=too_long, busy="is busy"
    )
    return failure.kind, failure.message, failure.retryable


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"error": {"message": "nested"}}, "nested"),
        ({"message": "bare"}, "bare"),
        ({"error": "not a mapping"}, "sdk says"),
        (None, "sdk says"),
    ],
)
def test_reply_reads_the_servers_sentence(body: object, detail: str) -> None:
    assert StatusReply.of(sdk_error(400, body)).detail == detail


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, None),
        ({}, None),
    ],
)
def test_reply_reads_the_wait(headers: dict[str, str], wait: float | None) -> None:
    assert StatusReply.of(sdk_error(429, None, headers)).retry_after == wait


def test_each_status_maps_to_its_failure() -> None:
    def reply(status: int) -> StatusReply:
        return StatusReply(status, "why", 1.5)

    assert fail(reply(401)) == (
        ProviderAuthError,
        "the test server rejected the API key (401: why); check M_KEY",
        False,
    )
    assert fail(reply(403)) == (
        ProviderAuthError,
        "the test server refused this API key access to m-1 (403: why)",
        False,
    )
    assert fail(reply(404)) == (
        ModelUnavailableError,
        "the test server does not serve the model 'm-1' (404: why); check --model (and --base-url)",
        False,
    )
    assert fail(reply(400), too_long=True) == (
        ContextOverflowError,
        "the test server refused the request as too long for m-1 (400: why)",
        False,
    )
    assert fail(reply(503)) == (
        ProviderStatusError,
        "the test server is busy (503: why); try again later",
        True,
    )
    assert fail(reply(418)) == (
        ProviderStatusError,
        "the test server refused the request (418: why)",
        False,
    )


def test_a_retryable_status_keeps_the_wait_and_status() -> None:
    failure = status_failure(
        StatusReply(429, "slow down", 1.5),
        who=WHO,
        model="m-1",
        key_env="M_KEY",
        too_long=False,
        busy="is busy",
    )
    assert (failure.status, failure.retry_after) == (429, 1.5)
    error = failure.error(2)
    assert isinstance(error, ProviderStatusError)
    assert error.status == 429
    assert str(error).endswith("(after 2 retries)")
