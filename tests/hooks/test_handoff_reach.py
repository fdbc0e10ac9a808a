"""A handoff reaches only the session meant for it, through the hook commands each host's
install writes: the records live beside the files in the project, so another HOME (a
teammate, another machine, a CI run) is offered neither a used handoff nor another
person's unused one, in Claude Code or in Codex; the person who wrote it is offered it at
a plain start, and the offer line says what is true."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.setup.install import choose_commands
from ctxrelay.codex.setup.install import choose_command
from ctxrelay.hooks import chain, handoff
from ctxrelay.hooks.install.probe import run_as_host
from tests.transcripts._codex_lines import Rollout


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


def _payload(project: Path, session: str) -> str:
    return json.dumps(
        {
            "hook_event_name": "SessionStart",
            "source": "startup",
            "session_id": session,
            "transcript_path": str(project.parent / f"{session}.jsonl"),
            "cwd": str(project),
            "model": "gpt-5.5",
        }
    )


def start(command: str, project: Path, env: dict[str, str], session: str) -> dict[str, Any]:
    """A fresh session's ``SessionStart`` (``startup``) through the installed command;
    its answer (``{}`` for none)."""
    ran = run_as_host(command, _payload(project, session), cwd=project, env=env)
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


def _codex_thread(n: int) -> str:
    return f"01a2331a-0000-7000-8000-{n:012d}"


def test_two_starts_at_once_of_either_agent_one_takes_it(
    commands: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code and Codex started at the same moment on one unused handoff, each in a
    process that keeps running: exactly one is given it; the other is offered nothing."""
    writer = home(tmp_path, "writer")
    path = written(project, monkeypatch, writer)
    claude_process = subprocess.Popen(["sleep", "600"])  # the Claude Code that runs
    another = subprocess.Popen(["sleep", "600"])  # a second Claude Code
    try:
        env = {**writer, "CLAUDE_PID": str(claude_process.pid)}
        runs = [
            subprocess.Popen(
                ["/bin/sh", "-c", command],
                cwd=project,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for command in (commands["claude"], commands["codex"])
        ]
        sessions = ["claude-1", _codex_thread(1)]
        outs = [
            run.communicate(_payload(project, session), timeout=60)[0]
            for run, session in zip(runs, sessions, strict=True)
        ]
        given = [session for session, out in zip(sessions, outs, strict=True) if str(path) in out]
        assert len(given) == 1
        assert [x.session_id for x in handoff.injected_into(project, path.name)] == given
        # Nor does a later start, of either agent, take it while the first runs.
        later = {**writer, "CLAUDE_PID": str(another.pid)}
        for host, command in commands.items():
            assert start(command, project, later, f"{host}-later") == {}
    finally:
        for process in (claude_process, another):
            process.kill()
            process.wait()


def test_a_start_killed_before_its_first_response_leaves_it_to_either_agent(
    commands: dict[str, str], project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = home(tmp_path, "writer")
    path = written(project, monkeypatch, writer)
    killed = subprocess.Popen(["sleep", "600"])
    env = {**writer, "CLAUDE_PID": str(killed.pid)}
    assert str(path) in json.dumps(start(commands["claude"], project, env, "claude-1"))
    assert start(commands["codex"], project, writer, _codex_thread(2)) == {}  # Claude's now
    killed.kill()  # before its first request: the transcript has none
    killed.wait()
    note = start(commands["codex"], project, writer, _codex_thread(3))
    text = note["hookSpecificOutput"]["additionalContext"]
    assert str(path) in text
    assert "written by a Claude Code session (w-1)" in text  # the writer, by its agent
    # That thread's first response is in its rollout; no Codex hook ran since (killed).
    rollout = project.parent / f"{_codex_thread(3)}.jsonl"
    Rollout(_codex_thread(3), cwd=str(project)).turn("gpt-5.5").response("r", 9_000).write(rollout)
    # A Claude Code start settles it by Codex's rule: used up, offered to no one.
    assert start(commands["claude"], project, {**writer, "CLAUDE_PID": ""}, "claude-2") == {}
    assert handoff.consumed(project, path.name)
    started = chain.started_by(project, path.name)
    assert started is not None
    assert (started.host, started.session_id) == ("codex", _codex_thread(3))
