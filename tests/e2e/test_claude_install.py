"""Both install routes against the real Claude Code CLI (the one ``claude-agent-sdk``
bundles) and the project's scripted server, with a ``PATH`` that holds no ctxrelay:

- ``ctxrelay claude install`` from a venv that is not on ``PATH``: the hooks run anyway
  (a ``cat`` is denied), ``doctor`` exits 0, and 1 once the install is broken;
- the plugin from the marketplace, with no ``ctxrelay-hook`` anywhere: the interactive
  UI tells the user in one line how to install it, and the session still works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli.claude import main as claude_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.conftest import claude_cli
from tests.e2e._claude import (
    Terminal,
    claude_home,
    install_plugin,
    installed_home,
    run_cli,
    skip_first_run_dialogs,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BARE_PATH = "/usr/bin:/bin"
MISSING = "ctxrelay: no ctxrelay-hook command found"


@pytest.fixture
def bare_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    home, project, env = claude_home(tmp_path, path=BARE_PATH)
    for key, value in env.items():
        if key != "ANTHROPIC_API_KEY":
            monkeypatch.setenv(key, value)
    assert shutil.which("ctxrelay-hook", path=BARE_PATH) is None
    assert shutil.which("ctxrelay", path=BARE_PATH) is None
    return home, project, env


def _headless(
    env: dict[str, str], project: Path, server: AnthropicServer, prompt: str
) -> subprocess.CompletedProcess[str]:
    return run_cli(
        env,
        project,
        server,
        "-p",
        prompt,
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "json",
        timeout=300,
    )


def test_an_install_from_a_venv_not_on_path_runs_the_hooks_and_doctor_proves_it(
    bare_env: tuple[Path, Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, project, env = bare_env
    # This interpreter's venv is the one install runs from; PATH does not have it.
    assert not any(Path(p) == Path(sys.executable).parent for p in env["PATH"].split(os.pathsep))
    assert claude_main(["install", "--project-dir", str(project), "--json"]) == 0
    (project / "notes.md").write_text("".join(f"step {i}\n" for i in range(1, 201)))
    read = ToolUse("Read", {"file_path": str(project / "notes.md")})

    # The hooks run: a second whole Read of the unchanged file is denied (the re-read
    # rule), which takes both the PostToolUse record of the first and the PreToolUse deny.
    def route(body: Mapping[str, Any]) -> Step:
        if not body.get("tools"):
            return Step(text="ok")  # the CLI's side requests
        reads = json.dumps(body.get("messages") or []).count('"tool_result"')
        return Step(text="Main: done.") if reads >= 2 else Step(tool_calls=[read])

    with AnthropicServer(route) as server:
        run = _headless(env, project, server, "read notes.md twice")
        sent = [
            json.dumps((r.body.get("messages") or [])[-1])
            for r in server.requests_to("/v1/messages")
            if isinstance(r.body, dict) and r.body.get("tools")
        ]
    assert run.returncode == 0, run.stderr[-2000:]
    assert any("ctxrelay guard: you already read" in m for m in sent), sent[-1][:2000]

    capsys.readouterr()
    assert claude_main(["doctor", "--project-dir", str(project), "--runs", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    assert {c["kind"] for c in report["checks"]} == {"hook", "statusline", "skill", "mcp"}

    # The venv install ran from is gone (moved, deleted): doctor says so and exits 1.
    settings = project / ".claude" / "settings.json"
    scripts = json.dumps(os.path.dirname(os.path.abspath(sys.executable)))[1:-1]
    text = settings.read_text()
    assert scripts in text
    settings.write_text(text.replace(scripts, str(project / "gone" / "bin")))
    assert claude_main(["doctor", "--project-dir", str(project), "--runs", "1", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert any("exited 127" in p for p in report["problems"])


def test_the_plugin_without_ctxrelay_hook_tells_the_user_and_the_session_works(
    bare_env: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = bare_env
    install_plugin(env, project)

    # The interactive UI: what the user sees when the session starts.
    skip_first_run_dialogs(home, project, env)
    with AnthropicServer(lambda body: Step(text="ok")) as server:
        ui_env = {**env, "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"}
        term = Terminal([str(claude_cli())], project, ui_env)
        try:
            term.wait(lambda: term.shows("then restart Claude Code."), "the note on the hook")
        finally:
            term.kill()
        screen = term.text()
    assert MISSING in screen, screen[-3000:]
    said = screen[screen.index(MISSING) : screen.index("then restart Claude Code.")]
    assert "pipx install" in said

    # Never a broken session: a prompt is answered, a tool runs, the hooks stay quiet.
    def route(body: Mapping[str, Any]) -> Step:
        if any(m.get("role") == "assistant" for m in body.get("messages") or []):
            return Step(text="Main: all done.")
        if not body.get("tools"):
            return Step(text="ok")
        return Step(tool_calls=[ToolUse("Bash", {"command": "echo hi > out.txt"})])

    with AnthropicServer(route) as server:
        run = _headless(env, project, server, "write a file")
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["result"] == "Main: all done."
    assert (project / "out.txt").read_text() == "hi\n"


def test_after_install_compact_is_still_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The snippet turns auto-compaction off; the user's own /compact stays.
    _, project, env = installed_home(tmp_path, monkeypatch)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["env"]["DISABLE_AUTO_COMPACT"] == "1"
    assert "DISABLE_COMPACT" not in settings["env"]
    with AnthropicServer(lambda body: Step(text="ok")) as server:
        first = _headless(env, project, server, "hello")
        assert first.returncode == 0, first.stderr[-2000:]
        session = json.loads(first.stdout)["session_id"]
        done = run_cli(
            env, project, server, "-p", "/compact", "--resume", session, "--output-format", "json"
        )
    said = done.stdout + done.stderr
    # With DISABLE_COMPACT, 2.1.332 answers "/compact isn't available in this environment."
    # under -p ("Unknown command: /compact" in the UI).
    assert "isn't available" not in said, said[-2000:]
    assert "Unknown command" not in said, said[-2000:]
