"""``ctxrelay handoff list | show | drop``: the project's handoffs across agents, with
who wrote each, who started from it, who holds it now (``continue`` runs the real
agents: ``tests/e2e/test_across_agents.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.cli.handoff import AGENTS
from ctxrelay.hooks import chain, handoff

CODEX = chain.ChainLink("codex", "01a2331a-aaaa", "/r/rollout-a.jsonl")
CLAUDE = chain.ChainLink("claude", "c-2", "/t/c-2.jsonl")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COLUMNS", "160")
    root = tmp_path / "repo"
    root.mkdir()
    return root


def _write(project: Path, by: chain.ChainLink) -> Path:
    path = handoff.new_handoff_path(project)
    path.write_text("# Handoff\n\n## Goal\nship it\n\n## Next step\nRun the tests.\n")
    chain.record_written(project, path.name, by)
    return path


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(["handoff", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_list_shows_the_chain_with_its_agents(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(project, CODEX)
    assert handoff.record_injected(project, first, CLAUDE)
    assert handoff.mark_consumed(project, first)
    chain.record_started(project, first.name, CLAUDE)
    second = _write(project, CLAUDE)
    rows = _json(capsys, "list", "--project-dir", str(project))
    assert [r["name"] for r in rows] == [first.name, second.name]
    assert rows[0]["writer"]["agent"] == "Codex"
    assert rows[0]["started"]["session_id"] == "c-2"
    assert rows[0]["status"] == "used by a Claude Code session (c-2)"
    assert rows[1]["status"] == "waiting"
    assert rows[1]["yours"] is True
    assert main(["handoff", "list", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert "a Codex session (01a2331a-aaaa)" in out
    assert "used by a Claude Code session (c-2)" in out
    assert "HandoffInfo(" not in out


def test_a_handoff_held_by_a_running_session_is_shown_so_and_not_continued(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(project, CODEX)
    running = subprocess.Popen(["sleep", "600"])
    try:
        assert handoff.record_injected(project, path, CLAUDE, pid=running.pid)
        row = _json(capsys, "show", "--project-dir", str(project))
        assert row["status"] == "given to a Claude Code session (c-2), not started yet"
        assert "Run the tests." in row["text"]
        assert main(["handoff", "continue", "--in", "codex", "--project-dir", str(project)]) == 1
        assert "no handoff that no session has started from or holds" in capsys.readouterr().err
        named = ["handoff", "continue", path.name, "--in", "codex", "--project-dir", str(project)]
        assert main(named) == 1
        assert "which still runs" in capsys.readouterr().err
    finally:
        running.kill()
        running.wait()
    # Its process is gone (killed before its first request): waiting again.
    assert _json(capsys, "show", "--project-dir", str(project))["status"] == "waiting"


def test_drop_sets_the_newest_waiting_one_aside_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(project, CODEX)
    assert _json(capsys, "drop", "--project-dir", str(project)) == {"dropped": str(path)}
    assert handoff.dropped(project, path.name)
    assert handoff.latest_unconsumed(project) is None
    assert main(["handoff", "drop", "--project-dir", str(project)]) == 1
    assert "no handoff that no session has started from" in capsys.readouterr().err
    assert main(["handoff", "drop", path.name, "--project-dir", str(project)]) == 1
    assert "is dropped already" in capsys.readouterr().err
    assert _json(capsys, "list", "--project-dir", str(project))[0]["status"] == "dropped"
    # The Claude Code host's older spelling does the same.
    second = _write(project, CLAUDE)
    assert main(["claude", "handoff", "drop", "--project-dir", str(project)]) == 0
    assert handoff.dropped(project, second.name)


def test_continue_names_an_agent_of_the_chain(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(AGENTS) <= set(chain.AGENTS)
    assert main(["handoff", "continue", "--in", "vim"]) == 2
    assert "choose from 'claude', 'codex'" in capsys.readouterr().err
