"""OpenCode's auto handoff on the real OpenCode, offline, with ctxrelay's plugin installed:
``opencode run`` crosses the slider, the agent is asked once inside the turn and writes
the handoff file, and the run goes on in a fresh session whose first request carries the
handoff and not the old conversation; a kill -9 at each step loses nothing and sends
nothing twice; ``session_history`` in the fresh session finds the earlier one."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.hooks import chain
from ctxrelay.hooks.handoff import consumed, injected_into, list_handoffs
from ctxrelay.opencode.config import set_values
from ctxrelay.opencode.setup.mcp import MODEL_TOOL_NAME as HISTORY_TOOL
from ctxrelay.testing import OpenAIServer, Script, Step, ToolUse
from tests.e2e._opencode import (
    OpenCodeHome,
    is_title_request,
    opencode_cli,
    opencode_home,
    title_router,
)

pytestmark = pytest.mark.e2e

SLIDER = 70_000
"""A step's prompt past the default slider (60% of the test model's 100,000)."""
OLD_WORK = "OLD-SESSION-SECRET: the parser lives in src/parse.py"
HANDOFF = (
    "# Handoff\n\n## Goal\nPort the parser.\n\n## State\nStep one done.\n\n"
    "## Next step\nRun the parser tests.\n"
)
FRESH_ANSWER = "Resumed: running the parser tests."
_PATH = re.compile(r"exactly this path:\n\n    (\S+)")


def _text(body: Mapping[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


def _user_texts(body: Mapping[str, Any]) -> list[str]:
    out = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def is_fresh(body: Mapping[str, Any]) -> bool:
    """The fresh session's first request: one user message, the resume prompt."""
    users = _user_texts(body)
    return len(users) == 1 and "Resume the work of the previous session" in users[0]


def history_result(body: Mapping[str, Any]) -> str | None:
    """The result of the fresh session's ``session_history`` call, in its next request."""
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return None


def handoff_router(body: Mapping[str, Any]) -> Step | None:
    """The old session works past the slider, is asked, writes the file at the path it
    was given; the fresh session answers; everything else ends its turn."""
    if is_title_request(body):
        return title_router(body)
    text = _text(body)
    if is_fresh(body):
        if not any(m.get("role") == "tool" for m in body["messages"]):
            search = ToolUse(HISTORY_TOOL, {"action": "search", "query": "OLD-SESSION-SECRET"})
            return Step(tool_calls=[search], input_tokens=2_000, output_tokens=9)
        return Step(text=FRESH_ANSWER, input_tokens=2_500, output_tokens=9)
    asked = _PATH.search(text.replace("\\n", "\n"))
    if asked and "Wrote file successfully" not in text:
        write = ToolUse("write", {"filePath": asked.group(1), "content": HANDOFF})
        return Step(tool_calls=[write], input_tokens=SLIDER + 2_000, output_tokens=80)
    if asked:
        return Step(text="Wrote the handoff file.", input_tokens=SLIDER + 3_000, output_tokens=6)
    calls = text.count('"tool_calls"')
    if calls < 2 and "port the parser" in text:  # two steps; the first crosses the slider
        bash = ToolUse("bash", {"command": f"echo {OLD_WORK!r}", "description": "Note"})
        return Step(tool_calls=[bash], input_tokens=SLIDER, output_tokens=30)
    return Step(text="Nothing left.", input_tokens=1_000, output_tokens=3)


def install_ctxrelay(home: OpenCodeHome) -> None:
    """The plugin and ``session_history``'s server in the project's ``.opencode/``, by
    ``ctxrelay opencode install`` (the README's route)."""
    assert main(["opencode", "install", "--project-dir", str(home.project)]) == 0


def _home(tmp_path: Path, server: OpenAIServer) -> OpenCodeHome:
    home = opencode_home(tmp_path, server)
    home.env["CTXRELAY_STATE_DIR"] = os.environ["CTXRELAY_STATE_DIR"]
    install_ctxrelay(home)
    set_values("project", home.project, mode="auto")
    return home


@pytest.fixture(autouse=True)
def _state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _requests(server: OpenAIServer) -> list[Mapping[str, Any]]:
    return [
        r.body for r in server.requests_to("/v1/chat/completions") if not is_title_request(r.body)
    ]


def test_opencode_run_goes_on_in_a_fresh_session_with_the_handoff(tmp_path: Path) -> None:
    with OpenAIServer(Script(router=handoff_router)) as server:
        home = _home(tmp_path, server)
        done = home.run("port the parser")
        assert done.returncode == 0, done.stderr[-3000:]
        bodies = _requests(server)
    (written,) = list_handoffs(home.project)
    assert written.read_text() == HANDOFF
    asks = [b for b in bodies if "Hand off now" in _text(b)]
    assert asks, "the agent was never asked"
    assert sum("Hand off now" in t for b in bodies for t in _user_texts(b)) == 0  # in a result
    fresh, searched = [b for b in bodies if is_fresh(b)]
    assert "Run the parser tests." in _text(fresh)
    assert OLD_WORK not in _text(fresh)  # the old conversation stayed behind
    assert HISTORY_TOOL in [t["function"]["name"] for t in fresh["tools"]]
    # session_history in the fresh session finds what the old session's tool printed
    found = history_result(searched)
    assert found is not None
    assert "src/parse.py" in found, found
    session = re.search(r"continues in session (ses_\w+)", done.stderr)
    assert session, done.stderr[-2000:]
    # the fresh session's turn ended inside the run: its answer is in the database, and
    # its idle settled the handoff
    assert consumed(home.project, written.name)
    link = chain.started_by(home.project, written.name)
    assert link is not None
    assert link.host == "opencode"
    assert link.session_id == session.group(1)
    writer = chain.written_by(home.project, written.name)
    assert writer is not None
    assert writer.session_id != link.session_id


class Gate:
    """Holds the first request ``which`` picks inside the server until the test lets it
    go (the process that sent it is killed meanwhile)."""

    def __init__(self, which: Callable[[Mapping[str, Any]], bool]) -> None:
        self.which = which
        self.arrived = threading.Event()
        self.go = threading.Event()

    def router(self, body: Mapping[str, Any]) -> Step | None:
        if self.which(body) and not self.arrived.is_set():
            self.arrived.set()
            self.go.wait(60)
        return handoff_router(body)


def _run_killed(home: OpenCodeHome, gate: Gate, prompt: str) -> None:
    """``opencode run PROMPT`` killed -9 (its whole process group) once ``gate`` holds."""
    proc = subprocess.Popen(
        [str(opencode_cli()), "run", prompt],
        cwd=home.project,
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not gate.arrived.wait(0.2):
            assert proc.poll() is None, "opencode run ended before the held request"
            assert time.monotonic() < deadline, "the held request never came"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
        gate.go.set()


def test_a_kill_before_the_fresh_sessions_first_response_loses_nothing(tmp_path: Path) -> None:
    gate = Gate(is_fresh)
    with OpenAIServer(Script(router=gate.router)) as server:
        home = _home(tmp_path, server)
        _run_killed(home, gate, "port the parser")
        (written,) = list_handoffs(home.project)
        assert written.read_text() == HANDOFF
        assert not consumed(home.project, written.name)  # no response: not started
        (given,) = injected_into(home.project, written.name)
        # the next start, a plain new session, is offered the handoff at its first prompt
        before = len(_requests(server))
        done = home.run("hello")
        assert done.returncode == 0, done.stderr[-3000:]
        first = _requests(server)[before]
        assert "Resume the work of the previous session" in _text(first)
        assert consumed(home.project, written.name)
        started = chain.started_by(home.project, written.name)
        assert started is not None
        assert started.session_id != given.session_id
        # used up: a later start is offered nothing, and nothing is sent twice
        before = len(_requests(server))
        assert home.run("again").returncode == 0
        assert "Resume the work" not in _text(_requests(server)[before])
    # the handoff went out at two sessions' starts: the killed fresh one, the next start
    starts = [b for b in _requests(server) if is_fresh(b) and history_result(b) is None]
    assert len(starts) == 2


def test_a_kill_while_the_file_is_written_hands_off_nothing(tmp_path: Path) -> None:
    # Killed while the write step's request is out: the reserved file was never written.
    gate = Gate(lambda body: bool(_PATH.search(_text(body).replace("\\n", "\n"))))
    with OpenAIServer(Script(router=gate.router)) as server:
        home = _home(tmp_path, server)
        _run_killed(home, gate, "port the parser")
        assert list_handoffs(home.project) == []
        before = len(_requests(server))
        assert home.run("hello").returncode == 0
        assert "Resume the work" not in _text(_requests(server)[before])
        assert not any(is_fresh(b) for b in _requests(server))


def test_continue_in_opencode_starts_it_from_any_handoff(tmp_path: Path) -> None:
    # a teammate's handoff (no record of it here): `ctxrelay handoff continue --in
    # opencode --print` runs `opencode run`, whose first prompt is given the file
    with OpenAIServer(Script(router=handoff_router)) as server:
        home = _home(tmp_path, server)
        path = home.project / ".ctxrelay" / "handoff" / "handoff-20261203T101500Z.md"
        path.parent.mkdir(parents=True)
        path.write_text(HANDOFF)
        argv = [sys.executable, "-m", "ctxrelay", "handoff", "continue", path.name]
        argv += ["--in", "opencode", "--print", "--project-dir", str(home.project)]
        done = subprocess.run(
            argv,
            cwd=home.project,
            env=home.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert FRESH_ANSWER in done.stdout
        (first, *_) = _requests(server)
    assert "Continue the work from the handoff file" in _text(first)
    assert "Run the parser tests." in _text(first)  # the file's content, given at its start
    assert consumed(home.project, path.name)
    started = chain.started_by(home.project, path.name)
    assert started is not None
    assert started.host == "opencode"
