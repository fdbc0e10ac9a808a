"""The OpenAI Responses provider over real HTTP against the local Responses route, and
how ``openai:`` / ``openai-chat:`` choose the API."""

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
    ToolSpec,
)
from ctxrelay.runtime.providers import model_defaults, resolve
from ctxrelay.runtime.registry import resolve_model
from ctxrelay.testing import Fault, OpenAIServer, Step, ToolUse
from tests.runtime.providers._helpers import FAST, complete_once

pytest.importorskip("openai")
from ctxrelay.runtime.providers.openai import INVALID_ARGUMENTS_KEY
from ctxrelay.runtime.providers.openai_chat import OpenAIChatProvider
from ctxrelay.runtime.providers.openai_responses import OpenAIResponsesProvider

MODEL = "gpt-4.1"
ROUTE = "/v1/responses"
GREP = ToolSpec(
    "grep",
    "Search files.",
    {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
)
REQUEST = ModelRequest(
    system="You are a careful agent.",
    messages=[Message("user", [TextBlock("find main")])],
    tools=[GREP],
    max_tokens=256,
)


def provider(server: OpenAIServer, **kwargs: Any) -> OpenAIResponsesProvider:
    kwargs.setdefault("retry", FAST)
    return OpenAIResponsesProvider(MODEL, api_key="test", base_url=server.base_url, **kwargs)


def complete(p: Any, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
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
        cache_creation_input_tokens=300,
    )
    seen: list[str] = []
    with OpenAIServer([step]) as server:
        p = provider(server)
        assert isinstance(p, ModelProvider)
        assert p.name == f"openai:{MODEL}"
        response = complete(p, on_text=seen.append)
        (sent,) = server.requests
    assert sent.route == ROUTE
    assert "".join(seen) == response.text == "Searching."
    assert [dict(c.input) for c in response.tool_calls] == [
        {"pattern": "def main"},
        {"pattern": "if __name__"},
    ]
    assert all(c.id.startswith("call_") for c in response.tool_calls)
    assert response.stop_reason == "tool_use"
    assert response.model == MODEL
    usage = response.usage
    # Cached input tokens are reads, not fresh input; the context is the whole input
    # (cache writes are input on OpenAI's wire, priced as input).
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (1_000, 9_000)
    assert usage.cache_creation_input_tokens == 0
    assert usage.output_tokens == 20
    assert usage.context_tokens == 10_000
    body = sent.body
    assert body["stream"] is True
    assert body["store"] is False  # ctxrelay keeps the conversation itself
    assert body["max_output_tokens"] == 256
    assert body["instructions"] == "You are a careful agent."
    assert "previous_response_id" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "grep",
            "description": "Search files.",
            "parameters": dict(GREP.input_schema),
            "strict": False,
        }
    ]


def test_input_items_for_tool_turns() -> None:
    request = ModelRequest(
        system="",
        messages=[
            Message("user", [TextBlock("go")]),
            Message(
                "assistant",
                [TextBlock("Looking.")],
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
        assert complete(provider(server), request).text == "ok"
        (sent,) = server.requests
    items = sent.body["input"]
    assert items[0] == {"role": "user", "content": "go"}
    assert items[1] == {"role": "assistant", "content": "Looking."}
    assert [i.get("type") for i in items[2:6]] == [
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert json.loads(items[3]["arguments"]) == {"pattern": "y"}
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": "a.py:1: x"}
    assert items[5]["output"] == "ERROR: boom"
    assert items[6] == {"role": "user", "content": "and?"}
    assert "instructions" not in sent.body


def test_server_without_usage_gets_a_conservative_estimate() -> None:
    big = ModelRequest(system="", messages=[Message("user", [TextBlock("w" * 3_000)])])
    with OpenAIServer([Step(text="fine")], stream_usage=False) as server:
        response = complete(provider(server), big)
    assert response.usage.input_tokens >= 1_000  # at most three bytes a token
    assert response.usage.output_tokens >= 1


def test_max_output_tokens_is_the_max_tokens_stop() -> None:
    with OpenAIServer([Step(text="cut sh", stop_reason="max_tokens")]) as server:
        response = complete(provider(server))
    assert response.stop_reason == "max_tokens"
    assert response.text == "cut sh"


def test_arguments_that_are_not_json_reach_the_tool_as_an_input_error() -> None:
    step = Step(tool_calls=[ToolUse("grep", {"pattern": "a"})])
    with OpenAIServer([step]) as server:
        (call,) = complete(provider(server)).tool_calls
    assert dict(call.input) == {"pattern": "a"}
    from ctxrelay.runtime.providers.openai_responses import _arguments

    assert _arguments("{not json") == {INVALID_ARGUMENTS_KEY: "{not json"}
    assert _arguments("") == {}


def test_missing_key_without_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderAuthError, match=r"^no OpenAI API key: set OPENAI_API_KEY"):
        OpenAIResponsesProvider(MODEL)


def test_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer([Step(text="local")]) as server:
        p = OpenAIResponsesProvider(MODEL, base_url=server.base_url, retry=FAST)
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
        assert len(server.requests_to(ROUTE)) == 2


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


def test_error_event_inside_the_stream_is_retried_then_reported() -> None:
    broken = Step(text="z", fault=Fault(kind="stream_error", message="overloaded"))
    with OpenAIServer([broken, Step(text="recovered")]) as server:
        assert complete(provider(server)).text == "recovered"
    with (
        OpenAIServer([broken] * 3) as server,
        pytest.raises(ProviderStatusError, match=r"failed mid-stream \(overloaded\)"),
    ):
        complete(provider(server))


def test_stall_is_a_timeout() -> None:
    with OpenAIServer([Step(fault=Fault.stall_for(30))]) as server:
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0.3 s"):
            complete(provider(server, timeout=0.3))
        assert len(server.requests) == 1


def test_openai_means_responses_and_openai_chat_means_chat_completions() -> None:
    with OpenAIServer([Step(text="responses"), Step(text="chat")]) as server:
        responses = resolve(f"openai:{MODEL}", api_key="test", base_url=server.base_url)
        chat = resolve(f"openai-chat:{MODEL}", api_key="test", base_url=server.base_url)
        assert isinstance(responses, OpenAIResponsesProvider)
        assert isinstance(chat, OpenAIChatProvider)
        assert chat.name == f"openai-chat:{MODEL}"  # a session it starts resumes on chat
        assert complete(responses).text == "responses"
        assert complete(chat).text == "chat"
        assert [r.route for r in server.requests] == [ROUTE, "/v1/chat/completions"]


def test_both_names_know_openais_models() -> None:
    for kind in ("openai", "openai-chat"):
        info = resolve_model(kind, MODEL)
        assert info.known
        assert info.spec == f"{kind}:{MODEL}"
        assert info.prices is not None
        found = model_defaults(f"{kind}:{MODEL}")
        assert found is not None
        assert found.context_window == info.context_window
