"""``reply_written``: the Stop hook's wait for the turn's last reply, by an exact rule
(the newest ``assistant`` line of the turn has the reply's text), whatever the reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.transcripts._hot import reply_written

PROMPT = "prompt-2"
SHORT = 0.05  # the bound of a look that must fail: a failure's deadline, not a sync


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def assistant(text: str, *, tool: bool = False) -> str:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}})
    return line({"type": "assistant", "message": {"role": "assistant", "content": content}})


def user(prompt_id: str, content: object = "go on") -> str:
    return line(
        {"type": "user", "promptId": prompt_id, "message": {"role": "user", "content": content}}
    )


REPLIES = ["Done.", "✓", '"quoted" reply', "Résumé: fertig — 完成", "ok", "All done here now."]


@pytest.mark.parametrize("reply", REPLIES)
def test_the_reply_is_found_once_it_is_the_turns_newest_line(tmp_path: Path, reply: str) -> None:
    path = tmp_path / "t.jsonl"
    # The previous turn ended with the same words; this turn's prompt came after.
    path.write_text(user("prompt-1") + assistant(reply) + user(PROMPT))
    assert reply_written(str(path), reply, PROMPT, wait_s=SHORT) is False
    # A response of this turn with the same text that called a tool is not the end.
    with path.open("a") as f:
        f.write(assistant(reply, tool=True) + user(PROMPT, [{"type": "tool_result"}]))
    assert reply_written(str(path), reply, PROMPT, wait_s=SHORT) is False
    with path.open("a") as f:
        f.write(assistant(reply))
    assert reply_written(str(path), reply, PROMPT) is True


def test_a_different_newest_reply_or_no_file_is_not_the_reply(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(user(PROMPT) + assistant("All done here now."))
    assert reply_written(str(path), "All done here now.", PROMPT) is True
    assert reply_written(str(path), "  All done here now.\n") is True  # trimmed, as sent
    assert reply_written(str(path), "Something else.", PROMPT, wait_s=SHORT) is False
    assert reply_written(str(tmp_path / "missing.jsonl"), "Done.", wait_s=SHORT) is False


def test_subagent_lines_inline_are_not_the_main_reply(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    side = json.loads(assistant("Done."))
    side["isSidechain"] = True
    path.write_text(user(PROMPT) + line(side))
    assert reply_written(str(path), "Done.", PROMPT, wait_s=SHORT) is False
