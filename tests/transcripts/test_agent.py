"""The subagent reader on a fork's file, laid out as Claude Code 2.1.332 writes it: a
``fork-context-ref`` line, a copy of the parent's response that made the Agent call, the
fork's directive, then the fork's own responses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxrelay.transcripts import read_agent


def _response(message_id: str, context: int, tool: str) -> dict[str, Any]:
    usage = {"input_tokens": 5, "cache_creation_input_tokens": 100}
    usage["cache_read_input_tokens"] = context - 105
    block = {"type": "tool_use", "id": f"toolu_{message_id}", "name": tool, "input": {}}
    message = {"id": message_id, "model": "claude-sonnet-4-5", "content": [block]}
    return {"type": "assistant", "isSidechain": True, "message": {**message, "usage": usage}}


def _fork_file(path: Path, own: list[int]) -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "fork-context-ref", "agentId": "a1", "parentLastUuid": "u", "contextLength": 11},
        _response("msg_parent", 150_000, "Agent"),
        {
            "type": "user",
            "isSidechain": True,
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_msg_parent", "content": "x"},
                    {"type": "text", "text": "<fork-boilerplate>\nYou are a worker fork."},
                ],
            },
        },
    ]
    lines += [_response(f"msg_{i}", context, "Bash") for i, context in enumerate(own)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_fork_counts_its_own_turns_and_the_context_it_added(tmp_path: Path) -> None:
    reading = read_agent(str(_fork_file(tmp_path / "agent-a1.jsonl", [150_400, 151_000])))
    assert reading is not None
    assert reading.turns_used == 2  # the parent's response is not one of its turns
    assert reading.fork_base == 150_000
    assert reading.context_tokens == 151_000
    assert reading.context_added == 1_000


def test_a_fork_read_from_its_cursor_reads_the_same(tmp_path: Path) -> None:
    path = _fork_file(tmp_path / "agent-a1.jsonl", [150_400])
    cursor = str(tmp_path / "cursor.json")
    assert read_agent(str(path), cursor) is not None
    with path.open("a") as f:
        f.write(json.dumps(_response("msg_late", 152_000, "Bash")) + "\n")
    reading = read_agent(str(path), cursor)
    assert reading is not None
    assert (reading.turns_used, reading.fork_base, reading.context_added) == (2, 150_000, 2_000)


def test_an_ordinary_agent_has_no_fork_base(tmp_path: Path) -> None:
    path = tmp_path / "agent-a2.jsonl"
    path.write_text(json.dumps(_response("msg_1", 30_000, "Bash")) + "\n")
    reading = read_agent(str(path))
    assert reading is not None
    assert (reading.turns_used, reading.fork_base, reading.context_added) == (1, None, 30_000)


def _user(content: object) -> dict[str, Any]:
    return {"type": "user", "isSidechain": True, "message": {"role": "user", "content": content}}


def _coordinator(text: str) -> dict[str, Any]:
    """What SendMessage writes into the agent's file (Claude Code 2.1.332)."""
    record = _user(f"The coordinator sent a message while you were working:\n{text}")
    return {**record, "isMeta": True, "origin": {"kind": "coordinator"}}


def _final(message_id: str) -> dict[str, Any]:
    record = _response(message_id, 20_000, "Bash")
    record["message"]["content"] = [{"type": "text", "text": "Report: done."}]
    return record


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_continued_agent_counts_its_turns_from_the_continuation(tmp_path: Path) -> None:
    lines = [_user("do the job"), _response("m1", 20_000, "Bash"), _final("m2")]
    lines += [_coordinator("one more look"), _response("m3", 21_000, "Bash")]
    reading = read_agent(str(_write(tmp_path / "agent-c.jsonl", lines)))
    assert reading is not None
    assert reading.turns_used == 1


def test_a_message_that_reaches_a_running_agent_does_not_restart_its_count(
    tmp_path: Path,
) -> None:
    lines = [_user("do the job"), _response("m1", 20_000, "Bash")]
    lines += [_coordinator("also this"), _response("m2", 21_000, "Bash")]
    reading = read_agent(str(_write(tmp_path / "agent-r.jsonl", lines)))
    assert reading is not None
    assert reading.turns_used == 2
