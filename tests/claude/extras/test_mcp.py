"""``ctxrelay claude mcp``: the real server, started over stdio by the official MCP client
as Claude Code starts it (a child of the process whose session it serves), answering
``session_history`` over a handoff chain recorded by ``ctxrelay.claude._chain``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ctxrelay.claude.extras.mcp import TOOL_NAME, check_server, tool_schema
from ctxrelay.hooks import chain as _chain
from ctxrelay.runtime.tools import SessionHistory
from ctxrelay.store import HISTORY_RESULT_MAX_BYTES

pytestmark = pytest.mark.slow  # each test starts the server (the MCP SDK, the runtime)

CTXRELAY = str(Path(sys.executable).parent / "ctxrelay")


def _transcript(path: Path, session: str, *texts: str) -> str:
    lines: list[dict[str, Any]] = [{"type": "mode", "mode": "default", "sessionId": session}]
    for i, text in enumerate(texts):
        lines.append({"type": "user", "message": {"role": "user", "content": f"prompt {i}"}})
        lines.append(
            {
                "type": "assistant",
                "message": {"id": f"{session}-{i}", "content": [{"type": "text", "text": text}]},
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


@pytest.fixture
def chain_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """Three sessions of one process in one project: s0, then a plain /clear to s1, which
    hands off to s2 (the current one). The state is this test process's: the server it
    starts is its child, as Claude Code's server is Claude Code's."""
    project = tmp_path / "project"
    project.mkdir()
    state = tmp_path / "state"
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(state))
    t0 = _transcript(tmp_path / "s0.jsonl", "s0", "The s0 secret is PLUM-42.")
    t1 = _transcript(
        tmp_path / "s1.jsonl", "s1", "Reading the grammar.", "Decision: we chose the LALR parser."
    )
    t2 = _transcript(tmp_path / "s2.jsonl", "s2", "Resuming from the handoff.")
    pid = os.getpid()
    _chain.record_process(pid, project, _chain.ChainLink("claude", "s0", t0))
    _chain.record_process(
        pid, project, _chain.ChainLink("claude", "s1", t1)
    )  # a /clear without a handoff
    _chain.record_written(project, "handoff-1.md", _chain.ChainLink("claude", "s1", t1))
    _chain.record_process(pid, project, _chain.ChainLink("claude", "s2", t2))
    _chain.record_started(project, "handoff-1.md", _chain.ChainLink("claude", "s2", t2))
    env = {"CTXRELAY_STATE_DIR": str(state), "CLAUDE_PROJECT_DIR": str(project)}
    return project, env


def _calls(env: dict[str, str], cwd: Path, *calls: dict[str, Any]) -> tuple[Any, list[Any]]:
    async def talk() -> tuple[Any, list[Any]]:
        params = StdioServerParameters(
            command=CTXRELAY, args=["claude", "mcp"], env=env, cwd=str(cwd)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            results = [await session.call_tool(TOOL_NAME, call) for call in calls]
        return listed, results

    return anyio.run(talk)


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def test_the_tool_is_the_runtime_tools_schema_and_searches_only_the_chain(
    chain_state: tuple[Path, dict[str, str]],
) -> None:
    project, env = chain_state
    listed, (found, floor, listing, read, empty) = _calls(
        env,
        project,
        {"action": "search", "query": "LALR"},
        {"action": "search", "query": "PLUM-42"},
        {"action": "list"},
        {"action": "read", "window": 1},
        {"action": "search", "query": "Resuming"},  # the current session: in context
    )
    (tool,) = listed.tools
    assert tool.name == TOOL_NAME
    assert tool.input_schema == dict(tool_schema()) == dict(SessionHistory().input_schema)
    assert "Decision: we chose the LALR parser." in _text(found)
    assert not found.is_error
    assert _text(floor) == "no rows of earlier windows contain 'PLUM-42'"
    assert "window 1: Claude Code session s1" in _text(listing)
    assert "window 2: Claude Code session s2" in _text(listing)
    assert "s0" not in _text(listing)
    assert "Claude Code session s1" in _text(read)
    assert "Reading the grammar." in _text(read)
    assert _text(empty) == "no rows of earlier windows contain 'Resuming'"


def test_results_keep_the_runtime_bound(
    chain_state: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, env = chain_state
    big = _transcript(
        tmp_path / "big.jsonl", "b1", *(f"needle {i} " + "x" * 3000 for i in range(40))
    )
    _chain.record_process(
        os.getpid(), project, _chain.ChainLink("claude", "b1", big)
    )  # another /clear: a fresh chain
    _chain.record_written(project, "handoff-2.md", _chain.ChainLink("claude", "b1", big))
    _chain.record_process(
        os.getpid(), project, _chain.ChainLink("claude", "b2", str(tmp_path / "b2.jsonl"))
    )
    _chain.record_started(
        project, "handoff-2.md", _chain.ChainLink("claude", "b2", str(tmp_path / "b2.jsonl"))
    )
    _, (hits, old) = _calls(
        env,
        project,
        {"action": "search", "query": "needle", "limit": 500},
        {"action": "search", "query": "LALR"},
    )
    assert len(_text(hits).encode()) <= HISTORY_RESULT_MAX_BYTES
    assert "needle 39" in _text(hits)  # newest first
    assert 1 < _text(hits).count("] assistant: needle") < 40  # cut by the result bound
    assert _text(old) == "no rows of earlier windows contain 'LALR'"  # s1 is another chain


def test_a_process_with_no_recorded_session_gets_a_sentence(tmp_path: Path) -> None:
    env = {"CTXRELAY_STATE_DIR": str(tmp_path / "empty"), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    _, (result,) = _calls(env, tmp_path, {"action": "list"})
    assert result.is_error
    assert "SessionStart hook did not run" in _text(result)


def test_check_server_speaks_initialize_and_tools_list(tmp_path: Path) -> None:
    good = check_server(CTXRELAY, ["claude", "mcp"], cwd=tmp_path)
    assert (good.ok, good.tools) == (True, (TOOL_NAME,))
    bad = check_server(sys.executable, ["-c", "pass"], cwd=tmp_path)
    assert not bad.ok
    assert "did not answer initialize and tools/list" in bad.detail
