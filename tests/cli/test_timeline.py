"""The live timeline prints model- and user-supplied text as text, never as rich markup."""

from __future__ import annotations

from rich.console import Console

from ctxrelay.cli._timeline import Timeline
from ctxrelay.runtime.events import PauseEvent, StartEvent, ToolEvent


def test_names_from_the_model_and_the_user_are_not_markup() -> None:
    console = Console(record=True, width=160, color_system=None)
    timeline = Timeline(console, show_text=False)
    timeline(StartEvent("s[bold]1", 1, False, 9_000, 6_000, 5_000, "scripted:[bold]steps.json"))
    timeline(ToolEvent(1, "[bold]made_up_tool", "c1", True, "unknown tool [red]x[/red]"))
    timeline(PauseEvent("max_turns", "paused at [b]5[/b] turns"))
    text = console.export_text()
    assert "session s[bold]1" in text
    assert "on scripted:[bold]steps.json" in text
    assert "✗ [bold]made_up_tool: unknown tool [red]x[/red]" in text
    assert "paused at [b]5[/b] turns" in text
