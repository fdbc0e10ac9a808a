"""OpenCode's auto handoff in its interactive UI, in tmux, offline: one prompt crosses the
slider, the agent is asked once and writes the handoff file, and the UI is moved to a
fresh session that starts from the file, calls ``session_history`` unasked and answers."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxrelay.hooks import chain
from ctxrelay.hooks.handoff import consumed, list_handoffs
from ctxrelay.opencode.setup.mcp import MODEL_TOOL_NAME as HISTORY_TOOL
from ctxrelay.testing import OpenAIServer, Script
from tests.conftest import need
from tests.e2e._opencode import opencode_cli
from tests.e2e.test_opencode_handoff import (
    FRESH_ANSWER,
    OLD_WORK,
    _home,
    _requests,
    handoff_router,
    history_result,
    is_fresh,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


class Screen:
    """OpenCode's UI in a detached tmux session of its own."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], socket: Path) -> None:
        if shutil.which("tmux") is None:
            need("OPENCODE", "tmux is not installed: the OpenCode UI test drives it in tmux")
        self.socket = socket
        words = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k != "TERM")
        command = f"cd {shlex.quote(str(cwd))} && exec env {words} TERM=xterm-256color "
        self._tmux("new-session", "-d", "-x", "140", "-y", "45", command + shlex.join(argv))

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def shows(self, text: str) -> bool:
        return text in self._tmux("capture-pane", "-p")

    def wait(self, until: Callable[[], bool], what: str, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                screen = self._tmux("capture-pane", "-p")
                raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")
            time.sleep(0.2)

    def type(self, text: str) -> None:
        """Type ``text``, then Enter apart (together they are taken as a paste)."""
        self._tmux("send-keys", "-l", text)
        self.wait(lambda: self.shows(text), f"the typed text {text!r}", timeout=30)
        self._tmux("send-keys", "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], check=False)


def test_the_ui_moves_to_the_fresh_session(tmp_path: Path) -> None:
    with OpenAIServer(Script(router=handoff_router)) as server:
        home = _home(tmp_path, server)
        ui = Screen([str(opencode_cli())], home.project, home.env, tmp_path / "tmux.sock")
        try:
            ui.wait(lambda: ui.shows("Ask anything"), "the prompt")
            ui.type("port the parser")
            # The fresh session's first prompt shows before its answer (which, long, may
            # scroll it away): each is waited for in turn.
            ui.wait(lambda: ui.shows("Resume the work of the previous session"), "its prompt")
            ui.wait(lambda: ui.shows(FRESH_ANSWER), "the fresh session's answer")
            assert not ui.shows("port the parser")  # the old session's prompt: off the screen
            (written,) = list_handoffs(home.project)
            ui.wait(lambda: consumed(home.project, written.name), "the handoff used up", 60)
        finally:
            ui.close()
        bodies = _requests(server)
    fresh, searched = [b for b in bodies if is_fresh(b)]
    assert OLD_WORK not in json.dumps(fresh["messages"])
    assert HISTORY_TOOL in [t["function"]["name"] for t in fresh["tools"]]
    found = history_result(searched)
    assert found is not None
    assert "src/parse.py" in found  # session_history ran with no permission asked
    started = chain.started_by(home.project, written.name)
    assert started is not None
    assert started.host == "opencode"
