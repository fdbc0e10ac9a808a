"""The hooks' reads of a transcript's tail, the part of the reader every ``PreToolUse``
and every subagent ``PostToolUse`` runs. It holds two rules:

- :func:`tail_context`: the newest main-chain response's context, from one read of the
  file's last :data:`HOT_TAIL_BYTES`.
- :func:`call_response`: **the response that made this tool call**, found by the
  payload's ``tool_use_id``. Claude Code (2.1.332) queues transcript lines and writes
  them about every 100 ms, so a hook that starts right after a response can find that
  response not written yet (or no transcript at all). The hook then waits for it, up to
  :data:`ctxrelay.budget.bounds.CALL_LINE_WAIT_S`; when the line is already there (the
  usual case) it costs one read of the tail and a substring check. When the line never
  appears within the bound the answer is ``None`` and the caller fails open (the
  usable-limit check allows the call; it never blocks on a guess).

The response's lines follow the rules of the shared reader: the call's block is a
``tool_use`` block with that ``id`` in a top-level ``assistant`` line; its usage is that
response's usage (every line of one response carries the same input counts); subagent
lines inline in an old main transcript (``isSidechain``) are not the main chain's.
"""

from __future__ import annotations

import json
import os
import stat
import time
from typing import TYPE_CHECKING

from ctxrelay.budget.bounds import CALL_LINE_WAIT_S
from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, context_of, requested_model

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import IO, Any

__all__ = [
    "CALL_SEARCH_MAX_BYTES",
    "FIRST_CHUNK_BYTES",
    "HOT_TAIL_BYTES",
    "TAIL_MAX_BYTES",
    "call_response",
    "is_prompt",
    "json_record",
    "lines_backwards",
    "open_regular",
    "refused_too_long",
    "reply_written",
    "tail_context",
]

HOT_TAIL_BYTES = 256 * 1024
"""The end of the transcript :func:`tail_context` reads for the newest response; when it
holds none, the full tail reader (:func:`ctxrelay.transcripts.latest_context`) looks
further back."""

CALL_SEARCH_MAX_BYTES = 16 * 1024 * 1024
"""The most of the tail :func:`call_response` reads back for the call's response: past
the two newest responses it stops anyway (the response that made the call is the newest;
large tool results of sibling calls can come after it)."""

FIRST_CHUNK_BYTES = 64 * 1024
"""The first read from the end; most newest responses are within it."""

TAIL_MAX_BYTES = 64 * 1024 * 1024
"""The most a tail read looks at before it gives up (no reading rather than a slow hook)."""

_POLL_S = 0.01  # between two looks while the call's line is not written yet
_USAGE = b'"usage"'
_BOUNDARY = b"compact_boundary"
_SUBTYPE = "compact_boundary"  # a system line that only mentions it is no boundary


def open_regular(path: str) -> int | None:
    """A descriptor of the regular file at ``path``, else ``None`` (missing, a FIFO…)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def lines_backwards(
    f: IO[bytes],
    *,
    first_chunk: int = FIRST_CHUNK_BYTES,
    max_bytes: int = TAIL_MAX_BYTES,
) -> Iterator[bytes]:
    """The non-blank lines of ``f``, newest first, reading at most ``max_bytes``.

    A last line without its newline is yielded too (the caller's parse rejects it when it
    is truncated); a line cut by ``max_bytes`` is never yielded.
    """
    pos = f.seek(0, os.SEEK_END)
    carry = b""  # the start of the oldest line seen so far, whose beginning is not read yet
    chunk = max(1, first_chunk)
    budget = max_bytes
    while pos > 0 and budget > 0:
        n = min(chunk, pos, budget)
        pos -= n
        budget -= n
        f.seek(pos)
        buf = f.read(n) + carry
        if pos > 0:
            cut = buf.find(b"\n")
            if cut < 0:
                carry = buf
                chunk *= 2
                continue
            carry, buf = buf[:cut], buf[cut + 1 :]
        else:
            carry = b""
        for line in reversed(buf.split(b"\n")):
            if line.strip():
                yield line
        chunk *= 2


def is_prompt(record: dict[str, Any]) -> bool:
    """Whether a line is a real user message, which starts a turn of the main thread or a
    run of a subagent: a prompt, the "Stop hook feedback" Claude Code adds when a Stop
    hook continues the session, a coordinator's message to an agent it continued
    (``SendMessage``). Tool results are user lines too, and are not; nor are meta lines."""
    if record.get("type") != "user" or record.get("isMeta") is True:
        return False
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    if isinstance(content, list):
        kinds = {b.get("type") for b in content if isinstance(b, dict)}
        return "tool_result" not in kinds and bool(kinds & {"text", "image"})
    return False


def json_record(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object, or ``None`` for a line that is not one (the tail readers'
    one decode: a broken or cut line is passed over, never raised)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


_ASSISTANT = b'"type":"assistant"'


def _text_of(record: dict[str, Any]) -> str:
    """An ``assistant`` line's text as Claude Code puts it in ``last_assistant_message``:
    its text blocks joined by newlines, trimmed."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    ).strip()


def _tail_lines(path: str, tail_bytes: int) -> tuple[list[bytes], bool] | None:
    """The whole lines of the file's last ``tail_bytes`` (a cut first line left out), and
    whether they begin at the file's start; ``None`` when it is missing or not a regular
    file."""
    fd = open_regular(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - tail_bytes)
        chunk = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    return chunk.split(b"\n")[1 if start else 0 :], start == 0


def _turn_ended(lines: list[bytes], reply: str, prompt_id: str | None) -> bool:
    """Whether the newest main-chain line of this turn in ``lines`` is the reply: an
    ``assistant`` line whose text is ``reply`` and that no line of this prompt (its
    ``promptId``: the prompt itself, a tool result) comes after."""
    mine = prompt_id.encode() if prompt_id else None
    for line in reversed(lines):
        if _ASSISTANT not in line and (mine is None or mine not in line):
            continue
        record = json_record(line)
        if record is None or record.get("isSidechain") is True:
            continue
        kind = record.get("type")
        if kind == "assistant":
            return _text_of(record) == reply
        if kind == "user" and mine is not None and record.get("promptId") == prompt_id:
            return False  # this turn's newest line is not a response yet
    return False


def reply_written(
    path: str,
    reply: str,
    prompt_id: str | None = None,
    *,
    wait_s: float = CALL_LINE_WAIT_S,
    tail_bytes: int = HOT_TAIL_BYTES,
) -> bool:
    """Whether the transcript holds the turn's last reply (the ``Stop`` payload's
    ``last_assistant_message``), waiting up to ``wait_s`` for Claude Code to write it.

    A ``Stop`` hook that reads the transcript before that response is written would see
    the previous response's context (the race of :func:`call_response`, seen at ``Stop``
    only under heavy load). The rule is exact, whatever the reply holds (a short "Done.",
    an emoji, a quote, any language): the newest ``assistant`` line of the main chain,
    with no line of this prompt (``prompt_id``, the payload's) after it, has exactly the
    reply's text. True at once when it does; False past the bound (the caller reads what
    is there)."""
    wanted = reply.strip()
    deadline: float | None = None
    while True:
        tail = _tail_lines(path, tail_bytes)
        if tail is not None and _turn_ended(tail[0], wanted, prompt_id):
            return True
        now = time.monotonic()
        if deadline is None:
            deadline = now + wait_s
        if now >= deadline:
            return False
        time.sleep(min(_POLL_S, deadline - now))


TOO_LONG = "Prompt is too long"
"""The text of the synthetic response Claude Code (2.1.332) writes when it refuses to send
a request over its block point (``isApiErrorMessage``, model ``<synthetic>``)."""


def refused_too_long(path: str, *, agent: bool = False, tail_bytes: int = HOT_TAIL_BYTES) -> bool:
    """Whether the chain's newest ``assistant`` line is Claude Code's refusal to send an
    over-long request: the session (``agent``: the subagent of this file, whose lines are
    all sidechain lines) stopped there, with no response and no hook."""
    tail = _tail_lines(path, tail_bytes)
    for line in reversed(tail[0] if tail is not None else []):
        if _ASSISTANT not in line:
            continue
        record = json_record(line)
        if record is None or record.get("type") != "assistant":
            continue
        if not agent and record.get("isSidechain") is True:
            continue
        message = record.get("message")
        model = message.get("model") if isinstance(message, dict) else None
        return (
            record.get("isApiErrorMessage") is True
            and model == SYNTHETIC_MODEL
            and _text_of(record).startswith(TOO_LONG)
        )
    return False


def tail_context(
    path: str, *, tail_bytes: int = HOT_TAIL_BYTES
) -> tuple[int | None, str | None, bool]:
    """``(context, model, found)`` of the newest main-chain response in the last
    ``tail_bytes``; ``found`` is False when that tail holds no response and the file goes
    on before it. A compaction newer than every response reads ``(None, None, True)``."""
    tail = _tail_lines(path, tail_bytes)
    if tail is None:
        return None, None, True  # no transcript yet: no reading
    lines, whole = tail
    for line in reversed(lines):
        boundary = _BOUNDARY in line
        if not boundary and _USAGE not in line:
            continue
        record = json_record(line)
        if record is None or record.get("isSidechain") is True:
            continue
        if boundary and record.get("type") == "system" and record.get("subtype") == _SUBTYPE:
            return None, None, True  # the context restarted
        found = _response(record)
        if found is not None:
            return found[0], found[1], True
    # A tail that began at the start is the whole file: there is nothing further back.
    return None, None, whole


def _response(record: dict[str, Any]) -> tuple[int, str | None, str | None] | None:
    """``(context, model, message id)`` of a top-level ``assistant`` line reporting a real
    request (the rule of :func:`ctxrelay.transcripts._records.response_of`)."""
    if record.get("type") != "assistant":
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    model = message.get("model")
    context = context_of(message.get("usage"))
    if context is None or model == SYNTHETIC_MODEL:
        return None
    model = requested_model(record) or model
    message_id = message.get("id")
    return (
        context,
        model if isinstance(model, str) else None,
        message_id if isinstance(message_id, str) else None,
    )


def _made_call(record: dict[str, Any], call: str) -> bool:
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return False
    return any(
        isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") == call
        for block in content
    )


def _the_call(line: bytes, call: str, agent: bool) -> tuple[int, str | None, str | None] | None:
    record = json_record(line)
    if record is None or (not agent and record.get("isSidechain") is True):
        return None
    found = _response(record)
    return found if found is not None and _made_call(record, call) else None


def _look_back(
    fd: int, call: str, needle: bytes, agent: bool, max_bytes: int
) -> tuple[int, str | None, str | None] | None:
    """The call's response among the newest lines (back to the second-newest response)."""
    newest: object = None
    with os.fdopen(os.dup(fd), "rb") as f:
        for line in lines_backwards(f, max_bytes=max_bytes):
            if needle in line:
                found = _the_call(line, call, agent)
                if found is not None:
                    return found
            if _USAGE not in line:
                continue
            record = json_record(line)
            if record is None or (not agent and record.get("isSidechain") is True):
                continue
            response = _response(record)
            if response is None:
                continue
            # One response is several lines sharing its id; a call is the newest one's.
            if newest is None:
                newest = response[2]
            elif response[2] != newest:
                return None
    return None


def _complete_end(fd: int, size: int) -> int:
    """The offset just past the last complete line of a file of ``size`` bytes."""
    start = max(0, size - FIRST_CHUNK_BYTES)
    tail = os.pread(fd, size - start, start)
    cut = tail.rfind(b"\n")
    return start + cut + 1 if cut >= 0 else start


def _look_ahead(
    fd: int, start: int, call: str, needle: bytes, agent: bool
) -> tuple[tuple[int, str | None, str | None] | None, int]:
    """The call's response in the complete lines after ``start``, and where they end."""
    size = os.fstat(fd).st_size
    if size < start:
        start = 0  # replaced or truncated: look at it anew
    data = os.pread(fd, size - start, start)
    end = data.rfind(b"\n") + 1
    at = data.find(needle, 0, end)
    while at >= 0:
        first = data.rfind(b"\n", 0, at) + 1
        last = data.find(b"\n", at)
        found = _the_call(data[first:last], call, agent)
        if found is not None:
            return found, start + end
        at = data.find(needle, last, end)
    return None, start + end


def call_response(
    path: str,
    call: str,
    *,
    agent: bool = False,
    wait_s: float = CALL_LINE_WAIT_S,
    max_bytes: int = CALL_SEARCH_MAX_BYTES,
) -> tuple[int, str | None, str | None] | None:
    """``(context, model, message id)`` of the response whose ``tool_use`` block has id
    ``call``, waiting up to ``wait_s`` for Claude Code to write it.

    ``agent=False`` reads the main chain (inline sidechain lines are not it);
    ``agent=True`` a subagent's own file. ``None`` when it did not appear within the bound
    (the caller fails open) or ``path`` is not a regular file.
    """
    needle = json.dumps(call).encode()  # quoted: an id is never a prefix of another
    deadline: float | None = None
    seen: int | None = None  # the file's complete lines up to here hold no such response
    while True:
        fd = open_regular(path)
        if fd is not None:
            try:
                if seen is None:
                    size = os.fstat(fd).st_size
                    found = _look_back(fd, call, needle, agent, max_bytes)
                    seen = _complete_end(fd, size)
                else:
                    found, seen = _look_ahead(fd, seen, call, needle, agent)
            finally:
                os.close(fd)
            if found is not None:
                return found
        elif os.path.lexists(path) and not os.path.isfile(path):
            return None  # not a regular file: it will never hold the call
        now = time.monotonic()
        if deadline is None:
            deadline = now + wait_s
        if now >= deadline:
            return None
        time.sleep(min(_POLL_S, deadline - now))
