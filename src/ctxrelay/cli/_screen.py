"""How wide people's output is, and lines that fit it by shortening, never by wrapping.

A terminal gives its own width. In a pipe (a file, ``less``, a CI log) there is none:
``COLUMNS`` is used when set, else :data:`PIPE_WIDTH`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

__all__ = ["PIPE_WIDTH", "fit", "one_line", "print_line", "screen_console"]

PIPE_WIDTH = 100
"""Columns of output that goes to a pipe when ``COLUMNS`` does not say."""


def screen_console(stderr: bool = False) -> Console:
    """A rich console as wide as the terminal, or ``COLUMNS``/:data:`PIPE_WIDTH` in a pipe."""
    from rich.console import Console  # noqa: PLC0415 — rich: --json output never draws

    console = Console(stderr=stderr, highlight=False)
    if console.is_terminal or os.environ.get("COLUMNS", "").strip().isdigit():
        return console
    return Console(stderr=stderr, highlight=False, width=PIPE_WIDTH)


def one_line(text: str | None, width: int) -> str:
    """``text`` on one line (whitespace runs become one space), shortened to ``width``
    characters with an ellipsis."""
    if not text:
        return ""
    flat = " ".join(text.split())
    if width <= 0:
        return ""
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def fit(line: Text, width: int) -> Text:
    """``line`` cut to ``width`` cells, an ellipsis marking the cut."""
    if line.cell_len > width:
        line = line.copy()
        line.truncate(width, overflow="ellipsis")
    return line


def print_line(console: Console, line: Text | str) -> None:
    """Print one line that never wraps: markup (a ``str``) or a ``Text``, shortened to the
    console's width."""
    from rich.text import Text  # noqa: PLC0415 — rich: --json output never draws

    text = Text.from_markup(line) if isinstance(line, str) else line
    console.print(fit(text, console.width), no_wrap=True, overflow="ellipsis", crop=True)
