"""The local server's OpenAI Responses route, driven by the official SDK over real HTTP:
``responses.create`` streamed and not, ``responses.stream``, function calls both ways,
usage with cached tokens, stored state, faults and the API's refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ctxrelay.testing import DONE_TEXT, Fault, OpenAIServer, Step, ToolUse
from tests.testing._http import post

openai = pytest.importorskip("openai")

MODEL = "gpt-4.1"
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
STEP = Step(
    text="Let me look.",
    tool_calls=[
        ToolUse("grep", {"pattern": "def main", "path": "src"}, id="call_grep"),
        ToolUse("read_file", {"path": "README.md"}),
    ],
    input_tokens=300,
    output_tokens=25,
    cache_read_input_tokens=4_000,
    cache_creation_input_tokens=700,
)

_CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def client(server: OpenAIServer, **kwargs: Any) -> Any:
    kwargs.setdefault("max_retries", 0)
    made = openai.OpenAI(base_url=server.base_url, api_key="test", **kwargs)
    _CLIENTS.append(made)
    return made


def _check_usage(usage: Any) -> None:
    # input_tokens is the whole prompt: fresh input, cache writes and cache reads.
    assert usage.input_tokens == 300 + 700 + 4_000
    assert usage.input_tokens_details.cached_tokens == 4_000
    assert usage.input_tokens_details.cache_write_tokens == 700
    assert usage.output_tokens == 25
    assert usage.output_tokens_details.reasoning_tokens == 0
    assert usage.total_tokens == 5_025


def _check_output(response: Any) -> None:
    assert response.status == "completed"
    assert response.model == MODEL
    message, grep, read = response.output
    assert message.type == "message"
    assert response.output_text == "Let me look."
    assert [grep.type, grep.name, grep.call_id] == ["function_call", "grep", "call_grep"]
    assert json.loads(grep.arguments) == {"pattern": "def main", "path": "src"}
    assert read.name == "read_file"
    assert read.call_id.startswith("call_")
    assert json.loads(read.arguments) == {"path": "README.md"}


def test_create_answers_text_calls_and_usage() -> None:
    with OpenAIServer([STEP]) as server:
        response = client(server).responses.create(
            model=MODEL, input="Find main.", instructions="Be brief.", tools=TOOLS
        )
        body = server.requests_to("/v1/responses")[0].body
    _check_output(response)
    _check_usage(response.usage)
    assert response.id.startswith("resp_")
    assert response.instructions == "Be brief."
    assert response.tools[0].name == "read_file"
    assert body["input"] == "Find main."


def test_streamed_create_sends_the_apis_events_in_order() -> None:
    with OpenAIServer([STEP]) as server:
        events = list(client(server).responses.create(model=MODEL, input="Find main.", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Let me look."
    added = [e.item for e in events if e.type == "response.output_item.added"]
    assert [i.type for i in added] == ["message", "function_call", "function_call"]
    assert all(i.status == "in_progress" for i in added)
    # Each call's arguments arrive as deltas on its item, then whole in .done.
    args: dict[str, str] = {}
    for e in events:
        if e.type == "response.function_call_arguments.delta":
            args[e.item_id] = args.get(e.item_id, "") + e.delta
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [args[e.item_id] for e in done] == [e.arguments for e in done]
    assert json.loads(done[0].arguments) == {"pattern": "def main", "path": "src"}
    items = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.status for i in items] == ["completed"] * 3
    assert events[0].response.usage is None
    assert events[0].response.output == []
    final = events[-1].response
    _check_output(final)
    _check_usage(final.usage)


def test_stream_helper_accumulates_the_final_response() -> None:
    with (
        OpenAIServer([STEP]) as server,
        client(server).responses.stream(model=MODEL, input="Find main.") as stream,
    ):
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Let me look."
    _check_output(final)
    _check_usage(final.usage)


def test_function_call_outputs_go_back_as_input_items() -> None:
    steps = [
        Step(tool_calls=[ToolUse("read_file", {"path": "a.txt"}, id="call_1")]),
        Step(text="It says hello."),
    ]
    with OpenAIServer(steps) as server:
        sdk = client(server)
        first = sdk.responses.create(model=MODEL, input="Read a.txt", tools=TOOLS)
        (call,) = first.output
        assert call.type == "function_call"
        assert first.output_text == ""
        history: list[Any] = [
            {"role": "user", "content": "Read a.txt"},
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "hello"},
        ]
        second = sdk.responses.create(model=MODEL, input=history, tools=TOOLS)
        sent = server.requests_to("/v1/responses")[1].body["input"]
    assert second.output_text == "It says hello."
    assert [i.get("type") for i in sent[1:]] == ["function_call", "function_call_output"]
    assert sent[2] == {"type": "function_call_output", "call_id": "call_1", "output": "hello"}


def test_a_call_without_its_output_is_refused_in_the_apis_words() -> None:
    call = {"type": "function_call", "call_id": "call_9", "name": "read_file", "arguments": "{}"}
    stray = {"type": "function_call_output", "call_id": "call_7", "output": "x"}
    with OpenAIServer([Step(text="never")]) as server:
        sdk = client(server)
        with pytest.raises(openai.BadRequestError, match="No tool output found for function"):
            sdk.responses.create(model=MODEL, input=[{"role": "user", "content": "hi"}, call])
        with pytest.raises(openai.BadRequestError, match="No tool call found for function"):
            sdk.responses.create(model=MODEL, input=[stray])
        assert server.script.served == 0


def test_usage_is_estimated_when_the_step_leaves_it_open() -> None:
    with OpenAIServer([Step(text="ok", cache_read_input_tokens=50)]) as server:
        response = client(server).responses.create(model=MODEL, input="x" * 4_000)
    assert response.usage.input_tokens > 1_000  # about four bytes a token, plus the reads
    assert response.usage.input_tokens_details.cached_tokens == 50
    assert response.usage.output_tokens == 1


def test_previous_response_id_continues_a_stored_response() -> None:
    with OpenAIServer([Step(text="one"), Step(text="two"), Step(text="three")]) as server:
        sdk = client(server)
        first = sdk.responses.create(model=MODEL, input="first")
        second = sdk.responses.create(model=MODEL, input="second", previous_response_id=first.id)
        with pytest.raises(openai.BadRequestError, match="Previous response with id 'resp_x'"):
            sdk.responses.create(model=MODEL, input="third", previous_response_id="resp_x")
    assert second.output_text == "two"
    assert second.previous_response_id == first.id
    # The stored turn counts in the second request's prompt.
    assert second.usage.input_tokens > first.usage.input_tokens


def test_the_script_runs_out_with_done() -> None:
    with OpenAIServer([]) as server:
        response = client(server).responses.create(model=MODEL, input="hi")
    assert response.output_text == DONE_TEXT


def test_route_by_content_reads_the_first_input_item() -> None:
    from ctxrelay.testing import route_by_content

    router = route_by_content(
        {"AGENT-A": [Step(text="a1"), Step(text="a2")]},
        default=[Step(text="main1")],
    )
    with OpenAIServer(router) as server:
        sdk = client(server)

        def ask(first: Any) -> str:
            text: str = sdk.responses.create(model=MODEL, input=first).output_text
            return text

        assert ask("task for AGENT-A") == "a1"  # input as a string
        assert ask([{"role": "user", "content": "the main task"}]) == "main1"
        # only the first item counts, as messages[0] does for the other APIs
        later = [{"role": "user", "content": "go"}, {"role": "user", "content": "AGENT-A"}]
        assert ask(later) == DONE_TEXT
        assert ask([{"role": "user", "content": "task for AGENT-A, again"}]) == "a2"
        assert ask("task for AGENT-A, once more") == DONE_TEXT


def test_max_tokens_ends_incomplete() -> None:
    with OpenAIServer([Step(text="cut", stop_reason="max_tokens")]) as server:
        events = list(client(server).responses.create(model=MODEL, input="hi", stream=True))
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


def test_http_faults_come_in_the_apis_error_shape() -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(fault=Fault.http(401))]
    with OpenAIServer(steps) as server:
        sdk = client(server)
        with pytest.raises(openai.RateLimitError) as limited:
            sdk.responses.create(model=MODEL, input="hi")
        with pytest.raises(openai.AuthenticationError):
            sdk.responses.create(model=MODEL, input="hi")
    assert limited.value.code == "rate_limit_exceeded"
    assert limited.value.response.headers["retry-after-ms"] == "10"


def test_stream_faults_break_the_stream() -> None:
    steps = [
        Step(text="a" * 64, fault=Fault(kind="stream_error", message="overloaded")),
        Step(text="a" * 64, fault=Fault.truncated()),
        Step(text="a" * 64, fault=Fault.garbled()),
    ]
    with OpenAIServer(steps) as server:
        sdk = client(server)
        events = list(sdk.responses.create(model=MODEL, input="hi", stream=True))
        with pytest.raises(openai.APIConnectionError):
            list(sdk.responses.create(model=MODEL, input="hi", stream=True))
        with pytest.raises(json.JSONDecodeError):
            list(sdk.responses.create(model=MODEL, input="hi", stream=True))
    assert [e.type for e in events][-1] == "error"
    assert events[-1].message == "overloaded"
    assert events[-1].code == "server_error"


def test_checks_the_key_the_model_and_the_window() -> None:
    with OpenAIServer(api_key="sk-right", models=["gpt-4.1"], context_window=100) as server:
        url = server.base_url + "/responses"
        assert post(url, {"model": MODEL, "input": "hi"}).status == 401
        auth = {"authorization": "Bearer sk-right"}
        missing = post(url, {"input": "hi"}, auth)
        assert missing.status == 400
        assert missing.json()["error"]["message"] == "you must provide a model parameter"
        wrong = post(url, {"model": MODEL, "input": 3}, auth)
        assert wrong.json()["error"]["param"] == "input"
        unknown = post(url, {"model": "gpt-0", "input": "hi"}, auth)
        assert unknown.status == 404
        too_long = post(url, {"model": MODEL, "input": "x" * 1_000}, auth)
        assert too_long.json()["error"]["code"] == "context_length_exceeded"
        assert server.script.served == 0
        assert len(server.requests_to("/v1/responses")) == 5


def test_a_conversation_holds_its_turns_on_the_server() -> None:
    with OpenAIServer([Step(text="one"), Step(text="two")]) as server:
        sdk = client(server)
        conversation = sdk.conversations.create()
        first = sdk.responses.create(model=MODEL, input="first", conversation=conversation.id)
        second = sdk.responses.create(model=MODEL, input="second", conversation=conversation.id)
        with pytest.raises(openai.NotFoundError, match="Conversation with id 'conv_x'"):
            sdk.responses.create(model=MODEL, input="third", conversation="conv_x")
        assert server.script.served == 2
    assert conversation.id.startswith("conv_")
    assert second.output_text == "two"
    assert second.usage.input_tokens > first.usage.input_tokens  # the first turn came along


def test_compact_keeps_the_user_messages_and_one_opaque_item() -> None:
    history: list[Any] = [
        {"role": "user", "content": "Read a.txt"},
        {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "hello"},
        {"role": "assistant", "content": "It says hello."},
    ]
    with OpenAIServer([Step(text="after")]) as server:
        sdk = client(server)
        compacted = sdk.responses.compact(model=MODEL, input=history)
        # The SDK types the output as output items (no user messages), so it is dumped
        # as the Agents SDK's compaction session dumps it: without serializer warnings.
        items = [i.model_dump(exclude_unset=True, warnings=False) for i in compacted.output]
        after = sdk.responses.create(model=MODEL, input=[*items, {"role": "user", "content": "go"}])
        assert server.script.served == 1  # compaction is not a scripted turn
    assert compacted.object == "response.compaction"
    assert [i.get("type") for i in items] == ["message", "compaction"]
    assert items[0]["role"] == "user"
    assert items[1]["encrypted_content"]
    assert after.output_text == "after"


def test_codex_deferred_tools_a_tool_search_and_a_namespaced_call() -> None:
    """The shapes Codex 0.171 reads for its deferred (MCP) tools: a client-executed
    ``tool_search_call``, and a ``function_call`` naming its namespace."""
    step = Step(
        tool_calls=[
            ToolUse("tool_search", {"query": "history"}),
            ToolUse("mcp__ctxrelay.session_history", {"action": "list"}),
        ]
    )
    with OpenAIServer([step, step]) as server:
        url = server.base_url + "/responses"
        body = post(url, {"model": MODEL, "input": "x"}).json()
        stream = post(url, {"model": MODEL, "input": "x", "stream": True}).text
    search, call = body["output"]
    assert search["type"] == "tool_search_call"
    assert search["execution"] == "client"
    assert search["arguments"] == {"query": "history"}
    assert (call["type"], call["namespace"], call["name"]) == (
        "function_call",
        "mcp__ctxrelay",
        "session_history",
    )
    assert '"type":"tool_search_call"' in stream
    assert "function_call_arguments.delta" in stream  # the namespaced call streams as ever
