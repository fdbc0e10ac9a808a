"""An agent's re-read record: which files (and which lines of them) it printed or read,
with the numbers each host's re-read rule compares (``[size, mtime_ns, read_at,
transcript_bytes]``, or a host's own), in one small JSON document per session and agent
in the host's state folder: ``{"files": {key: [...]}}`` for the newest
:data:`READS_KEPT` reads, so it never grows with the transcript. A key is the path, or
the path and a line span (:func:`span_key`) for a host whose rule knows ranges: a read
is a re-read when an earlier span of the unchanged file :func:`holds` all its lines.

``transcript_bytes`` is where the agent's transcript ended when the read was
remembered, for a host whose transcript shows when a read's result left the context (a
compaction, a rewind): :func:`earlier_read` then asks the host's transcript reader
(:data:`Kept`) whether the result is still there, and denies only on a yes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

from ctxrelay.hooks.guard._model import LineRange

__all__ = [
    "READS_KEPT",
    "Kept",
    "Read",
    "Span",
    "earlier_read",
    "holds",
    "load_reads",
    "print_span",
    "read_when",
    "remember_reads",
    "save_reads",
    "span_key",
    "span_of",
    "span_words",
]

READS_KEPT = 64
"""Files remembered per agent; the oldest read is forgotten first."""


Span = tuple[int, int]
"""The first line of a read and its last (-1: to the end of the file), 1-based."""

Kept = Callable[[str, int], bool | None]
"""A host's question to its transcript: whether the result of a read of this path,
remembered when the transcript was this many bytes long, is still in the agent's
context (``None``: cannot tell)."""


class Read(NamedTuple):
    """One file a tool call reads into the context, and which lines of it (``span``
    ``None``: not known before it runs, or a byte range)."""

    path: str
    size: int
    mtime_ns: int
    span: Span | None


def print_span(r: LineRange | None) -> Span | None:
    """The lines a shell print shows of a file, when known before it runs."""
    if r is None or r.unit != "line":
        return None
    first, last = r.first, r.last
    if (first is not None and first < 1) or (last is not None and last < 1):
        return None  # counted from the end: the lines depend on the file's length
    return (first or 1, -1 if last is None else last)


def holds(outer: Span, inner: Span) -> bool:
    """Whether a read of ``outer`` already showed every line of ``inner``."""
    return outer[0] <= inner[0] and (outer[1] == -1 or (inner[1] != -1 and inner[1] <= outer[1]))


def span_key(path: str, span: Span) -> str:
    """The record's key of a read of ``span`` of ``path``: ``"<path>\\n<first>:<last>"``."""
    return f"{path}\n{span[0]}:{span[1]}"


def span_of(key: str, path: str) -> Span | None:
    """The span of a record key of ``path`` (``None``: another file, or no span)."""
    head, _, tail = key.rpartition("\n")
    if head != path:
        return None
    first, _, last = tail.partition(":")
    try:
        return int(first), int(last)
    except ValueError:
        return None


def span_words(span: Span) -> str:
    """A span as the agent is told it (``in full``, ``lines 3 to 9``)."""
    if span == (1, -1):
        return "in full"
    if span[1] == -1:
        return f"from line {span[0]} to the end"
    return f"lines {span[0]} to {span[1]}"


def read_when(read_at: int, now: float | None = None) -> str:
    """When a read was, as the agent is told it: ``at 10:02:03 UTC (4 min ago)``."""
    minutes = int((time.time() if now is None else now) - read_at) // 60
    ago = "less than a minute ago" if minutes < 1 else f"{minutes} min ago"
    return f"at {time.strftime('%H:%M:%S UTC', time.gmtime(read_at))} ({ago})"


def load_reads(path: str) -> dict[str, list[int]]:
    """An agent's re-read record (path -> numbers); empty when it is missing or broken."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def save_reads(path: str, files: dict[str, list[int]]) -> None:
    """Write an agent's re-read record, its newest :data:`READS_KEPT` files, atomically;
    a failure to write only forgets."""
    kept = dict(list(files.items())[-READS_KEPT:])
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"files": kept}))
        os.replace(tmp, path)  # a parallel Read's record may win: it only forgets one
    except OSError:
        pass


def _entries(record: str) -> dict[str, list[int]]:
    """The record's span entries: ``"<path>\\n<first>:<last>": [size, modification
    time, when read]``, and the transcript's length then for a host that keeps it."""
    return {
        k: v
        for k, v in load_reads(record).items()
        if isinstance(v, list) and len(v) in (3, 4) and all(isinstance(n, int) for n in v)
    }


def earlier_read(
    record: str, reads: Iterable[Read], kept: Kept | None = None
) -> tuple[str, Span, int] | None:
    """The first of ``reads`` whose lines an earlier read of the unchanged file (same size
    and modification time) in ``record`` already showed: its path, that span and when.
    With ``kept`` (a host that follows its transcript), only an earlier read whose result
    ``kept`` says is still in the context counts; one remembered without the
    transcript's length does not (it cannot be checked)."""
    seen = _entries(record)
    for read in reads:
        if read.span is None:
            continue
        for key, before in seen.items():
            earlier = span_of(key, read.path)
            if (
                earlier is not None
                and before[:2] == [read.size, read.mtime_ns]
                and holds(earlier, read.span)
                and (kept is None or (len(before) == 4 and kept(read.path, before[3]) is True))
            ):
                return read.path, earlier, before[2]
    return None


def remember_reads(record: str, reads: Iterable[Read], transcript_bytes: int | None = None) -> None:
    """Remember the lines a call read of each file, newest last, and where the agent's
    transcript ended then (``transcript_bytes``, for :func:`earlier_read`'s ``kept``);
    what was read of a file that changed since is forgotten."""
    known = [(r, r.span) for r in reads if r.span is not None]
    if not known:
        return
    seen = _entries(record)
    now = int(time.time())
    after = [] if transcript_bytes is None else [transcript_bytes]
    for read, span in known:
        for key in [k for k, v in seen.items() if span_of(k, read.path) is not None]:
            if seen[key][:2] != [read.size, read.mtime_ns]:
                del seen[key]  # the file changed: what was read of it is stale
        key = span_key(read.path, span)
        seen.pop(key, None)
        seen[key] = [read.size, read.mtime_ns, now, *after]
    save_reads(record, seen)
