"""Whether a transcript, after a given byte offset, shows a Read's result and no
compaction: what the re-read guard (:mod:`ctxrelay.claude.guard._reread`) asks before it
denies a repeated full Read. ``os`` and the C JSON codec only: it runs in a hook.

Claude Code 2.1.x writes a Read's result as a user line whose ``toolUseResult.file``
carries ``"filePath":<the path>`` (compact JSON, the path not ASCII-escaped), and a
compaction as a ``system`` line of subtype ``compact_boundary``. The scan looks for those
byte strings in what was written after ``start``, in chunks, never decoding a line.
"""

from __future__ import annotations

import json
import os

__all__ = ["SINCE_MAX_BYTES", "read_result_since"]

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
    seen = False
    try:
        with open(transcript, "rb") as handle:
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
                if _BOUNDARY in window:
                    return False
                seen = seen or needle in window
                carry = window[-(len(needle) + len(_BOUNDARY)) :]
    except OSError:
        return None
    return seen
