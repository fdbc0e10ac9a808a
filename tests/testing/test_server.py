"""What both wire-format servers share (``LocalServer``): a non-streamed answer that
breaks as its step's fault says, read with a plain client to see the raw bytes."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from ctxrelay.testing import AnthropicServer, Fault, OpenAIServer, Step
from ctxrelay.testing._server import LocalServer

# Each server with a non-streamed request its route accepts.
SERVERS: dict[str, tuple[Callable[..., LocalServer], str, dict[str, Any]]] = {
    "anthropic": (
        AnthropicServer,
        "/v1/messages",
        {
            "model": "claude-opus-4-6",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
        },
    ),
    "openai": (
        OpenAIServer,
        "/v1/chat/completions",
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
    ),
}


def answer(wire: str, fault: Fault) -> tuple[int, bytes]:
    """(status, body) of one non-streamed request; a cut body raises ``IncompleteRead``."""
    make, route, body = SERVERS[wire]
    with make([Step(text="x" * 200, fault=fault)]) as server:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
        try:
            conn.request(
                "POST",
                route,
                body=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()


@pytest.mark.parametrize("wire", sorted(SERVERS))
def test_garbled_body_is_not_json_but_has_the_announced_length(wire: str) -> None:
    status, data = answer(wire, Fault.garbled())
    assert status == 200
    assert data.startswith(b"{this is not json")
    assert data.strip() == b"{this is not json"


@pytest.mark.parametrize("wire", sorted(SERVERS))
@pytest.mark.parametrize("fault", [Fault.truncated(), Fault.stall_for(0.05, mid_stream=True)])
def test_truncated_body_is_cut_halfway(wire: str, fault: Fault) -> None:
    with pytest.raises(http.client.IncompleteRead) as cut:
        answer(wire, fault)
    assert cut.value.partial
    # Half the announced body arrived, the other half never will.
    assert cut.value.expected is not None
    assert 0 <= cut.value.expected - len(cut.value.partial) <= 1


@pytest.mark.parametrize("wire", sorted(SERVERS))
def test_stream_error_becomes_the_error_status(wire: str) -> None:
    status, data = answer(wire, Fault(kind="stream_error", status=529, message="busy now"))
    assert status == 529
    assert b"busy now" in data


def refusal(wire: str, body: Any, **options: Any) -> tuple[int, Any]:
    """(status, error object) for a request the server refuses before its script."""
    make, route, _ = SERVERS[wire]
    with make([Step(text="unused")], **options) as server:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
        try:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            conn.request("POST", route, body=data, headers={"content-type": "application/json"})
            response = conn.getresponse()
            status, answer = response.status, json.loads(response.read())
        finally:
            conn.close()
        assert server.script.served == 0
    return status, answer["error"]


HI = [{"role": "user", "content": "hi"}]


def test_anthropic_refusals_in_the_apis_words() -> None:
    def message(body: Any, **options: Any) -> tuple[int, str]:
        status, error = refusal("anthropic", body, **options)
        assert error["type"] == ("not_found_error" if status == 404 else "invalid_request_error")
        return status, error["message"]

    assert message(b"{not json") == (400, "The request body is not valid JSON.")
    assert message({"messages": HI, "max_tokens": 5}) == (400, "model: Field required")
    assert message({"model": "m", "max_tokens": 5}) == (400, "messages: Field required")
    assert message({"model": "m", "messages": HI}) == (400, "max_tokens: Field required")
    ok = {"model": "m", "messages": HI, "max_tokens": 5}
    assert message(ok, models=["other"]) == (404, "model: m")
    status, text = message(ok, context_window=1)
    assert status == 400
    assert text.startswith("prompt is too long: ")
    assert text.endswith(" tokens > 1 maximum")


def test_openai_refusals_in_the_apis_words() -> None:
    assert refusal("openai", b"{not json")[1]["message"] == (
        "We could not parse the JSON body of your request."
    )
    status, error = refusal("openai", {"messages": HI})
    assert (status, error["message"], error["code"]) == (
        400,
        "you must provide a model parameter",
        None,
    )
    assert refusal("openai", {"model": "m"})[1]["message"] == (
        "Missing required parameter: 'messages'."
    )
    status, error = refusal("openai", {"model": "m", "messages": HI}, models=["other"])
    assert (status, error["code"]) == (404, "model_not_found")
    assert error["message"] == "The model `m` does not exist or you do not have access to it."
    status, error = refusal("openai", {"model": "m", "messages": HI}, context_window=1)
    assert (status, error["code"]) == (400, "context_length_exceeded")
    assert error["message"].startswith("This model's maximum context length is 1 tokens.")
