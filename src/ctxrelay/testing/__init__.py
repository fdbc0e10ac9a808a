"""Local servers that speak the providers' wire formats, for tests and demos.

``AnthropicServer`` (Messages API, streaming SSE as the real API sends it) and
``OpenAIServer`` (Chat Completions) run on 127.0.0.1 on a free port in a background thread,
answer from a script of ``Step`` values (or a routing callable that sees each request's
body), inject ``Fault`` values (HTTP errors in the real shapes, truncated or garbled streams,
stalls), and record every request for assertions::

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

The names load on first use (PEP 562), so the scripted provider can read the step
format without starting to import the servers.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.testing._anthropic import ANTHROPIC_ERROR_TYPES, AnthropicServer
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
    from ctxrelay.testing._server import LocalServer, RecordedRequest, estimate_tokens

__all__ = [
    "ANTHROPIC_ERROR_TYPES",
    "DONE_TEXT",
    "AnthropicServer",
    "Fault",
    "FaultKind",
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

_ANTHROPIC = "ctxrelay.testing._anthropic"
_OPENAI = "ctxrelay.testing._openai"
_POSTGRES = "ctxrelay.testing._postgres"
_SCRIPT = "ctxrelay.testing._script"
_SERVER = "ctxrelay.testing._server"
_HOME: dict[str, str] = {
    "ANTHROPIC_ERROR_TYPES": _ANTHROPIC,
    "AnthropicServer": _ANTHROPIC,
    "OpenAIServer": _OPENAI,
    "ThrowawayPostgres": _POSTGRES,
    "find_server_binaries": _POSTGRES,
    "DONE_TEXT": _SCRIPT,
    "Fault": _SCRIPT,
    "FaultKind": _SCRIPT,
    "Router": _SCRIPT,
    "Script": _SCRIPT,
    "Step": _SCRIPT,
    "ToolUse": _SCRIPT,
    "load_steps": _SCRIPT,
    "route_by_content": _SCRIPT,
    "LocalServer": _SERVER,
    "RecordedRequest": _SERVER,
    "estimate_tokens": _SERVER,
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
