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
SERVERS: dict[str, tuple[Callable[[list[Step]], LocalServer], str, dict[str, Any]]] = {
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
    assert 0 <= cut.value.expected - len(cut.value.partial) <= 1


@pytest.mark.parametrize("wire", sorted(SERVERS))
def test_stream_error_becomes_the_error_status(wire: str) -> None:
    status, data = answer(wire, Fault(kind="stream_error", status=529, message="busy now"))
    assert status == 529
    assert b"busy now" in data
