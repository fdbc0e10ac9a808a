"""Whether a transcript, after a given byte offset, shows a Read's result and no
compaction: what the re-read guard (:mod:`ctxrelay.claude.guard._reread`) asks before it
denies a repeated full Read; and whether a Codex thread's history still holds a tool
call, which the Codex re-read rule asks. ``os`` and the C JSON codec only: it runs in a
hook.

After a rewind Codex 0.171 goes on in a new rollout segment of the same thread
(``rollout-<time>-<thread>_<segment>.jsonl``) that holds only the new turns: its
``session_meta`` names the history it keeps as ``history_base`` (the segment it continues,
by the id at the end of that file's name, and ``end_byte_offset``, where the kept part of
that file ends); a rewind to the first message leaves none (no ``history_base``).

Claude Code 2.1.x writes a Read's result as a user line whose ``toolUseResult.file``
carries ``"filePath":<the path>`` (compact JSON, the path not ASCII-escaped), and a
compaction as a ``system`` line of subtype ``compact_boundary``. The scan looks for those
byte strings in what was written after ``start``, in chunks, never decoding a line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

__all__ = ["SINCE_MAX_BYTES", "call_in_rollout", "read_result_since"]

SINCE_MAX_BYTES = 64 * 1024 * 1024
"""The most read after ``start``; past it the answer is "cannot tell"."""

_BOUNDARY = b'"compact_boundary"'
_CHUNK = 1 << 20
_META_MAX_BYTES = 4 * 1024 * 1024
"""The most read of a rollout's first line (``session_meta``: 22 KB on 0.171)."""
_MAX_SEGMENTS = 64
"""The most segments followed back through ``history_base`` (one per rewind)."""


def read_result_since(transcript: str, start: int, file_path: str) -> bool | None:
    """True when the transcript after byte ``start`` holds a Read result of
    ``file_path`` and no compaction; False when it does not (or a compaction came);
    None when it cannot tell (unreadable, shorter than ``start``, or more than
    :data:`SINCE_MAX_BYTES` written since)."""
    needle = b'"filePath":' + json.dumps(file_path, ensure_ascii=False).encode()
    return _holds(transcript, start, needle, _BOUNDARY)


def call_in_rollout(rollout: str, call_id: str) -> bool | None:
    """True when the Codex thread whose current rollout is ``rollout`` still holds the
    tool call ``call_id`` (Codex writes it as ``"call_id":"<id>"``, compact): in that
    file or in the kept part of a segment it continues (``history_base``); False when
    it does not, None when it cannot tell (unreadable, a segment not found, or over
    :data:`SINCE_MAX_BYTES`)."""
    needle = b'"call_id":' + json.dumps(call_id).encode()
    path, end = rollout, None
    for _ in range(_MAX_SEGMENTS):
        held = _holds(path, 0, needle, None, end)
        if held is not False:
            return held
        base = _history_base(path)
        if base is None:
            return False
        segment, end = base
        found = _segment_file(path, segment)
        if found is None:
            return None
        path = found
    return None


def _history_base(rollout: str) -> tuple[str, int] | None:
    """The segment ``rollout`` continues and where its kept part ends, from the
    ``history_base`` of its ``session_meta``; ``None`` when it names none."""
    try:
        with open(rollout, "rb") as handle:
            first = handle.readline(_META_MAX_BYTES)
        meta = json.loads(first)
    except (OSError, ValueError):
        return None
    payload = meta.get("payload") if isinstance(meta, dict) else None
    base = payload.get("history_base") if isinstance(payload, dict) else None
    if not isinstance(base, dict):
        return None
    segment, end = base.get("thread_id"), base.get("end_byte_offset")
    if not isinstance(segment, str) or not segment or not isinstance(end, int) or end < 0:
        return None
    if os.sep in segment or segment.startswith("."):
        return None
    return segment, end


def _segment_file(rollout: str, segment: str) -> str | None:
    """The rollout file of ``segment`` (its name ends ``-<id>.jsonl`` for a thread's
    first segment, ``_<id>.jsonl`` for a later one): beside ``rollout``, else in another
    day's folder of the same ``sessions/YYYY/MM/DD`` tree, the newest first."""
    ends = (f"-{segment}.jsonl", f"_{segment}.jsonl")
    for folder in _days(os.path.dirname(rollout)):
        try:
            names = [e.name for e in os.scandir(folder)]
        except OSError:
            continue
        for name in names:
            if name.startswith("rollout-") and name.endswith(ends):
                return os.path.join(folder, name)
    return None


def _days(day: str) -> Iterator[str]:
    """``day``, then the other day folders of its ``sessions`` tree, the newest first."""
    yield day
    root = os.path.dirname(os.path.dirname(os.path.dirname(day)))
    if os.path.basename(root) != "sessions":
        return  # not Codex's layout: nothing else to look through
    try:
        for year in _newest_first(root):
            for month in _newest_first(year):
                yield from (d for d in _newest_first(month) if d != day)
    except OSError:
        return


def _newest_first(folder: str) -> list[str]:
    return sorted((e.path for e in os.scandir(folder) if e.is_dir()), reverse=True)


def _holds(
    path: str, start: int, needle: bytes, stop: bytes | None, end: int | None = None
) -> bool | None:
    """Whether ``path`` after byte ``start`` (and before byte ``end``, when given) holds
    ``needle`` before any ``stop``."""
    seen = False
    keep = len(needle) + (len(stop) if stop else 0)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if end is not None:
                size = min(size, end)
            if start < 0 or start > size or size - start > SINCE_MAX_BYTES:
                return None
            handle.seek(start)
            carry = b""
            left = size - start
            while left > 0:
                chunk = handle.read(min(_CHUNK, left))
                if not chunk:
                    break
                left -= len(chunk)
                window = carry + chunk
                if stop is not None and stop in window:
                    return False
                seen = seen or needle in window
                carry = window[-keep:]
    except OSError:
        return None
    return seen
