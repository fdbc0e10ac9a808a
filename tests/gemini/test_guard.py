"""The Gemini guard through the hook the CLI runs: a print the CLI would hand the model
big is denied with a page in bytes in the reason, a small bounded read always passes,
and a read of lines already read from an unchanged file (by the shell or ``read_file``)
is denied until the file changes, the window ends, or the CLI itself removes the read's
result from the conversation (``/rewind``, its compression: the session file shows it)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import (
    GEMINI_TOOL_OUTPUT_MAX_CHARS,
    PRINT_BIG_BYTES,
    PRINT_PAGE_BYTES,
)
from ctxrelay.gemini import hook
from ctxrelay.gemini.guard import READ_FILE_MAX_LINES, forget_reads, host_output
from tests.gemini._session import SESSION, SessionFile

SESSIONS: dict[Path, SessionFile] = {}
"""Each test project's session file as the CLI has written it so far."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "proj"
    root.mkdir()
    SESSIONS[root] = SessionFile().user("go")
    SESSIONS[root].write(root / "session.jsonl")
    (root / "big.txt").write_text("".join(f"line {i:06d}\n" for i in range(30_000)))
    (root / "small.txt").write_text("hello\n")
    (root / "medium.txt").write_text("".join(f"line {i:06d}\n" for i in range(2_000)))
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
    session, path = SESSIONS[project], project / "session.jsonl"
    if event == "AfterTool":  # the CLI runs it before it writes the call's result
        session.call(tool, tool_input, "the output")
        path.write_bytes(session.text().encode()[: session.after_tool])
    else:
        session.write(path)
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    session.write(path)
    return json.loads(out.getvalue()) if out.getvalue() else None


def shell(project: Path, command: str, event: str = "BeforeTool") -> Any:
    return answer(event, project, "run_shell_command", {"command": command, "description": "x"})


def test_the_host_output_is_the_clis_own_cut() -> None:
    host = host_output()
    assert GEMINI_TOOL_OUTPUT_MAX_CHARS == 8_000 + 32_000
    assert host.delivered(30_000) == 30_000
    assert host.delivered(300_000) == GEMINI_TOOL_OUTPUT_MAX_CHARS
    assert not host.floods(PRINT_BIG_BYTES)
    assert host.floods(PRINT_BIG_BYTES + 1)


@pytest.mark.parametrize(
    "command",
    [
        "cat big.txt",
        "cd . && cat -n big.txt",
        "tail -n +2 big.txt",
        "sed -n '1,5000p' big.txt",
        "cat medium.txt",
    ],
)
def test_a_big_print_is_denied_with_a_page_in_bytes(project: Path, command: str) -> None:
    said = shell(project, command)
    assert said is not None
    assert said["decision"] == "deny"
    reason = said["reason"]
    assert "first 8,000 and last 32,000 characters" in reason
    assert f"at most {PRINT_PAGE_BYTES:,} bytes" in reason
    assert f"head -c {PRINT_PAGE_BYTES} " in reason or f"| head -c {PRINT_PAGE_BYTES}" in reason
    assert "grep -n PATTERN" in reason


def test_the_reason_says_what_the_model_would_get(project: Path) -> None:
    reason = shell(project, "cat big.txt")["reason"]
    size = (project / "big.txt").stat().st_size
    assert f"print {size:,} bytes" in reason
    assert f"you would get {GEMINI_TOOL_OUTPUT_MAX_CHARS:,} of them" in reason
    ranged = shell(project, "sed -n '200,5000p' big.txt")["reason"]
    assert f"sed -n '200,5000p' {project / 'big.txt'} | head -c {PRINT_PAGE_BYTES}" in ranged


@pytest.mark.parametrize(
    "command",
    [
        "cat small.txt",
        "sed -n '1,400p' big.txt",  # 400 short lines: 4,800 bytes, a page
        "head -n 50 big.txt",
        "head -c 4000 big.txt",
        "tail -n 100 big.txt",
        "wc -l big.txt",
        "grep -n 'line 0000' big.txt",
    ],
)
def test_a_small_bounded_read_passes(project: Path, command: str) -> None:
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
    assert answer("BeforeTool", project, "read_file", ranged)["decision"] == "deny"
    (project / "small.txt").write_text("changed, and longer\n")
    assert shell(project, "cat small.txt") is None


def test_a_range_already_read_is_denied_and_another_passes(project: Path) -> None:
    assert shell(project, "sed -n '1,100p' big.txt", "AfterTool") is None
    said = shell(project, "sed -n '10,50p' big.txt")
    assert said["decision"] == "deny"
    assert "lines 1 to 100" in said["reason"]
    inner = {"file_path": "big.txt", "start_line": 20, "end_line": 30}
    assert answer("BeforeTool", project, "read_file", inner)["decision"] == "deny"
    assert shell(project, "sed -n '90,200p' big.txt") is None
    assert shell(project, "head -n 100 big.txt")["decision"] == "deny"
    assert shell(project, "tail -n 5 big.txt") is None  # lines counted from the end


def test_an_open_read_file_covers_what_the_cli_shows(project: Path) -> None:
    # big.txt has 30,000 lines: read_file without an end shows the CLI's first lines only.
    assert answer("AfterTool", project, "read_file", {"file_path": "big.txt"}) is None
    last = READ_FILE_MAX_LINES
    assert shell(project, f"sed -n '{last - 50},{last}p' big.txt")["decision"] == "deny"
    assert shell(project, f"sed -n '{last - 50},{last + 50}p' big.txt") is None


def test_a_read_file_counts_and_the_window_end_forgets(project: Path) -> None:
    assert answer("AfterTool", project, "read_file", {"file_path": "small.txt"}) is None
    assert shell(project, "cat small.txt")["decision"] == "deny"
    forget_reads(SESSION)
    assert shell(project, "cat small.txt") is None


def test_a_read_the_cli_removed_is_no_reread(project: Path) -> None:
    session = SESSIONS[project]
    prompt = session.user("read it").lines[-2]["id"]
    assert answer("AfterTool", project, "read_file", {"file_path": "small.txt"}) is None
    assert shell(project, "cat small.txt")["decision"] == "deny"
    session.rewind(prompt)  # /rewind to before the read's turn
    assert shell(project, "cat small.txt") is None
    assert shell(project, "cat small.txt", "AfterTool") is None
    assert shell(project, "cat small.txt")["decision"] == "deny"
    session.compress()  # the CLI's compression summarized it away
    assert shell(project, "cat small.txt") is None


def test_a_read_the_cli_kept_through_a_compression_is_a_reread(project: Path) -> None:
    assert shell(project, "cat small.txt", "AfterTool") is None
    SESSIONS[project].compress(keep=2)  # the call and its result kept as they were
    assert shell(project, "cat small.txt")["decision"] == "deny"


def test_a_reread_is_allowed_when_the_session_file_cannot_tell(project: Path) -> None:
    assert shell(project, "cat small.txt", "AfterTool") is None
    del SESSIONS[project].lines[:]  # the session file now shorter than at the read
    assert shell(project, "cat small.txt") is None


def test_other_tools_and_bad_payloads_pass(project: Path) -> None:
    assert answer("BeforeTool", project, "write_file", {"file_path": "big.txt"}) is None
    out = io.StringIO()
    assert hook.main(io.StringIO("{not json"), out) == 0
    assert out.getvalue() == ""
