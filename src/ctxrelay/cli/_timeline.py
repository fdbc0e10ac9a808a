"""The live timeline of a running session, for people (``run`` and ``demo``).

One line per event as it happens: each dispatch with its window, a bar of its tokens
against the warning point (│), the handoff target (┃) and the usable limit (the bar's
end), and the decision; advisories, tool calls and rollovers indented under it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ctxrelay.runtime.events import (
    AdvisoryEvent,
    DispatchEvent,
    EndEvent,
    Event,
    NoticeEvent,
    PauseEvent,
    ResponseEvent,
    RolloverEvent,
    StartEvent,
    ToolEvent,
)

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["JsonLines", "Timeline"]

_STYLE = {"continue": "green", "warn": "yellow", "rollover": "magenta", "block": "red"}


def _notice(event: NoticeEvent) -> None:
    sys.stderr.write(f"ctxrelay: warning: {event.message}\n")
    sys.stderr.flush()


class JsonLines:
    """``--json``: one JSON object per event on stdout, nothing else (a notice also goes
    to stderr, for the person watching)."""

    def __call__(self, event: Event) -> None:
        from ctxrelay.cli._common import print_json

        print_json(event.to_json())
        if isinstance(event, NoticeEvent):
            _notice(event)

    def close(self) -> None:
        """Nothing to release."""


class Timeline:
    """A rich, line-per-event timeline; ``show_text`` also prints the model's replies."""

    def __init__(
        self, console: Console | None = None, *, width: int = 32, show_text: bool = True
    ) -> None:
        if console is None:
            from ctxrelay.cli._common import console as make_console

            console = make_console()
        self.out = console
        self.width = width
        self.show_text = show_text
        self.usable = 1
        self.target: int | None = None
        self.warning: int | None = None
        self.dispatches = 0
        self.streamed = False  # text of the current response already shown live

    def close(self) -> None:
        """Nothing to release; lines are printed as they come."""
        self._end_stream()

    def text(self, delta: str) -> None:
        """A piece of the model's reply as it streams (``Runtime(on_text=…)``)."""
        if not self.show_text or not delta:
            return
        if not self.streamed:
            self.out.print("       [cyan]model:[/cyan] ", end="")
            self.streamed = True
        self.out.print(_escape(delta), end="", soft_wrap=True, highlight=False)

    def _end_stream(self) -> None:
        if self.streamed:
            self.out.print()

    def _bar(self, tokens: int) -> str:
        width = self.width
        cells = ["·"] * width
        filled = min(width, round(width * tokens / self.usable)) if self.usable else width
        for i in range(filled):
            cells[i] = "█"
        for mark, glyph in ((self.warning, "│"), (self.target, "┃")):
            if mark is not None:
                at = min(width - 1, round(width * mark / self.usable))
                if cells[at] == "·":
                    cells[at] = glyph
        return "".join(cells)

    def __call__(self, event: Event) -> None:
        out = self.out
        self._end_stream()
        streamed, self.streamed = self.streamed, False
        if isinstance(event, StartEvent):
            self.usable = max(event.usable_limit, 1)
            self.target = event.handoff_target
            self.warning = event.warning_at
            marks = f"warning {event.warning_at:,}" if event.warning_at else "no warning"
            marks += f" · target {event.handoff_target:,}" if event.handoff_target else " · Off"
            verb = "resumed" if event.resumed else "started"
            out.print(
                f"[bold]session {_escape(event.session_id)}[/bold] {verb} in window "
                f"{event.window} on {_escape(event.model)}\n"
                f"[dim]{marks} · usable limit {event.usable_limit:,}[/dim]"
            )
        elif isinstance(event, DispatchEvent):
            self.dispatches += 1
            style = _STYLE.get(event.decision, "white")
            label = event.decision
            if event.stage:
                label += f" ({event.stage})"
            if event.reason:
                label += f" ({event.reason})"
            if event.skipped:
                label += f" [dim]{event.skipped} skipped: no headroom[/dim]"
            if self.target is not None and event.decision == "continue":
                left = self.target - event.tokens
                if left > 0:
                    label += f" [dim]· {left:,} to handoff[/dim]"
            out.print(
                f"{self.dispatches:>3}  w{event.window:<2} {event.tokens:>9,}  "
                f"{self._bar(event.tokens)}  [{style}]{label}[/{style}]"
            )
        elif isinstance(event, AdvisoryEvent):
            kind = "handoff request" if event.stage == "handoff" else "warning"
            out.print(f"       [yellow]↳ {kind} published and claimed for this window[/yellow]")
        elif isinstance(event, ResponseEvent):
            if self.show_text and event.text and not streamed:
                first = event.text.strip().splitlines()[0] if event.text.strip() else ""
                out.print(f"       [cyan]model:[/cyan] {_escape(_short(first, 64))}")
            if event.session_cost_usd:
                out.print(f"       [dim]cost so far ${event.session_cost_usd:.4f}[/dim]")
        elif isinstance(event, ToolEvent):
            mark = "[red]✗[/red]" if event.is_error else "[green]✓[/green]"
            summary = _escape(_short(event.summary, 56))
            out.print(f"       {mark} {_escape(event.name)}: [dim]{summary}[/dim]")
        elif isinstance(event, RolloverEvent):
            notes = f"notes {event.notes_bytes:,} B" if event.notes_bytes else "no notes"
            out.print(
                f"  [magenta]━━ window {event.from_window} sealed ({event.reason}) → "
                f"window {event.to_window}: lead-in, {notes}[/magenta]"
            )
        elif isinstance(event, NoticeEvent):
            _notice(event)
        elif isinstance(event, PauseEvent):
            out.print(f"[red]paused ({event.reason}):[/red] {_escape(event.message)}")
        elif isinstance(event, EndEvent):
            out.print(
                f"[bold]{event.status}[/bold] after {event.turns} model responses in "
                f"{event.windows} window(s); cost ${event.cost_usd:.4f}"
            )


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
