"""An agent's re-read record: which files (and which lines of them) it printed or read,
with the numbers each host's re-read rule compares (``[size, mtime_ns, read_at,
transcript_bytes]`` or a host's own), in one small JSON document per session and agent
in the host's state folder: ``{"files": {key: [...]}}`` for the newest
:data:`READS_KEPT` reads, so it never grows with the transcript. A key is the path, or
the path and a line span (:func:`span_key`) for a host whose rule knows ranges: a read
is a re-read when an earlier span of the unchanged file :func:`holds` all its lines.
"""

from __future__ import annotations

import json
import os
import time

__all__ = [
    "READS_KEPT",
    "Span",
    "holds",
    "load_reads",
    "read_when",
    "save_reads",
    "span_key",
    "span_of",
    "span_words",
]

READS_KEPT = 64
"""Files remembered per agent; the oldest read is forgotten first."""


Span = tuple[int, int]
"""The first line of a read and its last (-1: to the end of the file), 1-based."""


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
