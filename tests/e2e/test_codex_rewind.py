"""The re-read rule after a rewind in Codex's interactive UI (0.171, in tmux, offline):
Esc Esc, then Enter on an earlier prompt, reverts the thread to before it and puts the
prompt back in the box. A whole print that the rewind removed is forgotten (the same
print again runs, and its output reaches the model), while a print of a turn the rewind
kept is still a repeat: Codex goes on in a new rollout segment that holds only the new
turns and names the kept part of the one before (``session_meta.history_base``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import OpenAIServer, Step, ToolUse
from tests.e2e._codex import input_texts as texts
from tests.e2e._codex import start_tui, tool_outputs, tui_home

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEEP = "kept notes\n" * 20
NOTES = "rewound notes\n" * 20
TITLE = "Generate a concise, single-line task title"
REPEAT = "ctxrelay guard: you already printed"


def route(body: Mapping[str, Any]) -> Step:
    """``PRINT <name>`` prints ``<name>.txt`` whole, then the turn ends; the TUI's
    title request gets a title."""
    items = [i for i in body.get("input") or () if isinstance(i, dict)]
    asked = [n for n, i in enumerate(items) if i.get("role") == "user"]
    prompt = texts({"input": items[asked[-1] :]})[0] if asked else ""
    if prompt.startswith(TITLE):
        return Step(text="Printing notes")
    if any(i.get("type") == "function_call_output" for i in items[asked[-1] if asked else 0 :]):
        return Step(text="printed it")
    if prompt.startswith("PRINT "):
        name = prompt.split()[1]
        return Step(tool_calls=[ToolUse("exec_command", {"cmd": f"cat {name}.txt"})])
    return Step(text="ok")


def _turns_done(home: Path) -> int:
    """Turns Codex completed in this home, over every rollout segment."""
    return sum(
        f.read_text(encoding="utf-8").count('"type":"task_complete"')
        for f in (home / "sessions").rglob("rollout-*.jsonl")
    )


def test_a_rewind_forgets_the_print_it_removed_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(route) as server:
        home, project = tui_home(tmp_path, server, monkeypatch)
        (project / "keep.txt").write_text(KEEP, encoding="utf-8")
        (project / "notes.txt").write_text(NOTES, encoding="utf-8")
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()
        tui = start_tui(project, tmp_path / "tmux.sock")
        try:
            tui.type("PRINT keep")
            tui.wait(lambda: _turns_done(home) == 1, "the first turn to end")
            tui.type("PRINT notes")
            tui.wait(lambda: _turns_done(home) == 2, "the second turn to end")
            # Esc Esc browses the transcript at the newest prompt; Enter rewinds to
            # before it and puts it back in the box; Enter again sends it.
            tui.key("Escape")
            tui.key("Escape")
            tui.wait(lambda: tui.shows("Browsing transcript"), "the transcript browser")
            tui.key("Enter")
            tui.wait(lambda: tui.shows("Conversation reverted"), "the rewind")
            tui.wait(lambda: tui.shows("› PRINT notes"), "the prompt back in the box")
            tui.key("Enter")
            tui.wait(lambda: _turns_done(home) == 3, "the turn after the rewind to end")
            tui.type("PRINT keep")
            tui.wait(lambda: _turns_done(home) == 4, "the last turn to end")
        finally:
            tui.close()
    outputs = tool_outputs(server)
    assert len(outputs) == 4, outputs
    first_keep, first_notes, notes_again, keep_again = outputs
    assert "kept notes" in first_keep
    assert "rewound notes" in first_notes
    # The print the rewind removed is no repeat: it ran and reached the model again.
    assert "rewound notes" in notes_again
    assert REPEAT not in notes_again
    # The kept turn's print is still in the model's context: a repeat, denied.
    assert REPEAT in keep_again
    assert str(project / "keep.txt") in keep_again
    assert "kept notes" not in keep_again
    segments = sorted((home / "sessions").rglob("rollout-*.jsonl"))
    assert len(segments) == 2  # the rewind went on in a second segment of the thread
