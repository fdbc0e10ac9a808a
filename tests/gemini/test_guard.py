"""The Gemini guard through the hook the CLI runs: a whole print of a file over the
CLI's own cut is denied with the bounded way in the reason, a page is allowed, and a
whole re-read of an unchanged file (by the shell or ``read_file``) is denied until the
file changes or the window ends."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import (
    GEMINI_PRINT_MAX_BYTES,
    GEMINI_PRINT_MAX_LINES,
    GEMINI_TOOL_OUTPUT_MAX_CHARS,
)
from ctxrelay.gemini import hook
from ctxrelay.gemini.guard import forget_reads
from tests.gemini._session import SESSION


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "proj"
    root.mkdir()
    (root / "big.txt").write_text("".join(f"line {i:06d}\n" for i in range(30_000)))
    (root / "small.txt").write_text("hello\n")
    return root


def answer(event: str, project: Path, tool: str, tool_input: dict[str, Any]) -> Any:
    payload = {
        "session_id": SESSION,
        "transcript_path": str(project / "session.jsonl"),
        "cwd": str(project),
        "hook_event_name": event,
        "timestamp": "2026-12-03T06:02:50.458Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def shell(project: Path, command: str, event: str = "BeforeTool") -> Any:
    return answer(event, project, "run_shell_command", {"command": command, "description": "x"})


def test_the_bound_is_under_the_clis_own_cut() -> None:
    assert GEMINI_PRINT_MAX_BYTES < GEMINI_TOOL_OUTPUT_MAX_CHARS == 8_000 + 32_000


@pytest.mark.parametrize(
    "command",
    [
        "cat big.txt",
        "cd . && cat -n big.txt",
        "tail -n +2 big.txt",
        "sed -n '1,5000p' big.txt",
    ],
)
def test_a_big_print_is_denied_with_the_bounded_way(project: Path, command: str) -> None:
    said = shell(project, command)
    assert said is not None
    assert said["decision"] == "deny"
    reason = said["reason"]
    assert "first 8,000 and last 32,000 characters" in reason
    assert f"end_line {GEMINI_PRINT_MAX_LINES}" in reason
    assert f"sed -n '1,{GEMINI_PRINT_MAX_LINES}p'" in reason


@pytest.mark.parametrize(
    "command", ["cat small.txt", "sed -n '1,400p' big.txt", "head -n 50 big.txt", "wc -l big.txt"]
)
def test_a_page_or_a_small_file_passes(project: Path, command: str) -> None:
    assert shell(project, command) is None


def test_a_whole_reread_of_an_unchanged_file_is_denied(project: Path) -> None:
    assert shell(project, "cat small.txt") is None
    assert shell(project, "cat small.txt", "AfterTool") is None
    said = shell(project, "cat small.txt")
    assert said["decision"] == "deny"
    assert "already read" in said["reason"]
    denied = answer("BeforeTool", project, "read_file", {"file_path": "small.txt"})
    assert denied["decision"] == "deny"
    ranged = {"file_path": "small.txt", "start_line": 1, "end_line": 1}
    assert answer("BeforeTool", project, "read_file", ranged) is None
    (project / "small.txt").write_text("changed, and longer\n")
    assert shell(project, "cat small.txt") is None


def test_a_read_file_counts_and_the_window_end_forgets(project: Path) -> None:
    assert answer("AfterTool", project, "read_file", {"file_path": "small.txt"}) is None
    assert shell(project, "cat small.txt")["decision"] == "deny"
    forget_reads(SESSION)
    assert shell(project, "cat small.txt") is None


def test_other_tools_and_bad_payloads_pass(project: Path) -> None:
    assert answer("BeforeTool", project, "write_file", {"file_path": "big.txt"}) is None
    out = io.StringIO()
    assert hook.main(io.StringIO("{not json"), out) == 0
    assert out.getvalue() == ""
