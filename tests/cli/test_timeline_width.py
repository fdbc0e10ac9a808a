"""The demo's timeline fits the width it is given, by shortening lines, never wrapping them:
80 columns when ``COLUMNS=80``, 100 in a pipe that says nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from ctxrelay.cli import main
from ctxrelay.cli._screen import PIPE_WIDTH, one_line, screen_console
from ctxrelay.cli._timeline import Timeline
from ctxrelay.runtime.events import DispatchEvent, ResponseEvent, StartEvent, ToolEvent

DISPATCH = re.compile(r"^\s*\d+\s+w\d+\s+[\d,]+\s")


def _timeline_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code = main(["demo", "--db", str(tmp_path / "d.db"), "--workspace", str(tmp_path / "w")])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    # The closing lines name paths and a command, which are never cut (see the demo).
    return lines[: lines.index(next(x for x in lines if x.startswith("The session is stored")))]


@pytest.mark.parametrize(("columns", "width"), [("80", 80), (None, PIPE_WIDTH)])
def test_demo_timeline_never_wraps(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: str | None,
    width: int,
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    lines = _timeline_lines(tmp_path, capsys)
    too_long = [line for line in lines if len(line) > width]
    assert not too_long, f"lines over {width} columns: {too_long}"
    # One line per dispatch and nothing that continues a cut phrase on the next line.
    assert sum(bool(DISPATCH.match(line)) for line in lines) == 26
    for line in lines:
        assert line == "" or line.startswith((" ", "session", "on ", "done", "What")), line
    assert any("to handoff" in line for line in lines)
    assert any(line.startswith("  handoff saved") for line in lines)


def test_a_pipe_is_100_columns_unless_columns_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert screen_console().width == PIPE_WIDTH
    monkeypatch.setenv("COLUMNS", "72")
    assert screen_console().width == 72


def test_long_text_is_shortened_to_one_line() -> None:
    console = Console(record=True, width=60, color_system=None)
    timeline = Timeline(console)
    timeline(StartEvent("s1", 1, False, 168_000, 120_000, 100_000, "scripted:" + "x" * 80))
    timeline(DispatchEvent(1, 150_000, "continue", None))
    timeline(ResponseEvent(1, "first line\nsecond " + "word " * 40, [], 1, 1, 0.5, 12.25))
    timeline(ToolEvent(1, "session_history", "c1", False, "window 1 [seq 4]\n" + "y" * 99))
    lines = console.export_text().splitlines()
    assert all(len(line) <= 60 for line in lines), lines
    header = "".join(lines[1:-3])  # the model's name folds: nothing of it is cut
    assert "scripted:" + "x" * 80 in header
    assert lines[-4].endswith("usable limit 168,000")
    assert lines[-3].startswith(" ")  # the dispatch, on one line
    assert lines[-2].startswith("       model: first line second word")
    assert lines[-2].endswith("cost so far $12.2500")
    assert lines[-1].endswith("…")
    assert one_line("a\n\n b", 10) == "a b"
    assert one_line("abcdef", 4) == "abc…"


@pytest.mark.parametrize("width", [80, 60, 40])
def test_the_header_wraps_and_never_cuts_a_limit(width: int) -> None:
    console = Console(record=True, width=width, color_system=None)
    timeline = Timeline(console)
    sid = "3f2a9c0e" * 4
    model = "scripted:/tmp/pytest-of-someone/pytest-12/test_run0/steps.json"
    timeline(StartEvent(sid, 1, True, 1_168_000, 1_120_000, 1_100_000, model))
    lines = console.export_text().splitlines()
    assert all(len(line) <= width for line in lines), lines
    text = " ".join(lines)
    for fact in ("warning 1,100,000", "target 1,120,000", "usable limit 1,168,000"):
        assert fact in text
    assert sid in "".join(lines)
    assert model in "".join(lines)
    assert "…" not in text
