"""The hook's reader: the latest context of a transcript, read from its end.

A transcript grows for the whole session (100 MB is ordinary for a long one), and the
hook runs on every tool call, so it never reads the file from the start: it reads
chunks backwards from the end, doubling their size, until it meets the newest response
(or a compaction, or ``max_bytes``). Its cost depends on how far back that response is,
not on the file's size.
"""

from __future__ import annotations

import os
from typing import IO, Any

from ctxrelay.transcripts._hot import (
    FIRST_CHUNK_BYTES,
    TAIL_MAX_BYTES,
    json_record,
    lines_backwards,
)
from ctxrelay.transcripts._pass import open_fd
from ctxrelay.transcripts._records import (
    AgentStats,
    ContextReading,
    Response,
    as_count,
    response_of,
)

__all__ = [
    "FIRST_CHUNK_BYTES",
    "TAIL_MAX_BYTES",
    "agent_stats",
    "latest_context",
    "lines_backwards",
    "open_transcript",
]

_USAGE = b'"usage"'
_BOUNDARY = b'"compact_boundary"'


def open_transcript(path: str | os.PathLike[str]) -> IO[bytes] | None:
    """Open a transcript for binary reading; ``None`` when it does not exist (yet).

    Refuses anything but a regular file (:func:`ctxrelay.transcripts._pass.open_fd`).
    """
    fd = open_fd(os.fspath(path))
    return None if fd is None else os.fdopen(fd, "rb")


def _is_boundary(record: dict[str, Any]) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "compact_boundary"


def _pre_tokens(record: dict[str, Any]) -> int | None:
    meta = record.get("compactMetadata")
    if isinstance(meta, dict) and "preTokens" in meta:
        return as_count(meta.get("preTokens"))
    return None


def latest_context(
    path: str | os.PathLike[str],
    *,
    agent: bool = False,
    first_chunk: int = FIRST_CHUNK_BYTES,
    max_bytes: int = TAIL_MAX_BYTES,
) -> ContextReading | None:
    """The context of the newest request of a transcript's chain, read from its tail.

    ``agent=False`` reads the main chain (inline ``isSidechain`` lines of old transcripts
    are skipped); ``agent=True`` reads a subagent's own file, where every line is a
    sidechain line. ``None`` when the file does not exist or no response was found within
    ``max_bytes``; a reading with ``compacted=True`` when a compaction is newer than the
    latest response. Raises :class:`~ctxrelay.errors.TranscriptError` for a path that is
    not a readable regular file.
    """
    f = open_transcript(path)
    if f is None:
        return None
    with f:
        for line in lines_backwards(f, first_chunk=first_chunk, max_bytes=max_bytes):
            boundary = _BOUNDARY in line
            if not boundary and _USAGE not in line:
                continue
            record = json_record(line)
            if record is None:
                continue
            if not agent and record.get("isSidechain") is True:
                continue
            if boundary and _is_boundary(record):
                return ContextReading(None, compacted=True, pre_tokens=_pre_tokens(record))
            found = response_of(record)
            if found is not None:
                message_id, model, usage = found
                return ContextReading(usage.context_tokens, model, message_id, usage)
    return None


def agent_stats(path: str | os.PathLike[str]) -> AgentStats | None:
    """Turns used (unique responses), latest context and model of a subagent's file.

    One forward pass that parses only the lines that can hold usage: subagent files stay
    small because the plugin bounds their context. ``None`` when the file does not exist.
    """
    f = open_transcript(path)
    if f is None:
        return None
    seen: set[str] = set()
    latest: Response | None = None
    model: str | None = None
    with f:
        for line in f:
            boundary = _BOUNDARY in line
            if not boundary and _USAGE not in line:
                continue
            record = json_record(line)
            if record is None:
                continue
            if boundary and _is_boundary(record):
                latest = None  # the context restarts; the turns keep counting
                continue
            found = response_of(record)
            if found is None:
                continue
            message_id, found_model, usage = found
            seen.add(message_id)
            latest = Response(message_id, found_model, usage)
            model = found_model or model
    if latest is None:
        return AgentStats(len(seen), None, model)
    return AgentStats(len(seen), latest.context_tokens, model, latest.message_id)
