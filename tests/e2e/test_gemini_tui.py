"""The auto handoff in the Gemini CLI's interactive UI, in tmux, offline: one prompt
crosses the slider, the agent is asked once for the handoff file and writes it, the
context is cleared and the work continues from the file by itself, in the same session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.hooks.handoff import consumed, list_handoffs
from ctxrelay.testing import GeminiServer, Step
from tests.e2e._gemini import gemini_home, handoff_router, install_auto, start_ui, texts
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e


def test_the_ui_hands_off_by_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gemini_cli()  # skips (or fails) here when the CLI is not installed
    old = [
        Step(text="Step one of the port is done.", input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    with GeminiServer(handoff_router(old), utility=[]) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        install_auto(project)
        tui = start_ui(project, tmp_path / "tmux.sock")
        try:
            tui.type("port the parser")
            tui.wait(
                lambda: tui.shows("Resumed: running the parser tests."),
                "the fresh context's answer",
                timeout=240,
            )
            assert tui.shows("handed off to a fresh context")
            # the continuation's AfterAgent settles the handoff: wait for it, not for time
            (written,) = list_handoffs(project)
            tui.wait(lambda: consumed(project, written.name), "the handoff used up")
        finally:
            tui.close()
        bodies = [r.body for r in server.model_requests()]
    asks = [b for b in bodies if "Hand off now" in texts(b["contents"][-1])]
    assert len(asks) == 1
    fresh = [
        b
        for b in bodies
        if len(b["contents"]) == 1 and "Resume the work" in texts(b["contents"][0])
    ]
    assert len(fresh) == 1
    assert "Step one of the port is done." not in json.dumps(fresh[0]["contents"])
