"""The re-read guard on the real CLI (bundled by ``claude-agent-sdk``), headless, against
the project's scripted server, with ``ctxrelay claude install`` in a temp project: a
second full Read of an unchanged file is denied, a Read after the file changed is not."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.e2e._claude import bodies
from tests.e2e.test_claude_handoff import claude, claude_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

__all__ = ["claude_env"]  # the fixture, used by name


def _results(body: Mapping[str, Any]) -> list[str]:
    """The tool results of the request, oldest first."""
    out: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


def test_a_repeated_full_read_is_denied_and_a_changed_files_read_is_not(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = claude_env
    notes = project / "notes.txt"
    notes.write_text("".join(f"NOTE-{i}\n" for i in range(40)))
    read = ToolUse("Read", {"file_path": str(notes)})
    change = ToolUse("Bash", {"command": f"echo NOTE-ADDED >> {notes}", "description": "add"})
    steps = [read, read, change, read]

    def route(body: Mapping[str, Any]) -> Step:
        done = len(_results(body))
        if done < len(steps):
            return Step(tool_calls=[steps[done]], input_tokens=20_000)
        return Step(text="Read it.", input_tokens=20_000)

    with AnthropicServer(route) as server:
        claude(env, project, server, "TASK-READ read the notes")
        requests = bodies(server)
    results = _results(requests[-1])
    assert len(results) == len(steps)
    first, again, _, after_change = results
    assert "NOTE-39" in first
    assert "you already read" in again
    assert str(notes) in again
    assert "NOTE-39" not in again
    assert "NOTE-ADDED" in after_change  # the changed file was read
