"""PreToolUse payloads shaped like those Claude Code sends (see the capture in
the shared ``corpora/claude-code-capture/hook-payloads.jsonl``)."""

from __future__ import annotations

import json
from typing import Any


def pre_tool_use(tool: str, tool_input: dict[str, Any], cwd: str, **extra: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": "505a7478-0c09-4225-8c2e-eb227889cf62",
        "transcript_path": "/nowhere/505a7478-0c09-4225-8c2e-eb227889cf62.jsonl",
        "cwd": cwd,
        "prompt_id": "6c94c9d2-58bc-4a4b-ba05-624663cd4799",
        "permission_mode": "bypassPermissions",
        "agent_id": "a0ccb5802f157f5c2",
        "agent_type": "general-purpose",
        "effort": {"level": "high"},
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_e60d6cf48fcd4e1eac35",
    }
    payload.update(extra)
    return payload


def bash(command: str, cwd: str) -> dict[str, Any]:
    return pre_tool_use("Bash", {"command": command, "description": "run"}, cwd)


def read(file_path: str, cwd: str, **bounds: Any) -> dict[str, Any]:
    return pre_tool_use("Read", {"file_path": file_path, **bounds}, cwd)


def response_line(call: str, context: int, model: str = "claude-sonnet-4-5") -> str:
    """A main-session transcript line: the response that made ``call``, at ``context``
    tokens (what the Read guard reads for the room left)."""
    record = {
        "type": "assistant",
        "sessionId": "505a7478-0c09-4225-8c2e-eb227889cf62",
        "message": {
            "id": "msg_read",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "tool_use", "id": call, "name": "Read", "input": {}}],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": context - 105,
                "output_tokens": 10,
            },
        },
    }
    return json.dumps(record) + "\n"
