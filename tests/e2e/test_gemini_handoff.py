"""The Gemini CLI hands off by itself, offline (``ctxrelay gemini config --mode auto``):
at the slider the ``AfterAgent`` hook asks once, in the same turn, for the handoff file
at a reserved path; the model writes it; the next ``AfterAgent`` clears the context and
the CLI continues in a fresh one from the file. A run killed before the fresh context's
first response leaves the handoff for the next session, which gets it once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from ctxrelay.hooks.handoff import consumed, list_handoffs
from ctxrelay.testing import GeminiServer, Step
from tests.e2e._gemini import (
    HANDOFF,
    events,
    gemini_home,
    handoff_router,
    install_auto,
    run_gemini,
    texts,
)
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e


def test_auto_mode_hands_off_once_and_continues_in_a_fresh_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    old = [
        Step(text="Step one of the port is done.", input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    with GeminiServer(handoff_router(old)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        install_auto(project)
        out = events(run_gemini(project, "port the parser"))
        bodies = [r.body for r in server.model_requests()]
        assert server.model_requests(stream=False) == []  # no compression by the CLI
    asks = [b for b in bodies if "Hand off now" in texts(b["contents"][-1])]
    assert len(asks) == 1  # asked once
    fresh = [
        b
        for b in bodies
        if len(b["contents"]) == 1 and "Resume the work" in texts(b["contents"][0])
    ]
    assert len(fresh) == 1
    text = texts(fresh[0]["contents"][0])
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
    with GeminiServer(handoff_router(old)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        install_auto(project)
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
            assert "Resume the work" in texts((holds[3].body or {})["contents"][0])
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        (written,) = list_handoffs(project)
        assert not consumed(project, written.name)  # killed before its first response
        server.clear()
        done = run_gemini(project, "carry on")
        events(done)
        first = server.model_requests()[0].body
        offered = "Run the parser tests." in json.dumps(first["contents"])
        assert offered, done.stderr[-3000:]  # offered again
        assert consumed(project, written.name)
        server.clear()
        events(run_gemini(project, "and now?"))
        again = server.model_requests()[0].body
        assert "Run the parser tests." not in json.dumps(again["contents"])  # once only
