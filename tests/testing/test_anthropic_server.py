"""The local Anthropic server, driven by the official SDK over real HTTP."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.testing import DONE_TEXT, AnthropicServer, Fault, Step, ToolUse, load_steps
from tests.conftest import corpus_path
from tests.testing._http import get, post

anthropic = pytest.importorskip("anthropic")

MODEL = "claude-opus-4-6"
MESSAGES = [{"role": "user", "content": "hi"}]


_CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    # An SDK client left open keeps its pooled connection until the garbage collector
    # finds it, and the ResourceWarning then fails whichever later test is running.
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def client(server: AnthropicServer, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("api_key", "test")
    made = anthropic.Anthropic(base_url=server.base_url, **kwargs)
    _CLIENTS.append(made)
    return made


def sse_events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


TOOL_STEP = Step(
    text="Reading the file now.",
    tool_calls=[ToolUse("read_file", {"path": "src/a very long name/file.py", "n": [1, 2]})],
    input_tokens=12,
    output_tokens=40,
    cache_creation_input_tokens=1_500,
    cache_read_input_tokens=20_000,
)


def test_stream_carries_text_tool_use_and_cache_usage() -> None:
    with AnthropicServer([TOOL_STEP]) as server:
        seen: list[str] = []
        with client(server).messages.stream(model=MODEL, max_tokens=64, messages=MESSAGES) as s:
            seen.extend(s.text_stream)
            message = s.get_final_message()
    assert "".join(seen) == "Reading the file now."
    assert len(seen) > 1  # streamed in several deltas
    assert message.stop_reason == "tool_use"
    assert message.model == MODEL
    text, tool = message.content
    assert text.text == "Reading the file now."
    assert tool.type == "tool_use"
    assert tool.name == "read_file"
    assert tool.input == {"path": "src/a very long name/file.py", "n": [1, 2]}
    assert tool.id.startswith("toolu_")
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 40)
    assert usage.cache_creation_input_tokens == 1_500
    assert usage.cache_read_input_tokens == 20_000


def test_raw_event_sequence_matches_the_api() -> None:
    with AnthropicServer([TOOL_STEP]) as server:
        response = post(
            server.base_url + "/v1/messages",
            {"model": MODEL, "max_tokens": 64, "messages": MESSAGES, "stream": True},
            headers={"x-api-key": "test", "anthropic-version": "2023-06-01"},
        )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["transfer-encoding"] == "chunked"
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["content"] == []
    assert start["stop_reason"] is None
    assert start["usage"]["cache_read_input_tokens"] == 20_000
    assert start["usage"]["cache_creation_input_tokens"] == 1_500
    starts = [d for n, d in events if n == "content_block_start"]
    assert [b["content_block"]["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["content_block"]["input"] == {}
    json_deltas = [
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
    ]
    assert json_deltas[0] == ""
    assert json.loads("".join(json_deltas)) == {"path": "src/a very long name/file.py", "n": [1, 2]}
    assert names.count("content_block_stop") == 2
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["output_tokens"] == 40


def test_non_streaming_json_form() -> None:
    with AnthropicServer([TOOL_STEP]) as server:
        message = client(server).messages.create(model=MODEL, max_tokens=64, messages=MESSAGES)
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.usage.cache_read_input_tokens == 20_000
    assert message.stop_reason == "tool_use"


def test_unset_usage_is_estimated_from_the_request() -> None:
    big = [{"role": "user", "content": "x" * 4_000}]
    with AnthropicServer([Step(text="ok", cache_read_input_tokens=100)]) as server:
        message = client(server).messages.create(model=MODEL, max_tokens=8, messages=big)
    # ~4 bytes a token for the prompt, minus what the step says was cached.
    assert 900 <= message.usage.input_tokens <= 1_100
    assert message.usage.cache_read_input_tokens == 100
    assert message.usage.output_tokens >= 1


def test_count_tokens_and_models() -> None:
    with AnthropicServer(models=[MODEL, "claude-haiku-4-5"]) as server:
        c = client(server)
        counted = c.messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "y" * 400}]
        )
        models = [m.id for m in c.models.list()]
        assert server.requests_to("/v1/messages/count_tokens")
    assert 100 <= counted.input_tokens <= 130
    assert sorted(models) == sorted([MODEL, "claude-haiku-4-5"])


def test_requests_are_recorded_with_headers_and_body() -> None:
    with AnthropicServer([Step(text="a")]) as server:
        client(server).messages.create(
            model=MODEL, max_tokens=8, messages=MESSAGES, system="be brief"
        )
        (request,) = server.requests_to("/v1/messages")
    assert request.method == "POST"
    # SDK 2.x sends the key as a bearer token; older SDKs and Claude Code use x-api-key.
    assert "test" in (
        request.headers.get("x-api-key"),
        request.headers.get("authorization", "")[7:],
    )
    assert request.headers["anthropic-version"]
    assert request.body["system"] == "be brief"
    assert request.body["messages"] == MESSAGES


def test_steps_run_out_into_done() -> None:
    with AnthropicServer([Step(text="first")]) as server:
        c = client(server)
        texts = [
            c.messages.create(model=MODEL, max_tokens=8, messages=MESSAGES).content[0].text
            for _ in range(3)
        ]
        assert server.script.served == 3
    assert texts == ["first", DONE_TEXT, DONE_TEXT]


def test_router_answers_concurrent_requests_by_content() -> None:
    def route(body: Mapping[str, Any]) -> Step | None:
        prompt = body["messages"][0]["content"]
        if prompt.startswith("agent-"):
            return Step(text=f"report from {prompt}", delay_s=0.05)
        return None

    server = AnthropicServer(route)
    results: dict[str, str] = {}

    def ask(name: str) -> None:
        message = client(server).messages.create(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": name}]
        )
        results[name] = message.content[0].text

    with server:
        threads = [threading.Thread(target=ask, args=(f"agent-{i}",)) for i in range(6)]
        threads.append(threading.Thread(target=ask, args=("main",)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results.pop("main") == DONE_TEXT
    assert results == {f"agent-{i}": f"report from agent-{i}" for i in range(6)}


def test_unknown_routes_are_logged_and_answered_404() -> None:
    with AnthropicServer() as server:
        response = post(server.url + "/api/event_logging/batch", {"events": []})
        health = get(server.url + "/")
        assert [r.route for r in server.unknown] == ["/api/event_logging/batch"]
    assert response.status == 404
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "not_found_error"
    assert health.status == 200


# -- faults ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "exc", "etype"),
    [
        (401, "AuthenticationError", "authentication_error"),
        (400, "BadRequestError", "invalid_request_error"),
        (404, "NotFoundError", "not_found_error"),
        (429, "RateLimitError", "rate_limit_error"),
        (500, "InternalServerError", "api_error"),
        (529, "OverloadedError", "overloaded_error"),
    ],
)
def test_status_faults_use_the_real_error_shape(status: int, exc: str, etype: str) -> None:
    steps = [Step(fault=Fault.http(status, retry_after=3))]
    with AnthropicServer(steps) as server, pytest.raises(getattr(anthropic, exc)) as info:
        client(server).messages.create(model=MODEL, max_tokens=8, messages=MESSAGES)
    err = info.value
    assert err.status_code == status
    assert err.body["type"] == "error"
    assert err.body["error"]["type"] == etype
    assert err.body["error"]["message"]
    assert err.response.headers["request-id"].startswith("req_")
    assert err.response.headers["retry-after"] == "3"


def test_429_then_success_is_retried_by_the_sdk() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(text="after retry")]
    with AnthropicServer(steps) as server:
        message = client(server, max_retries=2).messages.create(
            model=MODEL, max_tokens=8, messages=MESSAGES
        )
        retries = [r.headers["x-stainless-retry-count"] for r in server.requests_to("/v1/messages")]
    assert message.content[0].text == "after retry"
    assert retries == ["0", "1"]


def test_api_key_is_checked_when_set() -> None:
    with AnthropicServer([Step(text="ok")], api_key="right") as server:
        with pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"):
            client(server).messages.create(model=MODEL, max_tokens=8, messages=MESSAGES)
        ok = client(server, api_key="right")
        assert (
            ok.messages.create(model=MODEL, max_tokens=8, messages=MESSAGES).content[0].text == "ok"
        )


def test_unknown_model_and_over_long_prompt() -> None:
    with AnthropicServer(models=[MODEL], context_window=100) as server:
        c = client(server)
        with pytest.raises(anthropic.NotFoundError, match="model: claude-nope"):
            c.messages.create(model="claude-nope", max_tokens=8, messages=MESSAGES)
        with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
            c.messages.create(
                model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "z" * 2_000}]
            )
        assert server.script.served == 0  # refused before any step was consumed


def test_request_validation_rejects_a_missing_max_tokens() -> None:
    with AnthropicServer() as server:
        response = post(server.base_url + "/v1/messages", {"model": MODEL, "messages": []})
    assert response.status == 400
    assert response.json()["error"]["message"] == "max_tokens: Field required"


def _stream_all(server: AnthropicServer, **kwargs: Any) -> Any:
    with client(server, **kwargs).messages.stream(
        model=MODEL, max_tokens=8, messages=MESSAGES
    ) as s:
        for _ in s:
            pass
        return s.get_final_message()


def test_truncated_stream_fails_as_an_incomplete_read() -> None:
    steps = [Step(text="x" * 200, fault=Fault.truncated())]
    with (
        AnthropicServer(steps) as server,
        pytest.raises(Exception, match="incomplete chunked read"),
    ):
        _stream_all(server)


def test_garbled_stream_fails_to_parse() -> None:
    steps = [Step(text="x" * 200, fault=Fault.garbled())]
    with AnthropicServer(steps) as server, pytest.raises(ValueError, match="property name"):
        _stream_all(server)


def test_in_stream_error_event() -> None:
    with (
        AnthropicServer(
            [Step(text="x" * 100, fault=Fault(kind="stream_error", status=529))]
        ) as server,
        pytest.raises(anthropic.APIStatusError, match="Overloaded"),
    ):
        _stream_all(server)


def test_stall_trips_the_client_timeout() -> None:
    steps = [Step(fault=Fault.stall_for(30))]
    with AnthropicServer(steps) as server, pytest.raises(anthropic.APITimeoutError):
        client(server, timeout=0.3).messages.create(model=MODEL, max_tokens=8, messages=MESSAGES)


def test_mid_stream_stall_trips_the_read_timeout() -> None:
    steps = [Step(text="x" * 100, fault=Fault.stall_for(30, mid_stream=True))]
    with AnthropicServer(steps) as server, pytest.raises(Exception, match="timed out"):
        _stream_all(server, timeout=0.3)


def test_stop_returns_promptly_while_a_request_stalls() -> None:
    server = AnthropicServer([Step(fault=Fault.stall_for(60))]).start()
    done = threading.Event()

    def call() -> None:
        with contextlib.suppress(Exception):
            client(server, timeout=60).messages.create(model=MODEL, max_tokens=8, messages=MESSAGES)
        done.set()

    threading.Thread(target=call, daemon=True).start()
    while not server.requests:
        threading.Event().wait(0.01)
    server.stop()
    assert done.wait(10)


# -- the step format ---------------------------------------------------------------------


def test_load_steps_reads_the_captured_claude_code_script() -> None:
    steps = load_steps(corpus_path("corpora/claude-code-capture/scripted-model-steps.json"))
    assert steps[0].tool_calls[0].name == "TodoWrite"
    assert steps[0].cache_read_input_tokens == 20_000
    assert steps[0].cache_creation_input_tokens == 5_000
    assert steps[0].input_tokens == 3
    assert steps[-1].text == "All done."


def test_step_json_round_trip_of_faults() -> None:
    (a, b, c, d) = load_steps(
        [
            {"fault": 429},
            {"fault": "truncate"},
            {"fault": {"kind": "stall", "stall_s": 2}},
            {"text": "t", "input_tokens": 5, "delay_s": 0.5, "tool_calls": [{"name": "x"}]},
        ]
    )
    assert a.fault == Fault.http(429)
    assert b.fault == Fault.truncated()
    assert c.fault == Fault.stall_for(2)
    assert (d.text, d.input_tokens, d.delay_s, d.tool_calls[0].name) == ("t", 5, 0.5, "x")
    with pytest.raises(ConfigError, match="unknown fault kind"):
        load_steps([{"fault": "explode"}])
    with pytest.raises(ConfigError, match="needs a string name"):
        load_steps([{"tool_calls": [{"input": {}}]}])


def test_a_conversation_the_api_would_refuse_gets_its_400() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
    unanswered = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": "and?"},
    ]
    stray = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}],
        }
    ]
    empty = [{"role": "user", "content": [{"type": "text", "text": ""}]}]
    with AnthropicServer([Step(text="never")]) as server:
        c = client(server)
        with pytest.raises(anthropic.BadRequestError, match="without `tool_result` blocks"):
            c.messages.create(model=MODEL, max_tokens=8, messages=unanswered)
        with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id`"):
            c.messages.create(model=MODEL, max_tokens=8, messages=stray)
        with pytest.raises(anthropic.BadRequestError, match="must be non-empty"):
            c.messages.create(model=MODEL, max_tokens=8, messages=empty)
        answered = [
            *unanswered[:2],
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
            },
        ]
        assert (
            c.messages.create(model=MODEL, max_tokens=8, messages=answered).content[0].text
            == "never"
        )


def test_route_by_content_keeps_each_agent_in_order() -> None:
    from ctxrelay.testing import route_by_content

    router = route_by_content(
        {"AGENT-A": [Step(text="a1"), Step(text="a2")]},
        default=[Step(text="main1")],
    )
    with AnthropicServer(router) as server:
        c = client(server)

        def ask(first: str) -> str:
            messages = [{"role": "user", "content": first}]
            text: str = (
                c.messages.create(model=MODEL, max_tokens=8, messages=messages).content[0].text
            )
            return text

        assert ask("task for AGENT-A") == "a1"
        assert ask("the main task") == "main1"
        assert ask("task for AGENT-A, again") == "a2"
        assert ask("task for AGENT-A, once more") == DONE_TEXT
        assert ask("the main task") == DONE_TEXT
