"""The forward pass reads a response's line whatever its content holds, in any key
order, and a truncated one as malformed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxrelay.transcripts import Usage, scan
from tests.transcripts._lines import dumps, write


def _line(message_id: str, content: list[Any], *, output: int = 5, **top: Any) -> dict[str, Any]:
    """An assistant line in Claude Code 2.1's key order (content before usage)."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "sessionId": "s-1",
        "version": "2.1.39",
        "message": {
            "model": "claude-opus-4-6",
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 3,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 1000,
                "cache_creation": {"ephemeral_1h_input_tokens": 100},
                "output_tokens": output,
            },
        },
        "requestId": f"req-{message_id}",
        "type": "assistant",
        "timestamp": "2026-02-10T21:11:59.186Z",
        **top,
    }


_TRICKY = [
    # The splice's byte patterns inside strings (escaped) and inside nested objects.
    [{"type": "text", "text": 'a "content":[ b ],"stop_reason": c "message":{ d'}],
    [{"type": "tool_use", "id": "t1", "name": "x", "input": {"content": [1, 2]}}],
    [
        {
            "type": "tool_use",
            "id": "t2",
            "name": "x",
            "input": {"items": [], "stop_reason": "fake", "usage": {"output_tokens": 99}},
        }
    ],
    [{"type": "tool_use", "id": "t3", "name": "x", "input": {"message": {"content": []}}}],
    [{"type": "text", "text": '\\"],\\"stop_reason\\":'}],
    [{"type": "text", "text": "unicode \u00e9\u4e2d\U0001f600 and \\u escapes"}],
    [],
]


@pytest.mark.parametrize("content", _TRICKY, ids=range(len(_TRICKY)))
def test_any_content_reads_the_same_usage(tmp_path: Path, content: list[Any]) -> None:
    path = write(tmp_path / "t.jsonl", [_line("m1", content), _line("m1", content, output=9)])
    transcript = scan(path)
    assert transcript.requests == 1
    assert transcript.responses[0].usage == Usage(3, 100, 1000, 9, 100)
    assert transcript.request_ids == {"m1": "req-m1"}


def test_a_response_whose_content_is_not_json_is_malformed(tmp_path: Path) -> None:
    good = dumps(_line("m1", [{"type": "text", "text": "hi"}]))
    bad = dumps(_line("m2", [{"type": "text", "text": "hi"}])).replace(
        b'"content":[', b'"content":["'
    )
    path = write(tmp_path / "t.jsonl", [good, bad])
    transcript = scan(path)
    assert ([r.message_id for r in transcript.responses], transcript.malformed_lines) == (
        ["m1"],
        1,
    )


def test_other_key_orders_read_the_same(tmp_path: Path) -> None:
    # Claude Code 2.1.197 puts sessionId and version after the message.
    record = _line("m1", [{"type": "text", "text": "hi"}])
    moved = {k: v for k, v in record.items() if k not in ("sessionId", "version")}
    moved.update(sessionId="s-2", version="2.1.197", agentId="a1")
    path = write(tmp_path / "t.jsonl", [moved])
    transcript = scan(path)
    assert (transcript.session_id, transcript.version) == ("s-2", "2.1.197")
    assert transcript.responses[0].agent_id == "a1"


def test_a_truncated_response_is_malformed_and_loads_no_json(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [_line("m1", [])], tail=dumps(_line("m2", []))[:-20])
    transcript = scan(path)
    assert transcript.requests == 1
    assert transcript.malformed_lines == 1
