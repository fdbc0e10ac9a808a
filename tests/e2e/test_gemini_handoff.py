"""The Gemini CLI hands off by itself, offline (``ctxrelay gemini config --mode auto``):
at the slider the ``AfterAgent`` hook asks once, in the same turn, for the handoff file
at a reserved path; the model writes it; the next ``AfterAgent`` clears the context and
the CLI continues in a fresh one from the file. A run killed before the fresh context's
first response leaves the handoff for the next session, which gets it once."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.hooks.handoff import consumed, list_handoffs
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._gemini import events, gemini_home, run_gemini
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e

HANDOFF = "# Handoff\n\n## Goal\nPort the parser.\n\n## Next step\nRun the parser tests.\n"
PATH = re.compile(r"to exactly this path:\s+(\S+\.md)")


def _texts(content: Mapping[str, Any]) -> str:
    return "\n".join(str(p.get("text", "")) for p in content.get("parts") or ())


def _router(steps: list[Step]) -> Any:
    """The old window's steps in order; the ask answered with a write of the file to the
    path it names, then one line; the fresh context answered once."""
    queue = list(steps)

    def route(body: Mapping[str, Any]) -> Step | None:
        contents = body.get("contents") or []
        last = _texts(contents[-1]) if contents else ""
        asked = PATH.search(last)
        if asked and contents[-1].get("role") == "user":
            call = ToolUse("write_file", {"file_path": asked.group(1), "content": HANDOFF})
            return Step(tool_calls=[call], input_tokens=705_000)
        if len(contents) == 1 and "Resume the work" in last:
            return Step(text="Resumed: running the parser tests.", input_tokens=6_000)
        return queue.pop(0) if queue else Step(text="ok", input_tokens=6_000)

    return route


def _install(project: Path) -> None:
    assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) == 0
    assert ctxrelay(["gemini", "config", "--project-dir", str(project), "--mode", "auto"]) == 0


def test_auto_mode_hands_off_once_and_continues_in_a_fresh_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    old = [
        Step(text="Step one of the port is done.", input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    with GeminiServer(_router(old)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        _install(project)
        out = events(run_gemini(project, "port the parser"))
        bodies = [r.body for r in server.model_requests()]
        assert server.model_requests(stream=False) == []  # no compression by the CLI
    asks = [b for b in bodies if "Hand off now" in _texts(b["contents"][-1])]
    assert len(asks) == 1  # asked once
    fresh = [
        b
        for b in bodies
        if len(b["contents"]) == 1 and "Resume the work" in _texts(b["contents"][0])
    ]
    assert len(fresh) == 1
    text = _texts(fresh[0]["contents"][0])
    assert "Run the parser tests." in text  # the file's content, inline
    assert "Step one of the port is done." not in json.dumps(fresh[0]["contents"])
    (written,) = list_handoffs(project)
    assert written.read_text() == HANDOFF
    assert consumed(project, written.name)  # the fresh context's first response is in
    said = [e.get("content") for e in out if e["type"] == "message" and e["role"] == "assistant"]
    assert said[-1] == "Resumed: running the parser tests."


def test_a_kill_before_the_fresh_response_leaves_the_handoff_for_the_next_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    old = [
        Step(text="Step one of the port is done.", input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    with GeminiServer(_router(old)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        _install(project)
        # Hold the fresh context's request (the 4th), then kill the CLI.
        holds = [server.hold() for _ in range(4)]
        for hold in holds[:3]:
            hold.release()
        argv = [str(gemini_cli()), "-p", "port the parser", "--yolo", "-m", "gemini-2.5-pro"]
        proc = subprocess.Popen(
            argv,
            cwd=project,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            assert holds[3].arrived.wait(300)
            assert "Resume the work" in _texts((holds[3].body or {})["contents"][0])
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        (written,) = list_handoffs(project)
        assert not consumed(project, written.name)  # killed before its first response
        server.clear()
        events(run_gemini(project, "carry on"))
        first = server.model_requests()[0].body
        assert "Run the parser tests." in json.dumps(first["contents"])  # offered again
        assert consumed(project, written.name)
        server.clear()
        events(run_gemini(project, "and now?"))
        again = server.model_requests()[0].body
        assert "Run the parser tests." not in json.dumps(again["contents"])  # once only
