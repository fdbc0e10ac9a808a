"""Domain values of the Bash guard: what a command prints, and the Read calls instead."""

from __future__ import annotations

import json
from typing import Literal, NamedTuple

__all__ = ["WHOLE_FILE", "FilePrint", "LineRange", "Operand", "ReadCall", "Unit"]

Unit = Literal["line", "byte"]


class LineRange(NamedTuple):
    """A printed range of a file, 1-based and inclusive.

    ``first``: the first line (or byte) printed; a negative value counts from the end
    (-1 is the last); ``None`` means "from the top" with no start stated (``cat``,
    ``head``), so the Read call needs no offset. ``last``: the last one printed, negative
    from the end, ``None`` for "to the end of the file". ``unit`` is ``"byte"`` for
    ``head -c``/``tail -c``, which the Read call rounds out to whole lines.
    """

    first: int | None = None
    last: int | None = None
    unit: Unit = "line"

    @property
    def whole(self) -> bool:
        return self.first is None and self.last is None


WHOLE_FILE = LineRange()


class Operand(NamedTuple):
    """A file operand as the shell would see it.

    ``path`` is absolute when the word is literal and the shell's directory is known;
    otherwise it is the word as written (``$f``, ``$(pick)``), with ``literal`` False.
    ``glob`` is set for an unquoted pattern (``*.log``), which the Read calls expand.
    """

    path: str
    literal: bool = True
    glob: bool = False


class FilePrint(NamedTuple):
    """One command whose output reaches the context and whose input is a file.

    ``command`` is its text as written; ``ranges`` is ``None`` when the range cannot be
    known without running the command (``head -n "$N"``); an empty tuple never occurs
    (a command that prints nothing is no file print).
    """

    command: str
    program: str
    operands: tuple[Operand, ...]
    ranges: tuple[LineRange, ...] | None


class ReadCall(NamedTuple):
    """The Read tool call that shows the same file and range as a denied command.

    ``note`` explains what the call could not express exactly (unknown line count,
    a path the shell computes); it is not part of the tool input.
    """

    file_path: str
    offset: int | None = None
    limit: int | None = None
    note: str = ""

    def with_note(self, note: str) -> ReadCall:
        return self._replace(note=note)

    def tool_input(self) -> dict[str, str | int]:
        """The Read tool's input, exactly as the agent should send it."""
        out: dict[str, str | int] = {"file_path": self.file_path}
        if self.offset is not None:
            out["offset"] = self.offset
        if self.limit is not None:
            out["limit"] = self.limit
        return out

    def __str__(self) -> str:
        text = "Read " + json.dumps(self.tool_input(), ensure_ascii=False)
        return f"{text} ({self.note})" if self.note else text
