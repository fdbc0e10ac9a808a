"""Whether a transcript, after a given byte offset, shows a Read's result and no
compaction: what the re-read guard (:mod:`ctxrelay.claude.guard._reread`) asks before it
denies a repeated full Read; and whether a Codex rollout still holds a tool call (after
a rewind Codex goes on in a new rollout that holds only the turns kept), which the Codex
re-read rule asks. ``os`` and the C JSON codec only: it runs in a hook.

Claude Code 2.1.x writes a Read's result as a user line whose ``toolUseResult.file``
carries ``"filePath":<the path>`` (compact JSON, the path not ASCII-escaped), and a
compaction as a ``system`` line of subtype ``compact_boundary``. The scan looks for those
byte strings in what was written after ``start``, in chunks, never decoding a line.
"""

from __future__ import annotations

import json
import os

__all__ = ["SINCE_MAX_BYTES", "call_in_rollout", "read_result_since"]

SINCE_MAX_BYTES = 64 * 1024 * 1024
"""The most read after ``start``; past it the answer is "cannot tell"."""

_BOUNDARY = b'"compact_boundary"'
_CHUNK = 1 << 20


def read_result_since(transcript: str, start: int, file_path: str) -> bool | None:
    """True when the transcript after byte ``start`` holds a Read result of
    ``file_path`` and no compaction; False when it does not (or a compaction came);
    None when it cannot tell (unreadable, shorter than ``start``, or more than
    :data:`SINCE_MAX_BYTES` written since)."""
    needle = b'"filePath":' + json.dumps(file_path, ensure_ascii=False).encode()
    return _holds(transcript, start, needle, _BOUNDARY)


def call_in_rollout(rollout: str, call_id: str) -> bool | None:
    """True when the Codex rollout holds the tool call ``call_id`` (Codex writes it as
    ``"call_id":"<id>"``, compact), False when it does not, None when it cannot tell
    (unreadable, or over :data:`SINCE_MAX_BYTES`)."""
    return _holds(rollout, 0, b'"call_id":' + json.dumps(call_id).encode(), None)


def _holds(path: str, start: int, needle: bytes, stop: bytes | None) -> bool | None:
    """Whether ``path`` after byte ``start`` holds ``needle`` before any ``stop``."""
    seen = False
    keep = len(needle) + (len(stop) if stop else 0)
    try:
        with open(path, "rb") as handle:
            end = os.fstat(handle.fileno()).st_size
            if start < 0 or start > end or end - start > SINCE_MAX_BYTES:
                return None
            handle.seek(start)
            carry = b""
            while True:
                chunk = handle.read(_CHUNK)
                if not chunk:
                    break
                window = carry + chunk
                if stop is not None and stop in window:
                    return False
                seen = seen or needle in window
                carry = window[-keep:]
    except OSError:
        return None
    return seen
