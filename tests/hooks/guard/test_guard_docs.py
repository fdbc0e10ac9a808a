"""``docs/guard.md`` shows the deny reasons as the guards produce them, for the files its
examples name (made here under a temporary folder shown as ``/p``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.claude.guard import bash as claude_bash
from ctxrelay.claude.guard import read as claude_read
from ctxrelay.codex import guard as codex_guard
from tests.claude.guard._payloads import response_line

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "guard.md"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("BASH_MAX_OUTPUT_LENGTH", raising=False)
    notes = "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(400))[:20_000]
    (tmp_path / "notes.md").write_text(notes)
    log = "".join(f"2026-01-01 INFO request {i} served in 12ms\n" for i in range(8000))
    (tmp_path / "big.log").write_text(log)
    (tmp_path / "dump.sql").write_text("INSERT INTO t VALUES (1, 'some row text here');\n" * 22_000)
    return tmp_path


def _shown(text: str | None, root: Path) -> str:
    assert text is not None
    return f"```text\n{text.replace(str(root), '/p')}\n```"


def test_the_claude_code_bash_reason(files: Path) -> None:
    reason = claude_bash.deny_reason("cat notes.md", str(files))
    assert _shown(reason, files) in GUIDE.read_text()


def test_the_codex_reason_as_the_model_reads_it(files: Path) -> None:
    reason = codex_guard.deny_reason("cat big.log", str(files), {"model": "gpt-5"})
    shown = f"Command blocked by PreToolUse hook: {reason}. Command: cat big.log"
    assert _shown(shown, files) in GUIDE.read_text()


def test_the_read_reason(files: Path) -> None:
    transcript = files / "t.jsonl"
    transcript.write_text(response_line("toolu_doc", 20_000))
    payload = {"session_id": "doc", "transcript_path": str(transcript), "tool_use_id": "toolu_doc"}
    tool_input = {"file_path": str(files / "dump.sql"), "allow_large": True}
    reason = claude_read.deny_reason(tool_input, str(files), payload)
    assert _shown(reason, files) in GUIDE.read_text()
