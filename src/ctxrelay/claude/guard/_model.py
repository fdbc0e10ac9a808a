"""Domain values of the Bash guard: what a command prints, and the Read calls instead.

Each is an immutable tuple subclass with named, typed accessors: equal and hashable by
value like a frozen dataclass, but this module is on the hook's path for every command
that mentions cat/head/tail/sed, and ``dataclasses`` (which imports ``inspect``) or even
``typing.NamedTuple`` (which builds each class with ``exec``) costs the hook process
milliseconds at every such call. ``tests/claude/guard`` pins the hook's imports.
"""

from __future__ import annotations

from ctxrelay import _fastjson  # json's C codec without importing json (and re)

# ``typing`` is not imported at run time either (mypy reads any constant named
# TYPE_CHECKING as true): there ``Unit`` is a plain ``str`` in ``LineRange``'s base.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, Self

    Unit = Literal["line", "byte"]
    _LineRangeBase = tuple[int | None, int | None, Unit]
else:
    _LineRangeBase = tuple[int | None, int | None, str]

__all__ = ["WHOLE_FILE", "FilePrint", "LineRange", "Operand", "ReadCall", "Unit"]


class LineRange(_LineRangeBase):
    """A printed range of a file, 1-based and inclusive.

    ``first``: the first line (or byte) printed; a negative value counts from the end
    (-1 is the last); ``None`` means "from the top" with no start stated (``cat``,
    ``head``), so the Read call needs no offset. ``last``: the last one printed, negative
    from the end, ``None`` for "to the end of the file". ``unit`` is ``"byte"`` for
    ``head -c``/``tail -c``, which the Read call rounds out to whole lines.
    """

    __slots__ = ()

    def __new__(
        cls, first: int | None = None, last: int | None = None, unit: Unit = "line"
    ) -> Self:
        return super().__new__(cls, (first, last, unit))

    @property
    def first(self) -> int | None:
        return self[0]

    @property
    def last(self) -> int | None:
        return self[1]

    @property
    def unit(self) -> Unit:
        return self[2]

    @property
    def whole(self) -> bool:
        return self[0] is None and self[1] is None

    def __repr__(self) -> str:
        return f"LineRange(first={self[0]!r}, last={self[1]!r}, unit={self[2]!r})"


WHOLE_FILE = LineRange()


class Operand(tuple[str, bool, bool]):
    """A file operand as the shell would see it.

    ``path`` is absolute when the word is literal and the shell's directory is known;
    otherwise it is the word as written (``$f``, ``$(pick)``), with ``literal`` False.
    ``glob`` is set for an unquoted pattern (``*.log``), which the Read calls expand.
    """

    __slots__ = ()

    def __new__(cls, path: str, literal: bool = True, glob: bool = False) -> Self:
        return super().__new__(cls, (path, literal, glob))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def literal(self) -> bool:
        return self[1]

    @property
    def glob(self) -> bool:
        return self[2]

    def __repr__(self) -> str:
        return f"Operand(path={self[0]!r}, literal={self[1]!r}, glob={self[2]!r})"


class FilePrint(tuple[str, str, tuple[Operand, ...], tuple[LineRange, ...] | None]):
    """One command whose output reaches the context and whose input is a file.

    ``command`` is its text as written; ``ranges`` is ``None`` when the range cannot be
    known without running the command (``head -n "$N"``); an empty tuple never occurs
    (a command that prints nothing is no file print).
    """

    __slots__ = ()

    def __new__(
        cls,
        command: str,
        program: str,
        operands: tuple[Operand, ...],
        ranges: tuple[LineRange, ...] | None,
    ) -> Self:
        return super().__new__(cls, (command, program, operands, ranges))

    @property
    def command(self) -> str:
        return self[0]

    @property
    def program(self) -> str:
        return self[1]

    @property
    def operands(self) -> tuple[Operand, ...]:
        return self[2]

    @property
    def ranges(self) -> tuple[LineRange, ...] | None:
        return self[3]

    def __repr__(self) -> str:
        return (
            f"FilePrint(command={self[0]!r}, program={self[1]!r}, operands={self[2]!r}, "
            f"ranges={self[3]!r})"
        )


class ReadCall(tuple[str, int | None, int | None, str]):
    """The Read tool call that shows the same file and range as a denied command.

    ``note`` explains what the call could not express exactly (unknown line count,
    a file over the Read limit); it is not part of the tool input.
    """

    __slots__ = ()

    def __new__(
        cls,
        file_path: str,
        offset: int | None = None,
        limit: int | None = None,
        note: str = "",
    ) -> Self:
        return super().__new__(cls, (file_path, offset, limit, note))

    @property
    def file_path(self) -> str:
        return self[0]

    @property
    def offset(self) -> int | None:
        return self[1]

    @property
    def limit(self) -> int | None:
        return self[2]

    @property
    def note(self) -> str:
        return self[3]

    def with_note(self, note: str) -> ReadCall:
        return ReadCall(self[0], self[1], self[2], note)

    def tool_input(self) -> dict[str, str | int]:
        """The Read tool's input, exactly as the agent should send it."""
        out: dict[str, str | int] = {"file_path": self.file_path}
        if self.offset is not None:
            out["offset"] = self.offset
        if self.limit is not None:
            out["limit"] = self.limit
        return out

    def __repr__(self) -> str:
        return (
            f"ReadCall(file_path={self[0]!r}, offset={self[1]!r}, limit={self[2]!r}, "
            f"note={self[3]!r})"
        )

    def __str__(self) -> str:
        text = "Read " + _fastjson.dumps(self.tool_input(), ensure_ascii=False)
        return f"{text} ({self.note})" if self.note else text
