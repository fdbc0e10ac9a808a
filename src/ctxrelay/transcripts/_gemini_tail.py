"""The Gemini CLI's session file as its hooks read it: the context now, and whether the
session started from a handoff file (stdlib only, from the file's tail).

The file (``docs/gemini-facts.md``, "Session file") is JSONL: a header line
(``{"sessionId", "projectHash", "startTime", "kind"}``), message records keyed by ``id``
(``type`` ``user``, ``gemini`` or ``info``; a later record with the same id replaces the
earlier one), patches ``{"$set": {...}}`` (``$set.messages`` replaces every message: a
clear or a compression) and ``{"$rewindTo": id}``. A ``gemini`` record's ``tokens`` are
its response's usage: ``input`` is the whole prompt (cached tokens included), so the
newest one's ``input`` is the context now.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from ctxrelay.transcripts._hot import (
    FIRST_CHUNK_BYTES,
    TAIL_MAX_BYTES,
    json_record,
    lines_backwards,
    open_regular,
)

__all__ = ["GeminiContext", "gemini_context", "gemini_started"]

_GEMINI = b'"type":"gemini"'
_USER = b'"type":"user"'
_SET_MESSAGES = b'{"$set":{"messages"'
_HEADER = b'"projectHash"'


class GeminiContext(NamedTuple):
    """The newest response of a Gemini session's current window."""

    context_tokens: int
    """Its prompt's tokens (``tokens.input``): the context the next request starts from."""
    model: str | None
    response_id: str | None
    windows: int
    """How many windows the file shows up to that response: 1, plus one for each clear
    (a header line after the first) seen from the tail; a lower bound when the file is
    longer than the tail read."""


def _tokens(record: dict[str, object]) -> int | None:
    tokens = record.get("tokens")
    value = tokens.get("input") if isinstance(tokens, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def gemini_context(
    path: str | os.PathLike[str],
    *,
    first_chunk: int = FIRST_CHUNK_BYTES,
    max_bytes: int = TAIL_MAX_BYTES,
) -> GeminiContext | None:
    """The context of a Gemini session now (:class:`GeminiContext`); ``None`` when the
    file is missing, or holds no response since its last clear or compression
    (``$set.messages``) within its last ``max_bytes``."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return None
    found: GeminiContext | None = None
    headers = 0
    with os.fdopen(fd, "rb") as f:
        for line in lines_backwards(f, first_chunk=first_chunk, max_bytes=max_bytes):
            if found is None and line.startswith(_SET_MESSAGES):
                return None  # history replaced and no response since
            if _HEADER in line and line.startswith(b'{"sessionId"'):
                headers += 1
                continue
            if found is not None or _GEMINI not in line:
                continue
            record = json_record(line)
            if record is None or record.get("type") != "gemini":
                continue
            tokens = _tokens(record)
            if tokens is None:
                continue
            model, rid = record.get("model"), record.get("id")
            found = GeminiContext(
                tokens,
                model if isinstance(model, str) and model else None,
                rid if isinstance(rid, str) else None,
                0,
            )
    return None if found is None else found._replace(windows=max(headers, 1))


def gemini_started(
    path: str | os.PathLike[str], name: str, *, max_bytes: int = TAIL_MAX_BYTES
) -> bool:
    """Whether the session file holds a user message naming ``name`` (a handoff file: the
    prompt a clear continued with, or the context a start hook added, both recorded in
    the user message) followed by a model response: the session's first exchange with
    the handoff went out. A missing file, or one killed before that response, has not."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return False
    needle = name.encode()
    answered = False
    with os.fdopen(fd, "rb") as f:
        for line in lines_backwards(f, max_bytes=max_bytes):
            if _GEMINI in line and _tokens(json_record(line) or {}) is not None:
                answered = True
            elif needle in line and (_USER in line or line.startswith(_SET_MESSAGES)):
                return answered
    return False
