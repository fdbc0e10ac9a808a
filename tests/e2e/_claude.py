"""Driving the real Claude Code CLI (the one ``claude-agent-sdk`` bundles) in the
end-to-end tests: a temp ``HOME`` and project with the environment the CLI runs in, a run
against a scripted server (headless, or the interactive UI on a pseudo-terminal), the
plugin from the repository's marketplace, and the text of what the model was sent.

Every wait is on observable state (the screen, a recorded request, a file); a deadline
only bounds a failure."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli.claude import main as claude_main
from ctxrelay.testing import AnthropicServer
from tests.conftest import claude_cli

__all__ = [
    "BIN",
    "PROJECT_ROOT",
    "Terminal",
    "bodies",
    "claude_home",
    "install_plugin",
    "installed_home",
    "plugin_command",
    "run_cli",
    "skip_first_run_dialogs",
    "texts",
]

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # holds the plugin's marketplace
BIN = Path(sys.executable).parent  # ctxrelay and ctxrelay-hook of this environment
TIMEOUT = 90.0
"""How long a wait on the interactive UI may take before it fails."""

_ANSI = re.compile(rb"\x1b\[[0-9;?<>]*[a-zA-Z]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]")


def claude_home(
    tmp_path: Path, *, path: str | None = None, **extra: str
) -> tuple[Path, Path, dict[str, str]]:
    """A fresh ``HOME`` and project under ``tmp_path``, and the environment the CLI runs
    in there: a test key, no nonessential traffic, ctxrelay's state under ``tmp_path``,
    ``PATH`` (by default this environment's ``bin`` before the caller's), and ``extra``."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {
        "PATH": path or str(BIN) + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "IS_SANDBOX": "1",
        "CTXRELAY_STATE_DIR": str(tmp_path / "state"),
        "LANG": "C.UTF-8",
        **extra,
    }
    return home, project, env


def installed_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, dict[str, str]]:
    """:func:`claude_home` with ctxrelay installed into the project by ``ctxrelay claude
    install`` (this process reads the same ``HOME`` and state); the project is not
    trusted in the UI."""
    home, project, env = claude_home(tmp_path)
    for key in ("HOME", "CTXRELAY_STATE_DIR"):
        monkeypatch.setenv(key, env[key])
    assert claude_main(["install", "--project-dir", str(project), "--json"]) == 0
    return home, project, env


def skip_first_run_dialogs(home: Path, project: Path, env: Mapping[str, str]) -> None:
    """Answer the interactive UI's first-run dialogs ahead: onboarding, the API key and
    the project's trust."""
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]]},
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )


def run_cli(
    env: Mapping[str, str],
    cwd: Path,
    server: AnthropicServer,
    *args: str,
    stdin: str | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """The CLI with ``args`` in ``cwd``, talking to ``server``, run to its end."""
    return subprocess.run(
        [str(claude_cli()), *args],
        cwd=cwd,
        env={**env, "ANTHROPIC_BASE_URL": server.base_url},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def plugin_command(
    env: Mapping[str, str], project: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``claude ARGS`` (``plugin …``) in ``project``, without the API key: with one, each
    plugin command first waits on a network check that cannot succeed here."""
    return subprocess.run(
        [str(claude_cli()), *args],
        cwd=project,
        env={k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def install_plugin(env: Mapping[str, str], project: Path) -> None:
    """The plugin from the repository's marketplace, installed into ``project`` with the
    CLI's own commands."""
    for args in (
        ("plugin", "marketplace", "add", str(PROJECT_ROOT)),
        ("plugin", "install", "ctxrelay@ctxrelay", "--scope", "project"),
    ):
        done = plugin_command(env, project, *args)
        assert done.returncode == 0, done.stdout + done.stderr


def texts(content: Any) -> list[str]:
    """The texts of a message's content: its text blocks and its tool results."""
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


def bodies(server: AnthropicServer) -> list[dict[str, Any]]:
    """The bodies of the Messages requests ``server`` received, in order."""
    return [r.body for r in server.requests_to("/v1/messages") if isinstance(r.body, dict)]


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


class Terminal:
    """Claude Code's interactive UI on a pseudo-terminal."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.raw = bytearray()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the CLI on a terminal
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        self.alive = True

    def screen(self) -> str:
        """What was drawn so far, without the escape codes."""
        return _ANSI.sub(b"", bytes(self.raw)).decode("utf-8", "replace")

    def text(self) -> str:
        """The screen with each run of whitespace as one space."""
        return re.sub(r"\s+", " ", self.screen())

    def shows(self, text: str) -> bool:
        """Whether ``text`` was drawn (the UI moves the cursor where a space would be, so
        whitespace is not compared)."""
        return _flat(text) in _flat(self.screen())

    def wait(self, until: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
        """Read the terminal until ``until()`` holds; fail naming ``what`` at the deadline."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                shown = self.screen()[-3000:]
                raise AssertionError(f"timed out waiting for {what}; screen:\n{shown}")
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.raw.extend(os.read(self.fd, 65536))
                except OSError:
                    raise AssertionError(f"Claude Code exited waiting for {what}") from None

    def ready(self) -> None:
        """Wait for the prompt box (its footer hint is drawn with it; a UI restarted on a
        resumed session moves the cursor where the hint's space would be, so whitespace is
        not compared)."""
        mark = len(self.raw)
        self.wait(
            lambda: b"foragents" in re.sub(rb"\s+", b"", _ANSI.sub(b"", bytes(self.raw[mark:]))),
            "the prompt box",
        )

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter once the box shows it."""
        os.write(self.fd, text.encode())
        tail = text[-12:]
        self.wait(lambda: self.shows(tail), f"the typed text {tail!r}")
        os.write(self.fd, b"\r")

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            os.close(self.fd)
