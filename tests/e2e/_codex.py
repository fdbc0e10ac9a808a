"""Driving the real Codex CLI offline: a throwaway ``CODEX_HOME`` whose provider is the
Responses route of ``ctxrelay.testing``'s OpenAI server, a ``git init`` project, and
``codex exec --json`` with stdin closed (the facts: ``docs/codex-facts.md``)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.testing import OpenAIServer
from tests.codex._cli import codex_cli
from tests.conftest import need

MODEL = "gpt-5.5"
API_KEY_VARIABLE = "CTXRELAY_TEST_CODEX_KEY"


def provider_config(server: OpenAIServer) -> str:
    """A user ``config.toml`` that sends every request to ``server`` (no login needed)."""
    return (
        "# the test's own settings: install and uninstall must leave them as they are\n"
        f'model = "{MODEL}"\n'
        'model_provider = "local"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "\n"
        "[model_providers.local]\n"
        'name = "local"\n'
        f'base_url = "{server.base_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{API_KEY_VARIABLE}"\n'
    )


def codex_home(
    tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """A fresh ``CODEX_HOME`` (set in this process too, for ``ctxrelay codex …``) and a
    git project beside it; ctxrelay's own config and state go under ``tmp_path``."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(provider_config(server), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "ctxrelay-state"))
    monkeypatch.setenv(API_KEY_VARIABLE, "test")
    return home, project


SEEN_DIALOGS = """
[tui]
screen_reader_detection_done = true

[tui.model_availability_nux]
"gpt-6.1-sol" = 1

[projects."{project}"]
trust_level = "trusted"

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
"""


def tui_home(
    tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    """:func:`codex_home` for the interactive UI: its first-run dialogs answered, as
    Codex records them once the user did (the project trusted, the new-model
    announcement seen)."""
    home, project = codex_home(tmp_path, server, monkeypatch)
    with (home / "config.toml").open("a", encoding="utf-8") as config:
        config.write(SEEN_DIALOGS.format(project=project))
    return home, project


def exec_codex(project: Path, prompt: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``codex exec --json PROMPT`` in ``project``, however it ends."""
    return subprocess.run(
        [str(codex_cli()), "exec", "--json", *args, prompt],
        cwd=project,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_exec(project: Path, prompt: str, *args: str) -> list[dict[str, Any]]:
    """``codex exec --json PROMPT`` in ``project``: its JSON events (it must exit 0)."""
    done = exec_codex(project, prompt, *args)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def input_texts(body: Mapping[str, Any]) -> list[str]:
    """Every text of a Responses request's input items, in order."""
    out: list[str] = []
    for item in body.get("input") or ():
        content = item.get("content") if isinstance(item, dict) else None
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(part["text"])
    return out


def tool_outputs(server: OpenAIServer) -> list[str]:
    """Every ``function_call_output`` the model was sent, in order, once each."""
    seen: dict[str, str] = {}
    for request in server.requests_to("/v1/responses"):
        body = request.body if isinstance(request.body, dict) else {}
        for item in body.get("input") or ():
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item.get("output")
                seen.setdefault(
                    str(item.get("call_id")),
                    output if isinstance(output, str) else json.dumps(output),
                )
    return list(seen.values())


class Tmux:
    """Codex's interactive UI in a detached tmux session of its own (tmux answers the
    terminal queries the UI waits for; its own server socket under the test's folder)."""

    def __init__(self, argv: list[str], cwd: Path, socket: Path) -> None:
        if shutil.which("tmux") is None:
            need("CODEX", "tmux is not installed: the Codex TUI tests drive it in tmux")
        self.socket = socket
        env = " ".join(
            f"{k}={shlex.quote(v)}"
            for k, v in os.environ.items()
            if k
            in (
                "CODEX_HOME",
                API_KEY_VARIABLE,
                "CTXRELAY_STATE_DIR",
                "XDG_CONFIG_HOME",
                "PATH",
                "HOME",
            )
        )
        command = f"cd {shlex.quote(str(cwd))} && exec env {env} {shlex.join(argv)}"
        self._tmux("new-session", "-d", "-x", "160", "-y", "50", command)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p")

    def wait(self, until: Callable[[], bool], what: str, timeout: float = 120) -> None:
        """Poll the screen and the world until ``until()`` holds; fail naming ``what``."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.screen()}")
            time.sleep(0.2)

    def shows(self, text: str) -> bool:
        return text in self.screen()

    def type(self, text: str) -> None:
        """Type ``text``, then Enter apart (together they are taken as a paste), once the
        box shows it: counted, since an earlier prompt of the same words may be on screen."""
        before = self.screen().count(text)
        self._tmux("send-keys", "-l", text)
        self.wait(lambda: self.screen().count(text) > before, f"the typed text {text!r}")
        self._tmux("send-keys", "Enter")

    def command(self, name: str, done: Callable[[], bool], what: str) -> None:
        """Run the slash command ``name`` until ``done()`` holds. The command popup can
        take an Enter that comes as it opens (seen once in CI on 0.171.0): the box still
        holds the command then, so Enter is pressed again, at most three times."""
        self._tmux("send-keys", "-l", name)
        self.wait(lambda: self.shows(name), f"the typed command {name!r}")
        for _ in range(3):
            self._tmux("send-keys", "Enter")
            try:
                self.wait(done, what, timeout=5)
            except AssertionError:
                if not self.shows(f"› {name}"):
                    raise  # not the swallowed Enter: something else went wrong
                continue
            return
        self.wait(done, what)

    def key(self, name: str) -> None:
        self._tmux("send-keys", name)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], check=False)


def start_tui(project: Path, socket: Path) -> Tmux:
    """``codex --no-daemon`` in ``project`` (a folder Codex trusts), past the model
    announcement, at the prompt."""
    tui = Tmux([str(codex_cli()), "--no-daemon"], project, socket)
    tui.wait(lambda: tui.shows("Use existing model") or tui.shows("Ask Codex"), "the prompt")
    if tui.shows("Use existing model"):
        tui.key("2")
    tui.wait(lambda: tui.shows("Ask Codex") and not tui.shows("Use existing model"), "the prompt")
    return tui
