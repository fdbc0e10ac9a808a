"""``session_history`` in the real Gemini CLI, offline: ``ctxrelay gemini install``
registers ``ctxrelay gemini mcp``; after auto mode's handoff clears the context, the
fresh context calls ``mcp_ctxrelay_session_history`` ``search`` and finds what the
earlier window of the same session file said (that window, not the current one), with
no approval mode that lets every tool run: the install's ``trust`` does it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._gemini import (
    events,
    function_responses,
    gemini_home,
    handoff_router,
    install_auto,
    run_gemini,
    texts,
)
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e

TOOL = "mcp_ctxrelay_session_history"
SAID = "We chose the GLR-7731 parser."


def test_the_fresh_context_finds_the_earlier_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    old = [
        Step(text=SAID, input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    earlier = handoff_router(old)

    def route(body: Mapping[str, Any]) -> Step | None:
        contents = body.get("contents") or []
        if len(contents) == 1 and "Resume the work" in texts(contents[0]):
            search = {"action": "search", "query": "GLR-7731"}
            return Step(tool_calls=[ToolUse(TOOL, search)], input_tokens=6_000)
        if contents and any("functionResponse" in p for p in contents[-1].get("parts") or ()):
            return Step(text="Found it in the earlier window.", input_tokens=7_000)
        return earlier(body)  # type: ignore[no-any-return]

    with GeminiServer(route) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        install_auto(project)
        # edits approved, every other tool asks, which -p denies: only the server's
        # "trust" lets the call run
        out = events(run_gemini(project, "port the parser", approval="auto_edit"))
        tools = {
            d.get("name")
            for r in server.model_requests()
            for t in (r.body.get("tools") or ())
            for d in (t.get("functionDeclarations") or ())
        }
        answers = [a for a in function_responses(server) if a.get("name") == TOOL]
    assert TOOL in tools  # the CLI's name for the server's tool
    (answer,) = answers
    found = json.dumps(answer["response"])
    assert SAID in found, found  # the earlier window's reply itself, not an echo of the query
    said = [e.get("content") for e in out if e["type"] == "message" and e["role"] == "assistant"]
    assert said[-1] == "Found it in the earlier window."
