"""The live timeline counts down to the handoff target and shows the cost so far."""

from __future__ import annotations

from rich.console import Console

from ctxrelay.cli._timeline import Timeline
from ctxrelay.runtime.events import DispatchEvent, ResponseEvent, StartEvent


def test_countdown_to_handoff_and_cost_so_far() -> None:
    console = Console(record=True, width=120, color_system=None)
    timeline = Timeline(console, show_text=False)
    timeline(StartEvent("s1", 1, False, 90_000, 60_000, 50_000, "anthropic:claude-opus-4-6"))
    timeline(DispatchEvent(1, 25_393, "continue", None))
    timeline(ResponseEvent(1, "", ["read_file"], 52_100, 5, 0.0419, 0.1088))
    timeline(DispatchEvent(1, 61_393, "warn", "handoff"))
    text = console.export_text()
    lines = text.splitlines()
    assert "34,607 to handoff" in lines[2]
    assert "w1" in lines[2]
    assert "cost so far $0.1088" in text
    assert "to handoff" not in lines[-1]
