"""The re-read rule after the Gemini CLI itself removed a read from the conversation, in
its interactive UI (0.61.0, in tmux, offline): ``/rewind`` to before the turn that read a
file, then the same read again, runs and its content reaches the model; read once more
while that result is in the conversation, it is a repeat and denied; after ``/compress``
summarized it away it runs again. The CLI writes ``$rewindTo`` and ``$set.messages`` to
the session file (``docs/gemini-facts.md``), which the rule follows."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.e2e._codex import Tmux
from tests.e2e._gemini import function_responses, gemini_home, slash, start_ui, texts
from tests.gemini._cli import gemini_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NOTES = "the rewound notes line\n" * 30
REPEAT = "ctxrelay guard: you already read"
SUMMARY = "<state_snapshot>The person asked for the notes.</state_snapshot>"


def route(body: Mapping[str, Any]) -> Step:
    """A prompt line starting ``READ`` reads notes.txt with ``read_file``; its result (or the
    deny) is answered with one line."""
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    if any("functionResponse" in p for p in last.get("parts") or ()):
        return Step(text="Looked at the notes.", input_tokens=5_000)
    if any(line.startswith("READ") for line in texts(last).splitlines()):
        return Step(tool_calls=[ToolUse("read_file", {"file_path": "notes.txt"})])
    return Step(text="ok", input_tokens=4_000)


def _responses(body: Mapping[str, Any]) -> list[Any]:
    """The ``functionResponse`` parts of one request's contents."""
    parts = [p for c in body.get("contents") or () for p in c.get("parts") or ()]
    return [p["functionResponse"] for p in parts if "functionResponse" in p]


def _answered(server: GeminiServer, count: int) -> bool:
    return len(function_responses(server)) == count


def _moved(tui: Tmux, before: str) -> bool:
    return tui.screen() != before


def _rewind_to(tui: Tmux, prompt: str) -> None:
    """``/rewind``, the arrow keys up to ``prompt`` in its list, Enter, and Enter on
    "Rewind conversation": the prompt is back in the box."""
    slash(tui, "/rewind", lambda: tui.shows("Stay at current position"), "the rewind list")
    for _ in range(8):
        if tui.shows(f"● {prompt}"):
            break
        moved = partial(_moved, tui, tui.screen())
        tui.key("Up")
        tui.wait(moved, "the selection to move")
    tui.key("Enter")
    tui.wait(lambda: tui.shows("Rewind conversation"), "the rewind's confirmation")
    tui.key("Enter")
    tui.wait(lambda: not tui.shows("Rewind conversation"), "the rewind")


def test_a_read_the_cli_removed_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gemini_cli()  # skips (or fails) here when the CLI is not installed
    with GeminiServer(route, utility=lambda body: Step(text=SUMMARY)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        (project / "notes.txt").write_text(NOTES, encoding="utf-8")
        assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) == 0
        capsys.readouterr()
        tui = start_ui(project, tmp_path / "tmux.sock")
        try:
            tui.type("READ the notes")
            tui.wait(lambda: _answered(server, 1), "the first read", timeout=120)
            tui.wait(lambda: tui.shows("Looked at the notes."), "the turn's answer")
            _rewind_to(tui, "READ the notes")
            tui.wait(lambda: tui.shows("* READ the notes"), "the prompt back in the box")
            tui.key("Enter")  # the same prompt again, in the rewound conversation
            tui.wait(lambda: _answered(server, 2), "the read after the rewind", timeout=120)
            tui.type("READ them once more")
            tui.wait(lambda: _answered(server, 3), "the repeated read", timeout=120)
            slash(tui, "/compress", lambda: tui.shows("Chat history compressed"), "the compression")
            tui.type("READ them after the summary")
            tui.wait(lambda: _answered(server, 4), "the read after /compress", timeout=120)
        finally:
            tui.close()
        summaries = server.model_requests(stream=False)
        bodies = [r.body for r in server.model_requests()]
    first, after_rewind, repeat, after_compress = (
        str(r.get("response")) for r in function_responses(server)
    )
    assert "the rewound notes line" in first
    # The rewind removed the first read: the same read ran and reached the model.
    assert "the rewound notes line" in after_rewind
    assert REPEAT not in after_rewind
    # That result is in the conversation: reading it once more is a repeat.
    assert REPEAT in repeat
    assert "the rewound notes line" not in repeat
    # /compress summarized it away (the CLI's own generateContent calls): read again.
    assert summaries
    assert "the rewound notes line" in after_compress
    assert REPEAT not in after_compress
    # The request that sent the read after the rewind held that result alone: the
    # rewind had taken the first one out of the conversation.
    sent = [b for b in bodies if _responses({"contents": b["contents"][-1:]})]
    assert len(sent) == 4  # one request per read, its result last
    assert len(_responses(sent[1])) == 1
