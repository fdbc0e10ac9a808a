"""The local server's Gemini API routes over real HTTP: ``streamGenerateContent`` as
server-sent events, ``generateContent`` as JSON, function calls, ``usageMetadata`` with
cached and thinking tokens, the API's refusals in Google's error shape, and the utility
script apart. The Gemini CLI itself drives it in ``tests/e2e/test_gemini_cli.py``."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from ctxrelay.testing import Fault, GeminiServer, Step, ToolUse, route_by_content
from tests.testing._http import post

MODEL = "gemini-2.5-pro"
STREAM = f"/v1beta/models/{MODEL}:streamGenerateContent"
PLAIN = f"/v1beta/models/{MODEL}:generateContent"
BODY: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "read a.txt"}]}],
    "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
    "tools": [{"functionDeclarations": [{"name": "read_file"}]}],
}


def _events(text: str) -> list[dict[str, Any]]:
    chunks = [c for c in text.split("\r\n\r\n") if c.strip()]
    assert all(c.startswith("data: ") for c in chunks), text
    return [json.loads(c.removeprefix("data: ")) for c in chunks]


def test_a_streamed_turn_carries_text_calls_and_usage() -> None:
    step = Step(
        text="Let me look at it. " * 8,
        tool_calls=[ToolUse("read_file", {"path": "a.txt"})],
        input_tokens=1_000,
        cache_read_input_tokens=5_000,
        output_tokens=30,
        reasoning_tokens=42,
    )
    with GeminiServer([step]) as server:
        raw = post(server.url + STREAM, BODY, {"x-goog-api-key": "x"})
    assert raw.status == 200
    assert raw.headers["content-type"].startswith("text/event-stream")
    events = _events(raw.text)
    assert len(events) > 1  # the text comes in pieces
    text = "".join(
        p.get("text", "") for e in events for p in e["candidates"][0]["content"]["parts"]
    )
    assert text == step.text
    last = events[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}} in last["candidates"][
        0
    ]["content"]["parts"]
    assert last["usageMetadata"] == {
        "promptTokenCount": 6_000,
        "cachedContentTokenCount": 5_000,
        "candidatesTokenCount": 30,
        "thoughtsTokenCount": 42,
        "totalTokenCount": 6_072,
    }
    assert events[0]["usageMetadata"] == {"promptTokenCount": 6_000}


def test_generate_content_answers_json_from_the_utility_script() -> None:
    with GeminiServer([Step(text="main")], utility=[Step(text="a title")]) as server:
        plain = post(server.url + PLAIN, {"contents": BODY["contents"]})
        stream = post(server.url + STREAM, BODY)
        assert [r.route for r in server.model_requests(stream=False)] == [PLAIN]
    assert plain.json()["candidates"][0]["content"]["parts"] == [{"text": "a title"}]
    assert "main" in stream.text


def test_an_unanswered_function_call_is_refused_as_the_api_does() -> None:
    contents = [
        *BODY["contents"],
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {}}}]},
        {"role": "user", "parts": [{"text": "go on"}]},
    ]
    with GeminiServer([Step(text="never")]) as server:
        raw = post(server.url + STREAM, {"contents": contents})
        assert server.script.served == 0
    assert raw.status == 400
    error = raw.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert "function response parts" in error["message"]


def test_keys_models_and_unknown_routes_are_refused_in_googles_shape() -> None:
    with GeminiServer([Step(text="x")], api_key="k", models={MODEL}) as server:
        assert post(server.url + STREAM, BODY).status == 400  # no key
        other = post(
            server.url + STREAM.replace(MODEL, "gemini-1.0"), BODY, {"x-goog-api-key": "k"}
        )
        assert other.status == 404
        assert other.json()["error"]["status"] == "NOT_FOUND"
        assert post(server.url + "/v1beta/files", {}).status == 404
        assert [r.route for r in server.unknown] == ["/v1beta/files"]
        assert post(server.url + STREAM, BODY, {"x-goog-api-key": "k"}).status == 200


def test_a_fault_is_an_error_status_or_a_broken_stream() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=2)), Step(text="x", fault=Fault.truncated())]
    with GeminiServer(steps) as server:
        limited = post(server.url + STREAM, BODY)
        assert limited.status == 429
        assert limited.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
        assert limited.headers["retry-after"] == "2"
        with pytest.raises(http.client.IncompleteRead):
            post(server.url + STREAM, BODY)


def test_routing_by_content_sees_the_first_content() -> None:
    router = route_by_content({"subagent task": [Step(text="sub")]}, [Step(text="main")])
    with GeminiServer(router) as server:
        sub = {"contents": [{"role": "user", "parts": [{"text": "subagent task: look"}]}]}
        assert "sub" in post(server.url + STREAM, sub).text
        assert "main" in post(server.url + STREAM, BODY).text
