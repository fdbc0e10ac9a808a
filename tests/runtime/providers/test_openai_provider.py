"""The OpenAI-compatible provider over real HTTP against the local Chat Completions server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.errors import (
    ContextOverflowError,
    MalformedResponseError,
    ModelUnavailableError,
    ProviderAuthError,
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
from ctxrelay.testing import Fault, OpenAIServer, Step, ToolUse
from tests.runtime.providers._helpers import FAST, against, complete_once, tool_request

pytest.importorskip("openai")
from ctxrelay.runtime.providers.openai import OpenAIProvider

MODEL = "gpt-4.1"
REQUEST = tool_request("grep", "Search files.", "pattern", ask="find main", max_tokens=256)
(GREP,) = REQUEST.tools


def provider(server: OpenAIServer, **kwargs: Any) -> OpenAIProvider:
    return against(OpenAIProvider, MODEL, server, **kwargs)


def complete(p: OpenAIProvider, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
    return complete_once(p, request, **kwargs)


def test_streams_text_tool_calls_and_cached_usage() -> None:
    step = Step(
        text="Searching.",
        tool_calls=[
            ToolUse("grep", {"pattern": "def main"}),
            ToolUse("grep", {"pattern": "if __name__"}),
        ],
        input_tokens=700,
        output_tokens=20,
        cache_read_input_tokens=9_000,
    )
    seen: list[str] = []
    with OpenAIServer([step]) as server:
        p = provider(server)
        assert isinstance(p, ModelProvider)
        assert p.name == f"openai:{MODEL}"
        response = complete(p, on_text=seen.append)
        (sent,) = server.requests
    assert "".join(seen) == response.text == "Searching."
    assert [dict(c.input) for c in response.tool_calls] == [
        {"pattern": "def main"},
        {"pattern": "if __name__"},
    ]
    assert all(c.id.startswith("call_") for c in response.tool_calls)
    assert response.stop_reason == "tool_use"
    usage = response.usage
    # Cached prompt tokens are reads, not fresh input; the context is the whole prompt.
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (700, 9_000)
    assert usage.cache_creation_input_tokens == 0
    assert usage.output_tokens == 20
    assert usage.context_tokens == 9_700
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["max_tokens"] == 256  # a base URL means a compatible server


def test_official_api_gets_max_completion_tokens() -> None:
    p = OpenAIProvider(MODEL, api_key="k")
    params = p.request_params(REQUEST)
    assert params["max_completion_tokens"] == 256
    assert "max_tokens" not in params


def test_wire_messages_for_tool_turns() -> None:
    request = ModelRequest(
        system="sys",
        messages=[
            Message("user", [TextBlock("go")]),
            Message(
                "assistant",
                [],
                [
                    ToolCall("call_1", "grep", {"pattern": "x"}),
                    ToolCall("call_2", "grep", {"pattern": "y"}),
                ],
            ),
            Message(
                "user",
                [
                    ToolResultBlock("call_1", "a.py:1: x"),
                    ToolResultBlock("call_2", "boom", is_error=True),
                    TextBlock("and?"),
                ],
            ),
        ],
        tools=[GREP],
    )
    with OpenAIServer([Step(text="ok")]) as server:
        complete(provider(server), request)
        (sent,) = server.requests
    msgs = sent.body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert msgs[2]["content"] is None
    assert json.loads(msgs[2]["tool_calls"][1]["function"]["arguments"]) == {"pattern": "y"}
    assert msgs[3] == {"role": "tool", "tool_call_id": "call_1", "content": "a.py:1: x"}
    assert msgs[4]["content"] == "ERROR: boom"
    assert msgs[5] == {"role": "user", "content": "and?"}
    assert sent.body["tools"][0]["function"]["parameters"]["required"] == ["pattern"]


def test_server_without_stream_usage_gets_a_conservative_estimate() -> None:
    big = ModelRequest(system="", messages=[Message("user", [TextBlock("w" * 3_000)])])
    with OpenAIServer([Step(text="fine")], stream_usage=False) as server:
        response = complete(provider(server), big)
    assert response.usage.input_tokens >= 1_000  # at most three bytes a token
    assert response.usage.output_tokens >= 1


def test_missing_key_without_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderAuthError, match=r"^no OpenAI API key: set OPENAI_API_KEY"):
        OpenAIProvider(MODEL)


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer([Step(text="local")]) as server:
        p = OpenAIProvider(MODEL, base_url=server.base_url, retry=FAST)
        assert complete(p).text == "local"


def test_bad_key() -> None:
    with OpenAIServer(api_key="right") as server:
        with pytest.raises(
            ProviderAuthError, match=r"rejected the API key .401: Incorrect API key"
        ):
            complete(provider(server))
        assert len(server.requests) == 1


def test_429_then_success() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(text="again")]
    with OpenAIServer(steps) as server:
        assert complete(provider(server)).text == "again"
        assert len(server.requests) == 2


def test_quota_exhausted_is_not_retried() -> None:
    steps = [
        Step(fault=Fault.http(429, "You exceeded your current quota", code="insufficient_quota"))
    ]
    with OpenAIServer(steps * 3) as server:
        with pytest.raises(ProviderStatusError, match="no quota left"):
            complete(provider(server))
        assert len(server.requests) == 1


def test_500_until_retries_run_out() -> None:
    with OpenAIServer([Step(fault=Fault.http(500))] * 3) as server:
        with pytest.raises(ProviderStatusError, match=r"failed .500: .*after 2 retries"):
            complete(provider(server))
        assert len(server.requests) == 3


def test_unknown_model() -> None:
    with (
        OpenAIServer(models=["gpt-4o"]) as server,
        pytest.raises(ModelUnavailableError, match=r"does not serve the model 'gpt-4.1'"),
    ):
        complete(provider(server))


def test_over_long_request() -> None:
    with (
        OpenAIServer(context_window=10) as server,
        pytest.raises(ContextOverflowError, match="maximum context length is 10 tokens"),
    ):
        complete(provider(server))


@pytest.mark.parametrize("fault", [Fault.truncated(), Fault.garbled()])
def test_broken_stream_is_retried_then_reported(fault: Fault) -> None:
    with OpenAIServer([Step(text="z" * 40, fault=fault), Step(text="recovered")]) as server:
        assert complete(provider(server)).text == "recovered"
    with (
        OpenAIServer([Step(text="z" * 40, fault=fault)] * 3) as server,
        pytest.raises(MalformedResponseError),
    ):
        complete(provider(server))


def test_error_inside_the_stream() -> None:
    with (
        OpenAIServer([Step(text="z", fault=Fault(kind="stream_error"))] * 3) as server,
        pytest.raises(ProviderStatusError, match="failed mid-stream"),
    ):
        complete(provider(server))


def test_stall_is_a_timeout() -> None:
    with OpenAIServer([Step(fault=Fault.stall_for(30))]) as server:
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0.3 s"):
            complete(provider(server, timeout=0.3))
        assert len(server.requests) == 1


def test_tool_calls_without_index_from_a_local_server() -> None:
    step = Step(tool_calls=[ToolUse("grep", {"pattern": "a"}), ToolUse("grep", {"pattern": "b"})])
    with OpenAIServer([step], tool_call_index=False) as server:
        response = complete(provider(server))
    assert [dict(c.input) for c in response.tool_calls] == [{"pattern": "a"}, {"pattern": "b"}]
    assert len({c.id for c in response.tool_calls}) == 2


def test_tool_arguments_that_are_not_json_reach_the_tool_as_an_input_error() -> None:
    from ctxrelay.runtime.providers.openai import INVALID_ARGUMENTS_KEY, _arguments

    assert _arguments('{"pattern": "a"}') == {"pattern": "a"}
    assert _arguments("") == {}
    assert _arguments("{not json") == {INVALID_ARGUMENTS_KEY: "{not json"}
    assert _arguments("[1, 2]") == {INVALID_ARGUMENTS_KEY: "[1, 2]"}
