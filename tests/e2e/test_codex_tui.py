"""``/clear`` in Codex's interactive UI continues from the handoff file: at the slider
the ask reaches the model inside the turn (``PostToolUse``) and it writes the file in
that turn; after
``/clear`` (a new thread, ``SessionStart`` source ``clear``) the first request carries
the note that points at it. Driven in tmux, offline, without the app-server daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import OpenAIServer
from tests.e2e._codex import input_texts as texts
from tests.e2e._codex import start_tui, tui_home
from tests.e2e.test_codex_handoff import ANSWER, ASK, HANDOFF, route

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RESUME = "[ctxrelay] Resume the work"


def test_clear_continues_from_the_handoff_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(route) as server:
        _, project = tui_home(tmp_path, server, monkeypatch)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()
        folder = project / ".ctxrelay" / "handoff"
        tui = start_tui(project, tmp_path / "tmux.sock")
        try:
            tui.type("BIG: a lot of work")
            tui.wait(lambda: tui.shows(ANSWER), "the handoff to be written and the answer")
            tui.wait(lambda: tui.shows("Worked for"), "the end of the turn")  # /clear waits
            files = sorted(folder.glob("handoff-*.md"))
            assert [f.read_text() for f in files] == [HANDOFF]
            # The ask reached the model inside the turn (PostToolUse), once.
            asks = [t for r in server.requests_to("/v1/responses") for t in texts(r.body)]
            assert len({t for t in asks if ASK in t}) == 1
            before = len(server.requests_to("/v1/responses"))
            tui.command("/clear", lambda: not tui.shows(ANSWER), "the cleared screen")
            tui.type("SMALL: carry on")

            def resumed() -> list[str]:
                later = server.requests_to("/v1/responses")[before:]
                return [t for r in later for t in texts(r.body) if t.startswith(RESUME)]

            tui.wait(lambda: bool(resumed()), "a request with the resume note")
        finally:
            tui.close()
    note = resumed()[0]
    assert str(files[0]) in note
    assert "Run make test." in note
