"""Local servers that speak the providers' wire formats, for tests and demos.

``AnthropicServer`` (Messages API, streaming SSE as the real API sends it),
``OpenAIServer`` (Chat Completions, Responses) and ``GeminiServer`` (the Gemini API's
``generateContent`` and ``streamGenerateContent``) run on 127.0.0.1 on a free port in a
background thread, answer from a script of ``Step`` values (or a routing callable that
sees each request's body), inject ``Fault`` values (HTTP errors in the real shapes,
truncated or garbled streams, stalls), hold a request until the test releases it
(``server.hold()``, a ``Hold``), and record every request for assertions::

    from ctxrelay.testing import AnthropicServer, Step, ToolUse

    steps = [Step(tool_calls=[ToolUse("read_file", {"path": "a.txt"})], input_tokens=900,
                  cache_read_input_tokens=20_000),
             Step(text="All done.")]
    with AnthropicServer(steps) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="test")
        ...
        assert server.requests_to("/v1/messages")[0].body["model"] == "claude-sonnet-4-5"

``Step`` and ``load_steps`` are the one scripted-model step format: the runtime's
``scripted:`` provider reads the same JSON. ``ThrowawayPostgres`` runs a private
PostgreSQL cluster for tests and benchmarks. Nothing here imports a provider SDK: the
servers are plain ``http.server``.
"""

from __future__ import annotations

from ctxrelay.testing._anthropic import ANTHROPIC_ERROR_TYPES, AnthropicServer
from ctxrelay.testing._gemini import GeminiServer
from ctxrelay.testing._openai import OpenAIServer
from ctxrelay.testing._postgres import ThrowawayPostgres, find_server_binaries
from ctxrelay.testing._script import (
    DONE_TEXT,
    Fault,
    FaultKind,
    Router,
    Script,
    Step,
    ToolUse,
    load_steps,
    route_by_content,
)
from ctxrelay.testing._server import Hold, LocalServer, RecordedRequest, estimate_tokens

__all__ = [
    "ANTHROPIC_ERROR_TYPES",
    "DONE_TEXT",
    "AnthropicServer",
    "Fault",
    "FaultKind",
    "GeminiServer",
    "Hold",
    "LocalServer",
    "OpenAIServer",
    "RecordedRequest",
    "Router",
    "Script",
    "Step",
    "ThrowawayPostgres",
    "ToolUse",
    "estimate_tokens",
    "find_server_binaries",
    "load_steps",
    "route_by_content",
]
