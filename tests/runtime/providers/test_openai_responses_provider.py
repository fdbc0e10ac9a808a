"""The OpenAI Responses provider over real HTTP against the local Responses route: its own
wire, and how ``openai:`` / ``openai-chat:`` choose the API (what both OpenAI providers
share is tested in ``test_openai_shared``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.runtime.model import ModelRequest
from ctxrelay.runtime.providers import model_defaults, resolve
from ctxrelay.runtime.registry import resolve_model
from ctxrelay.testing import OpenAIServer, Step
from tests.runtime.providers._helpers import against, complete_once, tool_request, tool_turns

pytest.importorskip("openai")
from ctxrelay.runtime.providers.openai_chat import OpenAIChatProvider
from ctxrelay.runtime.providers.openai_responses import OpenAIResponsesProvider

MODEL = "gpt-4.1"
ROUTE = "/v1/responses"
REQUEST = tool_request("grep", "Search files.", "pattern", ask="find main", max_tokens=256)
(GREP,) = REQUEST.tools


def provider(server: OpenAIServer, **kwargs: Any) -> OpenAIResponsesProvider:
    return against(OpenAIResponsesProvider, MODEL, server, **kwargs)


def complete(p: Any, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
    return complete_once(p, request, **kwargs)


def test_request_body_keeps_nothing_on_the_server() -> None:
    with OpenAIServer([Step(text="ok")]) as server:
        complete(provider(server))
        (sent,) = server.requests
    assert sent.route == ROUTE
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
    request = tool_turns(REQUEST, system="", said="Looking.")
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


def test_max_output_tokens_is_the_max_tokens_stop() -> None:
    with OpenAIServer([Step(text="cut sh", stop_reason="max_tokens")]) as server:
        response = complete(provider(server))
    assert response.stop_reason == "max_tokens"
    assert response.text == "cut sh"


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
