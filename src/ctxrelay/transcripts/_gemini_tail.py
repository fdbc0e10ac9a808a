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

import json
import os
import re
from collections.abc import Iterable, Iterator
from typing import IO, NamedTuple

from ctxrelay.transcripts._hot import (
    FIRST_CHUNK_BYTES,
    TAIL_MAX_BYTES,
    json_record,
    lines_backwards,
    open_regular,
)

__all__ = [
    "RESULT_SINCE_MAX_BYTES",
    "GeminiContext",
    "gemini_context",
    "gemini_result_kept",
    "gemini_started",
]

RESULT_SINCE_MAX_BYTES = 8 * 1024 * 1024
"""The most of a session file :func:`gemini_result_kept` reads after a read; past it the
answer is "cannot tell" (the re-read passes). The file holds a result twice (the call's
record and the result message), so 8 MiB is about a whole 1,048,576-token window of
text since the read: the CLI has compressed it away by then (install sets compression
at 90%). It also keeps the check within a Node start: about 1 ms of CPU per MB read."""

_GEMINI = b'"type":"gemini"'
_USER = b'"type":"user"'
_SET_MESSAGES = b'{"$set":{"messages"'
_HEADER = b'"projectHash"'
_HEADER_START = b'{"sessionId"'
_REWIND = b'{"$rewindTo"'
_RESPONSE = b'"functionResponse"'
_MARKED = re.compile(
    b"\\n(?:" + b"|".join(re.escape(m) for m in (_HEADER_START, _REWIND, _SET_MESSAGES)) + b")"
)


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
            if _header(line):
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
    path: str | os.PathLike[str],
    name: str,
    *,
    since: int | None = None,
    max_bytes: int = TAIL_MAX_BYTES,
) -> bool:
    """Whether the window given the handoff ``name`` holds a user message naming the file
    (the prompt a clear continued with, or the context a start hook added, both recorded
    in the user message) followed by a model response: its first exchange with the
    handoff went out. ``since`` is the file's length when the hook gave the file: the
    window that follows it (up to its next clear) is the one given it. ``None`` (not
    recorded), or past the file's end (rewritten): the last window. The window before a
    clear is never the given one: it wrote the file, and its ask and its ``write_file``
    result name the file too (a tool's result is no prompt). A missing file, or one
    killed before that response (or after the clear, before the prompt was recorded),
    has not started. Reads at most ``max_bytes``."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return False
    with os.fdopen(fd, "rb") as f:
        if since is None or since > os.fstat(f.fileno()).st_size:
            last: list[bytes] = []
            for line in lines_backwards(f, max_bytes=max_bytes):
                last.append(line)
                if _header(line):
                    break
            return _answered(reversed(last), name.encode())
        f.seek(max(since - 1, 0))
        if since > 0 and f.read(1) != b"\n":
            f.readline()  # ``since`` cut a line: its rest
        return _answered(_lines_upto(f, max_bytes), name.encode())


def _lines_upto(f: IO[bytes], max_bytes: int) -> Iterator[bytes]:
    """The lines of ``f`` from where it stands, up to ``max_bytes`` of them."""
    for line in f:
        max_bytes -= len(line)
        if max_bytes < 0:
            return
        yield line


def _answered(lines: Iterable[bytes], needle: bytes) -> bool:
    """Whether ``lines`` (from where a window was given a handoff) hold, within that
    window, a user message naming it (``needle``) and then a response."""
    named = False
    clears = 0
    for line in lines:
        if _header(line):
            clears += 1
            if clears > 1:
                return False  # past the window given the file
            named = False  # the window it was given starts here
        elif needle in line and (
            line.startswith(_SET_MESSAGES) or (_USER in line and _RESPONSE not in line)
        ):
            named = True
        elif named and _GEMINI in line and _tokens(json_record(line) or {}) is not None:
            return True
    return False


def _header(line: bytes) -> bool:
    """Whether a line is a header: a session's start, or a clear."""
    return line.startswith(_HEADER_START) and _HEADER in line


def _results(record: dict[str, object]) -> bool:
    """Whether a message record is a ``user`` message of ``functionResponse`` parts."""
    content = record.get("content") if record.get("type") == "user" else None
    return any(
        isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
        for part in (content if isinstance(content, list) else ())
    )


def gemini_result_kept(
    path: str | os.PathLike[str], start: int, *, max_bytes: int = RESULT_SINCE_MAX_BYTES
) -> bool | None:
    """Whether the conversation of the Gemini session file at ``path`` still holds the
    result of a tool call whose ``AfterTool`` hook ran when the file was ``start`` bytes
    long: the first ``user`` message written after ``start`` with ``functionResponse``
    parts (the results of that call and of the calls of its batch), and no later
    ``$rewindTo`` to it or an earlier message, no ``$set.messages`` without it (by its
    id), no clear (a new header). False when it was removed, or never written (the call
    did not complete); None when the file cannot tell: missing, shorter than ``start``,
    more than ``max_bytes`` written since, ``start`` not a line's start, or its last line
    cut. Reads only what was written after ``start``, and decodes only the lines that
    can change the answer, found by how they start (a message written after the result
    is found by its id)."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if start < 1 or start > size or size - start > max_bytes:
            return None
        f.seek(start - 1)
        tail = f.read(size - start + 1)
    if not tail.startswith(b"\n") or not tail.endswith(b"\n"):
        return None  # not a line's start, or a line still being written (or cut)
    found = _first_result(tail)
    if found is None:
        return False  # the call never completed
    result, since = found  # its message's id; where the lines after it begin
    kept: set[str] = set()  # the messages after it in the newest history that kept it
    for begin in _marked_lines(tail):
        line = tail[begin : tail.index(b"\n", begin)]
        if line.startswith(_HEADER_START):
            return False  # a new window: the context was cleared
        record = json_record(line)
        if record is None:
            return None
        if begin < since:  # written between the call and its result
            if line.startswith(_REWIND):
                return False
            continue  # a history replaced before the result came
        if line.startswith(_REWIND):
            to = record.get("$rewindTo")
            if not isinstance(to, str):
                return None
            if not (to in kept or _written(tail, to, since, begin)):
                return False  # to the result's message or before it
            continue
        messages = record["$set"]["messages"]
        if not isinstance(messages, list):
            return None
        # The CLI keeps a kept message's id (``updateMessagesFromHistory``).
        ids = [m.get("id") if isinstance(m, dict) else None for m in messages]
        if result not in ids:
            return False  # compressed away, or a rewind's history without it
        kept, since = {str(i) for i in ids[ids.index(result) + 1 :]}, begin + len(line) + 1
    return True


def _first_result(tail: bytes) -> tuple[str, int] | None:
    """The id of the first ``user`` message of ``functionResponse`` parts in ``tail``,
    and where the line after it begins."""
    at = 0
    while (at := tail.find(_RESPONSE, at)) != -1:
        begin, end = tail.rfind(b"\n", 0, at) + 1, tail.index(b"\n", at)
        record = json_record(tail[begin:end])
        if record is not None and _results(record) and isinstance(record.get("id"), str):
            return record["id"], end + 1
        at = end
    return None


def _marked_lines(tail: bytes) -> list[int]:
    """Where each line of ``tail`` that can remove a message begins (a header, a
    ``$rewindTo``, a ``$set.messages``), in order: found by how they start, in one pass
    of the regular-expression engine, never by decoding every line."""
    return [m.start() + 1 for m in _MARKED.finditer(tail)]


def _written(tail: bytes, rid: str, begin: int, end: int) -> bool:
    """Whether a message record of id ``rid`` (compact, its id first, as the CLI writes
    one) starts a line of ``tail`` between ``begin`` and ``end``."""
    return tail.find(b'\n{"id":' + json.dumps(rid).encode() + b",", begin - 1, end) != -1
