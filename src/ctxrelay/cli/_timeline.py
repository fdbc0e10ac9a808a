"""The live timeline of a running session, for people (``run`` and ``demo``).

One line per event as it happens: each dispatch with its window, a bar of its tokens
against the warning point (│), the handoff target (┃) and the usable limit (the bar's
end), and the decision; advisories, tool calls and rollovers indented under it. Every
line fits the console's width (80 columns included): the bar narrows and a preview (a
reply, a tool's result) is shortened with an ellipsis. What is not a preview is never
cut: the header's facts and a streamed reply wrap.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

from ctxrelay.cli._common import print_json
from ctxrelay.cli._screen import one_line, print_line, screen_console
from ctxrelay.runtime.events import (
    RESUMED_AFTER_STOP,
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

_INDENT = "       "
_MODEL = _INDENT + "model: "
_PIECES = re.compile(r"\s+|\S+")
_SEP = " · "
_HANG = "   "  # a fact of the header that goes on to the next line
_BAR_MAX = 32
_BAR_MIN = 8
# "NNN  wN  NNN,NNN,NNN  " before the bar, the longest label after it.
_BAR_PREFIX = 22
_LABEL_ROOM = 30

_STYLE = {"continue": "green", "warn": "yellow", "rollover": "magenta", "block": "red"}


def _notice(event: NoticeEvent) -> None:
    kind = "" if event.code == RESUMED_AFTER_STOP else "warning: "
    sys.stderr.write(f"ctxrelay: {kind}{event.message}\n")
    sys.stderr.flush()


class JsonLines:
    """``--json``: one JSON object per event on stdout, nothing else (a notice also goes
    to stderr, for the person watching)."""

    def __call__(self, event: Event) -> None:
        print_json(event.to_json())
        if isinstance(event, NoticeEvent):
            _notice(event)

    def close(self) -> None:
        """Nothing to release."""


class Timeline:
    """A rich, line-per-event timeline; ``show_text`` also prints the model's replies."""

    def __init__(
        self, console: Console | None = None, *, width: int | None = None, show_text: bool = True
    ) -> None:
        if console is None:
            console = screen_console()
        self.out = console
        self.width = width or max(
            _BAR_MIN, min(_BAR_MAX, console.width - _BAR_PREFIX - _LABEL_ROOM)
        )
        self.show_text = show_text
        self.usable = 1
        self.target: int | None = None
        self.warning: int | None = None
        self.dispatches = 0
        self.streamed = False  # text of the current response already shown live
        self.column = 0  # where the streamed text is on its line
        self.space = False  # a space is due before the next streamed word

    def close(self) -> None:
        """Nothing to release; lines are printed as they come."""
        self._end_stream()

    def text(self, delta: str) -> None:
        """A piece of the model's reply as it streams (``Runtime(on_text=…)``)."""
        if not self.show_text or not delta:
            return
        if not self.streamed:
            self.out.print(f"{_INDENT}[cyan]model:[/cyan] ", end="")
            self.streamed = True
            self.column, self.space = len(_MODEL), False
        # Wrapped at the width as it comes, word by word, under "model:" (a word split
        # between two deltas may break where they meet; one wider than a line folds).
        width = max(self.out.width, len(_MODEL) + 8)
        for piece in _PIECES.findall(delta):
            if piece.isspace():
                if "\n" in piece:
                    self._stream_break()
                else:
                    self.space = self.column > len(_MODEL)
                continue
            rest = piece
            while rest:
                if self.column + self.space + len(rest) > width and self.column > len(_MODEL):
                    self._stream_break()
                room = width - self.column - self.space
                chunk, rest = rest[:room], rest[room:]
                self.out.print(" " * self.space + chunk, end="", markup=False, highlight=False)
                self.column += self.space + len(chunk)
                self.space = False

    def _stream_break(self) -> None:
        self.out.print("\n" + " " * len(_MODEL), end="")
        self.column, self.space = len(_MODEL), False

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

    def _line(self, markup: str) -> None:
        print_line(self.out, markup)

    def _facts(self, facts: list[str]) -> None:
        """Facts joined by " · " on as many lines as the width needs: a fact is never cut
        (one longer than a line, a long model path, folds)."""
        width = self.out.width
        lines: list[str] = []
        for fact in facts:
            if lines and len(lines[-1]) + len(_SEP) + len(fact) <= width:
                lines[-1] += _SEP + fact
            else:
                lines.append(fact if not lines else _HANG + fact)
        for text in lines:
            self.out.print(f"[dim]{_escape(text)}[/dim]", overflow="fold")

    def _room(self, used: int) -> int:
        return max(self.out.width - used, 8)

    def __call__(self, event: Event) -> None:
        line = self._line
        self._end_stream()
        streamed, self.streamed = self.streamed, False
        if isinstance(event, StartEvent):
            self.usable = max(event.usable_limit, 1)
            self.target = event.handoff_target
            self.warning = event.warning_at
            marks = [
                f"warning {event.warning_at:,}" if event.warning_at else "no warning",
                f"target {event.handoff_target:,}" if event.handoff_target else "Off",
            ]
            verb = "resumed" if event.resumed else "started"
            self.out.print(  # the header wraps: an id or a limit is never cut
                f"[bold]session {_escape(event.session_id)}[/bold] {verb} in window {event.window}",
                overflow="fold",
            )
            facts = [
                f"on {event.model}",
                *marks,
                f"usable limit {event.usable_limit:,}",
            ]
            self._facts(facts)
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
            line(
                f"{self.dispatches:>3}  w{event.window:<2} {event.tokens:>9,}  "
                f"{self._bar(event.tokens)}  [{style}]{label}[/{style}]"
            )
        elif isinstance(event, AdvisoryEvent):
            kind = "handoff requested from" if event.stage == "handoff" else "warning sent to"
            line(f"{_INDENT}[yellow]↳ {kind} the agent at {event.tokens:,} tokens[/yellow]")
        elif isinstance(event, ResponseEvent):
            cost = f"cost so far ${event.session_cost_usd:.4f}" if event.session_cost_usd else ""
            if self.show_text and event.text and not streamed:
                tail = f"  [dim]{cost}[/dim]" if cost else ""
                room = self._room(len(_INDENT) + len("model: ") + (len(cost) + 2 if cost else 0))
                line(f"{_INDENT}[cyan]model:[/cyan] {_escape(one_line(event.text, room))}{tail}")
            elif cost:
                line(f"{_INDENT}[dim]{cost}[/dim]")
        elif isinstance(event, ToolEvent):
            mark = "[red]✗[/red]" if event.is_error else "[green]✓[/green]"
            name = _escape(event.name)
            room = self._room(len(_INDENT) + 4 + len(event.name))
            line(f"{_INDENT}{mark} {name}: [dim]{_escape(one_line(event.summary, room))}[/dim]")
        elif isinstance(event, RolloverEvent):
            notes = f"notes {event.notes_bytes:,} B" if event.notes_bytes else "no notes"
            line(
                f"  [magenta]━━ window {event.from_window} sealed ({event.reason}) → "
                f"window {event.to_window}: lead-in, {notes}[/magenta]"
            )
        elif isinstance(event, NoticeEvent):
            _notice(event)
        elif isinstance(event, PauseEvent):
            line(f"[red]paused ({event.reason}):[/red] {_escape(event.message)}")
        elif isinstance(event, EndEvent):
            line(
                f"[bold]{event.status}[/bold] after {event.turns} model responses in "
                f"{event.windows} window(s); cost ${event.cost_usd:.4f}"
            )


def _escape(text: str) -> str:
    from rich.markup import escape  # noqa: PLC0415 — rich: run --json's JsonLines never draws

    return escape(text)
