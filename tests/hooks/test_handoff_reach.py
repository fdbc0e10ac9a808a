"""A handoff reaches only the session meant for it, through the hook commands each host's
install writes: the records live beside the files in the project, so another HOME (a
teammate, another machine, a CI run) is offered neither a used handoff nor another
person's unused one, in Claude Code or in Codex; the person who wrote it is offered it at
a plain start, and the offer line says what is true."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.setup.install import choose_commands
from ctxrelay.codex.setup.install import choose_command
from ctxrelay.hooks import chain, handoff
from ctxrelay.hooks.install.probe import run_as_host


@pytest.fixture(scope="module")
def commands() -> dict[str, str]:
    """Each host's hook command as its install chooses it (run on real payloads first)."""
    return {"claude": choose_commands().hook, "codex": choose_command()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def home(tmp_path: Path, who: str, mode: str = "auto") -> dict[str, str]:
    """The environment of a host run in a HOME of its own (its own state directory)."""
    base = tmp_path / who
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(base),
        "CTXRELAY_STATE_DIR": str(base / "state"),
        "XDG_CONFIG_HOME": str(base / "config"),
        "CODEX_HOME": str(base / "codex"),
        "CTXRELAY_MAIN_HANDOVER": mode,
    }


def start(command: str, project: Path, env: dict[str, str], session: str) -> dict[str, Any]:
    """A fresh session's ``SessionStart`` (``startup``) through the installed command;
    its answer (``{}`` for none)."""
    payload = {
        "hook_event_name": "SessionStart",
        "source": "startup",
        "session_id": session,
        "transcript_path": str(project.parent / f"{session}.jsonl"),
        "cwd": str(project),
        "model": "gpt-5.5",
    }
    ran = run_as_host(command, json.dumps(payload), cwd=project, env=env)
    assert (ran.returncode, ran.stderr) == (0, "")
    return json.loads(ran.stdout) if ran.stdout.strip() else {}


def written(project: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Path:
    """A handoff a Claude Code session of the person of ``env`` reserved and wrote."""
    monkeypatch.setenv("CTXRELAY_STATE_DIR", env["CTXRELAY_STATE_DIR"])
    path = handoff.new_handoff_path(project)
    path.write_text("# Handoff\n\n## Goal\nship it\n\n## Next step\nRun the tests.\n")
    chain.record_written(project, path.name, chain.ChainLink("claude", "w-1", "w-1.jsonl"))
    return path


def test_a_used_handoff_is_offered_to_no_fresh_home(
    commands: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = home(tmp_path, "writer")
    path = written(project, monkeypatch, writer)
    # The writer's own fresh session takes it and starts from it (its first request).
    context = start(commands["claude"], project, writer, "fresh-1")
    assert str(path) in context["hookSpecificOutput"]["additionalContext"]
    assert handoff.mark_consumed(project, path)
    chain.record_started(project, path.name, chain.ChainLink("claude", "fresh-1", "f.jsonl"))
    # Another HOME (a teammate, CI) in the same project: nothing, in either host, in
    # either mode; nor the writer's next start.
    for mode in ("auto", "manual"):
        for host, command in commands.items():
            assert start(command, project, home(tmp_path, "other", mode), f"{host}-x") == {}
    for host, command in commands.items():
        assert start(command, project, writer, f"{host}-y") == {}
    assert (project / ".ctxrelay" / "handoff" / "chain.json").is_file()  # beside the files


def test_another_persons_unused_handoff_is_theirs(
    commands: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = home(tmp_path, "writer", "manual")
    path = written(project, monkeypatch, writer)
    for host, command in commands.items():
        assert start(command, project, home(tmp_path, "other"), f"{host}-x") == {}
    assert not handoff.injected_into(project, path.name)
    # The writer's plain start in manual mode: the line to the person, and it is true.
    line = start(commands["claude"], project, writer, "fresh-1")["systemMessage"]
    assert "a handoff no session has continued from is waiting" in line
    assert str(path) in line
    # Codex injects at a start (it shows the person no line): the writer's thread only.
    note = start(commands["codex"], project, writer, "01a2331a-0000-7000-8000-00000000000f")
    assert str(path) in note["hookSpecificOutput"]["additionalContext"]
