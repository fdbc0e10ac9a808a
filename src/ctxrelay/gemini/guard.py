"""The Gemini guard: the print and re-read guards on the Gemini CLI's shell tool
(``run_shell_command``) and the re-read guard on its ``read_file``.

The command is judged by the core's reading (:func:`ctxrelay.hooks.guard.prints.classify`:
which parts print which file and range, and :mod:`ctxrelay.hooks.guard.output`: how many
bytes). The CLI hands the model a shell output of up to
:data:`~ctxrelay.budget.bounds.GEMINI_TOOL_OUTPUT_MAX_CHARS` characters whole and keeps
the first 8,000 and last 32,000 of a longer one (the rest spilled to a file):
:func:`host_output`. So a print is denied only when the model would get more than
:data:`~ctxrelay.budget.bounds.PRINT_BIG_BYTES` of it, and the reason offers a page
counted in bytes (``head -c``) and ``grep``; a small bounded read always passes.

A read of lines the session already read in its current window, from the file as it is
now (same size and modification time), is denied too, by the shell or by ``read_file``
alike: every read covers a span of lines (a whole print or ``read_file`` is the whole
file, ``sed -n '5,9p'`` or ``start_line``/``end_line`` a range), and an earlier span
that holds all of its lines makes it a re-read. The record is written once the read ran,
at ``AfterTool``, with the session file's length then (``transcript_path``), and
forgotten when ctxrelay clears the window. The CLI can remove a read's result from the
conversation by itself (``/rewind``, its own compression), so a re-read is denied only
when the session file past that length still holds the result
(:func:`ctxrelay.transcripts.gemini_result_kept`); a file that cannot tell allows it. The
CLI shows the model ``Tool execution blocked: <reason>``. What cannot be judged (a path
the shell computes, a file that is not there, a command that does not parse) is allowed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import NamedTuple

from ctxrelay.budget.bounds import GEMINI_TOOL_OUTPUT_MAX_CHARS
from ctxrelay.gemini._state import forget_reads, reads_dir
from ctxrelay.hooks.guard.output import HostOutput, Sized, page_reason, printed_bytes, sized
from ctxrelay.hooks.guard.prints import classify
from ctxrelay.hooks.guard.reads import (
    Read,
    Span,
    earlier_read,
    print_span,
    read_when,
    remember_reads,
    span_words,
)
from ctxrelay.transcripts import gemini_result_kept

__all__ = [
    "READ_FILE_MAX_LINES",
    "READ_TOOL",
    "SHELL_TOOL",
    "Read",
    "deny_reason",
    "forget_reads",
    "host_output",
    "record_read",
    "tool_call",
]

SHELL_TOOL = "run_shell_command"
READ_TOOL = "read_file"

READ_FILE_MAX_LINES = 2_000
"""The most lines the CLI's ``read_file`` shows from its start line when the call gives
no end, or one past it (``DEFAULT_MAX_LINES_TEXT_FILE``, 0.61.0): a read of a longer
file shows those lines only. A fact of this tool alone, so it lives with its guard."""


def host_output() -> HostOutput:
    """What the Gemini CLI 0.61 hands the model of a shell output: whole up to its cut,
    then the cut's head and tail. The CLI counts characters; a file's bytes are as many
    for ASCII text and more otherwise, so counting bytes never finds a flood that is not."""
    cut = GEMINI_TOOL_OUTPUT_MAX_CHARS
    label = (
        f"the Gemini CLI hands you an output of up to {cut:,} characters whole, and of a "
        "longer one only its first 8,000 and last 32,000 characters"
    )
    return HostOutput(label, cut, cut)


class Call(NamedTuple):
    """A shell or ``read_file`` call: the files it reads, and for the shell their sizes."""

    tool: str
    reads: tuple[Read, ...]
    printed: tuple[Sized, ...]


def _read_file(tool_input: Mapping[str, object], cwd: str) -> tuple[Read, ...]:
    """A ``read_file`` call as a read: its ``start_line``/``end_line`` (1-based,
    inclusive), or the CLI's own first :data:`READ_FILE_MAX_LINES` lines."""
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw:
        return ()
    path = raw if os.path.isabs(raw) else os.path.join(cwd, raw)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    if not stat.S_ISREG(st.st_mode):
        return ()
    start, end = tool_input.get("start_line"), tool_input.get("end_line")
    first = start if isinstance(start, int) and start >= 1 else 1
    last = end if isinstance(end, int) and end >= first else None
    # The CLI shows at most that many lines from the start: only a file that short is
    # shown to its end by an open range.
    limit = first + READ_FILE_MAX_LINES - 1
    if last is None or last > limit:
        last = -1 if _lines_at_most(path, limit) else limit
    return (Read(os.path.normpath(path), st.st_size, st.st_mtime_ns, (first, last)),)


def _lines_at_most(path: str, count: int) -> bool:
    """Whether the file has at most ``count`` lines (read no further than that)."""
    try:
        with open(path, "rb") as handle:
            for n, _ in enumerate(handle, start=1):
                if n > count:
                    return False
    except OSError:
        return False
    return True


def tool_call(payload: Mapping[str, object]) -> Call | None:
    """The tool call (shell or ``read_file``) of a payload and the files it reads;
    ``None`` for any other tool or a payload without what it needs."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    if not isinstance(tool_input, dict) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if name == SHELL_TOOL:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        folder = tool_input.get("dir_path")
        where = os.path.join(cwd, folder) if isinstance(folder, str) and folder else cwd
        prints = classify(command, where)
        printed = sized(prints) if prints else ()
        reads = tuple(Read(p.path, p.size, p.mtime_ns, print_span(p.range)) for p in printed)
        return Call(name, reads, printed)
    if name == READ_TOOL:
        return Call(name, _read_file(tool_input, cwd), ())
    return None


def _repeat_reason(path: str, span: Span, read_at: int) -> str:
    return (
        f"ctxrelay guard: you already read {path} {span_words(span)} {read_when(read_at)}, "
        "and it has not changed since (same size and modification time): those lines are "
        "still in your context above. Look there, read other lines (read_file with "
        "start_line and end_line), or search it with grep -n PATTERN."
    )


def _record(payload: Mapping[str, object]) -> str | None:
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    return None if folder is None else os.path.join(folder, "main.json")


def _session_file(payload: Mapping[str, object]) -> str | None:
    path = payload.get("transcript_path")
    return path if isinstance(path, str) and os.path.isabs(path) else None


def _length(path: str | None) -> int:
    """The session file's length now; -1 (never checkable: the read is not denied) when
    it cannot be read."""
    try:
        return os.stat(path).st_size if path else -1
    except OSError:
        return -1


def deny_reason(payload: Mapping[str, object]) -> str | None:
    """The reason to deny the payload's tool call, or ``None`` to allow it."""
    call = tool_call(payload)
    if call is None or not call.reads:
        return None
    if call.tool == SHELL_TOOL:
        host = host_output()
        total = printed_bytes(call.printed)
        if host.floods(total):
            return page_reason(call.printed, total, host, "grep") + "."
    record = _record(payload)
    session_file = _session_file(payload)

    def kept(_path: str, start: int) -> bool | None:
        return None if session_file is None else gemini_result_kept(session_file, start)

    seen = None if record is None else earlier_read(record, call.reads, kept)
    return None if seen is None else _repeat_reason(*seen)


def record_read(payload: Mapping[str, object]) -> None:
    """After a shell command or ``read_file`` ran (its result goes to the model next):
    remember the lines it read of each file, newest last, and the session file's length,
    for the re-read rule."""
    call = tool_call(payload)
    record = _record(payload)
    if call is not None and record is not None:
        remember_reads(record, call.reads, _length(_session_file(payload)))
