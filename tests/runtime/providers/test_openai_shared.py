"""What both OpenAI providers share (``_openai_common``), run over real HTTP on each API
of the local server: streamed text, tool calls and usage with cached tokens, the key and
base URL, how the SDK's errors become failures and which are retried, the size estimate
without usage, and the tool-call argument parsing."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from ctxrelay.errors import (
    ContextOverflowError,
    MalformedResponseError,
    ModelUnavailableError,
    ProviderAuthError,
    ProviderStatusError,
    ProviderTimeoutError,
)
from ctxrelay.runtime.model import Message, ModelProvider, ModelRequest, TextBlock
from ctxrelay.testing import Fault, OpenAIServer, Step, ToolUse
from tests.runtime.providers._helpers import FAST, against, complete_once, tool_request

pytest.importorskip("openai")
from ctxrelay.runtime.providers._openai_common import (
    INVALID_ARGUMENTS_KEY,
    OpenAIBase,
    tool_arguments,
)
from ctxrelay.runtime.providers.openai import OpenAIProvider
from ctxrelay.runtime.providers.openai_responses import OpenAIResponsesProvider

MODEL = "gpt-4.1"
REQUEST = tool_request("grep", "Search files.", "pattern", ask="find main", max_tokens=256)


class Api(NamedTuple):
    """One OpenAI provider and the route it calls on the local server."""

    cls: type[OpenAIBase]
    route: str


@pytest.fixture(
    params=[
        Api(OpenAIProvider, "/v1/chat/completions"),
        Api(OpenAIResponsesProvider, "/v1/responses"),
    ],
    ids=["chat", "responses"],
)
def api(request: pytest.FixtureRequest) -> Api:
    value: Api = request.param
    return value


def complete(api: Api, server: OpenAIServer, request: ModelRequest = REQUEST, **kwargs: Any) -> Any:
    return complete_once(against(api.cls, MODEL, server, **kwargs), request)


def test_streams_text_tool_calls_and_cached_usage(api: Api) -> None:
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
        p = against(api.cls, MODEL, server)
        assert isinstance(p, ModelProvider)
        assert p.name == f"openai:{MODEL}"
        response = complete_once(p, REQUEST, on_text=seen.append)
        (sent,) = server.requests
    assert sent.route == api.route
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


def test_missing_key_without_base_url(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderAuthError, match=r"^no OpenAI API key: set OPENAI_API_KEY"):
        api.cls(MODEL)


def test_local_server_needs_no_key(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer([Step(text="local")]) as server:
        p = api.cls(MODEL, base_url=server.base_url, retry=FAST)
        assert complete_once(p, REQUEST).text == "local"
        (sent,) = server.requests
    assert sent.route == api.route


def test_base_url_from_the_environment_names_the_server(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIServer(models=["gpt-4o"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        p = api.cls(MODEL, api_key="test", retry=FAST)
        assert p.base_url == server.base_url
        with pytest.raises(
            ModelUnavailableError,
            match=rf"^the OpenAI-compatible server at {server.base_url} does not serve",
        ):
            complete_once(p, REQUEST)


def test_bad_key(api: Api) -> None:
    with OpenAIServer(api_key="right") as server:
        with pytest.raises(
            ProviderAuthError, match=r"rejected the API key .401: Incorrect API key"
        ):
            complete(api, server)
        assert len(server.requests) == 1


def test_429_then_success(api: Api) -> None:
    steps = [Step(fault=Fault.http(429, retry_after=0.01)), Step(text="again")]
    with OpenAIServer(steps) as server:
        assert complete(api, server).text == "again"
        assert len(server.requests_to(api.route)) == 2


def test_quota_exhausted_is_not_retried(api: Api) -> None:
    steps = [
        Step(fault=Fault.http(429, "You exceeded your current quota", code="insufficient_quota"))
    ]
    with OpenAIServer(steps * 3) as server:
        with pytest.raises(ProviderStatusError, match="no quota left"):
            complete(api, server)
        assert len(server.requests) == 1


def test_500_until_retries_run_out(api: Api) -> None:
    with OpenAIServer([Step(fault=Fault.http(500))] * 3) as server:
        with pytest.raises(ProviderStatusError, match=r"failed .500: .*after 2 retries"):
            complete(api, server)
        assert len(server.requests) == 3


def test_unknown_model(api: Api) -> None:
    with (
        OpenAIServer(models=["gpt-4o"]) as server,
        pytest.raises(ModelUnavailableError, match=r"does not serve the model 'gpt-4.1'"),
    ):
        complete(api, server)


def test_over_long_request(api: Api) -> None:
    with (
        OpenAIServer(context_window=10) as server,
        pytest.raises(ContextOverflowError, match="maximum context length is 10 tokens"),
    ):
        complete(api, server)


@pytest.mark.parametrize("fault", [Fault.truncated(), Fault.garbled()])
def test_broken_stream_is_retried_then_reported(api: Api, fault: Fault) -> None:
    with OpenAIServer([Step(text="z" * 40, fault=fault), Step(text="recovered")]) as server:
        assert complete(api, server).text == "recovered"
    with (
        OpenAIServer([Step(text="z" * 40, fault=fault)] * 3) as server,
        pytest.raises(MalformedResponseError),
    ):
        complete(api, server)


def test_error_inside_the_stream_is_retried_then_reported(api: Api) -> None:
    broken = Step(text="z", fault=Fault(kind="stream_error", message="overloaded"))
    with OpenAIServer([broken, Step(text="recovered")]) as server:
        assert complete(api, server).text == "recovered"
    with (
        OpenAIServer([broken] * 3) as server,
        pytest.raises(ProviderStatusError, match=r"failed mid-stream \(overloaded\)"),
    ):
        complete(api, server)


def test_stall_is_a_timeout(api: Api) -> None:
    with OpenAIServer([Step(fault=Fault.stall_for(30))]) as server:
        with pytest.raises(ProviderTimeoutError, match=r"did not answer within 0.3 s"):
            complete(api, server, timeout=0.3)
        assert len(server.requests) == 1


def test_server_without_usage_gets_a_conservative_estimate(api: Api) -> None:
    big = ModelRequest(system="", messages=[Message("user", [TextBlock("w" * 3_000)])])
    with OpenAIServer([Step(text="fine")], stream_usage=False) as server:
        response = complete(api, server, big)
    assert response.usage.input_tokens >= 1_000  # at most three bytes a token
    assert response.usage.output_tokens >= 1


def test_tool_arguments_that_are_not_json_reach_the_tool_as_an_input_error() -> None:
    assert tool_arguments('{"pattern": "a"}') == {"pattern": "a"}
    assert tool_arguments("") == {}
    assert tool_arguments("{not json") == {INVALID_ARGUMENTS_KEY: "{not json"}
    assert tool_arguments("[1, 2]") == {INVALID_ARGUMENTS_KEY: "[1, 2]"}
