"""Driving the real Gemini CLI offline: a throwaway ``GEMINI_CLI_HOME`` whose settings
pick the API-key login, ``GOOGLE_GEMINI_BASE_URL`` pointing at ``ctxrelay.testing``'s
``GeminiServer``, a project folder, and ``gemini -p`` with stdin closed (the facts:
``docs/gemini-facts.md``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._codex import Tmux
from tests.gemini._cli import gemini_cli

MODEL = "gemini-2.5-pro"

USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        # A resumed session is deleted at the next start while retention runs (facts).
        "sessionRetention": {"enabled": False},
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
"""The user settings of every test home: no login, no updates, no telemetry."""


def gemini_home(
    tmp_path: Path,
    server: GeminiServer,
    monkeypatch: pytest.MonkeyPatch,
    *,
    trusted: bool = True,
) -> tuple[Path, Path]:
    """A fresh ``GEMINI_CLI_HOME`` (set in this process too, for ``ctxrelay gemini …``)
    with the user settings above, and a project folder beside it, trusted in the CLI's
    own ``trustedFolders.json`` when ``trusted`` (as a person would in the trust dialog);
    ctxrelay's own config and state go under ``tmp_path``. Returns (the ``.gemini`` user
    folder, the project)."""
    home = tmp_path / "gemini-home"
    user = home / ".gemini"
    user.mkdir(parents=True)
    (user / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    project = tmp_path / "project"
    project.mkdir()
    if trusted:
        (user / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "ctxrelay-state"))
    return user, project


def run_gemini(
    project: Path, prompt: str, *args: str, timeout: float = 300, approval: str = "yolo"
) -> subprocess.CompletedProcess[str]:
    """``gemini -p PROMPT --approval-mode APPROVAL -m MODEL --output-format stream-json``
    in ``project``, however it ends (the folder's trust is the CLI's own: never skipped
    here)."""
    return subprocess.run(
        [
            str(gemini_cli()),
            "-p",
            prompt,
            "--approval-mode",
            approval,
            "-m",
            MODEL,
            "--output-format",
            "stream-json",
            *args,
        ],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def events(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The stream-json events of a run that exited 0."""
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def session_files(user: Path) -> list[Path]:
    """The CLI's main session files under ``user`` (``tmp/<project>/chats/*.jsonl``)."""
    return sorted(user.glob("tmp/*/chats/session-*.jsonl"))


def function_responses(server: GeminiServer) -> list[dict[str, Any]]:
    """Every ``functionResponse`` the model was sent, once each (by call id), in order."""
    seen: dict[str, dict[str, Any]] = {}
    for request in server.model_requests():
        body = request.body if isinstance(request.body, dict) else {}
        for content in body.get("contents") or ():
            for part in content.get("parts") or ():
                answer = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(answer, dict):
                    seen.setdefault(str(answer.get("id") or len(seen)), answer)
    return list(seen.values())


HANDOFF = "# Handoff\n\n## Goal\nPort the parser.\n\n## Next step\nRun the parser tests.\n"
ASKED_PATH = re.compile(r"to exactly this path:\s+(\S+\.md)")
"""Where ctxrelay's ask names the reserved handoff file."""


def texts(content: Mapping[str, Any]) -> str:
    """The text parts of one request content, joined."""
    return "\n".join(str(p.get("text", "")) for p in content.get("parts") or ())


def handoff_router(steps: list[Step]) -> Any:
    """The old window's steps in order; the ask answered with a write of the file to the
    path it names, then one line; the fresh context answered once."""
    queue = list(steps)

    def route(body: Mapping[str, Any]) -> Step | None:
        contents = body.get("contents") or []
        last = texts(contents[-1]) if contents else ""
        asked = ASKED_PATH.search(last)
        if asked and contents[-1].get("role") == "user":
            call = ToolUse("write_file", {"file_path": asked.group(1), "content": HANDOFF})
            return Step(tool_calls=[call], input_tokens=705_000)
        if len(contents) == 1 and "Resume the work" in last:
            return Step(text="Resumed: running the parser tests.", input_tokens=6_000)
        return queue.pop(0) if queue else Step(text="ok", input_tokens=6_000)

    return route


_UI_ENV = ("GEMINI_CLI_HOME", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "CTXRELAY_STATE_DIR")


def start_ui(project: Path, socket: Path) -> Tmux:
    """The CLI's interactive UI (``gemini -m MODEL --yolo``) in ``project``, in tmux, at
    its prompt, with this process's test home (:func:`gemini_home`)."""
    env = [f"{k}={os.environ[k]}" for k in _UI_ENV]
    # The CLI starts no UI where `CI`, `CONTINUOUS_INTEGRATION` or any `CI_*` variable is
    # set (its `is-in-ci` check), as in a CI run of these tests: unset them.
    ci = [n for n in os.environ if n in ("CI", "CONTINUOUS_INTEGRATION") or n.startswith("CI_")]
    unset = [arg for name in ci for arg in ("-u", name)]
    argv = ["env", *unset, *env, str(gemini_cli()), "-m", MODEL, "--yolo"]
    tui = Tmux(argv, project, socket)
    try:
        tui.wait(lambda: tui.shows("Type your message"), "the prompt", timeout=180)
    except BaseException:
        tui.close()
        raise
    return tui


def slash(tui: Tmux, name: str, done: Callable[[], bool], what: str) -> None:
    """Run the UI's slash command ``name`` until ``done()`` holds. An Enter that comes
    while the command's suggestion list opens only completes the command (seen on
    0.61.0): the box still holds it then, so Enter is pressed again, at most three times."""
    tui.type(name)
    for _ in range(3):
        try:
            tui.wait(done, what, timeout=5)
        except AssertionError:
            if not tui.shows(f"* {name}"):
                raise  # not the swallowed Enter: something else went wrong
            tui.key("Enter")
            continue
        return
    tui.wait(done, what)


def install_auto(project: Path) -> None:
    """``ctxrelay gemini install`` into ``project`` and ``config --mode auto``."""
    assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) == 0
    assert ctxrelay(["gemini", "config", "--project-dir", str(project), "--mode", "auto"]) == 0
