"""The Anthropic provider over real HTTP against the local Messages API server."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from ctxrelay.errors import (
    ContextOverflowError,
    MalformedResponseError,
    ModelUnavailableError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from ctxrelay.runtime.model import (
    Message,
    ModelProvider,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultBlock,
)
from ctxrelay.testing import AnthropicServer, Fault, Step, ToolUse
from tests.runtime.providers._helpers import FAST, against, complete_once, tool_request

pytest.importorskip("anthropic")
from ctxrelay.runtime.providers.anthropic import AnthropicProvider

MODEL = "claude-opus-4-6"
REQUEST = tool_request(
    "read_file", "Read a file of the workspace.", "path", ask="look at a.txt", max_tokens=512
)
(READ,) = REQUEST.tools


def provider(server: AnthropicServer, **kwargs: Any) -> AnthropicProvider:
    return against(AnthropicProvider, MODEL, server, **kwargs)


def complete(p: AnthropicProvider, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
    return complete_once(p, request, **kwargs)


def test_streams_text_tool_calls_and_cache_usage() -> None:
    step = Step(
        text="I will read it.",
        tool_calls=[ToolUse("read_file", {"path": "a.txt"})],
        input_tokens=40,
        output_tokens=30,
        cache_creation_input_tokens=2_000,
        cache_read_input_tokens=50_000,
    )
    seen: list[str] = []
    with AnthropicServer([step]) as server:
        p = provider(server)
        assert isinstance(p, ModelProvider)
        assert p.name == f"anthropic:{MODEL}"
        response = complete(p, on_text=seen.append)
    assert "".join(seen) == "I will read it."
    assert response.text == "I will read it."
    (call,) = response.tool_calls
    assert (call.name, dict(call.input)) == ("read_file", {"path": "a.txt"})
    assert call.id.startswith("toolu_")
    assert response.stop_reason == "tool_use"
    assert response.model == MODEL
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens) == (40, 30)
    assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (2_000, 50_000)
    assert usage.context_tokens == 52_040


def conversation() -> ModelRequest:
    return ModelRequest(
        system="sys",
        messages=[
            Message("user", [TextBlock("lead-in: window 2, notes ...")]),
            Message(
                "assistant",
                [TextBlock("reading")],
                [ToolCall("toolu_1", "read_file", {"path": "a"})],
            ),
            Message("user", [ToolResultBlock("toolu_1", "contents", is_error=False)]),
            Message("assistant", [], [ToolCall("toolu_2", "read_file", {"path": "b"})]),
            Message(
                "user",
                [ToolResultBlock("toolu_2", "no such file", is_error=True), TextBlock("hurry")],
            ),
        ],
        tools=[READ],
        metadata={"cache_breakpoint": 0},
    )


def test_wire_request_has_cache_breakpoints_and_tool_blocks() -> None:
    with AnthropicServer([Step(text="ok")]) as server:
        complete(provider(server), conversation())
        (sent,) = server.requests_to("/v1/messages")
    body = sent.body
    assert body["model"] == MODEL
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0]["input_schema"]["required"] == ["path"]
    msgs = body["messages"]
    # The window's prefix (the lead-in) and the conversation's tail are cached.
    marked = [
        (i, j)
        for i, m in enumerate(msgs)
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    assert marked == [(0, 0), (4, 1)]
    assert msgs[1]["content"] == [
        {"type": "text", "text": "reading"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
    ]
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents"}
    ]
    assert msgs[3]["content"][0]["type"] == "tool_use"  # no empty text block before it
    assert msgs[4]["content"][0]["is_error"] is True
    breakpoints = sum(
        "cache_control" in b for b in body["system"] + [b for m in msgs for b in m["content"]]
    )
    assert breakpoints <= 4  # the API's limit


def test_cache_can_be_turned_off() -> None:
    with AnthropicServer([Step(text="ok")]) as server:
        complete(provider(server, cache=False), conversation())
        (sent,) = server.requests_to("/v1/messages")
    assert "cache_control" not in str(sent.body)


def test_missing_key_is_one_clear_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ProviderAuthError, match=r"^no Anthropic API key: set ANTHROPIC_API_KEY"):
        AnthropicProvider(MODEL)


def test_bad_key_is_not_retried() -> None:
    with AnthropicServer([Step(text="never")], api_key="right") as server:
        with pytest.raises(
            ProviderAuthError, match=r"rejected the API key .401: invalid x-api-key."
        ) as info:
            complete(provider(server))
        assert len(server.requests) == 1
    assert info.value.status == 401


def test_429_then_success() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(text="second try")]
    with AnthropicServer(steps) as server:
        response = complete(provider(server))
        assert len(server.requests_to("/v1/messages")) == 2
    assert response.text == "second try"


def test_529_overloaded_twice_then_success() -> None:
    steps = [Step(fault=Fault.http(529)), Step(fault=Fault.http(529)), Step(text="third")]
    with AnthropicServer(steps) as server:
        assert complete(provider(server)).text == "third"


def test_500_until_retries_run_out() -> None:
    steps = [Step(fault=Fault.http(500))] * 3 + [Step(text="too late")]
    with AnthropicServer(steps) as server:
        with pytest.raises(
            ProviderStatusError, match=r"failed .500: Internal server error.*after 2 retries"
        ) as info:
            complete(provider(server))
        assert len(server.requests) == 3
    assert info.value.status == 500


def test_unknown_model() -> None:
    with AnthropicServer(models=["claude-haiku-4-5"]) as server:
        with pytest.raises(ModelUnavailableError, match=f"does not serve the model '{MODEL}'"):
            complete(provider(server))
        assert len(server.requests) == 1


def test_over_long_request_is_a_context_overflow() -> None:
    with AnthropicServer(context_window=50) as server:
        with pytest.raises(
            ContextOverflowError, match=r"too long for claude-opus-4-6 .400: prompt is too long"
        ):
            complete(provider(server))
        assert len(server.requests) == 1


def test_truncated_stream_is_retried() -> None:
    steps = [Step(text="x" * 50, fault=Fault.truncated()), Step(text="whole")]
    with AnthropicServer(steps) as server:
        assert complete(provider(server)).text == "whole"


def test_truncated_stream_until_retries_run_out() -> None:
    with (
        AnthropicServer([Step(text="x" * 50, fault=Fault.truncated())] * 3) as server,
        pytest.raises(MalformedResponseError, match="broke off"),
    ):
        complete(provider(server))


def test_garbled_stream() -> None:
    with (
        AnthropicServer([Step(text="x" * 50, fault=Fault.garbled())] * 3) as server,
        pytest.raises(MalformedResponseError, match="not its wire format"),
    ):
        complete(provider(server))


def test_in_stream_overloaded_error_is_retried() -> None:
    steps = [Step(text="x" * 50, fault=Fault(kind="stream_error", status=529)), Step(text="fine")]
    with AnthropicServer(steps) as server:
        assert complete(provider(server)).text == "fine"


def test_stall_is_a_timeout() -> None:
    with AnthropicServer([Step(fault=Fault.stall_for(30))]) as server:
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0.3 s"):
            complete(provider(server, timeout=0.3))
        assert len(server.requests) == 1  # a stalled server is not hammered with retries


def test_mid_stream_stall_is_a_timeout() -> None:
    with (
        AnthropicServer(
            [Step(text="x" * 50, fault=Fault.stall_for(30, mid_stream=True))]
        ) as server,
        pytest.raises(ProviderTimeoutError),
    ):
        complete(provider(server, timeout=0.3))


def test_nothing_listening_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = AnthropicProvider(MODEL, api_key="k", base_url=f"http://127.0.0.1:{port}", retry=FAST)
    with pytest.raises(
        ProviderConnectionError,
        match=f"cannot reach the Anthropic-compatible server at http://127.0.0.1:{port}",
    ):
        complete(p)
