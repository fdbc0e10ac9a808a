"""The Read guard: deny a Read that would take more than its share of the room left
below the usable limit, and a Read of lines the same agent already read, unchanged since
(:mod:`ctxrelay.claude.guard._reread`).

The Read's size is counted from the file: the bytes of the lines it asks for (all of
them without a ``limit``; ``allow_large`` changes nothing here) with the Read tool's
line numbers, at :data:`~ctxrelay.budget.bounds.READ_BYTES_PER_TOKEN` bytes a token. The
room is the acting agent's: the main session's usable limit (the session document's,
which the hooks keep for the window Claude Code really uses) or a subagent's
:data:`~ctxrelay.budget.bounds.SUBAGENT_CONTEXT_MAX`, less the context of the response
that made the call. A Read may take :data:`~ctxrelay.budget.bounds.READ_ROOM_SHARE`-th of
it; the reason offers a Read of the lines that fit.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from ctxrelay.budget.bounds import (
    PRINT_PAGE_BYTES,
    READ_BYTES_PER_TOKEN,
    READ_ROOM_SHARE,
    SUBAGENT_CONTEXT_MAX,
)
from ctxrelay.budget.triggers import context_window_for
from ctxrelay.claude._limit import usable_limit
from ctxrelay.claude._state import session_doc_path
from ctxrelay.claude.guard._reads import READ_LINE_PREFIX, page_call
from ctxrelay.claude.guard._reread import check, transcript_of
from ctxrelay.hooks.guard._model import ReadCall
from ctxrelay.hooks.guard.output import COUNT_MAX_BYTES, line_start
from ctxrelay.hooks.state import is_plain, read_document
from ctxrelay.transcripts._hot import call_response

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Measured", "deny_reason", "judge", "measure", "over_room", "read_span", "room"]

_SMALL_TOKENS = 2_000
"""A Read this small is never weighed against the room (the usable-limit check denies
every call at the limit anyway): the common Read costs no transcript look-up."""


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_span(path: str, size: int, tool_input: Mapping[str, object]) -> tuple[int, int, int]:
    """``(first line, last line or -1 for the end, bytes)`` of the Read ``tool_input``:
    the bytes of the lines it shows, each with the Read tool's line number."""
    first = max(_number(tool_input.get("offset")) or 1, 1)
    limit = _number(tool_input.get("limit"))
    start = line_start(path, first, size)
    if start is None:
        return first, -1, size
    if limit is None or limit <= 0:
        lines = _count_lines(path, start, size)
        return first, -1, size - start + READ_LINE_PREFIX * lines
    taken = 0
    lines = 0
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            for text in handle:
                taken += len(text)
                lines += 1
                if lines == limit or taken > COUNT_MAX_BYTES:
                    break
    except OSError:
        return first, -1, size
    at_end = lines < limit or start + taken >= size
    return first, -1 if at_end else first + lines - 1, taken + READ_LINE_PREFIX * lines


def _count_lines(path: str, start: int, size: int) -> int:
    if size - start > COUNT_MAX_BYTES:
        return (size - start) // 40  # a typical line: the estimate only adds prefixes
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except OSError:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def room(payload: Mapping[str, object]) -> int | None:
    """Tokens left below the acting agent's limit when it made this call; ``None`` when
    the call's response cannot be found."""
    call = payload.get("tool_use_id")
    transcript = transcript_of(payload)
    if not isinstance(call, str) or not call or transcript is None:
        return None
    agent = bool(payload.get("agent_id"))
    response = call_response(transcript, call, agent=agent)
    if response is None:
        return None
    tokens, model = response[0], response[1]
    if agent:
        return SUBAGENT_CONTEXT_MAX - tokens
    session = payload.get("session_id")
    doc = read_document(session_doc_path(str(session))) if is_plain(session) else {}
    cached = doc.get("usable_limit")
    limit = cached if isinstance(cached, int) else usable_limit(context_window_for(model))
    return limit - tokens


class Measured(NamedTuple):
    """A Read of a regular file, sized: the lines it shows and the bytes they take."""

    path: str
    """Absolute."""
    size: int
    mtime_ns: int
    first: int
    last: int
    """-1: to the end of the file."""
    printed: int
    """Bytes of the lines shown, with the Read tool's line numbers."""

    @property
    def tokens(self) -> int:
        """What the Read adds to the context, on the safe side."""
        return self.printed // READ_BYTES_PER_TOKEN


def measure(tool_input: Mapping[str, object], cwd: str | None) -> Measured | None:
    """The Read ``tool_input`` sized; ``None`` for what is left to Read itself: a file
    that does not exist or is not a regular file, and a PDF's ``pages``. A relative
    ``file_path`` is resolved against ``cwd``."""
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path or tool_input.get("pages") is not None:
        return None
    if cwd is not None and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    path = os.path.abspath(path)
    first, last, printed = read_span(path, st.st_size, tool_input)
    return Measured(path, st.st_size, st.st_mtime_ns, first, last, printed)


def over_room(measured: Measured, payload: Mapping[str, object]) -> int | None:
    """The tokens left below the acting agent's limit when the measured Read would take
    more than its share of them (the guard denies it, offering a page that fits), else
    ``None``."""
    tokens = measured.tokens
    if tokens <= _SMALL_TOKENS:
        return None
    left = room(payload)
    if left is None or tokens <= max(left, 0) // READ_ROOM_SHARE:
        return None
    return left


def judge(
    measured: Measured,
    tool_input: Mapping[str, object],
    payload: Mapping[str, object],
    left: int | None,
) -> str | None:
    """The reason to deny the measured Read, ``left`` being :func:`over_room`'s answer:
    over its share of the room, or a re-read; ``None`` to allow it."""
    if left is not None:
        return _room_reason(measured.path, tool_input, measured.printed, measured.tokens, left)
    span = (measured.first, measured.last)
    return check(payload, measured.path, measured.size, measured.mtime_ns, span)


def deny_reason(
    tool_input: Mapping[str, object],
    cwd: str | None,
    payload: Mapping[str, object] | None = None,
) -> str | None:
    """The reason to deny this Read, or ``None`` to allow it (:func:`measure`, then
    :func:`judge`). Without the hook's ``payload`` (its session, agent and transcript)
    nothing is checked."""
    measured = None if payload is None else measure(tool_input, cwd)
    if measured is None or payload is None:
        return None
    return judge(measured, tool_input, payload, over_room(measured, payload))


def _room_reason(
    path: str, tool_input: Mapping[str, object], size: int, tokens: int, left: int
) -> str:
    share = max(left, 0) // READ_ROOM_SHARE
    page = min(share * READ_BYTES_PER_TOKEN, 16 * PRINT_PAGE_BYTES)
    offset = _number(tool_input.get("offset"))
    call = ReadCall(path, offset=offset if offset and offset > 1 else None)
    what = "reading it whole" if _number(tool_input.get("limit")) is None else "this Read"
    advice = page_call(call, backward=False, page=max(page, PRINT_PAGE_BYTES))
    return (
        f"ctxrelay guard: {what} would add about {tokens:,} tokens ({size:,} bytes) to your "
        f"context, and {max(left, 0):,} tokens are left below the usable limit: a Read may "
        f"take at most {share:,} of them. Read a page instead ({advice}), or search the "
        "file with Grep."
    )
