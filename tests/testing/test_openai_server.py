"""The local OpenAI Chat Completions server, driven by the official SDK over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ctxrelay.testing import DONE_TEXT, Fault, OpenAIServer, Step, ToolUse
from tests.testing._http import get, post

openai = pytest.importorskip("openai")

MODEL = "gpt-4.1"
MESSAGES = [{"role": "user", "content": "hi"}]

STEP = Step(
    text="Let me look.",
    tool_calls=[
        ToolUse("grep", {"pattern": "def main", "path": "src"}),
        ToolUse("read_file", {"path": "README.md"}),
    ],
    input_tokens=300,
    output_tokens=25,
    cache_read_input_tokens=4_000,
    cache_creation_input_tokens=0,
)


_CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    # An SDK client left open keeps its pooled connection until the garbage collector
    # finds it, and the ResourceWarning then fails whichever later test is running.
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def client(server: OpenAIServer, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("api_key", "test")
    made = openai.OpenAI(base_url=server.base_url, **kwargs)
    _CLIENTS.append(made)
    return made


def stream(server: OpenAIServer, include_usage: bool = True, **kwargs: Any) -> list[Any]:
    options = {"include_usage": True} if include_usage else None
    extra = {"stream_options": options} if options else {}
    chunks = client(server, **kwargs).chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, **extra
    )
    return list(chunks)


def test_stream_with_tool_call_deltas_and_usage_chunk() -> None:
    with OpenAIServer([STEP]) as server:
        chunks = stream(server)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Let me look."
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                entry = calls.setdefault(delta.index, {"id": "", "name": "", "args": ""})
                entry["id"] += delta.id or ""
                entry["name"] += delta.function.name or ""
                entry["args"] += delta.function.arguments or ""
    assert [c["name"] for c in calls.values()] == ["grep", "read_file"]
    assert json.loads(calls[0]["args"]) == {"pattern": "def main", "path": "src"}
    assert all(c["id"].startswith("call_") for c in calls.values())
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls"
    assert [f for f in finishes if f] == ["tool_calls"]
    last = chunks[-1]
    assert last.choices == []
    assert last.usage.prompt_tokens == 4_300  # fresh + cached
    assert last.usage.prompt_tokens_details.cached_tokens == 4_000
    assert last.usage.completion_tokens == 25
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_include_usage_has_no_usage() -> None:
    with OpenAIServer([Step(text="hello")]) as server:
        chunks = stream(server, include_usage=False)
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_raw_stream_ends_with_done() -> None:
    with OpenAIServer([Step(text="hello")]) as server:
        raw = post(
            server.base_url + "/chat/completions",
            {"model": MODEL, "messages": MESSAGES, "stream": True},
        )
    assert raw.headers["content-type"].startswith("text/event-stream")
    frames = [f for f in raw.text.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    first = json.loads(frames[0].removeprefix("data: "))
    assert first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"]["role"] == "assistant"


def test_non_streaming_form() -> None:
    with OpenAIServer([STEP]) as server:
        completion = client(server).chat.completions.create(model=MODEL, messages=MESSAGES)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert [c.function.name for c in choice.message.tool_calls] == ["grep", "read_file"]
    assert completion.usage.prompt_tokens == 4_300
    assert completion.usage.prompt_tokens_details.cached_tokens == 4_000


def test_done_when_steps_run_out_and_models_listed() -> None:
    with OpenAIServer(models=[MODEL]) as server:
        c = client(server)
        completion = c.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert [m.id for m in c.models.list()] == [MODEL]
        assert (
            server.requests_to("/v1/chat/completions")[0].headers["authorization"] == "Bearer test"
        )
        missing = get(server.url + "/v1/embeddings")
        assert [r.route for r in server.unknown] == ["/v1/embeddings"]
    assert completion.choices[0].message.content == DONE_TEXT
    assert missing.status == 404
    assert "error" in missing.json()


@pytest.mark.parametrize(
    ("status", "exc", "code"),
    [
        (401, "AuthenticationError", "invalid_api_key"),
        (429, "RateLimitError", "rate_limit_exceeded"),
        (500, "InternalServerError", None),
        (503, "InternalServerError", None),
    ],
)
def test_status_faults_use_the_real_error_shape(status: int, exc: str, code: str | None) -> None:
    steps = [Step(fault=Fault.http(status, retry_after=2))]
    with OpenAIServer(steps) as server, pytest.raises(getattr(openai, exc)) as info:
        client(server).chat.completions.create(model=MODEL, messages=MESSAGES)
    err = info.value
    assert err.status_code == status
    assert err.code == code
    assert err.body["message"]
    assert err.response.headers["retry-after"] == "2"


def test_429_then_success_is_retried() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(text="second")]
    with OpenAIServer(steps) as server:
        completion = client(server, max_retries=2).chat.completions.create(
            model=MODEL, messages=MESSAGES
        )
        assert len(server.requests) == 2
    assert completion.choices[0].message.content == "second"


def test_key_model_and_context_checks() -> None:
    with OpenAIServer(api_key="k", models=[MODEL], context_window=50) as server:
        with pytest.raises(openai.AuthenticationError):
            client(server).chat.completions.create(model=MODEL, messages=MESSAGES)
        good = client(server, api_key="k")
        with pytest.raises(openai.NotFoundError) as missing:
            good.chat.completions.create(model="gpt-nope", messages=MESSAGES)
        assert missing.value.code == "model_not_found"
        with pytest.raises(openai.BadRequestError) as long:
            good.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "q" * 1_000}]
            )
        assert long.value.code == "context_length_exceeded"
        assert server.script.served == 0


@pytest.mark.parametrize(
    ("fault", "exc"),
    [
        (Fault.truncated(), "APIConnectionError"),
        (Fault.garbled(), "ValueError"),
        (Fault(kind="stream_error", status=500), "APIError"),
    ],
)
def test_broken_streams_fail_in_the_client(fault: Fault, exc: str) -> None:
    expected = ValueError if exc == "ValueError" else getattr(openai, exc)
    steps = [Step(text="y" * 100, fault=fault)]
    with OpenAIServer(steps) as server, pytest.raises(expected):
        stream(server)


def test_stall_trips_the_client_timeout() -> None:
    steps = [Step(fault=Fault.stall_for(30))]
    with OpenAIServer(steps) as server, pytest.raises(openai.APITimeoutError):
        client(server, timeout=0.3).chat.completions.create(model=MODEL, messages=MESSAGES)


def test_unanswered_tool_calls_get_the_api_400() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    unanswered = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "user", "content": "and?"},
    ]
    with OpenAIServer([Step(text="fine")]) as server:
        c = client(server)
        with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
            c.chat.completions.create(model=MODEL, messages=unanswered)
        with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding"):
            c.chat.completions.create(
                model=MODEL, messages=[{"role": "tool", "tool_call_id": "call_1", "content": "x"}]
            )
        answered = [*unanswered[:2], {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
        assert (
            c.chat.completions.create(model=MODEL, messages=answered).choices[0].message.content
            == "fine"
        )
