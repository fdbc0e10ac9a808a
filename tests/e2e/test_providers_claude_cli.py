"""The real Claude Code CLI (bundled by claude-agent-sdk) completes sessions against our
local Anthropic server: the wire format is good enough for the client that matters most."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import AnthropicServer, Step, ToolUse, route_by_content
from tests.e2e import _claude

pytestmark = pytest.mark.e2e


def run_cli(
    server: AnthropicServer,
    tmp_path: Path,
    *args: str,
    prepare: Callable[[Path], object] | None = None,
) -> dict[str, Any]:
    _, work, env = _claude.claude_home(
        tmp_path, path=os.environ.get("PATH", "/usr/bin:/bin"), ANTHROPIC_API_KEY="test"
    )
    if prepare is not None:
        prepare(work)
    done = _claude.run_cli(env, work, server, *args, "--output-format", "json", timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    assert server.unknown == [], [r.path for r in server.unknown]
    return result


def test_print_mode_completes(tmp_path: Path) -> None:
    steps = [
        Step(text="Hello from the scripted model.", input_tokens=5, cache_read_input_tokens=1_000)
    ]
    with AnthropicServer(steps) as server:
        result = run_cli(server, tmp_path, "-p", "hello")
        (request,) = server.requests_to("/v1/messages")
    assert result["result"] == "Hello from the scripted model."
    assert result["is_error"] is False
    assert result["usage"]["cache_read_input_tokens"] == 1_000
    assert request.body["stream"] is True
    assert request.headers["x-api-key"] == "test"


def test_tool_use_round_trip_with_cache_usage(tmp_path: Path) -> None:
    steps = [
        Step(
            tool_calls=[
                ToolUse("Bash", {"command": "echo ctxrelay-probe", "description": "probe"})
            ],
            input_tokens=5,
            cache_read_input_tokens=20_000,
            cache_creation_input_tokens=3_000,
        ),
        Step(text="The probe printed its marker.", input_tokens=7, cache_read_input_tokens=23_000),
    ]
    with AnthropicServer(steps) as server:
        result = run_cli(server, tmp_path, "-p", "run the probe", "--dangerously-skip-permissions")
        first, second = server.requests_to("/v1/messages")
    assert result["num_turns"] == 2
    assert result["result"] == "The probe printed its marker."
    usage = result["usage"]
    assert usage["cache_read_input_tokens"] == 43_000
    assert usage["cache_creation_input_tokens"] == 3_000
    # The CLI parsed our tool_use block, ran it, and sent the output back as a tool_result.
    call_id = next(
        block["id"]
        for message in second.body["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "tool_use"
    )
    results = [
        block
        for message in second.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block["tool_use_id"] == call_id
    ]
    assert "ctxrelay-probe" in json.dumps(results)
    assert any(t["name"] == "Bash" for t in first.body["tools"])


def test_background_subagent_routed_by_content(tmp_path: Path) -> None:
    """The main thread and a background subagent interleave; each gets its own steps."""
    task = "SUBAGENT-TASK-7f3: count the lines of big.txt and report"
    router = route_by_content(
        {
            task: [
                Step(
                    tool_calls=[
                        ToolUse("Bash", {"command": "wc -l < big.txt", "description": "count"})
                    ],
                    input_tokens=5,
                    cache_read_input_tokens=90_000,
                ),
                Step(
                    text="Subagent report: 500 lines.",
                    input_tokens=5,
                    cache_read_input_tokens=91_000,
                ),
            ]
        },
        default=[
            Step(
                tool_calls=[
                    ToolUse(
                        "Agent",
                        {
                            "description": "count lines",
                            "prompt": task,
                            "subagent_type": "general-purpose",
                        },
                    )
                ],
                input_tokens=3,
                cache_read_input_tokens=25_000,
            ),
        ],
    )
    with AnthropicServer(router) as server:
        result = run_cli(
            server,
            tmp_path,
            "-p",
            "count big.txt",
            "--dangerously-skip-permissions",
            prepare=lambda w: (w / "big.txt").write_text("x\n" * 500),
        )
        bodies = [json.dumps(r.body) for r in server.requests_to("/v1/messages")]
    assert result["is_error"] is False
    sub = [b for b in bodies if task in json.dumps(json.loads(b)["messages"][0])]
    assert len(sub) == 2  # the subagent's two requests, in its own order
    assert "500" in sub[1]  # its Bash result reached its second request
