"""How many bytes a command's file prints put into the tool result, what a host hands
the model of such an output, and the page a guard offers instead.

Every host cuts a long tool output on its own (Claude Code to a preview plus a saved
file, Codex in the middle, the Gemini CLI to its head and tail), so a print is worth
denying only when the host would hand the model more of it than the guard's answer
costs: :meth:`HostOutput.floods`. The answer then offers a page of at most
:data:`ctxrelay.budget.bounds.PRINT_PAGE_BYTES` bytes, counted in bytes (a minified
file's one line can be 300 KB). Touches the file
system (sizes, and the lines of a ranged print), so it runs only for a command that
prints a file. Rules and measurements: ``docs/guard.md``.
"""

from __future__ import annotations

import glob
import os
import shlex
import stat
from typing import TYPE_CHECKING, NamedTuple

from ctxrelay.budget.bounds import PRINT_BIG_BYTES, PRINT_PAGE_BYTES

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctxrelay.hooks.guard._model import FilePrint, LineRange

__all__ = [
    "COUNT_MAX_BYTES",
    "HostOutput",
    "Sized",
    "line_start",
    "page_reason",
    "printed_bytes",
    "shell_page",
    "sized",
]

COUNT_MAX_BYTES = 256 * 1024 * 1024
"""Files larger than this are not read to count lines: the hook must answer well within
the host's hook timeout. A line range of such a file is not sized (the print passes)."""

_GLOB_MAX = 100
"""Files of one glob operand that are sized at most."""


class HostOutput(NamedTuple):
    """What a host hands the model of a tool output of ``n`` bytes: the whole output up
    to ``cap`` bytes, and ``capped`` bytes of any longer one (a preview, or the output cut
    in the middle). ``label`` names the host and the bound in sentences."""

    label: str
    cap: int
    capped: int

    def delivered(self, n: int) -> int:
        return n if n <= self.cap else self.capped

    def floods(self, n: int) -> bool:
        """Whether an output of ``n`` bytes reaches the model big: more than
        :data:`PRINT_BIG_BYTES`, the point past which a page costs less."""
        return self.delivered(n) > PRINT_BIG_BYTES


class Sized(NamedTuple):
    """One file a print reads, with its size and the bytes the print takes of it."""

    path: str
    size: int
    mtime_ns: int
    range: LineRange | None
    """``None``: known only when the command runs."""
    printed: int | None
    """``None``: the bytes could not be counted (a range of a file too large to read)."""


def _regular(path: str) -> os.stat_result | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None  # never open a FIFO: it could block


def line_start(path: str, line: int, size: int) -> int | None:
    """The byte offset where 1-based ``line`` starts (``size`` past the last line)."""
    if line <= 1:
        return 0
    seen = 0
    try:
        with open(path, "rb") as handle:
            for n, text in enumerate(handle, start=1):
                seen += len(text)
                if n == line - 1 or seen >= COUNT_MAX_BYTES:
                    break
    except OSError:
        return None
    return min(seen, size) if seen < COUNT_MAX_BYTES else None


def _last_lines_start(path: str, count: int, size: int) -> int | None:
    """The byte offset where the last ``count`` lines start (a final newline ends the
    last line, it does not start an empty one)."""
    if count <= 0:
        return size
    chunk = 1 << 16
    end = size
    newlines = 0
    try:
        with open(path, "rb") as handle:
            handle.seek(max(size - 1, 0))
            tail = handle.read(1)
            end = size - 1 if tail == b"\n" else size  # the last line's own newline
            pos = end
            while pos > 0 and size - pos < COUNT_MAX_BYTES:
                start = max(pos - chunk, 0)
                handle.seek(start)
                data = handle.read(pos - start)
                at = len(data)
                while True:
                    at = data.rfind(b"\n", 0, at)
                    if at < 0:
                        break
                    newlines += 1
                    if newlines == count:
                        return start + at + 1
                pos = start
    except OSError:
        return None
    return 0 if size - pos < COUNT_MAX_BYTES else None


def _range_bytes(path: str, size: int, r: LineRange) -> int | None:
    """The bytes ``r`` prints of a file of ``size`` bytes (``None``: not counted)."""
    first, last = r.first, r.last
    if r.unit == "byte":
        lo = 1 if first is None else first if first > 0 else max(size + first + 1, 1)
        hi = size if last is None else min(last, size) if last > 0 else size + last + 1
        return max(hi - lo + 1, 0)
    if first is None and last is None:
        return size
    # The start offset of the range, and the offset just past its end.
    start = (
        line_start(path, first or 1, size)
        if first is None or first > 0
        else _last_lines_start(path, -first, size)
    )
    if last is None:
        end: int | None = size
    elif last > 0:
        end = line_start(path, last + 1, size)
    else:
        end = _last_lines_start(path, -last - 1, size)
    if start is None or end is None:
        return None
    return max(end - start, 0)


def _paths(path: str, literal: bool, pattern: bool) -> Iterator[str]:
    if not literal:
        return  # a path the shell computes: nothing to look at
    if not pattern:
        yield path
        return
    matches = sorted(glob.glob(path))[:_GLOB_MAX]
    yield from matches or (path,)


def sized(prints: tuple[FilePrint, ...]) -> tuple[Sized, ...]:
    """Each regular file the prints read, with the bytes each range takes of it."""
    out: list[Sized] = []
    for printed in dict.fromkeys(prints):
        for operand in printed.operands:
            for path in _paths(operand.path, operand.literal, operand.glob):
                st = _regular(path)
                if st is None:
                    continue
                for r in printed.ranges or (None,):
                    count = None if r is None else _range_bytes(path, st.st_size, r)
                    out.append(Sized(path, st.st_size, st.st_mtime_ns, r, count))
    return tuple(out)


def printed_bytes(files: tuple[Sized, ...]) -> int:
    """The bytes the prints put into the tool result, as far as they can be counted:
    a print whose bytes are unknown counts nothing (the guard never denies on a guess)."""
    return sum(f.printed or 0 for f in files)


def shell_page(p: Sized) -> str:
    """A shell page of ``p`` of at most :data:`PRINT_PAGE_BYTES` bytes, for a host whose
    shell is how its agent reads a file: its end for a print of its end (``tail``), the
    same line range cut to a page for ``sed -n 'A,Bp'``, else its start and how to go on."""
    path = shlex.quote(p.path)
    page = PRINT_PAGE_BYTES
    r = p.range
    if r is not None and r.first is not None and r.first < 0:
        return f"tail -c {page} {path}"
    if r is not None and r.unit == "line" and r.first is not None and r.first > 1:
        end = "$" if r.last is None or r.last < 0 else str(r.last)
        return f"sed -n '{r.first},{end}p' {path} | head -c {page}"
    return f"head -c {page} {path} (the next page: tail -c +{page + 1} {path} | head -c {page})"


def page_reason(files: tuple[Sized, ...], total: int, host: HostOutput, search: str) -> str:
    """Why a shell print of ``total`` bytes of ``files`` is denied, and a
    :func:`shell_page` of each instead, or a search (``search``: the host's grep, ``rg``
    or ``grep``); without a final period (a host adds its own ending)."""
    pages = "; ".join(dict.fromkeys(shell_page(p) for p in files if p.printed))
    first = next(p for p in files if p.printed)
    return (
        f"ctxrelay guard: this would print {total:,} bytes of files and you would get "
        f"{host.delivered(total):,} of them ({host.label}). Print a page of at most "
        f"{PRINT_PAGE_BYTES:,} bytes instead: {pages}; or search with {search} -n PATTERN "
        f"{shlex.quote(first.path)}"
    )
