"""``ctxrelay run`` on the two OpenAI routes (official SDK, real HTTP, the local server):
``openai:`` speaks the Responses API with the window's whole input each time (nothing
stored on the server), and ``openai-chat:`` is Chat Completions, kept on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.store import open_store
from ctxrelay.testing import OpenAIServer, Step, ToolUse

pytestmark = pytest.mark.e2e

MARKER = "alpha-content-marker"
BUDGET = ["--limit", "100000", "--reserve", "10000", "--threshold", "60"]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(MARKER + "\n")
    return ws


def run(
    capsys: pytest.CaptureFixture[str], ws: Path, *argv: str
) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["run", "--db", str(ws.parent / "sessions.db"), "--json", "--yes", *argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def test_openai_runs_on_responses_with_cached_tokens_and_client_side_history(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        Step(
            text="Reading.",
            tool_calls=[ToolUse("read_file", {"path": "a.txt"})],
            input_tokens=400,
            cache_read_input_tokens=30_000,
        ),
        Step(text="It holds the marker.", input_tokens=500, cache_read_input_tokens=30_400),
    ]
    with OpenAIServer(steps) as server:
        code, events, err = run(
            capsys,
            workspace,
            "--model",
            "openai:gpt-4.1",
            "--base-url",
            server.base_url,
            "--workspace",
            str(workspace),
            *BUDGET,
            "read a.txt",
        )
        requests = server.requests
    assert code == 0, err
    assert [r.route for r in requests] == ["/v1/responses"] * 2
    assert events[-1]["status"] == "done"
    # The whole window each time, nothing kept on the server: the call and its output
    # (which the server checks pair up) travel in the second request's input.
    second = requests[1].body
    assert second["store"] is False
    assert "previous_response_id" not in second
    kinds = [item.get("type") for item in second["input"]]
    assert kinds.count("function_call") == kinds.count("function_call_output") == 1
    assert MARKER in json.dumps(second["input"])
    # The reported context is input_tokens, its cached part counted as cache reads.
    responses = [e for e in events if e["event"] == "response"]
    assert [r["context_tokens"] for r in responses] == [30_400, 30_900]
    store = open_store(str(workspace.parent / "sessions.db"))
    try:
        rows = [r for r in store.rows(events[-1]["session_id"]) if r.kind == "assistant"]
    finally:
        store.close()
    assert [r.metadata["usage"]["cache_read_input_tokens"] for r in rows] == [30_000, 30_400]


def test_openai_chat_is_chat_completions_and_resumes_on_it(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        Step(tool_calls=[ToolUse("read_file", {"path": "a.txt"})], input_tokens=50),
        Step(text="Done on Chat Completions.", input_tokens=60),
    ]
    with OpenAIServer(steps) as server:
        code, events, err = run(
            capsys,
            workspace,
            "--model",
            "openai-chat:gpt-4.1",
            "--base-url",
            server.base_url,
            "--workspace",
            str(workspace),
            *BUDGET,
            "--max-turns",
            "1",
            "read a.txt",
        )
        assert code == 3, err  # paused by --max-turns after the first response
        session_id = events[0]["session_id"]
        # No --model and no --base-url: both come back from the session.
        code, events, err = run(capsys, workspace, "--resume", session_id, "--max-turns", "5")
        assert code == 0, err
        assert [r.route for r in server.requests] == ["/v1/chat/completions"] * 2
    assert events[-1]["status"] == "done"
