"""The re-read guard: a Read of lines the same agent already read in its current
context, from the file as it is now, is denied; the content is still in its context.

Every Read covers a span of lines: ``offset`` (1 by default) to ``offset + limit - 1``,
or to the end without a ``limit`` or when the limit reaches past it (so ``offset: 1``
or a large ``limit`` is the whole file again, and a different range is not a re-read).
Each agent (the main thread, each subagent by its id) has its own record, so a
subagent's reads never block the main thread's. The record is one small JSON document
per session and agent in the hooks' state directory, ``reads/<session>/<agent or
"main">.json``: ``{"files": {"<path>\\n<first>:<last>": [size, mtime_ns, read_at,
transcript_bytes]}}`` (``last`` -1 for the end) for the newest :data:`READS_KEPT` spans,
so it never grows with the transcript.

A read is recorded when the guard lets it through. A later Read is denied only when an
earlier span holds all of its lines and:

- the file has the size and modification time it had then (a changed file is read);
- the agent's transcript, after the point it had reached then (``transcript_bytes``),
  holds a Read result of that file: a Read that never completed, one the user refused
  for instance, is no reason to deny the next;
- and no compaction since: after one the content is gone. Both are asked of the one
  transcript reader, :func:`ctxrelay.transcripts.read_result_since`.

``/clear`` and a handoff start a new session, hence a new record. Every failure to read
the record, the file or the transcript allows the Read: the guard never blocks what it
cannot check.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping

from ctxrelay.claude._state import state_dir
from ctxrelay.hooks.guard.reads import (
    Read,
    Span,
    earlier_read,
    read_when,
    remember_reads,
    span_words,
)
from ctxrelay.hooks.state import is_plain as _plain
from ctxrelay.transcripts import read_result_since, subagent_transcript

__all__ = ["Span", "check", "reason", "record_path", "transcript_of"]


def record_path(session_id: str, agent: str) -> str:
    """The record of one agent (``"main"`` for the main thread) of one session."""
    return os.path.join(state_dir(), "reads", session_id, f"{agent}.json")


def transcript_of(payload: Mapping[str, object]) -> str | None:
    """The acting agent's own transcript."""
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        return None
    agent = payload.get("agent_id")
    if not agent:
        return transcript
    return subagent_transcript(transcript, payload.get("session_id"), agent, must_exist=False)


def _size(path: str | None) -> int:
    try:
        return os.stat(path).st_size if path else 0
    except OSError:
        return 0


def check(
    payload: Mapping[str, object], path: str, size: int, mtime_ns: int, span: Span
) -> str | None:
    """The reason to deny a Read of ``span`` of ``path`` (already resolved and a regular
    file of ``size`` bytes), or ``None``; records the read when it is allowed."""
    session = payload.get("session_id")
    agent = payload.get("agent_id") or "main"
    if not _plain(session) or not _plain(agent):
        return None
    record = record_path(str(session), str(agent))
    transcript = transcript_of(payload)
    read = Read(path, size, mtime_ns, span)

    def kept(file_path: str, start: int) -> bool | None:
        return None if transcript is None else read_result_since(transcript, start, file_path)

    seen = earlier_read(record, (read,), kept)
    if seen is not None:
        return reason(path, seen[1], seen[2], time.time())
    remember_reads(record, (read,), _size(transcript))
    return None


def reason(path: str, span: Span, read_at: int, now: float) -> str:
    """What the agent is told."""
    what = span_words(span)
    return (
        f"ctxrelay guard: you already read {path} {what} {read_when(read_at, now)}, and it has "
        "not changed since (same size and modification time): those lines are still in "
        "your context above. Look there, read other lines with offset and limit, or "
        "search the file with Grep."
    )
