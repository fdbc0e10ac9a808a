"""The Chat Completions provider over real HTTP against the local server: its own wire
(what both OpenAI providers share is tested in ``test_openai_shared``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.runtime.model import ModelRequest
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.runtime.providers._helpers import against, complete_once, tool_request, tool_turns

pytest.importorskip("openai")
from ctxrelay.runtime.providers.openai import OpenAIProvider

MODEL = "gpt-4.1"
REQUEST = tool_request("grep", "Search files.", "pattern", ask="find main", max_tokens=256)
(GREP,) = REQUEST.tools


def provider(server: OpenAIServer, **kwargs: Any) -> OpenAIProvider:
    return against(OpenAIProvider, MODEL, server, **kwargs)


def complete(p: OpenAIProvider, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
    return complete_once(p, request, **kwargs)


def test_compatible_server_gets_max_tokens_and_stream_usage() -> None:
    with OpenAIServer([Step(text="ok")]) as server:
        complete(provider(server))
        (sent,) = server.requests
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["max_tokens"] == 256  # a base URL means a compatible server


def test_official_api_gets_max_completion_tokens() -> None:
    p = OpenAIProvider(MODEL, api_key="k")
    params = p.request_params(REQUEST)
    assert params["max_completion_tokens"] == 256
    assert "max_tokens" not in params


def test_wire_messages_for_tool_turns() -> None:
    request = tool_turns(REQUEST, system="sys", said="")
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
