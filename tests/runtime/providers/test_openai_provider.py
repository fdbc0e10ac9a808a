"""The Chat Completions provider over real HTTP against the local server: its own wire
(what both OpenAI providers share is tested in ``test_openai_shared``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.runtime.model import (
    Message,
    ModelProvider,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultBlock,
)
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.runtime.providers._helpers import against, complete_once, tool_request

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


def test_tool_calls_without_index_from_a_local_server() -> None:
    step = Step(tool_calls=[ToolUse("grep", {"pattern": "a"}), ToolUse("grep", {"pattern": "b"})])
    with OpenAIServer([step], tool_call_index=False) as server:
        response = complete(provider(server))
    assert [dict(c.input) for c in response.tool_calls] == [{"pattern": "a"}, {"pattern": "b"}]
    assert len({c.id for c in response.tool_calls}) == 2
