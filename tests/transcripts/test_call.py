"""The response that made a tool call (``call_response``): found by the call's id, waited
for while Claude Code has not written it yet, never waited for past the bound."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import CALL_LINE_WAIT_S
from ctxrelay.transcripts import call_response
from tests.transcripts._lines import assistant, user, write


def call_line(
    message_id: str, call: str, read: int, *, sidechain: bool = False, name: str = "Bash"
) -> dict[str, Any]:
    """One line of a response: its ``tool_use`` block ``call``, ``read`` cached tokens."""
    record = assistant(message_id, read=read, sidechain=sidechain)
    block = {"type": "tool_use", "id": call, "name": name, "input": {"command": "ls"}}
    record["message"]["content"] = [block]
    return record


def result(call: str, size: int = 10) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call, "content": "x" * size}]
    return {"type": "user", "message": {"role": "user", "content": content}}


def test_the_calls_response_is_read_even_when_a_sibling_is_newer(tmp_path: Path) -> None:
    # Parallel calls: one response, one line per block, and a large result of the first
    # call written before the second call's hook runs.
    path = write(
        tmp_path / "t.jsonl",
        [
            user("go"),
            call_line("msg_old", "toolu_old", 1_000),
            result("toolu_old"),
            call_line("msg_new", "toolu_a", 50_000),
            call_line("msg_new", "toolu_b", 50_000),
            result("toolu_a", size=300_000),
        ],
    )
    assert call_response(str(path), "toolu_b", wait_s=0) == (50_001, "claude-opus-4-6", "msg_new")
    assert call_response(str(path), "toolu_a", wait_s=0) == (50_001, "claude-opus-4-6", "msg_new")
    assert call_response(str(path), "toolu_old", wait_s=0) == (
        1_001,
        "claude-opus-4-6",
        "msg_old",
    )


def test_an_id_that_is_only_a_result_or_a_prefix_is_not_the_call(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [call_line("msg_1", "toolu_abcdef", 9_000), result("toolu_abc")],
    )
    assert call_response(str(path), "toolu_abc", wait_s=0) is None


def test_sidechain_lines_are_not_the_main_chains_but_are_an_agents(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [call_line("msg_1", "toolu_1", 9_000, sidechain=True)])
    assert call_response(str(path), "toolu_1", wait_s=0) is None
    assert call_response(str(path), "toolu_1", agent=True, wait_s=0) is not None


def test_a_half_written_line_is_waited_for(tmp_path: Path) -> None:
    line = json.dumps(call_line("msg_1", "toolu_1", 9_000)).encode()
    path = write(tmp_path / "t.jsonl", [user("go")], tail=line[:-5])
    assert call_response(str(path), "toolu_1", wait_s=0) is None
    with path.open("ab") as f:
        f.write(line[-5:] + b"\n")
    assert call_response(str(path), "toolu_1", wait_s=0) is not None


def _append_later(path: Path, records: list[dict[str, Any]], delay_s: float) -> threading.Timer:
    """Claude Code's batched write: ``records`` reach the file ``delay_s`` from now."""

    def append() -> None:
        with path.open("a", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in records)

    timer = threading.Timer(delay_s, append)
    timer.start()
    return timer


def test_a_line_written_150_ms_later_is_found(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [user("go"), call_line("msg_0", "toolu_0", 1_000)])
    path_text = str(path)
    timer = _append_later(path, [result("toolu_0"), call_line("msg_1", "toolu_1", 9_000)], 0.15)
    try:
        assert call_response(path_text, "toolu_1") == (9_001, "claude-opus-4-6", "msg_1")
    finally:
        timer.join()


def test_a_transcript_created_150_ms_later_is_found(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    timer = _append_later(path, [user("go"), call_line("msg_1", "toolu_1", 9_000)], 0.15)
    try:
        assert call_response(str(path), "toolu_1") is not None
    finally:
        timer.join()


def test_a_line_that_never_appears_costs_the_bound_and_no_more(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [user("go"), call_line("msg_0", "toolu_0", 1_000)])
    start = time.monotonic()
    assert call_response(str(path), "toolu_never") is None
    # A generous ceiling (a loaded machine), not a timing assertion: it gave up.
    assert time.monotonic() - start < CALL_LINE_WAIT_S + 5


def test_a_path_that_is_not_a_file_is_answered_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert call_response(str(fifo), "toolu_1", wait_s=60) is None
    assert call_response(str(tmp_path), "toolu_1", wait_s=60) is None
