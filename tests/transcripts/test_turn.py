"""The last turn's tool calls, read backwards, against real Claude Code transcripts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.triggers import completed_task_in
from ctxrelay.transcripts import last_turn, turn_tool_calls
from tests.conftest import corpus_path

CAPTURE = "corpora/claude-code-capture/projects/505a7478-0c09-4225-8c2e-eb227889cf62.jsonl"


def test_capture_turn_the_failed_todowrite_marks_nothing() -> None:
    path = corpus_path(CAPTURE)
    calls = turn_tool_calls(path)
    # Claude Code 2.1.197 rejected both TodoWrite calls ("not enabled"): only the Agent
    # call of that turn succeeded.
    assert [name for name, _ in calls] == ["Agent"]
    assert not completed_task_in(calls)
    facts = last_turn(path)
    assert facts.model is not None
    assert facts.context_tokens is not None
    assert facts.context_tokens > 0


def _forward(path: Path) -> list[str]:
    """The newest turn's successful calls, by reading the whole file forwards."""
    calls: list[tuple[str, str]] = []
    failed: set[str] = set()
    for raw in path.read_bytes().splitlines():
        try:
            record: Any = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("isSidechain") is True:
            continue
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            calls, failed = [], set()
            continue
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if record.get("type") == "user" and not record.get("isMeta"):
            is_prompt = isinstance(content, str) or (
                isinstance(content, list)
                and not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
                and any(isinstance(b, dict) and b.get("type") in ("text", "image") for b in content)
            )
            if is_prompt:
                calls, failed = [], set()
                continue
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if record.get("type") == "assistant" and b.get("type") == "tool_use":
                calls.append((str(b.get("id", "")), str(b.get("name"))))
            if b.get("type") == "tool_result" and b.get("is_error") is True:
                failed.add(str(b.get("tool_use_id", "")))
    out, seen = [], set()
    for call_id, name in calls:
        if call_id in failed or call_id in seen:
            continue
        seen.add(call_id)
        out.append(name)
    return out


def _spotter() -> list[Path]:
    root = corpus_path("corpora/claude-code-transcripts/spotter")
    return sorted(root.glob("*.jsonl"))


def test_backwards_equals_forwards_on_real_transcripts() -> None:
    paths = _spotter()
    assert paths
    for path in paths:
        assert [n for n, _ in turn_tool_calls(path)] == _forward(path), path.name


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.75])
def test_backwards_equals_forwards_at_any_point(tmp_path: Path, cut: float) -> None:
    for path in _spotter():
        lines = path.read_bytes().splitlines(keepends=True)
        part = tmp_path / path.name
        part.write_bytes(b"".join(lines[: int(len(lines) * cut)]))
        assert [n for n, _ in turn_tool_calls(part)] == _forward(part), (path.name, cut)


def test_missing_and_odd_files(tmp_path: Path) -> None:
    assert turn_tool_calls(tmp_path / "missing.jsonl") == ()
    assert turn_tool_calls(tmp_path) == ()  # a directory
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type":"user","message":{"content":"hi"}}\n{"type":"assist')
    assert turn_tool_calls(bad) == ()
    facts = last_turn(bad)
    assert facts.context_tokens is None
    assert facts.tool_calls == ()


def test_a_turn_found_in_the_hot_tail_loads_no_tail_reader(tmp_path: Path) -> None:
    # The Stop hook reads the last turn at the end of every turn. When the newest response
    # is in the hot tail, the reader from further back (_tail, whose records are
    # dataclasses: ~7 ms to import) stays unloaded; last_turn imports it only to look back.
    path = tmp_path / "t.jsonl"
    usage = {"input_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 995}
    message = {"id": "msg_1", "model": "claude-opus-4-8", "usage": usage}
    path.write_text(json.dumps({"type": "assistant", "message": message}) + "\n")
    full = ("ctxrelay.transcripts._tail", "ctxrelay.transcripts._records")
    code = (
        "import sys\n"
        "from ctxrelay.transcripts import last_turn\n"
        f"facts = last_turn({str(path)!r})\n"
        f"print(facts.context_tokens, [m for m in {full!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "1000 []"
