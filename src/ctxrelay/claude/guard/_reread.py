"""The re-read guard: a full Read of a file the same agent already read in full in its
current context, unchanged since, is denied; the content is still in its context.

A full Read is one with no ``offset``, ``limit`` or ``pages``. Each agent (the main
thread, each subagent by its id) has its own record, so a subagent's reads never block
the main thread's. The record is one small JSON document per session and agent in the
hooks' state directory, ``reads/<session>/<agent or "main">.json``:
``{"files": {path: [size, mtime_ns, read_at, transcript_bytes]}}`` for the newest
:data:`READS_KEPT` files, so it never grows with the transcript.

A read is recorded when the guard lets it through. A second full Read of the same path
is denied only when all of these hold:

- the file has the size and modification time it had then (a changed file is read);
- the agent's transcript, after the point it had reached then (``transcript_bytes``),
  holds that Read's result: a Read that never completed, one the user refused for
  instance, is no reason to deny the next;
- and no compaction since: after one the content is gone. Both are asked of the one
  transcript reader, :func:`ctxrelay.transcripts.read_result_since`.

``/clear`` and a handoff start a new session, hence a new record. Every failure to read
the record, the file or the transcript allows the Read: the guard never blocks what it
cannot check. This module runs on the hook's path for every full Read: ``os`` and the
hook's JSON codec alone, until a repeat is found.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping

from ctxrelay.claude._state import state_dir
from ctxrelay.hooks.guard.reads import load_reads, save_reads
from ctxrelay.hooks.state import is_plain as _plain
from ctxrelay.transcripts import read_result_since, subagent_transcript

__all__ = ["check", "read_note", "reason", "record_path"]


def record_path(session_id: str, agent: str) -> str:
    """The record of one agent (``"main"`` for the main thread) of one session."""
    return os.path.join(state_dir(), "reads", session_id, f"{agent}.json")


def _transcript(payload: Mapping[str, object]) -> str | None:
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


def _when(read_at: int, now: float) -> str:
    minutes = int(now - read_at) // 60
    ago = "less than a minute ago" if minutes < 1 else f"{minutes} min ago"
    stamp = time.strftime("%H:%M:%S UTC", time.gmtime(read_at))
    return f"at {stamp} ({ago})"


def _repeat(
    payload: Mapping[str, object], path: str, size: int, mtime_ns: int
) -> tuple[str, dict[str, list[int]], str | None, int | None]:
    """The agent's record, its transcript, and when ``path`` was read in full in the
    current context, unchanged since (``None``: not so read). The record loses the
    entry of ``path``; the caller puts it back."""
    session = payload.get("session_id")
    agent = payload.get("agent_id") or "main"
    if not _plain(session) or not _plain(agent):
        return "", {}, None, None
    record = record_path(str(session), str(agent))
    files = load_reads(record)
    transcript = _transcript(payload)
    before = files.pop(path, None)
    if (
        isinstance(before, list)
        and len(before) == 4
        and before[0] == size
        and before[1] == mtime_ns
        and transcript is not None
        and read_result_since(transcript, int(before[3]), path)
    ):
        files[path] = before  # still the newest full read of it
        return record, files, transcript, int(before[2])
    return record, files, transcript, None


def check(payload: Mapping[str, object], path: str, size: int, mtime_ns: int) -> str | None:
    """The reason to deny a full Read of ``path`` (already resolved and a regular file of
    ``size`` bytes), or ``None``; records the read when it is allowed."""
    record, files, transcript, read_at = _repeat(payload, path, size, mtime_ns)
    if not record:
        return None
    now = time.time()
    if read_at is not None:
        save_reads(record, files)
        return reason(path, read_at, now)
    files[path] = [size, mtime_ns, int(now), _size(transcript)]
    save_reads(record, files)
    return None


def read_note(payload: Mapping[str, object], path: str) -> str | None:
    """For the Bash guard's Read call of a whole file: a note when a full Read of it
    would be denied as a repeat (nothing is recorded)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    _, _, _, read_at = _repeat(payload, path, st.st_size, st.st_mtime_ns)
    if read_at is None:
        return None
    return (
        f"you already read it in full {_when(read_at, time.time())}, unchanged since: "
        "its content is in your context; a full Read is denied, read a part or Grep it"
    )


def reason(path: str, read_at: int, now: float) -> str:
    """What the agent is told."""
    ranged = json.dumps({"file_path": path, "offset": 1, "limit": 200}, ensure_ascii=False)
    return (
        f"ctxrelay guard: you already read {path} in full {_when(read_at, now)}, and it has "
        "not changed since (same size and modification time): its content is still in "
        f"your context above. Look there, read a part again with offset and limit (Read "
        f"{ranged}), or search it with Grep."
    )
