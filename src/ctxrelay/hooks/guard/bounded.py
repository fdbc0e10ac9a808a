"""The print bound of a host whose shell is how its agent reads a file (Codex, the
Gemini CLI): which regular files a command prints, with their size and how much of
them (:func:`printed_files`), whether that is more than the host's bound
(:func:`too_big`), and the re-read record of what an agent printed whole
(:func:`seen_whole`, :func:`remember_whole`). The bounds and the advice in a deny are
the host's own.
"""

from __future__ import annotations

import glob
import os
import stat
import time
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ctxrelay.hooks.guard._model import FilePrint, LineRange
from ctxrelay.hooks.guard.prints import classify
from ctxrelay.hooks.guard.reads import load_reads, save_reads

__all__ = [
    "Printed",
    "kib",
    "printed_files",
    "remember_whole",
    "seen_whole",
    "span",
    "too_big",
]


class Printed(NamedTuple):
    """One file a command prints, with its size and how much of it."""

    path: str
    size: int
    mtime_ns: int
    range: LineRange | None
    """``None``: the range is known only when the command runs."""

    @property
    def whole(self) -> bool:
        return self.range is not None and self.range.whole


def _files(prints: tuple[FilePrint, ...]) -> Iterator[Printed]:
    for printed in dict.fromkeys(prints):
        for operand in printed.operands:
            if not operand.literal:
                continue  # a path the shell computes: nothing to look at
            paths = [operand.path]
            if operand.glob:
                paths = sorted(glob.glob(operand.path))[:100] or paths
            for path in paths:
                try:
                    st = os.stat(path)
                except (OSError, ValueError):
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                for r in printed.ranges or (None,):
                    yield Printed(path, st.st_size, st.st_mtime_ns, r)


def printed_files(command: str, cwd: str | None) -> tuple[Printed, ...]:
    """The regular files ``command`` prints into the context, as it stands now."""
    prints = classify(command, cwd)
    return tuple(_files(prints)) if prints else ()


def span(r: LineRange | None) -> int | None:
    """How many lines (or bytes) ``r`` prints whatever the file's length; ``None`` when
    that depends on the file (whole, to the end, all but the last N) or is unknown."""
    if r is None:
        return None
    first, last = r.first, r.last
    if first is None:
        return last if last is not None and last > 0 else None
    if first < 0:
        return -first if last is None else None
    if last is None or last < 0:
        return None
    return max(last - first + 1, 0)


def too_big(p: Printed, max_bytes: int, max_lines: int) -> bool:
    """Whether printing ``p`` pours more than the host's bound into the context: a file
    over ``max_bytes`` printed whole, to its end, or by more than ``max_lines`` lines (or
    more bytes than ``max_bytes``)."""
    if p.size <= max_bytes:
        return False
    n = span(p.range)
    if n is None:
        return True
    if p.range is not None and p.range.unit == "byte":
        return n > max_bytes
    return n > max_lines


def kib(size: int) -> str:
    """``size`` bytes in KiB as a person reads it (``292.9 KiB``)."""
    return f"{size / 1024:.1f}".removesuffix(".0") + " KiB"


def _entries(record: str) -> dict[str, list[int]]:
    """The record's entries of this shape (size, modification time, when printed)."""
    return {
        k: v
        for k, v in load_reads(record).items()
        if isinstance(v, list) and len(v) == 3 and all(isinstance(n, int) for n in v)
    }


def seen_whole(record: str, files: Iterable[Printed]) -> tuple[str, int] | None:
    """The first of ``files`` printed whole that the agent of ``record`` already printed
    whole, unchanged since (same size and modification time): its path and when."""
    seen = _entries(record)
    for p in files:
        before = seen.get(p.path)
        if p.whole and before is not None and before[:2] == [p.size, p.mtime_ns]:
            return p.path, before[2]
    return None


def remember_whole(record: str, files: Iterable[Printed]) -> None:
    """After the print ran (its output reached the agent): remember each file printed
    whole, newest last, for the re-read rule."""
    whole = [p for p in files if p.whole]
    if not whole:
        return
    seen = _entries(record)
    now = int(time.time())
    for p in whole:
        seen.pop(p.path, None)
        seen[p.path] = [p.size, p.mtime_ns, now]
    save_reads(record, seen)
