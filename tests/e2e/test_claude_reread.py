"""The guard on the real CLI (bundled by ``claude-agent-sdk``), headless, against the
project's scripted server, with ``ctxrelay claude install`` in a temp project: a second
Read of the same lines of an unchanged file is denied (``offset: 1`` too), other lines
and a Read after the file changed are not; a big ``cat`` under the installed cap is left
to Claude Code's own preview."""

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
    from_one = ToolUse("Read", {"file_path": str(notes), "offset": 1, "limit": 1000})
    change = ToolUse("Bash", {"command": f"echo NOTE-ADDED >> {notes}", "description": "add"})
    steps = [read, read, from_one, change, read]

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
    first, again, again_from_one, _, after_change = results
    assert "NOTE-39" in first
    assert "you already read" in again
    # The label Claude Code puts on every hook deny (docs/guard.md says what it means):
    # the JSON deny adds nothing else, not the hook's command line as exit 2 would.
    assert again.startswith("PreToolUse:Read hook error: ctxrelay guard: you already read")
    assert str(notes) in again
    assert "NOTE-39" not in again
    assert "you already read" in again_from_one  # offset 1 and a large limit: the same lines
    assert "NOTE-ADDED" in after_change  # the changed file was read


def test_a_big_cat_under_the_installed_cap_gets_claude_codes_preview(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = claude_env
    notes = project / "notes.md"
    notes.write_text("".join(f"- note {i:05d}: some text here\n" for i in range(800)))  # 23 KB
    steps = [ToolUse("Bash", {"command": "cat notes.md", "description": "show"})]

    def route(body: Mapping[str, Any]) -> Step:
        done = len(_results(body))
        if done < len(steps):
            return Step(tool_calls=[steps[done]], input_tokens=20_000)
        return Step(text="Read it.", input_tokens=20_000)

    with AnthropicServer(route) as server:
        claude(env, project, server, "TASK-CAT show the notes")
        requests = bodies(server)
    (shown,) = _results(requests[-1])
    assert "ctxrelay guard" not in shown  # not denied: Claude Code caps it itself
    assert "<persisted-output>" in shown
    # The preview, not 23 KB (a reminder that the MCP server's tool is now there can
    # follow it in the same result when the server connected meanwhile, under load).
    preview = shown.split("</persisted-output>", 1)[0]
    assert len(preview.encode()) < 2_600
