"""What both wire-format servers share (``LocalServer``): a non-streamed answer that
breaks as its step's fault says, read with a plain client to see the raw bytes; a held
request."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from ctxrelay.testing import AnthropicServer, Fault, Hold, OpenAIServer, Step
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


# -- a failure inside the server fails the test at once ------------------------------------


class RouteBroke(AssertionError):
    """What a test's router raises when a request is not what the test expected."""


def _broken_route(calls: list[int]) -> Callable[[Any], Step]:
    def route(body: Any) -> Step:
        calls.append(1)
        raise RouteBroke("the router did not expect this request")

    return route


def test_a_route_that_raises_is_answered_400_and_the_sdk_does_not_retry() -> None:
    import anthropic

    calls: list[int] = []
    server = AnthropicServer(_broken_route(calls)).start()
    client = anthropic.Anthropic(base_url=server.base_url, api_key="k", max_retries=5)
    try:
        with pytest.raises(anthropic.BadRequestError) as answered:
            client.messages.create(model="claude-opus-4-6", max_tokens=8, messages=HI)  # type: ignore[arg-type]
        assert "RouteBroke: the router did not expect this request" in str(answered.value)
        assert len(server.requests_to("/v1/messages")) == 1  # no retry storm
        assert isinstance(server.failure, RouteBroke)
        # The next request is refused at once, without running the router again.
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model="claude-opus-4-6", max_tokens=8, messages=HI)  # type: ignore[arg-type]
        assert calls == [1]
    finally:
        client.close()
        with pytest.raises(RouteBroke):
            server.stop()  # and the test fails with the router's own exception
    server.stop()  # raised once: stopping again is quiet


def test_leaving_the_with_block_raises_the_servers_failure() -> None:
    import openai

    calls: list[int] = []
    seen: list[int] = []

    def session() -> None:
        with OpenAIServer(_broken_route(calls)) as server:
            client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=5)
            try:
                client.chat.completions.create(model="gpt-4.1", messages=HI)  # type: ignore[arg-type]
            except openai.BadRequestError:
                seen.append(len(server.requests))
            finally:
                client.close()

    with pytest.raises(RouteBroke):
        session()
    assert seen == [1]  # answered 400 at once: one request, no retries
    assert calls == [1]


def test_a_server_without_failures_stops_quietly() -> None:
    with AnthropicServer([Step(text="ok")]) as server:
        assert server.failure is None


# ---- a held request ------------------------------------------------------------------


def _send(wire: str, server: LocalServer) -> socket.socket:
    """Send ``wire``'s request on a raw socket, leaving the answer unread."""
    _, route, body = SERVERS[wire]
    data = json.dumps(body).encode()
    head = (
        f"POST {route} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(data)}\r\n\r\n"
    )
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(head.encode() + data)
    return sock


@pytest.mark.parametrize("wire", sorted(SERVERS))
def test_a_held_request_is_answered_once_released(wire: str) -> None:
    make, _, body = SERVERS[wire]
    with make([Step(text="first"), Step(text="second")]) as server:
        hold = server.hold()
        answers: list[tuple[int, bytes]] = []
        client = threading.Thread(target=lambda: answers.append(_post(wire, server)))
        client.start()
        try:
            assert hold.arrived.wait(10)
            assert hold.body == body
            # In, recorded and held: its step is not taken until the release.
            assert len(server.requests) == 1
            assert server.script.served == 0
            assert answers == []
        finally:
            hold.release()
            client.join(10)
        (answer,) = answers
        assert answer[0] == 200
        assert b"first" in answer[1]
        assert not hold.hung_up.is_set()
        # Only the held request was held.
        assert b"second" in _post(wire, server)[1]


@pytest.mark.parametrize("wire", sorted(SERVERS))
def test_a_held_request_whose_client_hangs_up_takes_no_step(wire: str) -> None:
    make, _, _ = SERVERS[wire]
    with make([Step(text="first")]) as server:
        hold: Hold = server.hold()
        sock = _send(wire, server)
        try:
            assert hold.arrived.wait(10)
        finally:
            sock.close()  # as a killed client's socket is closed
        assert hold.hung_up.wait(10)
        assert server.script.served == 0
        # The script's first step is the next request's.
        status, data = _post(wire, server)
        assert status == 200
        assert b"first" in data
        assert len(server.requests) == 2


def _post(wire: str, server: LocalServer) -> tuple[int, bytes]:
    _, route, body = SERVERS[wire]
    parts = urlsplit(server.url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    try:
        data = json.dumps(body).encode()
        conn.request("POST", route, body=data, headers={"content-type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()
