"""The Gemini CLI's session file as its hooks read it: the context now, and whether the
session started from a handoff file (stdlib only, from the file's tail).

The file (``docs/gemini-facts.md``, "Session file") is JSONL: a header line
(``{"sessionId", "projectHash", "startTime", "kind"}``), message records keyed by ``id``
(``type`` ``user``, ``gemini`` or ``info``; a later record with the same id replaces the
earlier one), patches ``{"$set": {...}}`` (``$set.messages`` replaces every message: a
clear or a compression) and ``{"$rewindTo": id}``. A ``gemini`` record's ``tokens`` are
its response's usage: ``input`` is the whole prompt (cached tokens included), so the
newest one's ``input`` is the context now.

A tool call's results reach the file after its ``AfterTool`` hook ran: the ``gemini``
record is written again with its ``toolCalls``, then a ``user`` record whose ``content``
holds the ``functionResponse`` parts (that message is what the model is sent). ``/rewind``
writes ``{"$rewindTo": id}`` (that message and every later one leave the conversation)
and then ``$set.messages`` with what is left; the CLI's compression writes
``$set.messages`` with its summary and the newest messages it keeps, by their ids
(:func:`gemini_result_kept`).
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
from ctxrelay.transcripts._since import SINCE_MAX_BYTES

__all__ = ["GeminiContext", "gemini_context", "gemini_result_kept", "gemini_started"]

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


def _results(record: dict[str, object]) -> bool:
    """Whether a message record is a ``user`` message of ``functionResponse`` parts."""
    content = record.get("content") if record.get("type") == "user" else None
    return any(
        isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
        for part in (content if isinstance(content, list) else ())
    )


def gemini_result_kept(
    path: str | os.PathLike[str], start: int, *, max_bytes: int = SINCE_MAX_BYTES
) -> bool | None:
    """Whether the conversation of the Gemini session file at ``path`` still holds the
    result of a tool call whose ``AfterTool`` hook ran when the file was ``start`` bytes
    long: the first ``user`` message written after ``start`` with ``functionResponse``
    parts (the results of that call and of the calls of its batch), and no later
    ``$rewindTo`` to it or an earlier message, no ``$set.messages`` without it (by its
    id), no clear (a new header). False when it was removed, or never written (the call
    did not complete); None when the file cannot tell: missing, shorter than ``start``,
    more than ``max_bytes`` written since, or a line that is not whole JSON (cut
    mid-line, or ``start`` not a line's start). Reads only what was written after
    ``start``."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if start < 0 or start > size or size - start > max_bytes:
            return None
        f.seek(start)
        tail = f.read(size - start)
    if tail and not tail.endswith(b"\n"):
        return None  # a line still being written, or cut
    later: list[str] | None = None  # from the result's message on, in conversation order
    holder = 0  # the index in ``later`` of the last message holding the result
    for line in tail.splitlines():
        record = json_record(line)
        if record is None:
            return None
        if "sessionId" in record and "projectHash" in record:
            return False  # a new window: the context was cleared
        if "$rewindTo" in record:
            if later is None or record["$rewindTo"] not in later[holder + 1 :]:
                return False  # to the result's message or before it
            del later[later.index(record["$rewindTo"]) :]
            continue
        patch = record.get("$set")
        messages = patch.get("messages") if isinstance(patch, dict) else None
        if isinstance(messages, list):
            if later is None:
                continue  # the history replaced before the result came
            # The CLI keeps a kept message's id (``updateMessagesFromHistory``).
            ids = [str(m.get("id")) if isinstance(m, dict) else "" for m in messages]
            held = [n for n, i in enumerate(ids) if i in later[: holder + 1]]
            if not held:
                return False  # compressed away, or a rewind's history without it
            later, holder = ids[held[0] :], held[-1] - held[0]
            continue
        rid = record.get("id")
        if not isinstance(rid, str) or "type" not in record:
            continue
        if later is None:
            if _results(record):
                later = [rid]
        elif rid not in later:
            later.append(rid)
    return later is not None
