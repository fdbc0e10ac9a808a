"""Turn denied file prints into Read calls of a page: the same file and range, sized
to :data:`ctxrelay.budget.bounds.PRINT_PAGE_BYTES` bytes of the Read tool's output.

Only the deny path touches the file system here: ``tail -n N`` needs the file's line
count for its offset, a byte range (``head -c``) is rounded out to the lines that hold
it, a glob lists its files, and the page counts the bytes of the lines it takes.
"""

from __future__ import annotations

import glob
import itertools
import os
import shlex
import stat
from typing import TYPE_CHECKING

from ctxrelay.budget.bounds import PRINT_PAGE_BYTES
from ctxrelay.hooks.guard._model import FilePrint, LineRange, Operand, ReadCall
from ctxrelay.hooks.guard.output import COUNT_MAX_BYTES, line_start, printed_bytes

if TYPE_CHECKING:
    from ctxrelay.hooks.guard.output import HostOutput, Sized

__all__ = ["READ_LINE_PREFIX", "page_call", "read_calls", "reason"]

READ_LINE_PREFIX = 7
"""Bytes the Read tool adds to each line it shows (its line number and a tab)."""

CALLS_SHOWN = 20
"""Read calls listed in one deny reason; the rest are counted (``cat *.log``)."""


class _File:
    """Size and line facts of one file, read lazily and at most once."""

    def __init__(self, path: str, *, probe: bool = True) -> None:
        self.path = path
        self.size: int | None = None
        self._lines: int | None = None
        self._counted = False
        if not probe:
            return  # a path the shell computes: nothing to look at
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return
        if stat.S_ISREG(st.st_mode):  # never open a FIFO or a device: it could block
            self.size = st.st_size

    def newlines(self, stops: list[int]) -> list[int] | None:
        """The number of newlines in the first ``stop`` bytes, for each stop."""
        if self.size is None or max(stops, default=0) > COUNT_MAX_BYTES:
            return None
        counts = [0] * len(stops)
        end = max(stops, default=0)
        seen = 0
        try:
            with open(self.path, "rb") as handle:
                while seen < end:
                    chunk = handle.read(min(1 << 20, end - seen))
                    if not chunk:
                        break
                    for k, stop in enumerate(stops):
                        if stop > seen:
                            counts[k] += chunk.count(b"\n", 0, stop - seen)
                    seen += len(chunk)
        except OSError:
            return None
        return counts

    def lines(self) -> int | None:
        """The line count (a last line without a newline counts)."""
        if not self._counted:
            self._counted = True
            if self.size is not None:
                counts = self.newlines([self.size])
                if counts is not None:
                    unterminated = self.size > 0 and not self._ends_in_newline()
                    self._lines = counts[0] + (1 if unterminated else 0)
        return self._lines

    def _ends_in_newline(self) -> bool:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                return handle.read(1) == b"\n"
        except OSError:
            return True


def _describe(r: LineRange) -> str:
    unit = "bytes" if r.unit == "byte" else "lines"
    first, last = r.first, r.last
    if first is None:
        if last is None:
            return "the whole file"
        if last > 0:
            return f"the first {last} {unit}"
        return f"all but the last {-last - 1} {unit}"
    if first < 0:
        return f"the last {-first} {unit}" if first < -1 else f"the last {unit[:-1]}"
    if last is None:
        return f"{unit} {first} to the end"
    return f"{unit} {first} to {last}" if last != first else f"{unit[:-1]} {first}"


def _needs_total(r: LineRange) -> bool:
    """Whether the span of ``r`` depends on the file's length (it counts from the end)."""
    return r.last is None or r.last < 0 or (r.first is not None and r.first < 0)


def _formula(r: LineRange) -> str:
    """How to compute the Read range of ``r`` by hand, when the line count is unknown."""
    if r.first is not None and r.first < 0:
        return f": offset = line count - {-r.first - 1}, limit {-r.first}"
    if r.first is None and r.last is not None and r.last < 0:
        return f": limit = line count - {-r.last - 1}"
    return ""


def _span(r: LineRange, total: int | None) -> tuple[int, int] | None:
    """The 1-based inclusive span of ``r`` in a file of ``total`` lines (or bytes)."""
    if _needs_total(r) and total is None:
        return None
    n = total or 0
    first = 1 if r.first is None else r.first if r.first > 0 else max(n + r.first + 1, 1)
    last = n if r.last is None else r.last if r.last > 0 else n + r.last + 1
    return first, last


def _call(path: str, r: LineRange, file: _File) -> ReadCall:
    if r.whole:
        return ReadCall(path)
    if r.unit == "byte":
        return _byte_call(path, r, file)
    span = _span(r, file.lines() if _needs_total(r) else None)
    if span is None:
        if r.first is not None and r.first > 0:  # "from line A on", count unknown
            return ReadCall(path, offset=r.first)
        return ReadCall(path, note=f"{_describe(r)}{_formula(r)}; the line count is unknown")
    first, last = span
    if last < first:
        return ReadCall(path, note=f"{_describe(r)}: the file has {file.lines()} lines")
    offset = None if r.first is None else first
    return ReadCall(path, offset=offset, limit=last - first + 1)


def _byte_call(path: str, r: LineRange, file: _File) -> ReadCall:
    span = _span(r, file.size)
    if span is not None and file.size is not None:
        first, last = span[0], min(span[1], file.size)
        if last < first:
            return ReadCall(path, note=f"{_describe(r)}: the file has {file.size} bytes")
        counts = file.newlines([first - 1, last - 1])
        if counts is not None:
            offset = counts[0] + 1
            limit = counts[1] + 1 - offset + 1
            return ReadCall(
                path,
                offset=None if r.first is None else offset,
                limit=limit,
                note=f"the lines that hold {_describe(r)}",
            )
    return ReadCall(path, note=f"{_describe(r)}; Read pages by lines")


def _paths(operand: Operand) -> tuple[list[str], int]:
    """The files an operand names, at most ``CALLS_SHOWN``, and how many more match."""
    if not (operand.literal and operand.glob):
        return [operand.path], 0
    try:
        matches = sorted(itertools.islice(glob.iglob(operand.path), 10 * CALLS_SHOWN))
    except (OSError, ValueError):
        matches = []
    if not matches:
        return [operand.path], 0  # bash passes an unmatched pattern as written
    return matches[:CALLS_SHOWN], len(matches) - CALLS_SHOWN if len(matches) > CALLS_SHOWN else 0


def read_calls(printed: FilePrint) -> tuple[list[ReadCall], int]:
    """The Read calls that show exactly what one file print shows, and how many more
    files were left off."""
    calls: list[ReadCall] = []
    more = 0
    for operand in printed.operands:
        paths, extra = _paths(operand)
        more += extra
        for path in paths:
            file = _File(path, probe=operand.literal)
            if printed.ranges is None:
                calls.append(ReadCall(path, note="the range is known only when it runs"))
                continue
            for r in printed.ranges:
                call = _call(path, r, file)
                if not operand.literal:
                    where = f"with {path} as an absolute path"
                    call = call.with_note(f"{where}; {call.note}" if call.note else where)
                calls.append(call)
    if len(calls) > CALLS_SHOWN:
        more += len(calls) - CALLS_SHOWN
        calls = calls[:CALLS_SHOWN]
    return calls, more


def _from_end(printed: FilePrint) -> bool:
    """Whether the print shows the end of its file (``tail``): its page is the last one."""
    return any(r.first is not None and r.first < 0 for r in printed.ranges or ())


def page_call(call: ReadCall, *, backward: bool, page: int = PRINT_PAGE_BYTES) -> str:
    """``call`` cut to the lines whose Read output fits in ``page`` bytes, from its first
    line on (or back from its last for ``backward``); a shell page (``head -c``) when not
    one line fits."""
    try:
        size = os.stat(call.file_path).st_size
    except (OSError, ValueError):
        return str(call)
    first = call.offset or 1
    last = first + call.limit - 1 if call.limit is not None else None
    start = line_start(call.file_path, first, size)
    if start is None:
        return str(call)
    lengths: list[int] = []
    taken = 0
    try:
        with open(call.file_path, "rb") as handle:
            handle.seek(start)
            for text in handle:
                lengths.append(len(text) + READ_LINE_PREFIX)
                taken += len(text)
                if (last is not None and first + len(lengths) > last) or taken > COUNT_MAX_BYTES:
                    break
                if not backward and taken > page:
                    break  # a page is taken, whatever the line numbers add
    except OSError:
        return str(call)
    count = 0
    used = 0
    for length in reversed(lengths) if backward else lengths:
        if used + length > page:
            break
        used += length
        count += 1
    quoted = shlex.quote(call.file_path)
    if not count:
        shell = f"tail -c {page} {quoted}" if backward else f"head -c {page} {quoted}"
        return f"Bash {shell} (its lines are longer than a page)"
    offset = first + len(lengths) - count if backward else first
    return str(ReadCall(call.file_path, offset=offset if offset > 1 else None, limit=count))


def reason(prints: tuple[FilePrint, ...], files: tuple[Sized, ...], host: HostOutput) -> str:
    """The deny reason the agent reads: how much the command would print, and a Read
    call of one page of each file instead."""
    total = printed_bytes(files)
    lines = [
        f"ctxrelay guard: this command would print {total:,} bytes of files into your "
        f"context ({host.label}). Read a page of each instead (about {PRINT_PAGE_BYTES:,} "
        "bytes; the next page starts where it ends):"
    ]
    sized = {f.path for f in files if f.printed}
    shown = 0
    more = 0
    for printed in dict.fromkeys(prints):
        calls, extra = read_calls(printed)
        more += extra
        for call in calls:
            if call.file_path not in sized:
                continue  # printed nothing countable (missing, or a computed path)
            if shown == CALLS_SHOWN:
                more += 1
                continue
            shown += 1
            lines.append(f"- {page_call(call, backward=_from_end(printed))}")
    if more:
        lines.append(f"  ... and {more} more")
    lines.append("To find something in them, use Grep.")
    return "\n".join(lines)
