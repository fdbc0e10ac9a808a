"""Help text laid out by hand, and the sentences commands print, wrapped at the terminal's
width (``COLUMNS`` in a pipe): the one wrapping of every command's ``--help``, argparse's
and the subcommand tables' alike, and of plain output (:func:`wrapped`). Lines break at
spaces only: a word longer than the line (a path) stands alone, whole. Light stdlib
only: ``ctxrelay claude statusline`` passes through here."""

from __future__ import annotations

import re
import shutil
import textwrap

__all__ = ["help_width", "output_width", "wrap_help", "wrapped"]

_GAP = re.compile(r"\S(\s{2,})\S")
"""Two or more spaces inside an indented line: a term and its explanation, whose
continuation lines hang under the explanation."""


def help_width() -> int:
    """The columns help text may use: the terminal's (or ``COLUMNS``), less argparse's
    margin of two, as argparse's own formatter takes it."""
    return max(shutil.get_terminal_size().columns - 2, 20)


def output_width() -> int:
    """The columns plain output may use: the terminal's (or ``COLUMNS``)."""
    return max(shutil.get_terminal_size().columns, 20)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _hanging(line: str, width: int) -> int:
    """Where the continuation of an indented line starts: under the explanation of a
    term (when that leaves room), else four columns in."""
    gap = _GAP.search(line, _indent(line))
    if gap is not None and gap.end(1) <= width // 2:
        return gap.end(1)
    return _indent(line) + 4


def _wrap_line(line: str, width: int) -> list[str]:
    """One indented line (joined with its hand-made continuations) at ``width``."""
    if len(line) <= width:
        return [line.rstrip()]
    command, mark, comment = line.partition("  # ")
    if mark and command.strip():  # an example and its comment: the comment goes below
        hang = " " * (_indent(line) + 4)
        return _wrap_line(command, width) + textwrap.wrap(
            "# " + comment, width, initial_indent=hang, subsequent_indent=hang + "  "
        )
    return textwrap.wrap(
        line,
        width,
        subsequent_indent=" " * _hanging(line, width),
        break_on_hyphens=False,
        break_long_words=False,
    )


def wrap_help(text: str, width: int, indent: str = "") -> str:
    """``text`` (a command's description or epilog, laid out by hand) wrapped to
    ``width``: an unindented paragraph is filled as prose; an indented line (an example,
    a term and its explanation) stays as written when it fits, and is otherwise broken at
    spaces, its continuation indented under it (a comment after an example goes below
    it). The hand-made continuation lines of a term's explanation are joined to it
    first. Blank lines stay."""
    out: list[str] = []
    prose: list[str] = []
    entry: str | None = None  # an indented line, with its continuations so far

    def flush() -> None:
        nonlocal entry
        if prose:
            out.extend(textwrap.wrap(" ".join(prose), width, break_on_hyphens=False))
            prose.clear()
        if entry is not None:
            out.extend(_wrap_line(entry, width))
            entry = None

    for line in text.splitlines():
        if not line.strip():
            flush()
            out.append("")
        elif not line[0].isspace():
            if entry is not None:
                flush()
            prose.append(line.strip())
        else:
            gap = None if entry is None else _GAP.search(entry, _indent(entry))
            if entry is not None and gap is not None and _indent(line) >= gap.end(1):
                entry = f"{entry.rstrip()} {line.strip()}"  # the explanation goes on
                continue
            flush()
            entry = line
    flush()
    return "\n".join(indent + line if line else line for line in out)


def wrapped(text: str, width: int | None = None) -> str:
    """``text``, each of its lines wrapped at ``width`` (the terminal's by default) at
    spaces only, a continuation hanging under the value of a ``term   value`` line, else
    four columns in."""
    width = width or output_width()
    return "\n".join(part for line in text.split("\n") for part in _wrap_line(line, width) or [""])
