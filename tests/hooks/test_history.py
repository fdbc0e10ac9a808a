"""``session_history`` over a chain of several agents: each window read with its own
host's reader (a Codex rollout, a Claude Code transcript, a Gemini session file), labelled
with its agent, oldest first, and nothing outside the chain."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from ctxrelay.hooks.chain import ChainLink
from ctxrelay.hooks.history import ChainHistory
from ctxrelay.runtime.tools import ToolResult
from ctxrelay.transcripts import codex_conversation, conversation_of
from tests.gemini._session import SessionFile
from tests.transcripts._codex_lines import Rollout


def _rollout(path: Path, thread: str, said: str) -> Path:
    rollout = Rollout(thread, cwd="/repo").turn("gpt-5.5").message("assistant", said)
    rollout.add(
        "response_item",
        {
            "type": "function_call",
            "name": "exec_command",
            "arguments": '{"cmd":"make"}',
            "call_id": "call_1",
        },
    )
    rollout.add(
        "response_item",
        {"type": "function_call_output", "call_id": "call_1", "output": "BUILD-OK-7"},
    )
    rollout.add(
        "response_item",
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "SECRET-RULES"}],
        },
    )
    return rollout.write(path)


def _transcript(path: Path, said: str) -> Path:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go on"}},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": said}]}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_codex_rollout_reads_as_a_conversation(tmp_path: Path) -> None:
    path = _rollout(tmp_path / "r.jsonl", "t-1", "We chose LALR.")
    pieces = [(m.kind, m.text) for m in codex_conversation(path)]
    assert ("assistant", "We chose LALR.") in pieces
    assert ("tool_call", '{"cmd":"make"}') in pieces
    assert ("tool_result", "BUILD-OK-7") in pieces
    assert not any("SECRET-RULES" in text for _, text in pieces)  # instructions left out
    assert list(conversation_of("opencode", path)) == []  # a host with no reader: nothing


def _call(history: ChainHistory, links: list[ChainLink], **args: object) -> ToolResult:
    async def run() -> ToolResult:
        return await history.call(args, links)

    return anyio.run(run)


def test_the_chain_spans_agents_each_read_by_its_own_reader(tmp_path: Path) -> None:
    links = [
        ChainLink("codex", "t-1", str(_rollout(tmp_path / "r1.jsonl", "t-1", "Codex: LALR"))),
        ChainLink("claude", "c-2", str(_transcript(tmp_path / "c2.jsonl", "Claude: PEG no"))),
        ChainLink("codex", "t-3", str(tmp_path / "r3.jsonl")),  # the current thread
    ]
    history = ChainHistory()
    try:
        listing = _call(history, links, action="list").content
        assert "window 1: Codex session t-1" in listing
        assert "window 2: Claude Code session c-2" in listing
        assert "window 3: Codex session t-3" in listing
        assert "Codex: LALR" in _call(history, links, action="search", query="LALR").content
        assert "BUILD-OK-7" in _call(history, links, action="search", query="BUILD").content
        assert "PEG" in _call(history, links, action="search", query="PEG").content
        floor = _call(history, links[1:], action="search", query="LALR").content
        assert floor == "no rows of earlier windows contain 'LALR'"  # not in the chain
    finally:
        history.close()


def test_a_gemini_link_is_searched_and_its_clears_are_windows(tmp_path: Path) -> None:
    gemini = SessionFile("g-2").user("pick a parser").gemini(900, said="Gemini: GLR wins")
    gemini.clear().user("resume from handoff-x.md").gemini(50, said="Gemini: resumed")
    path = gemini.write(tmp_path / "session-g.jsonl")
    links = [
        ChainLink("codex", "t-1", str(_rollout(tmp_path / "r1.jsonl", "t-1", "Codex: LALR"))),
        ChainLink("gemini", "g-2", str(path)),  # the current session, cleared once
    ]
    history = ChainHistory()
    try:
        listing = _call(history, links, action="list").content
        assert "window 1: Codex session t-1" in listing
        assert "window 2: Gemini CLI session g-2, window 1" in listing
        assert "window 3: Gemini CLI session g-2, window 2" in listing
        assert "GLR" in _call(history, links, action="search", query="GLR").content
        assert "LALR" in _call(history, links, action="search", query="LALR").content
        # the current window is in the model's context: not searched
        resumed = _call(history, links, action="search", query="resumed").content
        assert resumed == "no rows of earlier windows contain 'resumed'"
        # a Gemini session earlier in the chain: every window of it, then the current one
        later = [*links, ChainLink("claude", "c-3", str(tmp_path / "c3.jsonl"))]
        assert "Gemini: resumed" in _call(history, later, action="search", query="resumed").content
        assert "window 4: Claude Code session c-3" in _call(history, later, action="list").content
    finally:
        history.close()
