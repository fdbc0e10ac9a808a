"""One handoff chain across the real Claude Code and Codex CLIs, offline (each against
its scripted server): ``ctxrelay handoff continue`` starts either agent on a handoff
another person's session wrote, its start hook gives it the file, and its first
request or response uses it up, recorded with its agent."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.hooks import chain, handoff
from ctxrelay.hooks.state import owner
from ctxrelay.testing import AnthropicServer, OpenAIServer, Step
from ctxrelay.transcripts import injection_mark
from tests.e2e._claude import bodies, claude_home, skip_first_run_dialogs
from tests.e2e._claude import texts as claude_texts
from tests.e2e._codex import codex_home

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HANDOFF = "# Handoff\n\n## Goal\nShip the parser.\n\n## Next step\nRun make test.\n"
RESUME = "[ctxrelay] Resume the work"
CONTINUE = "[ctxrelay] Continue the work from the handoff file"


def codex_texts(body: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for item in body.get("input") or ():
        content = item.get("content") if isinstance(item, dict) else None
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
    return out


def written_by_someone_else(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A handoff another person's Claude Code session wrote (their own state directory)."""
    mine = os.environ["CTXRELAY_STATE_DIR"]
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "theirs"))
    path = handoff.new_handoff_path(project)
    path.write_text(HANDOFF)
    chain.record_written(project, path.name, chain.ChainLink("claude", "theirs-1", "t.jsonl"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", mine)
    assert handoff.latest_unconsumed(project, owner=owner()) is None  # not offered: theirs
    return path


def test_continue_in_codex_takes_another_persons_handoff_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(lambda body: Step(text="on it", input_tokens=2_000)) as server:
        _, project = codex_home(tmp_path, server, monkeypatch)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        path = written_by_someone_else(project, tmp_path, monkeypatch)
        argv = ["handoff", "continue", "--in", "codex", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        first = codex_texts(server.requests_to("/v1/responses")[0].body)
        note = [t for t in first if t.startswith(RESUME)]
        assert len(note) == 1
        assert str(path) in note[0]
        assert "written by a Claude Code session (theirs-1)" in note[0]
        assert any(t.startswith(CONTINUE) for t in first)
    assert handoff.consumed(project, path.name)
    started = chain.started_by(project, path.name)
    assert started is not None
    assert started.host == "codex"
    capsys.readouterr()


def test_continue_in_claude_code_takes_another_persons_handoff_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, project, env = claude_home(tmp_path)
    skip_first_run_dialogs(home, project, env)
    with AnthropicServer(lambda body: Step(text="on it")) as server:
        for key, value in {**env, "ANTHROPIC_BASE_URL": server.base_url}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "manual")  # continue injects anyway
        assert ctxrelay(["claude", "install", "--project-dir", str(project), "--json"]) == 0
        path = written_by_someone_else(project, tmp_path, monkeypatch)
        argv = ["handoff", "continue", "--in", "claude", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        sent = [b for b in bodies(server) if b.get("tools")]
        first = json.dumps(sent[0]["messages"])
        assert RESUME in first
        assert json.dumps(injection_mark(path))[1:-1] in first
        assert any(
            CONTINUE in t for m in sent[0]["messages"] for t in claude_texts(m.get("content"))
        )
    assert handoff.consumed(project, path.name)
    started = chain.started_by(project, path.name)
    assert started is not None
    assert started.host == "claude"
    capsys.readouterr()
