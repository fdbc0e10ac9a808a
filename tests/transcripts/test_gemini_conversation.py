"""A Gemini CLI session file read as a conversation for ``session_history``: prompts,
replies, tool calls and results, a record written twice read once, and one window per
stretch of the file between two clears."""

from __future__ import annotations

import json
from pathlib import Path

from ctxrelay.transcripts import (
    READERS,
    STARTED_RULES,
    Message,
    conversation_of,
    gemini_conversation,
    gemini_windows,
    windows_of,
)
from tests.gemini._session import SessionFile


def test_a_session_file_reads_as_a_conversation(tmp_path: Path) -> None:
    session = SessionFile().user("read a.txt").gemini(900, said="Reading it.", twice=True)
    path = session.write(tmp_path / "s.jsonl")
    pieces = list(gemini_conversation(path))
    assert pieces == [
        Message("user", "read a.txt"),
        Message("assistant", "Reading it."),  # once, though the record is written twice
        Message("tool_call", '{"file_path": "a.txt"}', "read_file", "read_file_1764741855559_0"),
        Message("tool_result", "A-TXT-CONTENT", call_id="read_file_1764741855559_0"),
    ]
    assert not any("<session_context>" in m.text for m in pieces)  # the CLI's, not said
    assert list(conversation_of("gemini", path)) == pieces
    assert READERS["gemini"] is gemini_conversation


def test_a_failed_call_is_an_error_result(tmp_path: Path) -> None:
    call = {
        "id": "c9",
        "name": "run_shell_command",
        "args": {"command": "make"},
        "result": [{"functionResponse": {"id": "c9", "response": {"error": "exit 2"}}}],
        "status": "error",
    }
    record = {"id": "g1", "type": "gemini", "content": [{"text": "ran it"}], "toolCalls": [call]}
    path = SessionFile().write(tmp_path / "s.jsonl")
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    assert list(gemini_conversation(path))[-1] == Message(
        "tool_result", "exit 2", call_id="c9", is_error=True
    )


def test_each_clear_starts_a_window(tmp_path: Path) -> None:
    session = SessionFile().user("first ask").gemini(900, said="first answer")
    session.clear().user("resume from handoff-1.md").gemini(40, said="second answer")
    path = session.write(tmp_path / "s.jsonl")
    windows = [[m.text for m in w] for w in gemini_windows(path)]
    assert windows == [
        ["first ask", "first answer"],
        ["resume from handoff-1.md", "second answer"],
    ]
    assert [[m.text for m in w] for w in windows_of("gemini", path)] == windows
    assert [m.text for m in gemini_conversation(path)] == [t for w in windows for t in w]
    # a host whose transcript is one window: its whole conversation, once
    assert windows_of("codex", tmp_path / "missing.jsonl") == [[]]
    assert list(gemini_windows(tmp_path / "missing.jsonl")) == []


def test_the_started_rule_is_the_hosts(tmp_path: Path) -> None:
    handoff = tmp_path / "handoff-1.md"
    session = SessionFile().user(f"resume from {handoff.name}")
    path = session.write(tmp_path / "s.jsonl")
    assert not STARTED_RULES["gemini"](str(path), handoff, None)  # no response yet
    session.gemini(40, said="on it").write(path)
    assert STARTED_RULES["gemini"](str(path), handoff, None)
